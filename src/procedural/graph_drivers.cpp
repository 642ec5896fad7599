// An animation graph's drivers, compiled and applied (kinema/procedural/graph_drivers.h).
#include "kinema/procedural/graph_drivers.h"

#include <cmath>
#include <string>

#include "kinema/core/error.h"

namespace kinema {

GraphDrivers::GraphDrivers(const AnimGraph& graph) : graph_(&graph) {
  // Every float and bool parameter is a variable, then the time.
  std::vector<std::string> names;
  std::vector<int> indices;
  const auto parameters = graph.parameters();
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    if (parameters[i].type == ParamType::Trigger || parameters[i].name == "t") continue;
    names.push_back(parameters[i].name);
    indices.push_back(static_cast<int>(i));
  }
  names.push_back("t");
  values_.resize(names.size());
  for (const GraphDriver& d : graph.drivers()) {
    try {
      Compiled c{Driver(d.expression, names),
                 ParamHandle{d.parameter},
                 parameters[static_cast<std::size_t>(d.parameter)].type == ParamType::Bool,
                 {},
                 d.pointer};
      for (const int index : indices) c.inputs.push_back(ParamHandle{index});
      drivers_.push_back(std::move(c));
    } catch (const Error& e) {
      // The driver's errors name a column of the expression: put it under the JSON pointer.
      throw Error(graph.file(), d.pointer + (e.place().empty() ? "" : " " + e.place()), e.reason());
    }
  }
}

void GraphDrivers::apply(GraphInstance& instance, double t) {
  for (Compiled& c : drivers_) {
    for (std::size_t i = 0; i < c.inputs.size(); ++i)
      values_[i] = static_cast<double>(instance.value(c.inputs[i]));
    values_.back() = t;
    double result = 0;
    try {
      result = c.driver.evaluate(values_);
    } catch (const Error& e) {
      throw Error(graph_->file(), c.pointer + " at t = " + std::to_string(t), e.reason());
    }
    if (c.target_bool) {
      instance.set_bool(c.target, result != 0);
    } else if (!instance.set_float(c.target, static_cast<float>(result))) {
      throw Error(graph_->file(), c.pointer + " at t = " + std::to_string(t),
                  "the value " + std::to_string(result) + " does not fit a float parameter");
    }
  }
}

}  // namespace kinema
