// Pose operations: N-way blend, masks, additive, layers; the worked numbers are those of
// docs/worked_examples.md ("Pose blending", "Additive layers and masks").
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "kinema/blend/pose_ops.h"
#include "kinema/io/asset_file.h"
#include "kinema/skeleton/runtime_skeleton.h"
#include "kinema/skeleton/skeleton.h"
#include "test_paths.h"

namespace kinema {
namespace {

Quatf rot_x(double deg) { return Quatf(Quat::from_axis_angle({1, 0, 0}, radians(deg))); }
double angle_x_deg(const Quatf& q) { return degrees(2.0 * std::atan2(double(q.x), double(q.w))); }

std::vector<SoaTransform> pose_of(std::vector<Transformf> joints) {
  std::vector<SoaTransform> p(static_cast<size_t>(soa_count(int(joints.size()))));
  to_soa(joints, p);
  return p;
}

std::vector<SoaTransform> random_pose(std::mt19937& rng, int joints, float spread = 1.0f) {
  std::normal_distribution<float> n(0.0f, 1.0f);
  std::uniform_real_distribution<float> u(0.5f, 1.5f);
  std::vector<Transformf> t(static_cast<size_t>(joints));
  for (Transformf& x : t) {
    x.translation = {n(rng) * spread, n(rng) * spread, n(rng) * spread};
    x.rotation = normalize(Quatf{n(rng), n(rng), n(rng), n(rng)});
    x.scale = {u(rng), u(rng), u(rng)};
  }
  return pose_of(t);
}

// Walk hip 20°, run 50°; a 2.5 m/s trot between 1.5 and 4.5 m/s → w = 1/3 → 30°.
TEST(PoseOps, OneThirdBlendOfWalkAndRunHipIs30Degrees) {
  const auto walk = pose_of({{{}, rot_x(20), {1, 1, 1}}});
  const auto run = pose_of({{{}, rot_x(50), {1, 1, 1}}});
  const auto rest = pose_of({Transformf{}});
  const float w = (2.5f - 1.5f) / (4.5f - 1.5f);
  const BlendLayer layers[] = {{walk, 1 - w}, {run, w}};
  std::vector<SoaTransform> out(1);
  ASSERT_TRUE(blend(layers, rest, 1, out));
  // nlerp of two rotations about one axis is within 0.1° of slerp at w = 1/3 and 30° apart.
  EXPECT_NEAR(angle_x_deg(get_joint(out, 0).rotation), 30.0, 0.1);
}

// Additive: a flinch bends the spine 12° about x; on a run at 20°, w = 0.5 → 26°.
TEST(PoseOps, AdditiveFlinchAddsHalfItsAngleAtWeightHalf) {
  const auto reference = pose_of({{{}, rot_x(0), {1, 1, 1}}});
  const auto flinch = pose_of({{{}, rot_x(12), {1, 1, 1}}});
  const auto run = pose_of({{{0, 1, 0}, rot_x(20), {1, 1, 1}}});
  std::vector<SoaTransform> add(1), out(1);
  ASSERT_TRUE(make_additive(flinch, reference, add));
  ASSERT_TRUE(apply_additive(run, add, 0.5f, {}, 1, out));
  EXPECT_NEAR(angle_x_deg(get_joint(out, 0).rotation), 26.0, 1e-4);
  ASSERT_TRUE(apply_additive(run, add, 0.5f, {}, 1, out, AdditiveRotation::Nlerp));
  EXPECT_NEAR(angle_x_deg(get_joint(out, 0).rotation), 26.0, 0.05);  // cheaper, nearly exact
  // The same flinch works on any base: idle at 0°, full weight → 12°.
  ASSERT_TRUE(apply_additive(reference, add, 1.0f, {}, 1, out));
  EXPECT_NEAR(angle_x_deg(get_joint(out, 0).rotation), 12.0, 1e-4);
}

// Layers and masks: a spine joint with mask 0.5, run 0°, aim 40° → 20°.
TEST(PoseOps, MaskHalfMovesTheSpineHalfwayToTheLayer) {
  const auto run = pose_of({{{}, rot_x(0), {1, 1, 1}}, {{}, rot_x(0), {1, 1, 1}}});
  const auto aim = pose_of({{{}, rot_x(40), {1, 1, 1}}, {{}, rot_x(40), {1, 1, 1}}});
  const float mask[] = {0.5f, 0.0f};
  const PoseLayer layers[] = {{PoseLayer::Mode::Override, aim, 1.0f, mask}};
  std::vector<SoaTransform> out(1);
  ASSERT_TRUE(apply_layers(run, layers, 2, out));
  EXPECT_NEAR(angle_x_deg(get_joint(out, 0).rotation), 20.0, 1e-4);
  EXPECT_NEAR(angle_x_deg(get_joint(out, 1).rotation), 0.0, 1e-4);  // masked out
  // The same as a two-input blend with the mask as per-joint weights.
  const float inv_mask[] = {0.5f, 1.0f};
  const BlendLayer two[] = {{run, 1.0f, inv_mask}, {aim, 1.0f, mask}};
  std::vector<SoaTransform> b(1);
  ASSERT_TRUE(blend(two, run, 2, b));
  EXPECT_NEAR(angle_x_deg(get_joint(b, 0).rotation), 20.0, 1e-4);
}

// A scalar double-precision reference of blend() (same definition, no SIMD).
Transform reference_blend(std::span<const std::vector<SoaTransform>> poses,
                          std::span<const float> w, int joint) {
  Vec3 t{}, s{};
  Quat q{0, 0, 0, 0};
  double total = 0;
  const Quat first = Quat(get_joint(poses[0], joint).rotation);
  for (size_t i = 0; i < poses.size(); ++i) {
    const Transform x = Transform(get_joint(poses[i], joint));
    t = t + x.translation * double(w[i]);
    s = s + x.scale * double(w[i]);
    const double sign = dot(x.rotation, first) < 0 ? -1 : 1;
    q = q + x.rotation * (sign * w[i]);
    total += w[i];
  }
  return {t / total, normalize(q), s / total};
}

// Every unmasked-blend kernel (SSE forced; AVX2 + FMA and AVX-512VL where the CPU has them)
// against the double-precision reference.
class BlendKernels : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    const bool avx2 = set_blend_avx2(GetParam() > 0);
    const bool avx512 = set_blend_avx512(GetParam() > 1);
    if (avx2 != (GetParam() > 0) || avx512 != (GetParam() > 1))
      GTEST_SKIP() << "this CPU lacks the kernel's instructions";
  }
  void TearDown() override { set_blend_avx2(true), set_blend_avx512(true); }
};
INSTANTIATE_TEST_SUITE_P(Kernels, BlendKernels, ::testing::Values(0, 1, 2), [](const auto& info) {
  return std::string(info.param == 0 ? "Sse" : info.param == 1 ? "Avx2" : "Avx512");
});

TEST_P(BlendKernels, RandomBlendsMatchTheScalarReference) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> uw(0.0f, 2.0f);
  for (int trial = 0; trial < 200; ++trial) {
    const int joints = 1 + trial % 23;
    const int n = 1 + trial % 5;
    std::vector<std::vector<SoaTransform>> poses;
    std::vector<float> weights;
    std::vector<BlendLayer> layers;
    for (int i = 0; i < n; ++i)
      poses.push_back(random_pose(rng, joints)), weights.push_back(uw(rng) + 0.01f);
    for (int i = 0; i < n; ++i) layers.push_back({poses[size_t(i)], weights[size_t(i)]});
    const auto rest = random_pose(rng, joints);
    std::vector<SoaTransform> out(rest.size());
    ASSERT_TRUE(blend(layers, rest, joints, out));
    for (int j = 0; j < joints; ++j) {
      const Transform r = reference_blend(poses, weights, j);
      const Transformf o = get_joint(out, j);
      ASSERT_LT(length(Vec3(o.translation) - r.translation), 1e-5 * (1 + length(r.translation)));
      ASSERT_LT(length(Vec3(o.scale) - r.scale), 1e-5);
      ASSERT_LT(angle_between(Quat(o.rotation), r.rotation), 1e-5);
      ASSERT_NEAR(length(Quat(o.rotation)), 1.0, 1e-6);
    }
  }
}

// The kernels agree: SSE and AVX2 to float rounding, AVX2 and AVX-512VL bit for bit; 1 to 9
// layers (9: past the unrolled fast path).
TEST(PoseOps, SseAndAvxBlendsAgree) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> uw(0.0f, 2.0f);
  bool have_avx2 = false, have_avx512 = false;
  for (int trial = 0; trial < 60; ++trial) {
    const int joints = 1 + trial % 31, n = 1 + trial % 9;
    std::vector<std::vector<SoaTransform>> poses;
    std::vector<BlendLayer> layers;
    for (int i = 0; i < n; ++i) poses.push_back(random_pose(rng, joints));
    for (int i = 0; i < n; ++i) layers.push_back({poses[size_t(i)], uw(rng) + 0.01f});
    const auto rest = random_pose(rng, joints);
    std::vector<SoaTransform> sse(rest.size()), avx(rest.size()), avx512(rest.size());
    set_blend_avx2(false);
    ASSERT_TRUE(blend(layers, rest, joints, sse));
    set_blend_avx512(false);
    have_avx2 = set_blend_avx2(true);
    ASSERT_TRUE(blend(layers, rest, joints, avx));
    have_avx512 = set_blend_avx512(true);
    ASSERT_TRUE(blend(layers, rest, joints, avx512));
    if (!have_avx2) GTEST_SKIP() << "this CPU has no AVX2 + FMA";
    for (int j = 0; j < joints; ++j) {
      const Transformf a = get_joint(sse, j), b = get_joint(avx, j);
      for (int k = 0; k < 3; ++k) {
        ASSERT_NEAR(a.translation[k], b.translation[k], 1e-6f * (1 + std::abs(a.translation[k])));
        ASSERT_NEAR(a.scale[k], b.scale[k], 1e-6f);
      }
      ASSERT_NEAR(a.rotation.x, b.rotation.x, 1e-6f);
      ASSERT_NEAR(a.rotation.y, b.rotation.y, 1e-6f);
      ASSERT_NEAR(a.rotation.z, b.rotation.z, 1e-6f);
      ASSERT_NEAR(a.rotation.w, b.rotation.w, 1e-6f);
    }
    if (have_avx512) {
      ASSERT_EQ(std::memcmp(avx.data(), avx512.data(), avx.size() * sizeof(SoaTransform)), 0)
          << "trial " << trial;
    }
  }
  EXPECT_STREQ(blend_simd_kernels(), have_avx512 ? "avx512vl" : "avx2+fma");
}

TEST(PoseOps, WeightsAreNormalizedAndIdenticalPosesAreIdentity) {
  std::mt19937 rng(3);
  const auto a = random_pose(rng, 9), b = random_pose(rng, 9), rest = random_pose(rng, 9);
  std::vector<SoaTransform> x(a.size()), y(a.size()), z(a.size());
  const BlendLayer unit[] = {{a, 0.25f}, {b, 0.75f}};
  const BlendLayer scaled[] = {{a, 1.0f}, {b, 3.0f}};
  ASSERT_TRUE(blend(unit, rest, 9, x));
  ASSERT_TRUE(blend(scaled, rest, 9, y));
  const BlendLayer same[] = {{a, 0.3f}, {a, 0.2f}, {a, 5.0f}};
  ASSERT_TRUE(blend(same, rest, 9, z));
  for (int j = 0; j < 9; ++j) {
    const Transformf p = get_joint(x, j), q = get_joint(y, j), s = get_joint(z, j),
                     r = get_joint(a, j);
    EXPECT_LT(length(p.translation - q.translation), 1e-5f);
    EXPECT_LT(angle_between(p.rotation, q.rotation), 1e-3f);
    EXPECT_LT(length(s.translation - r.translation), 1e-5f);
    EXPECT_LT(angle_between(s.rotation, r.rotation), 1e-3f);
    EXPECT_LT(length(s.scale - r.scale), 1e-5f);
  }
}

TEST(PoseOps, ZeroTotalWeightGivesTheRestPoseAndFadesContinuously) {
  std::mt19937 rng(5);
  const auto a = random_pose(rng, 6), rest = random_pose(rng, 6);
  std::vector<SoaTransform> out(a.size());
  const BlendLayer none[] = {{a, 0.0f}};
  ASSERT_TRUE(blend(none, rest, 6, out));
  for (int j = 0; j < 6; ++j) {
    EXPECT_LT(length(get_joint(out, j).translation - get_joint(rest, j).translation), 1e-6f);
    EXPECT_LT(angle_between(get_joint(out, j).rotation, get_joint(rest, j).rotation), 1e-3f);
  }
  ASSERT_TRUE(blend({}, rest, 6, out));  // no inputs at all
  EXPECT_EQ(get_joint(out, 3).translation, get_joint(rest, 3).translation);
  // Fading a weight through the threshold never jumps.
  std::vector<SoaTransform> prev(a.size());
  for (float w = 2e-4f; w >= 0; w -= 1e-6f) {
    const BlendLayer fade[] = {{a, w}};
    ASSERT_TRUE(blend(fade, rest, 6, out));
    if (w < 2e-4f) {
      for (int j = 0; j < 6; ++j)
        ASSERT_LT(length(get_joint(out, j).translation - get_joint(prev, j).translation), 0.05f);
    }
    prev = out;
  }
}

TEST(PoseOps, AdditiveOfTheReferenceIsIdentityAndRoundTrips) {
  std::mt19937 rng(9);
  const auto ref = random_pose(rng, 7), pose = random_pose(rng, 7), base = random_pose(rng, 7);
  std::vector<SoaTransform> add(ref.size()), out(ref.size());
  ASSERT_TRUE(make_additive(ref, ref, add));
  ASSERT_TRUE(apply_additive(base, add, 1.0f, {}, 7, out));
  for (int j = 0; j < 7; ++j) {
    const Transformf d = get_joint(add, j);
    EXPECT_LT(angle_between(d.rotation, Quatf{}), 1e-3f);
    EXPECT_LT(length(d.translation), 1e-6f);
    EXPECT_LT(length(get_joint(out, j).translation - get_joint(base, j).translation), 1e-5f);
  }
  // reference + (pose − reference) = pose at full weight.
  ASSERT_TRUE(make_additive(pose, ref, add));
  ASSERT_TRUE(apply_additive(ref, add, 1.0f, {}, 7, out));
  for (int j = 0; j < 7; ++j) {
    EXPECT_LT(angle_between(get_joint(out, j).rotation, get_joint(pose, j).rotation), 1e-3f);
    EXPECT_LT(length(get_joint(out, j).translation - get_joint(pose, j).translation), 1e-5f);
    EXPECT_LT(length(get_joint(out, j).scale - get_joint(pose, j).scale), 1e-5f);
  }
  // Weight 0 leaves the base alone.
  ASSERT_TRUE(apply_additive(base, add, 0.0f, {}, 7, out));
  for (int j = 0; j < 7; ++j)
    EXPECT_LT(angle_between(get_joint(out, j).rotation, get_joint(base, j).rotation), 1e-3f);
}

TEST(PoseOps, LayerOrderMattersForRotationsAboutDifferentAxes) {
  const auto base = pose_of({Transformf{}});
  const auto ax = pose_of({{{}, rot_x(90), {1, 1, 1}}});
  const auto ay =
      pose_of({{{}, Quatf(Quat::from_axis_angle({0, 1, 0}, radians(90.0))), {1, 1, 1}}});
  const PoseLayer xy[] = {{PoseLayer::Mode::Additive, ax, 1.0f},
                          {PoseLayer::Mode::Additive, ay, 1.0f}};
  const PoseLayer yx[] = {{PoseLayer::Mode::Additive, ay, 1.0f},
                          {PoseLayer::Mode::Additive, ax, 1.0f}};
  std::vector<SoaTransform> a(1), b(1);
  ASSERT_TRUE(apply_layers(base, xy, 1, a));
  ASSERT_TRUE(apply_layers(base, yx, 1, b));
  EXPECT_GT(angle_between(get_joint(a, 0).rotation, get_joint(b, 0).rotation), 0.5f);
}

// Local-space blending keeps every bone's length: blend real poses, run FK, measure.
TEST(PoseOps, BlendingRealPosesKeepsBoneLengths) {
  const Asset asset = load_asset(test_paths::data_dir() + "/bvh/cmu_iclone_cc3/007_12.bvh");
  const Skeleton& sk = asset.skeleton;
  const RuntimeSkeleton rs = RuntimeSkeleton::build(sk);
  std::vector<Transform> raw(size_t(sk.joint_count()));
  std::vector<Transformf> rawf(raw.size());
  std::vector<std::vector<SoaTransform>> poses;
  for (double t : {0.3, 1.1, 2.0}) {
    sample_pose(asset.clips[0], sk, t, WrapMode::Clamp, raw);
    for (size_t j = 0; j < raw.size(); ++j) rawf[j] = Transformf(raw[j]);
    poses.push_back(pose_of(rawf));
  }
  std::vector<SoaTransform> out(poses[0].size());
  std::vector<Mat4f> model(raw.size());
  const BlendLayer layers[] = {{poses[0], 0.2f}, {poses[1], 0.5f}, {poses[2], 0.3f}};
  ASSERT_TRUE(blend(layers, rs.rest_pose(), sk.joint_count(), out));
  ASSERT_TRUE(local_to_model(rs, out, model));
  for (int j = 0; j < sk.joint_count(); ++j) {
    const int p = sk.parent(j);
    if (p < 0) continue;
    // Non-root joints do not translate in this clip: the bone is the rest offset.
    const double expected = length(sk.joint(j).rest.translation);
    const Vec3f a = model[size_t(j)].translation_part(), b = model[size_t(p)].translation_part();
    EXPECT_NEAR(length(a - b), expected, 1e-4 * (1 + expected)) << sk.joint(j).name;
  }
}

TEST(PoseOps, BadWeightsAndSizesAreRejectedWithoutWriting) {
  std::mt19937 rng(1);
  const auto a = random_pose(rng, 5), rest = random_pose(rng, 5);
  std::vector<SoaTransform> out(a.size(), SoaTransform::identity());
  const float nan = std::nanf("");
  for (float w : {-0.1f, nan, INFINITY}) {
    const BlendLayer bad[] = {{a, w}};
    EXPECT_FALSE(blend(bad, rest, 5, out)) << w;
    EXPECT_FALSE(apply_additive(a, a, w, {}, 5, out)) << w;
    const PoseLayer layer[] = {{PoseLayer::Mode::Override, a, w}};
    EXPECT_FALSE(apply_layers(a, layer, 5, out)) << w;
  }
  const float bad_mask[] = {1, 1, nan, 1, 1};
  const BlendLayer masked[] = {{a, 1.0f, bad_mask}};
  EXPECT_FALSE(blend(masked, rest, 5, out));
  const float short_mask[] = {1, 1};
  const BlendLayer shorter[] = {{a, 1.0f, short_mask}};
  EXPECT_FALSE(blend(shorter, rest, 5, out));
  std::vector<SoaTransform> small(1);
  const BlendLayer ok[] = {{a, 1.0f}};
  EXPECT_FALSE(blend(ok, rest, 5, small));
  EXPECT_FALSE(blend(ok, rest, 9, out));  // joint count disagrees with the pose size
  EXPECT_FALSE(blend(ok, rest, 5, out, 0.0f));
  EXPECT_FALSE(make_additive(a, small, out));
  for (const SoaTransform& s : out) EXPECT_EQ(s.qw[0], 1.0f);  // nothing written
}

}  // namespace
}  // namespace kinema

namespace kinema {
namespace {

// The vectorized slerp-from-identity against double-precision slerp, over random rotations
// (including near-identity and near-180° ones) and weights in [0, 1] and beyond.
TEST(PoseOps, AdditiveSlerpMatchesDoublePrecisionSlerp) {
  std::mt19937 rng(21);
  std::normal_distribution<double> n(0, 1);
  std::uniform_real_distribution<double> u(0, 1);
  for (int trial = 0; trial < 2000; ++trial) {
    Quat add = normalize(Quat{n(rng), n(rng), n(rng), n(rng)});
    if (trial % 10 == 0) add = Quat::from_axis_angle({0, 0, 1}, 1e-5 * u(rng));
    if (trial % 10 == 1) add = Quat::from_axis_angle({1, 0, 0}, kPi - 1e-4 * u(rng));
    const Quat base = normalize(Quat{n(rng), n(rng), n(rng), n(rng)});
    const double w = trial % 7 == 0 ? 1.0 + u(rng) : u(rng);
    std::vector<SoaTransform> b(1), d(1), out(1);
    b[0] = d[0] = SoaTransform::identity();
    set_joint(b, 0, {{}, Quatf(base), {1, 1, 1}});
    set_joint(d, 0, {{}, Quatf(add), {1, 1, 1}});
    ASSERT_TRUE(apply_additive(b, d, float(w), {}, 1, out));
    const Quat expected = base * slerp(Quat{}, add, w);
    EXPECT_LT(angle_between(Quat(get_joint(out, 0).rotation), expected), 2e-6 * (1 + w))
        << "trial " << trial << " w " << w;
  }
}

}  // namespace
}  // namespace kinema
