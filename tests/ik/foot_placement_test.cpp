#include "kinema/ik/foot_placement.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "kinema/math/scalar.h"

namespace kinema {
namespace {

constexpr double kDeg = 180.0 / kPi;

// Knee of a leg from hip to ankle with both bones l long, bent forward (+x).
Vec3 bent_knee(const Vec3& hip, const Vec3& ankle, double l) {
  const Vec3 d = ankle - hip;
  const double half = length(d) / 2;
  const Vec3 side = normalize(cross(d, Vec3{0, 0, 1}));  // in the xy plane, ⟂ d
  const Vec3 fwd = side.x > 0 ? side : -side;
  return hip + d * 0.5 + fwd * std::sqrt(l * l - half * half);
}

// The worked layout (side view: x forward, y up; docs/worked_examples.md, "Joint limits, foot
// placement, look-at"): hip (0, 0.85), back foot (−0.15, 0), front foot (+0.15, 0); the legs are
// 0.1 m apart along z.
std::array<FootPlacementLeg, 2> step_legs() {
  std::array<FootPlacementLeg, 2> legs;
  for (int i = 0; i < 2; ++i) {
    const double z = i == 0 ? 0.1 : -0.1, x = i == 0 ? -0.15 : 0.15;
    legs[static_cast<std::size_t>(i)].hip = {0, 0.85, z};
    legs[static_cast<std::size_t>(i)].ankle = {x, 0, z};
    legs[static_cast<std::size_t>(i)].knee = bent_knee({0, 0.85, z}, {x, 0, z}, 0.45);
  }
  return legs;
}

// −0.10 for x ≤ 0, +0.15 for x ≥ 0.05 (flat around both feet).
HeightField dip_and_step_ground() {
  const int w = 41;
  std::vector<double> h;
  for (int iz = 0; iz < w; ++iz)
    for (int ix = 0; ix < w; ++ix) h.push_back(ix <= 20 ? -0.10 : 0.15);
  return HeightField(-1, -1, 0.05, w, w, h);
}

FootPlacementSettings knee_forward_settings() {
  FootPlacementSettings s;
  s.forward = {1, 0, 0};
  return s;
}

TEST(FootPlacement, PelvisDropsAndKneesBendOnADipAndAStep) {
  const auto legs = step_legs();
  // Animated knee bend: d = √(0.15² + 0.85²) = 0.863, π − arccos((2·0.45² − d²)/(2·0.45²)) = 32.9°.
  const double l = 0.45;
  const double d = std::sqrt(0.15 * 0.15 + 0.85 * 0.85);
  EXPECT_NEAR(d, 0.863, 5e-4);
  const double animated_bend = kPi - std::acos((2 * l * l - d * d) / (2 * l * l));
  EXPECT_NEAR(animated_bend * kDeg, 32.9, 0.05);

  const HeightField ground = dip_and_step_ground();
  FootPlacementState state;
  std::array<FootPlacementLegResult, 2> out;
  const FootPlacementResult r =
      update_foot_placement(legs, ground, knee_forward_settings(), 1.0 / 60, state, out);
  ASSERT_EQ(r.status, FootPlacementStatus::kOk);
  EXPECT_NEAR(r.target_pelvis_offset, -0.10, 1e-15);
  EXPECT_NEAR(r.pelvis_offset, -0.10, 1e-15);  // pelvis (0, 0.75)
  EXPECT_NEAR(legs[0].hip.y + r.pelvis_offset, 0.75, 1e-15);
  EXPECT_NEAR(out[0].target_offset, -0.10, 1e-15);
  EXPECT_NEAR(out[1].target_offset, 0.15, 1e-15);
  EXPECT_NEAR(length(out[0].target - Vec3{-0.15, -0.10, 0.1}), 0.0, 1e-15);
  EXPECT_NEAR(length(out[1].target - Vec3{0.15, 0.15, -0.1}), 0.0, 1e-15);
  // Back foot: 0.863 away again → 32.9°; front foot: 0.618 away → 93.2°.
  EXPECT_NEAR(distance(Vec3{0, 0.75, -0.1}, out[1].target), 0.618, 5e-4);
  EXPECT_NEAR(out[0].ik.mid_bend * kDeg, 32.9, 0.05);
  EXPECT_NEAR(out[1].ik.mid_bend * kDeg, 93.2, 0.05);
  for (const auto& o : out) {
    EXPECT_TRUE(o.ik.reached);
    EXPECT_NEAR(length(o.ik.end_position - o.target), 0.0, 1e-9);
    EXPECT_GT(o.ik.mid_position.x, o.target.x);                          // knees bend forward (+x)
    EXPECT_LT(angle_between(o.foot_rotation, Quat::identity()), 1e-12);  // flat steps
  }
}

TEST(FootPlacement, FlatGroundAtAnimationHeightChangesNothing) {
  const auto legs = step_legs();
  const HeightField flat(-1, -1, 0.5, 5, 5, std::vector<double>(25, 0.0));
  FootPlacementState state;
  std::array<FootPlacementLegResult, 2> out;
  for (int frame = 0; frame < 3; ++frame) {
    const FootPlacementResult r =
        update_foot_placement(legs, flat, knee_forward_settings(), 1.0 / 30, state, out);
    ASSERT_EQ(r.status, FootPlacementStatus::kOk);
    EXPECT_EQ(r.pelvis_offset, 0.0);
    for (std::size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(out[i].offset, 0.0);
      EXPECT_LT(angle_between(out[i].ik.root_delta, Quat::identity()), 1e-7);
      EXPECT_LT(angle_between(out[i].ik.mid_delta, Quat::identity()), 1e-7);
      EXPECT_LT(length(out[i].ik.mid_position - legs[i].knee), 1e-9);
      EXPECT_LT(length(out[i].ik.end_position - legs[i].ankle), 1e-9);
      EXPECT_EQ(out[i].foot_rotation, Quat::identity());
    }
  }
}

TEST(FootPlacement, FeetOnSlopedGroundKeepBoneLengthsAndTilt) {
  // Sloped mesh y = 0.05 + 0.2·x − 0.1·z; ankles 0.08 above the sole, animated on the floor.
  auto y = [](double x, double z) { return 0.05 + 0.2 * x - 0.1 * z; };
  const TriangleMeshGround ground(
      {{-2, y(-2, -2), -2}, {2, y(2, -2), -2}, {2, y(2, 2), 2}, {-2, y(-2, 2), 2}},
      {0, 1, 2, 0, 2, 3});
  auto legs = step_legs();
  for (auto& leg : legs) {
    leg.ankle_height = 0.08;
    leg.hip.y += 0.08;
    leg.knee.y += 0.08;
    leg.ankle.y += 0.08;
  }
  FootPlacementSettings s = knee_forward_settings();
  s.max_tilt = 5.0 / kDeg;
  FootPlacementState state;
  std::array<FootPlacementLegResult, 2> out;
  const FootPlacementResult r = update_foot_placement(legs, ground, s, 0.0, state, out);
  ASSERT_EQ(r.status, FootPlacementStatus::kOk);
  EXPECT_LE(r.pelvis_offset, 0.0);
  const Vec3 n = normalize(Vec3{-0.2, 1, 0.1});
  for (std::size_t i = 0; i < 2; ++i) {
    const auto& o = out[i];
    ASSERT_TRUE(o.ground_found);
    ASSERT_TRUE(o.ik.reached);
    const Vec3 e = o.ik.end_position;
    EXPECT_NEAR(e.y - 0.08, y(e.x, e.z), 1e-6);  // the sole is on the ground
    const Vec3 hip = legs[i].hip + Vec3{0, r.pelvis_offset, 0};
    EXPECT_NEAR(distance(hip, o.ik.mid_position), 0.45, 1e-9);
    EXPECT_NEAR(distance(o.ik.mid_position, e), 0.45, 1e-9);
    EXPECT_NEAR(length(o.ground.normal - n), 0.0, 1e-12);
    // Tilt clamped to 5° (the slope is 12.6°), towards the normal.
    EXPECT_NEAR(angle_between(o.foot_rotation, Quat::identity()) * kDeg, 5.0, 1e-9);
    const Vec3 tilted_up = rotate(o.foot_rotation, Vec3{0, 1, 0});
    EXPECT_NEAR(
        length(normalize(cross(Vec3{0, 1, 0}, tilted_up)) - normalize(cross(Vec3{0, 1, 0}, n))),
        0.0, 1e-9);
  }
  s.max_tilt = -1;  // unclamped: up goes exactly to the normal
  state.reset();
  update_foot_placement(legs, ground, s, 0.0, state, out);
  EXPECT_NEAR(length(rotate(out[0].foot_rotation, Vec3{0, 1, 0}) - n), 0.0, 1e-12);
}

TEST(FootPlacement, SpringHalfLifeConvergesWithoutOvershoot) {
  double x = 0, v = 0;
  critically_damped_spring(x, v, 1.0, 0.2, 0.2);
  EXPECT_NEAR(x, 0.5, 1e-12);  // half-way after one half-life
  x = 0;
  v = 0;
  double prev = 0;
  for (int i = 0; i < 240; ++i) {
    critically_damped_spring(x, v, 1.0, 0.1, 1.0 / 120);
    EXPECT_GE(x, prev);
    EXPECT_LE(x, 1.0);
    prev = x;
  }
  EXPECT_NEAR(x, 1.0, 1e-6);
  // Zero half-life snaps; zero dt does nothing.
  critically_damped_spring(x, v, 3.0, 0.0, 0.01);
  EXPECT_EQ(x, 3.0);
  EXPECT_EQ(v, 0.0);
  critically_damped_spring(x, v, 5.0, 0.1, 0.0);
  EXPECT_EQ(x, 3.0);
}

TEST(FootPlacement, StepIsSmoothedMonotonically) {
  const auto legs = step_legs();
  const HeightField flat(-1, -1, 0.5, 5, 5, std::vector<double>(25, 0.0));
  const HeightField dip_and_step = dip_and_step_ground();
  FootPlacementState state;
  std::array<FootPlacementLegResult, 2> out;
  const FootPlacementSettings s = knee_forward_settings();
  update_foot_placement(legs, flat, s, 1.0 / 60, state, out);  // settle on the flat floor
  double prev_pelvis = 0, prev_front = 0;
  for (int frame = 0; frame < 120; ++frame) {
    const FootPlacementResult r =
        update_foot_placement(legs, dip_and_step, s, 1.0 / 60, state, out);
    ASSERT_EQ(r.status, FootPlacementStatus::kOk);
    EXPECT_LE(r.pelvis_offset, prev_pelvis + 1e-15);
    EXPECT_GE(r.pelvis_offset, -0.10 - 1e-15);  // never past the target
    EXPECT_GE(out[1].offset, prev_front - 1e-15);
    EXPECT_LE(out[1].offset, 0.15 + 1e-15);
    EXPECT_TRUE(std::isfinite(out[1].ik.mid_bend));
    prev_pelvis = r.pelvis_offset;
    prev_front = out[1].offset;
  }
  EXPECT_NEAR(prev_pelvis, -0.10, 1e-6);
  EXPECT_NEAR(prev_front, 0.15, 1e-6);
  EXPECT_NEAR(out[1].ik.mid_bend * kDeg, 93.2, 0.05);
}

TEST(FootPlacement, InvalidInputIsReportedWithoutNaN) {
  auto legs = step_legs();
  legs[1].knee.y = std::numeric_limits<double>::quiet_NaN();
  const HeightField ground = dip_and_step_ground();
  FootPlacementState state;
  std::array<FootPlacementLegResult, 2> out;
  FootPlacementResult r =
      update_foot_placement(legs, ground, knee_forward_settings(), 0.1, state, out);
  EXPECT_EQ(r.status, FootPlacementStatus::kInvalidInput);
  EXPECT_FALSE(state.started);
  EXPECT_EQ(r.pelvis_offset, 0.0);
  for (const auto& o : out) {
    EXPECT_TRUE(is_finite(o.target));
    EXPECT_TRUE(is_finite(o.foot_rotation));
    EXPECT_TRUE(is_finite(o.ik.root_delta));
  }
  // Mismatched spans and NaN dt.
  const auto good = step_legs();
  std::array<FootPlacementLegResult, 1> one;
  r = update_foot_placement(good, ground, knee_forward_settings(), 0.1, state, one);
  EXPECT_EQ(r.status, FootPlacementStatus::kInvalidInput);
  r = update_foot_placement(good, ground, knee_forward_settings(),
                            std::numeric_limits<double>::quiet_NaN(), state, out);
  EXPECT_EQ(r.status, FootPlacementStatus::kInvalidInput);
  // No ground under the feet: offsets 0, legs unchanged.
  const HeightField far(10, 10, 1, 2, 2, {0, 0, 0, 0});
  r = update_foot_placement(good, far, knee_forward_settings(), 0.1, state, out);
  ASSERT_EQ(r.status, FootPlacementStatus::kOk);
  EXPECT_FALSE(out[0].ground_found);
  EXPECT_EQ(r.pelvis_offset, 0.0);
}

TEST(FootPlacement, ApplyToLocalTransforms) {
  // pelvis(0) → hipL(1) → kneeL(2) → ankleL(3); pelvis → hipR(4) → kneeR(5) → ankleR(6).
  const auto legs = step_legs();
  const std::vector<int> parents{-1, 0, 1, 2, 0, 4, 5};
  std::vector<Transform> local(7);
  local[0].translation = {0, 0.85, 0};
  for (int i = 0; i < 2; ++i) {
    const FootPlacementLeg& g = legs[static_cast<std::size_t>(i)];
    const int b = 1 + 3 * i;
    local[static_cast<std::size_t>(b)].translation = g.hip - Vec3{0, 0.85, 0};
    local[static_cast<std::size_t>(b + 1)].translation = g.knee - g.hip;
    local[static_cast<std::size_t>(b + 2)].translation = g.ankle - g.knee;
  }
  const HeightField ground = dip_and_step_ground();
  FootPlacementState state;
  std::array<FootPlacementLegResult, 2> out;
  const FootPlacementResult r =
      update_foot_placement(legs, ground, knee_forward_settings(), 0.0, state, out);
  const std::array<FootPlacementJoints, 2> joints{{{1, 2, 3}, {4, 5, 6}}};
  ASSERT_TRUE(apply_foot_placement(r, out, joints, 0, parents, local));
  std::vector<Transform> model(7);
  for (std::size_t j = 0; j < 7; ++j)
    model[j] = parents[j] < 0 ? local[j] : model[static_cast<std::size_t>(parents[j])] * local[j];
  EXPECT_NEAR(model[0].translation.y, 0.75, 1e-12);
  EXPECT_NEAR(length(model[3].translation - out[0].target), 0.0, 1e-9);
  EXPECT_NEAR(length(model[6].translation - out[1].target), 0.0, 1e-9);
  EXPECT_NEAR(length(model[5].translation - out[1].ik.mid_position), 0.0, 1e-9);
  // Bad indices change nothing.
  const std::vector<Transform> before = local;
  const std::array<FootPlacementJoints, 2> bad{{{1, 2, 3}, {4, 6, 5}}};
  EXPECT_FALSE(apply_foot_placement(r, out, bad, 0, parents, local));
  EXPECT_EQ(local, before);
}

}  // namespace
}  // namespace kinema
