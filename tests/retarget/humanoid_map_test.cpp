// Humanoid maps written by hand (JSON), the error for a rig whose legs cannot be found, and the
// maps recognized on the real rigs in tests/data.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/retarget/humanoid.h"
#include "test_paths.h"

namespace kinema {
namespace {

const std::string kData = test_paths::data_dir();

Skeleton make(const std::vector<std::pair<std::string, std::string>>& spec) {
  std::vector<Joint> joints;
  for (const auto& [name, parent] : spec) {
    Joint j;
    j.name = name;
    for (size_t k = 0; k < joints.size(); ++k)
      if (joints[k].name == parent) j.parent = static_cast<int>(k);
    j.rest.translation = {0, 0.1, 0};
    joints.push_back(j);
  }
  return Skeleton::build(joints);
}

/// A biped whose legs are given by `legs` (name, parent) and whose body is complete.
Skeleton body_with_legs(const std::vector<std::pair<std::string, std::string>>& legs) {
  std::vector<std::pair<std::string, std::string>> spec = {{"Hips", ""},
                                                           {"Spine", "Hips"},
                                                           {"Chest", "Spine"},
                                                           {"Neck", "Chest"},
                                                           {"Head", "Neck"},
                                                           {"LeftArm", "Chest"},
                                                           {"LeftForeArm", "LeftArm"},
                                                           {"LeftHand", "LeftForeArm"},
                                                           {"RightArm", "Chest"},
                                                           {"RightForeArm", "RightArm"},
                                                           {"RightHand", "RightForeArm"}};
  spec.insert(spec.end(), legs.begin(), legs.end());
  return make(spec);
}

/// Runs `f`, which must throw kinema::Error; returns what() ("" and a failure otherwise).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no kinema::Error";
  return {};
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(HumanoidMissing, NoRecognizableLowerLegNamesTheBoneAndTheJointsBelowTheUpperLeg) {
  Asset a;
  a.skeleton = body_with_legs({{"LeftThigh", "Hips"},
                               {"LeftKnee_twist", "LeftThigh"},
                               {"LeftAnkle_helper", "LeftKnee_twist"},
                               {"RightThigh", "Hips"},
                               {"RightShin", "RightThigh"},
                               {"RightFoot", "RightShin"}});
  const HumanoidGuess g = recognize_humanoid(a.skeleton);
  ASSERT_FALSE(g.complete());
  EXPECT_EQ(g.missing.front(), "leftLowerLeg");
  EXPECT_EQ(g.candidates, (std::vector<std::string>{"LeftKnee_twist", "LeftAnkle_helper"}));
  EXPECT_EQ(g.map.find("leftUpperLeg"), a.skeleton.find("LeftThigh")) << "the partial map";
  EXPECT_EQ(g.map.find("rightFoot"), a.skeleton.find("RightFoot"));
  const std::string e = error_of([&] { require_humanoid(a, "rig.bvh"); });
  EXPECT_TRUE(has(e, "rig.bvh")) << e;
  EXPECT_TRUE(has(e, "no left lower leg (leftLowerLeg)")) << e;
  EXPECT_TRUE(has(e, "under LeftThigh: LeftKnee_twist, LeftAnkle_helper")) << e;
  EXPECT_TRUE(has(e, "--map")) << e;
}

TEST(HumanoidMissing, NoSidedLegsListsTheJointsNamedLikeLegs) {
  Asset a;
  a.skeleton = body_with_legs({{"Leg_A", "Hips"}, {"Leg_A_lower", "Leg_A"}, {"Leg_B", "Hips"}});
  const std::string e = error_of([&] { require_humanoid(a, "rig.fbx"); });
  EXPECT_TRUE(has(e, "no left upper leg (leftUpperLeg)")) << e;
  EXPECT_TRUE(has(e, "Leg_A, Leg_A_lower, Leg_B")) << e;
  EXPECT_FALSE(guess_humanoid(a.skeleton).has_value());
}

TEST(HumanoidMissing, NothingHumanNamesTheHips) {
  Asset a;
  a.skeleton = make({{"root", ""}, {"a", "root"}, {"b", "a"}});
  const std::string e = error_of([&] { require_humanoid(a, "thing.glb"); });
  EXPECT_TRUE(has(e, "no hips (hips)")) << e;
  EXPECT_TRUE(has(e, "candidates seen with hips, hip, pelvis or root in the name: root")) << e;
}

TEST(HumanoidMissing, TheFilesOwnMapWins) {
  Asset a;
  a.skeleton = make({{"root", ""}, {"a", "root"}});
  a.humanoid = Humanoid{{{"hips", 0}}};
  EXPECT_EQ(require_humanoid(a, "x.vrm").find("hips"), 0);
}

// ---- JSON maps ------------------------------------------------------------------------------

Skeleton biped() {
  return make({{"Bip01", ""},
               {"Bip01 Pelvis", "Bip01"},
               {"Bip01 Spine", "Bip01 Pelvis"},
               {"Bip01 Neck", "Bip01 Spine"},
               {"Bip01 Head", "Bip01 Neck"},
               {"Bip01 L UpperArm", "Bip01 Neck"},
               {"Bip01 L Forearm", "Bip01 L UpperArm"},
               {"Bip01 L Hand", "Bip01 L Forearm"},
               {"Bip01 R UpperArm", "Bip01 Neck"},
               {"Bip01 R Forearm", "Bip01 R UpperArm"},
               {"Bip01 R Hand", "Bip01 R Forearm"},
               {"Bip01 L Thigh", "Bip01 Pelvis"},
               {"Bip01 L Calf", "Bip01 L Thigh"},
               {"Bip01 L Foot", "Bip01 L Calf"},
               {"Bip01 R Thigh", "Bip01 Pelvis"},
               {"Bip01 R Calf", "Bip01 R Thigh"},
               {"Bip01 R Foot", "Bip01 R Calf"}});
}

const char* kBipedMap = R"({
  "hips": "Bip01 Pelvis", "spine": "Bip01 Spine", "neck": "Bip01 Neck", "head": "Bip01 Head",
  "leftUpperArm": "Bip01 L UpperArm", "leftLowerArm": "Bip01 L Forearm",
  "leftHand": "Bip01 L Hand", "rightUpperArm": "Bip01 R UpperArm",
  "rightLowerArm": "Bip01 R Forearm", "rightHand": "Bip01 R Hand",
  "leftUpperLeg": "Bip01 L Thigh", "leftLowerLeg": "Bip01 L Calf", "leftFoot": "Bip01 L Foot",
  "rightUpperLeg": "Bip01 R Thigh", "rightLowerLeg": "Bip01 R Calf", "rightFoot": "Bip01 R Foot"
})";

std::string with(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST(HumanoidMapFile, ReadsBoneToJointNames) {
  const Skeleton s = biped();
  const std::string path = ::testing::TempDir() + "/kinema_biped_map.json";
  std::ofstream(path) << kBipedMap;
  const Humanoid h = read_humanoid_map(path, s);
  EXPECT_EQ(h.bones.size(), 16u);
  EXPECT_EQ(h.find("hips"), s.find("Bip01 Pelvis"));
  EXPECT_EQ(h.find("leftLowerLeg"), s.find("Bip01 L Calf"));
  EXPECT_EQ(h.find("chest"), -1);
  // A job's --map wins over the asset's own map.
  Asset a;
  a.skeleton = s;
  a.humanoid = Humanoid{{{"hips", 1}}};
  EXPECT_EQ(require_humanoid(a, "biped.fbx", path).bones, h.bones);
  EXPECT_EQ(require_humanoid(a, "biped.fbx").bones.size(), 1u) << "no map: the file's own";
  std::filesystem::remove(path);
}

TEST(HumanoidMapFile, AcceptsAHumanBonesObject) {
  const Skeleton s = biped();
  const Humanoid h =
      parse_humanoid_map(std::string("{\"humanBones\": ") + kBipedMap + "}", s, "map.json");
  EXPECT_EQ(h.find("rightFoot"), s.find("Bip01 R Foot"));
}

TEST(HumanoidMapFile, UnknownBoneNamesTheKeyAndTheNearestBones) {
  const std::string e = error_of([&] {
    parse_humanoid_map(with(kBipedMap, "\"leftFoot\"", "\"leftFeet\""), biped(), "map.json");
  });
  EXPECT_TRUE(has(e, "map.json:/leftFeet: \"leftFeet\" is not a VRM 1.0 humanoid bone")) << e;
  EXPECT_TRUE(has(e, "leftFoot")) << e;
}

TEST(HumanoidMapFile, MissingJointListsTheClosestJoints) {
  const std::string e = error_of([&] {
    parse_humanoid_map(with(kBipedMap, "Bip01 L Calf", "Bip01 L Shin"), biped(), "map.json");
  });
  EXPECT_TRUE(has(e, "map.json:/leftLowerLeg: no joint \"Bip01 L Shin\" in the skeleton")) << e;
  EXPECT_TRUE(has(e, "(closest: Bip01 L Calf, ")) << e;
}

TEST(HumanoidMapFile, DuplicateJointNamesBothBones) {
  const std::string e = error_of([&] {
    parse_humanoid_map(with(kBipedMap, "\"Bip01 R Foot\"", "\"Bip01 L Foot\""), biped(),
                       "map.json");
  });
  EXPECT_TRUE(has(e, "/rightFoot: joint \"Bip01 L Foot\" is already leftFoot")) << e;
}

TEST(HumanoidMapFile, MissingRequiredBonesAreListed) {
  const std::string e = error_of([&] {
    parse_humanoid_map(R"({"hips": "Bip01 Pelvis", "head": "Bip01 Head"})", biped(), "map.json");
  });
  EXPECT_TRUE(has(e, "map.json:/: the map lacks required bones: spine, leftUpperArm")) << e;
}

TEST(HumanoidMapFile, MalformedTruncatedAndWrongTypes) {
  const Skeleton s = biped();
  const std::string text = kBipedMap;
  const std::string truncated =
      error_of([&] { parse_humanoid_map(text.substr(0, text.size() / 2), s, "map.json"); });
  EXPECT_TRUE(has(truncated, "map.json:byte ")) << truncated;
  EXPECT_TRUE(has(truncated, "malformed JSON")) << truncated;
  const std::string malformed =
      error_of([&] { parse_humanoid_map("{\"hips\": Bip01}", s, "map.json"); });
  EXPECT_TRUE(has(malformed, "malformed JSON")) << malformed;
  const std::string array = error_of([&] { parse_humanoid_map("[]", s, "map.json"); });
  EXPECT_TRUE(has(array, "map.json:/: a humanoid map is a JSON object")) << array;
  const std::string number =
      error_of([&] { parse_humanoid_map(with(kBipedMap, "\"Bip01 Head\"", "4"), s, "map.json"); });
  EXPECT_TRUE(has(number, "/head: expected the joint's name as a string, got number")) << number;
  const std::string missing_file = error_of([&] { read_humanoid_map("/no/such/map.json", s); });
  EXPECT_TRUE(has(missing_file, "/no/such/map.json")) << missing_file;
}

// ---- real rigs ------------------------------------------------------------------------------

struct RealRig {
  const char* file;
  const char* scheme;
  size_t bone_count;
  std::map<std::string, std::string> bones;  // bones that must map so
};

// Every humanoid rig under tests/data maps as it always has (bone counts and joints recorded
// with the name guesser this one replaces), in the scheme it is.
TEST(HumanoidRealRigs, TestDataRigsMap) {
  const std::vector<RealRig> rigs = {
      {"bvh/cmu_cgspeed_mb/02_01.bvh",
       "CMU / MotionBuilder",
       24,
       {{"hips", "Hips"},
        {"spine", "LowerBack"},
        {"chest", "Spine"},
        {"upperChest", "Spine1"},
        {"neck", "Neck"},
        {"leftLowerLeg", "LeftLeg"},
        {"rightToes", "RightToeBase"},
        {"leftIndexProximal", "LeftHandIndex1"}}},
      {"bvh/cmu_iclone_cc3/007_12.bvh",
       "Reallusion CC",
       54,
       {{"hips", "CC_Base_Hip"},
        {"spine", "CC_Base_Waist"},
        {"upperChest", "CC_Base_Spine02"},
        {"neck", "CC_Base_NeckTwist01"},
        {"leftUpperArm", "CC_Base_L_Upperarm"},
        {"leftLowerArm", "CC_Base_L_Forearm"},
        {"rightLowerLeg", "CC_Base_R_Calf"},
        {"leftToes", "CC_Base_L_ToeBase"},
        {"leftEye", "CC_Base_L_Eye"},
        {"leftThumbMetacarpal", "CC_Base_L_Thumb1"},
        {"rightLittleDistal", "CC_Base_R_Pinky3"}}},
      {"bvh/cmu_iclone_cc3/006_11_turn_30fps.bvh", "Reallusion CC", 54, {}},
      {"collada/ozz_pab/walk.dae",
       "CMU / MotionBuilder",
       47,
       {{"hips", "Hips"},
        {"spine", "Pelvis"},
        {"upperChest", "Spine3"},
        {"leftHand", "Lefthand"},
        {"rightLittleIntermediate", "RightHandPinky2"}}},
      {"fbx/ozz_pab/walk.fbx", "CMU / MotionBuilder", 47, {{"leftHand", "Lefthand"}}},
      {"fbx/ozz_pab/run.fbx", "CMU / MotionBuilder", 47, {{"rightFoot", "RightFoot"}}},
  };
  for (const RealRig& r : rigs) {
    SCOPED_TRACE(r.file);
    const Asset a = load_asset(kData + "/" + r.file);
    const HumanoidGuess g = recognize_humanoid(a.skeleton);
    ASSERT_TRUE(g.complete()) << g.missing.front();
    EXPECT_EQ(g.scheme, r.scheme);
    EXPECT_EQ(g.map.bones.size(), r.bone_count);
    for (const auto& [bone, joint] : r.bones) {
      const int j = g.map.find(bone);
      EXPECT_EQ(j < 0 ? "-" : a.skeleton.joint(j).name, joint) << bone;
    }
  }
}

// The VRMs carry their own maps: the names alone give the same joint for every bone they find.
TEST(HumanoidRealRigs, NamesAgreeWithTheVrmsOwnMaps) {
  for (const char* file : {"vrm/debug_robot.vrm", "vrm/Godette_vrm_v4.vrm"}) {
    SCOPED_TRACE(file);
    const Asset a = load_asset(kData + "/" + file);
    ASSERT_TRUE(a.humanoid.has_value());
    const HumanoidGuess g = recognize_humanoid(a.skeleton);
    EXPECT_TRUE(g.complete());
    EXPECT_GE(g.map.bones.size(), 19u) << "body, shoulders and toes at least";
    for (const auto& [bone, joint] : g.map.bones)
      EXPECT_EQ(a.humanoid->find(bone), joint) << bone << " " << a.skeleton.joint(joint).name;
  }
  // The debug robot's names cover all of its 53 bones, VRM 0.x thumb words included.
  const Asset robot = load_asset(kData + "/vrm/debug_robot.vrm");
  EXPECT_EQ(recognize_humanoid(robot.skeleton).map.bones.size(), robot.humanoid->bones.size());
}

TEST(HumanoidRealRigs, NonHumanoidsDoNotMap) {
  for (const char* file : {"gltf/RiggedFigure.glb", "gltf/greenman.glb", "gltf/rigged_simple.gltf",
                           "fbx/assimp/huesitos.fbx", "fbx/assimp/animation_with_skeleton.fbx"}) {
    SCOPED_TRACE(file);
    const HumanoidGuess g = recognize_humanoid(load_asset(kData + "/" + file).skeleton);
    EXPECT_FALSE(g.complete());
    EXPECT_EQ(g.scheme, "");
  }
}

}  // namespace
}  // namespace kinema
