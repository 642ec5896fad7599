// kinema/io/humanoid.h — humanoid bone maps (VRM 1.0 names) and humanoid retargeting.
//
// guess_humanoid() recognizes the common skeleton naming schemes: CMU cgspeed (Hips, LowerBack,
// Spine, Spine1, Neck, Head, LeftShoulder, LeftArm, LeftForeArm, LeftHand, LeftUpLeg, LeftLeg,
// LeftFoot, LeftToeBase…), Daz (hip, abdomen, chest, neck, head, lCollar, lShldr, lForeArm,
// lHand, lThigh, lShin, lFoot…), Mixamo ("mixamorig:" prefix), Reallusion iClone/CC
// ("CC_Base_L_Upperarm"…), VRoid ("J_Bip_L_UpperArm"…) and VRM-style names ("leftUpperArm").
// The spine chain between the hips and the neck becomes spine / chest / upperChest.
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

#include <optional>

#include "kinema/io/asset.h"

namespace kinema {

/// Maps joint names to VRM 1.0 humanoid bones. Returns nullopt unless the hips, spine, head and
/// both arms (upper, lower, hand) and legs (upper, lower, foot) are all found.
std::optional<Humanoid> guess_humanoid(const Skeleton& skeleton);

/// The humanoid map of an asset: its own (VRM) when it has one, else guess_humanoid() of its
/// skeleton. `guessed` (optional) is set to whether the second case applied.
std::optional<Humanoid> humanoid_of(const Asset& asset, bool* guessed = nullptr);

/// Retargets clip `clip` of `source` onto `target`'s skeleton (see above). Each asset's humanoid
/// is its Asset::humanoid, or guess_humanoid() of its skeleton. The result is sampled at the
/// source clip's sample_rate (30 fps when it has none) with LINEAR keys: a rotation track on each
/// mapped target joint and a translation track on the target hips. Throws kinema::Error when a
/// humanoid cannot be found or the clip index is out of range.
Clip retarget_humanoid(const Asset& source, int clip, const Asset& target);

}  // namespace kinema
