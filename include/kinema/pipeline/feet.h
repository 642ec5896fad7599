// kinema/pipeline/feet.h — `kinema ik feet` as a library call: a clip's feet placed on a ground
// read from a height-map PNG or an OBJ mesh (docs/ik.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kinema/ik/foot_placement_clip.h"
#include "kinema/io/asset_file.h"
#include "kinema/io/terrain.h"
#include "kinema/pipeline/job.h"
#include "kinema/retarget/metrics.h"

namespace kinema::pipeline {

struct FeetRequest {
  std::string in, ground, out;  ///< clip file, .png/.obj ground, OUT .glb .gltf .vrm .bvh
  std::string clip;             ///< by name or index; empty: the first
  GroundFileOptions ground_options;
  /// fps 0: the clip's own rate (30 when it has none); ankle_heights may hold one value for all
  /// legs.
  ClipFootPlacementOptions options = [] {
    ClipFootPlacementOptions o;
    o.fps = 0;
    return o;
  }();
  LoadOptions load;
};

struct FeetResult {
  std::string clip;               ///< the clip's name
  std::string ground;             ///< the ground's one-line description
  Vec3 ground_lo, ground_hi;      ///< its bounds, metres
  std::vector<std::string> legs;  ///< "left", "right": the order of the report's legs
  ClipFootPlacementReport report;
  /// How fast planted feet skate before and after (humanoid_foot_skate at the placement's rate;
  /// the ground does not enter: skate is horizontal). Unset without humanoid feet.
  std::optional<HumanoidFootSkate> skate_before, skate_after;
};

/// Loads the ground and the clip, finds the humanoid legs (humanoid_legs), runs
/// place_feet_on_ground and writes OUT atomically (a .vrm gets the humanoid map). Progress stage:
/// "placing feet on GROUND" (frames). Throws UsageError for a bad OUT or ground name; kinema::Error
/// for unreadable files, a clip without humanoid legs, a write failure.
FeetResult place_feet(const FeetRequest& request, const Progress& progress = {});

}  // namespace kinema::pipeline
