// Stride and orientation warping (kinema/ik/locomotion_warp.h): the ankles move only along the
// movement direction, by the stride scale; the pelvis drops by the least amount that lets every
// leg reach; bone lengths stay; the chest keeps its facing while the legs turn.
#include "kinema/ik/locomotion_warp.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kinema/math/scalar.h"

namespace kinema {
namespace {

// pelvis(0) → hip(1) → knee(2) → ankle(3), pelvis → hip(4) → knee(5) → ankle(6),
// pelvis → spine(7) → spine(8) → chest(9) → head(10). Thigh and shin 0.45 m.
const std::vector<int> kParents{-1, 0, 1, 2, 0, 4, 5, 0, 7, 8, 9};

// A mid-stride pose: left foot 0.3 m ahead (+z), right foot 0.3 m behind, knees a little bent.
std::vector<Transform> stride_pose(double half_stride = 0.3) {
  std::vector<Transform> local(kParents.size());
  local[0].translation = {0, 0.95, 0};
  const double l = 0.45;
  for (int side = 0; side < 2; ++side) {
    const std::size_t hip = side == 0 ? 1 : 4;
    local[hip].translation = {side == 0 ? 0.1 : -0.1, -0.08, 0};
    // Ankle at (±0.1, 0.1, ±half_stride) in model space; the knee bent forward by the law of
    // cosines in the plane of the leg.
    const double dz = side == 0 ? half_stride : -half_stride, dy = 0.1 - 0.87;
    const double d = std::sqrt(dz * dz + dy * dy);
    const double pitch = std::atan2(dz, -dy);  // from straight down towards +z
    const double bend = std::acos((2 * l * l - d * d) / (2 * l * l));  // the knee's inner angle
    const double hip_angle = pitch + (kPi - bend) / 2;  // thigh ahead of the hip-ankle line
    local[hip].rotation = Quat::from_axis_angle({1, 0, 0}, -hip_angle);
    local[hip + 1].translation = {0, -l, 0};
    local[hip + 1].rotation = Quat::from_axis_angle({1, 0, 0}, kPi - bend);
    local[hip + 2].translation = {0, -l, 0};
  }
  local[7].translation = {0, 0.1, 0};
  local[8].translation = {0, 0.15, 0.01};
  local[9].translation = {0, 0.15, 0};
  local[10].translation = {0, 0.25, 0};
  local[8].rotation = Quat::from_axis_angle({1, 0, 0}, 0.1);
  return local;
}

std::vector<Transform> model_of(const std::vector<Transform>& local) {
  std::vector<Transform> model(local.size());
  for (std::size_t j = 0; j < local.size(); ++j)
    model[j] = kParents[j] < 0 ? local[j] : model[static_cast<std::size_t>(kParents[j])] * local[j];
  return model;
}

std::array<StrideWarpLeg, 2> legs_of(const std::vector<Transform>& model) {
  return {StrideWarpLeg{model[1].translation, model[2].translation, model[3].translation,
                        model[3].rotation},
          StrideWarpLeg{model[4].translation, model[5].translation, model[6].translation,
                        model[6].rotation}};
}

constexpr double kDt = 1.0 / 30;

const std::array<StrideWarpJoints, 2> kLegJoints{StrideWarpJoints{1, 2, 3},
                                                 StrideWarpJoints{4, 5, 6}};

StrideWarpSettings settings_for(const std::vector<Transform>& model, double scale) {
  StrideWarpSettings s;
  s.stride_scale = scale;
  s.pelvis = model[0].translation;
  return s;
}

// Warps `local` in place and returns the solve's result.
StrideWarpResult warp(std::vector<Transform>& local, const StrideWarpSettings& s,
                      std::array<StrideWarpLegResult, 2>& out) {
  const auto legs = legs_of(model_of(local));
  StrideWarpState state;
  const StrideWarpResult r = solve_stride_warp(legs, s, kDt, state, out);
  EXPECT_EQ(r.status, StrideWarpStatus::kOk);
  EXPECT_TRUE(apply_stride_warp(r, out, kLegJoints, 0, kParents, local));
  return r;
}

TEST(StrideWarp, ScaleOneLeavesThePoseAsItIs) {
  std::vector<Transform> local = stride_pose();
  const std::vector<Transform> before = model_of(local);
  // The fixture: ankles 0.3 m ahead and behind, 0.1 m above the floor.
  EXPECT_NEAR(length(before[3].translation - Vec3{0.1, 0.1, 0.3}), 0.0, 1e-12);
  EXPECT_NEAR(length(before[6].translation - Vec3{-0.1, 0.1, -0.3}), 0.0, 1e-12);
  std::array<StrideWarpLegResult, 2> out;
  const StrideWarpResult r = warp(local, settings_for(before, 1.0), out);
  EXPECT_EQ(r.pelvis_offset, 0.0);
  const std::vector<Transform> after = model_of(local);
  for (std::size_t j = 0; j < after.size(); ++j)
    EXPECT_NEAR(length(after[j].translation - before[j].translation), 0.0, 1e-12) << j;
}

TEST(StrideWarp, AnklesMoveOnlyAlongTheDirectionByTheScale) {
  for (const Vec3 direction : {Vec3{0, 0, 1}, Vec3{1, 0.3, 1}, Vec3{-2, 0, 0.5}}) {
    for (const double scale : {0.7, 1.25}) {
      std::vector<Transform> local = stride_pose();
      const std::vector<Transform> before = model_of(local);
      StrideWarpSettings s = settings_for(before, scale);
      s.direction = direction;
      std::array<StrideWarpLegResult, 2> out;
      warp(local, s, out);
      const Vec3 d = normalize(Vec3{direction.x, 0, direction.z});
      const std::vector<Transform> after = model_of(local);
      for (const std::size_t ankle : {std::size_t{3}, std::size_t{6}}) {
        const Vec3 moved = after[ankle].translation - before[ankle].translation;
        const double along = dot(before[ankle].translation - before[0].translation, d);
        EXPECT_NEAR(dot(moved, d), (scale - 1) * along, 1e-9) << ankle;
        EXPECT_NEAR(length(moved - d * dot(moved, d)), 0.0, 1e-9) << "sideways or vertical";
      }
    }
  }
}

TEST(StrideWarp, PelvisDropsByTheLeastAmountThatLetsEveryLegReach) {
  const double scale = 1.5;  // 0.45 m half strides: out of reach without a drop
  std::vector<Transform> local = stride_pose();
  const std::vector<Transform> before = model_of(local);
  const StrideWarpSettings s = settings_for(before, scale);
  std::array<StrideWarpLegResult, 2> out;
  const StrideWarpResult r = warp(local, s, out);
  ASSERT_LT(r.pelvis_offset, -1e-3);
  const std::vector<Transform> after = model_of(local);
  EXPECT_NEAR(after[0].translation.y - before[0].translation.y, r.pelvis_offset, 1e-12);
  // The most demanding leg ends exactly at max_extension of its length; the other within it.
  double most = 0;
  for (const std::size_t hip : {std::size_t{1}, std::size_t{4}}) {
    const double extension = length(after[hip + 2].translation - after[hip].translation) / 0.9;
    EXPECT_LE(extension, s.max_extension + 1e-9);
    most = std::max(most, extension);
    EXPECT_TRUE(out[hip == 1 ? 0 : 1].ik.reached);
    EXPECT_NEAR(length(after[hip + 2].translation - out[hip == 1 ? 0 : 1].target), 0.0, 1e-9);
  }
  EXPECT_NEAR(most, s.max_extension, 1e-9);

  // A shorter stride needs no drop; a cap that is too small leaves the legs short of their
  // targets, straight.
  std::vector<Transform> shorter = stride_pose();
  EXPECT_EQ(warp(shorter, settings_for(model_of(shorter), 0.8), out).pelvis_offset, 0.0);
  std::vector<Transform> capped = stride_pose();
  StrideWarpSettings c = settings_for(model_of(capped), 1.8);
  c.max_pelvis_drop = 0.01;
  EXPECT_NEAR(warp(capped, c, out).pelvis_offset, -0.01, 1e-15);
  EXPECT_EQ(out[0].ik.status, TwoBoneStatus::kUnreachable);
}

TEST(StrideWarp, BoneLengthsStayOnRandomPosesAndScales) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> stride(0.05, 0.38), scale(0.6, 1.6), turn(-kPi, kPi);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<Transform> local = stride_pose(stride(rng));
    local[0].rotation = Quat::from_axis_angle({0, 1, 0}, turn(rng));
    const std::vector<Transform> before = model_of(local);
    StrideWarpSettings s = settings_for(before, scale(rng));
    s.direction = rotate(before[0].rotation, Vec3{0, 0, 1});
    s.forward = s.direction;
    std::array<StrideWarpLegResult, 2> out;
    warp(local, s, out);
    const std::vector<Transform> after = model_of(local);
    for (std::size_t j = 1; j < after.size(); ++j) {
      const std::size_t p = static_cast<std::size_t>(kParents[j]);
      EXPECT_NEAR(length(after[j].translation - after[p].translation),
                  length(before[j].translation - before[p].translation), 1e-9)
          << "trial " << trial << " joint " << j;
    }
  }
}

TEST(StrideWarp, BadInputIsRefusedAndThePoseLeftAlone) {
  const std::vector<Transform> local = stride_pose();
  const std::vector<Transform> model = model_of(local);
  const auto legs = legs_of(model);
  std::array<StrideWarpLegResult, 2> out;
  StrideWarpState state;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto refused = [&](StrideWarpSettings s) {
    return solve_stride_warp(legs, s, kDt, state, out).status == StrideWarpStatus::kInvalidInput;
  };
  StrideWarpSettings s = settings_for(model, 1.2);
  EXPECT_FALSE(refused(s));
  s.stride_scale = 0;
  EXPECT_TRUE(refused(s));
  s = settings_for(model, nan);
  EXPECT_TRUE(refused(s));
  s = settings_for(model, 1.2);
  s.direction = {0, 1, 0};  // no horizontal part
  EXPECT_TRUE(refused(s));
  s = settings_for(model, 1.2);
  s.max_extension = 1.5;
  EXPECT_TRUE(refused(s));
  s = settings_for(model, 1.2);
  s.max_pelvis_drop = -0.1;
  EXPECT_TRUE(refused(s));
  s = settings_for(model, 1.2);
  s.pelvis.x = nan;
  EXPECT_TRUE(refused(s));
  std::array<StrideWarpLeg, 2> bad_legs = legs;
  bad_legs[1].knee.y = std::numeric_limits<double>::infinity();
  EXPECT_EQ(solve_stride_warp(bad_legs, settings_for(model, 1.2), kDt, state, out).status,
            StrideWarpStatus::kInvalidInput);
  EXPECT_EQ(solve_stride_warp(legs, settings_for(model, 1.2), nan, state, out).status,
            StrideWarpStatus::kInvalidInput);
  std::array<StrideWarpLegResult, 1> short_out;
  EXPECT_EQ(solve_stride_warp(legs, settings_for(model, 1.2), kDt, state, short_out).status,
            StrideWarpStatus::kInvalidInput);
  std::array<StrideWarpLeg, 5> too_many{};
  std::array<StrideWarpLegResult, 5> too_many_out{};
  EXPECT_EQ(solve_stride_warp(too_many, settings_for(model, 1.2), kDt, state, too_many_out).status,
            StrideWarpStatus::kInvalidInput);

  // apply: a refused result, a bad joint or a non-chain leg change nothing.
  std::vector<Transform> target = local;
  StrideWarpResult failed;
  EXPECT_FALSE(apply_stride_warp(failed, out, kLegJoints, 0, kParents, target));
  const StrideWarpResult ok = solve_stride_warp(legs, settings_for(model, 1.2), kDt, state, out);
  const std::array<StrideWarpJoints, 2> crossed{StrideWarpJoints{1, 5, 3},
                                                StrideWarpJoints{4, 5, 6}};
  EXPECT_FALSE(apply_stride_warp(ok, out, crossed, 0, kParents, target));
  EXPECT_FALSE(apply_stride_warp(ok, out, kLegJoints, 11, kParents, target));
  for (std::size_t j = 0; j < local.size(); ++j) {
    EXPECT_EQ(target[j].translation, local[j].translation);
    EXPECT_EQ(target[j].rotation, local[j].rotation);
  }
}

// A planted foot stays where its plant began while the body goes on (the pose drifts forwards
// frame by frame, as the world-space pose of a walking character does); its support passes to the
// toe without a jump; after lift-off its target glides back to the warped stride.
TEST(StrideWarp, PlantedFootHoldsItsPlaceAndRejoinsTheStrideAfterLiftOff) {
  StrideWarpState state;
  std::array<StrideWarpLegResult, 2> out;
  const double scale = 1.3;
  std::vector<Vec3> left_targets;
  Vec3 warped_at_end;
  for (int frame = 0; frame < 40; ++frame) {
    std::vector<Transform> local = stride_pose();
    local[0].translation.z += 0.04 * frame;  // the body moves 4 cm a frame
    const std::vector<Transform> model = model_of(local);
    auto legs = legs_of(model);
    legs[0].planted = frame >= 5 && frame < 20;
    legs[0].on_toe = frame >= 15 && frame < 20;
    legs[0].toe = model[3].translation + Vec3{0, -0.08, 0.14};
    StrideWarpSettings s = settings_for(model, scale);
    ASSERT_EQ(solve_stride_warp(legs, s, kDt, state, out).status, StrideWarpStatus::kOk);
    left_targets.push_back(out[0].target);
    // Where the warp alone would send the ankle.
    const double along = model[3].translation.z - model[0].translation.z;
    warped_at_end = model[3].translation + Vec3{0, 0, (scale - 1) * along};
    if (frame <= 5) {  // before the plant, and on its first frame, the warped stride
      EXPECT_NEAR(length(out[0].target - warped_at_end), 0.0, 1e-12) << frame;
    }
  }
  // Held: the target does not move horizontally from the plant's first frame to its last (the
  // toe offset is constant here, so the switch to the toe moves nothing either).
  for (int frame = 6; frame < 20; ++frame) {
    const Vec3 step = left_targets[static_cast<std::size_t>(frame)] - left_targets[5];
    EXPECT_NEAR(std::hypot(step.x, step.z), 0.0, 1e-12) << frame;
  }
  // Lift-off is continuous, then the target converges on the warped stride.
  const Vec3 jump = left_targets[20] - left_targets[19];
  EXPECT_LT(std::hypot(jump.x, jump.z), 1e-12);
  EXPECT_GT(std::abs(left_targets[21].z - left_targets[20].z), 1e-3);  // it does move on
  EXPECT_NEAR(length(left_targets.back() - warped_at_end), 0.0, 1e-3);
}

TEST(OrientationWarp, AngleFromFacingToMovementAboutUp) {
  // A rotation about +Y takes +Z towards +X.
  EXPECT_NEAR(orientation_warp_angle({0, 0, 1}, {1, 0, 0}), kPi / 2, 1e-15);
  EXPECT_NEAR(orientation_warp_angle({0, 0, 1}, {-1, 0, 1}), -kPi / 4, 1e-15);
  EXPECT_NEAR(orientation_warp_angle({0, 0, 1}, {1, 5, 1}), kPi / 4, 1e-15);   // height ignored
  EXPECT_NEAR(orientation_warp_angle({0, 0, 1}, {1, 0, 1}, 0.5), 0.5, 1e-15);  // clamped
  EXPECT_NEAR(orientation_warp_angle({0, 0, 1}, {-1, 0, -1}), -kPi / 2, 1e-15);  // −135° → −90°
  EXPECT_EQ(orientation_warp_angle({0, 1, 0}, {1, 0, 0}), 0.0);
  EXPECT_EQ(orientation_warp_angle({0, 0, 1}, {0, std::numeric_limits<double>::quiet_NaN(), 1}),
            0.0);
  // The angle does what it says: the facing turned by it points along the movement.
  const Vec3 facing{0.3, 0, 1}, movement{-1, 0, 0.2};
  const double a = orientation_warp_angle(facing, movement, kPi);
  const Vec3 turned = rotate(Quat::from_axis_angle({0, 1, 0}, a), facing);
  EXPECT_NEAR(length(normalize(turned) - normalize(movement)), 0.0, 1e-12);
}

TEST(OrientationWarp, LegsTurnWhileTheChestKeepsItsFacing) {
  std::vector<Transform> local = stride_pose();
  local[0].rotation = Quat::from_axis_angle({0, 1, 0}, 0.3);
  const std::vector<Transform> before = model_of(local);
  const double angle = 0.6;
  const std::array<int, 3> spine{7, 8, 9};
  ASSERT_TRUE(apply_orientation_warp(angle, 0, spine, kParents, local));
  const std::vector<Transform> after = model_of(local);
  const Quat turn = Quat::from_axis_angle({0, 1, 0}, angle);
  // The pelvis turned, the chest and head did not.
  EXPECT_NEAR(std::abs(dot(after[0].rotation, turn * before[0].rotation)), 1.0, 1e-12);
  for (const std::size_t j : {std::size_t{9}, std::size_t{10}})
    EXPECT_NEAR(std::abs(dot(after[j].rotation, before[j].rotation)), 1.0, 1e-12) << j;
  // The feet turned with the pelvis about its vertical.
  const Vec3 pelvis = before[0].translation;
  for (const std::size_t j : {std::size_t{3}, std::size_t{6}})
    EXPECT_NEAR(
        length(after[j].translation - (pelvis + rotate(turn, before[j].translation - pelvis))), 0.0,
        1e-12)
        << j;
  // Only rotations changed.
  const std::vector<Transform> original = stride_pose();
  for (std::size_t j = 0; j < local.size(); ++j)
    EXPECT_EQ(local[j].translation, original[j].translation) << j;
  // And back: the opposite angle restores the pose.
  ASSERT_TRUE(apply_orientation_warp(-angle, 0, spine, kParents, local));
  const std::vector<Transform> restored = model_of(local);
  for (std::size_t j = 0; j < local.size(); ++j)
    EXPECT_NEAR(length(restored[j].translation - before[j].translation), 0.0, 1e-12) << j;
}

TEST(OrientationWarp, BadInputChangesNothing) {
  std::vector<Transform> local = stride_pose();
  const std::vector<Transform> before = local;
  const std::array<int, 3> spine{7, 8, 9}, broken{7, 9, 8}, from_a_leg{2, 3, 9};
  EXPECT_FALSE(
      apply_orientation_warp(std::numeric_limits<double>::quiet_NaN(), 0, spine, kParents, local));
  EXPECT_FALSE(apply_orientation_warp(0.4, 0, broken, kParents, local));
  EXPECT_FALSE(apply_orientation_warp(0.4, 0, from_a_leg, kParents, local));
  EXPECT_FALSE(apply_orientation_warp(0.4, 11, spine, kParents, local));
  EXPECT_FALSE(apply_orientation_warp(0.4, -1, spine, kParents, local));
  for (std::size_t j = 0; j < local.size(); ++j) EXPECT_EQ(local[j].rotation, before[j].rotation);
}

}  // namespace
}  // namespace kinema
