// kinema/pipeline/skin_weights.h — `kinema skin bake-weights` as a library call: better linear
// blend skinning weights for every skinned mesh of a file, fitted to delta mush over sample poses
// (kinema/skin/delta_mush.h, docs/deform.md).
#pragma once

#include <string>
#include <vector>

#include "kinema/io/asset_file.h"
#include "kinema/math/mat4.h"
#include "kinema/pipeline/job.h"
#include "kinema/skin/delta_mush.h"

namespace kinema::pipeline {

struct BakeWeightsRequest {
  std::string in, out;  ///< OUT: .glb .gltf .vrm
  int poses = 24;       ///< sample poses, ≥ 1
  /// Poses evenly spaced over this clip (name or index); empty: random poses, every joint turned
  /// about a random axis by up to max_angle (radians) from its rest rotation.
  std::string clip;
  double max_angle = 40 * 3.14159265358979323846 / 180;
  unsigned seed = 1;  ///< of the random poses
  DeltaMushSettings mush;
  WeightBakeSettings bake;
  LoadOptions load;
};

struct BakedMesh {
  std::string name;
  size_t vertices = 0;
  double rms_before = 0, rms_after = 0;  ///< metres, against delta mush over the poses
  double max_before = 0, max_after = 0;
  size_t vertices_kept = 0;  ///< vertices whose original weights fitted at least as well
};

struct BakeWeightsResult {
  std::vector<BakedMesh> meshes;  ///< every skinned triangle mesh, in file order
  size_t poses = 0;
};

/// Model-space matrices of `count` poses of `skeleton`: evenly spaced over `clip` when it is not
/// null, else random (each joint turned from its rest rotation about a uniformly random axis by
/// an angle uniform in ±max_angle radians, from a Mersenne twister seeded with `seed`).
std::vector<std::vector<Mat4>> sample_pose_models(const Skeleton& skeleton, const Clip* clip,
                                                  int count, double max_angle, unsigned seed);

/// Reads IN, bakes every skinned triangle mesh's weights (bake_lbs_weights) over the sample
/// poses and writes OUT atomically. Throws UsageError for a bad OUT or clip; kinema::Error naming
/// the mesh for a bad mesh, when nothing is skinned, for a write failure.
BakeWeightsResult bake_weights_file(const BakeWeightsRequest& request);

}  // namespace kinema::pipeline
