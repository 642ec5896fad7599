// Jacobian IK tests: the worked planar arm l1 = 3, l2 = 2 of docs/worked_examples.md ("Jacobian
// IK"), singular poses, orientation goals, ball joints and randomized sweeps.
#include "kinema/ik/jacobian.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <vector>

namespace kinema {
namespace {

constexpr double kDeg = kPi / 180.0;

const std::array<Vec3, 2> kArm{Vec3{3, 0, 0}, Vec3{2, 0, 0}};
const std::array<IkJoint, 2> kHinges{IkJoint{IkJointType::kHinge, {0, 0, 1}},
                                     IkJoint{IkJointType::kHinge, {0, 0, 1}}};

IkChain arm() { return IkChain{{0, 0, 0}, Quat::identity(), kArm}; }

std::array<Quat, 2> pose(double t1_deg, double t2_deg) {
  return {Quat::from_axis_angle({0, 0, 1}, t1_deg * kDeg),
          Quat::from_axis_angle({0, 0, 1}, t2_deg * kDeg)};
}

Vec3 hand(std::span<const Quat> local) {
  std::array<Quat, 2> m;
  std::array<Vec3, 3> p;
  ik_chain_fk(arm(), local, m, p);
  return p[2];
}

struct Step {
  double d1_deg, d2_deg, error;
};

Step one_step(JacobianMethod method, double t1, double t2, const Vec3& target) {
  auto local = pose(t1, t2);
  JacobianSettings s;
  s.method = method;
  s.lambda = 1;
  std::array<double, 2> delta{};
  EXPECT_TRUE(jacobian_step(arm(), kHinges, local, target, delta, s));
  return {delta[0] / kDeg, delta[1] / kDeg, distance(hand(local), target)};
}

TEST(Jacobian, PlanarArmHandAndJacobian) {
  const auto local = pose(30, 45);
  const Vec3 h = hand(local);
  EXPECT_NEAR(h.x, 3.116, 5e-4);
  EXPECT_NEAR(h.y, 3.432, 5e-4);
  // Columns z × (h − p_i): (−3.432, 3.116) and (−1.932, 0.518); det 4.243.
  const Vec3 elbow{3 * std::cos(30 * kDeg), 3 * std::sin(30 * kDeg), 0};
  const Vec3 c1 = cross(Vec3{0, 0, 1}, h), c2 = cross(Vec3{0, 0, 1}, h - elbow);
  EXPECT_NEAR(c1.x, -3.432, 5e-4);
  EXPECT_NEAR(c1.y, 3.116, 5e-4);
  EXPECT_NEAR(c2.x, -1.932, 5e-4);
  EXPECT_NEAR(c2.y, 0.518, 5e-4);
  EXPECT_NEAR(c1.x * c2.y - c2.x * c1.y, 4.243, 5e-4);
}

TEST(Jacobian, OneStepOfEachMethod) {
  const Vec3 target{2.5, 3.8, 0};
  const Step tr = one_step(JacobianMethod::kTranspose, 30, 45, target);
  EXPECT_NEAR(tr.d1_deg, 7.55, 5e-3);
  EXPECT_NEAR(tr.d2_deg, 3.20, 5e-3);
  EXPECT_NEAR(tr.d1_deg * kDeg, 0.1317, 5e-5);
  EXPECT_NEAR(tr.d2_deg * kDeg, 0.0558, 5e-5);
  EXPECT_NEAR(tr.error, 0.035, 5e-4);
  const Step pi = one_step(JacobianMethod::kPseudoInverse, 30, 45, target);
  EXPECT_NEAR(pi.d1_deg, 5.30, 5e-3);
  EXPECT_NEAR(pi.d2_deg, 8.85, 5e-3);
  EXPECT_NEAR(pi.error, 0.070, 5e-4);
  const Step dls = one_step(JacobianMethod::kDampedLeastSquares, 30, 45, target);
  EXPECT_NEAR(dls.d1_deg, 6.34, 5e-3);
  EXPECT_NEAR(dls.d2_deg, 5.36, 5e-3);
  EXPECT_NEAR(dls.error, 0.041, 5e-4);
}

TEST(Jacobian, NearSingularPseudoInverseFlingsTheArmDlsDoesNot) {
  // Elbow bent 5°, hand (4.992, 0.174); ask 0.3 further along x (just out of reach).
  const Vec3 h = hand(pose(0, 5));
  EXPECT_NEAR(h.x, 4.992, 5e-4);
  EXPECT_NEAR(h.y, 0.174, 5e-4);
  EXPECT_NEAR(6 * std::sin(5 * kDeg), 0.523, 5e-4);
  const Vec3 target = h + Vec3{0.3, 0, 0};
  auto local = pose(0, 5);
  JacobianSettings s;
  s.method = JacobianMethod::kPseudoInverse;
  std::array<double, 2> delta{};
  ASSERT_TRUE(jacobian_step(arm(), kHinges, local, target, delta, s));
  EXPECT_NEAR(delta[0] / kDeg, 65.5, 0.05);
  EXPECT_NEAR(delta[1] / kDeg, -164.1, 0.05);
  const Vec3 flung = hand(local);  // the arm swings round
  EXPECT_NEAR(flung.x, 1.12, 5e-3);
  EXPECT_NEAR(flung.y, 0.73, 5e-3);
  const Step dls = one_step(JacobianMethod::kDampedLeastSquares, 0, 5, target);
  EXPECT_NEAR(dls.d1_deg, 0.49, 5e-3);
  EXPECT_NEAR(dls.d2_deg, -1.58, 5e-3);
  // Adaptive damping also stays small there.
  s.method = JacobianMethod::kAdaptiveDampedLeastSquares;
  s.lambda = 0.01;
  s.lambda_max = 1;
  s.singular_threshold = 1;
  local = pose(0, 5);
  ASSERT_TRUE(jacobian_step(arm(), kHinges, local, target, delta, s));
  EXPECT_LT(std::abs(delta[0]) + std::abs(delta[1]), 5 * kDeg);
}

TEST(Jacobian, StepClamping) {
  auto local = pose(0, 5);
  JacobianSettings s;
  s.method = JacobianMethod::kPseudoInverse;
  s.max_joint_step = 10 * kDeg;
  std::array<double, 2> delta{};
  ASSERT_TRUE(jacobian_step(arm(), kHinges, local, hand(pose(0, 5)) + Vec3{0.3, 0, 0}, delta, s));
  EXPECT_NEAR(std::max(std::abs(delta[0]), std::abs(delta[1])), 10 * kDeg, 1e-12);
  // Error clamping shrinks the task-space request.
  local = pose(30, 45);
  s.max_joint_step = 1e300;
  s.max_error_step = 0.1;
  ASSERT_TRUE(jacobian_step(arm(), kHinges, local, {2.5, 3.8, 0}, delta, s));
  EXPECT_NEAR(std::hypot(delta[0], delta[1]), std::hypot(5.30, 8.85) * kDeg * 0.1 / 0.717, 2e-3);
}

TEST(Jacobian, SolveConvergesEachMethod) {
  for (JacobianMethod m :
       {JacobianMethod::kTranspose, JacobianMethod::kPseudoInverse,
        JacobianMethod::kDampedLeastSquares, JacobianMethod::kAdaptiveDampedLeastSquares}) {
    auto local = pose(30, 45);
    JacobianSettings s;
    s.method = m;
    s.lambda = m == JacobianMethod::kAdaptiveDampedLeastSquares ? 0.01 : 0.3;
    s.settings = IkSettings{1e-6, m == JacobianMethod::kTranspose ? 500 : 100};
    const IkResult r = jacobian_solve(arm(), kHinges, local, {2.5, 3.8, 0}, s);
    EXPECT_EQ(r.status, IkStatus::kReached) << static_cast<int>(m);
    EXPECT_LE(distance(hand(local), {2.5, 3.8, 0}), 1e-6);
  }
}

TEST(Jacobian, InvalidInput) {
  auto local = pose(30, 45);
  const auto before = local;
  IkResult r = jacobian_solve(arm(), kHinges, local, {NAN, 0, 0});
  EXPECT_EQ(r.status, IkStatus::kInvalidInput);
  EXPECT_EQ(local[0], before[0]);
  EXPECT_EQ(local[1], before[1]);
  const std::array<IkJoint, 2> zero_axis{IkJoint{IkJointType::kHinge, {0, 0, 0}}, kHinges[1]};
  EXPECT_EQ(jacobian_solve(arm(), zero_axis, local, {1, 1, 0}).status, IkStatus::kInvalidInput);
  JacobianSettings s;
  s.lambda = NAN;
  EXPECT_EQ(jacobian_solve(arm(), kHinges, local, {1, 1, 0}, s).status, IkStatus::kInvalidInput);
  const Quat bad_goal{0, 0, 0, 0};
  EXPECT_EQ(jacobian_solve(arm(), kHinges, local, {1, 1, 0}, {}, {}, &bad_goal).status,
            IkStatus::kInvalidInput);
  EXPECT_EQ(local[0], before[0]);
}

// A 4-joint 3D arm of ball joints reaches position and orientation goals.
TEST(Jacobian, BallJointsWithOrientationGoal) {
  const std::array<Vec3, 4> offs{Vec3{0, 0.4, 0}, Vec3{0, 0.4, 0}, Vec3{0, 0.3, 0},
                                 Vec3{0, 0.1, 0}};
  const IkChain chain{{0, 1, 0}, Quat::identity(), offs};
  const std::array<IkJoint, 4> joints{};
  std::array<Quat, 4> local;
  local.fill(Quat::identity());
  const Quat goal = Quat::from_axis_angle({1, 0, 0}, 1.2);
  JacobianSettings s;
  s.settings = IkSettings{1e-6, 200};
  s.lambda = 0.05;
  const IkResult r = jacobian_solve(chain, joints, local, {0.3, 1.6, 0.4}, s, {}, &goal);
  EXPECT_EQ(r.status, IkStatus::kReached);
  std::array<Quat, 4> m;
  std::array<Vec3, 5> p;
  ik_chain_fk(chain, local, m, p);
  EXPECT_LE(distance(p[4], {0.3, 1.6, 0.4}), 1e-6);
  EXPECT_LE(angle_between(m[3], goal), 1e-6);
}

// Limit hook: a hinge clamped to [0, 60°] is never past it after a solve.
Quat clamp_hinge(const void*, std::size_t, const Quat& q) {
  Vec3 axis;
  double angle;
  to_axis_angle(q, axis, angle);
  double signed_angle = axis.z < 0 ? -angle : angle;
  signed_angle = std::clamp(signed_angle, 0.0, 60 * kDeg);
  return Quat::from_axis_angle({0, 0, 1}, signed_angle);
}

// 10k random targets per method on a planar 4-hinge arm: lengths kept, no NaN, reachable
// targets within tolerance for DLS, limits hold with the hook.
TEST(Jacobian, RandomSweep) {
  const std::array<Vec3, 4> offs{Vec3{1, 0, 0}, Vec3{0.8, 0, 0}, Vec3{0.6, 0, 0}, Vec3{0.4, 0, 0}};
  const IkChain chain{{0, 0, 0}, Quat::identity(), offs};
  std::array<IkJoint, 4> joints;
  joints.fill(IkJoint{IkJointType::kHinge, {0, 0, 1}});
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> ang(-kPi, kPi), rad(0.3, 3.2);
  JacobianSettings s;
  s.method = JacobianMethod::kAdaptiveDampedLeastSquares;
  s.lambda = 1e-3;
  s.lambda_max = 0.5;
  s.singular_threshold = 0.3;
  s.max_joint_step = 0.5;
  s.settings = IkSettings{1e-4, 60};
  int reached = 0, tried = 0;
  for (int k = 0; k < 10000; ++k) {
    std::array<Quat, 4> local;
    for (auto& q : local) q = Quat::from_axis_angle({0, 0, 1}, 0.3);
    const double a = ang(rng), r = rad(rng);
    const Vec3 t{r * std::cos(a), r * std::sin(a), 0};
    const bool limited = k % 4 == 3;
    const IkResult res = jacobian_solve(
        chain, joints, local, t, s, limited ? IkLimitHook{clamp_hinge, nullptr} : IkLimitHook{});
    ASSERT_NE(res.status, IkStatus::kInvalidInput);
    ASSERT_TRUE(std::isfinite(res.error));
    std::array<Quat, 4> m;
    std::array<Vec3, 5> p;
    ik_chain_fk(chain, local, m, p);
    for (int j = 0; j < 4; ++j) {
      ASSERT_TRUE(is_finite(local[j]));
      EXPECT_NEAR(distance(p[j + 1], p[j]), length(offs[j]), 1e-6 * length(offs[j]));
      if (limited) {
        Vec3 axis;
        double angle;
        to_axis_angle(local[j], axis, angle);
        EXPECT_LE(angle, 60 * kDeg + 1e-9);
        EXPECT_TRUE(angle < 1e-9 || axis.z > 0);
      }
    }
    if (!limited && r < 2.6) {  // reach 2.8: keep clear of the boundary
      ++tried;
      reached += res.status == IkStatus::kReached;
    }
  }
  EXPECT_GE(reached, tried * 97 / 100);
}

// Two arms on a spine: both hands reach targets taken from random reachable poses.
TEST(Jacobian, TreeTwoHands) {
  const std::vector<int> parents{-1, 0, 1, 2, 1, 4};
  const std::vector<Vec3> offsets{{0, 0, 0},    {0, 0.5, 0},   {-0.2, 0.1, 0},
                                  {-0.3, 0, 0}, {0.2, 0.1, 0}, {0.3, 0, 0}};
  const IkTree tree{{0, 1, 0}, Quat::identity(), parents, offsets};
  std::vector<IkJoint> joints(6);
  joints[3] = IkJoint{IkJointType::kHinge, {0, 1, 0}};
  joints[5] = IkJoint{IkJointType::kHinge, {0, 1, 0}};
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> u(-0.6, 0.6);
  JacobianSettings s;
  s.method = JacobianMethod::kAdaptiveDampedLeastSquares;
  s.lambda = 1e-3;
  s.max_joint_step = 0.3;
  s.settings = IkSettings{1e-4, 100};
  int reached = 0;
  const int trials = 2000;
  for (int k = 0; k < trials; ++k) {
    // A random pose gives reachable targets for the two hands.
    std::vector<Quat> goal(6);
    for (std::size_t j = 0; j < 6; ++j)
      goal[j] = joints[j].type == IkJointType::kHinge
                    ? Quat::from_axis_angle(joints[j].axis, u(rng) * 2)
                    : from_rotation_vector(Vec3{u(rng), u(rng), u(rng)});
    std::array<IkTreeEffector, 2> eff{IkTreeEffector{3, {-0.3, 0, 0}, {}},
                                      IkTreeEffector{5, {0.3, 0, 0}, {}}};
    // Targets: forward kinematics of the goal pose.
    std::array<Quat, 6> m;
    std::array<Vec3, 6> p;
    for (std::size_t j = 0; j < 6; ++j) {
      const Quat pr = parents[j] < 0 ? Quat::identity() : m[static_cast<std::size_t>(parents[j])];
      const Vec3 pp = parents[j] < 0 ? tree.base_position : p[static_cast<std::size_t>(parents[j])];
      p[j] = pp + rotate(pr, offsets[j]);
      m[j] = pr * goal[j];
    }
    for (auto& e : eff) e.target = p[e.joint] + rotate(m[e.joint], e.tip);
    std::vector<Quat> local(6, Quat::identity());
    const IkResult r = jacobian_solve_tree(tree, joints, local, eff, s);
    ASSERT_NE(r.status, IkStatus::kInvalidInput);
    ASSERT_TRUE(std::isfinite(r.error));
    for (const Quat& q : local) ASSERT_TRUE(is_finite(q));
    reached += r.status == IkStatus::kReached;
  }
  EXPECT_GE(reached, trials * 95 / 100);
  // Invalid: a NaN target, and too many effectors.
  std::vector<Quat> local(6, Quat::identity());
  const IkTreeEffector bad{3, {}, {NAN, 0, 0}};
  EXPECT_EQ(
      jacobian_solve_tree(tree, joints, local, std::span<const IkTreeEffector>(&bad, 1)).status,
      IkStatus::kInvalidInput);
  const std::vector<IkTreeEffector> five(5, IkTreeEffector{3, {}, {0, 1, 0}});
  EXPECT_EQ(jacobian_solve_tree(tree, joints, local, five).status, IkStatus::kInvalidInput);
  EXPECT_EQ(local[0], Quat::identity());
}

// ---- Unreachable targets: the solvers stretch the chain towards them ---------------------------

constexpr std::array<JacobianMethod, 4> kMethods{
    JacobianMethod::kTranspose, JacobianMethod::kPseudoInverse, JacobianMethod::kDampedLeastSquares,
    JacobianMethod::kAdaptiveDampedLeastSquares};

// Library defaults except the tolerance and the iteration cap (as in bench/ik_problems.h).
JacobianSettings default_settings(JacobianMethod m) {
  JacobianSettings s;
  s.method = m;
  s.settings = IkSettings{1e-4, m == JacobianMethod::kTranspose ? 1000 : 64};
  return s;
}

// A 10-joint ball chain of 10 cm bones (1 m reach), gently curved at rest.
struct BallChain10 {
  std::array<Vec3, 10> offsets;
  std::array<IkJoint, 10> joints{};
  std::array<Quat, 10> rest;
  BallChain10() {
    offsets.fill(Vec3{0, 0.1, 0});
    rest.fill(
        normalize(Quat::from_axis_angle({0, 0, 1}, 0.15) * Quat::from_axis_angle({1, 0, 0}, 0.05)));
  }
  IkChain chain() const { return IkChain{{0.2, 0.1, -0.3}, Quat::identity(), offsets}; }
  Vec3 end(std::span<const Quat> local) const {
    std::array<Quat, 10> m;
    std::array<Vec3, 11> p;
    ik_chain_fk(chain(), local, m, p);
    return p[10];
  }
};

Vec3 random_direction(std::mt19937& rng) {
  std::normal_distribution<double> g;
  Vec3 d;
  do d = Vec3{g(rng), g(rng), g(rng)};
  while (length(d) < 1e-3);
  return normalize(d);
}

// Without limits a ball-joint chain ends pointing straight at the target (the aim point short of
// the reach, then the final straightening): the final distance is the best possible one, d −
// reach, to rounding, for every method; the error is reported against the real target and the
// status is kUnreachable.
TEST(JacobianUnreachable, ChainStretchesTowardsTargetEachMethod) {
  const BallChain10 c;
  const IkChain chain = c.chain();
  const double reach = ik_chain_reach(chain);
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> far(1.001, 2.0);
  for (JacobianMethod m : kMethods) {
    const JacobianSettings s = default_settings(m);
    double worst = 0;
    for (int k = 0; k < 200; ++k) {
      const double d = reach * far(rng);
      const Vec3 target = chain.base_position + random_direction(rng) * d;
      auto local = c.rest;
      const IkResult r = jacobian_solve(chain, c.joints, local, target, s);
      ASSERT_EQ(r.status, IkStatus::kUnreachable) << static_cast<int>(m) << " " << k;
      const double err = distance(c.end(local), target);
      EXPECT_NEAR(r.error, err, 1e-12);
      worst = std::max(worst, err - (d - reach));
    }
    EXPECT_LE(worst, 1e-9) << static_cast<int>(m);
  }
}

// The same on the worked planar hinge arm (reach 5), targets in its plane; and with
// the hinges limited to [0, 60°] (the limit hook acts inside the steps and the straightening),
// targets the limited arm can still point straight at.
TEST(JacobianUnreachable, HingeArmStretchesTowardsTarget) {
  for (JacobianMethod m : kMethods) {
    JacobianSettings s = default_settings(m);
    s.lambda = 0.25;  // the damping scaled to the 5-unit arm
    s.lambda_max = 2.5;
    s.singular_threshold = 0.5;
    for (int k = 0; k < 36; ++k) {
      const double a = k * 10 * kDeg, d = 5.0 + 0.05 * (k % 7) + 0.01;
      const Vec3 target{d * std::cos(a), d * std::sin(a), 0};
      auto local = pose(30, 45);
      const IkResult r = jacobian_solve(arm(), kHinges, local, target, s);
      EXPECT_EQ(r.status, IkStatus::kUnreachable);
      EXPECT_LE(distance(hand(local), target), d - 5 + 1e-9) << static_cast<int>(m) << " " << k;
    }
    // Limited: directions 0°–60°, where the arm can still point straight (a, 0).
    for (int k = 0; k < 7; ++k) {
      const double a = k * 10 * kDeg, d = 5.3;
      const Vec3 target{d * std::cos(a), d * std::sin(a), 0};
      auto local = pose(30, 45);
      const IkResult r =
          jacobian_solve(arm(), kHinges, local, target, s, IkLimitHook{clamp_hinge, nullptr});
      EXPECT_EQ(r.status, IkStatus::kUnreachable);
      EXPECT_LE(distance(hand(local), target), d - 5 + 1e-9) << static_cast<int>(m) << " " << k;
    }
  }
}

// A target just beyond the reach but within the tolerance of it is still solved directly
// (and may be reported reached).
TEST(JacobianUnreachable, WithinToleranceOfReachIsNotClamped) {
  auto local = pose(10, 20);
  JacobianSettings s = default_settings(JacobianMethod::kDampedLeastSquares);
  s.lambda = 0.25;
  s.settings = IkSettings{1e-3, 400};
  const IkResult r = jacobian_solve(arm(), kHinges, local, {5.0005, 0, 0}, s);
  EXPECT_EQ(r.status, IkStatus::kReached);
  EXPECT_LE(r.error, 1e-3);
}

// Trees: each effector stretches towards its target along its own path (reach measured from the
// root of the path). Two arms on separate roots, and one arm through a spine.
TEST(JacobianUnreachable, TreeEffectorsStretchAlongTheirPaths) {
  // Joints 0–3: root at (0, 1, 0) and three 0.25 m bones; joints 4–7 likewise at (0.5, 1, 0).
  const std::vector<int> parents{-1, 0, 1, 2, -1, 4, 5, 6};
  const std::vector<Vec3> offsets{{0, 0, 0},   {0.25, 0, 0}, {0.25, 0, 0}, {0.25, 0, 0},
                                  {0.5, 0, 0}, {0.25, 0, 0}, {0.25, 0, 0}, {0.25, 0, 0}};
  const IkTree tree{{0, 1, 0}, Quat::identity(), parents, offsets};
  const std::vector<IkJoint> joints(8);
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> far(1.01, 2.0);
  for (JacobianMethod m : kMethods) {
    const JacobianSettings s = default_settings(m);
    double worst = 0;
    for (int k = 0; k < 100; ++k) {
      // Path reach: the three bones beyond the root plus the tip, 0.85 m.
      const std::array<Vec3, 2> roots{Vec3{0, 1, 0}, Vec3{0.5, 1, 0}};
      std::array<IkTreeEffector, 2> eff{IkTreeEffector{3, {0.1, 0, 0}, {}},
                                        IkTreeEffector{7, {0.1, 0, 0}, {}}};
      std::array<double, 2> d{};
      for (std::size_t e = 0; e < 2; ++e) {
        d[e] = 0.85 * far(rng);
        eff[e].target = roots[e] + random_direction(rng) * d[e];
      }
      std::vector<Quat> local(8, Quat::from_axis_angle({0, 0, 1}, 0.2));
      const IkResult r = jacobian_solve_tree(tree, joints, local, eff, s);
      ASSERT_EQ(r.status, IkStatus::kUnreachable);
      // Forward kinematics of the written pose.
      std::array<Quat, 8> mq;
      std::array<Vec3, 8> p;
      for (std::size_t j = 0; j < 8; ++j) {
        const int pj = parents[j];
        const Quat pr = pj < 0 ? Quat::identity() : mq[static_cast<std::size_t>(pj)];
        const Vec3 pp = pj < 0 ? tree.base_position : p[static_cast<std::size_t>(pj)];
        p[j] = pp + rotate(pr, offsets[j]);
        mq[j] = normalize(pr * local[j]);
      }
      double largest = 0;
      for (std::size_t e = 0; e < 2; ++e) {
        const double err =
            distance(p[eff[e].joint] + rotate(mq[eff[e].joint], eff[e].tip), eff[e].target);
        largest = std::max(largest, err);
        worst = std::max(worst, err - (d[e] - 0.85));
      }
      EXPECT_NEAR(r.error, largest, 1e-12);
    }
    EXPECT_LE(worst, 1e-9) << static_cast<int>(m);
  }
  // One hand through the spine of the two-armed tree: its path reach runs from the spine's
  // root (joint 0) through joints 1, 2, 3 to the tip.
  const std::vector<int> p2{-1, 0, 1, 2, 1, 4};
  const std::vector<Vec3> o2{{0, 0, 0},    {0, 0.5, 0},   {-0.2, 0.1, 0},
                             {-0.3, 0, 0}, {0.2, 0.1, 0}, {0.3, 0, 0}};
  const IkTree spine{{0, 1, 0}, Quat::identity(), p2, o2};
  const std::vector<IkJoint> j2(6);
  const double reach = 0.5 + length(Vec3{-0.2, 0.1, 0}) + 0.3 + 0.3;
  for (JacobianMethod m : kMethods) {
    for (int k = 0; k < 50; ++k) {
      const double d = reach * far(rng);
      const IkTreeEffector eff{3, {-0.3, 0, 0}, Vec3{0, 1, 0} + random_direction(rng) * d};
      std::vector<Quat> local(6, Quat::identity());
      const IkResult r = jacobian_solve_tree(
          spine, j2, local, std::span<const IkTreeEffector>(&eff, 1), default_settings(m));
      ASSERT_EQ(r.status, IkStatus::kUnreachable);
      EXPECT_LE(r.error, d - reach + 1e-9) << static_cast<int>(m) << " " << k;
    }
  }
}

// ---- Defaults: the automatic error clamp ------------------------------------------------------

// The default max_error_step clamps each step's error to kJacobianAutoErrorFraction of the reach;
// 1e300 still turns the clamp off.
TEST(JacobianDefaults, AutoErrorClampIsAFractionOfTheReach) {
  EXPECT_EQ(JacobianSettings{}.max_error_step, kJacobianAutoErrorStep);
  const Vec3 far_target{-1, 4.5, 0};  // 4.04 from the hand: well above 0.2 × 5 = 1
  JacobianSettings automatic, explicit_clamp, off;
  explicit_clamp.max_error_step = kJacobianAutoErrorFraction * 5;
  off.max_error_step = 1e300;
  std::array<double, 2> da{}, de{}, d0{};
  auto la = pose(30, 45), le = pose(30, 45), l0 = pose(30, 45);
  ASSERT_TRUE(jacobian_step(arm(), kHinges, la, far_target, da, automatic));
  ASSERT_TRUE(jacobian_step(arm(), kHinges, le, far_target, de, explicit_clamp));
  ASSERT_TRUE(jacobian_step(arm(), kHinges, l0, far_target, d0, off));
  EXPECT_EQ(da[0], de[0]);
  EXPECT_EQ(da[1], de[1]);
  EXPECT_GT(std::hypot(d0[0], d0[1]), 2 * std::hypot(da[0], da[1]));
  // Negative and NaN are invalid; 0 is the automatic clamp.
  JacobianSettings bad;
  bad.max_error_step = -1;
  auto local = pose(30, 45);
  EXPECT_EQ(jacobian_solve(arm(), kHinges, local, {1, 1, 0}, bad).status, IkStatus::kInvalidInput);
  bad.max_error_step = NAN;
  EXPECT_EQ(jacobian_solve(arm(), kHinges, local, {1, 1, 0}, bad).status, IkStatus::kInvalidInput);
}

// With the library's defaults (only the tolerance and the cap set) every method reaches at least
// 99.9 % of random reachable targets on the 10-joint ball chain. Without an error clamp adaptive
// DLS reached only 89 % in the sweep: its first unclamped steps (over a radian per joint) fold the
// chain into poses with σ_min below singular_threshold, where the heavy damping leaves it crawling
// (the error falls by ~8 % a step).
TEST(JacobianDefaults, ReachableTargetsConvergeWithDefaultSettings) {
  const BallChain10 c;
  const IkChain chain = c.chain();
  std::mt19937 rng(17);
  std::uniform_real_distribution<double> angle(0.0, 1.2);
  std::vector<Vec3> targets;
  for (int k = 0; k < 2000; ++k) {
    std::array<Quat, 10> q;
    for (Quat& x : q) x = Quat::from_axis_angle(random_direction(rng), angle(rng));
    targets.push_back(c.end(q));
  }
  for (JacobianMethod m : kMethods) {
    const JacobianSettings s = default_settings(m);
    int reached = 0;
    for (const Vec3& t : targets) {
      auto local = c.rest;
      const IkResult r = jacobian_solve(chain, c.joints, local, t, s);
      reached += r.status == IkStatus::kReached && distance(c.end(local), t) <= 1e-4;
    }
    EXPECT_GE(reached, 1998) << static_cast<int>(m);
  }
}

}  // namespace
}  // namespace kinema
