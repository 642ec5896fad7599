// glTF / GLB writing: round trips keep every joint's world position at every key time, fresh
// models (no source document) carry meshes, skins and morph targets, BVH-sourced skeletons
// write as skeleton + animation, and the source document's images and materials survive.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "kinema/clip/clip.h"
#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/io/bvh.h"
#include "kinema/io/gltf.h"
// The private document type, to compare what kinema does not model (materials, images).
#include "../../src/io/gltf_internal.h"
#include "test_paths.h"

namespace kinema {
namespace {

const std::string kData = test_paths::data_dir();

std::string temp_dir() {
  const auto dir =
      std::filesystem::temp_directory_path() /
      ("kinema_gltf_write_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
       "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::create_directories(dir);
  return dir.string();
}

std::vector<Vec3> world_positions(const Asset& a, int clip, double t) {
  const std::vector<Mat4> model =
      clip >= 0 ? sample_model_pose(a.clips[static_cast<size_t>(clip)], a.skeleton, t)
                : rest_model_matrices(a.skeleton);
  std::vector<Vec3> p;
  for (const auto& m : model) p.push_back(m.translation_part());
  return p;
}

std::vector<double> key_times(const Clip& c) {
  std::set<double> s{0.0, c.duration};
  for (const auto& t : c.tracks) {
    s.insert(t.translation.times.begin(), t.translation.times.end());
    s.insert(t.rotation.times.begin(), t.rotation.times.end());
    s.insert(t.scale.times.begin(), t.scale.times.end());
  }
  return {s.begin(), s.end()};
}

// Joints are matched by name; every clip, every key time, within `tol` metres.
void expect_same_motion(const Asset& a, const Asset& b, double tol) {
  ASSERT_EQ(a.skeleton.joint_count(), b.skeleton.joint_count());
  ASSERT_EQ(a.clips.size(), b.clips.size());
  for (int c = -1; c < static_cast<int>(a.clips.size()); ++c) {
    const auto times =
        c < 0 ? std::vector<double>{0.0} : key_times(a.clips[static_cast<size_t>(c)]);
    if (c >= 0) {
      EXPECT_EQ(a.clips[static_cast<size_t>(c)].name, b.clips[static_cast<size_t>(c)].name);
    }
    for (double t : times) {
      const auto pa = world_positions(a, c, t), pb = world_positions(b, c, t);
      for (int j = 0; j < a.skeleton.joint_count(); ++j) {
        const int k = b.skeleton.find(a.skeleton.joint(j).name);
        ASSERT_GE(k, 0) << a.skeleton.joint(j).name;
        ASSERT_LT(distance(pa[static_cast<size_t>(j)], pb[static_cast<size_t>(k)]), tol)
            << "clip " << c << " t " << t << " joint " << a.skeleton.joint(j).name;
      }
    }
  }
}

TEST(GltfWrite, RoundTripKeepsWorldPositionsAtEveryKey) {
  const std::string dir = temp_dir();
  for (const char* file : {"gltf/RiggedFigure.glb", "gltf/greenman.glb", "gltf/rigged_simple.gltf",
                           "gltf/interpolation_test.gltf", "gltf/AnimatedMorphCube.glb"}) {
    SCOPED_TRACE(file);
    const Asset a = read_gltf(kData + "/" + file);
    for (const char* out : {"/out.glb", "/out.gltf"}) {
      write_gltf(a, dir + out, {});
      const Asset b = read_gltf(dir + out);
      expect_same_motion(a, b, 1e-5);
      ASSERT_EQ(a.meshes.size(), b.meshes.size());
      for (size_t m = 0; m < a.meshes.size(); ++m) {
        EXPECT_EQ(a.meshes[m].vertex_count(), b.meshes[m].vertex_count());
        EXPECT_EQ(a.meshes[m].indices, b.meshes[m].indices);
        EXPECT_EQ(a.meshes[m].morph_targets.size(), b.meshes[m].morph_targets.size());
      }
      ASSERT_EQ(a.skins.size(), b.skins.size());
      for (size_t s = 0; s < a.skins.size(); ++s)
        for (size_t k = 0; k < a.skins[s].inverse_bind.size(); ++k)
          for (int i = 0; i < 16; ++i)
            EXPECT_NEAR(a.skins[s].inverse_bind[k].m[i], b.skins[s].inverse_bind[k].m[i], 1e-6);
      for (size_t c = 0; c < a.clips.size(); ++c)
        EXPECT_EQ(a.clips[c].morph_tracks.size(), b.clips[c].morph_tracks.size());
    }
  }
}

TEST(GltfWrite, KeepsInterpolationModes) {
  const std::string dir = temp_dir();
  const Asset a = read_gltf(kData + "/gltf/interpolation_test.gltf");
  write_gltf(a, dir + "/i.glb", {});
  const Asset b = read_gltf(dir + "/i.glb");
  ASSERT_EQ(a.clips.size(), b.clips.size());
  for (size_t c = 0; c < a.clips.size(); ++c)
    for (size_t j = 0; j < a.clips[c].tracks.size(); ++j) {
      const auto& ta = a.clips[c].tracks[j];
      const int k = b.skeleton.find(a.skeleton.joint(static_cast<int>(j)).name);
      const auto& tb = b.clips[c].tracks[static_cast<size_t>(k)];
      EXPECT_EQ(ta.translation.interpolation, tb.translation.interpolation);
      EXPECT_EQ(ta.rotation.interpolation, tb.rotation.interpolation);
      EXPECT_EQ(ta.scale.interpolation, tb.scale.interpolation);
      EXPECT_EQ(ta.rotation.values.size(), tb.rotation.values.size());
    }
}

// Without the source document the writer builds a fresh model from the asset.
TEST(GltfWrite, FreshModelCarriesMeshesSkinsAndMorphs) {
  const std::string dir = temp_dir();
  for (const char* file :
       {"gltf/RiggedFigure.glb", "gltf/AnimatedMorphCube.glb", "gltf/greenman.glb"}) {
    SCOPED_TRACE(file);
    Asset a = read_gltf(kData + "/" + file);
    a.gltf.reset();
    write_gltf(a, dir + "/fresh.gltf", {});
    const Asset b = read_gltf(dir + "/fresh.gltf");
    EXPECT_EQ(b.source.generator, "kinema");
    ASSERT_EQ(a.meshes.size(), b.meshes.size());
    // Every mesh gets a node of its own, so the fresh skeleton has one more joint per mesh.
    EXPECT_EQ(b.skeleton.joint_count(),
              a.skeleton.joint_count() + static_cast<int>(a.meshes.size()));
    for (size_t m = 0; m < a.meshes.size(); ++m) {
      const Mesh &ma = a.meshes[m], &mb = b.meshes[m];
      EXPECT_EQ(ma.indices, mb.indices);
      EXPECT_EQ(ma.positions.size(), mb.positions.size());
      EXPECT_EQ(ma.influences, mb.influences);
      EXPECT_EQ(ma.morph_targets.size(), mb.morph_targets.size());
      for (size_t t = 0; t < ma.morph_targets.size(); ++t)
        EXPECT_EQ(ma.morph_targets[t].name, mb.morph_targets[t].name);
      for (size_t v = 0; v < ma.weights.size(); ++v)
        ASSERT_NEAR(ma.weights[v], mb.weights[v], 1e-6);
    }
    ASSERT_EQ(a.skins.size(), b.skins.size());
    for (size_t s = 0; s < a.skins.size(); ++s)
      for (size_t k = 0; k < a.skins[s].joints.size(); ++k)
        EXPECT_EQ(a.skeleton.joint(a.skins[s].joints[k]).name,
                  b.skeleton.joint(b.skins[s].joints[k]).name);
    for (size_t c = 0; c < a.clips.size(); ++c) {
      EXPECT_EQ(a.clips[c].morph_tracks.size(), b.clips[c].morph_tracks.size());
      for (double t : key_times(a.clips[c])) {
        const auto pa = world_positions(a, static_cast<int>(c), t);
        const auto pb = world_positions(b, static_cast<int>(c), t);
        for (int j = 0; j < a.skeleton.joint_count(); ++j)
          ASSERT_LT(distance(pa[static_cast<size_t>(j)],
                             pb[static_cast<size_t>(b.skeleton.find(a.skeleton.joint(j).name))]),
                    1e-5);
      }
    }
  }
}

// BVH → glTF: skeleton and animation only (no mesh).
TEST(GltfWrite, BvhSkeletonAndAnimationOnly) {
  const std::string dir = temp_dir();
  const Asset a = read_bvh(kData + "/bvh/cmu_cgspeed_mb/02_01.bvh");
  write_gltf(a, dir + "/walk.glb", {});
  const Asset b = read_gltf(dir + "/walk.glb");
  EXPECT_TRUE(b.meshes.empty());
  ASSERT_EQ(b.clips.size(), 1u);
  EXPECT_NEAR(b.clips[0].duration, a.clips[0].duration, 1e-5);
  EXPECT_NEAR(b.clips[0].sample_rate, a.clips[0].sample_rate, 1e-2);
  for (double t : {0.0, 0.5, 1.0, a.clips[0].duration}) {
    const auto pa = world_positions(a, 0, t), pb = world_positions(b, 0, t);
    for (int j = 0; j < a.skeleton.joint_count(); ++j)
      ASSERT_LT(distance(pa[static_cast<size_t>(j)],
                         pb[static_cast<size_t>(b.skeleton.find(a.skeleton.joint(j).name))]),
                1e-5);
  }
}

TEST(GltfWrite, KeepsImagesMaterialsAndExtensions) {
  const std::string dir = temp_dir();
  const Asset a = read_gltf(kData + "/vrm/Godette_vrm_v4.vrm");
  write_gltf(a, dir + "/g.glb", {});
  const Asset b = read_gltf(dir + "/g.glb");
  ASSERT_TRUE(a.gltf && b.gltf);
  const tinygltf::Model& ma = a.gltf->model;
  const tinygltf::Model& mb = b.gltf->model;
  EXPECT_EQ(ma.materials.size(), mb.materials.size());
  EXPECT_EQ(ma.textures.size(), mb.textures.size());
  ASSERT_EQ(ma.images.size(), mb.images.size());
  // Image bytes are kept exactly (never decoded and re-encoded).
  auto image_bytes = [](const tinygltf::Model& m, const tinygltf::Image& img) {
    const auto& bv = m.bufferViews.at(static_cast<size_t>(img.bufferView));
    const auto& d = m.buffers.at(static_cast<size_t>(bv.buffer)).data;
    return std::vector<unsigned char>(d.begin() + static_cast<long>(bv.byteOffset),
                                      d.begin() + static_cast<long>(bv.byteOffset + bv.byteLength));
  };
  for (size_t i = 0; i < ma.images.size(); ++i) {
    EXPECT_EQ(ma.images[i].mimeType, mb.images[i].mimeType);
    EXPECT_EQ(image_bytes(ma, ma.images[i]), image_bytes(mb, mb.images[i]));
  }
  for (size_t i = 0; i < ma.materials.size(); ++i) {
    EXPECT_EQ(ma.materials[i].name, mb.materials[i].name);
    EXPECT_EQ(ma.materials[i].extensions.size(), mb.materials[i].extensions.size());
  }
  EXPECT_EQ(ma.extensionsUsed, mb.extensionsUsed);
  EXPECT_TRUE(mb.extensions.count("VRM"));
  EXPECT_EQ(b.source.format, "vrm0");  // plain glTF output keeps the VRM 0.x extension
  EXPECT_EQ(a.humanoid->bones, b.humanoid->bones);
  EXPECT_EQ(a.meshes.size(), b.meshes.size());
}

TEST(GltfWrite, ClipSelectionAndBadClip) {
  const std::string dir = temp_dir();
  const Asset a = read_gltf(kData + "/gltf/greenman.glb");
  ASSERT_EQ(a.clips.size(), 4u);
  GltfWriteOptions o;
  o.clips = {2};
  write_gltf(a, dir + "/one.glb", o);
  const Asset b = read_gltf(dir + "/one.glb");
  ASSERT_EQ(b.clips.size(), 1u);
  EXPECT_EQ(b.clips[0].name, a.clips[2].name);
  o.clips = {9};
  EXPECT_THROW(write_gltf(a, dir + "/bad.glb", o), Error);
  EXPECT_FALSE(std::filesystem::exists(dir + "/bad.glb"));
}

}  // namespace
}  // namespace kinema
