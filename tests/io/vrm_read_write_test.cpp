// VRM 0.x / 1.0: humanoid bone maps read with VRM 1.0 names, VRM 1.0 written (also from a
// VRM 0.x source, converting the bone names and keeping materials and their extensions).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "kinema/core/error.h"
#include "kinema/io/gltf.h"
// The private document type, to look at extensions kinema does not model.
#include "../../src/io/gltf_internal.h"
#include "test_paths.h"

namespace kinema {
namespace {

const std::string kVrm = test_paths::data_dir() + "/vrm/";

std::string temp_dir() {
  const auto dir =
      std::filesystem::temp_directory_path() /
      ("kinema_vrm_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
       ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::create_directories(dir);
  return dir.string();
}

std::string joint_name(const Asset& a, std::string_view bone) {
  const int j = a.humanoid->find(bone);
  return j < 0 ? std::string() : a.skeleton.joint(j).name;
}

TEST(Vrm, ReadsVrm1Humanoid) {
  const Asset a = read_gltf(kVrm + "debug_robot.vrm");
  EXPECT_EQ(a.source.format, "vrm1");
  EXPECT_EQ(a.source.forward_axis, "+Z");
  ASSERT_TRUE(a.humanoid.has_value());
  EXPECT_EQ(a.humanoid->bones.size(), 53u);
  for (const char* b :
       {"hips", "spine", "head", "leftUpperArm", "rightFoot", "leftThumbMetacarpal"})
    EXPECT_GE(a.humanoid->find(b), 0) << b;
  EXPECT_EQ(a.skeleton.joint_count(), 77);
}

TEST(Vrm, ReadsVrm0HumanoidWithVrm1Names) {
  const Asset a = read_gltf(kVrm + "Godette_vrm_v4.vrm");
  EXPECT_EQ(a.source.format, "vrm0");
  EXPECT_EQ(a.source.forward_axis, "-Z");
  ASSERT_TRUE(a.humanoid.has_value());
  EXPECT_EQ(a.humanoid->bones.size(), 45u);
  EXPECT_GE(a.humanoid->find("hips"), 0);
  // 0.x thumbs: Proximal → Metacarpal, Intermediate → Proximal.
  for (const auto& [bone, joint] : a.humanoid->bones) {
    EXPECT_EQ(bone.find("ThumbIntermediate"), std::string::npos);
    EXPECT_GE(joint, 0);
  }
  ASSERT_EQ(a.skins.size(), 1u);
  EXPECT_EQ(a.skins[0].joints.size(), 68u);
}

TEST(Vrm, Vrm0ToVrm1KeepsHumanoidAndMaterials) {
  const std::string dir = temp_dir();
  const Asset a = read_gltf(kVrm + "Godette_vrm_v4.vrm");
  write_gltf(a, dir + "/godette1.vrm", {});
  const Asset b = read_gltf(dir + "/godette1.vrm");
  EXPECT_EQ(b.source.format, "vrm1");
  ASSERT_TRUE(b.humanoid.has_value());
  ASSERT_EQ(a.humanoid->bones.size(), b.humanoid->bones.size());
  for (const auto& [bone, joint] : a.humanoid->bones)
    EXPECT_EQ(joint_name(a, bone), joint_name(b, bone)) << bone;
  const tinygltf::Model& ma = a.gltf->model;
  const tinygltf::Model& mb = b.gltf->model;
  EXPECT_EQ(ma.materials.size(), mb.materials.size());
  for (size_t i = 0; i < ma.materials.size(); ++i)
    for (const auto& [name, value] : ma.materials[i].extensions)
      EXPECT_TRUE(mb.materials[i].extensions.count(name)) << name;
  EXPECT_EQ(ma.images.size(), mb.images.size());
  EXPECT_FALSE(mb.extensions.count("VRM"));
  ASSERT_TRUE(mb.extensions.count("VRMC_vrm"));
  const auto& vrm = mb.extensions.at("VRMC_vrm");
  EXPECT_EQ(vrm.Get("specVersion").Get<std::string>(), "1.0");
  const auto& meta = vrm.Get("meta");
  EXPECT_TRUE(meta.Get("name").IsString());
  EXPECT_GE(meta.Get("authors").ArrayLen(), 1u);
  EXPECT_TRUE(meta.Get("licenseUrl").IsString());
  EXPECT_TRUE(std::count(mb.extensionsUsed.begin(), mb.extensionsUsed.end(), "VRMC_vrm"));
  EXPECT_FALSE(std::count(mb.extensionsUsed.begin(), mb.extensionsUsed.end(), "VRM"));
  // VRM 1.0 faces +Z: the 0.x avatar (facing −Z) is turned 180° about +Y at its roots, so the
  // left hand, at −X in 0.x (facing −Z), ends up at +X.
  const auto pa = rest_model_matrices(a.skeleton), pb = rest_model_matrices(b.skeleton);
  const double xa = pa[static_cast<size_t>(a.humanoid->find("leftHand"))].translation_part().x;
  const double xb = pb[static_cast<size_t>(b.humanoid->find("leftHand"))].translation_part().x;
  EXPECT_LT(xa, -0.1);
  EXPECT_NEAR(xb, -xa, 1e-6);
}

TEST(Vrm, Vrm1RoundTripKeepsExtension) {
  const std::string dir = temp_dir();
  const Asset a = read_gltf(kVrm + "debug_robot.vrm");
  write_gltf(a, dir + "/robot.vrm", {});
  const Asset b = read_gltf(dir + "/robot.vrm");
  EXPECT_EQ(b.source.format, "vrm1");
  EXPECT_EQ(a.humanoid->bones.size(), b.humanoid->bones.size());
  const auto& va = a.gltf->model.extensions.at("VRMC_vrm");
  const auto& vb = b.gltf->model.extensions.at("VRMC_vrm");
  EXPECT_EQ(va.Get("expressions").Keys(), vb.Get("expressions").Keys());
  EXPECT_EQ(va.Get("meta").Get("name").Get<std::string>(),
            vb.Get("meta").Get("name").Get<std::string>());
}

TEST(Vrm, WritingVrmWithoutHumanoidFails) {
  const std::string dir = temp_dir();
  const Asset a = read_gltf(test_paths::data_dir() + "/gltf/RiggedFigure.glb");
  try {
    write_gltf(a, dir + "/x.vrm", {});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("humanoid"), std::string::npos);
  }
  EXPECT_FALSE(std::filesystem::exists(dir + "/x.vrm"));
}

}  // namespace
}  // namespace kinema
