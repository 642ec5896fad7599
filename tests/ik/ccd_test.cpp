// CCD tests: the worked comparison with FABRIK (CCD needs 4 sweeps to reach 0.012 on the 3 + 2
// arm, docs/worked_examples.md), damping, limits, invalid input and a randomized sweep.
#include "kinema/ik/ccd.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>

namespace kinema {
namespace {

constexpr double kDeg = kPi / 180.0;

const std::array<Vec3, 2> kArm{Vec3{3, 0, 0}, Vec3{2, 0, 0}};
IkChain arm() { return IkChain{{0, 0, 0}, Quat::identity(), kArm}; }

Vec3 end_of(const IkChain& chain, std::span<const Quat> local) {
  std::array<Quat, kMaxIkChainJoints> m;
  std::array<Vec3, kMaxIkChainJoints + 1> p;
  const std::size_t n = local.size();
  ik_chain_fk(chain, local, std::span<Quat>(m.data(), n), std::span<Vec3>(p.data(), n + 1));
  return p[n];
}

// On the arm that FABRIK brings within 0.0056 in one iteration (3 + 2 along x, target (2, 3)),
// CCD needs four sweeps to get within 0.012.
TEST(Ccd, ArmNeedsFourSweepsToGetWithin0012) {
  std::array<Quat, 2> local{Quat::identity(), Quat::identity()};
  CcdSettings s;
  s.settings = IkSettings{0.0, 4};
  const IkResult r = ccd_solve(arm(), local, {2, 3, 0}, s);
  EXPECT_EQ(r.iterations, 4);
  EXPECT_EQ(r.status, IkStatus::kMaxIterations);
  EXPECT_NEAR(r.error, 0.012, 5e-4);
  s.settings = IkSettings{0.013, 10};
  local = {Quat::identity(), Quat::identity()};
  EXPECT_EQ(ccd_solve(arm(), local, {2, 3, 0}, s).iterations, 4);
  // Converges to the exact shoulder angle 22.62° (elbow 90°).
  s.settings = IkSettings{1e-9, 100};
  EXPECT_EQ(ccd_solve(arm(), local, {2, 3, 0}, s).status, IkStatus::kReached);
  EXPECT_NEAR(2 * std::atan2(local[0].z, local[0].w) / kDeg, 22.62, 5e-3);
  EXPECT_NEAR(2 * std::atan2(local[1].z, local[1].w) / kDeg, 90.0, 5e-3);
}

TEST(Ccd, DampingCapsEachTurn) {
  std::array<Quat, 2> local{Quat::identity(), Quat::identity()};
  const std::array<double, 2> max_step{5 * kDeg, 5 * kDeg};
  CcdSettings s;
  s.settings = IkSettings{0.0, 1};
  s.max_step = max_step;
  ccd_solve(arm(), local, {2, 3, 0}, s);
  for (const Quat& q : local) EXPECT_LE(angle_between(q, Quat::identity()), 5 * kDeg + 1e-12);
  s.settings = IkSettings{1e-6, 500};
  EXPECT_EQ(ccd_solve(arm(), local, {2, 3, 0}, s).status, IkStatus::kReached);
}

Quat clamp_z(const void* ctx, std::size_t, const Quat& q) {
  const double max_angle = *static_cast<const double*>(ctx);
  const double a = std::clamp(2 * std::atan2(q.z, q.w), -max_angle, max_angle);
  return Quat::from_axis_angle({0, 0, 1}, a);  // also drops any off-axis part: a hinge
}

TEST(Ccd, LimitsHold) {
  // The elbow may bend at most 45°: the target (2, 3) needs 90°, so it is not reached.
  std::array<Quat, 2> local{Quat::identity(), Quat::identity()};
  const double max_angle = 45 * kDeg;
  const IkLimitHook hook{clamp_z, &max_angle};
  const IkResult r = ccd_solve(arm(), local, {2, 3, 0}, {}, hook);
  EXPECT_EQ(r.status, IkStatus::kMaxIterations);
  for (const Quat& q : local) EXPECT_LE(angle_between(q, Quat::identity()), max_angle + 1e-12);
}

TEST(Ccd, UnreachableAndInvalid) {
  std::array<Quat, 2> local{Quat::identity(), Quat::identity()};
  const IkResult r = ccd_solve(arm(), local, {0, 9, 0});
  EXPECT_EQ(r.status, IkStatus::kUnreachable);
  EXPECT_NEAR(r.error, 4, 1e-6);  // stretched at the target
  const auto before = local;
  EXPECT_EQ(ccd_solve(arm(), local, {NAN, 0, 0}).status, IkStatus::kInvalidInput);
  const std::array<double, 1> wrong_size{0.1};
  CcdSettings s;
  s.max_step = wrong_size;
  EXPECT_EQ(ccd_solve(arm(), local, {1, 1, 0}, s).status, IkStatus::kInvalidInput);
  std::array<Quat, 2> zero{Quat{0, 0, 0, 0}, Quat::identity()};
  EXPECT_EQ(ccd_solve(arm(), zero, {1, 1, 0}).status, IkStatus::kInvalidInput);
  EXPECT_EQ(local[0], before[0]);
  EXPECT_EQ(local[1], before[1]);
}

// 10k random 3D targets on a 5-bone chain: lengths kept, no NaN, reachable targets reached.
TEST(Ccd, RandomSweep) {
  const std::array<Vec3, 5> offs{Vec3{0, 0.5, 0}, Vec3{0, 0.4, 0.1}, Vec3{0.3, 0.3, 0},
                                 Vec3{0, 0.3, 0}, Vec3{0, 0.2, 0}};
  const IkChain chain{{0, 1, 0}, Quat::from_axis_angle({1, 0, 0}, 0.3), offs};
  const double reach = ik_chain_reach(chain);
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1, 1);
  CcdSettings s;
  s.settings = IkSettings{1e-4, 100};
  int reached = 0, reachable = 0;
  for (int k = 0; k < 10000; ++k) {
    std::array<Quat, 5> local;
    local.fill(Quat::from_axis_angle({0, 0, 1}, 0.1));
    const Vec3 d{u(rng), u(rng), u(rng)};
    const Vec3 t = chain.base_position + d * reach;
    const IkResult r = ccd_solve(chain, local, t, s);
    ASSERT_TRUE(std::isfinite(r.error));
    for (const Quat& q : local) {
      ASSERT_TRUE(is_finite(q));
      EXPECT_NEAR(length(q), 1, 1e-12);  // unit rotations: bone lengths unchanged
    }
    EXPECT_NEAR(distance(end_of(chain, local), t), r.error, 1e-9);
    if (length(d) < 0.9 && length(d) > 0.1) {
      ++reachable;
      reached += r.status == IkStatus::kReached;
    }
  }
  EXPECT_GE(reached, reachable * 99 / 100);
}

}  // namespace
}  // namespace kinema
