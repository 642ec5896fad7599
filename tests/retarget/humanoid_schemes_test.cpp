// Humanoid maps recognized from joint names: one realistic skeleton per naming scheme (names, a
// plausible hierarchy and rest offsets in metres), each asserting the whole map, fingers
// included, and that twist, helper, IK and control bones are never taken.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "kinema/retarget/humanoid.h"

namespace kinema {
namespace {

struct Spec {
  std::string name, parent;
  Vec3 offset;
};

Skeleton make(const std::vector<Spec>& spec) {
  std::vector<Joint> joints;
  for (const Spec& s : spec) {
    Joint j;
    j.name = s.name;
    for (size_t k = 0; k < joints.size(); ++k)
      if (joints[k].name == s.parent) j.parent = static_cast<int>(k);
    if (!s.parent.empty() && j.parent < 0) ADD_FAILURE() << "no parent " << s.parent;
    j.rest.translation = s.offset;
    joints.push_back(j);
  }
  return Skeleton::build(joints);
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

/// Both sides of a left-side spec: "{s}" becomes `left` / `right`, "{S}" the VRM side
/// ("left" / "right"), and the right side is mirrored in x.
std::vector<Spec> both_sides(const std::vector<Spec>& left_side, const std::string& left,
                             const std::string& right) {
  std::vector<Spec> out;
  for (const bool is_left : {true, false})
    for (Spec s : left_side) {
      s.name = replace_all(s.name, "{s}", is_left ? left : right);
      s.parent = replace_all(s.parent, "{s}", is_left ? left : right);
      if (!is_left) s.offset.x = -s.offset.x;
      out.push_back(s);
    }
  return out;
}

using BoneMap = std::map<std::string, std::string>;  // VRM bone → joint name

BoneMap both_side_bones(const BoneMap& left_side, const std::string& left,
                        const std::string& right) {
  BoneMap out;
  for (const auto& [bone, joint] : left_side) {
    out[replace_all(bone, "{S}", "left")] = replace_all(joint, "{s}", left);
    out[replace_all(bone, "{S}", "right")] = replace_all(joint, "{s}", right);
  }
  return out;
}

BoneMap center_and(BoneMap center, const BoneMap& sides) {
  center.insert(sides.begin(), sides.end());
  return center;
}

BoneMap recognized(const Skeleton& s, std::string* scheme = nullptr) {
  const HumanoidGuess g = recognize_humanoid(s);
  EXPECT_TRUE(g.complete()) << "missing " << (g.missing.empty() ? "" : g.missing.front());
  if (scheme) *scheme = g.scheme;
  BoneMap m;
  for (const auto& [bone, joint] : g.map.bones) m[bone] = s.joint(joint).name;
  return m;
}

std::vector<Spec> concat(std::vector<Spec> a, const std::vector<Spec>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(HumanoidSchemes, BandaiNamcoMotiveNames) {
  const std::vector<Spec> center = {
      {"joint_Root", "", {0, 0, 0}},   {"Hips", "joint_Root", {0, 0.94, 0}},
      {"Spine", "Hips", {0, 0.16, 0}}, {"Chest", "Spine", {0, 0.09, 0}},
      {"Neck", "Chest", {0, 0.16, 0}}, {"Head", "Neck", {0, 0.06, 0}}};
  const std::vector<Spec> side = {{"Shoulder_{s}", "Chest", {0.05, 0.13, 0}},
                                  {"UpperArm_{s}", "Shoulder_{s}", {0.05, 0, 0}},
                                  {"LowerArm_{s}", "UpperArm_{s}", {0.24, 0, 0}},
                                  {"Hand_{s}", "LowerArm_{s}", {0.22, 0, 0}},
                                  {"UpperLeg_{s}", "Hips", {0.06, -0.02, 0}},
                                  {"LowerLeg_{s}", "UpperLeg_{s}", {0, -0.39, 0}},
                                  {"Foot_{s}", "LowerLeg_{s}", {0, -0.41, 0}},
                                  {"Toes_{s}", "Foot_{s}", {0, -0.05, 0.11}}};
  std::string scheme;
  const BoneMap m = recognized(make(concat(center, both_sides(side, "L", "R"))), &scheme);
  EXPECT_EQ(scheme, "Bandai Namco / Motive");
  EXPECT_EQ(m, center_and({{"hips", "Hips"},
                           {"spine", "Spine"},
                           {"chest", "Chest"},
                           {"neck", "Neck"},
                           {"head", "Head"}},
                          both_side_bones({{"{S}Shoulder", "Shoulder_{s}"},
                                           {"{S}UpperArm", "UpperArm_{s}"},
                                           {"{S}LowerArm", "LowerArm_{s}"},
                                           {"{S}Hand", "Hand_{s}"},
                                           {"{S}UpperLeg", "UpperLeg_{s}"},
                                           {"{S}LowerLeg", "LowerLeg_{s}"},
                                           {"{S}Foot", "Foot_{s}"},
                                           {"{S}Toes", "Toes_{s}"}},
                                          "L", "R")));
}

/// Five fingers of three segments under `hand`, named by `name(finger, segment)`, and their
/// VRM bones ("{S}" for the side).
void add_fingers(std::vector<Spec>& spec, BoneMap& expected, const std::string& hand,
                 const std::vector<std::string>& names,
                 const std::vector<std::string>& metacarpals = {}) {
  static const std::vector<std::string> vrm = {
      "ThumbMetacarpal",   "ThumbProximal",      "ThumbDistal",      "IndexProximal",
      "IndexIntermediate", "IndexDistal",        "MiddleProximal",   "MiddleIntermediate",
      "MiddleDistal",      "RingProximal",       "RingIntermediate", "RingDistal",
      "LittleProximal",    "LittleIntermediate", "LittleDistal"};
  for (size_t k = 0; k < names.size(); ++k) {
    const size_t finger = k / 3, segment = k % 3;
    std::string parent = segment == 0 ? hand : names[k - 1];
    if (segment == 0 && finger > 0 && finger - 1 < metacarpals.size()) {
      parent = metacarpals[finger - 1];
      spec.push_back({parent, hand, {0.03, 0, 0.01 * static_cast<double>(finger) - 0.02}});
    }
    spec.push_back({names[k], parent, {segment == 0 ? 0.06 : 0.03, 0, 0}});
    expected["{S}" + vrm[k]] = names[k];
  }
}

TEST(HumanoidSchemes, MaxBipedWithAnyBipPrefix) {
  for (const std::string bip : {"Bip01", "Bip001", "Bip02"}) {
    SCOPED_TRACE(bip);
    std::vector<Spec> spec = {{bip, "", {0, 1.0, 0}},
                              {bip + " Pelvis", bip, {0, 0, 0}},
                              {bip + " Spine", bip + " Pelvis", {0, 0.1, 0}},
                              {bip + " Spine1", bip + " Spine", {0, 0.12, 0}},
                              {bip + " Spine2", bip + " Spine1", {0, 0.12, 0}},
                              {bip + " Neck", bip + " Spine2", {0, 0.15, 0}},
                              {bip + " Head", bip + " Neck", {0, 0.08, 0}},
                              {bip + " HeadNub", bip + " Head", {0, 0.2, 0}}};
    std::vector<Spec> side = {{bip + " {s} Clavicle", bip + " Neck", {0.02, 0, 0}},  // Biped's
                              {bip + " {s} UpperArm", bip + " {s} Clavicle", {0.15, 0, 0}},
                              {bip + " {s} UpArmTwist", bip + " {s} UpperArm", {0.1, 0, 0}},
                              {bip + " {s} Forearm", bip + " {s} UpperArm", {0.28, 0, 0}},
                              {bip + " {s} ForeTwist", bip + " {s} Forearm", {0.1, 0, 0}},
                              {bip + " {s} Hand", bip + " {s} Forearm", {0.25, 0, 0}},
                              {bip + " {s} Thigh", bip + " Pelvis", {0.09, 0, 0}},
                              {bip + " {s} Calf", bip + " {s} Thigh", {0, -0.43, 0}},
                              {bip + " {s} Foot", bip + " {s} Calf", {0, -0.42, 0}},
                              {bip + " {s} Toe0", bip + " {s} Foot", {0, -0.07, 0.12}},
                              {bip + " {s} Toe0Nub", bip + " {s} Toe0", {0, 0, 0.05}}};
    BoneMap side_map = {
        {"{S}Shoulder", bip + " {s} Clavicle"}, {"{S}UpperArm", bip + " {s} UpperArm"},
        {"{S}LowerArm", bip + " {s} Forearm"},  {"{S}Hand", bip + " {s} Hand"},
        {"{S}UpperLeg", bip + " {s} Thigh"},    {"{S}LowerLeg", bip + " {s} Calf"},
        {"{S}Foot", bip + " {s} Foot"},         {"{S}Toes", bip + " {s} Toe0"}};
    std::vector<std::string> fingers;
    for (int f = 0; f < 5; ++f)
      for (const std::string seg : {"", "1", "2"})
        fingers.push_back(bip + " {s} Finger" + std::to_string(f) + seg);
    add_fingers(side, side_map, bip + " {s} Hand", fingers);
    side.push_back({bip + " {s} Finger0Nub", bip + " {s} Finger02", {0.02, 0, 0}});
    std::string scheme;
    const BoneMap m = recognized(make(concat(spec, both_sides(side, "L", "R"))), &scheme);
    EXPECT_EQ(scheme, "3ds Max Biped");
    EXPECT_EQ(m, center_and({{"hips", bip + " Pelvis"},
                             {"spine", bip + " Spine"},
                             {"chest", bip + " Spine1"},
                             {"upperChest", bip + " Spine2"},
                             {"neck", bip + " Neck"},
                             {"head", bip + " Head"}},
                            both_side_bones(side_map, "L", "R")));
  }
}

TEST(HumanoidSchemes, UnrealMannequinSkipsTwistCorrectiveAndIkBones) {
  const std::vector<Spec> center = {{"root", "", {0, 0, 0}},
                                    {"pelvis", "root", {0, 0.95, 0}},
                                    {"spine_01", "pelvis", {0, 0.05, 0}},
                                    {"spine_02", "spine_01", {0, 0.1, 0}},
                                    {"spine_03", "spine_02", {0, 0.1, 0}},
                                    {"spine_04", "spine_03", {0, 0.1, 0}},
                                    {"spine_05", "spine_04", {0, 0.1, 0}},
                                    {"neck_01", "spine_05", {0, 0.1, 0}},
                                    {"neck_02", "neck_01", {0, 0.05, 0}},
                                    {"head", "neck_02", {0, 0.06, 0}},
                                    {"ik_foot_root", "root", {0, 0, 0}},
                                    {"ik_hand_root", "root", {0, 0, 0}},
                                    {"ik_hand_gun", "ik_hand_root", {0, 1, 0}}};
  std::vector<Spec> side = {
      {"clavicle_{s}", "spine_05", {0.03, 0.05, 0}},
      {"upperarm_{s}", "clavicle_{s}", {0.15, 0, 0}},
      {"upperarm_twist_01_{s}", "upperarm_{s}", {0.01, 0, 0}},  // before the lower arm
      {"upperarm_twist_02_{s}", "upperarm_{s}", {0.14, 0, 0}},
      {"upperarm_correctiveRoot_{s}", "upperarm_{s}", {0, 0, 0}},
      {"lowerarm_{s}", "upperarm_{s}", {0.28, 0, 0}},
      {"lowerarm_twist_01_{s}", "lowerarm_{s}", {0.2, 0, 0}},
      {"hand_{s}", "lowerarm_{s}", {0.26, 0, 0}},
      {"thigh_{s}", "pelvis", {0.09, -0.02, 0}},
      {"thigh_twist_01_{s}", "thigh_{s}", {0, -0.1, 0}},
      {"thigh_fwd_{s}", "thigh_{s}", {0, 0, 0.05}},
      {"calf_{s}", "thigh_{s}", {0, -0.43, 0}},
      {"calf_knee_{s}", "calf_{s}", {0, 0, 0.03}},
      {"calf_twist_01_{s}", "calf_{s}", {0, -0.2, 0}},
      {"foot_{s}", "calf_{s}", {0, -0.42, 0}},
      {"ball_{s}", "foot_{s}", {0, -0.07, 0.13}},
      {"ik_foot_{s}", "ik_foot_root", {0.1, 0.05, 0}},
      {"ik_hand_{s}", "ik_hand_gun", {0.1, 0, 0}}};
  BoneMap side_map = {{"{S}Shoulder", "clavicle_{s}"}, {"{S}UpperArm", "upperarm_{s}"},
                      {"{S}LowerArm", "lowerarm_{s}"}, {"{S}Hand", "hand_{s}"},
                      {"{S}UpperLeg", "thigh_{s}"},    {"{S}LowerLeg", "calf_{s}"},
                      {"{S}Foot", "foot_{s}"},         {"{S}Toes", "ball_{s}"}};
  std::vector<std::string> fingers;
  for (const std::string f : {"thumb", "index", "middle", "ring", "pinky"})
    for (const std::string seg : {"01", "02", "03"}) fingers.push_back(f + "_" + seg + "_{s}");
  add_fingers(side, side_map, "hand_{s}", fingers,
              {"index_metacarpal_{s}", "middle_metacarpal_{s}", "ring_metacarpal_{s}",
               "pinky_metacarpal_{s}"});
  std::string scheme;
  const BoneMap m = recognized(make(concat(center, both_sides(side, "l", "r"))), &scheme);
  EXPECT_EQ(scheme, "Unreal mannequin");
  EXPECT_EQ(m, center_and({{"hips", "pelvis"},
                           {"spine", "spine_01"},
                           {"chest", "spine_02"},
                           {"upperChest", "spine_05"},
                           {"neck", "neck_01"},
                           {"head", "head"}},
                          both_side_bones(side_map, "l", "r")));
}

TEST(HumanoidSchemes, RokokoNewtonNames) {
  const std::vector<Spec> center = {
      {"Root", "", {0, 0, 0}},           {"Hips", "Root", {0, 0.95, 0}},
      {"Spine1", "Hips", {0, 0.08, 0}},  {"Spine2", "Spine1", {0, 0.1, 0}},
      {"Spine3", "Spine2", {0, 0.1, 0}}, {"Spine4", "Spine3", {0, 0.1, 0}},
      {"Neck", "Spine4", {0, 0.1, 0}},   {"Head", "Neck", {0, 0.08, 0}},
      {"Head_End", "Head", {0, 0.2, 0}}};
  std::vector<Spec> side = {
      {"{s}Shoulder", "Spine4", {0.03, 0.05, 0}}, {"{s}Arm", "{s}Shoulder", {0.15, 0, 0}},
      {"{s}ForeArm", "{s}Arm", {0.28, 0, 0}},     {"{s}Hand", "{s}ForeArm", {0.26, 0, 0}},
      {"{s}Thigh", "Hips", {0.09, -0.02, 0}},     {"{s}Shin", "{s}Thigh", {0, -0.43, 0}},
      {"{s}Foot", "{s}Shin", {0, -0.42, 0}},      {"{s}Toe", "{s}Foot", {0, -0.07, 0.13}},
      {"{s}Toe_End", "{s}Toe", {0, 0, 0.05}}};
  BoneMap side_map = {{"{S}Shoulder", "{s}Shoulder"}, {"{S}UpperArm", "{s}Arm"},
                      {"{S}LowerArm", "{s}ForeArm"},  {"{S}Hand", "{s}Hand"},
                      {"{S}UpperLeg", "{s}Thigh"},    {"{S}LowerLeg", "{s}Shin"},
                      {"{S}Foot", "{s}Foot"},         {"{S}Toes", "{s}Toe"}};
  std::vector<std::string> fingers = {"{s}Finger1Metacarpal", "{s}Finger1Proximal",
                                      "{s}Finger1Distal"};
  for (int f = 2; f <= 5; ++f)
    for (const std::string seg : {"Proximal", "Medial", "Distal"})
      fingers.push_back("{s}Finger" + std::to_string(f) + seg);
  add_fingers(side, side_map, "{s}Hand", fingers,
              {"{s}Finger2Metacarpal", "{s}Finger3Metacarpal", "{s}Finger4Metacarpal",
               "{s}Finger5Metacarpal"});
  std::string scheme;
  const BoneMap m = recognized(make(concat(center, both_sides(side, "Left", "Right"))), &scheme);
  EXPECT_EQ(scheme, "Rokoko");
  EXPECT_EQ(m, center_and({{"hips", "Hips"},
                           {"spine", "Spine1"},
                           {"chest", "Spine2"},
                           {"upperChest", "Spine4"},
                           {"neck", "Neck"},
                           {"head", "Head"}},
                          both_side_bones(side_map, "Left", "Right")));
}

TEST(HumanoidSchemes, BlenderRigifyDeformBonesOnly) {
  std::vector<Spec> center = {{"root", "", {0, 0, 0}},
                              // Rigify's controls: never bones of the map.
                              {"torso", "root", {0, 1, 0}},
                              {"hips", "torso", {0, 0, 0}},
                              {"chest", "torso", {0, 0.3, 0}},
                              {"head", "torso", {0, 0.6, 0}},
                              {"MCH-torso.parent", "root", {0, 1, 0}},
                              {"DEF-spine", "root", {0, 1.0, 0}}};
  for (int k = 1; k <= 6; ++k) {
    const std::string parent = k == 1 ? "DEF-spine" : "DEF-spine.00" + std::to_string(k - 1);
    center.push_back({"DEF-spine.00" + std::to_string(k), parent, {0, 0.1, 0}});
  }
  std::vector<Spec> side = {{"ORG-thigh.{s}", "root", {0.1, 1.0, 0}},
                            {"thigh_ik.{s}", "root", {0.1, 1.0, 0}},
                            {"DEF-pelvis.{s}", "DEF-spine", {0.05, 0, 0.05}},
                            {"DEF-thigh.{s}", "DEF-spine", {0.1, -0.05, 0}},
                            {"DEF-thigh.{s}.001", "DEF-thigh.{s}", {0, -0.22, 0}},
                            {"DEF-shin.{s}", "DEF-thigh.{s}.001", {0, -0.22, 0}},
                            {"DEF-shin.{s}.001", "DEF-shin.{s}", {0, -0.21, 0}},
                            {"DEF-foot.{s}", "DEF-shin.{s}.001", {0, -0.21, 0}},
                            {"DEF-toe.{s}", "DEF-foot.{s}", {0, -0.07, 0.13}},
                            {"DEF-shoulder.{s}", "DEF-spine.003", {0.02, 0.05, 0.03}},
                            {"DEF-upper_arm.{s}", "DEF-shoulder.{s}", {0.16, 0, -0.03}},
                            {"DEF-upper_arm.{s}.001", "DEF-upper_arm.{s}", {0.14, 0, 0}},
                            {"DEF-forearm.{s}", "DEF-upper_arm.{s}.001", {0.14, 0, 0}},
                            {"DEF-forearm.{s}.001", "DEF-forearm.{s}", {0.13, 0, 0}},
                            {"DEF-hand.{s}", "DEF-forearm.{s}.001", {0.13, 0, 0}},
                            {"MCH-upper_arm_ik.{s}", "root", {0.2, 1.4, 0}},
                            {"hand_ik.{s}", "root", {0.7, 1.4, 0}}};
  BoneMap side_map = {{"{S}Shoulder", "DEF-shoulder.{s}"}, {"{S}UpperArm", "DEF-upper_arm.{s}"},
                      {"{S}LowerArm", "DEF-forearm.{s}"},  {"{S}Hand", "DEF-hand.{s}"},
                      {"{S}UpperLeg", "DEF-thigh.{s}"},    {"{S}LowerLeg", "DEF-shin.{s}"},
                      {"{S}Foot", "DEF-foot.{s}"},         {"{S}Toes", "DEF-toe.{s}"}};
  std::vector<std::string> fingers;
  for (const std::string f : {"thumb", "f_index", "f_middle", "f_ring", "f_pinky"})
    for (const std::string seg : {"01", "02", "03"})
      fingers.push_back("DEF-" + f + "." + seg + ".{s}");
  add_fingers(side, side_map, "DEF-hand.{s}", fingers,
              {"DEF-palm.01.{s}", "DEF-palm.02.{s}", "DEF-palm.03.{s}", "DEF-palm.04.{s}"});
  std::string scheme;
  const BoneMap m = recognized(make(concat(center, both_sides(side, "L", "R"))), &scheme);
  EXPECT_EQ(scheme, "Blender Rigify");
  EXPECT_EQ(m, center_and({{"hips", "DEF-spine"},
                           {"spine", "DEF-spine.001"},
                           {"chest", "DEF-spine.002"},
                           {"upperChest", "DEF-spine.003"},
                           {"neck", "DEF-spine.004"},
                           {"head", "DEF-spine.006"}},
                          both_side_bones(side_map, "L", "R")));
}

/// The plain names of game-asset rigs: each side marker and the synonyms, one rig each.
TEST(HumanoidSchemes, BlenderStyleGameRigNames) {
  struct Rig {
    std::string left, right;  // the side markers
    std::string hips, spine, chest, neck, head;
    std::string shoulder, upper_arm, lower_arm, hand, upper_leg, lower_leg, foot, toes;
  };
  const std::vector<Rig> rigs = {
      {"L", "R", "Pelvis", "Abdomen", "Torso", "Neck", "Head", "Clavicle.{s}", "Arm.{s}",
       "Forearm.{s}", "Fist.{s}", "Thigh.{s}", "Shin.{s}", "Foot.{s}", "Toe.{s}"},
      {"l", "r", "Root", "spine", "chest", "neck", "head", "shoulder_{s}", "upper_arm_{s}",
       "lower_arm_{s}", "hand_{s}", "upper_leg_{s}", "lower_leg_{s}", "foot_{s}", "toes_{s}"},
      {"L", "R", "Hips", "Spine", "Chest", "Neck", "Head", "{s}_Collar", "{s}_Shoulder",
       "{s}_Elbow", "{s}_Wrist", "{s}_Hip", "{s}_Knee", "{s}_Ankle", "{s}_Ball"},
      {"Left", "Right", "hips", "spine", "chest", "neck", "head", "Shoulder{s}", "UpperArm{s}",
       "ForeArm{s}", "Hand{s}", "UpperLeg{s}", "Calf{s}", "Foot{s}", "ToeBase{s}"},
      {"left", "right", "hips", "spine", "torso", "neck", "head", "collar_{s}", "arm_{s}",
       "elbow_{s}", "hand_{s}", "thigh_{s}", "leg_{s}", "ankle_{s}", "toe_{s}"},
      // The side in the middle of the name.
      {"Left", "Right", "Hips", "Spine", "Chest", "Neck", "Head", "Collar{s}Bone", "Upper{s}Arm",
       "Lower{s}Arm", "{s}Hand", "Up{s}Leg", "Low{s}Leg", "{s}Foot", "{s}Toes"},
  };
  for (const Rig& r : rigs) {
    SCOPED_TRACE(r.upper_arm);
    const std::vector<Spec> center = {{r.hips, "", {0, 0.95, 0}},
                                      {r.spine, r.hips, {0, 0.1, 0}},
                                      {r.chest, r.spine, {0, 0.25, 0}},
                                      {r.neck, r.chest, {0, 0.15, 0}},
                                      {r.head, r.neck, {0, 0.08, 0}}};
    const std::vector<Spec> side = {
        {r.shoulder, r.chest, {0.03, 0.1, 0}},    {r.upper_arm, r.shoulder, {0.15, 0, 0}},
        {r.lower_arm, r.upper_arm, {0.28, 0, 0}}, {r.hand, r.lower_arm, {0.26, 0, 0}},
        {r.upper_leg, r.hips, {0.09, -0.02, 0}},  {r.lower_leg, r.upper_leg, {0, -0.43, 0}},
        {r.foot, r.lower_leg, {0, -0.42, 0}},     {r.toes, r.foot, {0, -0.07, 0.13}}};
    const BoneMap m = recognized(make(concat(center, both_sides(side, r.left, r.right))));
    EXPECT_EQ(m, center_and({{"hips", r.hips},
                             {"spine", r.spine},
                             {"chest", r.chest},
                             {"neck", r.neck},
                             {"head", r.head}},
                            both_side_bones({{"{S}Shoulder", r.shoulder},
                                             {"{S}UpperArm", r.upper_arm},
                                             {"{S}LowerArm", r.lower_arm},
                                             {"{S}Hand", r.hand},
                                             {"{S}UpperLeg", r.upper_leg},
                                             {"{S}LowerLeg", r.lower_leg},
                                             {"{S}Foot", r.foot},
                                             {"{S}Toes", r.toes}},
                                            r.left, r.right)));
  }
}

// Joint-named rigs: a "shoulder" with no collar above it and no upper arm below it is the
// shoulder joint, that is the upper arm.
TEST(HumanoidSchemes, JointNamedRigShoulderIsTheUpperArm) {
  const std::vector<Spec> center = {{"Hips", "", {0, 0.95, 0}},
                                    {"Spine", "Hips", {0, 0.1, 0}},
                                    {"Chest", "Spine", {0, 0.25, 0}},
                                    {"Neck", "Chest", {0, 0.15, 0}},
                                    {"Head", "Neck", {0, 0.08, 0}}};
  const std::vector<Spec> side = {
      {"{s}Shoulder", "Chest", {0.18, 0.1, 0}}, {"{s}Elbow", "{s}Shoulder", {0.28, 0, 0}},
      {"{s}Wrist", "{s}Elbow", {0.26, 0, 0}},   {"{s}Hip", "Hips", {0.09, -0.02, 0}},
      {"{s}Knee", "{s}Hip", {0, -0.43, 0}},     {"{s}Ankle", "{s}Knee", {0, -0.42, 0}},
      {"{s}Toe", "{s}Ankle", {0, -0.07, 0.13}}};
  EXPECT_EQ(recognized(make(concat(center, both_sides(side, "Left", "Right")))),
            center_and({{"hips", "Hips"},
                        {"spine", "Spine"},
                        {"chest", "Chest"},
                        {"neck", "Neck"},
                        {"head", "Head"}},
                       both_side_bones({{"{S}UpperArm", "{s}Shoulder"},
                                        {"{S}LowerArm", "{s}Elbow"},
                                        {"{S}Hand", "{s}Wrist"},
                                        {"{S}UpperLeg", "{s}Hip"},
                                        {"{S}LowerLeg", "{s}Knee"},
                                        {"{S}Foot", "{s}Ankle"},
                                        {"{S}Toes", "{s}Toe"}},
                                       "Left", "Right")));
}

TEST(HumanoidSchemes, VrmNamesWithFingersEyesAndJaw) {
  const std::vector<Spec> center = {
      {"hips", "", {0, 0.95, 0}},           {"spine", "hips", {0, 0.1, 0}},
      {"chest", "spine", {0, 0.12, 0}},     {"upperChest", "chest", {0, 0.12, 0}},
      {"neck", "upperChest", {0, 0.12, 0}}, {"head", "neck", {0, 0.08, 0}},
      {"jaw", "head", {0, -0.02, 0.05}}};
  std::vector<Spec> side = {
      {"{s}Eye", "head", {0.03, 0.07, 0.08}},        {"{s}Shoulder", "upperChest", {0.03, 0.1, 0}},
      {"{s}UpperArm", "{s}Shoulder", {0.15, 0, 0}},  {"{s}LowerArm", "{s}UpperArm", {0.28, 0, 0}},
      {"{s}Hand", "{s}LowerArm", {0.26, 0, 0}},      {"{s}UpperLeg", "hips", {0.09, -0.02, 0}},
      {"{s}LowerLeg", "{s}UpperLeg", {0, -0.43, 0}}, {"{s}Foot", "{s}LowerLeg", {0, -0.42, 0}},
      {"{s}Toes", "{s}Foot", {0, -0.07, 0.13}}};
  BoneMap side_map = {{"{S}Eye", "{s}Eye"},           {"{S}Shoulder", "{s}Shoulder"},
                      {"{S}UpperArm", "{s}UpperArm"}, {"{S}LowerArm", "{s}LowerArm"},
                      {"{S}Hand", "{s}Hand"},         {"{S}UpperLeg", "{s}UpperLeg"},
                      {"{S}LowerLeg", "{s}LowerLeg"}, {"{S}Foot", "{s}Foot"},
                      {"{S}Toes", "{s}Toes"}};
  std::vector<std::string> fingers = {"{s}ThumbMetacarpal", "{s}ThumbProximal", "{s}ThumbDistal"};
  for (const std::string f : {"Index", "Middle", "Ring", "Little"})
    for (const std::string seg : {"Proximal", "Intermediate", "Distal"})
      fingers.push_back("{s}" + f + seg);
  add_fingers(side, side_map, "{s}Hand", fingers);
  std::string scheme;
  const BoneMap m = recognized(make(concat(center, both_sides(side, "left", "right"))), &scheme);
  EXPECT_EQ(scheme, "VRM names");
  EXPECT_EQ(m.size(), vrm_humanoid_bones().size()) << "every VRM 1.0 bone";
  EXPECT_EQ(m, center_and({{"hips", "hips"},
                           {"spine", "spine"},
                           {"chest", "chest"},
                           {"upperChest", "upperChest"},
                           {"neck", "neck"},
                           {"head", "head"},
                           {"jaw", "jaw"}},
                          both_side_bones(side_map, "left", "right")));
}

TEST(HumanoidSchemes, MixamoFingersAndHelpersListedFirst) {
  // Helper bones come before the real ones in parents-first order, so only their names keep
  // them out.
  const std::vector<Spec> center = {{"mixamorig:Hips", "", {0, 1, 0}},
                                    {"mixamorig:Spine", "mixamorig:Hips", {0, 0.1, 0}},
                                    {"mixamorig:Spine1", "mixamorig:Spine", {0, 0.12, 0}},
                                    {"mixamorig:Spine2", "mixamorig:Spine1", {0, 0.12, 0}},
                                    {"mixamorig:Neck", "mixamorig:Spine2", {0, 0.15, 0}},
                                    {"mixamorig:Head", "mixamorig:Neck", {0, 0.1, 0}},
                                    {"mixamorig:HeadTop_End", "mixamorig:Head", {0, 0.2, 0}}};
  std::vector<Spec> side = {{"mixamorig:{s}Shoulder", "mixamorig:Spine2", {0.06, 0.1, 0}},
                            {"mixamorig:{s}ArmTwist", "mixamorig:{s}Shoulder", {0.1, 0, 0}},
                            {"mixamorig:{s}Arm", "mixamorig:{s}Shoulder", {0.12, 0, 0}},
                            {"mixamorig:{s}ForeArmRoll", "mixamorig:{s}Arm", {0.1, 0, 0}},
                            {"mixamorig:{s}ForeArm", "mixamorig:{s}Arm", {0.27, 0, 0}},
                            {"mixamorig:{s}HandIK", "mixamorig:{s}ForeArm", {0.25, 0, 0}},
                            {"mixamorig:{s}Hand", "mixamorig:{s}ForeArm", {0.25, 0, 0}},
                            {"mixamorig:{s}UpLegHelper", "mixamorig:Hips", {0.09, 0, 0}},
                            {"mixamorig:{s}UpLeg", "mixamorig:Hips", {0.09, -0.06, 0}},
                            {"mixamorig:{s}LegPole", "mixamorig:{s}UpLeg", {0, -0.4, 0.3}},
                            {"mixamorig:{s}Leg", "mixamorig:{s}UpLeg", {0, -0.42, 0}},
                            {"mixamorig:{s}FootTarget", "mixamorig:{s}Leg", {0, -0.42, 0}},
                            {"mixamorig:{s}Foot", "mixamorig:{s}Leg", {0, -0.42, 0}},
                            {"mixamorig:{s}ToeBase", "mixamorig:{s}Foot", {0, -0.08, 0.12}},
                            {"mixamorig:{s}Toe_End", "mixamorig:{s}ToeBase", {0, 0, 0.06}}};
  BoneMap side_map = {
      {"{S}Shoulder", "mixamorig:{s}Shoulder"}, {"{S}UpperArm", "mixamorig:{s}Arm"},
      {"{S}LowerArm", "mixamorig:{s}ForeArm"},  {"{S}Hand", "mixamorig:{s}Hand"},
      {"{S}UpperLeg", "mixamorig:{s}UpLeg"},    {"{S}LowerLeg", "mixamorig:{s}Leg"},
      {"{S}Foot", "mixamorig:{s}Foot"},         {"{S}Toes", "mixamorig:{s}ToeBase"}};
  std::vector<std::string> fingers;
  for (const std::string f : {"Thumb", "Index", "Middle", "Ring", "Pinky"})
    for (const std::string seg : {"1", "2", "3"}) fingers.push_back("mixamorig:{s}Hand" + f + seg);
  add_fingers(side, side_map, "mixamorig:{s}Hand", fingers);
  side.push_back({"mixamorig:{s}HandIndex4", "mixamorig:{s}HandIndex3", {0.02, 0, 0}});
  std::string scheme;
  const BoneMap m = recognized(make(concat(center, both_sides(side, "Left", "Right"))), &scheme);
  EXPECT_EQ(scheme, "Mixamo");
  EXPECT_EQ(m, center_and({{"hips", "mixamorig:Hips"},
                           {"spine", "mixamorig:Spine"},
                           {"chest", "mixamorig:Spine1"},
                           {"upperChest", "mixamorig:Spine2"},
                           {"neck", "mixamorig:Neck"},
                           {"head", "mixamorig:Head"}},
                          both_side_bones(side_map, "Left", "Right")));
}

}  // namespace
}  // namespace kinema
