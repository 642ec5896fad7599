// Typed reads of a graph's JSON values (see graph_builder_internal.h): each read checks the
// value's kind and range and fails with the graph file, the value's JSON pointer and the reason.
#include <algorithm>
#include <cmath>
#include <limits>

#include "graph_builder_internal.h"

namespace kinema {

namespace {

std::string escape_pointer_token(std::string_view key) {
  std::string s;
  for (char c : key) {
    if (c == '~')
      s += "~0";
    else if (c == '/')
      s += "~1";
    else
      s += c;
  }
  return s;
}

}  // namespace

Json Json::at(std::string_view key) const {
  return {v.at(std::string(key)), ptr + "/" + escape_pointer_token(key)};
}

Json Json::at(size_t i) const { return {v.at(i), ptr + "/" + std::to_string(i)}; }

const char* json_kind(const nlohmann::json& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::null:
      return "null";
    case nlohmann::json::value_t::object:
      return "an object";
    case nlohmann::json::value_t::array:
      return "an array";
    case nlohmann::json::value_t::string:
      return "a string";
    case nlohmann::json::value_t::boolean:
      return "a boolean";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
    case nlohmann::json::value_t::number_float:
      return "a number";
    default:
      return "an unsupported value";
  }
}

void GraphBuilder::fail(const std::string& ptr, const std::string& reason) const {
  throw Error(g_.file_, ptr.empty() ? std::string("/") : ptr, reason);
}

void GraphBuilder::expect_object(const Json& j) const {
  if (!j.v.is_object()) fail(j.ptr, std::string("expected an object, got ") + json_kind(j.v));
}

void GraphBuilder::expect_array(const Json& j) const {
  if (!j.v.is_array()) fail(j.ptr, std::string("expected an array, got ") + json_kind(j.v));
}

void GraphBuilder::check_members(const Json& j,
                                 std::initializer_list<std::string_view> allowed) const {
  expect_object(j);
  for (auto it = j.v.begin(); it != j.v.end(); ++it) {
    const std::string& key = it.key();
    if (key == "comment") continue;
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    std::string list;
    for (std::string_view a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
    fail(j.at(key).ptr, "unknown member '" + key + "' (expected one of: " + list + ")");
  }
}

Json GraphBuilder::require(const Json& j, std::string_view key) const {
  expect_object(j);
  if (!j.v.contains(key))
    fail(j.ptr + "/" + escape_pointer_token(key),
         "missing required member '" + std::string(key) + "'");
  return j.at(key);
}

std::string GraphBuilder::get_string(const Json& j) const {
  if (!j.v.is_string()) fail(j.ptr, std::string("expected a string, got ") + json_kind(j.v));
  return j.v.get<std::string>();
}

std::string GraphBuilder::get_name(const Json& j) const {
  std::string s = get_string(j);
  if (s.empty()) fail(j.ptr, "a name must not be empty");
  return s;
}

double GraphBuilder::get_number(const Json& j) const {
  if (!j.v.is_number()) fail(j.ptr, std::string("expected a number, got ") + json_kind(j.v));
  const double d = j.v.get<double>();
  if (!std::isfinite(d)) fail(j.ptr, "not a finite number");
  return d;
}

float GraphBuilder::get_float(const Json& j) const {
  const double d = get_number(j);
  if (std::abs(d) > static_cast<double>(std::numeric_limits<float>::max()))
    fail(j.ptr, "number out of range");
  return static_cast<float>(d);
}

bool GraphBuilder::get_bool(const Json& j) const {
  if (!j.v.is_boolean()) fail(j.ptr, std::string("expected true or false, got ") + json_kind(j.v));
  return j.v.get<bool>();
}

int GraphBuilder::get_int(const Json& j) const {
  const double d = get_number(j);
  if (d != std::floor(d) || std::abs(d) > 1e9) fail(j.ptr, "expected an integer");
  return static_cast<int>(d);
}

}  // namespace kinema
