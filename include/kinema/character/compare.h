// kinema/character/compare.h — how far two animations of a character are apart, joint by joint:
// the measure of a round trip through a file format, a retarget back and forth, a compression.
#pragma once

#include <functional>

#include "kinema/character/asset.h"

namespace kinema {

struct JointDistance {
  double max = 0;  ///< metres; +∞ when a position was not a number
  int joints = 0;  ///< joints compared: those both skeletons name alike
  int frames = 0;  ///< frames compared
};

/// The largest world-space distance between same-named joints of clip `clip_a` of `a` and clip
/// `clip_b` of `b`, over every frame of clip_a (at its frame rate, 30 fps when it has none; the
/// last frame on its duration), both sampled at the same times. `progress(done, total)` after
/// each frame; may be empty. Clip indices must be valid.
JointDistance max_joint_distance(const Asset& a, int clip_a, const Asset& b, int clip_b,
                                 const std::function<void(int, int)>& progress = {});

}  // namespace kinema
