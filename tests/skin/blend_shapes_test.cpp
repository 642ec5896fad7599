// Blend shapes (morph targets) on real glTF/VRM data: dense vs sparse, skipped zero weights,
// linearity, renormalized normals, morph-then-skin, bad input.
#include "kinema/skin/blend_shapes.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/skeleton/skeleton.h"
#include "kinema/skin/skinning.h"
#include "test_paths.h"

namespace kinema {
namespace {

const std::string kData = test_paths::data_dir();

const Asset& godette() {
  static const Asset a = load_asset(kData + "/vrm/Godette_vrm_v4.vrm");
  return a;
}
const Mesh& godette_face() {
  for (const Mesh& m : godette().meshes)
    if (m.morph_targets.size() == 15) return m;
  throw std::runtime_error("no face mesh with 15 morph targets");
}

std::vector<float> random_weights(size_t n, std::mt19937& rng, float zero_fraction = 0.3f) {
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<float> w(n);
  for (float& x : w) x = u(rng) < zero_fraction ? 0.0f : u(rng);
  return w;
}

TEST(BlendShapes, AnimatedMorphCubeFullWeightAddsTheDelta) {
  const Asset a = load_asset(kData + "/gltf/AnimatedMorphCube.glb");
  ASSERT_EQ(a.meshes.size(), 1u);
  const Mesh& m = a.meshes[0];
  ASSERT_EQ(m.morph_targets.size(), 2u);
  const auto views = morph_target_views(m);
  std::vector<Vec3f> p(m.vertex_count()), n(m.vertex_count());
  for (size_t k = 0; k < 2; ++k) {
    std::vector<float> w(2, 0.0f);
    w[k] = 1.0f;
    ASSERT_TRUE(apply_blend_shapes(m.positions, m.normals, views, w, p, n));
    double moved = 0;
    for (size_t i = 0; i < p.size(); ++i) {
      const Vec3f want = m.positions[i] + m.morph_targets[k].position_deltas[i];
      EXPECT_EQ(p[i], want) << "vertex " << i;
      moved = std::max(moved, double(length(p[i] - m.positions[i])));
      EXPECT_NEAR(length(n[i]), 1.0f, 1e-5f);
    }
    EXPECT_GT(moved, 0.001) << "target " << k << " moves nothing";
  }
  // All weights 0: the base, normals renormalized only.
  std::vector<float> zero(2, 0.0f);
  ASSERT_TRUE(apply_blend_shapes(m.positions, m.normals, views, zero, p, n));
  for (size_t i = 0; i < p.size(); ++i) {
    EXPECT_EQ(p[i], m.positions[i]);
    EXPECT_NEAR(distance(n[i], m.normals[i]), 0.0f, 1e-5f);
  }
}

TEST(BlendShapes, AnimatedMorphCubeFollowsItsClip) {
  const Asset a = load_asset(kData + "/gltf/AnimatedMorphCube.glb");
  ASSERT_FALSE(a.clips.empty());
  ASSERT_FALSE(a.clips[0].morph_tracks.empty());
  const Mesh& m = a.meshes[0];
  const MorphTrack& track = a.clips[0].morph_tracks[0];
  const BlendShapeSet set = make_blend_shape_set(m);
  std::vector<double> wd(2);
  std::vector<float> w(2);
  std::vector<Vec3f> p(m.vertex_count());
  for (double t = 0; t <= a.clips[0].duration; t += 0.35) {
    ASSERT_TRUE(sample(track, t, wd));
    for (size_t k = 0; k < 2; ++k) w[k] = float(wd[k]);
    ASSERT_TRUE(apply_blend_shapes(set, m.positions, {}, w, p, {}));
    for (size_t i = 0; i < p.size(); ++i) {
      const Vec3f want = m.positions[i] + m.morph_targets[0].position_deltas[i] * w[0] +
                         m.morph_targets[1].position_deltas[i] * w[1];
      EXPECT_NEAR(distance(p[i], want), 0.0f, 1e-6f) << "t " << t << " vertex " << i;
    }
  }
}

TEST(BlendShapes, GodetteSparseEqualsDenseAndIsSmaller) {
  const Mesh& face = godette_face();
  const BlendShapeSet set = make_blend_shape_set(face);
  ASSERT_EQ(set.target_count(), 15u);
  // Face shapes are local: each target moves a fraction of the face.
  for (const SparseMorphTarget& t : set.targets) {
    EXPECT_GT(t.vertices.size(), 0u) << t.name;
    EXPECT_LT(t.vertices.size(), face.vertex_count() / 2) << t.name;
  }
  EXPECT_LT(set.nonzero_count(), 15 * face.vertex_count() / 4);
  const auto views = morph_target_views(face);
  std::mt19937 rng(7);
  std::vector<Vec3f> pd(face.vertex_count()), nd(pd.size()), ps(pd.size()), ns(pd.size());
  for (int trial = 0; trial < 50; ++trial) {
    const std::vector<float> w = random_weights(15, rng);
    ASSERT_TRUE(apply_blend_shapes(face.positions, face.normals, views, w, pd, nd));
    ASSERT_TRUE(apply_blend_shapes(set, face.positions, face.normals, w, ps, ns));
    for (size_t i = 0; i < pd.size(); ++i) {
      ASSERT_EQ(pd[i], ps[i]) << "vertex " << i;  // epsilon 0: bit-identical
      ASSERT_EQ(nd[i], ns[i]) << "vertex " << i;
      ASSERT_NEAR(length(nd[i]), 1.0f, 1e-5f);
    }
  }
}

TEST(BlendShapes, GodetteIsLinearInTheWeights) {
  const Mesh& face = godette_face();
  const BlendShapeSet set = make_blend_shape_set(face);
  std::mt19937 rng(11);
  const size_t n = face.vertex_count();
  std::vector<Vec3f> pa(n), pb(n), pab(n);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<float> a = random_weights(15, rng), b = random_weights(15, rng), ab(15);
    for (size_t k = 0; k < 15; ++k) ab[k] = a[k] + b[k];
    ASSERT_TRUE(apply_blend_shapes(set, face.positions, {}, a, pa, {}));
    ASSERT_TRUE(apply_blend_shapes(set, face.positions, {}, b, pb, {}));
    ASSERT_TRUE(apply_blend_shapes(set, face.positions, {}, ab, pab, {}));
    for (size_t i = 0; i < n; ++i)
      ASSERT_NEAR(distance(pab[i], pa[i] + pb[i] - face.positions[i]), 0.0f, 2e-6f);
  }
}

TEST(BlendShapes, ZeroWeightTargetsAreSkipped) {
  // A target full of NaN must not matter while its weight is exactly 0.
  Mesh m;
  m.positions = {{0, 0, 0}, {1, 0, 0}};
  m.normals = {{0, 0, 1}, {0, 0, 1}};
  MorphTarget good{"good", {{0, 1, 0}, {0, 0, 0}}, {}};
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<Vec3f> poison(2, Vec3f{nan, nan, nan});
  const std::vector<MorphTargetView> views{{good.position_deltas, {}}, {poison, poison}};
  std::vector<Vec3f> p(2), n(2);
  const std::vector<float> w{0.5f, 0.0f};
  ASSERT_TRUE(apply_blend_shapes(m.positions, m.normals, views, w, p, n));
  EXPECT_EQ(p[0], (Vec3f{0, 0.5f, 0}));
  EXPECT_EQ(p[1], (Vec3f{1, 0, 0}));
  EXPECT_EQ(n[0], (Vec3f{0, 0, 1}));
}

TEST(BlendShapes, NormalsAreRenormalizedAndFallBackWhenTheyVanish) {
  const std::vector<Vec3f> base{{0, 0, 0}, {0, 0, 0}};
  const std::vector<Vec3f> normals{{0, 0, 1}, {0, 0, 1}};
  const std::vector<Vec3f> dn{{1, 0, -1}, {0, 0, -1}};  // vertex 1's normal sums to zero
  const std::vector<MorphTargetView> views{{{}, dn}};
  std::vector<Vec3f> p(2), n(2);
  const std::vector<float> w{1.0f};
  ASSERT_TRUE(apply_blend_shapes(base, normals, views, w, p, n));
  EXPECT_NEAR(n[0].x, 1.0f, 1e-6f);
  EXPECT_NEAR(n[0].z, 0.0f, 1e-6f);
  EXPECT_EQ(n[1], (Vec3f{0, 0, 1}));  // base normal kept
  const std::vector<float> half{0.5f};
  ASSERT_TRUE(apply_blend_shapes(base, normals, views, half, p, n));
  EXPECT_NEAR(n[0].x, 1.0f / std::sqrt(2.0f), 1e-6f);  // (0.5, 0, 0.5) normalized
  EXPECT_NEAR(n[0].z, 1.0f / std::sqrt(2.0f), 1e-6f);
}

TEST(BlendShapes, MorphInBindSpaceThenSkinMovesDeltasWithTheBones) {
  // LBS is linear: skin(p + Δ) − skin(p) = (Σ w_j A_j) Δ, A_j the palette's 3×3 parts.
  const Asset& a = godette();
  const Mesh& face = godette_face();
  ASSERT_GE(face.skin, 0);
  const Skin& skin = a.skins[static_cast<size_t>(face.skin)];
  // Pose: rotate every joint a little about a mixed axis.
  std::vector<Transform> local = a.skeleton.rest_pose();
  for (size_t j = 0; j < local.size(); ++j)
    local[j].rotation = normalize(local[j].rotation * Quat{0.05, 0.1, -0.03, 1.0});
  std::vector<Mat4> model(local.size());
  ASSERT_TRUE(local_to_model(a.skeleton.parents(), local, model));
  std::vector<Affine3x4f> palette(skin.joints.size());
  ASSERT_TRUE(skinning_palette(model, skin.joints, skin.inverse_bind, palette));
  const BlendShapeSet set = make_blend_shape_set(face);
  std::vector<float> w(15, 0.0f);
  w[3] = 1.0f;  // one eye blink
  w[5] = 0.6f;  // the mouth
  std::vector<Vec3f> morphed(face.vertex_count()), skinned_base(morphed.size()),
      skinned(morphed.size());
  ASSERT_TRUE(apply_blend_shapes(set, face.positions, {}, w, morphed, {}));
  const SkinMeshView base_view{face.positions, {}, {}, face.influences, face.joints, face.weights};
  const SkinMeshView morph_view{morphed, {}, {}, face.influences, face.joints, face.weights};
  ASSERT_TRUE(skin_lbs(base_view, palette, {skinned_base, {}, {}}));
  ASSERT_TRUE(skin_lbs(morph_view, palette, {skinned, {}, {}}));
  size_t moved = 0;
  for (size_t i = 0; i < morphed.size(); ++i) {
    const Vec3f delta = morphed[i] - face.positions[i];
    Vec3f want{0, 0, 0};
    for (int k = 0; k < face.influences; ++k) {
      const size_t s = i * size_t(face.influences) + size_t(k);
      want += palette[face.joints[s]].transform_vector(delta) * face.weights[s];
    }
    EXPECT_NEAR(distance(skinned[i] - skinned_base[i], want), 0.0f, 2e-6f) << "vertex " << i;
    moved += length(delta) > 1e-5f ? 1 : 0;
  }
  EXPECT_GT(moved, 50u);
}

TEST(BlendShapes, SizeMismatchesReturnFalseAndWriteNothing) {
  const std::vector<Vec3f> base{{0, 0, 0}, {1, 0, 0}};
  const std::vector<Vec3f> normals{{0, 0, 1}, {0, 0, 1}};
  const std::vector<Vec3f> d{{0, 1, 0}, {0, 1, 0}}, short_d{{0, 1, 0}};
  const std::vector<MorphTargetView> views{{d, {}}}, bad_views{{short_d, {}}};
  const Vec3f sentinel{9, 9, 9};
  std::vector<Vec3f> p(2, sentinel), n(2, sentinel), p3(3, sentinel);
  const std::vector<float> w{1.0f}, w2{1.0f, 0.5f};
  EXPECT_FALSE(apply_blend_shapes(base, normals, views, w2, p, n));     // weights ≠ targets
  EXPECT_FALSE(apply_blend_shapes(base, normals, bad_views, w, p, n));  // delta count
  EXPECT_FALSE(apply_blend_shapes(base, normals, views, w, p3, n));     // out size
  EXPECT_FALSE(apply_blend_shapes(base, {}, views, w, p, n));           // normals from nothing
  EXPECT_FALSE(apply_blend_shapes(base, short_d, views, w, p, {}));     // base normals size
  for (const Vec3f& v : p) EXPECT_EQ(v, sentinel);
  for (const Vec3f& v : n) EXPECT_EQ(v, sentinel);
  Mesh m;
  m.positions = base;
  m.morph_targets.push_back({"t", d, {}});
  const BlendShapeSet set = make_blend_shape_set(m);
  EXPECT_FALSE(apply_blend_shapes(set, base, {}, w2, p, {}));
  EXPECT_FALSE(apply_blend_shapes(set, d, {}, w, p3, {}));
  EXPECT_FALSE(apply_blend_shapes(set, short_d, {}, w, p, {}));
  for (const Vec3f& v : p) EXPECT_EQ(v, sentinel);
  EXPECT_TRUE(apply_blend_shapes(set, base, {}, w, p, {}));
  EXPECT_EQ(p[1], (Vec3f{1, 1, 0}));
}

TEST(BlendShapes, MakeSetRejectsBadTargetsAndHonoursEpsilon) {
  Mesh m;
  m.name = "face";
  m.positions = {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}};
  m.morph_targets.push_back({"small", {{0, 1e-4f, 0}, {0, 0, 0}, {0, 0.5f, 0}}, {}});
  EXPECT_EQ(make_blend_shape_set(m).targets[0].vertices.size(), 2u);
  EXPECT_EQ(make_blend_shape_set(m, 1e-3f).targets[0].vertices.size(), 1u);
  Mesh bad = m;
  bad.morph_targets[0].position_deltas.pop_back();
  EXPECT_THROW(make_blend_shape_set(bad, 0, "x.glb"), Error);
  bad = m;
  bad.morph_targets[0].position_deltas[1].y = std::numeric_limits<float>::infinity();
  try {
    make_blend_shape_set(bad, 0, "x.glb");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.file(), "x.glb");
    EXPECT_NE(e.place().find("vertex 1"), std::string::npos) << e.place();
  }
  bad = m;
  bad.morph_targets[0].normal_deltas = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};  // mesh has no normals
  EXPECT_THROW(make_blend_shape_set(bad), Error);
}

}  // namespace
}  // namespace kinema
