// src/graph/ground_motion.h — internal: translation-only root motion (a graph's
// "root_motion": {"rotation": false}). The joint's ground position (x, z) is taken out of the
// clip, its heading stays in the pose, and motions are plain model-space translations.
#pragma once

#include "kinema/blend/root_motion.h"
#include "kinema/clip/clip.h"
#include "kinema/skeleton/skeleton.h"

namespace kinema {

/// The root-motion joint's ground position (x, 0, z) in the clip's model space at clip time t.
Vec3 ground_position(const RootMotion& motion, double t);

/// Ground translation from clip time t0 to t1 (yaw 0): looping adds the whole-cycle translation
/// once per lap. False when the motion is empty or a time is not finite. Never allocates.
bool ground_translation(const RootMotion& motion, double t0, double t1, bool loop, RootDelta& out);

/// The clip with the joint's ground position removed at each of motion's frames: the joint's
/// translation becomes LINEAR keys at those frames whose model-space x and z are 0 (its height
/// and every rotation are kept). Throws kinema::Error when the clip does not validate.
Clip remove_ground_translation(const Clip& clip, const Skeleton& skeleton,
                               const RootMotion& motion);

}  // namespace kinema
