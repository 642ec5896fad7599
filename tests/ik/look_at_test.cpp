#include "kinema/ik/look_at.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <limits>

namespace kinema {
namespace {

TEST(LookAt, SixtyDegreesToTheSideTurnsAboutPlusY) {
  // f = (0, 0, 1), target 60° to the side: d = (sin 60°, 0, cos 60°) = (0.866, 0, 0.5);
  // f × d = (0, 0.866, 0): axis +y, angle acos 0.5 = 60°, q = (cos 30°, 0, sin 30°, 0) in
  // (w, x, y, z) — (0, 0.5, 0, 0.866) in kinema's (x, y, z, w).
  const Vec3 f{0, 0, 1};
  const Vec3 d{std::sin(radians(60.0)), 0, std::cos(radians(60.0))};
  EXPECT_NEAR(d.x, 0.866, 5e-4);
  EXPECT_NEAR(cross(f, d).y, 0.866, 5e-4);
  const Quat q = look_rotation(f, d);
  EXPECT_NEAR(q.x, 0.0, 1e-15);
  EXPECT_NEAR(q.y, std::sin(radians(30.0)), 1e-15);
  EXPECT_NEAR(q.z, 0.0, 1e-15);
  EXPECT_NEAR(q.w, std::cos(radians(30.0)), 1e-15);
  EXPECT_NEAR(distance(rotate(q, f), d), 0.0, 1e-15);
}

TEST(LookAt, SpreadsSixtyDegreesOverSpineNeckAndHead) {
  // Spine 20 %, neck 30 %, head 50 % of 60° = 12°, 18°, 30°.
  const Vec3 eye{0, 1.6, 0};
  const Vec3 target = eye + Vec3{std::sin(radians(60.0)), 0, std::cos(radians(60.0))} * 3.0;
  const std::array<double, 3> weights{0.2, 0.3, 0.5};
  std::array<Quat, 3> deltas;
  const LookAtResult r = look_at(eye, {0, 0, 1}, target, weights, {}, deltas);
  EXPECT_EQ(r.status, LookAtStatus::kOk);
  EXPECT_NEAR(degrees(r.angle), 60.0, 1e-12);
  const double expected[3] = {12.0, 18.0, 30.0};
  for (int i = 0; i < 3; ++i) {
    Vec3 axis;
    double angle;
    to_axis_angle(deltas[i], axis, angle);
    EXPECT_NEAR(degrees(angle), expected[i], 1e-9);
    EXPECT_NEAR(axis.y, 1.0, 1e-12);
  }
  // The head's total delta is the product: it now faces the target.
  const Quat head = deltas[0] * deltas[1] * deltas[2];
  EXPECT_NEAR(distance(rotate(head, Vec3{0, 0, 1}), normalize(target - eye)), 0.0, 1e-12);
  EXPECT_NEAR(r.remainder_angle, 0.0, 1e-12);
}

TEST(LookAt, ConesClampAndReportRemainder) {
  const Vec3 eye{0, 0, 0};
  const Vec3 target{std::sin(radians(60.0)), 0, std::cos(radians(60.0))};
  const std::array<double, 3> weights{0.2, 0.3, 0.5};
  const std::array<double, 3> cones{radians(10.0), radians(40.0), radians(20.0)};
  std::array<Quat, 3> deltas;
  const LookAtResult r = look_at(eye, {0, 0, 1}, target, weights, cones, deltas);
  EXPECT_EQ(r.status, LookAtStatus::kClamped);
  const double expected[3] = {10.0, 18.0, 20.0};
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(degrees(angle_between(Quat::identity(), deltas[i])), expected[i], 1e-9);
  }
  // 60° − (10 + 18 + 20) = 12° left for the body, about the same axis.
  EXPECT_NEAR(degrees(r.remainder_angle), 12.0, 1e-9);
  const Quat head = deltas[0] * deltas[1] * deltas[2];
  EXPECT_NEAR(angle_between(r.remainder * head, r.full), 0.0, 1e-12);
}

TEST(LookAt, WeightsBelowOneLeaveARemainder) {
  const std::array<double, 2> weights{0.25, 0.25};
  std::array<Quat, 2> deltas;
  const LookAtResult r = look_at({0, 0, 0}, {0, 0, 1}, {1, 0, 0}, weights, {}, deltas);
  EXPECT_EQ(r.status, LookAtStatus::kClamped);
  EXPECT_NEAR(degrees(r.remainder_angle), 45.0, 1e-9);
}

TEST(LookAt, ParallelAndAntiparallel) {
  EXPECT_EQ(look_rotation({0, 0, 1}, {0, 0, 5}), Quat::identity());
  const Quat back = look_rotation({0, 0, 1}, {0, 0, -1});
  EXPECT_NEAR(distance(rotate(back, Vec3{0, 0, 1}), Vec3{0, 0, -1}), 0.0, 1e-12);
  EXPECT_NEAR(std::abs(back.y), 1.0, 1e-12);               // half turn about up
  const Quat down = look_rotation({0, 1, 0}, {0, -1, 0});  // up parallel: any perpendicular
  EXPECT_NEAR(distance(rotate(down, Vec3{0, 1, 0}), Vec3{0, -1, 0}), 0.0, 1e-12);
  // Nearly parallel stays precise (atan2, not acos).
  const Quat tiny = look_rotation({0, 0, 1}, {1e-9, 0, 1});
  EXPECT_NEAR(2.0 * tiny.y, 1e-9, 1e-18);
}

TEST(LookAt, DegenerateInputs) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::array<double, 3> weights{0.2, 0.3, 0.5};
  std::array<Quat, 3> deltas;
  deltas.fill(Quat{1, 2, 3, 4});
  LookAtResult r = look_at({0, 1, 0}, {0, 0, 1}, {0, 1, 0}, weights, {}, deltas);
  EXPECT_EQ(r.status, LookAtStatus::kTargetAtEye);
  for (const Quat& q : deltas) EXPECT_EQ(q, Quat::identity());
  EXPECT_TRUE(is_finite(r.remainder));

  r = look_at({0, 1, 0}, {0, 0, 1}, {nan, 1, 0}, weights, {}, deltas);
  EXPECT_EQ(r.status, LookAtStatus::kInvalidInput);
  for (const Quat& q : deltas) EXPECT_EQ(q, Quat::identity());

  const std::array<double, 3> too_much{0.5, 0.5, 0.5};
  EXPECT_EQ(look_at({}, {0, 0, 1}, {1, 0, 0}, too_much, {}, deltas).status,
            LookAtStatus::kInvalidInput);
  const std::array<double, 2> bad_cones{0.1, 0.1};
  EXPECT_EQ(look_at({}, {0, 0, 1}, {1, 0, 0}, weights, bad_cones, deltas).status,
            LookAtStatus::kInvalidInput);
  EXPECT_EQ(look_at({}, {0, 0, 0}, {1, 0, 0}, weights, {}, deltas).status,
            LookAtStatus::kInvalidInput);
  EXPECT_EQ(look_rotation({nan, 0, 1}, {0, 0, 1}), Quat::identity());
}

}  // namespace
}  // namespace kinema
