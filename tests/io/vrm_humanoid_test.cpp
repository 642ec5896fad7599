// Humanoid bone maps guessed from joint names, and humanoid retargeting (a CMU walk onto a
// VRM 1.0 avatar).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "kinema/core/error.h"
#include "kinema/io/bvh.h"
#include "kinema/io/gltf.h"
#include "kinema/retarget/humanoid.h"
#include "kinema/retarget/retarget.h"
#include "test_paths.h"

namespace kinema {
namespace {

const std::string kData = test_paths::data_dir();

// A skeleton from (name, parent name) pairs, each joint 10 cm above its parent.
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

std::string bone_joint(const Skeleton& s, const Humanoid& h, const char* bone) {
  const int j = h.find(bone);
  return j < 0 ? std::string("-") : s.joint(j).name;
}

TEST(Humanoid, GuessesCmuCgspeedNames) {
  std::vector<std::pair<std::string, std::string>> spec = {
      {"Hips", ""},        {"LowerBack", "Hips"}, {"Spine", "LowerBack"},
      {"Spine1", "Spine"}, {"Neck", "Spine1"},    {"Neck1", "Neck"},
      {"Head", "Neck1"},   {"LHipJoint", "Hips"}, {"RHipJoint", "Hips"}};
  for (const std::string side : {"Left", "Right"}) {
    const std::string hip = side == "Left" ? "LHipJoint" : "RHipJoint";
    spec.insert(spec.end(), {{side + "UpLeg", hip},
                             {side + "Leg", side + "UpLeg"},
                             {side + "Foot", side + "Leg"},
                             {side + "ToeBase", side + "Foot"},
                             {side + "Shoulder", "Spine1"},
                             {side + "Arm", side + "Shoulder"},
                             {side + "ForeArm", side + "Arm"},
                             {side + "Hand", side + "ForeArm"},
                             {side + "HandIndex1", side + "Hand"}});
  }
  const Skeleton s = make(spec);
  const auto h = guess_humanoid(s);
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(bone_joint(s, *h, "hips"), "Hips");
  EXPECT_EQ(bone_joint(s, *h, "spine"), "LowerBack");
  EXPECT_EQ(bone_joint(s, *h, "chest"), "Spine");
  EXPECT_EQ(bone_joint(s, *h, "upperChest"), "Spine1");
  EXPECT_EQ(bone_joint(s, *h, "neck"), "Neck");
  EXPECT_EQ(bone_joint(s, *h, "head"), "Head");
  EXPECT_EQ(bone_joint(s, *h, "leftShoulder"), "LeftShoulder");
  EXPECT_EQ(bone_joint(s, *h, "leftUpperArm"), "LeftArm");
  EXPECT_EQ(bone_joint(s, *h, "leftLowerArm"), "LeftForeArm");
  EXPECT_EQ(bone_joint(s, *h, "rightHand"), "RightHand");
  EXPECT_EQ(bone_joint(s, *h, "leftUpperLeg"), "LeftUpLeg");
  EXPECT_EQ(bone_joint(s, *h, "leftLowerLeg"), "LeftLeg");
  EXPECT_EQ(bone_joint(s, *h, "rightFoot"), "RightFoot");
  EXPECT_EQ(bone_joint(s, *h, "rightToes"), "RightToeBase");
  EXPECT_EQ(bone_joint(s, *h, "leftIndexProximal"), "LeftHandIndex1");
}

TEST(Humanoid, GuessesDazMixamoCcAndVroidNames) {
  struct Scheme {
    std::string hips, spine1, spine2, neck, head;
    std::string shoulder, upper_arm, lower_arm, hand, upper_leg, lower_leg, foot;  // with {s}
    std::string left, right;
  };
  const std::vector<Scheme> schemes = {
      {"hip", "abdomen", "chest", "neck", "head", "{s}Collar", "{s}Shldr", "{s}ForeArm", "{s}Hand",
       "{s}Thigh", "{s}Shin", "{s}Foot", "l", "r"},
      {"mixamorig:Hips", "mixamorig:Spine", "mixamorig:Spine1", "mixamorig:Neck", "mixamorig:Head",
       "mixamorig:{s}Shoulder", "mixamorig:{s}Arm", "mixamorig:{s}ForeArm", "mixamorig:{s}Hand",
       "mixamorig:{s}UpLeg", "mixamorig:{s}Leg", "mixamorig:{s}Foot", "Left", "Right"},
      {"CC_Base_Hip", "CC_Base_Waist", "CC_Base_Spine01", "CC_Base_NeckTwist01", "CC_Base_Head",
       "CC_Base_{s}_Clavicle", "CC_Base_{s}_Upperarm", "CC_Base_{s}_Forearm", "CC_Base_{s}_Hand",
       "CC_Base_{s}_Thigh", "CC_Base_{s}_Calf", "CC_Base_{s}_Foot", "L", "R"},
      {"J_Bip_C_Hips", "J_Bip_C_Spine", "J_Bip_C_Chest", "J_Bip_C_Neck", "J_Bip_C_Head",
       "J_Bip_{s}_Shoulder", "J_Bip_{s}_UpperArm", "J_Bip_{s}_LowerArm", "J_Bip_{s}_Hand",
       "J_Bip_{s}_UpperLeg", "J_Bip_{s}_LowerLeg", "J_Bip_{s}_Foot", "L", "R"},
      {"hips", "spine", "chest", "neck", "head", "{s}Shoulder", "{s}UpperArm", "{s}LowerArm",
       "{s}Hand", "{s}UpperLeg", "{s}LowerLeg", "{s}Foot", "left", "right"},
  };
  for (const auto& sc : schemes) {
    SCOPED_TRACE(sc.hips);
    auto sub = [](std::string pattern, const std::string& side) {
      pattern.replace(pattern.find("{s}"), 3, side);
      return pattern;
    };
    std::vector<std::pair<std::string, std::string>> spec = {{sc.hips, ""},
                                                             {sc.spine1, sc.hips},
                                                             {sc.spine2, sc.spine1},
                                                             {sc.neck, sc.spine2},
                                                             {sc.head, sc.neck}};
    for (const std::string& side : {sc.left, sc.right}) {
      spec.push_back({sub(sc.shoulder, side), sc.spine2});
      spec.push_back({sub(sc.upper_arm, side), sub(sc.shoulder, side)});
      spec.push_back({sub(sc.lower_arm, side), sub(sc.upper_arm, side)});
      spec.push_back({sub(sc.hand, side), sub(sc.lower_arm, side)});
      spec.push_back({sub(sc.upper_leg, side), sc.hips});
      spec.push_back({sub(sc.lower_leg, side), sub(sc.upper_leg, side)});
      spec.push_back({sub(sc.foot, side), sub(sc.lower_leg, side)});
    }
    const Skeleton s = make(spec);
    const auto h = guess_humanoid(s);
    ASSERT_TRUE(h.has_value());
    EXPECT_EQ(bone_joint(s, *h, "hips"), sc.hips);
    EXPECT_EQ(bone_joint(s, *h, "spine"), sc.spine1);
    EXPECT_EQ(bone_joint(s, *h, "chest"), sc.spine2);
    EXPECT_EQ(bone_joint(s, *h, "neck"), sc.neck);
    EXPECT_EQ(bone_joint(s, *h, "leftShoulder"), sub(sc.shoulder, sc.left));
    EXPECT_EQ(bone_joint(s, *h, "leftUpperArm"), sub(sc.upper_arm, sc.left));
    EXPECT_EQ(bone_joint(s, *h, "rightLowerArm"), sub(sc.lower_arm, sc.right));
    EXPECT_EQ(bone_joint(s, *h, "rightHand"), sub(sc.hand, sc.right));
    EXPECT_EQ(bone_joint(s, *h, "leftUpperLeg"), sub(sc.upper_leg, sc.left));
    EXPECT_EQ(bone_joint(s, *h, "rightLowerLeg"), sub(sc.lower_leg, sc.right));
    EXPECT_EQ(bone_joint(s, *h, "leftFoot"), sub(sc.foot, sc.left));
  }
}

TEST(Humanoid, NoGuessForNonHumanoid) {
  EXPECT_FALSE(guess_humanoid(make({{"root", ""}, {"a", "root"}, {"b", "a"}})).has_value());
  EXPECT_FALSE(guess_humanoid(read_gltf(kData + "/gltf/RiggedFigure.glb").skeleton).has_value());
}

TEST(Humanoid, RetargetsCmuWalkOntoVrmAvatar) {
  const Asset src = read_bvh(kData + "/bvh/cmu_cgspeed_mb/02_01.bvh");
  const Asset dst = read_gltf(kData + "/vrm/debug_robot.vrm");
  const Clip c = retarget_humanoid(src, 0, dst);
  EXPECT_NO_THROW(c.validate(dst.skeleton.joint_count()));
  EXPECT_NEAR(c.duration, src.clips[0].duration, 1e-9);
  EXPECT_EQ(c.tracks.size(), static_cast<size_t>(dst.skeleton.joint_count()));

  const int hips = dst.humanoid->find("hips");
  const int lf = dst.humanoid->find("leftFoot"), rf = dst.humanoid->find("rightFoot");
  const auto rest = rest_model_matrices(dst.skeleton);
  const double hip_h = rest[static_cast<size_t>(hips)].translation_part().y;
  const double foot_h = std::min(rest[static_cast<size_t>(lf)].translation_part().y,
                                 rest[static_cast<size_t>(rf)].translation_part().y);
  ASSERT_GT(hip_h, 0.3);

  std::vector<Transform> local(static_cast<size_t>(dst.skeleton.joint_count()));
  std::vector<Mat4> model(local.size());
  std::vector<Transform> slocal(static_cast<size_t>(src.skeleton.joint_count()));
  std::vector<Mat4> smodel(slocal.size());
  Vec3 start{}, end{}, sstart{}, send{};
  const int ships = src.skeleton.find("Hips");
  const int frames = 40;
  for (int f = 0; f <= frames; ++f) {
    const double t = c.duration * f / frames;
    ASSERT_TRUE(sample_pose(c, dst.skeleton, t, WrapMode::Clamp, local));
    ASSERT_TRUE(local_to_model(dst.skeleton.parents(), local, model));
    ASSERT_TRUE(sample_pose(src.clips[0], src.skeleton, t, WrapMode::Clamp, slocal));
    ASSERT_TRUE(local_to_model(src.skeleton.parents(), slocal, smodel));
    const Vec3 h = model[static_cast<size_t>(hips)].translation_part();
    const double l = model[static_cast<size_t>(lf)].translation_part().y;
    const double r = model[static_cast<size_t>(rf)].translation_part().y;
    // Feet stay near the floor: the lower foot within 12 cm of its rest height, neither foot
    // above the hips, and the hips within ±35 % of their rest height.
    EXPECT_NEAR(std::min(l, r), foot_h, 0.12) << "t " << t;
    EXPECT_LT(std::max(l, r), h.y) << "t " << t;
    EXPECT_NEAR(h.y, hip_h, 0.35 * hip_h) << "t " << t;
    if (f == 0) {
      start = h;
      sstart = smodel[static_cast<size_t>(ships)].translation_part();
    }
    if (f == frames) {
      end = h;
      send = smodel[static_cast<size_t>(ships)].translation_part();
    }
  }
  // The hips move forward the way the source walks, scaled by the hip-height ratio.
  Vec3 d = end - start, sd = send - sstart;
  d.y = sd.y = 0;
  EXPECT_GT(length(d), 0.5);
  EXPECT_GT(dot(normalize(d), normalize(sd)), 0.99);
}

}  // namespace
}  // namespace kinema
