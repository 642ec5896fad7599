// kinema/character/humanoid.h — humanoid bone maps: VRM 1.0 bone names for a skeleton's joints.
//
// guess_humanoid() recognizes the common skeleton naming schemes: CMU cgspeed (Hips, LowerBack,
// Spine, Spine1, Neck, Head, LeftShoulder, LeftArm, LeftForeArm, LeftHand, LeftUpLeg, LeftLeg,
// LeftFoot, LeftToeBase…), Daz (hip, abdomen, chest, neck, head, lCollar, lShldr, lForeArm,
// lHand, lThigh, lShin, lFoot…), Mixamo ("mixamorig:" prefix), Reallusion iClone/CC
// ("CC_Base_L_Upperarm"…), VRoid ("J_Bip_L_UpperArm"…) and VRM-style names ("leftUpperArm").
// The spine chain between the hips and the neck becomes spine / chest / upperChest.
#pragma once

#include <optional>

#include "kinema/character/asset.h"

namespace kinema {

/// Maps joint names to VRM 1.0 humanoid bones. Returns nullopt unless the hips, spine, head and
/// both arms (upper, lower, hand) and legs (upper, lower, foot) are all found.
std::optional<Humanoid> guess_humanoid(const Skeleton& skeleton);

/// The humanoid map of an asset: its own (VRM) when it has one, else guess_humanoid() of its
/// skeleton. `guessed` (optional) is set to whether the second case applied.
std::optional<Humanoid> humanoid_of(const Asset& asset, bool* guessed = nullptr);

}  // namespace kinema
