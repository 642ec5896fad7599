// Where DQS and LBS differ (docs/worked_examples.md, "Dual-quaternion skinning"): the twisted
// joint ring and DQS's flip past 180°, the bulge of a bent tube, the palette size, a 60° bend, and
// the angle of a blend of two rotations about one axis, solved by the scalar, SIMD and
// multi-threaded paths.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "kinema/skin/skinning.h"

namespace kinema {
namespace {

constexpr float kDeg = std::numbers::pi_v<float> / 180.0f;

// Rotation by `degrees` about `axis` through `center`, as a palette entry.
Affine3x4f rotation_about(const Vec3f& axis, float degrees, const Vec3f& center) {
  const Quatf q = Quatf::from_axis_angle(axis, degrees * kDeg);
  const Mat4f m = Mat4f::translation(center) * Mat4f::rotation(q) * Mat4f::translation(-center);
  return to_affine3x4(m);
}

// Skins `positions` with two bones (bone 0 fixed, bone 1 = `bone1`), weights per vertex
// (1 − w, w), by every path; checks that the paths agree and returns the scalar result.
struct TwoBone {
  std::vector<Vec3f> positions;
  std::vector<float> w1;
  Affine3x4f bone1;

  std::vector<Vec3f> run(bool dqs) const {
    std::vector<uint16_t> joints;
    std::vector<float> weights;
    for (const float w : w1) {
      joints.insert(joints.end(), {0, 1});
      weights.insert(weights.end(), {1 - w, w});
    }
    const SkinMeshView view{positions, {}, {}, 2, joints, weights};
    const std::vector<Affine3x4f> palette{Affine3x4f::identity(), bone1};
    std::vector<DualQuatf> dq(2);
    EXPECT_TRUE(dual_quat_palette(palette, dq, {}));
    const DqsPaletteView dqp{dq, {}};
    const size_t n = positions.size();
    std::vector<Vec3f> scalar(n), simd(n), parallel(n), mesh_simd(n);
    const SkinMesh mesh = make_skin_mesh(view, 2);
    if (dqs) {
      EXPECT_TRUE(skin_dqs(view, dqp, {scalar, {}, {}}));
      EXPECT_TRUE(skin_dqs_simd(view, dqp, {simd, {}, {}}));
      EXPECT_TRUE(skin_dqs_parallel(view, dqp, {parallel, {}, {}}, {}, {}, 3));
      EXPECT_TRUE(skin_dqs(mesh, dqp, {mesh_simd, {}, {}}));
    } else {
      EXPECT_TRUE(skin_lbs(view, palette, {scalar, {}, {}}));
      EXPECT_TRUE(skin_lbs_simd(view, palette, {simd, {}, {}}));
      EXPECT_TRUE(skin_lbs_parallel(view, palette, {parallel, {}, {}}, 3));
      EXPECT_TRUE(skin_lbs(mesh, palette, {mesh_simd, {}, {}}));
    }
    for (size_t v = 0; v < n; ++v) {
      EXPECT_LE(distance(scalar[v], simd[v]), 1e-5f) << v;
      EXPECT_LE(distance(scalar[v], parallel[v]), 1e-5f) << v;
      EXPECT_LE(distance(scalar[v], mesh_simd[v]), 1e-5f) << v;
    }
    return scalar;
  }
};

TEST(DqsVersusLbs, TwistKeepsRingRadiusAndFlipsPast180) {
  // Bone 1 twists about x (its own axis, through the elbow (2, 0, 0)); ring vertex (2, 0, 0.5).
  struct Case {
    float phi, lbs_radius, ring_twist;
  };
  for (const Case c : {Case{90, 0.354f, 45}, Case{170, 0.044f, 85}, Case{190, 0.044f, -85}}) {
    const TwoBone arm{{{2, 0, 0.5f}}, {0.5f}, rotation_about({1, 0, 0}, c.phi, {2, 0, 0})};
    const Vec3f l = arm.run(false)[0], d = arm.run(true)[0];
    EXPECT_NEAR(std::hypot(l.y, l.z), c.lbs_radius, 5e-4f) << c.phi;
    EXPECT_NEAR(std::hypot(d.y, d.z), 0.5f, 1e-4f) << c.phi;
    // The ring turned by θ about +x moves (0, 0, 0.5) to (0, −0.5 sin θ, 0.5 cos θ).
    EXPECT_NEAR(std::atan2(-d.y, d.z) / kDeg, c.ring_twist, 0.05f) << c.phi;
    EXPECT_NEAR(d.x, 2.0f, 1e-5f);
  }
  // The 90° twist's vertex: (2, −0.3536, 0.3536).
  const Vec3f d90 =
      TwoBone{{{2, 0, 0.5f}}, {0.5f}, rotation_about({1, 0, 0}, 90, {2, 0, 0})}.run(true)[0];
  EXPECT_NEAR(d90.y, -0.3536f, 1e-4f);
  EXPECT_NEAR(d90.z, 0.3536f, 1e-4f);
}

TEST(DqsVersusLbs, BentTubeBulgesOutwardInsteadOfCollapsing) {
  // A tube of radius 0.5 along x, elbow at x = 2, bone 1 bent 90° about z; the weight of bone 1
  // ramps from 0 at x = 1.5 to 1 at x = 2.5 with the smoothstep ramp s²(3 − 2s). The outer
  // surface (y = −0.5) bulges out to y = −0.544 with DQS, 0.044 beyond the upper arm; LBS never
  // goes outside it. (A linear ramp w = s swings the vertices before the joint further: 0.067.)
  const auto bulge = [](bool smooth, bool dqs) {
    TwoBone tube{{}, {}, rotation_about({0, 0, 1}, 90, {2, 0, 0})};
    for (int i = 0; i <= 1000; ++i) {
      const float s = float(i) / 1000.0f;
      tube.positions.push_back({1.5f + s, -0.5f, 0});
      tube.w1.push_back(smooth ? s * s * (3 - 2 * s) : s);
    }
    float lowest = 0;
    for (const Vec3f& p : tube.run(dqs)) lowest = std::min(lowest, p.y);
    return -0.5f - lowest;
  };
  EXPECT_NEAR(bulge(true, true), 0.044f, 5e-4f);
  EXPECT_LE(bulge(true, false), 1e-6f);
  EXPECT_LE(bulge(false, false), 1e-6f);
  EXPECT_GT(bulge(false, true), 0.06f);
}

TEST(DqsVersusLbs, DqsPaletteIsTwoThirdsOfLbs) {
  // A GPU palette holds two float4 per joint for DQS instead of a 3×4 matrix: 8 floats, not 12.
  EXPECT_EQ(sizeof(DualQuatf), 8 * sizeof(float));
  EXPECT_EQ(sizeof(Affine3x4f), 12 * sizeof(float));
}

TEST(DqsVersusLbs, SixtyDegreeBendKeepsRadiusWhereLbsThins) {
  const TwoBone arm{{{2, -0.5f, 0}}, {0.5f}, rotation_about({0, 0, 1}, 60, {2, 0, 0})};
  const Vec3f l = arm.run(false)[0], d = arm.run(true)[0];
  const float c30 = std::cos(30 * kDeg);
  // LBS: the midpoint of (2, −0.5) and (2.433, −0.25): (2.2165, −0.375), 0.5·cos 30° = 0.4330
  // from the elbow.
  EXPECT_NEAR(l.x, 2.2165f, 1e-4f);
  EXPECT_NEAR(l.y, -0.3750f, 1e-4f);
  EXPECT_NEAR(distance(l, Vec3f{2, 0, 0}), 0.5f * c30, 1e-5f);
  EXPECT_NEAR(distance(l, Vec3f{2, 0, 0}), 0.4330f, 1e-4f);
  // DQS: half the bend (30°) about the elbow: (2 + 0.5 sin 30°, −0.5 cos 30°) = (2.25, −0.4330).
  EXPECT_NEAR(d.x, 2.25f, 1e-4f);
  EXPECT_NEAR(d.y, -0.4330f, 1e-4f);
  EXPECT_NEAR(distance(d, Vec3f{2, 0, 0}), 0.5f, 1e-5f);
}

TEST(DqsVersusLbs, CoaxialBlendTurnsLessThanSlerp) {
  // Bones rotated by 0 and φ about the same axis through the same point; weight w on the second.
  // DLB gives a rotation about that axis and point by 2·atan2(w sin φ/2, 1 − w + w cos φ/2).
  const float phi = 90, w = 0.25f;
  const Vec3f center{2, 0, 0}, axis{0, 0, 1};
  const float formula =
      2 * std::atan2(w * std::sin(phi * kDeg / 2), 1 - w + w * std::cos(phi * kDeg / 2)) / kDeg;
  EXPECT_NEAR(formula, 21.60f, 0.005f);
  const float slerp = w * phi;  // slerp turns by w·φ = 22.5°
  EXPECT_NEAR(slerp - formula, 0.90f, 0.005f);
  TwoBone bones{{{2, -0.5f, 0}, {3, 1, 0.25f}, {0, 0, 0}, {2, 0, 1}},
                {w, w, w, w},
                rotation_about(axis, phi, center)};
  const std::vector<Vec3f> d = bones.run(true);
  const Affine3x4f expected = rotation_about(axis, formula, center);
  const Affine3x4f by_slerp = rotation_about(axis, slerp, center);
  for (size_t v = 0; v < d.size(); ++v) {
    EXPECT_LE(distance(d[v], expected.transform_point(bones.positions[v])), 1e-5f) << v;
    // Slerp would rotate by 0.9° more: off by 0.9° · radius from the axis.
    const float radius = std::hypot(bones.positions[v].x - 2, bones.positions[v].y);
    EXPECT_NEAR(distance(d[v], by_slerp.transform_point(bones.positions[v])),
                2 * radius * std::sin((slerp - formula) * kDeg / 2), 1e-5f);
  }
}

}  // namespace
}  // namespace kinema
