// Joint limits (kinema/ik/joint_limits.h) inside the CCD and Jacobian solvers: after any solve
// every joint is within its limit.
#include "kinema/ik/limit_hook.h"

#include <gtest/gtest.h>

#include <array>
#include <random>

#include "kinema/ik/ccd.h"
#include "kinema/ik/jacobian.h"

namespace kinema {
namespace {

constexpr double kDeg = kPi / 180.0;

// A leg hanging down −Y: hip ball joint (cone 60°, twist ±30°), knee hinge about +X in
// [0°, 150°], ankle ball (cone 30°). The bind pose is the reference.
struct Leg {
  std::array<Vec3, 3> offsets{Vec3{0, -0.45, 0}, Vec3{0, -0.45, 0}, Vec3{0, 0, 0.15}};
  std::array<JointLimit, 3> limits{
      JointLimit::of(make_swing_twist_limit({0, -1, 0}, 60 * kDeg, -30 * kDeg, 30 * kDeg)),
      JointLimit::of(make_hinge_limit({1, 0, 0}, 0, 150 * kDeg)),
      JointLimit::of(make_swing_twist_limit({0, 0, 1}, 30 * kDeg, -10 * kDeg, 10 * kDeg))};
  IkJointLimits joint_limits{limits, {}};
  IkChain chain{{0, 0.9, 0}, Quat::identity(), offsets};
};

void expect_within(const Leg& leg, std::span<const Quat> local) {
  for (std::size_t j = 0; j < 3; ++j)
    EXPECT_TRUE(within(leg.limits[j], local[j], 1e-6)) << "joint " << j;
}

TEST(IkLimits, CcdAndJacobianRespectLimits) {
  const Leg leg;
  const IkLimitHook hook = make_limit_hook(leg.joint_limits);
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-1, 1);
  std::array<IkJoint, 3> joints{IkJoint{IkJointType::kBall, {}},
                                IkJoint{IkJointType::kHinge, {1, 0, 0}},
                                IkJoint{IkJointType::kBall, {}}};
  JacobianSettings js;
  js.settings = IkSettings{1e-4, 30};
  js.lambda = 0.1;
  js.max_joint_step = 0.3;
  for (int k = 0; k < 2000; ++k) {
    const Vec3 t = leg.chain.base_position + Vec3{u(rng), u(rng), u(rng)} * 0.9;
    std::array<Quat, 3> a{Quat::identity(), Quat::identity(), Quat::identity()};
    const IkResult rc = ccd_solve(leg.chain, a, t, {}, hook);
    ASSERT_NE(rc.status, IkStatus::kInvalidInput);
    expect_within(leg, a);
    std::array<Quat, 3> b{Quat::identity(), Quat::identity(), Quat::identity()};
    const IkResult rj = jacobian_solve(leg.chain, joints, b, t, js, hook);
    ASSERT_NE(rj.status, IkStatus::kInvalidInput);
    expect_within(leg, b);
  }
}

// Seed 000 §25.6: a step asking the knee for 160° with a 150° limit gets 150°.
TEST(IkLimits, Seed000_25_6_KneeClampedAt150) {
  const std::array<JointLimit, 1> limits{
      JointLimit::of(make_hinge_limit({0, 0, 1}, 0, 150 * kDeg))};
  const IkJointLimits jl{limits, {}};
  const IkLimitHook hook = make_limit_hook(jl);
  const Quat q = hook(0, Quat::from_axis_angle({0, 0, 1}, 160 * kDeg));
  EXPECT_NEAR(angle_between(q, Quat::from_axis_angle({0, 0, 1}, 150 * kDeg)), 0, 1e-12);
}

}  // namespace
}  // namespace kinema
