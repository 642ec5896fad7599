// Module-private: what one joint name says about the body part it is (humanoid.cpp uses it).
//
// A name is split into lower-case tokens (camelCase, digits, '_', '.', ' ', '-' all split), a
// namespace ("mixamorig:", "Armature|") and rig prefixes ("DEF-", "Bip01 ", "CC_Base_",
// "J_Bip_", "ValveBiped.") are dropped, the side token ("L", "Left", "r", "right"…, in any
// position) is taken out, a trailing number is kept as an index, and what is left, joined,
// is looked up in a table of synonyms ("upleg", "thigh" and "upperleg" are all an upper leg).
// A name with any other word in it ("upperarm twist", "ik foot", "thigh fwd") is no body part.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kinema::humanoid_names {

enum class Side { None, Left, Right };

/// The body parts a name can denote (VRM bones without the side; fingers separately).
enum class Part {
  None,
  Hips,
  Spine,  ///< a spine-chain name (spine, chest, abdomen, torso, waist…): placed by the hierarchy
  Neck,
  Head,
  Jaw,
  Eye,
  Shoulder,
  UpperArm,
  LowerArm,
  Hand,
  UpperLeg,
  LowerLeg,
  Foot,
  Toes,
  Finger,  ///< see NameInfo::finger and ::segment
};

struct NameInfo {
  Side side = Side::None;
  Part part = Part::None;
  /// 0 for the usual word of the part, higher for words that are the part only when nothing
  /// better is there ("hip" as an upper leg, "knee" as a lower leg, "shoulder" as an upper arm).
  int rank = 0;
  /// A second reading when the first finds nothing (a "shoulder" under a "collar" is the upper
  /// arm; Daz-style rigs name the clavicle "collar" and the upper arm "shoulder").
  Part alternative = Part::None;
  int finger = -1;   ///< 0 thumb, 1 index, 2 middle, 3 ring, 4 little
  int segment = -1;  ///< VRM segment: thumb 0 metacarpal, 1 proximal, 2 distal; other fingers
                     ///< 0 proximal, 1 intermediate, 2 distal
  /// The thumb was named with VRM 0.x words: "intermediate" (VRM 1.0 proximal) or "proximal"
  /// (VRM 1.0 metacarpal when the same hand has an "intermediate" thumb).
  bool thumb_intermediate_word = false, thumb_proximal_word = false;
  int index = -1;        ///< the trailing number ("spine_03" → 3), -1 without one
  std::string base;      ///< the joined words without side and number ("spine" for "DEF-spine.003")
  bool deform = false;   ///< Blender's "DEF-" prefix (Rigify's deforming bones)
  bool control = false;  ///< a rig-control prefix (ORG-, MCH-, CTRL, WGT-, VIS_…): never a bone
};

/// The lower-case word tokens of a joint name, namespace stripped.
std::vector<std::string> tokenize(std::string_view name);

/// What the name `name` says.
NameInfo classify(std::string_view name);

/// VRM 1.0 finger bone name without side ("IndexProximal"), or "" for an invalid pair.
std::string finger_bone(int finger, int segment);

/// The words (tokens) a required bone's joint might have in its name, for error messages:
/// "lower leg" → {"leg", "lower", "shin", "calf", "knee"…}.
const std::vector<std::string>& words_of(Part part);

}  // namespace kinema::humanoid_names
