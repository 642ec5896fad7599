#include "kinema/ik/joint_limits.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "kinema/core/error.h"

namespace kinema {
namespace {

Quat random_rotation(std::mt19937& rng) {
  std::normal_distribution<double> n(0.0, 1.0);
  return normalize(Quat{n(rng), n(rng), n(rng), n(rng)});
}

// Same rotation (q ≡ −q).
double rot_distance(const Quat& a, const Quat& b) { return angle_between(a, b); }

TEST(JointLimits, HingeClamps160To150) {
  const HingeLimit knee = make_hinge_limit({1, 0, 0}, 0.0, radians(150.0));
  const Quat asked = Quat::from_axis_angle({1, 0, 0}, radians(160.0));
  EXPECT_FALSE(within(knee, asked));
  const Quat got = project(knee, asked);
  EXPECT_NEAR(degrees(twist_angle(got, {1, 0, 0})), 150.0, 1e-9);
  EXPECT_TRUE(within(knee, got));
  EXPECT_NEAR(degrees(clamp_angle(radians(160.0), 0.0, radians(150.0))), 150.0, 1e-12);
}

TEST(JointLimits, ClampAngleGoesToNearerEndAroundTheCircle) {
  const double lo = radians(-10.0), hi = radians(170.0);
  EXPECT_NEAR(degrees(clamp_angle(radians(-170.0), lo, hi)), 170.0, 1e-9);
  EXPECT_NEAR(degrees(clamp_angle(radians(-30.0), lo, hi)), -10.0, 1e-9);
  EXPECT_NEAR(degrees(clamp_angle(radians(45.0 + 360.0), lo, hi)), 45.0, 1e-9);
  EXPECT_EQ(clamp_angle(std::numeric_limits<double>::quiet_NaN(), lo, hi), 0.0);
}

TEST(JointLimits, HingeDropsOffAxisRotation) {
  const HingeLimit h = make_hinge_limit({0, 0, 2}, radians(-45.0), radians(45.0));
  EXPECT_NEAR(length(h.axis), 1.0, 1e-15);
  const Quat q = Quat::from_axis_angle({0, 1, 0}, 0.3) * Quat::from_axis_angle({0, 0, 1}, 0.2);
  EXPECT_FALSE(within(h, q));
  const Quat p = project(h, q);
  EXPECT_TRUE(within(h, p));
  EXPECT_NEAR(twist_angle(p, {0, 0, 1}), 0.2, 1e-12);
}

TEST(JointLimits, SwingTwistCircularCone) {
  const SwingTwistLimit s = make_swing_twist_limit({0, 1, 0}, radians(30.0), -0.5, 0.5);
  // 50° swing about X with no twist → 30° about X.
  const Quat q = Quat::from_axis_angle({1, 0, 0}, radians(50.0));
  const Quat p = project(s, q);
  EXPECT_NEAR(rot_distance(p, Quat::from_axis_angle({1, 0, 0}, radians(30.0))), 0.0, 1e-12);
  // Twist alone is clamped to the range.
  const Quat t = project(s, Quat::from_axis_angle({0, 1, 0}, 0.9));
  EXPECT_NEAR(twist_angle(t, {0, 1, 0}), 0.5, 1e-12);
  // Both: the swing keeps its direction, the twist is clamped.
  const Quat both =
      Quat::from_axis_angle({1, 0, 1}, radians(60.0)) * Quat::from_axis_angle({0, 1, 0}, -1.0);
  const SwingTwistAngles m = measure(s, project(s, both));
  EXPECT_NEAR(std::hypot(m.u, m.v), radians(30.0), 1e-12);
  EXPECT_NEAR(m.twist, -0.5, 1e-12);
}

TEST(JointLimits, SwingTwistEllipticalCone) {
  // 20° about X, 60° about twist × X.
  const SwingTwistLimit s =
      make_swing_twist_limit({0, 1, 0}, {1, 0, 0}, radians(20.0), radians(60.0), -0.1, 0.1);
  EXPECT_NEAR(dot(s.swing_axis_b, cross(s.twist_axis, s.swing_axis_a)), 1.0, 1e-15);
  EXPECT_TRUE(within(s, Quat::from_axis_angle(s.swing_axis_b, radians(55.0))));
  EXPECT_FALSE(within(s, Quat::from_axis_angle(s.swing_axis_a, radians(25.0))));
  const Quat p = project(s, Quat::from_axis_angle(s.swing_axis_a, radians(25.0)));
  EXPECT_NEAR(measure(s, p).u, radians(20.0), 1e-12);
  EXPECT_NEAR(measure(s, p).v, 0.0, 1e-12);
  // A diagonal swing lands on the ellipse at its closest point in the (u, v) plane: compare with
  // a dense sampling of the ellipse.
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> uni(-2.5, 2.5);
  for (int k = 0; k < 200; ++k) {
    const double u0 = uni(rng), v0 = uni(rng);
    if (std::hypot(u0, v0) > kPi) continue;
    const Quat d = from_rotation_vector(s.swing_axis_a * u0 + s.swing_axis_b * v0);
    if (within(s, d, 0.0)) continue;
    const SwingTwistAngles md = measure(s, project(s, d));
    const double e = std::pow(md.u / radians(20.0), 2) + std::pow(md.v / radians(60.0), 2);
    EXPECT_NEAR(e, 1.0, 1e-12);
    double best = 1e9;
    for (int j = 0; j < 20000; ++j) {
      const double t = 2.0 * kPi * j / 20000.0;
      best = std::min(
          best, std::hypot(radians(20.0) * std::cos(t) - u0, radians(60.0) * std::sin(t) - v0));
    }
    const double got = std::hypot(md.u - u0, md.v - v0);
    EXPECT_LE(got, best + 1e-9) << u0 << " " << v0;
    EXPECT_GE(got, best - 1e-4) << u0 << " " << v0;  // the sampling's resolution
  }
}

TEST(JointLimits, ZeroHalfAngleForbidsThatSwing) {
  const SwingTwistLimit s = make_swing_twist_limit({0, 1, 0}, {1, 0, 0}, 0.0, 0.5, -kPi, kPi);
  const Quat p = project(s, from_rotation_vector(s.swing_axis_a * 0.3 + s.swing_axis_b * 0.9));
  const SwingTwistAngles m = measure(s, p);
  EXPECT_NEAR(m.u, 0.0, 1e-12);
  EXPECT_NEAR(m.v, 0.5, 1e-12);
  EXPECT_TRUE(within(s, p));
}

TEST(JointLimits, BuildersRejectBadInput) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(make_hinge_limit({0, 0, 0}, 0, 1), Error);
  EXPECT_THROW(make_hinge_limit({1, 0, 0}, 1, 0), Error);
  EXPECT_THROW(make_hinge_limit({1, 0, 0}, nan, 0), Error);
  EXPECT_THROW(make_hinge_limit({1, 0, 0}, 0, 4.0), Error);
  EXPECT_THROW(make_swing_twist_limit({0, 1, 0}, {0, 2, 0}, 0.1, 0.1, 0, 0), Error);
  EXPECT_THROW(make_swing_twist_limit({0, 1, 0}, -0.1, 0, 0), Error);
  EXPECT_THROW(make_swing_twist_limit({nan, 1, 0}, 0.1, 0, 0), Error);
}

TEST(JointLimits, NonFiniteRotationGivesFiniteResult) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Quat bad{nan, 0, 0, 1};
  const HingeLimit h = make_hinge_limit({1, 0, 0}, 0.2, 0.5);
  const SwingTwistLimit s = make_swing_twist_limit({0, 1, 0}, 0.3, 0.2, 0.5);
  EXPECT_TRUE(is_finite(project(h, bad)));
  EXPECT_TRUE(within(h, project(h, bad)));
  EXPECT_TRUE(is_finite(project(s, bad)));
  EXPECT_TRUE(within(s, project(s, bad)));
  EXPECT_TRUE(is_finite(project(JointLimit::none(), bad)));
}

TEST(JointLimits, TwistAtPiIsConsistent) {
  const SwingTwistLimit s = make_swing_twist_limit({0, 1, 0}, 0.3, 0.0, kPi);
  const Quat q = Quat::from_axis_angle({0, -1, 0}, kPi);  // −π twist ≡ π
  EXPECT_TRUE(within(s, q));
  EXPECT_NEAR(rot_distance(project(s, q), q), 0.0, 1e-12);
}

// Randomized 10k: projected rotations are within, within rotations are unchanged, projection is
// idempotent, for hinge, circular and elliptical limits through the JointLimit dispatcher.
TEST(JointLimits, RandomizedProjectionProperties) {
  std::mt19937 rng(1234);
  std::uniform_real_distribution<double> uni(0.0, 1.0);
  for (int i = 0; i < 10000; ++i) {
    const Vec3 axis = random_rotation(rng).vec();
    const double lo = -kPi + uni(rng) * kPi, hi = lo + uni(rng) * (kPi - lo);
    JointLimit limit;
    switch (i % 3) {
      case 0:
        limit = JointLimit::of(make_hinge_limit(axis, lo, hi));
        break;
      case 1:
        limit = JointLimit::of(make_swing_twist_limit(axis, uni(rng) * kPi, lo, hi));
        break;
      default:
        limit = JointLimit::of(make_swing_twist_limit(axis, random_rotation(rng).vec(),
                                                      uni(rng) * kPi, uni(rng) * kPi, lo, hi));
        break;
    }
    const Quat q = random_rotation(rng);
    const Quat p = project(limit, q);
    ASSERT_TRUE(is_finite(p)) << i;
    ASSERT_NEAR(length(p), 1.0, 1e-12) << i;
    ASSERT_TRUE(within(limit, p, 1e-9)) << i;
    const Quat pp = project(limit, p);
    ASSERT_LT(rot_distance(p, pp), 1e-9) << i;
    if (within(limit, q, 0.0)) {
      ASSERT_LT(rot_distance(p, q), 1e-14) << i;
    }
  }
}

}  // namespace
}  // namespace kinema
