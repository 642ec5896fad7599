// kinema/pipeline/crowd.h — `kinema crowd` as a library call: a crowd scene (JSON) walked for some
// seconds — agents with goals, paths by A* over a navigation grid (flat, or sampled from a ground
// file such as data/demo/stairs.obj), obstacles, ORCA avoidance (kinema/crowd/crowd.h) — and
// written as a PC2 point cache with its particle sidecar, one point per agent at its ground
// height, so that `kinema render OUT.pc2` draws the crowd and Blender's Mesh Cache modifier plays
// it. The scene format is in docs/crowds.md.
#pragma once

#include <cstddef>
#include <string>

#include "kinema/pipeline/job.h"

namespace kinema::pipeline {

struct CrowdRequest {
  std::string scene;   ///< the scene (.json); ground files are relative to its folder
  std::string out;     ///< .pc2; the sidecar goes beside it (.kpa)
  double seconds = 0;  ///< > 0 overrides the scene's "seconds"
  int threads = 0;     ///< 0: all cores; the result does not depend on it
  Progress progress;
};

struct CrowdReport {
  std::size_t agents = 0;
  int steps = 0, frames = 0;
  double step = 0;                  ///< s
  std::size_t arrived = 0;          ///< agents on their goals at the end
  double max_overlap = 0;           ///< deepest overlap seen after any step, fraction of a radius
  double seconds_per_step = 0;      ///< wall clock
  double seconds_all_arrived = -1;  ///< simulated time when the last agent arrived (−1: never)
  std::size_t open_cells = 0, cells = 0;  ///< of the navigation grid (0 without one)
  std::string cache_path, sidecar_path;
};

/// Reads, simulates and writes (each file atomically, nothing written on failure). Throws
/// kinema::Error (the scene's file and the JSON pointer of the value at fault) for malformed
/// JSON, values out of range, an agent or goal off the navigation grid's open cells or with no
/// path to its goal; UsageError for an OUT that is not .pc2 or is the scene.
CrowdReport run_crowd(const CrowdRequest& request);

}  // namespace kinema::pipeline
