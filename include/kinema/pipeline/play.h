// kinema/pipeline/play.h — `kinema play` as a library call: an animation graph file played over
// time with parameter curves and written as one clip (kinema/graph/graph_play.h, docs/graph.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kinema/graph/graph_play.h"
#include "kinema/io/asset_file.h"
#include "kinema/pipeline/job.h"
#include "kinema/retarget/metrics.h"

namespace kinema::pipeline {

struct PlayRequest {
  std::string graph, out;           ///< the graph .json; OUT .glb .gltf .vrm .bvh
  std::vector<std::string> params;  ///< NAME=SPEC curves (parse_param_curve)
  double seconds = 6, fps = 30;
  RootMotionOutput root_motion = RootMotionOutput::Bake;
  LoadOptions load;  ///< how the graph's clip files are read
};

struct PlayResult {
  PlayReport report;
  double duration = 0;       ///< of the clip written, seconds
  bool root_motion = false;  ///< the graph extracts root motion
  /// How fast planted feet skate in the result (humanoid_foot_skate: its humanoid feet and toes,
  /// found by name); unset when the skeleton has no humanoid feet.
  std::optional<HumanoidFootSkate> foot_skate;
};

/// Reads the graph and its clips, plays it (play_graph) and writes OUT atomically (a .vrm gets a
/// humanoid map guessed from joint names when the clips' file has none). Progress stage:
/// "playing GRAPH" (frames). Throws UsageError for a bad OUT (a folder, the graph or one of its
/// clip files, a format kinema does not write); kinema::Error for a bad graph, bad curves (file
/// "--param"), a write failure.
PlayResult play_graph_file(const PlayRequest& request, const Progress& progress = {});

}  // namespace kinema::pipeline
