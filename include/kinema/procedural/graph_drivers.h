// kinema/procedural/graph_drivers.h — the drivers of an animation graph (AnimGraph::drivers(),
// the graph file's "drivers" member) compiled by muparser (kinema/procedural/driver.h) and applied
// to an instance before each update: each sets its float or bool parameter from an expression over
// the graph's float and bool parameters, by name, and `t`, the seconds since the instance started.
//
//   "drivers": [{"parameter": "lean", "expression": "clamp_turn * 0.1"},
//               {"parameter": "speed", "expression": "1.1 + 0.4 * sin(_pi * t / 4)"}]
//
// Drivers run in the file's order and read the instance's current values, so a driver sees what
// an earlier one set this frame. A bool parameter is set true for a nonzero result.
#pragma once

#include <vector>

#include "kinema/graph/graph.h"
#include "kinema/graph/graph_instance.h"
#include "kinema/procedural/driver.h"

namespace kinema {

class GraphDrivers {
 public:
  /// Compiles every driver of `graph` (which must outlive this). Throws kinema::Error naming the
  /// graph file, the expression's JSON pointer and column, and the reason with a caret under the
  /// fault: an expression that does not parse or names something that is not a float or bool
  /// parameter or `t` (a parameter named `t` hides the time).
  explicit GraphDrivers(const AnimGraph& graph);

  bool empty() const noexcept { return drivers_.empty(); }
  std::size_t size() const noexcept { return drivers_.size(); }

  /// Sets each driven parameter of `instance` (of the same graph) for time `t` seconds. Throws
  /// kinema::Error naming the graph file, the driver's pointer and t for a result that is not
  /// finite (a division by zero); the parameters set before it keep their new values.
  void apply(GraphInstance& instance, double t);

 private:
  struct Compiled {
    Driver driver;
    ParamHandle target;
    bool target_bool = false;
    std::vector<ParamHandle> inputs;  // one per variable but the last (`t`)
    std::string pointer;
  };
  const AnimGraph* graph_;
  std::vector<Compiled> drivers_;
  std::vector<double> values_;  // scratch: one per variable
};

}  // namespace kinema
