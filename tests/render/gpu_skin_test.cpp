// GPU skinning (the draw program's vertex shader, read back by transform feedback) against the
// CPU reference skin_lbs / skin_dqs on real meshes, posed by real clip frames and random poses.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "kinema/character/asset.h"
#include "kinema/clip/clip.h"
#include "kinema/io/asset_file.h"
#include "kinema/render/renderer.h"
#include "kinema/skeleton/skeleton.h"
#include "kinema/skin/skinning.h"
#include "render/render_fixture.h"

namespace kinema {
namespace {

// CPU reference for uploaded mesh m of `r` (the asset's mesh, with the renderer's normals).
void cpu_skin(const Asset& asset, const Renderer& r, size_t m, std::span<const Mat4> pose,
              SkinningMethod method, std::vector<Vec3f>& positions, std::vector<Vec3f>& normals) {
  const Mesh& mesh = asset.meshes[size_t(r.source_mesh(m))];
  const Skin& skin = asset.skins[size_t(mesh.skin)];
  std::vector<Affine3x4f> palette(skin.joints.size());
  ASSERT_TRUE(skinning_palette(pose, skin.joints, skin.inverse_bind, palette));
  const std::vector<Vec3f> bind_normals(r.bind_normals(m).begin(), r.bind_normals(m).end());
  const SkinMeshView view{mesh.positions,  bind_normals, {},
                          mesh.influences, mesh.joints,  mesh.weights};
  positions.resize(mesh.positions.size());
  normals.resize(mesh.positions.size());
  if (method == SkinningMethod::Lbs) {
    ASSERT_TRUE(skin_lbs(view, palette, {positions, normals, {}}));
  } else {
    std::vector<DualQuatf> dq(palette.size());
    std::vector<Affine3x4f> prescale(palette.size());
    bool scaled = false;
    ASSERT_TRUE(dual_quat_palette(palette, dq, prescale, &scaled));
    const DqsPaletteView dv{
        dq, scaled ? std::span<const Affine3x4f>(prescale) : std::span<const Affine3x4f>()};
    ASSERT_TRUE(skin_dqs(view, dv, {positions, normals, {}}));
  }
}

struct Agreement {
  float position = 0, normal = 0, moved = 0;  // max |GPU − CPU|, max normal angle gap, max motion
  size_t vertices = 0;
};

Agreement compare_all(const Asset& asset, Renderer& r, std::span<const Mat4> pose,
                      SkinningMethod method) {
  Agreement a;
  for (size_t m = 0; m < r.mesh_count(); ++m) {
    if (r.source_mesh(m) < 0 || asset.meshes[size_t(r.source_mesh(m))].skin < 0) continue;
    std::vector<Vec3f> cpu_p, cpu_n;
    cpu_skin(asset, r, m, pose, method, cpu_p, cpu_n);
    std::vector<Vec3f> gpu_p(cpu_p.size()), gpu_n(cpu_p.size());
    EXPECT_TRUE(r.gpu_skin(m, pose, method, gpu_p, gpu_n));
    for (size_t v = 0; v < cpu_p.size(); ++v) {
      a.position = std::max(a.position, length(gpu_p[v] - cpu_p[v]));
      a.normal = std::max(a.normal, length(gpu_n[v] - cpu_n[v]));
      a.moved = std::max(a.moved, length(cpu_p[v] - r.bind_positions(m)[v]));
    }
    a.vertices += cpu_p.size();
    if (std::getenv("KINEMA_RENDER_VERBOSE"))
      std::printf("mesh %zu: %zu vertices, max GPU-CPU %.3g m, normals %.3g\n", m, cpu_p.size(),
                  double(a.position), double(a.normal));
  }
  return a;
}

// A random pose: the rest pose with every joint rotated by up to `max_angle` radians.
std::vector<Mat4> random_pose(const Skeleton& s, std::mt19937& rng, double max_angle) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<Transform> local = s.rest_pose();
  for (Transform& t : local) {
    Vec3 axis{u(rng), u(rng), u(rng)};
    const double angle = max_angle * std::abs(u(rng));
    t.rotation = normalize(t.rotation * Quat::from_axis_angle(normalize(axis), angle));
  }
  std::vector<Mat4> model(local.size());
  EXPECT_TRUE(local_to_model(s.parents(), local, model));
  return model;
}

class GpuSkin : public test::RenderTest {};

TEST_F(GpuSkin, GodetteClipFramesMatchCpuLbsAndDqs) {
  const Asset asset = load_asset(test::data("vrm/Godette_vrm_v4.vrm"));
  Renderer& r = renderer();
  r.set_asset(asset, "Godette");
  ASSERT_GT(r.mesh_count(), 0u);
  std::mt19937 rng(5);
  for (int trial = 0; trial < 3; ++trial) {
    const std::vector<Mat4> pose = random_pose(asset.skeleton, rng, 1.2);
    for (const SkinningMethod method : {SkinningMethod::Lbs, SkinningMethod::Dqs}) {
      const Agreement a = compare_all(asset, r, pose, method);
      EXPECT_GT(a.vertices, 5000u);
      EXPECT_GT(a.moved, 0.05f) << "the pose must move the mesh";
      EXPECT_LT(a.position, 1e-5f) << "method " << int(method) << " trial " << trial;
      EXPECT_LT(a.normal, 1e-4f);
    }
  }
}

TEST_F(GpuSkin, EightInfluencesMatchCpu) {
  // Godette's meshes rebound to 8 random influences per vertex (both uvec4/vec4 attribute
  // halves carry weight).
  Asset asset = load_asset(test::data("vrm/Godette_vrm_v4.vrm"));
  std::mt19937 rng(8);
  for (Mesh& mesh : asset.meshes) {
    if (mesh.skin < 0) continue;
    const size_t joints = asset.skins[size_t(mesh.skin)].joints.size();
    std::uniform_int_distribution<int> pick(0, int(joints) - 1);
    std::uniform_real_distribution<float> w(0.05f, 1.0f);
    mesh.influences = 8;
    mesh.joints.resize(mesh.vertex_count() * 8);
    mesh.weights.resize(mesh.vertex_count() * 8);
    for (size_t v = 0; v < mesh.vertex_count(); ++v) {
      float sum = 0;
      for (size_t k = 0; k < 8; ++k) {
        mesh.joints[v * 8 + k] = uint16_t(pick(rng));
        sum += mesh.weights[v * 8 + k] = w(rng);
      }
      for (size_t k = 0; k < 8; ++k) mesh.weights[v * 8 + k] /= sum;
    }
  }
  Renderer& r = renderer();
  r.set_asset(asset, "Godette8");
  const std::vector<Mat4> pose = random_pose(asset.skeleton, rng, 0.6);
  for (const SkinningMethod method : {SkinningMethod::Lbs, SkinningMethod::Dqs}) {
    const Agreement a = compare_all(asset, r, pose, method);
    EXPECT_GT(a.vertices, 5000u);
    EXPECT_LT(a.position, 1e-5f) << int(method);
    EXPECT_LT(a.normal, 1e-4f) << int(method);
  }
}

TEST_F(GpuSkin, RiggedFigureClipFramesMatchCpu) {
  const Asset asset = load_asset(test::data("gltf/RiggedFigure.glb"));
  ASSERT_FALSE(asset.clips.empty());
  Renderer& r = renderer();
  r.set_asset(asset, "RiggedFigure");
  const Clip& clip = asset.clips[0];
  for (const double f : {0.13, 0.5, 0.91}) {
    const std::vector<Mat4> pose = sample_model_pose(clip, asset.skeleton, f * clip.duration);
    for (const SkinningMethod method : {SkinningMethod::Lbs, SkinningMethod::Dqs}) {
      const Agreement a = compare_all(asset, r, pose, method);
      EXPECT_GT(a.vertices, 100u);
      EXPECT_LT(a.position, 1e-5f) << "t = " << f;
      EXPECT_LT(a.normal, 1e-4f);
    }
  }
}

TEST_F(GpuSkin, ScaledBonesUseThePrescaleStage) {
  // Scaling bones (a squash) takes the DQS pre-scale path on both sides.
  const Asset asset = load_asset(test::data("gltf/RiggedFigure.glb"));
  Renderer& r = renderer();
  r.set_asset(asset, "RiggedFigure");
  std::vector<Transform> local = asset.skeleton.rest_pose();
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(0.7, 1.4);
  for (Transform& t : local) t.scale = {u(rng), u(rng), u(rng)};
  std::vector<Mat4> pose(local.size());
  ASSERT_TRUE(local_to_model(asset.skeleton.parents(), local, pose));
  for (const SkinningMethod method : {SkinningMethod::Lbs, SkinningMethod::Dqs}) {
    const Agreement a = compare_all(asset, r, pose, method);
    EXPECT_GT(a.moved, 0.01f);
    EXPECT_LT(a.position, 1e-5f) << int(method);
    EXPECT_LT(a.normal, 2e-4f);
  }
}

TEST_F(GpuSkin, BindPoseGivesTheInputMesh) {
  const Asset asset = load_asset(test::data("gltf/RiggedFigure.glb"));
  Renderer& r = renderer();
  r.set_asset(asset, "RiggedFigure");
  // The bind pose: every skin joint's model matrix is the inverse of its inverse bind matrix.
  std::vector<Mat4> bind = rest_model_matrices(asset.skeleton);
  for (const Skin& skin : asset.skins)
    for (size_t j = 0; j < skin.joints.size(); ++j)
      ASSERT_TRUE(inverse(skin.inverse_bind[j], bind[size_t(skin.joints[j])]));
  for (size_t m = 0; m < r.mesh_count(); ++m) {
    std::vector<Vec3f> p(r.vertex_count(m));
    ASSERT_TRUE(r.gpu_skin(m, bind, SkinningMethod::Dqs, p, {}));
    for (size_t v = 0; v < p.size(); ++v)
      ASSERT_LT(length(p[v] - r.bind_positions(m)[v]), 1e-5f) << "vertex " << v;
  }
}

TEST_F(GpuSkin, SizeMismatchesAreRefused) {
  const Asset asset = load_asset(test::data("gltf/RiggedFigure.glb"));
  Renderer& r = renderer();
  r.set_asset(asset, "RiggedFigure");
  const std::vector<Mat4> rest = rest_model_matrices(asset.skeleton);
  std::vector<Vec3f> p(r.vertex_count(0));
  std::vector<Vec3f> wrong(p.size() + 1);
  EXPECT_FALSE(r.gpu_skin(0, rest, SkinningMethod::Lbs, wrong, {}));
  EXPECT_FALSE(r.gpu_skin(r.mesh_count(), rest, SkinningMethod::Lbs, p, {}));
  EXPECT_FALSE(r.gpu_skin(0, std::span<const Mat4>(rest).first(1), SkinningMethod::Lbs, p, {}));
  EXPECT_TRUE(r.gpu_skin(0, rest, SkinningMethod::Lbs, p, {}));
}

TEST_F(GpuSkin, ShaderSourceIsTheSeedForm) {
  const std::string src(skinning_vertex_shader_source());
  EXPECT_NE(src.find("#version 450 core"), std::string::npos);
  EXPECT_NE(src.find("dot(r, r0) < 0.0 ? -weight : weight"), std::string::npos);
  EXPECT_NE(src.find("2.0 * (br.w * bd.xyz - bd.w * br.xyz + cross(br.xyz, bd.xyz))"),
            std::string::npos);
}

}  // namespace
}  // namespace kinema
