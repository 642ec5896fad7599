// Real meshes (Godette VRM, RiggedFigure, greenman) through the io glue: the rest pose by FK
// reproduces the input mesh, and a posed frame agrees across the scalar, SIMD and threaded paths.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/skeleton/skeleton.h"
#include "kinema/skin/skin_mesh.h"
#include "test_paths.h"

namespace kinema {
namespace {

const std::string kData = test_paths::data_dir();

float max_difference(std::span<const Vec3f> a, std::span<const Vec3f> b) {
  float worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, distance(a[i], b[i]));
  return worst;
}

// Model matrices of a random pose: every joint's rest rotation turned by up to ±40° (0.7 rad)
// about a random axis, the same pose on every call.
std::vector<Mat4> random_pose_model(const Asset& asset) {
  std::mt19937 rng(21);
  std::uniform_real_distribution<double> angle(-0.7, 0.7);
  std::vector<Transform> pose = asset.skeleton.rest_pose();
  for (Transform& t : pose)
    t.rotation = normalize(t.rotation *
                           Quat::from_axis_angle({angle(rng), angle(rng), angle(rng)}, angle(rng)));
  std::vector<Mat4> model(pose.size());
  EXPECT_TRUE(local_to_model(asset.skeleton.parents(), pose, model));
  return model;
}

// Every skinned mesh of the asset: bind pose, then a random pose (±40° per joint) on all paths.
void check_asset(const std::string& path, size_t min_vertices, bool bind_is_rest) {
  const Asset asset = load_asset(path);
  size_t vertices = 0, meshes = 0;
  const std::vector<Mat4> model = random_pose_model(asset);
  for (const Mesh& mesh : asset.meshes) {
    if (mesh.skin < 0) continue;
    ++meshes;
    const SkinMeshView view = skin_mesh_view(mesh, path);
    const size_t joints = asset.skins[size_t(mesh.skin)].joints.size();
    const auto issue = check_skin_mesh(view, joints);
    ASSERT_FALSE(issue.has_value()) << path << " " << mesh.name << ": " << issue->reason;
    const SkinMesh prepared = make_skin_mesh(asset, mesh, path);
    const size_t n = mesh.vertex_count();
    vertices += n;
    const bool normals = !mesh.normals.empty();
    std::vector<Vec3f> p(n), nr(normals ? n : 0);
    const SkinOutputs out{p, nr, {}};
    // Bind pose: the FK of the rest pose gives back the input on every path — up to the one
    // transform C that every rest palette entry shares (the identity for Godette and greenman;
    // RiggedFigure's skeleton root carries a Z-up → Y-up rotation its inverse binds leave out).
    const std::vector<Affine3x4f> rest = rest_pose_skin_palette(asset, mesh.skin);
    const Affine3x4f common = rest[0];
    for (const Affine3x4f& s : rest)
      for (size_t e = 0; e < 12; ++e) ASSERT_NEAR(s.m[e], common.m[e], 1e-5f) << mesh.name;
    if (bind_is_rest) {
      for (size_t e = 0; e < 12; ++e)
        EXPECT_NEAR(common.m[e], Affine3x4f::identity().m[e], 1e-5f) << mesh.name;
    }
    std::vector<Vec3f> bind_p(n), bind_n(normals ? n : 0);
    for (size_t v = 0; v < n; ++v) {
      bind_p[v] = common.transform_point(mesh.positions[v]);
      if (normals) bind_n[v] = common.transform_vector(mesh.normals[v]);
    }
    std::vector<DualQuatf> rest_dq(joints);
    ASSERT_TRUE(dual_quat_palette(rest, rest_dq, {}));
    for (int path_id = 0; path_id < 6; ++path_id) {
      switch (path_id) {
        case 0:
          ASSERT_TRUE(skin_lbs(view, rest, out));
          break;
        case 1:
          ASSERT_TRUE(skin_lbs_simd(view, rest, out));
          break;
        case 2:
          ASSERT_TRUE(skin_lbs(prepared, rest, out, SkinPath::parallel));
          break;
        case 3:
          ASSERT_TRUE(skin_dqs(view, {rest_dq, {}}, out));
          break;
        case 4:
          ASSERT_TRUE(skin_dqs_simd(view, {rest_dq, {}}, out));
          break;
        default:
          ASSERT_TRUE(skin_dqs(prepared, {rest_dq, {}}, out, SkinPath::parallel));
          break;
      }
      EXPECT_LE(max_difference(p, bind_p), 1e-4f) << path << " " << mesh.name << " " << path_id;
      if (normals) {
        EXPECT_LE(max_difference(nr, bind_n), 1e-3f) << mesh.name << " " << path_id;
      }
    }
    // A posed frame: all paths agree within 1e-5 m.
    std::vector<Affine3x4f> palette(joints);
    ASSERT_TRUE(asset_skin_palette(asset, mesh.skin, model, palette));
    std::vector<DualQuatf> dq(joints);
    std::vector<Affine3x4f> pre(joints);
    bool scaled = false;
    ASSERT_TRUE(dual_quat_palette(palette, dq, pre, &scaled));
    const DqsPaletteView dqp{
        dq, scaled ? std::span<const Affine3x4f>(pre) : std::span<const Affine3x4f>{}};
    for (const bool dqs : {false, true}) {
      std::vector<std::vector<Vec3f>> ps(5, std::vector<Vec3f>(n)),
          ns(5, std::vector<Vec3f>(normals ? n : 0));
      for (int k = 0; k < 5; ++k) {
        const SkinOutputs o{ps[size_t(k)], ns[size_t(k)], {}};
        const SkinPath mesh_path = k == 3 ? SkinPath::simd : SkinPath::parallel;
        bool ok = false;
        if (dqs) {
          if (k == 0) ok = skin_dqs(view, dqp, o);
          if (k == 1) ok = skin_dqs_simd(view, dqp, o);
          if (k == 2) ok = skin_dqs_parallel(view, dqp, o);
          if (k >= 3) ok = skin_dqs(prepared, dqp, o, mesh_path);
        } else {
          if (k == 0) ok = skin_lbs(view, palette, o);
          if (k == 1) ok = skin_lbs_simd(view, palette, o);
          if (k == 2) ok = skin_lbs_parallel(view, palette, o);
          if (k >= 3) ok = skin_lbs(prepared, palette, o, mesh_path);
        }
        ASSERT_TRUE(ok) << k;
      }
      for (int k = 1; k < 5; ++k) {
        EXPECT_LE(max_difference(ps[0], ps[size_t(k)]), 1e-5f)
            << mesh.name << " dqs " << dqs << " " << k;
        EXPECT_LE(max_difference(ns[0], ns[size_t(k)]), 1e-4f)
            << mesh.name << " dqs " << dqs << " " << k;
      }
      // The pose moved the mesh (the test would not see a path that ignores the palette).
      EXPECT_GT(max_difference(ps[0], mesh.positions), 0.01f) << mesh.name;
    }
  }
  EXPECT_GT(meshes, 0u) << path;
  EXPECT_GE(vertices, min_vertices) << path;
}

TEST(SkinRealMesh, GodetteBindPoseAndPosedPathsAgree) {
  check_asset(kData + "/vrm/Godette_vrm_v4.vrm", 1000, true);
}
TEST(SkinRealMesh, RiggedFigureBindPoseAndPosedPathsAgree) {
  check_asset(kData + "/gltf/RiggedFigure.glb", 100, false);
}
TEST(SkinRealMesh, GreenmanBindPoseAndPosedPathsAgree) {
  check_asset(kData + "/gltf/greenman.glb", 100, true);
}

// LbsNormals::blended_matrix against the inverse transpose on a real mesh and pose (Godette,
// every joint turned by up to ±40° as above): the angle between the two normals and the length
// of the blended-matrix normal (not renormalized), the numbers docs/skin.md quotes. The two
// agree exactly only where one rigid bone moves the vertex; LBS blends of rotations shrink M,
// so |M·n| ≤ 1.
TEST(SkinRealMesh, BlendedMatrixNormalsAgainstTheInverseTransposeOnGodette) {
  const std::string path = kData + "/vrm/Godette_vrm_v4.vrm";
  const Asset asset = load_asset(path);
  const std::vector<Mat4> model = random_pose_model(asset);
  std::vector<double> angles, lengths;
  size_t rigid = 0;
  for (const Mesh& mesh : asset.meshes) {
    if (mesh.skin < 0 || mesh.normals.empty()) continue;
    SkinMesh prepared = make_skin_mesh(asset, mesh, path);
    std::vector<Affine3x4f> palette(asset.skins[size_t(mesh.skin)].joints.size());
    ASSERT_TRUE(asset_skin_palette(asset, mesh.skin, model, palette));
    const size_t n = mesh.vertex_count();
    std::vector<Vec3f> p(n), exact(n), blended(n);
    ASSERT_TRUE(skin_lbs(prepared, palette, {p, exact, {}}));
    prepared.lbs_normals = LbsNormals::blended_matrix;
    ASSERT_TRUE(skin_lbs(prepared, palette, {p, blended, {}}));
    for (const SkinMesh::Group& g : prepared.groups)
      if (g.influences == 1) rigid += g.count;
    for (size_t v = 0; v < n; ++v) {
      const double l = length(blended[v]);
      lengths.push_back(l);
      const double c = std::clamp(double(dot(blended[v], exact[v])) / l, -1.0, 1.0);
      angles.push_back(std::acos(c) * 180 / 3.14159265358979);
    }
  }
  ASSERT_GT(angles.size(), 1000u);
  std::vector<double> sorted = angles;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted[sorted.size() / 2], p99 = sorted[sorted.size() * 99 / 100],
               worst = sorted.back();
  const auto [shortest, longest] = std::minmax_element(lengths.begin(), lengths.end());
  std::cout << "Godette, " << angles.size() << " vertices (" << rigid
            << " with one influence): angle blended vs inverse transpose median " << median
            << "°, p99 " << p99 << "°, max " << worst << "°; |M·n| " << *shortest << " … "
            << *longest << "\n";
  // Measured: median 0.028°, p99 2.3°, max 4.3°, |M·n| 0.918 … 1 (8,067 vertices, 4,353 with
  // one influence).
  EXPECT_LT(median, 0.5);  // most vertices: one bone, or bones that turn alike
  EXPECT_LT(p99, 5.0);
  EXPECT_GT(worst, 1.0);        // but blends of different rotations part the two
  EXPECT_LE(*longest, 1.0001);  // rigid bones: |M·n| ≤ 1
  EXPECT_GT(*shortest, 0.85);
}

TEST(SkinRealMesh, GltfTangentsAreRead) {
  // AnimatedMorphCube carries TANGENT (xyz + handedness w) on its 24 vertices: unit vectors,
  // ⟂ the normal on 16 of them (on the other 8 the file's tangent is ±the normal itself).
  const Asset asset = load_asset(kData + "/gltf/AnimatedMorphCube.glb");
  ASSERT_FALSE(asset.meshes.empty());
  const Mesh& mesh = asset.meshes[0];
  ASSERT_EQ(mesh.vertex_count(), 24u);
  ASSERT_EQ(mesh.tangents.size(), mesh.vertex_count());
  ASSERT_EQ(mesh.tangent_signs.size(), mesh.vertex_count());
  ASSERT_EQ(mesh.normals.size(), mesh.vertex_count());
  int perpendicular = 0;
  for (size_t v = 0; v < mesh.vertex_count(); ++v) {
    EXPECT_NEAR(length(mesh.tangents[v]), 1.0f, 1e-3f) << v;
    EXPECT_EQ(std::abs(mesh.tangent_signs[v]), 1.0f);
    perpendicular += std::abs(dot(mesh.tangents[v], mesh.normals[v])) < 1e-3f ? 1 : 0;
  }
  EXPECT_EQ(perpendicular, 16);
  // Meshes without TANGENT have none.
  EXPECT_TRUE(load_asset(kData + "/gltf/greenman.glb").meshes[0].tangents.empty());
}

TEST(SkinRealMesh, RigidMeshHasNoSkinView) {
  Mesh rigid;
  rigid.name = "box";
  rigid.positions = {{0, 0, 0}};
  EXPECT_THROW(skin_mesh_view(rigid, "box.glb"), Error);
  Asset asset;
  EXPECT_THROW(rest_pose_skin_palette(asset, 0), Error);
}

}  // namespace
}  // namespace kinema
