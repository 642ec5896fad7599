// No allocation per call: every per-frame IK function (two-bone, CCD, FABRIK on a chain and a
// tree, Jacobian IK on a chain and a tree, look-at, foot placement on a height field and on a
// triangle mesh) runs many calls with varied targets — reachable, unreachable, degenerate and
// invalid — after a warm-up call, while a replaced global operator new counts every allocation
// of this test program (tests/common/replace_global_new.h; the other files count through
// tests/common/alloc_counter.h).
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <new>
#include <vector>

#include "common/alloc_counter.h"
#include "common/replace_global_new.h"
#include "kinema/ik/ccd.h"
#include "kinema/ik/fabrik.h"
#include "kinema/ik/foot_placement.h"
#include "kinema/ik/ground.h"
#include "kinema/ik/jacobian.h"
#include "kinema/ik/joint_limits.h"
#include "kinema/ik/limit_hook.h"
#include "kinema/ik/look_at.h"
#include "kinema/ik/two_bone.h"

namespace kinema {
namespace {

constexpr int kCalls = 200;

// Allocations made while `f` runs (called once before counting, as a warm-up).
template <class F>
long allocations(F&& f) {
  f();
  test::start_counting_allocations();
  f();
  return test::stop_counting_allocations();
}

// Target k of a sweep: a point on a spiral around `centre`, from near it to `far` metres out,
// with every seventh one not finite (invalid input).
Vec3 target(int k, const Vec3& centre, double far) {
  if (k % 7 == 6) return {std::nan(""), 0, 0};
  const double t = static_cast<double>(k) / kCalls;
  const double r = far * (0.05 + t);
  return centre + Vec3{r * std::cos(13 * t), r * std::sin(29 * t) - 0.3 * r, r * std::sin(7 * t)};
}

TEST(IkNoAlloc, CountingSeesAnAllocation) {
  // The counter works: a vector's storage is counted.
  EXPECT_GE(allocations([] {
              std::vector<int> v(16);
              v[3] = 1;
            }),
            1);
}

TEST(IkNoAlloc, TwoBone) {
  std::array<Transform, 3> local{Transform{{0, 1, 0}, Quat::identity(), {1, 1, 1}},
                                 Transform{{0, -0.45, 0.03}, Quat::identity(), {1, 1, 1}},
                                 Transform{{0, -0.45, -0.03}, Quat::identity(), {1, 1, 1}}};
  const std::array<int, 3> parents{-1, 0, 1};
  long sink = 0;
  EXPECT_EQ(allocations([&] {
              for (int k = 0; k < kCalls; ++k) {
                TwoBoneInput in;
                in.root = {0, 1, 0};
                in.mid = {0, 0.55, 0.03};
                in.end = {0, 0.1, 0};
                in.pole = k % 5 == 0 ? in.root : Vec3{0, 1, 1};  // on the line: fallback
                in.target = target(k, in.root, 1.2);
                in.soft_distance = k % 2 ? 0.05 : 0;
                in.weight = k % 3 ? 1.0 : 0.5;
                in.match_end_rotation = k % 4 == 0;
                in.target_rotation = Quat::from_axis_angle({1, 0, 0}, 0.3);
                const TwoBoneResult r = solve_two_bone(in);
                sink += apply_two_bone(r, parents, 0, 1, 2, local);
                sink += solve_two_bone_local(in, parents, 0, 1, 2, local).status !=
                        TwoBoneStatus::kInvalidInput;
              }
            }),
            0);
  EXPECT_GT(sink, 0);
}

// A 10-joint chain of 10 cm bones along +Y, slightly bent.
struct Chain {
  std::array<Vec3, 10> offsets;
  std::array<Quat, 10> rest;
  Chain() {
    offsets.fill(Vec3{0, 0.1, 0});
    rest.fill(Quat::from_axis_angle({0, 0, 1}, 0.15));
  }
  IkChain chain() const { return {{0, 0, 0}, Quat::identity(), offsets}; }
};

TEST(IkNoAlloc, Ccd) {
  const Chain c;
  const std::array<JointLimit, 10> limits{
      JointLimit::of(make_hinge_limit({0, 0, 1}, -1.0, 1.0)),
      JointLimit::of(make_swing_twist_limit({0, 1, 0}, 0.8, -0.5, 0.5))};
  const IkJointLimits joint_limits{limits, {}};
  const IkLimitHook hook = make_limit_hook(joint_limits);
  std::array<double, 10> max_step;
  max_step.fill(0.4);
  int sink = 0;
  EXPECT_EQ(allocations([&] {
              for (int k = 0; k < kCalls; ++k) {
                std::array<Quat, 10> local = c.rest;
                CcdSettings s;
                s.settings = IkSettings{1e-4, 32};
                if (k % 2) s.max_step = max_step;
                sink +=
                    ccd_solve(c.chain(), local, target(k, {}, 1.3), s, k % 3 ? hook : IkLimitHook{})
                        .iterations;
              }
            }),
            0);
  EXPECT_GT(sink, 0);
}

TEST(IkNoAlloc, FabrikChainAndTree) {
  std::array<Vec3, 11> rest;
  for (std::size_t i = 0; i < rest.size(); ++i)
    rest[i] = {0.01 * static_cast<double>(i % 2), 0.1 * static_cast<double>(i), 0};
  std::array<FabrikConstraint, 11> cones;
  for (auto& cone : cones) cone = {FabrikConstraint::Kind::kCone, {0, 1, 0}, 0.6, -kPi, kPi};
  cones[5] = {FabrikConstraint::Kind::kHinge, {0, 0, 1}, 0, -1.0, 1.0};
  const std::array<FabrikPole, 1> pole{FabrikPole{0, 5, 10, {0, 0.5, 1}, true}};
  // A tree: pelvis → chest → two arms and a head.
  const std::array<Vec3, 7> tree_rest{Vec3{0, 0, 0},  Vec3{0, 1, 0},   Vec3{-0.5, 1, 0},
                                      Vec3{-1, 1, 0}, Vec3{0.5, 1, 0}, Vec3{1, 1, 0},
                                      Vec3{0, 1.3, 0}};
  const std::array<int, 7> parents{-1, 0, 1, 2, 1, 4, 1};
  int sink = 0;
  EXPECT_EQ(allocations([&] {
              for (int k = 0; k < kCalls; ++k) {
                std::array<Vec3, 11> p = rest;
                FabrikSettings s;
                s.settings = IkSettings{1e-4, 32};
                if (k % 2) s.constraints = cones;
                if (k % 3) s.poles = pole;
                sink += fabrik_solve_chain(p, target(k, {}, 1.3), s).iterations;
                std::array<Vec3, 7> q = tree_rest;
                const std::array<FabrikEffector, 2> eff{
                    FabrikEffector{3, target(k, {-0.5, 1, 0}, 0.8)},
                    FabrikEffector{5, target(k + 1, {0.5, 1, 0}, 0.8)}};
                sink += fabrik_solve(q, parents, eff, FabrikSettings{}).iterations;
              }
            }),
            0);
  EXPECT_GT(sink, 0);
}

TEST(IkNoAlloc, JacobianChainAndTree) {
  const Chain c;
  std::array<IkJoint, 10> joints;
  for (std::size_t i = 0; i < joints.size(); ++i)
    joints[i] = i % 3 == 2 ? IkJoint{IkJointType::kHinge, {0, 0, 1}} : IkJoint{};
  const std::array<JointLimit, 10> limits{
      JointLimit::of(make_swing_twist_limit({0, 1, 0}, 0.8, -0.5, 0.5))};
  const IkJointLimits joint_limits{limits, {}};
  const IkLimitHook hook = make_limit_hook(joint_limits);
  const std::array<JacobianMethod, 4> methods{
      JacobianMethod::kTranspose, JacobianMethod::kPseudoInverse,
      JacobianMethod::kDampedLeastSquares, JacobianMethod::kAdaptiveDampedLeastSquares};
  // The tree of the Jacobian tests: two arms on a spine.
  const std::array<int, 6> parents{-1, 0, 1, 2, 1, 4};
  const std::array<Vec3, 6> offsets{Vec3{0, 0, 0},    Vec3{0, 0.5, 0},   Vec3{-0.2, 0.1, 0},
                                    Vec3{-0.3, 0, 0}, Vec3{0.2, 0.1, 0}, Vec3{0.3, 0, 0}};
  const IkTree tree{{0, 1, 0}, Quat::identity(), parents, offsets};
  std::array<IkJoint, 6> tree_joints{};
  tree_joints[3] = IkJoint{IkJointType::kHinge, {0, 1, 0}};
  tree_joints[5] = IkJoint{IkJointType::kHinge, {0, 1, 0}};
  const Quat orientation = Quat::from_axis_angle({1, 0, 0}, 0.4);
  int sink = 0;
  EXPECT_EQ(allocations([&] {
              for (int k = 0; k < kCalls; ++k) {
                JacobianSettings s;
                s.method = methods[static_cast<std::size_t>(k) % methods.size()];
                s.settings = IkSettings{1e-4, 16};
                if (k % 5 == 0) s.max_joint_step = 0.2;
                std::array<Quat, 10> local = c.rest;
                sink += jacobian_solve(c.chain(), joints, local, target(k, {}, 1.3), s,
                                       k % 2 ? hook : IkLimitHook{},
                                       k % 3 == 0 ? &orientation : nullptr)
                            .iterations;
                std::array<double, 30> delta;
                sink += jacobian_step(c.chain(), joints, local, target(k, {}, 1.3),
                                      std::span<double>(delta.data(), jacobian_dof(joints)), s);
                std::array<Quat, 6> tree_local;
                tree_local.fill(Quat::identity());
                const std::array<IkTreeEffector, 2> eff{
                    IkTreeEffector{3, {-0.3, 0, 0}, target(k, {-0.5, 1.6, 0}, 0.5)},
                    IkTreeEffector{5, {0.3, 0, 0}, target(k + 1, {0.5, 1.6, 0}, 0.5)}};
                sink += jacobian_solve_tree(tree, tree_joints, tree_local, eff, s).iterations;
              }
            }),
            0);
  EXPECT_GT(sink, 0);
}

TEST(IkNoAlloc, LookAt) {
  const std::array<double, 3> weights{0.2, 0.3, 0.5};
  const std::array<double, 3> cones{0.3, 0.5, 1.0};
  double sink = 0;
  EXPECT_EQ(allocations([&] {
              for (int k = 0; k < kCalls; ++k) {
                std::array<Quat, 3> deltas;
                const Vec3 eye{0, 1.6, 0};
                const LookAtResult r = look_at(
                    eye, {0, 0, 1}, k % 11 == 0 ? eye : target(k, eye, 3), weights,
                    k % 2 ? std::span<const double>(cones) : std::span<const double>(), deltas);
                sink += r.angle + deltas[2].w;
              }
            }),
            0);
  EXPECT_NE(sink, 0);
}

// Two legs of 0.45 m bones, hips at 0.85 m, feet 0.2 m apart.
std::array<FootPlacementLeg, 2> legs(int k) {
  std::array<FootPlacementLeg, 2> out;
  for (std::size_t i = 0; i < 2; ++i) {
    const double x = i == 0 ? -0.1 : 0.1, z = 0.15 * std::sin(0.1 * k + static_cast<double>(i));
    out[i].hip = {x, 0.85, 0};
    out[i].knee = {x, 0.43, 0.1};
    out[i].ankle = {x, 0.08, z};
    out[i].ankle_height = 0.08;
  }
  return out;
}

template <class G>
long foot_placement_allocations(const G& ground) {
  FootPlacementState state;
  FootPlacementSettings settings;
  const std::array<FootPlacementJoints, 2> joints{FootPlacementJoints{1, 2, 3},
                                                  FootPlacementJoints{4, 5, 6}};
  const std::array<int, 7> parents{-1, 0, 1, 2, 0, 4, 5};
  std::array<Transform, 7> local{};
  double sink = 0;
  const long n = allocations([&] {
    for (int k = 0; k < kCalls; ++k) {
      const auto l = legs(k);
      std::array<FootPlacementLegResult, 2> out;
      if (k % 50 == 0) state.reset();
      const FootPlacementResult r =
          update_foot_placement(l, ground, settings, 1.0 / 60, state, out);
      sink += r.pelvis_offset + apply_foot_placement(r, out, joints, 0, parents, local);
    }
  });
  EXPECT_TRUE(std::isfinite(sink));
  return n;
}

TEST(IkNoAlloc, FootPlacementOnHeightField) {
  std::vector<double> h;
  for (int iz = 0; iz < 21; ++iz)
    for (int ix = 0; ix < 21; ++ix) h.push_back(0.05 * std::sin(ix * 0.7) + 0.03 * iz * 0.1);
  const HeightField ground(-1, -1, 0.1, 21, 21, h);
  EXPECT_EQ(foot_placement_allocations(ground), 0);
}

TEST(IkNoAlloc, FootPlacementOnTriangleMesh) {
  // A bumpy 8 × 8 grid of quads, two triangles each: enough for a BVH of several levels.
  std::vector<Vec3> v;
  std::vector<int> idx;
  const int n = 9;
  for (int iz = 0; iz < n; ++iz)
    for (int ix = 0; ix < n; ++ix)
      v.push_back({-1 + 0.25 * ix, 0.04 * std::cos(ix + 2.0 * iz), -1 + 0.25 * iz});
  for (int iz = 0; iz + 1 < n; ++iz)
    for (int ix = 0; ix + 1 < n; ++ix) {
      const int a = iz * n + ix;
      idx.insert(idx.end(), {a, a + 1, a + n + 1, a, a + n + 1, a + n});
    }
  const TriangleMeshGround ground(v, idx);
  EXPECT_EQ(foot_placement_allocations(ground), 0);
}

}  // namespace
}  // namespace kinema
