// FABRIK tests: the worked arms and the leg on a step of docs/worked_examples.md ("FABRIK and
// CCD"), trees, constraints, poles and randomized sweeps.
#include "kinema/ik/fabrik.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace kinema {
namespace {

constexpr double kDeg = 180.0 / kPi;

IkSettings one_iteration() { return IkSettings{0.0, 1}; }

void expect_lengths(const std::vector<Vec3>& before, const std::vector<Vec3>& after,
                    const std::vector<int>& parents) {
  for (std::size_t j = 0; j < before.size(); ++j) {
    if (parents[j] < 0) continue;
    const auto p = static_cast<std::size_t>(parents[j]);
    const double l0 = distance(before[j], before[p]);
    EXPECT_NEAR(distance(after[j], after[p]), l0, 1e-6 * std::max(1.0, l0)) << "bone " << j;
  }
}

std::vector<int> chain_parents(std::size_t n) {
  std::vector<int> p(n);
  for (std::size_t j = 0; j < n; ++j) p[j] = static_cast<int>(j) - 1;
  return p;
}

// Arm l1 = 3, l2 = 2 straight along x, target (2, 3); one iteration.
TEST(Fabrik, ArmOneIterationAndConvergence) {
  std::vector<Vec3> p{{0, 0, 0}, {3, 0, 0}, {5, 0, 0}};
  FabrikSettings s;
  s.settings = one_iteration();
  const IkResult r = fabrik_solve_chain(p, {2, 3, 0}, s);
  EXPECT_EQ(r.iterations, 1);
  EXPECT_EQ(r.status, IkStatus::kMaxIterations);
  EXPECT_NEAR(p[1].x, 2.767, 5e-4);
  EXPECT_NEAR(p[1].y, 1.159, 5e-4);
  EXPECT_NEAR(p[2].x, 1.998, 5e-4);
  EXPECT_NEAR(p[2].y, 3.005, 5e-4);
  EXPECT_NEAR(r.error, 0.0056, 5e-5);
  EXPECT_NEAR(std::atan2(p[1].y, p[1].x) * kDeg, 22.73, 5e-3);
  // A second iteration leaves less than 0.0001.
  s.settings.max_iterations = 1;
  const IkResult r2 = fabrik_solve_chain(p, {2, 3, 0}, s);
  EXPECT_LT(r2.error, 1e-4);
  // The exact shoulder angle is 22.62°; FABRIK converges to it.
  s.settings = IkSettings{1e-10, 50};
  EXPECT_EQ(fabrik_solve_chain(p, {2, 3, 0}, s).status, IkStatus::kReached);
  EXPECT_NEAR(std::atan2(p[1].y, p[1].x) * kDeg, 22.62, 5e-3);
}

// Arm l1 = 4, l2 = 3 straight along x, target (3, 5). By hand:
//  backward: hand → (3, 5); elbow on the line to (4, 0), direction (1, −5)/√26:
//    (3 + 3/√26, 5 − 15/√26) = (3.588, 2.058); root follows to (0.119, 0.068).
//  forward: elbow = 4·(3.588, 2.058)/4.137 = (3.470, 1.990); hand = elbow + 3·(−0.463, 3.010)/3.045
//    = (3.007, 4.954); remaining error √(0.007² + 0.046²) = 0.046.
// Analytic elbows (law of cosines): (0.173, 3.996) and (3.445, 2.033). FABRIK approaches the
// second: every joint moves along the line to its previous position, so the elbow stays on the
// side of the shoulder–target line where it started (below it).
TEST(Fabrik, ElbowStaysOnItsStartingSide) {
  std::vector<Vec3> p{{0, 0, 0}, {4, 0, 0}, {7, 0, 0}};
  FabrikSettings s;
  s.settings = one_iteration();
  const IkResult r = fabrik_solve_chain(p, {3, 5, 0}, s);
  EXPECT_NEAR(p[1].x, 3.470, 5e-4);
  EXPECT_NEAR(p[1].y, 1.990, 5e-4);
  EXPECT_NEAR(p[2].x, 3.007, 5e-4);
  EXPECT_NEAR(p[2].y, 4.954, 5e-4);
  EXPECT_NEAR(r.error, 0.046, 5e-4);
  s.settings = IkSettings{1e-9, 100};
  EXPECT_EQ(fabrik_solve_chain(p, {3, 5, 0}, s).status, IkStatus::kReached);
  EXPECT_NEAR(p[1].x, 3.445, 5e-4);
  EXPECT_NEAR(p[1].y, 2.033, 5e-4);
}

// A leg put on a step: thigh 4 + shin 4, hip (0, 7.5), straight down, foot target (2, 1.5).
TEST(Fabrik, LegWithoutPoleBendsTheKneeBackwards) {
  std::vector<Vec3> p{{0, 7.5, 0}, {0, 3.5, 0}, {0, -0.5, 0}};
  const Vec3 target{2, 1.5, 0};
  EXPECT_NEAR(distance(p[0], target), 6.325, 5e-4);  // √40 < 8: reachable
  FabrikSettings s;
  s.settings = one_iteration();
  EXPECT_NEAR(fabrik_solve_chain(p, target, s).error, 0.31, 5e-3);
  EXPECT_NEAR(fabrik_solve_chain(p, target, s).error, 0.03, 5e-3);
  s.settings = IkSettings{1e-9, 100};
  EXPECT_EQ(fabrik_solve_chain(p, target, s).status, IkStatus::kReached);
  // The backwards knee, ≈(−1.3, 3.7) by hand (the analytic solution rounds to (−1.32, 3.72));
  // exactly (1, 4.5) − √6·(0.9487, 0.3162) = (−1.324, 3.725).
  EXPECT_NEAR(p[1].x, -1.3, 0.05);
  EXPECT_NEAR(p[1].y, 3.7, 0.05);
  EXPECT_NEAR(p[1].x, 1 - std::sqrt(6.0) * 6 / std::sqrt(40.0), 1e-6);
  EXPECT_NEAR(p[1].y, 4.5 - std::sqrt(6.0) * 2 / std::sqrt(40.0), 1e-6);
}

TEST(Fabrik, LegPoleKeepsTheKneeForward) {
  std::vector<Vec3> p{{0, 7.5, 0}, {0, 3.5, 0}, {0, -0.5, 0}};
  const std::vector<Vec3> before = p;
  const FabrikPole pole{0, 1, 2, {10, 3.5, 0}};  // the character faces +x
  FabrikSettings s;
  s.settings = IkSettings{1e-9, 100};
  s.poles = std::span<const FabrikPole>(&pole, 1);
  EXPECT_EQ(fabrik_solve_chain(p, {2, 1.5, 0}, s).status, IkStatus::kReached);
  // The analytic forward knee, ≈(3.32, 5.28) by hand; exactly
  // (1, 4.5) + √6·(0.9487, 0.3162) = (3.324, 5.275), 4 from the hip and 4 from the foot.
  EXPECT_NEAR(p[1].x, 3.32, 5e-3);
  EXPECT_NEAR(p[1].y, 5.28, 1e-2);
  EXPECT_NEAR(p[1].x, 1 + std::sqrt(6.0) * 6 / std::sqrt(40.0), 1e-6);
  EXPECT_NEAR(p[1].y, 4.5 + std::sqrt(6.0) * 2 / std::sqrt(40.0), 1e-6);
  expect_lengths(before, p, chain_parents(3));
  // Knee bend 75.5°.
  const Vec3 thigh = p[1] - p[0], shin = p[2] - p[1];
  EXPECT_NEAR(std::acos(dot(thigh, shin) / 16) * kDeg, 75.5, 0.05);
}

// 3D pole vector: a leg reaching forward and sideways bends its knee towards the pole.
TEST(Fabrik, PoleAlignPointsKneeAtPole) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<double> u(-0.4, 0.4);
  for (int k = 0; k < 1000; ++k) {
    std::vector<Vec3> p{{0, 1, 0}, {0.01, 0.55, 0}, {0, 0.1, 0}};
    const std::vector<Vec3> before = p;
    const FabrikPole pole{0, 1, 2, {u(rng), 0.6, 1}, true};
    FabrikSettings s;
    s.settings = IkSettings{1e-6, 100};
    s.poles = std::span<const FabrikPole>(&pole, 1);
    const Vec3 target{u(rng), 0.4 + u(rng), u(rng)};
    const IkResult r = fabrik_solve_chain(p, target, s);
    expect_lengths(before, p, chain_parents(3));
    if (r.status != IkStatus::kReached) continue;
    // The knee, the pole, the hip and the foot are coplanar, knee and pole on the same side.
    const Vec3 axis = normalize(p[2] - p[0]);
    const Vec3 knee = (p[1] - p[0]) - axis * dot(p[1] - p[0], axis);
    const Vec3 pv = (pole.pole - p[0]) - axis * dot(pole.pole - p[0], axis);
    EXPECT_NEAR(length(cross(normalize(knee), normalize(pv))), 0, 1e-6);
    EXPECT_GT(dot(knee, pv), 0);
  }
}

TEST(Fabrik, UnreachableStretchesStraight) {
  std::vector<Vec3> p{{0, 0, 0}, {3, 0, 0}, {5, 0, 0}};
  const IkResult r = fabrik_solve_chain(p, {0, 10, 0});
  EXPECT_EQ(r.status, IkStatus::kUnreachable);
  EXPECT_NEAR(p[1].y, 3, 1e-12);
  EXPECT_NEAR(p[2].y, 5, 1e-12);
  EXPECT_NEAR(r.error, 5, 1e-12);
}

TEST(Fabrik, InvalidInputLeavesPositions) {
  std::vector<Vec3> p{{0, 0, 0}, {3, 0, 0}, {5, 0, 0}};
  const std::vector<Vec3> before = p;
  const IkResult r = fabrik_solve_chain(p, {std::nan(""), 1, 0});
  EXPECT_EQ(r.status, IkStatus::kInvalidInput);
  EXPECT_EQ(p, before);
  p[1].x = INFINITY;
  EXPECT_EQ(fabrik_solve_chain(p, {1, 1, 0}).status, IkStatus::kInvalidInput);
  p[1].x = 3;
  const std::vector<int> bad_parents{-1, 2, 1};
  const FabrikEffector e{2, {1, 1, 0}};
  EXPECT_EQ(fabrik_solve(p, bad_parents, std::span<const FabrikEffector>(&e, 1)).status,
            IkStatus::kInvalidInput);
  EXPECT_EQ(p, before);
}

// Two hands on a shared chest: both reached when the targets are compatible.
TEST(Fabrik, TreeTwoEffectorsShareSubBase) {
  //        0 pelvis → 1 chest → 2 l.shoulder → 3 l.hand
  //                           → 4 r.shoulder → 5 r.hand
  //                           → 6 head (no effector: follows rigidly)
  std::vector<Vec3> p{{0, 0, 0},   {0, 1, 0}, {-0.5, 1, 0}, {-1, 1, 0},
                      {0.5, 1, 0}, {1, 1, 0}, {0, 1.3, 0}};
  const std::vector<int> parents{-1, 0, 1, 2, 1, 4, 1};
  const std::vector<Vec3> before = p;
  const FabrikEffector eff[2] = {{3, {-0.6, 1.5, 0.4}}, {5, {0.6, 1.5, 0.4}}};
  FabrikSettings s;
  s.settings = IkSettings{1e-5, 200};
  const IkResult r = fabrik_solve(p, parents, eff, s);
  EXPECT_EQ(r.status, IkStatus::kReached);
  EXPECT_LE(distance(p[3], eff[0].target), 1e-5);
  EXPECT_LE(distance(p[5], eff[1].target), 1e-5);
  expect_lengths(before, p, parents);
  EXPECT_EQ(p[0], before[0]);
  // The head kept its offset from the chest.
  EXPECT_NEAR(distance(p[6] - p[1], before[6] - before[1]), 0, 1e-12);
}

// Incompatible targets: the shared chest settles between them, both errors stay finite.
TEST(Fabrik, TreeConflictingTargetsCompromise) {
  std::vector<Vec3> p{{0, 0, 0}, {0, 1, 0}, {-1, 1, 0}, {1, 1, 0}};
  const std::vector<int> parents{-1, 0, 1, 1};
  const std::vector<Vec3> before = p;
  const FabrikEffector eff[2] = {{2, {-3, 1, 0}}, {3, {3, 1, 0}}};
  const IkResult r = fabrik_solve(p, parents, eff);
  EXPECT_EQ(r.status, IkStatus::kUnreachable);
  EXPECT_TRUE(std::isfinite(r.error));
  expect_lengths(before, p, parents);
  EXPECT_NEAR(p[1].x, 0, 1e-9);  // symmetric pulls cancel
}

TEST(Fabrik, HingePlaneConstraintHolds) {
  // A 3-bone finger bending in the z = 0 plane; the target is off the plane.
  std::vector<Vec3> p{{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {3, 0, 0}};
  std::vector<FabrikConstraint> c(4);
  for (int j = 0; j < 3; ++j) c[j] = {FabrikConstraint::Kind::kHinge, {0, 0, 1}, 0};
  FabrikSettings s;
  s.constraints = c;
  s.settings = IkSettings{1e-6, 100};
  fabrik_solve_chain(p, {1.5, 1.5, 0.7}, s);
  for (const Vec3& q : p) EXPECT_NEAR(q.z, 0, 1e-9);
  // In-plane targets are reached.
  EXPECT_EQ(fabrik_solve_chain(p, {1.5, 1.5, 0}, s).status, IkStatus::kReached);
}

// A knee hinge limited to [0°, 150°] (asked for 160°, it stops at 150°).
TEST(Fabrik, HingeRangeHolds) {
  std::mt19937 rng(4);
  std::uniform_real_distribution<double> u(-2, 2);
  std::vector<FabrikConstraint> c(3);
  c[1] = {FabrikConstraint::Kind::kHinge, {0, 0, 1}, 0, 0, 150 * kPi / 180};
  FabrikSettings s;
  s.constraints = c;
  for (int k = 0; k < 2000; ++k) {
    std::vector<Vec3> p{{0, 0, 0}, {1, 0, 0}, {2, 0, 0}};
    const IkResult r = fabrik_solve_chain(p, {u(rng), u(rng), 0}, s);
    ASSERT_NE(r.status, IkStatus::kInvalidInput);
    const Vec3 a = p[1] - p[0], b = p[2] - p[1];
    const double bend = std::atan2(cross(a, b).z, dot(a, b));
    EXPECT_GE(bend, -1e-9);
    EXPECT_LE(bend, 150 * kPi / 180 + 1e-9);
    EXPECT_NEAR(length(b), 1, 1e-9);
  }
  // Folding the chain back onto its root would need 180°: the knee stops at 150°.
  std::vector<Vec3> p{{0, 0, 0}, {1, 0, 0}, {1.2, 0.5, 0}};
  fabrik_solve_chain(p, {0.0, 0.0, 0}, s);
  const Vec3 a = p[1] - p[0], b = p[2] - p[1];
  EXPECT_NEAR(std::atan2(cross(a, b).z, dot(a, b)) * kDeg, 150, 1e-6);
}

TEST(Fabrik, ConeConstraintHolds) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-3, 3);
  const double cone = 0.5;
  std::vector<FabrikConstraint> c(5, {FabrikConstraint::Kind::kCone, {1, 0, 0}, cone});
  FabrikSettings s;
  s.constraints = c;
  for (int k = 0; k < 500; ++k) {
    std::vector<Vec3> p{{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {3, 0, 0}, {4, 0, 0}};
    fabrik_solve_chain(p, {u(rng), u(rng), u(rng)}, s);
    Vec3 prev_dir{1, 0, 0};
    for (int j = 1; j < 5; ++j) {
      const Vec3 d = normalize(p[j] - p[j - 1]);
      EXPECT_LE(std::acos(std::min(1.0, dot(d, prev_dir))), cone + 1e-6);
      EXPECT_NEAR(length(p[j] - p[j - 1]), 1, 1e-9);
      prev_dir = d;
    }
  }
}

// 10k random targets on a 5-bone chain: lengths kept, reachable targets reached, no NaN.
TEST(Fabrik, RandomSweepChain) {
  std::mt19937 rng(42);
  std::uniform_real_distribution<double> u(-1, 1);
  const std::vector<Vec3> rest{{0, 0, 0},       {0.5, 0, 0},     {1.0, 0.1, 0},
                               {1.4, 0.1, 0.2}, {1.7, 0.2, 0.2}, {2.0, 0.2, 0.3}};
  const auto parents = chain_parents(rest.size());
  double reach = 0;
  for (std::size_t j = 1; j < rest.size(); ++j) reach += distance(rest[j], rest[j - 1]);
  FabrikSettings s;
  s.settings = IkSettings{1e-4, 64};
  int reached = 0, reachable = 0;
  for (int k = 0; k < 10000; ++k) {
    std::vector<Vec3> p = rest;
    const Vec3 t = Vec3{u(rng), u(rng), u(rng)} * (reach * 1.1);
    const IkResult r = fabrik_solve_chain(p, t, s);
    ASSERT_NE(r.status, IkStatus::kInvalidInput);
    for (const Vec3& q : p) ASSERT_TRUE(is_finite(q));
    expect_lengths(rest, p, parents);
    if (length(t) < reach * 0.95) {
      ++reachable;
      reached += r.status == IkStatus::kReached;
    } else if (length(t) > reach) {
      EXPECT_EQ(r.status, IkStatus::kUnreachable);
    }
  }
  // FABRIK can stall very close to the base; nearly all reachable targets must be reached.
  EXPECT_GE(reached, reachable * 99 / 100);
}

}  // namespace
}  // namespace kinema
