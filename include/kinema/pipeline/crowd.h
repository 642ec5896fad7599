// kinema/pipeline/crowd.h — `kinema crowd` as a library call: a crowd scene (JSON) walked for some
// seconds — agents with goals, paths by A* over a navigation grid (flat, or sampled from a ground
// file such as data/demo/stairs.obj), obstacles, ORCA avoidance (kinema/crowd/crowd.h) — and
// written as
//   - a PC2 point cache with its particle sidecar, one point per agent at its ground height, so
//     that `kinema render OUT.pc2` draws the crowd and Blender's Mesh Cache modifier plays it; or
//   - the scene's characters walking it (its "characters": walk and run clips), animated at their
//     LOD tiers (kinema/crowd/crowd_animation.h) and drawn by kinema's renderer
//     (kinema/pipeline/crowd_draw.h): an .mp4 of every frame, or a .png contact sheet; or
//   - a glTF scene (.glb, .gltf) for other tools: each agent a node keyed every frame (place and
//     heading) carrying a pawn of its radius, with the obstacles, the goals and the ground.
// The scene format is in docs/crowds.md.
#pragma once

#include <array>
#include <cstddef>
#include <string>

#include "kinema/pipeline/job.h"

namespace kinema::pipeline {

struct CrowdRequest {
  std::string scene;  ///< the scene (.json); ground and character files are relative to it
  /// .pc2 (the sidecar goes beside it, .kpa), .mp4 (needs ffmpeg), .png (a contact sheet), .glb
  /// or .gltf (the scene keyed at `fps`)
  std::string out;
  double seconds = 0;  ///< > 0 overrides the scene's "seconds"
  int threads = 0;     ///< 0: all cores; the result does not depend on it
  // Pictures (.mp4, .png):
  int width = 960, height = 540;  ///< of a frame (a sheet's tile); even for .mp4
  double fps = 30;           ///< frames a second drawn (and animated), or keyed in a glTF scene
  int sheet_frames = 6;      ///< tiles of a .png contact sheet, spread over the walk
  bool lod_colours = false;  ///< colour each LOD tier (near green … farthest red)
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
  std::string cache_path, sidecar_path;   ///< .pc2 output
  std::string layout_path;                ///< .glb / .gltf output
  int frames_keyed = 0;                   ///< of the glTF scene
  // Pictures:
  std::string picture_path;  ///< the .mp4 or .png written
  std::string gl_renderer;   ///< e.g. "llvmpipe (LLVM 15.0.6, 256 bits)"
  int frames_drawn = 0;
  double fps = 0;                  ///< frames a second of the animation drawn
  std::size_t joints = 0;          ///< of the characters' skeleton
  double seconds_per_draw = 0;     ///< wall clock of a frame's render_crowd (mean)
  double seconds_per_animate = 0;  ///< wall clock of a frame's animation update (mean)
  double bake_seconds = 0;         ///< VATs and impostors
  std::size_t vat_bytes = 0, impostor_bytes = 0;  ///< GPU memory of the bakes
  /// Agents a tier over the drawn frames (mean), and joint updates a second (mean) as the LOD
  /// accounting counts them.
  std::array<double, 4> mean_tier_agents{};
  double joint_updates_per_second = 0;
};

/// Reads, simulates and writes (each file atomically, nothing written on failure). Throws
/// kinema::Error (the scene's file and the JSON pointer of the value at fault) for malformed
/// JSON, values out of range, an agent or goal off the navigation grid's open cells or with no
/// path to its goal, a picture asked of a scene without "characters", character files that do
/// not load or fit, a glTF scene of more than 20 million keys; UsageError for an OUT that is not
/// .pc2, .mp4, .png, .glb or .gltf or is the scene, or picture settings out of range.
CrowdReport run_crowd(const CrowdRequest& request);

}  // namespace kinema::pipeline
