// kinema/graph/graph_play.h — playing a graph offline: parameter curves over time, and baking
// the result into a clip on the graph's character (what `kinema play` and `kinema demo` do).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kinema/character/asset.h"
#include "kinema/graph/graph.h"
#include "kinema/graph/graph_builder.h"
#include "kinema/graph/graph_instance.h"

namespace kinema {

/// A parameter's value over time, from a command-line spec (parse_param_curve):
///   "speed=0:0,2:4.5"  TIME:VALUE keys; floats are piecewise linear between keys and hold the
///                      first / last value outside them; bools (values 0 or 1) hold each key's
///                      value until the next key
///   "speed=2.5"        a constant
///   "jump=1.5,3"       a trigger fired at each listed time
/// Times are seconds from the start, non-decreasing, ≥ 0.
struct ParamCurve {
  struct Item {
    double a = 0;             ///< TIME of a TIME:VALUE key, or the lone number
    std::optional<double> b;  ///< VALUE of a TIME:VALUE key
  };
  std::string name;
  std::string spec;  ///< the whole spec as given, for messages
  std::vector<Item> items;
};

/// Parses NAME=ITEMS (see ParamCurve). Throws kinema::Error("--param", NAME [item N], reason)
/// on a missing '=', an empty name, an empty item, a number that does not parse or is not
/// finite, or more than one ':' in an item.
ParamCurve parse_param_curve(std::string_view spec);

/// What the baked result keeps of the graph's root motion.
enum class RootMotionOutput {
  Bake,    ///< the character travels: each frame's world placement is applied to the skeleton
  InPlace  ///< the character stays at the origin (ground motion dropped)
};

struct PlayOptions {
  double seconds = 6;  ///< length of the result, > 0
  double fps = 30;     ///< frames per second, > 0 (frames at i / fps, the last on `seconds`)
  RootMotionOutput root_motion = RootMotionOutput::Bake;
  std::vector<ParamCurve> params;
  /// Called after each frame with (frames done, frame count); may be empty.
  std::function<void(int, int)> progress;
  /// Called before each update with the frame's time (seconds) and the instance, after the
  /// curves are applied: what sets driven parameters (kinema/procedural/graph_drivers.h). May be
  /// empty.
  std::function<void(double, GraphInstance&)> before_update;
};

struct PlayReport {
  int frames = 0;
  /// States entered, in first-visit order ("state", or "machine/state" for a named machine
  /// inside another).
  std::vector<std::string> states_visited;
  long transitions_taken = 0;
  /// The character's final placement (ground position and heading); zero without root motion
  /// or with RootMotionOutput::InPlace.
  RootDelta final_placement;
};

/// Checks the curves against the graph's parameters. Throws kinema::Error("--param", NAME,
/// reason) for an unknown parameter (listing the graph's), a float given without TIME:VALUE
/// keys or a lone value, a bool value other than 0 / 1, a trigger given values, negative or
/// decreasing times.
void check_param_curves(const AnimGraph& graph, std::span<const ParamCurve> curves);

/// Plays `built.graph` from its initial state for options.seconds and returns `built.character`
/// (skeleton, meshes, skins) carrying one clip with a key per frame per joint (scale keys only for
/// joints that scale), named after the graph file ("walk.graph.json" → "walk"). Frame 0 is the
/// pose after update(0); each later frame updates by 1 / fps. Triggers fire on the first frame at
/// or after their time. With root motion and RootMotionOutput::Bake the instance's world placement
/// is applied to the root of the root-motion joint's hierarchy. Runs check_param_curves first;
/// throws kinema::Error for bad curves or a non-positive / non-finite length or rate.
Asset play_graph(const BuiltGraph& built, const PlayOptions& options, PlayReport* report = nullptr);

}  // namespace kinema
