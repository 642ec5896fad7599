// kinema/pipeline/gait.h — `kinema gait` as a library call: a creature (a built-in biped,
// quadruped, hexapod or spider, or a humanoid character file) walks a path by a procedural gait
// (kinema/procedural/gait.h) over a ground, and the walk is written as a clip.
#pragma once

#include <string>
#include <vector>

#include "kinema/io/asset_file.h"
#include "kinema/io/terrain.h"
#include "kinema/math/vec2.h"
#include "kinema/pipeline/job.h"
#include "kinema/procedural/gait.h"

namespace kinema::pipeline {

struct GaitRequest {
  /// "biped", "quadruped", "hexapod", "spider", or a character file with a humanoid map (.glb
  /// .gltf .vrm .bvh .fbx …: its hips and legs walk, everything else keeps the rest pose).
  std::string creature;
  std::string out;     ///< .glb .gltf .vrm .bvh
  std::string ground;  ///< .png height map or .obj mesh; empty: the plane y = 0
  GroundFileOptions ground_options;
  /// Waypoints on the ground (x, z), metres; the first is the start. Empty: 4 m along +Z from
  /// (0, −2.5) — up the demo stairs (data/demo/stairs.obj).
  std::vector<Vec2> path;
  double speed = 0;   ///< m/s; 0: the creature's own walking pace (0.7 · max_stride / cycle)
  double fps = 30;    ///< frames per second of the clip (> 0); the gait steps at 4× this rate
  double settle = 1;  ///< s the creature stands at the last waypoint so its feet come to rest
  LoadOptions load;
  Progress progress;
};

struct GaitReport {
  std::string creature;           ///< "spider (8 legs)", or the file's name with "(2 legs)"
  std::string ground;             ///< the ground's one-line description, or "the plane y = 0"
  std::vector<std::string> legs;  ///< leg names
  int frames = 0;
  double duration = 0;          ///< s
  double speed = 0;             ///< m/s walked
  double distance = 0;          ///< m along the path
  int steps = 0;                ///< footfalls, all legs
  double planted_slide = 0;     ///< largest move of a planted foot joint between frames, metres
  double lowest_clearance = 0;  ///< least (sole − ground under it) over every foot and frame, m
  double body_low = 0, body_high = 0;  ///< range of the body's height above its feet' mean, m
  std::string out;
};

/// Checks OUT, loads the ground and the creature, walks the path and writes OUT atomically (the
/// character's meshes and skins come along; built-in creatures have a skeleton only). Progress
/// stage: "walking" (frames). Throws UsageError for a bad OUT or ground extension, a path with a
/// non-finite point, a speed or fps that is not finite and > 0, a walk longer than an hour;
/// kinema::Error for unreadable files, a character without humanoid legs, a path point with no
/// ground under it (naming it).
GaitReport run_gait(const GaitRequest& request);

}  // namespace kinema::pipeline
