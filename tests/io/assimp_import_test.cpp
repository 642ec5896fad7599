// FBX and Collada import through assimp: the pab walk in both forms, skinned assimp test models,
// units/axes conversion and hostile input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include "kinema/clip/clip.h"
#include "kinema/core/error.h"
#include "kinema/io/assimp_import.h"
#include "kinema/skeleton/skeleton.h"
#include "test_paths.h"

namespace kinema {
namespace {

std::string data(const std::string& rel) { return test_paths::data_dir() + "/" + rel; }

std::string scratch_dir() {
  const auto dir =
      std::filesystem::temp_directory_path() / ("kinema_assimp_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir.string();
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<Mat4> model_at(const Asset& a, const Clip& clip, double t) {
  return sample_model_pose(clip, a.skeleton, t);
}

bool is_camera_or_light(const std::string& name) {
  return name.rfind("Camera", 0) == 0 || name.rfind("Sky", 0) == 0;
}

// ---- the pab walk in two forms -------------------------------------------------------------

TEST(Assimp, PabWalkFbxSourceInfo) {
  const Asset a = read_with_assimp(data("fbx/ozz_pab/walk.fbx"));
  EXPECT_EQ(a.source.format, "fbx");
  EXPECT_DOUBLE_EQ(a.source.unit_in_meters, 0.01);
  EXPECT_EQ(a.source.unit_name, "cm");
  EXPECT_EQ(a.source.up_axis, "+Y");
  EXPECT_NE(a.source.generator.find("FBX SDK"), std::string::npos);
  // 76 nodes below assimp's RootNode (no $AssimpFbx$ pivot helpers).
  EXPECT_EQ(a.skeleton.joint_count(), 76);
  for (const auto& j : a.skeleton.joints())
    EXPECT_EQ(j.name.find("$AssimpFbx$"), std::string::npos);
  ASSERT_EQ(a.clips.size(), 1u);
  EXPECT_EQ(a.clips[0].name, "walk");
  EXPECT_NEAR(a.clips[0].duration, 40.0 / 30.0, 1e-9);
  EXPECT_DOUBLE_EQ(a.clips[0].sample_rate, 30.0);
  EXPECT_EQ(a.clips[0].frame_count(), 41);
  EXPECT_TRUE(a.meshes.empty());
  // Hips stand about a metre above the ground once converted from centimetres.
  const int hips = a.skeleton.find("Hips");
  ASSERT_GE(hips, 0);
  const std::vector<Mat4> rest = rest_model_matrices(a.skeleton);
  EXPECT_NEAR(rest[static_cast<size_t>(hips)].translation_part().y, 1.01359, 1e-4);
}

TEST(Assimp, PabWalkColladaSourceInfo) {
  const Asset a = read_with_assimp(data("collada/ozz_pab/walk.dae"));
  EXPECT_EQ(a.source.format, "collada");
  EXPECT_DOUBLE_EQ(a.source.unit_in_meters, 0.01);
  EXPECT_EQ(a.source.up_axis, "+Y");
  EXPECT_EQ(a.source.generator, "FBX COLLADA exporter");
  ASSERT_EQ(a.clips.size(), 1u);
  EXPECT_DOUBLE_EQ(a.clips[0].sample_rate, 30.0);
  // Animation only, like walk.fbx: no placeholder mesh is made up for the bones.
  EXPECT_TRUE(a.meshes.empty());
  const int hips = a.skeleton.find("Hips");
  ASSERT_GE(hips, 0);
  const std::vector<Mat4> rest = rest_model_matrices(a.skeleton);
  EXPECT_NEAR(rest[static_cast<size_t>(hips)].translation_part().y, 1.01359, 1e-4);
}

TEST(Assimp, PabWalkFbxAndColladaAgree) {
  const Asset fbx = read_with_assimp(data("fbx/ozz_pab/walk.fbx"));
  const Asset dae = read_with_assimp(data("collada/ozz_pab/walk.dae"));
  ASSERT_EQ(fbx.clips.size(), 1u);
  ASSERT_EQ(dae.clips.size(), 1u);
  // Joints of the character matched by name (the files differ in helper nodes; the cameras'
  // takes differ in length, so they are left out).
  std::vector<std::pair<int, int>> pairs;
  for (int j = 0; j < fbx.skeleton.joint_count(); ++j) {
    const std::string& name = fbx.skeleton.joint(j).name;
    if (is_camera_or_light(name)) continue;
    const int k = dae.skeleton.find(name);
    if (k >= 0) pairs.emplace_back(j, k);
  }
  EXPECT_GE(pairs.size(), 60u);
  // The character's take is 40 frames at 30 fps in both; the Collada clip is longer only
  // because one camera has more keys.
  const double duration = fbx.clips[0].duration;
  EXPECT_GE(dae.clips[0].duration, duration - 1e-6);
  double worst = 0;
  std::string worst_joint;
  const int samples = 241;  // 6 per frame, so keys and in-between times are both covered
  for (int s = 0; s < samples; ++s) {
    const double t = duration * s / (samples - 1);
    const std::vector<Mat4> a = model_at(fbx, fbx.clips[0], t);
    const std::vector<Mat4> b = model_at(dae, dae.clips[0], t);
    for (const auto& [j, k] : pairs) {
      const double d = distance(a[static_cast<size_t>(j)].translation_part(),
                                b[static_cast<size_t>(k)].translation_part());
      if (d > worst) {
        worst = d;
        worst_joint = fbx.skeleton.joint(j).name;
      }
    }
  }
  RecordProperty("max_error_m", std::to_string(worst));
  std::printf("pab walk FBX vs Collada: %zu joints, max model-space distance %.3g m (%s)\n",
              pairs.size(), worst, worst_joint.c_str());
  EXPECT_LT(worst, 1e-3) << "worst joint " << worst_joint;
}

TEST(Assimp, PabWalkBoneLengthsConstant) {
  // Rigid skeleton animation: a joint's distance to its parent is the length of its local
  // translation, constant over the clip. Two kinds of joints move on purpose in the source
  // (3ds Max Biped data; FBX and Collada agree on it): the "Bip01 Footsteps" helper, and the
  // thighs, whose translation keys relative to Spine vary by about 7 mm over the walk. For those
  // the distance must still equal the sampled translation length (nothing added by import).
  const auto moves_in_source = [](const std::string& name) {
    return name == "Bip01 Footsteps" || name == "LeftUpLeg" || name == "RightUpLeg";
  };
  for (const char* file : {"fbx/ozz_pab/walk.fbx", "collada/ozz_pab/walk.dae"}) {
    SCOPED_TRACE(file);
    const Asset a = read_with_assimp(data(file));
    const Clip& clip = a.clips.at(0);
    const int n = a.skeleton.joint_count();
    const std::vector<Mat4> first = model_at(a, clip, 0.0);
    double worst_rigid = 0, worst_translation = 0;
    for (int f = 1; f <= 80; ++f) {
      const double t = f / 60.0;
      std::vector<Transform> local(static_cast<size_t>(n));
      ASSERT_TRUE(sample_pose(clip, a.skeleton, t, WrapMode::Clamp, local));
      const std::vector<Mat4> m = model_at(a, clip, t);
      for (int j = 0; j < n; ++j) {
        const int p = a.skeleton.parent(j);
        if (p < 0 || is_camera_or_light(a.skeleton.joint(j).name)) continue;
        const auto len = [&](const std::vector<Mat4>& mm) {
          return distance(mm[static_cast<size_t>(j)].translation_part(),
                          mm[static_cast<size_t>(p)].translation_part());
        };
        worst_translation =
            std::max(worst_translation,
                     std::abs(len(m) - length(local[static_cast<size_t>(j)].translation)));
        if (!moves_in_source(a.skeleton.joint(j).name))
          worst_rigid = std::max(worst_rigid, std::abs(len(m) - len(first)));
      }
    }
    EXPECT_LT(worst_rigid, 1e-4);
    EXPECT_LT(worst_translation, 1e-6);
  }
}

// ---- skinned meshes ------------------------------------------------------------------------

void expect_valid_skinned_mesh(const Asset& a, const Mesh& mesh) {
  ASSERT_GE(mesh.skin, 0);
  const Skin& skin = a.skins.at(static_cast<size_t>(mesh.skin));
  ASSERT_EQ(skin.joints.size(), skin.inverse_bind.size());
  ASSERT_TRUE(mesh.influences == 4 || mesh.influences == 8);
  const size_t k = static_cast<size_t>(mesh.influences);
  ASSERT_EQ(mesh.joints.size(), mesh.vertex_count() * k);
  ASSERT_EQ(mesh.weights.size(), mesh.vertex_count() * k);
  EXPECT_EQ(mesh.normals.size(), mesh.vertex_count());
  EXPECT_EQ(mesh.indices.size() % 3, 0u);
  EXPECT_FALSE(mesh.indices.empty());
  for (uint32_t i : mesh.indices) ASSERT_LT(i, mesh.vertex_count());
  for (size_t v = 0; v < mesh.vertex_count(); ++v) {
    double sum = 0;
    for (size_t i = 0; i < k; ++i) {
      const float w = mesh.weights[v * k + i];
      EXPECT_GE(w, 0.0f);
      sum += w;
      ASSERT_LT(mesh.joints[v * k + i], skin.joints.size());
    }
    ASSERT_NEAR(sum, 1.0, 1e-5) << "vertex " << v;
  }
  for (size_t s = 0; s < skin.joints.size(); ++s) {
    const int j = skin.joints[s];
    ASSERT_GE(j, 0);
    ASSERT_LT(j, a.skeleton.joint_count());
    EXPECT_TRUE(a.skeleton.joint(j).inverse_bind.has_value()) << a.skeleton.joint(j).name;
  }
}

/// max over skin joints of |W_j · B_j⁻¹ − I| in the rest pose.
double rest_bind_mismatch(const Asset& a, const Skin& skin) {
  const std::vector<Mat4> rest = rest_model_matrices(a.skeleton);
  double worst = 0;
  for (size_t s = 0; s < skin.joints.size(); ++s) {
    const Mat4 m = rest[static_cast<size_t>(skin.joints[s])] * skin.inverse_bind[s];
    for (int i = 0; i < 16; ++i)
      worst = std::max(worst, std::abs(m.m[static_cast<size_t>(i)] -
                                       Mat4::identity().m[static_cast<size_t>(i)]));
  }
  return worst;
}

TEST(Assimp, HuesitosSkinnedMesh) {
  const Asset a = read_with_assimp(data("fbx/assimp/huesitos.fbx"));
  EXPECT_EQ(a.source.format, "fbx");
  EXPECT_NE(a.source.generator.find("Blender"), std::string::npos);
  ASSERT_EQ(a.meshes.size(), 1u);
  ASSERT_EQ(a.skins.size(), 1u);
  expect_valid_skinned_mesh(a, a.meshes[0]);
  EXPECT_EQ(a.skins[0].joints.size(), 9u);
  EXPECT_EQ(a.meshes[0].indices.size(), 120u * 3);
  ASSERT_EQ(a.clips.size(), 1u);
  EXPECT_EQ(a.clips[0].name, "Armature|Action");
  EXPECT_NEAR(a.clips[0].duration, 39.0 / 25.0, 1e-9);
  EXPECT_LT(rest_bind_mismatch(a, a.skins[0]), 1e-4);
}

TEST(Assimp, AnimationWithSkeletonSkinnedMesh) {
  const Asset a = read_with_assimp(data("fbx/assimp/animation_with_skeleton.fbx"));
  ASSERT_EQ(a.meshes.size(), 1u);
  ASSERT_EQ(a.skins.size(), 1u);
  expect_valid_skinned_mesh(a, a.meshes[0]);
  EXPECT_EQ(a.skins[0].joints.size(), 14u);  // Bone … Bone.013
  ASSERT_EQ(a.clips.size(), 1u);
  EXPECT_EQ(a.clips[0].name, "Armature|ArmatureAction");
  EXPECT_NEAR(a.clips[0].duration, 20.0 / 24.0, 1e-9);
  EXPECT_DOUBLE_EQ(a.clips[0].sample_rate, 24.0);
  // The file's rest pose is its bind pose except that Bone.005 is bent (and Bone.006 follows),
  // so W·B⁻¹ = I holds for every other joint and visibly fails for those two.
  const std::vector<Mat4> rest = rest_model_matrices(a.skeleton);
  const Skin& skin = a.skins[0];
  for (size_t s = 0; s < skin.joints.size(); ++s) {
    const std::string& name = a.skeleton.joint(skin.joints[s]).name;
    const Mat4 m = rest[static_cast<size_t>(skin.joints[s])] * skin.inverse_bind[s];
    double err = 0;
    for (int i = 0; i < 16; ++i)
      err = std::max(
          err, std::abs(m.m[static_cast<size_t>(i)] - Mat4::identity().m[static_cast<size_t>(i)]));
    if (name == "Bone.005" || name == "Bone.006")
      EXPECT_GT(err, 0.1) << name;
    else
      EXPECT_LT(err, 1e-4) << name;
  }
  // Rigid skeleton animation: bone lengths do not change over the clip.
  const std::vector<Mat4> first = model_at(a, a.clips[0], 0.0);
  for (int f = 1; f <= 20; ++f) {
    const std::vector<Mat4> m = model_at(a, a.clips[0], f / 24.0);
    for (int j : a.skins[0].joints) {
      const int p = a.skeleton.parent(j);
      if (p < 0) continue;
      const auto len = [&](const std::vector<Mat4>& mm) {
        return distance(mm[static_cast<size_t>(j)].translation_part(),
                        mm[static_cast<size_t>(p)].translation_part());
      };
      EXPECT_NEAR(len(m), len(first), 1e-5) << a.skeleton.joint(j).name << " frame " << f;
    }
  }
}

// ---- units and axes ------------------------------------------------------------------------

TEST(Assimp, ColladaZUpCentimetresConverted) {
  const std::string path = scratch_dir() + "/zup_cm.dae";
  write_bytes(path, R"(<?xml version="1.0" encoding="utf-8"?>
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
  <asset><unit name="centimeter" meter="0.01"/><up_axis>Z_UP</up_axis></asset>
  <library_visual_scenes>
    <visual_scene id="scene" name="scene">
      <node id="a" name="a" type="JOINT"><translate>0 0 100</translate>
        <node id="b" name="b" type="JOINT"><translate>0 -50 0</translate>
          <node id="c" name="c" type="JOINT"><translate>20 0 0</translate></node>
        </node>
      </node>
    </visual_scene>
  </library_visual_scenes>
  <scene><instance_visual_scene url="#scene"/></scene>
</COLLADA>
)");
  const Asset a = read_with_assimp(path);
  EXPECT_EQ(a.source.format, "collada");
  EXPECT_DOUBLE_EQ(a.source.unit_in_meters, 0.01);
  EXPECT_EQ(a.source.unit_name, "cm");
  EXPECT_EQ(a.source.up_axis, "+Z");
  const std::vector<Mat4> m = rest_model_matrices(a.skeleton);
  const auto pos = [&](const char* name) {
    const int j = a.skeleton.find(name);
    EXPECT_GE(j, 0) << name;
    return m[static_cast<size_t>(std::max(j, 0))].translation_part();
  };
  // Z up → Y up; the source's −Y (front view direction) becomes +Z; centimetres → metres.
  EXPECT_NEAR(distance(pos("a"), Vec3{0, 1, 0}), 0, 1e-12);
  EXPECT_NEAR(distance(pos("b"), Vec3{0, 1, 0.5}), 0, 1e-12);
  EXPECT_NEAR(distance(pos("c"), Vec3{0.2, 1, 0.5}), 0, 1e-12);
  // Locals are in metres too (not a scale at the root).
  const Joint& b = a.skeleton.joint(a.skeleton.find("b"));
  EXPECT_NEAR(distance(b.rest.translation, Vec3{0, 0, 0.5}), 0, 1e-12);
  EXPECT_NEAR(distance(b.rest.scale, Vec3{1, 1, 1}), 0, 1e-12);
}

// ---- errors and hostile input --------------------------------------------------------------

TEST(Assimp, MissingFileThrows) {
  const std::string path = scratch_dir() + "/does_not_exist.fbx";
  try {
    read_with_assimp(path);
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_NE(e.reason().find("no such file"), std::string::npos);
  }
}

TEST(Assimp, ZeroSizeFileThrows) {
  for (const char* name : {"/empty.fbx", "/empty.dae"}) {
    const std::string path = scratch_dir() + name;
    write_bytes(path, "");
    EXPECT_THROW(read_with_assimp(path), Error) << name;
  }
}

TEST(Assimp, RandomBytesThrow) {
  std::mt19937 rng(1234);
  for (int round = 0; round < 8; ++round) {
    std::string bytes(static_cast<size_t>(64 + round * 997), '\0');
    for (char& c : bytes) c = static_cast<char>(rng() & 0xff);
    if (round % 2 == 1) bytes.replace(0, 23, std::string("Kaydara FBX Binary  \0\x1a", 23));
    const std::string path = scratch_dir() + "/random" + std::to_string(round) + ".fbx";
    write_bytes(path, bytes);
    try {
      read_with_assimp(path);
      ADD_FAILURE() << "random bytes accepted, round " << round;
    } catch (const Error& e) {
      EXPECT_EQ(e.file(), path);
      EXPECT_FALSE(e.reason().empty());
    }
  }
}

TEST(Assimp, TruncatedFilesThrow) {
  for (const char* rel : {"fbx/assimp/huesitos.fbx", "collada/ozz_pab/walk.dae"}) {
    const std::string whole = read_bytes(data(rel));
    ASSERT_FALSE(whole.empty());
    const std::string ext = std::filesystem::path(rel).extension().string();
    for (double fraction : {0.001, 0.1, 0.37, 0.5, 0.9}) {
      const std::string path = scratch_dir() + "/truncated" + ext;
      write_bytes(path, whole.substr(0, static_cast<size_t>(whole.size() * fraction)));
      EXPECT_THROW(read_with_assimp(path), Error) << rel << " cut at " << fraction;
    }
  }
}

}  // namespace
}  // namespace kinema
