// kinema/pipeline/convert.h — `kinema convert` as a library call: any readable file to BVH,
// glTF/GLB, VRM, VRM Animation or FBX, optionally retargeted onto an avatar by humanoid bone names.
#pragma once

#include <optional>
#include <string>

#include "kinema/io/asset_file.h"
#include "kinema/pipeline/job.h"

namespace kinema::pipeline {

struct ConvertRequest {
  std::string in, out;  ///< OUT by extension: .bvh .gltf .glb .vrm .vrma .fbx
  /// The clip to convert, by name or index; empty: the first (a glTF OUT then keeps them all).
  std::string clip;
  std::string onto;  ///< an avatar to retarget the clip onto (retarget_humanoid), or empty
  double fps = 0;    ///< resample to this rate (> 0), else keep the clip's
  /// One BVH OUT unit in metres; unset: the source's unit for a BVH source, else centimetres.
  std::optional<double> bvh_unit;
  LoadOptions load;  ///< how IN (and the avatar) are read
};

struct ConvertResult {
  Asset written;    ///< what went into OUT (the avatar with the clip, with --onto)
  int clip = -1;    ///< index into written.clips of the clip converted; -1 without animation
  long frames = 0;  ///< frames written (at `rate`, else the clip's keys)
  double rate = 0;  ///< frames per second written, 0 when the clip has none
  bool retargeted = false;
  /// A BVH OUT of a file without animation: its rest pose went out as one frame.
  bool rest_pose_only = false;
};

/// Reads IN, picks the clip, retargets it (with `onto`), resamples (with `fps`) and writes OUT
/// atomically. Throws UsageError for an OUT that is IN or the avatar, a folder, or a format kinema
/// does not write, and for a clip IN does not have; kinema::Error for unreadable input, an
/// animation-less IN with `onto`, a write failure.
ConvertResult convert_file(const ConvertRequest& request);

}  // namespace kinema::pipeline
