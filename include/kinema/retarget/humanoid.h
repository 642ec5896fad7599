// kinema/retarget/humanoid.h — humanoid bone maps: VRM 1.0 bone names for a skeleton's joints.
//
// A map comes from one of three places: the file itself (a VRM's own map, Asset::humanoid), the
// joint names (recognize_humanoid / guess_humanoid), or a JSON file the user writes
// (read_humanoid_map).
//
// Recognition does not keep a table per vendor. Each joint name is split into words (camelCase,
// digits, '_', '.', '-', ' '), namespaces and rig prefixes are dropped ("mixamorig:",
// "Armature|", "DEF-", "Bip01 ", "Bip001 ", "CC_Base_", "J_Bip_", "ValveBiped."), the side word
// is found in any position ("L", "R", "Left", "right"; ".L", "_l", "L_", "LeftArm", "ArmLeft",
// and lower-case glued "lhand") and the remaining words are read through synonyms:
//
//   hips:       Hips, Hip, Pelvis (else the joint the two upper legs share: Rigify's DEF-spine)
//   neck, head: Neck, Neck1, neck_01, NeckTwist01; Head (else the top of the spine-named chain
//               above the shoulders: Rigify's DEF-spine.004 and DEF-spine.006)
//   shoulder:   Shoulder, Clavicle, Collar       upper arm: UpperArm, Arm, Shldr (Shoulder under
//                                                a Collar)
//   lower arm:  LowerArm, ForeArm, Forearm, Elbow hand: Hand, Fist, Wrist
//   upper leg:  UpperLeg, UpLeg, Thigh, Hip      lower leg: LowerLeg, Leg, Shin, Calf, Knee
//   foot:       Foot, Ankle                      toes: Toe, Toes, ToeBase, Ball, Toe0
//   fingers:    Thumb/Index/Middle/Mid/Ring/Pinky/Little with 1–3 or 01–03 (the thumb's first
//               is its metacarpal), or Metacarpal/Proximal/Intermediate/Medial/Distal; Rokoko's
//               Finger1…5 + segment word; 3ds Max Biped's Finger0…4 with a second digit
//   eyes, jaw:  Eye with a side, Jaw
//
// so these all map: CMU / MotionBuilder (LeftUpLeg, LeftLeg, LeftToeBase, LeftHandIndex1),
// Mixamo, Daz (hip, abdomen, lCollar, lShldr, lShin; Genesis lShldrBend), Reallusion CC
// (CC_Base_L_Upperarm), VRoid (J_Bip_L_UpperArm), VRM names (leftUpperArm), Bandai Namco
// Research Motion / Motive (Hips, Chest, Shoulder_L, UpperArm_L, LowerArm_L, UpperLeg_L,
// Toes_L), 3ds Max Biped (Bip01 Pelvis, Bip01 L Clavicle, Bip01 L Forearm, Bip01 L Calf, any
// Bip0N/Bip00N), the Unreal mannequin (pelvis, spine_01…05, neck_01, clavicle_l, upperarm_l,
// lowerarm_l, thigh_l, calf_l, ball_l, thumb_01_l, index_01_l), Rokoko (Spine1…4, LeftThigh,
// LeftShin, LeftToe, LeftFinger2Medial), Blender Rigify deform bones (DEF-upper_arm.L, the first
// of DEF-upper_arm.L / .L.001; other bones are ignored when DEF- bones exist) and the
// Blender-style names of game rigs (upper_arm.L, Thigh_R, Fist.L, Torso).
//
// A name with any other word is not a body part: twist, roll, helper, IK, pole, target, end,
// nub and corrective bones are never taken (upperarm_twist_01_l, ik_foot_l, LeftToe_End), nor
// are ORG-, MCH-, CTRL, WGT- bones. The hierarchy then settles the rest: each limb bone is taken
// below the one before it (the lower leg under the upper leg…), the first of several candidates
// in parents-first order wins, and the joints strictly between the hips and the neck (the head
// when there is no neck) are the spine chain: its first is spine, its second chest, its last
// (of three or more) upperChest.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kinema/character/asset.h"

namespace kinema {

/// The 55 VRM 1.0 humanoid bone names (hips, spine, …, rightLittleDistal), body first.
const std::vector<std::string>& vrm_humanoid_bones();

/// The bones a humanoid map must have: hips, spine, head and both arms (upper, lower, hand) and
/// legs (upper, lower, foot).
const std::vector<std::string>& required_humanoid_bones();

/// What name recognition found on a skeleton, complete or not.
struct HumanoidGuess {
  Humanoid map;  ///< every bone recognized, sorted by joint
  /// The naming scheme it looks like ("Mixamo", "3ds Max Biped", "Unreal mannequin", "Blender
  /// Rigify", "Rokoko", "Bandai Namco / Motive", "Reallusion CC", "VRoid", "Daz", "CMU /
  /// MotionBuilder", "VRM names", or "generic names"); "" unless the map is complete.
  std::string scheme;
  std::vector<std::string> missing;  ///< required bones not found, in required order
  /// For missing.front(): the joint names that might be it (the joints under the bone before
  /// it in its chain, or the joints whose names have one of its words), at most 8.
  std::vector<std::string> candidates;
  std::string candidates_seen;  ///< where they were seen: "under LeftThigh", "named like it"
  bool complete() const { return missing.empty(); }
};

/// Recognizes a humanoid in the joint names and hierarchy (the schemes above). Never throws.
HumanoidGuess recognize_humanoid(const Skeleton& skeleton);

/// Why a guess is not a humanoid: "no left lower leg (leftLowerLeg); candidates seen under
/// LeftThigh: LeftKnee_twist, LeftAnkle_helper"; "" when it is complete.
std::string describe_missing(const HumanoidGuess& guess);

/// recognize_humanoid()'s map when it is complete, else nullopt.
std::optional<Humanoid> guess_humanoid(const Skeleton& skeleton);

/// The humanoid map of an asset: its own (VRM) when it has one, else guess_humanoid() of its
/// skeleton. `guessed` (optional) is set to whether the second case applied.
std::optional<Humanoid> humanoid_of(const Asset& asset, bool* guessed = nullptr);

/// The humanoid map a job should use for `asset` (read from `file`): read_humanoid_map(map_json)
/// when `map_json` is not empty (a `--map` option: it wins over everything), else humanoid_of().
/// Without one, throws a kinema::Error naming `file` and the first required bone that could not
/// be mapped, with the candidate joints seen for it ("no left lower leg (leftLowerLeg);
/// candidates seen under LeftThigh: LeftKnee_twist, …") and how to supply a map instead.
Humanoid require_humanoid(const Asset& asset, const std::string& file,
                          const std::string& map_json = "");

/// Reads a humanoid map written by hand: a JSON object of VRM 1.0 bone name → joint name,
/// `{"hips": "Bip01 Pelvis", "leftUpperLeg": "Bip01 L Thigh", …}`, or the same object under
/// "humanBones". Throws kinema::Error naming `json_path` and the JSON pointer of the key for:
/// malformed or truncated JSON, a key that is no VRM 1.0 bone, a value that is not a string, a
/// joint not in `skeleton` (listing the closest names), a joint given to two bones, and a
/// required bone missing.
Humanoid read_humanoid_map(const std::string& json_path, const Skeleton& skeleton);

/// read_humanoid_map() of JSON text already in memory; `file` names it in errors.
Humanoid parse_humanoid_map(const std::string& json_text, const Skeleton& skeleton,
                            const std::string& file);

}  // namespace kinema
