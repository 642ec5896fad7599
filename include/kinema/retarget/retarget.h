// kinema/retarget/retarget.h — retargeting a clip between two humanoids by bone name.
//
// retarget_humanoid() transfers a clip between two humanoids by bone name, in world space:
// for each mapped bone, delta(t) = src_world(t) · src_rest_world⁻¹ and
// target_world(t) = delta(t) · target_rest_world, so both rest poses should be the same pose
// (both T-poses, as VRM requires and CMU/Mixamo rigs are). Unmapped target joints keep their
// rest local rotation. The hips translation is the source's horizontal displacement from its rest
// position and its height above its lowest ankle position, scaled by the ratio of leg lengths
// (thigh + shin at rest; hip heights when the legs are not mapped); then the hips are shifted so
// the target's ankles, at their lowest over the clip, sit at their rest height (rigs differ in
// where the hip joints sit relative to the hips). When the assets face different ways (VRM 0.x
// faces −Z, recorded in SourceInfo::forward_axis) the motion is turned about +Y to match.
#pragma once

#include "kinema/character/asset.h"

namespace kinema {

/// Retargets clip `clip` of `source` onto `target`'s skeleton (see above). Each asset's humanoid
/// is its Asset::humanoid, or guess_humanoid() of its skeleton. The result is sampled at the
/// source clip's sample_rate (30 fps when it has none) with LINEAR keys: a rotation track on each
/// mapped target joint and a translation track on the target hips. Throws kinema::Error when a
/// humanoid cannot be found or the clip index is out of range.
Clip retarget_humanoid(const Asset& source, int clip, const Asset& target);

}  // namespace kinema
