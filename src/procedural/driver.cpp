// Drivers (kinema/procedural/driver.h): muparser holds pointers to the variables' storage, so
// each driver owns its parser and storage, and a copy parses again.
#include "kinema/procedural/driver.h"

#include <muParser.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "kinema/core/error.h"

namespace kinema {

namespace {

constexpr const char* kPlace = "driver";

bool valid_name(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

/// The expression with a caret under column `column` (0-based), for an error's reason.
std::string pointing_at(const std::string& expression, std::size_t column) {
  return "\n  " + expression + "\n  " + std::string(std::min(column, expression.size()), ' ') + "^";
}

}  // namespace

struct Driver::Impl {
  std::string expression;
  std::vector<std::string> variables;
  std::vector<double> storage;
  mu::Parser parser;

  Impl(std::string text, std::vector<std::string> names)
      : expression(std::move(text)), variables(std::move(names)), storage(variables.size(), 0.0) {
    for (std::size_t i = 0; i < variables.size(); ++i) {
      if (!valid_name(variables[i]))
        throw Error({}, kPlace,
                    "variable name '" + variables[i] +
                        "' is not letters, digits and underscores starting with a letter");
      if (std::find(variables.begin(), variables.begin() + long(i), variables[i]) !=
          variables.begin() + long(i))
        throw Error({}, kPlace, "variable '" + variables[i] + "' is named twice");
    }
    try {
      for (std::size_t i = 0; i < variables.size(); ++i)
        parser.DefineVar(variables[i], &storage[i]);
      parser.SetExpr(expression);
      // muparser parses lazily, at the first evaluation: evaluate once now so that a bad
      // expression fails here, where its text is given.
      parser.Eval();
    } catch (const mu::Parser::exception_type& e) {
      const int position = e.GetPos();
      if (position < 0) throw Error({}, kPlace, "'" + expression + "': " + e.GetMsg());
      throw Error({}, "column " + std::to_string(position + 1),
                  e.GetMsg() + pointing_at(expression, std::size_t(position)));
    }
  }
};

Driver::Driver(std::string expression, std::vector<std::string> variables)
    : impl_(std::make_unique<Impl>(std::move(expression), std::move(variables))) {}
Driver::Driver(const Driver& other)
    : impl_(std::make_unique<Impl>(other.impl_->expression, other.impl_->variables)) {}
Driver& Driver::operator=(const Driver& other) {
  if (this != &other)
    impl_ = std::make_unique<Impl>(other.impl_->expression, other.impl_->variables);
  return *this;
}
Driver::Driver(Driver&&) noexcept = default;
Driver& Driver::operator=(Driver&&) noexcept = default;
Driver::~Driver() = default;

double Driver::evaluate(std::span<const double> values) {
  if (values.size() != impl_->variables.size())
    throw Error({}, kPlace,
                "'" + impl_->expression + "' takes " + std::to_string(impl_->variables.size()) +
                    " values, given " + std::to_string(values.size()));
  std::copy(values.begin(), values.end(), impl_->storage.begin());
  double result = 0;
  try {
    result = impl_->parser.Eval();
  } catch (const mu::Parser::exception_type& e) {
    throw Error({}, kPlace, "'" + impl_->expression + "': " + e.GetMsg());
  }
  if (!std::isfinite(result))
    throw Error({}, kPlace, "'" + impl_->expression + "' is not finite for these values");
  return result;
}

const std::string& Driver::expression() const { return impl_->expression; }
const std::vector<std::string>& Driver::variables() const { return impl_->variables; }

}  // namespace kinema
