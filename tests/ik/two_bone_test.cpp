#include "kinema/ik/two_bone.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "../../src/ik/bend_acos.h"  // the solve's inline acos (private header)
#include "kinema/ik/joint_limits.h"
#include "kinema/skeleton/skeleton.h"
#include "two_bone_reference.h"

namespace kinema {
namespace {

// A leg put on a step (docs/worked_examples.md, "Two-bone IK"): thigh 4, shin 4, hip
// H = (0, 7.5), leg hanging straight down (knee (0, 3.5), ankle (0, −0.5)), foot target
// F = (2, 1.5), the character faces +x.
TwoBoneInput step_leg(int side) {
  TwoBoneInput in;
  in.root = {0, 7.5, 0};
  in.mid = {0, 3.5, 0};
  in.end = {0, -0.5, 0};
  in.target = {2, 1.5, 0};
  in.pole = {10, 3.5, 0};  // in front of the knee (+x): the pole side is "forward"
  in.elbow_side = side;
  return in;
}

TEST(TwoBone, ElbowSideFollowsTheSolvePlane) {
  // Solve plane: X along T − R, Z = X × (U − R), Y = Z × X; the mid joint is on the +Y (pole) side
  // for +1. Here X = (1, −3)/√10, U − R = (10, −4) → Z = +z, Y = (3, 1)/√10 (forward).
  const TwoBoneResult fwd = solve_two_bone(step_leg(+1));
  const Vec3 x = normalize(Vec3{2, -6, 0});
  const Vec3 y = cross(normalize(cross(x, Vec3{10, -4, 0})), x);
  EXPECT_GT(dot(fwd.mid_position - Vec3{0, 7.5, 0}, y), 0.0);
  const TwoBoneResult back = solve_two_bone(step_leg(-1));
  EXPECT_LT(dot(back.mid_position - Vec3{0, 7.5, 0}, y), 0.0);
  // Everything stays in the z = 0 plane.
  EXPECT_NEAR(fwd.mid_position.z, 0.0, 1e-12);
  EXPECT_NEAR(back.end_position.z, 0.0, 1e-12);
}

TEST(TwoBone, LegOnAStepKneesAndBoneAngles) {
  // Step 1: |F − H| = √40 = 6.325 < 8.
  EXPECT_NEAR(std::sqrt(40.0), 6.325, 5e-4);
  const TwoBoneResult fwd = solve_two_bone(step_leg(+1));
  const TwoBoneResult back = solve_two_bone(step_leg(-1));
  ASSERT_EQ(fwd.status, TwoBoneStatus::kReached);
  ASSERT_TRUE(back.reached);
  // Step 3: cos θ = (40 − 16 − 16)/32 = 0.25, knee bend 75.5°.
  EXPECT_NEAR(degrees(fwd.mid_bend), 75.5, 0.05);
  EXPECT_NEAR(std::cos(fwd.mid_bend), 0.25, 1e-12);
  // The two analytic knees, ≈(3.32, 5.28) and ≈(−1.32, 3.72) by hand. Exactly they are
  // H + 4(cos α·X ± sin α·Y) = (1 ± 3√0.6, 4.5 ± √0.6) = (3.3238, 5.2746), (−1.3238, 3.7254):
  // the hand values' y are 0.0054 off their own two decimals (5.27 and 3.73 would round right),
  // so x is tested to the printed precision and y to 0.01.
  EXPECT_NEAR(fwd.mid_position.x, 1.0 + 3.0 * std::sqrt(0.6), 1e-12);
  EXPECT_NEAR(fwd.mid_position.y, 4.5 + std::sqrt(0.6), 1e-12);
  EXPECT_NEAR(back.mid_position.x, 1.0 - 3.0 * std::sqrt(0.6), 1e-12);
  EXPECT_NEAR(back.mid_position.y, 4.5 - std::sqrt(0.6), 1e-12);
  EXPECT_NEAR(fwd.mid_position.x, 3.32, 0.005);
  EXPECT_NEAR(fwd.mid_position.y, 5.28, 0.01);
  EXPECT_NEAR(back.mid_position.x, -1.32, 0.005);
  EXPECT_NEAR(back.mid_position.y, 3.72, 0.01);
  for (const TwoBoneResult* r : {&fwd, &back}) {
    EXPECT_NEAR(distance(r->mid_position, Vec3{0, 7.5, 0}), 4.0, 1e-12);
    EXPECT_NEAR(distance(r->mid_position, Vec3{2, 1.5, 0}), 4.0, 1e-12);
    EXPECT_NEAR(distance(r->end_position, Vec3{2, 1.5, 0}), 0.0, 1e-12);
  }
  // Step 4: measured from the bind pose (bones straight down), about +z (counter-clockwise):
  // thigh ≈ 56.2°, shin ≈ −19.3°, the difference 75.5° is the knee bend.
  const Vec3 z{0, 0, 1};
  const double thigh = degrees(twist_angle(fwd.root_delta, z));
  const double shin = degrees(twist_angle(fwd.mid_delta, z));
  EXPECT_NEAR(thigh, 56.2, 0.05);
  EXPECT_NEAR(shin, -19.3, 0.05);
  EXPECT_NEAR(thigh - shin, 75.5, 0.05);
  // Pure rotations about z: no swing off the leg's plane.
  EXPECT_NEAR(std::abs(fwd.root_delta.z), length(fwd.root_delta.vec()), 1e-12);
}

TEST(TwoBone, KneeBendsOnADipAndAStep) {
  // Thigh and shin 0.45 m; hip (0, 0.85), foot (0.15, 0): d = √(0.15² + 0.85²) = 0.863,
  // knee bend arccos((0.745 − 0.405)/0.405) = arccos 0.840 = 32.9°. Pelvis lowered by 0.10 to
  // (0, 0.75): back foot (−0.15, −0.10) is 0.863 away again (32.9°); front foot (0.15, 0.15) is
  // √(0.0225 + 0.36) = 0.618 away: cos θ = (0.3825 − 0.405)/0.405 = −0.056, bend 93.2°.
  const auto bend = [](Vec3 hip, Vec3 foot) {
    TwoBoneInput in;
    in.root = hip;
    in.mid = hip + Vec3{0, -0.45, 0};
    in.end = hip + Vec3{0, -0.90, 0};
    in.target = foot;
    in.pole = hip + Vec3{1, -0.45, 0};  // knee forward (+x)
    const TwoBoneResult r = solve_two_bone(in);
    EXPECT_TRUE(r.reached);
    EXPECT_NEAR(distance(r.end_position, foot), 0.0, 1e-12);
    EXPECT_GT(r.mid_position.x, std::min(hip.x, foot.x));  // bends forward
    return degrees(r.mid_bend);
  };
  EXPECT_NEAR(distance(Vec3{0, 0.85, 0}, Vec3{0.15, 0, 0}), 0.863, 5e-4);
  EXPECT_NEAR(bend({0, 0.85, 0}, {0.15, 0, 0}), 32.9, 0.05);
  EXPECT_NEAR(bend({0, 0.75, 0}, {-0.15, -0.10, 0}), 32.9, 0.05);
  EXPECT_NEAR(distance(Vec3{0, 0.75, 0}, Vec3{0.15, 0.15, 0}), 0.618, 5e-4);
  EXPECT_NEAR(bend({0, 0.75, 0}, {0.15, 0.15, 0}), 93.2, 0.05);
}

TEST(TwoBone, UnreachableGivesStraightChainTowardsTarget) {
  TwoBoneInput in = step_leg(+1);
  in.target = {9, 2, 0};
  const TwoBoneResult r = solve_two_bone(in);
  EXPECT_EQ(r.status, TwoBoneStatus::kUnreachable);
  EXPECT_FALSE(r.reached);
  const Vec3 dir = normalize(in.target - in.root);
  EXPECT_NEAR(distance(r.mid_position, in.root + dir * 4.0), 0.0, 1e-9);
  EXPECT_NEAR(distance(r.end_position, in.root + dir * 8.0), 0.0, 1e-9);
  EXPECT_NEAR(r.mid_bend, 0.0, 1e-9);
}

TEST(TwoBone, TooCloseFoldsTowardsTarget) {
  TwoBoneInput in;
  in.root = {0, 0, 0};
  in.mid = {0, -3, 0};
  in.end = {0, -4, 1};  // l1 = 3, l2 = √2
  in.target = {0.5, 0, 0};
  in.pole = {0, 0, 5};
  const TwoBoneResult r = solve_two_bone(in);
  EXPECT_EQ(r.status, TwoBoneStatus::kUnreachable);
  const double l2 = std::sqrt(2.0);
  EXPECT_NEAR(distance(r.end_position, Vec3{3.0 - l2, 0, 0}), 0.0, 1e-9);
  EXPECT_NEAR(distance(r.mid_position, in.root), 3.0, 1e-12);
  EXPECT_NEAR(distance(r.mid_position, r.end_position), l2, 1e-12);
}

TEST(TwoBone, SoftIkApproachesFullExtensionSmoothly) {
  TwoBoneInput in = step_leg(+1);
  in.soft_distance = 0.5;
  double prev = 0;
  for (double d = 6.0; d < 10.0; d += 0.01) {
    in.target = in.root + normalize(Vec3{1, -3, 0}) * d;
    const TwoBoneResult r = solve_two_bone(in);
    const double reach = distance(r.end_position, in.root);
    EXPECT_LT(reach, 8.0);
    EXPECT_GE(reach, prev - 1e-12);  // monotonic, no snap
    if (d < 7.5) {
      EXPECT_TRUE(r.reached) << d;
    } else if (d > 7.5 + 1e-9 && d <= 8.0) {
      EXPECT_EQ(r.status, TwoBoneStatus::kSoftened) << d;
    }
    prev = reach;
  }
  // The formula: d' = (L − s) + s(1 − e^{−(d − (L − s))/s}) at d = L: 7.5 + 0.5(1 − e^{−1}).
  in.target = in.root + normalize(Vec3{1, -3, 0}) * 8.0;
  EXPECT_NEAR(distance(solve_two_bone(in).end_position, in.root),
              7.5 + 0.5 * (1.0 - std::exp(-1.0)), 1e-12);
}

TEST(TwoBone, WeightBlendsWithFk) {
  TwoBoneInput in = step_leg(+1);
  in.weight = 0;
  TwoBoneResult r = solve_two_bone(in);
  EXPECT_NEAR(distance(r.end_position, in.end), 0.0, 1e-12);
  in.weight = 0.5;
  r = solve_two_bone(in);
  EXPECT_NEAR(degrees(twist_angle(r.root_delta, {0, 0, 1})), 0.5 * 56.25, 0.1);
  EXPECT_NEAR(distance(r.mid_position, in.root), 4.0, 1e-12);
  EXPECT_NEAR(distance(r.mid_position, r.end_position), 4.0, 1e-12);
}

TEST(TwoBone, MatchesEndOrientation) {
  TwoBoneInput in = step_leg(+1);
  in.match_end_rotation = true;
  in.end_rotation = Quat::from_axis_angle({0, 1, 0}, 0.3);
  in.target_rotation = Quat::from_axis_angle({1, 0, 0}, -0.7);
  const TwoBoneResult r = solve_two_bone(in);
  EXPECT_NEAR(angle_between(r.end_delta * in.end_rotation, in.target_rotation), 0.0, 1e-12);
  EXPECT_NEAR(distance(r.end_position, in.target), 0.0, 1e-12);
}

TEST(TwoBone, DegenerateInputsNeverNaN) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  TwoBoneInput in = step_leg(+1);
  in.target = {nan, 0, 0};
  TwoBoneResult r = solve_two_bone(in);
  EXPECT_EQ(r.status, TwoBoneStatus::kInvalidInput);
  EXPECT_EQ(r.root_delta, Quat::identity());
  EXPECT_TRUE(is_finite(r.end_position));

  in = step_leg(+1);
  in.mid = in.root;  // zero-length thigh
  r = solve_two_bone(in);
  EXPECT_EQ(r.status, TwoBoneStatus::kDegenerate);
  EXPECT_TRUE(is_finite(r.mid_delta));

  in = step_leg(+1);
  in.target = in.root;  // on the root, l1 = l2: the end folds back onto the root
  r = solve_two_bone(in);
  EXPECT_TRUE(is_finite(r.root_delta) && is_finite(r.mid_position));
  EXPECT_NEAR(distance(r.end_position, in.root), 0.0, 1e-9);
  EXPECT_NEAR(distance(r.mid_position, in.root), 4.0, 1e-12);

  in = step_leg(+1);
  in.pole = in.root + (in.target - in.root) * 2.0;  // pole on the line R–T
  r = solve_two_bone(in);
  EXPECT_TRUE(r.pole_fallback);
  EXPECT_TRUE(r.reached);
  EXPECT_NEAR(distance(r.end_position, in.target), 0.0, 1e-9);
  EXPECT_TRUE(is_finite(r.mid_position));
}

TEST(TwoBone, ApplyToLocalTransforms) {
  // Root helper → hip → knee → twist helper → ankle, with a rotated parent.
  const std::vector<int> parents{-1, 0, 1, 2, 3};
  std::vector<Transform> local(5);
  local[0].rotation = Quat::from_axis_angle({0, 1, 0}, 0.4);
  local[0].translation = {0.2, 1.0, 0.0};
  local[1].translation = {0, -0.1, 0};
  local[1].rotation = Quat::from_axis_angle({1, 0, 0}, 0.2);
  local[2].translation = {0, -0.45, 0};
  local[2].rotation = Quat::from_axis_angle({1, 0, 0}, -0.3);
  local[3].translation = {0, -0.2, 0};
  local[3].rotation = Quat::from_axis_angle({0, 1, 0}, 0.5);
  local[4].translation = {0, -0.25, 0};
  std::vector<Mat4> model(5);
  ASSERT_TRUE(local_to_model(parents, local, model));
  TwoBoneInput in;
  in.root = model[1].translation_part();
  in.mid = model[2].translation_part();
  in.end = model[4].translation_part();
  in.target = in.root + Vec3{0.1, -0.6, 0.2};
  in.pole = in.root + Vec3{0, 0, 1};
  const TwoBoneResult r = solve_two_bone(in);
  ASSERT_TRUE(r.reached);
  ASSERT_TRUE(apply_two_bone(r, parents, 1, 2, 4, local));
  ASSERT_TRUE(local_to_model(parents, local, model));
  EXPECT_NEAR(distance(model[2].translation_part(), r.mid_position), 0.0, 1e-12);
  EXPECT_NEAR(distance(model[4].translation_part(), in.target), 0.0, 1e-12);
  EXPECT_FALSE(apply_two_bone(r, parents, 2, 1, 4, local));
}

// The local corrections (ozz's IKTwoBoneJob output form) give what apply_two_bone gives.
TEST(TwoBone, LocalCorrectionsMatchApply) {
  std::mt19937 rng(17);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const std::vector<int> parents{-1, 0, 1, 2, 3};
  for (int k = 0; k < 2000; ++k) {
    std::vector<Transform> local(5);
    for (Transform& t : local) {
      t.rotation = normalize(Quat{u(rng), u(rng), u(rng), u(rng)});
      t.translation = Vec3{u(rng), u(rng), u(rng)} * 0.4;
    }
    std::vector<Mat4> model(5);
    ASSERT_TRUE(local_to_model(parents, local, model));
    std::vector<Quat> model_rotation(5);
    Quat r = Quat::identity();
    for (int j = 0; j < 5; ++j) model_rotation[j] = r = normalize(r * local[j].rotation);
    TwoBoneInput in;
    in.root = model[1].translation_part();
    in.mid = model[2].translation_part();
    in.end = model[4].translation_part();
    in.target = in.root + Vec3{u(rng), u(rng), u(rng)} * 0.6;
    in.pole = in.root + Vec3{u(rng), u(rng), u(rng)};
    in.weight = k % 3 == 0 ? 0.6 : 1.0;
    in.match_end_rotation = k % 2 == 0;
    in.end_rotation = model_rotation[4];
    in.target_rotation = normalize(Quat{u(rng), u(rng), u(rng), u(rng)});
    const TwoBoneResult result = solve_two_bone(in);
    std::vector<Transform> applied = local;
    ASSERT_TRUE(apply_two_bone(result, parents, 1, 2, 4, applied));
    const TwoBoneCorrections c =
        two_bone_local_corrections(result, model_rotation[1], model_rotation[2], model_rotation[4]);
    const auto same = [](const Quat& a, const Quat& b) {
      return std::abs(std::abs(dot(a, b)) - 1.0) < 1e-12;
    };
    EXPECT_TRUE(same(normalize(local[1].rotation * c.root), applied[1].rotation)) << k;
    EXPECT_TRUE(same(normalize(local[2].rotation * c.mid), applied[2].rotation)) << k;
    EXPECT_TRUE(same(normalize(local[4].rotation * c.end), applied[4].rotation)) << k;
  }
  TwoBoneResult bad;
  bad.status = TwoBoneStatus::kDegenerate;
  bad.root_delta = Quat::from_axis_angle({1, 0, 0}, 1.0);
  const TwoBoneCorrections none =
      two_bone_local_corrections(bad, Quat::identity(), Quat::identity(), Quat::identity());
  EXPECT_EQ(none.root, Quat::identity());
}

// Randomized 100k: bone lengths kept (1e-6 relative), reachable targets reached (1e-9), the
// elbow on its side, the mid bending about the plane normal, everything finite.
TEST(TwoBone, RandomizedSweep) {
  std::mt19937 rng(42);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const auto rv = [&] { return Vec3{u(rng), u(rng), u(rng)}; };
  int reached = 0;
  for (int i = 0; i < 100000; ++i) {
    TwoBoneInput in;
    in.root = rv();
    in.mid = in.root + rv();
    in.end = in.mid + rv();
    in.target = in.root + rv() * 1.5;
    in.pole = in.root + rv();
    in.elbow_side = (i & 1) ? 1 : -1;
    const TwoBoneResult r = solve_two_bone(in);
    ASSERT_TRUE(is_finite(r.mid_position) && is_finite(r.end_position)) << i;
    ASSERT_TRUE(is_finite(r.root_delta) && is_finite(r.mid_delta)) << i;
    if (r.status == TwoBoneStatus::kDegenerate) continue;
    const double l1 = distance(in.mid, in.root), l2 = distance(in.end, in.mid);
    ASSERT_NEAR(distance(r.mid_position, in.root), l1, 1e-6 * l1) << i;
    ASSERT_NEAR(distance(r.end_position, r.mid_position), l2, 1e-6 * l2) << i;
    // The mid joint sits on the elbow side of the solve plane, and the mid's own
    // delta only bends about the new plane normal (the hinge stays a hinge).
    if (!r.pole_fallback) {
      const Vec3 x = normalize(in.target - in.root);
      const Vec3 y = normalize(cross(cross(x, in.pole - in.root), x));
      ASSERT_GE(in.elbow_side * dot(r.mid_position - in.root, y), -1e-9) << i;
    }
    const Vec3 n = cross(r.mid_position - in.root, r.end_position - r.mid_position);
    if (length(n) > 1e-6) {
      const Quat bend = r.mid_delta * conjugate(r.root_delta);
      ASSERT_LT(length(cross(bend.vec(), normalize(n))), 1e-9) << i;
    }
    const double d = distance(in.target, in.root);
    if (d >= std::abs(l1 - l2) && d <= l1 + l2) {
      ASSERT_TRUE(r.reached) << i;
      ASSERT_LT(distance(r.end_position, in.target), 1e-9) << i;
      ++reached;
    }
  }
  EXPECT_GT(reached, 10000);
}

// ---- The solve of 8b07023 (tests/ik/two_bone_reference.h) as the reference -------------------

// Random legs of every shape: bent, nearly straight and straight old chains (β0 = 0 exactly and
// ~1e-7), targets spread over [0, 1.3·(l1 + l2)] and pushed onto the boundaries of reach (|d − L|
// and |d − |l1 − l2|| from 1e-15 to 1e-3 relative, both sides), poles anywhere, near the line
// R–T and on it, the target on the root, both elbow sides, weights, soft IK and a matched end.
std::vector<TwoBoneInput> reference_legs(int count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0), u01(0.0, 1.0);
  const auto rv = [&] { return Vec3{u(rng), u(rng), u(rng)}; };
  const auto unit = [&] { return normalize(rv(), Vec3::unit_x()); };
  std::vector<TwoBoneInput> legs;
  for (int i = 0; i < count; ++i) {
    TwoBoneInput in;
    in.root = rv() * 2.0;
    const double l1 = 0.05 + 2.0 * u01(rng), l2 = 0.05 + 2.0 * u01(rng);
    const Vec3 a0 = unit();
    Vec3 u0 = unit();
    if (i % 7 == 1) u0 = a0;                                        // straight
    if (i % 7 == 2) u0 = normalize(a0 + cross(a0, unit()) * 1e-7);  // nearly straight
    in.mid = in.root + a0 * l1;
    in.end = in.mid + u0 * l2;
    const double total = l1 + l2, shortest = std::abs(l1 - l2);
    double d = 1.3 * total * u01(rng);
    const double eps = std::pow(10.0, -3.0 - 12.0 * u01(rng)) * (u01(rng) < 0.5 ? -1.0 : 1.0);
    if (i % 5 == 1) d = total * (1.0 + eps);
    if (i % 5 == 2) d = shortest * (1.0 + eps);
    const Vec3 dir = unit();
    in.target = in.root + dir * d;
    if (i % 97 == 3) in.target = in.root;
    in.pole = in.root + rv();
    if (i % 11 == 4) in.pole = in.root + dir * 3.0 + cross(dir, unit()) * 1e-6;  // near the line
    if (i % 13 == 5) in.pole = in.root + dir * 2.0;                              // on the line
    in.elbow_side = (i & 1) ? 1 : -1;
    if (i % 3 == 0) in.weight = u01(rng);
    if (i % 4 == 0) in.soft_distance = 0.3 * total * u01(rng);
    if (i % 6 == 0) {
      in.match_end_rotation = true;
      in.end_rotation = normalize(Quat{u(rng), u(rng), u(rng), u(rng)});
      in.target_rotation = normalize(Quat{u(rng), u(rng), u(rng), u(rng)});
    }
    legs.push_back(in);
  }
  return legs;
}

// The faster solve (law of cosines and Heron's area for the planar bones, Shepperd's method
// normalized by its own square root, positions at full weight from the new bones themselves)
// agrees with the reference: rotations within a tolerance tol, positions within 4·tol times the
// chain's size, the same status and flags, cos(mid_bend) within 1e-13·l_long/l_short. tol is 1e-12
// rad
// + 1e-15/sin β0 (1e-8 rad where the old chain is nearly straight, β0 ~ 1e-7, where the
// reference's bend normal a0 × u0 is only ⊥ a0 to ~ulp/β0 and the new solve's is made so).
// Where the reference took a shortest arc across nearly a
// half turn (a straight chain turned to within 1e-2 rad of π), its from_to misses the new bone
// by up to ~ulp/(π − θ), and by the whole residual angle within 4.5e-5 rad of π; the new solve
// lands on it (DeltasAgreeWithPositions), and the two are compared to 1e-4 there — at full
// weight only: below it, slerp from the identity turns a half turn (w ≈ 0) either way round,
// which the sign of a w of ~1e-7 decides, so the two may blend opposite ways. For a target
// out of reach (a straight or folded new chain) the reference's sin α = √(1 − cos²α) is ~1e-8
// whenever its cos α rounds one ulp below 1, which sends it down the bent-chain path (a turn to
// the pole's plane) instead of the shortest arcs of a straight chain — rounding picks its path;
// the new solve's sine is exactly 0 there (Heron's factor l1 + l2 − reach or
// reach − |l1 − l2| is 0) and it always takes the shortest arcs. There only the positions are
// compared, to 1e-7 (the reference's bent mid joint is ~1e-8·l1 off the line), and only at full
// weight (below it the two paths blend different rotations). With the pole near the line R–T
// (angle ψ to it), the reference's Z = X × (U − R) is ⊥ X only to ~ulp/ψ, the new solve's frame
// is orthogonalized: both tolerances grow by 1e-15/ψ. Near full extension or a full fold (bend
// β1 near 0 or π) the triangle itself is ill-conditioned — the mid joint moves by ~ulp/sin β1 —
// and the two solves' sines (Heron's area, √(1 − cos²)) differ by as much, the shorter bone's
// direction by l_long/l_short times that: + 1e-14·(l_long/l_short)/sin β1.
TEST(TwoBone, AgreesWithReferenceSolve) {
  const std::vector<TwoBoneInput> legs = reference_legs(20000, 7);
  int reached = 0, fallback = 0, straight_beyond = 0, near_half_turn = 0, rounding_path = 0;
  for (std::size_t i = 0; i < legs.size(); ++i) {
    const TwoBoneInput& in = legs[i];
    const TwoBoneResult r = solve_two_bone(in);
    const TwoBoneResult ref = two_bone_reference::solve_two_bone(in);
    ASSERT_EQ(r.status, ref.status) << i;
    ASSERT_EQ(r.reached, ref.reached) << i;
    ASSERT_EQ(r.pole_fallback, ref.pole_fallback) << i;
    const double size = std::max(1.0, distance(in.mid, in.root) + distance(in.end, in.mid));
    TwoBoneInput full_weight = in;
    full_weight.weight = 1;
    const TwoBoneResult ref1 = two_bone_reference::solve_two_bone(full_weight);
    const bool half_turn = angle_between(Quat::identity(), ref1.root_delta) > kPi - 1e-2 ||
                           angle_between(ref1.root_delta, ref1.mid_delta) > kPi - 1e-2;
    // Which path (the bent chain's frame rotation or a straight chain's shortest arcs) a new
    // chain within ~1e-6 of straight or folded takes is decided by rounding in the reference.
    const bool ambiguous = r.status == TwoBoneStatus::kUnreachable || half_turn ||
                           std::abs(std::sin(ref1.mid_bend)) < 1e-6;
    const Vec3 to_pole = in.pole - in.root, to_target = in.target - in.root;
    const double psi = length(cross(to_target, to_pole)) / (length(to_target) * length(to_pole));
    const double pole_tol = psi > 0 ? 1e-15 / psi : 0.0;
    const Vec3 bone1 = in.mid - in.root, bone2 = in.end - in.mid;
    const double sin_b0 = length(cross(bone1, bone2)) / (length(bone1) * length(bone2));
    const double ratio =
        std::max(length(bone1), length(bone2)) / std::min(length(bone1), length(bone2));
    const double bend_tol = 1e-14 * ratio / std::max(std::abs(std::sin(ref.mid_bend)), 1e-8);
    const double tol = 1e-12 + 1e-15 / std::max(sin_b0, 1e-9) + pole_tol + bend_tol;
    if (ambiguous) {
      ++rounding_path;
      if (in.weight >= 1) {  // same positions whichever path; below full weight they blend apart
        const double position_tol = std::max(4 * tol, half_turn ? 1e-4 : 1e-6) * size;
        ASSERT_LT(distance(r.mid_position, ref.mid_position), position_tol) << i;
        ASSERT_LT(distance(r.end_position, ref.end_position), position_tol) << i;
      }
    } else {
      ASSERT_LT(distance(r.mid_position, ref.mid_position), 4 * tol * size) << i;
      ASSERT_LT(distance(r.end_position, ref.end_position), 4 * tol * size) << i;
      ASSERT_LT(angle_between(r.root_delta, ref.root_delta), tol) << i;
      ASSERT_LT(angle_between(r.mid_delta, ref.mid_delta), tol) << i;
      ASSERT_LT(angle_between(r.end_delta, ref.end_delta), tol) << i;
    }
    near_half_turn += half_turn;
    ASSERT_NEAR(r.mid_bend, ref.mid_bend, 1e-6) << i;  // acos near 0 and π: 1e-14 → 1.5e-7
    ASSERT_NEAR(std::cos(r.mid_bend), std::cos(ref.mid_bend), 1e-13 * ratio) << i;
    ASSERT_NEAR(length(r.root_delta), 1.0, 1e-14) << i;
    ASSERT_NEAR(length(r.mid_delta), 1.0, 1e-14) << i;
    ASSERT_NEAR(length(r.end_delta), 1.0, 1e-14) << i;
    if (r.reached) {
      ++reached;
      if (in.weight >= 1 && in.soft_distance == 0) {
        ASSERT_LT(distance(r.end_position, in.target), 1e-12 * size) << i;
      }
    }
    fallback += r.pole_fallback;
    straight_beyond += r.status == TwoBoneStatus::kUnreachable;
  }
  EXPECT_GT(reached, 8000);
  EXPECT_GT(fallback, 1000);
  EXPECT_GT(straight_beyond, 3000);
  EXPECT_GT(near_half_turn, 100);
  EXPECT_GT(static_cast<int>(legs.size()) - rounding_path, 8000);  // compared in full
}

// The deltas carry the chain where the positions say: FK of the applied rotations puts the mid
// and end joints on r.mid_position and r.end_position (1e-12), at every weight.
TEST(TwoBone, DeltasAgreeWithPositions) {
  const std::vector<TwoBoneInput> legs = reference_legs(20000, 8);
  for (std::size_t i = 0; i < legs.size(); ++i) {
    const TwoBoneInput& in = legs[i];
    const TwoBoneResult r = solve_two_bone(in);
    const double size = std::max(1.0, distance(in.mid, in.root) + distance(in.end, in.mid));
    const Vec3 mid = in.root + rotate(r.root_delta, in.mid - in.root);
    const Vec3 end = mid + rotate(r.mid_delta, in.end - in.mid);
    ASSERT_LT(distance(mid, r.mid_position), 1e-12 * size) << i;
    ASSERT_LT(distance(end, r.end_position), 1e-12 * size) << i;
  }
}

// apply_two_bone (products only where a joint has a correction; the end joint untouched when
// end_delta = mid_delta) gives the reference's local rotations within 1e-12, on random skeletons
// with joints between the chain's (root → a → hip → b → knee → c → ankle) and without.
TEST(TwoBone, ApplyAgreesWithReference) {
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const std::vector<TwoBoneInput> legs = reference_legs(4000, 10);
  const std::vector<int> parents{-1, 0, 1, 2, 3, 4, 5};
  for (std::size_t i = 0; i < legs.size(); ++i) {
    std::vector<Transform> local(7);
    for (Transform& t : local) t.rotation = normalize(Quat{u(rng), u(rng), u(rng), u(rng)});
    const bool between = i % 2 == 0;
    const int root = between ? 2 : 1, mid = between ? 4 : 2, end = between ? 6 : 3;
    const TwoBoneResult r = solve_two_bone(legs[i]);
    std::vector<Transform> mine = local, ref = local;
    const bool ok = apply_two_bone(r, parents, root, mid, end, mine);
    ASSERT_EQ(ok, two_bone_reference::apply_two_bone(r, parents, root, mid, end, ref)) << i;
    for (int j = 0; j < 7; ++j) {
      ASSERT_LT(angle_between(mine[j].rotation, ref[j].rotation), 1e-12) << i << ' ' << j;
      ASSERT_NEAR(length(mine[j].rotation), 1.0, 1e-14) << i << ' ' << j;
    }
    if (r.end_delta == r.mid_delta) {
      ASSERT_EQ(mine[end].rotation, local[end].rotation) << i;
    }
  }
  // Invalid hierarchies are refused as before: end not below mid, not parents-first.
  const TwoBoneResult r = solve_two_bone(legs[0]);
  std::vector<Transform> local(7);
  EXPECT_FALSE(apply_two_bone(r, std::vector<int>{-1, 0, 1, 2, 3, 4, 0}, 2, 4, 6, local));
  EXPECT_FALSE(apply_two_bone(r, std::vector<int>{-1, 0, 1, 5, 3, 4, 5}, 2, 4, 6, local));
  EXPECT_FALSE(apply_two_bone(r, parents, 2, 4, 7, local));
}

// Every non-finite input field gives kInvalidInput (integer test of the exponent bits), and a
// non-finite rotation is ignored unless the end rotation is matched.
TEST(TwoBone, EveryNonFiniteInputIsInvalid) {
  const double bad[] = {std::numeric_limits<double>::quiet_NaN(),
                        std::numeric_limits<double>::infinity(),
                        -std::numeric_limits<double>::infinity()};
  for (const double b : bad) {
    for (int field = 0; field < 25; ++field) {
      TwoBoneInput in = step_leg(+1);
      in.match_end_rotation = field >= 17;
      double* v = field < 15   ? &in.root.x + field
                  : field < 17 ? (field == 15 ? &in.weight : &in.soft_distance)
                  : field < 21 ? &in.end_rotation.x + (field - 17)
                               : &in.target_rotation.x + (field - 21);
      *v = b;
      const TwoBoneResult r = solve_two_bone(in);
      EXPECT_EQ(r.status, TwoBoneStatus::kInvalidInput) << field;
      EXPECT_TRUE(is_finite(r.mid_position) && is_finite(r.end_position)) << field;
      if (field >= 17) {
        in.match_end_rotation = false;
        EXPECT_EQ(solve_two_bone(in).status, TwoBoneStatus::kReached) << field;
      }
    }
  }
  // The largest finite values are finite.
  TwoBoneInput in = step_leg(+1);
  in.pole = {std::numeric_limits<double>::max(), 0, 0};
  in.weight = -std::numeric_limits<double>::max();
  EXPECT_NE(solve_two_bone(in).status, TwoBoneStatus::kInvalidInput);
}

// The solve's inline acos for mid_bend (src/ik/bend_acos.h) is within 1.5 ulp of the exact
// value; std::acos is within 1 ulp, so the two differ by at most 3 ulp of the result: uniform
// arguments, arguments within 1e-6 of ±1 (where acos is small or near π) and of the ±1/2 branch
// points, and the ends exactly.
TEST(TwoBone, InlineAcosAgreesWithStdAcos) {
  std::mt19937 rng(13);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0), near(0.0, 1e-6);
  std::vector<double> args{-1.0,
                           -0.5,
                           0.0,
                           0.5,
                           1.0,
                           std::nextafter(0.5, 1.0),
                           std::nextafter(1.0, 0.0),
                           std::nextafter(-1.0, 0.0)};
  for (int i = 0; i < 200000; ++i) args.push_back(uniform(rng));
  for (int i = 0; i < 20000; ++i) {
    args.push_back(1.0 - near(rng));
    args.push_back(-1.0 + near(rng));
    args.push_back(0.5 + near(rng) - 0.5e-6);
    args.push_back(-0.5 + near(rng) - 0.5e-6);
  }
  double worst = 0;
  for (const double c : args) {
    const double exact = std::acos(c);
    const double ulp = std::nextafter(exact, 4.0) - exact;
    const double err = std::abs(ik_detail::bend_acos(c) - exact) / ulp;
    worst = std::max(worst, err);
    ASSERT_LE(err, 3.0) << c;
  }
  EXPECT_EQ(ik_detail::bend_acos(1.0), 0.0);
  EXPECT_EQ(ik_detail::bend_acos(-1.0), kPi);
  EXPECT_LT(worst, 3.0);
}

// The AVX2 copies of solve_two_bone and apply_two_bone give the same bits as the baseline ones.
TEST(TwoBone, Avx2CopiesGiveTheSameBits) {
  const bool has_avx2 = set_two_bone_avx2(true);
  const std::vector<TwoBoneInput> legs = reference_legs(5000, 11);
  const std::vector<int> parents{-1, 0, 1, 2, 3, 4, 5};
  std::mt19937 rng(12);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (std::size_t i = 0; i < legs.size(); ++i) {
    std::vector<Transform> local(7);
    for (Transform& t : local) t.rotation = normalize(Quat{u(rng), u(rng), u(rng), u(rng)});
    TwoBoneResult r[2];
    std::vector<Transform> applied[2] = {local, local};
    for (int k = 0; k < 2; ++k) {
      set_two_bone_avx2(k == 1);
      r[k] = solve_two_bone(legs[i]);
      apply_two_bone(r[k], parents, 2, 4, 6, applied[k]);
    }
    const auto same = [](const auto& a, const auto& b) {
      return std::memcmp(&a, &b, sizeof a) == 0;
    };
    ASSERT_TRUE(same(r[0].root_delta, r[1].root_delta) && same(r[0].mid_delta, r[1].mid_delta) &&
                same(r[0].end_delta, r[1].end_delta) &&
                same(r[0].mid_position, r[1].mid_position) &&
                same(r[0].end_position, r[1].end_position) && same(r[0].mid_bend, r[1].mid_bend))
        << i;
    for (int j = 0; j < 7; ++j) ASSERT_TRUE(same(applied[0][j], applied[1][j])) << i << ' ' << j;
  }
  set_two_bone_avx2(true);
  if (!has_avx2) GTEST_SKIP() << "no AVX2 on this CPU: both runs used the baseline copy";
}

// A random 8-joint skeleton with the chain root 2 → mid 4 → end 6 (a twist joint between hip
// and knee, one between knee and ankle, two joints above the root), uniform scales.
struct RandomLimb {
  std::vector<int> parents{-1, 0, 1, 2, 3, 4, 5, 6};
  std::vector<Transform> local;
  TwoBoneInput in;
};

RandomLimb random_limb(std::mt19937& rng, int k) {
  std::uniform_real_distribution<double> u(-1.0, 1.0), s(0.5, 2.0);
  RandomLimb limb;
  limb.local.resize(8);
  for (Transform& t : limb.local) {
    t.rotation = normalize(Quat{u(rng), u(rng), u(rng), u(rng)});
    t.translation = Vec3{u(rng), u(rng), u(rng)} * 0.4;
    const double scale = k % 4 == 0 ? s(rng) : 1.0;
    t.scale = {scale, scale, scale};
  }
  limb.in.target = Vec3{u(rng), u(rng), u(rng)};
  limb.in.pole = Vec3{u(rng), u(rng), u(rng)} * 2.0;
  limb.in.weight = k % 3 == 0 ? 0.6 : 1.0;
  limb.in.soft_distance = k % 5 == 0 ? 0.05 : 0.0;
  limb.in.match_end_rotation = k % 2 == 0;
  limb.in.target_rotation = normalize(Quat{u(rng), u(rng), u(rng), u(rng)});
  return limb;
}

// What a caller without the fused call does: local_to_model for the positions, the end's model
// rotation from the local rotations, solve_two_bone, apply_two_bone. The chain is root → mid →
// end on the limb's single line of joints (2 → 4 → 6 by default).
TwoBoneResult fk_solve_apply(const RandomLimb& limb, std::vector<Transform>& local, int root = 2,
                             int mid = 4, int end = 6) {
  std::vector<Mat4> model(limb.local.size());
  EXPECT_TRUE(local_to_model(limb.parents, local, model));
  TwoBoneInput in = limb.in;
  in.root = model[static_cast<size_t>(root)].translation_part();
  in.mid = model[static_cast<size_t>(mid)].translation_part();
  in.end = model[static_cast<size_t>(end)].translation_part();
  Quat end_rotation = Quat::identity();
  for (int j = 0; j <= end; ++j)
    end_rotation = end_rotation * local[static_cast<size_t>(j)].rotation;
  in.end_rotation = normalize(end_rotation);
  const TwoBoneResult r = solve_two_bone(in);
  apply_two_bone(r, limb.parents, root, mid, end, local);
  return r;
}

TEST(TwoBone, SolveFromLocalTransformsMatchesFkSolveApply) {
  std::mt19937 rng(23);
  // Chains whose end has 7, 6, 5, 4 and 3 joints on its way to the top (the FK builds its
  // rotations two joints a step, so both parities and the shortest chains are covered).
  constexpr std::array<std::array<int, 3>, 5> kChains{
      {{2, 4, 6}, {1, 3, 5}, {1, 2, 4}, {0, 2, 3}, {0, 1, 2}}};
  for (int k = 0; k < 3000; ++k) {
    const RandomLimb limb = random_limb(rng, k);
    const auto [root, mid, end] = kChains[static_cast<size_t>(k) % kChains.size()];
    std::vector<Transform> fused = limb.local, reference = limb.local;
    const TwoBoneResult a = solve_two_bone_local(limb.in, limb.parents, root, mid, end, fused);
    const TwoBoneResult b = fk_solve_apply(limb, reference, root, mid, end);
    ASSERT_EQ(a.status, b.status) << k;
    ASSERT_EQ(a.pole_fallback, b.pole_fallback) << k;
    // The two FKs round differently (quaternions and vectors against 4×4 matrices).
    const double tolerance = 1e-9;
    EXPECT_LT(distance(a.mid_position, b.mid_position), tolerance) << k;
    EXPECT_LT(distance(a.end_position, b.end_position), tolerance) << k;
    for (int j = 0; j < 8; ++j) {
      const Quat& qa = fused[static_cast<size_t>(j)].rotation;
      const Quat& qb = reference[static_cast<size_t>(j)].rotation;
      EXPECT_LT(1.0 - std::abs(dot(qa, qb)), tolerance) << k << ' ' << j;
      EXPECT_EQ(fused[static_cast<size_t>(j)].translation,
                limb.local[static_cast<size_t>(j)].translation);
    }
  }
}

TEST(TwoBone, SolveFromLocalTransformsPutsTheEndOnReachableTargets) {
  std::mt19937 rng(29);
  int reached = 0;
  for (int k = 0; k < 2000; ++k) {
    RandomLimb limb = random_limb(rng, k);
    limb.in.weight = 1;
    limb.in.soft_distance = 0;
    std::vector<Transform> local = limb.local;
    const TwoBoneResult r = solve_two_bone_local(limb.in, limb.parents, 2, 4, 6, local);
    std::vector<Mat4> before(8), after(8);
    ASSERT_TRUE(local_to_model(limb.parents, limb.local, before));
    ASSERT_TRUE(local_to_model(limb.parents, local, after));
    // Bone lengths kept, the end on the target when reached.
    EXPECT_NEAR(distance(after[2].translation_part(), after[4].translation_part()),
                distance(before[2].translation_part(), before[4].translation_part()), 1e-9);
    EXPECT_NEAR(distance(after[4].translation_part(), after[6].translation_part()),
                distance(before[4].translation_part(), before[6].translation_part()), 1e-9);
    if (r.status == TwoBoneStatus::kReached) {
      ++reached;
      EXPECT_LT(distance(after[6].translation_part(), limb.in.target), 1e-9) << k;
    }
  }
  EXPECT_GT(reached, 200);
}

TEST(TwoBone, SolveFromLocalTransformsRefusesWhatItCannotPlace) {
  std::mt19937 rng(31);
  const RandomLimb limb = random_limb(rng, 1);
  const auto refused = [&](std::vector<int> parents, std::vector<Transform> local, int root,
                           int mid, int end) {
    const std::vector<Transform> before = local;
    const TwoBoneResult r = solve_two_bone_local(limb.in, parents, root, mid, end, local);
    return r.status == TwoBoneStatus::kInvalidInput &&
           std::memcmp(local.data(), before.data(), local.size() * sizeof(Transform)) == 0;
  };
  EXPECT_TRUE(refused(limb.parents, limb.local, 4, 2, 6));  // mid above root
  EXPECT_TRUE(refused(limb.parents, limb.local, 2, 4, 8));  // end out of range
  EXPECT_TRUE(refused(limb.parents,
                      std::vector<Transform>(limb.local.begin(), limb.local.end() - 1), 2, 4,
                      6));  // spans of different sizes
  std::vector<int> side_branch = limb.parents;
  side_branch[5] = 3;  // the end's parent chain 6 → 5 → 3 skips the mid 4
  EXPECT_TRUE(refused(side_branch, limb.local, 2, 4, 6));
  std::vector<int> root_aside = limb.parents;
  root_aside[4] = 2;  // the mid hangs from 2: joint 3 is no ancestor of it
  EXPECT_TRUE(refused(root_aside, limb.local, 3, 4, 6));
  std::vector<int> not_parents_first = limb.parents;
  not_parents_first[3] = 7;
  EXPECT_TRUE(refused(not_parents_first, limb.local, 2, 4, 6));
  std::vector<Transform> squashed = limb.local;
  squashed[1].scale = {1, 0.5, 1};  // a non-uniform scale above the chain
  EXPECT_TRUE(refused(limb.parents, squashed, 2, 4, 6));
  // Deeper than 64 joints above the end.
  std::vector<int> deep_parents(70);
  std::vector<Transform> deep(70);
  for (int j = 0; j < 70; ++j) {
    deep_parents[static_cast<size_t>(j)] = j - 1;
    deep[static_cast<size_t>(j)].translation = {0, 0.1, 0};
  }
  EXPECT_TRUE(refused(deep_parents, deep, 66, 67, 69));
  // The same chain 60 deep is placed.
  std::vector<Transform> shallow(deep.begin(), deep.begin() + 60);
  std::vector<int> shallow_parents(deep_parents.begin(), deep_parents.begin() + 60);
  TwoBoneInput in;
  in.target = {0.05, 5.85, 0};
  in.pole = {0, 5.8, 1};
  EXPECT_NE(solve_two_bone_local(in, shallow_parents, 56, 57, 59, shallow).status,
            TwoBoneStatus::kInvalidInput);
}

TEST(TwoBone, SolveFromLocalTransformsGivesTheSameBitsInBothCopies) {
  const bool has_avx2 = set_two_bone_avx2(true);
  std::mt19937 rng(37);
  for (int k = 0; k < 3000; ++k) {
    const RandomLimb limb = random_limb(rng, k);
    std::vector<Transform> local[2] = {limb.local, limb.local};
    TwoBoneResult r[2];
    for (int copy = 0; copy < 2; ++copy) {
      set_two_bone_avx2(copy == 1);
      r[copy] = solve_two_bone_local(limb.in, limb.parents, 2, 4, 6, local[copy]);
    }
    ASSERT_EQ(std::memcmp(&r[0].end_position, &r[1].end_position, sizeof(Vec3)), 0) << k;
    ASSERT_EQ(std::memcmp(local[0].data(), local[1].data(), 8 * sizeof(Transform)), 0) << k;
  }
  set_two_bone_avx2(true);
  if (!has_avx2) GTEST_SKIP() << "no AVX2 on this CPU: both runs used the baseline copy";
}

}  // namespace
}  // namespace kinema
