// FBX writing through assimp: a skinned FBX, a skinned glTF and a BVH written as FBX and read
// back by kinema's assimp reader keep every joint's rest position (within 1e-4 m: the file
// stores floats in centimetres) and the meshes; save_asset picks the writer by extension; bad
// input writes nothing. The clips are checked with Blender (scripts/check_fbx_with_blender.sh):
// assimp 5.2's importer reads no take from the files its own exporter writes, so kinema's reader
// cannot check them (worst_joint_distance compares the clips both sides have).
//
// FbxClientFiles also writes, into $KINEMA_FBX_CHECK_DIR when set
// (scripts/check_fbx_with_blender.sh), the FBX files and kinema's evaluated joint positions.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kinema/clip/clip.h"
#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/io/assimp_import.h"
#include "kinema/io/fbx.h"
#include "test_paths.h"

namespace kinema {
namespace {

const std::string kData = test_paths::data_dir();

std::string temp_dir() {
  const auto dir =
      std::filesystem::temp_directory_path() /
      ("kinema_fbx_write_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
       "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::create_directories(dir);
  return dir.string();
}

/// Largest distance between same-named joints of `a` and `b` over every frame of every clip
/// (clip c of a against clip c of b, at a's frame rate); the rest pose when there is no clip.
double worst_joint_distance(const Asset& a, const Asset& b) {
  double worst = 0;
  int compared = 0;
  auto compare = [&](const std::vector<Mat4>& ma, const std::vector<Mat4>& mb) {
    for (int j = 0; j < a.skeleton.joint_count(); ++j) {
      const int k = b.skeleton.find(a.skeleton.joint(j).name);
      if (k < 0) continue;
      worst = std::max(worst, length(ma[static_cast<size_t>(j)].translation_part() -
                                     mb[static_cast<size_t>(k)].translation_part()));
      ++compared;
    }
  };
  compare(rest_model_matrices(a.skeleton), rest_model_matrices(b.skeleton));
  for (size_t c = 0; c < a.clips.size() && c < b.clips.size(); ++c) {
    const double rate = sample_rate_or(a.clips[c]);
    for (int f = 0; f / rate <= a.clips[c].duration + 1e-9; ++f)
      compare(sample_model_pose(a.clips[c], a.skeleton, f / rate),
              sample_model_pose(b.clips[c], b.skeleton, f / rate));
  }
  EXPECT_GT(compared, 0) << "no joint names in common";
  return worst;
}

TEST(FbxWrite, SkinnedFbxRoundTripKeepsJointsAndMeshes) {
  const Asset a = read_with_assimp(kData + "/fbx/assimp/huesitos.fbx");
  const std::string out = temp_dir() + "/huesitos.fbx";
  write_fbx(a, out);
  const Asset b = read_with_assimp(out);
  EXPECT_EQ(b.source.unit_name, "cm");
  EXPECT_LT(worst_joint_distance(a, b), 1e-4);
  ASSERT_EQ(b.meshes.size(), a.meshes.size());
  for (size_t m = 0; m < a.meshes.size(); ++m) {
    EXPECT_EQ(b.meshes[m].vertex_count(), a.meshes[m].vertex_count());
    EXPECT_EQ(b.meshes[m].indices.size(), a.meshes[m].indices.size());
    EXPECT_GE(b.meshes[m].skin, 0);
  }
}

TEST(FbxWrite, SkinnedGltfRoundTripKeepsJointsAndVertices) {
  const Asset a = load_asset(kData + "/gltf/greenman.glb");
  ASSERT_EQ(a.clips.size(), 4u);
  const std::string out = temp_dir() + "/greenman.fbx";
  save_asset(a, out);  // by extension
  const Asset b = read_with_assimp(out);
  EXPECT_LT(worst_joint_distance(a, b), 1e-4);
  // Skinned vertices land where kinema put them (centimetres there, metres back); the reader
  // may merge or reorder vertices, so the bounds are compared.
  ASSERT_FALSE(b.meshes.empty());
  auto bounds = [](const Mesh& m) {
    Vec3 lo{1e9, 1e9, 1e9}, hi{-1e9, -1e9, -1e9};
    for (const Vec3f& p : m.positions) {
      lo = {std::min(lo.x, double(p.x)), std::min(lo.y, double(p.y)), std::min(lo.z, double(p.z))};
      hi = {std::max(hi.x, double(p.x)), std::max(hi.y, double(p.y)), std::max(hi.z, double(p.z))};
    }
    return std::pair{lo, hi};
  };
  const auto [alo, ahi] = bounds(a.meshes[0]);
  const auto [blo, bhi] = bounds(b.meshes[0]);
  EXPECT_LT(length(alo - blo) + length(ahi - bhi), 1e-4);
}

TEST(FbxWrite, BvhSkeletonRoundTrips) {
  const Asset a = load_asset(kData + "/bvh/cmu_cgspeed_mb/02_01.bvh");
  ASSERT_FALSE(a.clips.empty());
  const std::string out = temp_dir() + "/walk.fbx";
  write_fbx(a, out);
  const Asset b = read_with_assimp(out);
  EXPECT_LT(worst_joint_distance(a, b), 1e-4);
}

TEST(FbxWrite, BadInputWritesNothing) {
  Asset a = read_with_assimp(kData + "/fbx/assimp/huesitos.fbx");
  const std::string out = temp_dir() + "/bad.fbx";
  EXPECT_THROW(write_fbx(a, out, {.clips = {7}}), Error);
  EXPECT_FALSE(std::filesystem::exists(out));
  a.clips[0].tracks[1].rotation.values[0].y = std::nan("");
  try {
    write_fbx(a, out);
    ADD_FAILURE() << "a NaN key was written";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("joint 1"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(out));
}

/// kinema's model-space joint positions of `clip` at `times`, keyed by joint name.
nlohmann::json joint_positions(const Asset& a, const Clip& clip, const std::vector<double>& times) {
  nlohmann::json report{{"times", times}, {"samples", nlohmann::json::array()}};
  for (double t : times) {
    nlohmann::json positions;
    const std::vector<Mat4> model = sample_model_pose(clip, a.skeleton, t);
    for (int j = 0; j < a.skeleton.joint_count(); ++j) {
      const Vec3 p = model[static_cast<size_t>(j)].translation_part();
      positions[a.skeleton.joint(j).name] = {p.x, p.y, p.z};
    }
    report["samples"].push_back({{"time", t}, {"positions", positions}});
  }
  return report;
}

// The Blender check's files (see the top of this file): a skinned glTF character, a skinned FBX
// and a BVH walk written as FBX, each with kinema's joint positions at five frames of its first
// clip.
TEST(FbxClientFiles, WritesFilesAndKinemasJointPositions) {
  const char* dir_env = std::getenv("KINEMA_FBX_CHECK_DIR");
  const std::string dir = dir_env ? dir_env : temp_dir();
  const std::pair<const char*, std::string> inputs[] = {
      {"greenman", kData + "/gltf/greenman.glb"},
      {"huesitos", kData + "/fbx/assimp/huesitos.fbx"},
      {"walk_02_01", kData + "/bvh/cmu_cgspeed_mb/02_01.bvh"}};
  for (const auto& [name, file] : inputs) {
    Asset a = load_asset(file);
    ASSERT_FALSE(a.clips.empty()) << name;
    a.clips.resize(1);
    const Clip& clip = a.clips[0];
    const double rate = sample_rate_or(clip);
    const double last = std::floor(clip.duration * rate + 1e-9);
    std::vector<double> times;
    for (int k = 0; k < 5; ++k) times.push_back(std::round(last * k / 4) / rate);
    write_fbx(a, dir + "/" + name + ".fbx");
    std::ofstream(dir + "/" + name + ".kinema.json") << joint_positions(a, clip, times).dump(1);
    EXPECT_LT(worst_joint_distance(a, read_with_assimp(dir + "/" + name + ".fbx")), 1e-4) << name;
  }
}

}  // namespace
}  // namespace kinema
