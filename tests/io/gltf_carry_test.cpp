// What a glTF/VRM written from a glTF/VRM source carries through: new skin weights (as
// `kinema skin bake-weights` makes them) land in the file while materials, textures and
// extensions stay; a character whose clips were replaced (as retargeting does) keeps its document.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "kinema/io/gltf.h"
// The private document type, to compare what kinema does not model.
#include "../../src/io/gltf_internal.h"
#include "test_paths.h"

namespace kinema {
namespace {

const std::string kVrm = test_paths::data_dir() + "/vrm/";

std::string temp_dir() {
  const auto dir =
      std::filesystem::temp_directory_path() /
      ("kinema_gltf_carry_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
       "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::create_directories(dir);
  return dir.string();
}

/// Materials (with their extensions), images (byte for byte) and textures of `b` are `a`'s.
void expect_same_looks(const tinygltf::Model& a, const tinygltf::Model& b) {
  ASSERT_EQ(a.materials.size(), b.materials.size());
  for (size_t i = 0; i < a.materials.size(); ++i) {
    EXPECT_EQ(a.materials[i].name, b.materials[i].name);
    EXPECT_EQ(a.materials[i].extensions.size(), b.materials[i].extensions.size());
    for (const auto& [name, value] : a.materials[i].extensions) {
      ASSERT_TRUE(b.materials[i].extensions.count(name)) << name;
      EXPECT_TRUE(value == b.materials[i].extensions.at(name)) << "material " << i << " " << name;
    }
  }
  ASSERT_EQ(a.textures.size(), b.textures.size());
  ASSERT_EQ(a.images.size(), b.images.size());
  for (size_t i = 0; i < a.images.size(); ++i) {
    auto bytes = [](const tinygltf::Model& m, const tinygltf::Image& img) {
      const auto& v = m.bufferViews[static_cast<size_t>(img.bufferView)];
      const auto& data = m.buffers[static_cast<size_t>(v.buffer)].data;
      return std::vector<unsigned char>(
          data.begin() + static_cast<long>(v.byteOffset),
          data.begin() + static_cast<long>(v.byteOffset + v.byteLength));
    };
    ASSERT_GE(a.images[i].bufferView, 0);
    ASSERT_GE(b.images[i].bufferView, 0);
    EXPECT_EQ(bytes(a, a.images[i]), bytes(b, b.images[i])) << "image " << i;
  }
}

/// Moves every vertex's whole weight onto its strongest influence (a change of weights that
/// keeps the mesh valid), returning how many vertices changed.
size_t rigidify(Mesh& mesh) {
  const auto inf = static_cast<size_t>(mesh.influences);
  size_t changed = 0;
  for (size_t v = 0; v < mesh.vertex_count(); ++v) {
    float* w = &mesh.weights[v * inf];
    const size_t best = static_cast<size_t>(std::max_element(w, w + inf) - w);
    changed += w[best] < 1.f;
    for (size_t c = 0; c < inf; ++c) w[c] = c == best ? 1.f : 0.f;
  }
  return changed;
}

TEST(GltfCarry, NewSkinWeightsLandAndMaterialsTexturesExtensionsStay) {
  const Asset source = read_gltf(kVrm + "Godette_vrm_v4.vrm");
  Asset baked = source;
  size_t changed = 0;
  for (auto& mesh : baked.meshes)
    if (mesh.influences > 0) changed += rigidify(mesh);
  ASSERT_GT(changed, 0u);
  const std::string dir = temp_dir();
  for (const char* name : {"/baked.glb", "/baked.vrm"}) {
    write_gltf(baked, dir + name, {});
    const Asset back = read_gltf(dir + name);
    expect_same_looks(source.gltf->model, back.gltf->model);
    ASSERT_EQ(back.meshes.size(), baked.meshes.size());
    for (size_t m = 0; m < baked.meshes.size(); ++m) {
      ASSERT_EQ(back.meshes[m].influences, baked.meshes[m].influences) << m;
      const auto inf = static_cast<size_t>(baked.meshes[m].influences);
      for (size_t k = 0; k < baked.meshes[m].weights.size(); ++k) {
        ASSERT_NEAR(back.meshes[m].weights[k], baked.meshes[m].weights[k], 1e-6) << m;
        if (baked.meshes[m].weights[k] > 0) {  // the joint of a weighted influence is kept
          ASSERT_EQ(back.meshes[m].joints[k], baked.meshes[m].joints[k]) << m << " " << k / inf;
        }
      }
    }
  }
  // The .glb keeps the VRM 0.x extension as it was; the .vrm carries its VRM 1.0 migration.
  const Asset glb = read_gltf(dir + "/baked.glb");
  EXPECT_TRUE(glb.gltf->model.extensions.at("VRM") == source.gltf->model.extensions.at("VRM"));
  const Asset vrm = read_gltf(dir + "/baked.vrm");
  EXPECT_TRUE(vrm.gltf->model.extensions.count("VRMC_vrm"));
  EXPECT_TRUE(vrm.gltf->model.extensions.count("VRMC_springBone"));
}

TEST(GltfCarry, UnchangedWeightsKeepTheirAccessorsAsRead) {
  const Asset source = read_gltf(kVrm + "Godette_vrm_v4.vrm");
  const std::string out = temp_dir() + "/same.glb";
  write_gltf(source, out, {});
  const Asset back = read_gltf(out);
  for (size_t m = 0; m < source.meshes.size(); ++m) {
    const auto [gm, gp] = source.gltf->mesh_primitive[m];
    const auto& a =
        source.gltf->model.meshes[static_cast<size_t>(gm)].primitives[static_cast<size_t>(gp)];
    const auto& b =
        back.gltf->model.meshes[static_cast<size_t>(gm)].primitives[static_cast<size_t>(gp)];
    if (!a.attributes.count("JOINTS_0")) continue;
    // Same component type: the source's accessor went through untouched.
    EXPECT_EQ(
        source.gltf->model.accessors[static_cast<size_t>(a.attributes.at("JOINTS_0"))]
            .componentType,
        back.gltf->model.accessors[static_cast<size_t>(b.attributes.at("JOINTS_0"))].componentType);
    EXPECT_EQ(back.meshes[m].weights, source.meshes[m].weights);
  }
}

TEST(GltfCarry, ReplacedClipsKeepTheSourceDocument) {
  // Retargeting hands the writer the avatar with a new clip list on the same skeleton.
  for (const char* file : {"debug_robot.vrm", "Godette_vrm_v4.vrm"}) {
    const Asset avatar = read_gltf(kVrm + file);
    Asset moved = avatar;
    Clip clip;
    clip.name = "retargeted";
    clip.duration = 1;
    clip.tracks.resize(static_cast<size_t>(avatar.skeleton.joint_count()));
    const int hips = avatar.humanoid->find("hips");
    auto& rotation = clip.tracks[static_cast<size_t>(hips)].rotation;
    rotation.times = {0, 1};
    rotation.values = {
        avatar.skeleton.joint(hips).rest.rotation,
        Quat::from_axis_angle({0, 1, 0}, 0.5) * avatar.skeleton.joint(hips).rest.rotation};
    moved.clips = {clip};
    const std::string out = temp_dir() + "/" + file;
    write_gltf(moved, out, {});
    const Asset back = read_gltf(out);
    expect_same_looks(avatar.gltf->model, back.gltf->model);
    ASSERT_EQ(back.clips.size(), 1u) << file;
    EXPECT_EQ(back.clips[0].name, "retargeted");
    EXPECT_EQ(back.skeleton.joint_count(), avatar.skeleton.joint_count());
    const auto& vrm = back.gltf->model.extensions.at("VRMC_vrm");
    EXPECT_TRUE(vrm.Has("expressions")) << file;
    EXPECT_TRUE(vrm.Has("lookAt")) << file;
  }
}

}  // namespace
}  // namespace kinema
