// Drivers in animation graphs: the bundled walk/run graph with its speed driven by an expression
// of time and a second parameter, applied to an instance and played into a clip; bad drivers
// named at their JSON pointer (and column, with a caret).
#include "kinema/procedural/graph_drivers.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "kinema/core/error.h"
#include "kinema/core/file.h"
#include "kinema/graph/graph_builder.h"
#include "kinema/graph/graph_play.h"
#include "kinema/io/asset_file.h"
#include "kinema/math/scalar.h"
#include "test_paths.h"

namespace kinema {
namespace {

const std::string kGraph = test_paths::source_dir() + "/data/demo/locomotion.graph.json";

GraphBuildOptions files() {
  GraphBuildOptions o;
  o.load_file = [](const std::string& path) { return load_asset(path); };
  o.clips_are_files = true;
  return o;
}

/// The bundled graph with a "boost" parameter and `drivers` (a JSON array) added.
std::string with_drivers(const std::string& drivers) {
  std::string text = read_file(kGraph);
  const std::string speed = R"({"name": "speed", "type": "float", "default": 1.5})";
  const size_t at = text.find(speed);
  EXPECT_NE(at, std::string::npos);
  text.insert(at + speed.size(), R"(,
    {"name": "boost", "type": "float", "default": 0.5},
    {"name": "running", "type": "bool"},
    {"name": "stop", "type": "trigger"})");
  const size_t clips = text.find("\"clips\"");
  return text.insert(clips, "\"drivers\": " + drivers + ",\n  ");
}

TEST(GraphDrivers, SetTheirParametersFromTheOthersAndTheTime) {
  const BuiltGraph built = build_graph(
      with_drivers(R"j([{"parameter": "speed", "expression": "1.2 + boost * sin(_pi * t / 2)"},
                       {"parameter": "running", "expression": "speed > 1.5"}])j"),
      kGraph, files());
  ASSERT_EQ(built.graph.drivers().size(), 2u);
  GraphDrivers drivers(built.graph);
  GraphInstance instance(built.graph);
  const ParamHandle speed = instance.parameter("speed"), running = instance.parameter("running");
  drivers.apply(instance, 1.0);  // sin(π/2) = 1
  EXPECT_FLOAT_EQ(instance.value(speed), 1.7f);
  EXPECT_EQ(instance.value(running), 1.0f);  // reads the speed the first driver just set
  drivers.apply(instance, 3.0);              // sin(3π/2) = −1
  EXPECT_FLOAT_EQ(instance.value(speed), 0.7f);
  EXPECT_EQ(instance.value(running), 0.0f);
  instance.set_float("boost", 0.0f);
  drivers.apply(instance, 1.0);
  EXPECT_FLOAT_EQ(instance.value(speed), 1.2f);
}

TEST(GraphDrivers, ADrivenSpeedMovesThePlayedCharacterByItsIntegral) {
  // speed = 1.5 + 0.5 t for 4 s: the root travels ∫ = 6 + 4 = 10 m (the graph's blend weights are
  // chosen so the root moves at exactly the requested speed).
  const BuiltGraph built =
      build_graph(with_drivers(R"j([{"parameter": "speed", "expression": "1.5 + 0.5 * t"}])j"),
                  kGraph, files());
  GraphDrivers drivers(built.graph);
  PlayOptions options;
  options.seconds = 4;
  options.fps = 60;
  options.before_update = [&](double t, GraphInstance& i) { drivers.apply(i, t); };
  PlayReport report;
  play_graph(built, options, &report);
  const double travelled =
      std::hypot(report.final_placement.translation.x, report.final_placement.translation.z);
  EXPECT_NEAR(travelled, 10.0, 0.25);
}

std::string error_of(const std::string& drivers) {
  try {
    const BuiltGraph built = build_graph(with_drivers(drivers), kGraph, files());
    GraphDrivers compiled(built.graph);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(GraphDrivers, BadDriversAreNamedAtTheirPointer) {
  const std::string unknown = error_of(R"j([{"parameter": "speed", "expression": "1 + spede"}])j");
  EXPECT_NE(unknown.find("/drivers/0/expression column"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("spede"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find('^'), std::string::npos) << unknown;
  const std::string syntax = error_of(R"j([{"parameter": "speed", "expression": "2 * (t"}])j");
  EXPECT_NE(syntax.find("/drivers/0/expression"), std::string::npos) << syntax;
  const std::string trigger = error_of(R"j([{"parameter": "stop", "expression": "1"}])j");
  EXPECT_NE(trigger.find("/drivers/0/parameter"), std::string::npos) << trigger;
  EXPECT_NE(trigger.find("trigger"), std::string::npos) << trigger;
  const std::string twice = error_of(
      R"j([{"parameter": "speed", "expression": "1"}, {"parameter": "speed", "expression": "2"}])j");
  EXPECT_NE(twice.find("already driven"), std::string::npos) << twice;
  const std::string missing = error_of(R"j([{"parameter": "pace", "expression": "1"}])j");
  EXPECT_NE(missing.find("unknown parameter 'pace'"), std::string::npos) << missing;
  const std::string uses_trigger = error_of(R"j([{"parameter": "speed", "expression": "stop"}])j");
  EXPECT_NE(uses_trigger.find("stop"), std::string::npos) << uses_trigger;
  // A result that is not finite, at apply time: the pointer and the time.
  const BuiltGraph built = build_graph(
      with_drivers(R"j([{"parameter": "speed", "expression": "1 / (t - 2)"}])j"), kGraph, files());
  GraphDrivers drivers(built.graph);
  GraphInstance instance(built.graph);
  try {
    drivers.apply(instance, 2.0);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/drivers/0/expression at t = 2"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace kinema
