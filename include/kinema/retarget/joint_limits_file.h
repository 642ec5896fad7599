// kinema/retarget/joint_limits_file.h — a character's joint limits (kinema/ik/joint_limits.h)
// read from a JSON file, for IK solvers and ragdolls.
//
// The file is an object of joint → limit. A joint is named as the skeleton names it or by its VRM
// humanoid bone ("leftLowerLeg") when the character has a humanoid map. Angles in degrees, axes
// in the joint's own frame (the frame its local rotation maps from), limits measured from the
// rest pose, as kinema/ik/joint_limits.h defines them:
//
//   {
//     "leftLowerLeg": {"hinge": [1, 0, 0], "range": [0, 150]},
//     "leftUpperArm": {"twist_axis": [1, 0, 0], "swing": 80, "twist": [-60, 60]},
//     "spine":        {"twist_axis": [0, 1, 0], "swing_axis": [1, 0, 0], "swing": [20, 35],
//                      "twist": [-20, 20]}
//   }
//
// A hinge turns about its axis within `range`. A swing–twist limit twists about `twist_axis`
// within `twist` and swings within a cone: one half-angle (circular) or two, about `swing_axis`
// and about twist_axis × swing_axis (elliptical).
#pragma once

#include <string>
#include <vector>

#include "kinema/character/asset.h"
#include "kinema/ik/joint_limits.h"

namespace kinema {

/// One JointLimit per skeleton joint (JointLimit::none() where the file says nothing). Throws
/// kinema::Error naming `file` and the JSON pointer (or line and column for malformed JSON) for
/// an unknown joint or key, a zero or non-finite axis, an angle out of range or a range with
/// min > max.
std::vector<JointLimit> parse_joint_limits(const std::string& json_text, const Asset& character,
                                           const std::string& file = {});

/// Reads the file at `path` and parses it (parse_joint_limits).
std::vector<JointLimit> load_joint_limits(const std::string& path, const Asset& character);

}  // namespace kinema
