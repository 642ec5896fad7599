// kinema/retarget/rig.h — the solver rigs of a humanoid character, found by its humanoid map
// (its own VRM map, or one guessed from joint names: kinema/retarget/humanoid.h).
#pragma once

#include <string>
#include <vector>

#include "kinema/character/asset.h"
#include "kinema/ik/foot_placement_clip.h"

namespace kinema {

/// A humanoid's legs for foot placement (kinema/ik/foot_placement_clip.h).
struct HumanoidLegs {
  FootPlacementRig rig;  ///< pelvis = the hips; legs and toes left, then right
  std::vector<std::string> names{"left", "right"};  ///< one per leg of rig.legs
};

/// The hips and both legs (upper leg, lower leg, foot; toes where mapped). Throws kinema::Error
/// naming `file` when the character has no humanoid map or a leg is incomplete.
HumanoidLegs humanoid_legs(const Asset& character, const std::string& file);

}  // namespace kinema
