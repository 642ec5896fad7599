// Foot grounding by the hips and the motion metrics (kinema/retarget/ground.h, metrics.h).
#include "kinema/retarget/ground.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kinema/core/error.h"
#include "kinema/ik/two_bone.h"
#include "kinema/io/asset_file.h"
#include "kinema/math/scalar.h"
#include "test_paths.h"

namespace kinema {
namespace {

const std::string kData = test_paths::data_dir();

constexpr double kBone = 0.4;        // thigh = shin, metres
constexpr double kAnkleRest = 0.08;  // the ankle's rest height above the floor
constexpr double kHipsRest = kAnkleRest + 2 * kBone;

/// Hips, and per side: upper leg (at the hips ± 0.1 x), knee, ankle (each kBone below), toe.
/// Rest pose: legs straight down, ankles kAnkleRest above y = 0, toes on the floor.
Skeleton two_legs() {
  std::vector<Joint> j;
  const auto add = [&](const std::string& name, int parent, const Vec3& offset) {
    Joint joint;
    joint.name = name;
    joint.parent = parent;
    joint.rest.translation = offset;
    j.push_back(joint);
  };
  add("hips", -1, {0, kHipsRest, 0});
  for (const double side : {1.0, -1.0}) {
    const int base = static_cast<int>(j.size());
    add(side > 0 ? "l_thigh" : "r_thigh", 0, {0.1 * side, 0, 0});
    add(side > 0 ? "l_knee" : "r_knee", base, {0, -kBone, 0});
    add(side > 0 ? "l_ankle" : "r_ankle", base + 1, {0, -kBone, 0});
    add(side > 0 ? "l_toe" : "r_toe", base + 2, {0, -kAnkleRest, 0.12});
  }
  return Skeleton::build(j, true);
}

HumanoidLegs legs_of_two_legs() {
  HumanoidLegs legs;
  legs.rig.pelvis = 0;
  legs.rig.legs = {{1, 2, 3}, {5, 6, 7}};
  legs.rig.toes = {4, 8};
  return legs;
}

/// A second of standing still with straight legs and the hips at `hips_height` (keys at 0, 1 s).
Clip standing(double hips_height) {
  Clip c;
  c.name = "stand";
  c.duration = 1;
  c.sample_rate = 30;
  c.tracks.resize(9);
  c.tracks[0].translation.times = {0, 1};
  c.tracks[0].translation.values = {{0, hips_height, 0}, {0, hips_height, 0}};
  return c;
}

std::vector<Mat4> pose_at(const Clip& clip, const Skeleton& sk, double t) {
  return sample_model_pose(clip, sk, t);
}

double flexion_degrees(const std::vector<Mat4>& m, int hip, int knee, int ankle) {
  const Vec3 a = m[size_t(hip)].translation_part(), b = m[size_t(knee)].translation_part(),
             c = m[size_t(ankle)].translation_part();
  const Vec3 thigh = b - a, shin = c - b;
  return degrees(
      std::acos(std::clamp(dot(thigh, shin) / (length(thigh) * length(shin)), -1.0, 1.0)));
}

// Worked example: the hips stand at 99 % of the leg's reach above the ankle's rest height (the
// leg is 1 % too long for where the retargeted hips put it). Forcing the ankle up to its rest
// height with IK alone bends the knee by 2·acos(0.99) = 16.22°; grounding by the hips raises them
// by the 1 % (8 mm) instead and keeps the knee straight.
TEST(FootGrounding, HipsKeepANearStraightKneeStraight) {
  const Skeleton sk = two_legs();
  const HumanoidLegs legs = legs_of_two_legs();
  const Clip clip = standing(kAnkleRest + 0.99 * 2 * kBone);

  // IK alone: the two-bone solver with the ankle forced to its rest height.
  const std::vector<Mat4> m = pose_at(clip, sk, 0.5);
  TwoBoneInput in;
  in.root = m[1].translation_part();
  in.mid = m[2].translation_part();
  in.end = m[3].translation_part();
  in.target = {in.end.x, kAnkleRest, in.end.z};
  in.pole = in.mid + Vec3{0, 0, 1};
  const TwoBoneResult forced = solve_two_bone(in);
  EXPECT_NEAR(degrees(forced.mid_bend), 2 * degrees(std::acos(0.99)), 1e-6);
  EXPECT_NEAR(degrees(forced.mid_bend), 16.22, 0.005);

  // Grounding with the hips held (max_hips_offset 0) falls into the same trap.
  GroundingOptions held;
  held.max_hips_offset = 0;
  const Clip bent = ground_feet(sk, legs, clip, 30, held);
  EXPECT_NEAR(flexion_degrees(pose_at(bent, sk, 0.5), 1, 2, 3), 16.22, 0.01);

  // Grounding by the hips: straight knees, ankles on their rest height, hips up 8 mm.
  GroundingReport report;
  const Clip grounded = ground_feet(sk, legs, clip, 30, {}, &report);
  for (const double t : {0.0, 0.5, 1.0}) {
    const std::vector<Mat4> g = pose_at(grounded, sk, t);
    EXPECT_LE(flexion_degrees(g, 1, 2, 3), 0.5) << t;
    EXPECT_LE(flexion_degrees(g, 5, 6, 7), 0.5) << t;
    EXPECT_NEAR(g[3].translation_part().y, kAnkleRest, 1e-4) << t;
    EXPECT_NEAR(g[7].translation_part().y, kAnkleRest, 1e-4) << t;
  }
  EXPECT_NEAR(report.hips_offset_min, 0.01 * 2 * kBone, 1e-4);
  EXPECT_NEAR(report.hips_offset_max, 0.01 * 2 * kBone, 1e-4);
  EXPECT_EQ(report.plants, (std::vector<int>{1, 1}));
  EXPECT_NEAR(report.before.penetration_max, 0.8, 1e-6);  // cm: the ankles 8 mm low
  EXPECT_LE(report.after.penetration_max, 0.01);
  EXPECT_LE(report.after.bone_length_error_max, 1e-9);
}

TEST(MotionMetrics, RestHeightsAndSoleClearance) {
  const Skeleton sk = two_legs();
  const HumanoidLegs legs = legs_of_two_legs();
  EXPECT_TRUE(rest_pose_stands(sk, legs));
  const StanceHeights h = rest_foot_heights(sk, legs);
  EXPECT_NEAR(h.ankle[0], kAnkleRest, 1e-12);
  EXPECT_NEAR(h.toe[1], 0, 1e-12);
  // Standing 3 cm too high: float 3 cm on the planted frames, no penetration, no skate.
  const MotionMetrics m = measure_motion(sk, legs, standing(kHipsRest + 0.03), 30);
  EXPECT_EQ(m.frames, 31);
  EXPECT_NEAR(m.float_max, 3, 1e-9);
  EXPECT_NEAR(m.legs[0].float_mean, 3, 1e-9);
  EXPECT_EQ(m.penetration_max, 0);
  ASSERT_TRUE(m.skate.speed);
  EXPECT_EQ(m.skate.speed->max, 0);
  EXPECT_EQ(m.knee_jump_max, 0);
  EXPECT_FALSE(m.pose_error);
  EXPECT_EQ(m.stance.source, StanceHeightSource::RestPose);
}

TEST(MotionMetrics, PoseErrorIsNormalizedByHeightSquared) {
  const Skeleton sk = two_legs();
  const HumanoidLegs legs = legs_of_two_legs();
  const Clip a = standing(kHipsRest), b = standing(kHipsRest + 0.1);
  const MotionMetrics m = measure_motion(sk, legs, b, 30, {}, &a);
  ASSERT_TRUE(m.pose_error);
  // Every joint 0.1 m off; the rest pose spans 0.88 m (hips to toes).
  EXPECT_NEAR(m.pose_error->height, kHipsRest, 1e-12);
  EXPECT_NEAR(m.pose_error->mean_joint_error, 0.1, 1e-12);
  EXPECT_NEAR(m.pose_error->mse_over_height_squared, 0.01 / (kHipsRest * kHipsRest), 1e-12);
}

/// Grounds a real walk on its own skeleton and checks what the issue asks of it.
void expect_grounded_walk(const std::string& file, double rate) {
  SCOPED_TRACE(file);
  const Asset walk = load_asset(kData + file);
  const HumanoidLegs legs = humanoid_legs(walk, file);
  GroundingReport r;
  const Clip out = ground_feet(walk.skeleton, legs, walk.clips[0], rate, {}, &r);
  ASSERT_TRUE(r.before.skate.speed);
  ASSERT_TRUE(r.after.skate.speed);
  EXPECT_LE(r.after.skate.speed->median, r.before.skate.speed->median);
  EXPECT_LE(r.after.skate.speed->p90, r.before.skate.speed->p90);
  EXPECT_LE(r.after.skate.speed->median, 2.0);
  // The knee never jumps much more than the source's own (02_01's right knee: 3.5° against
  // 3.3°, where a plant releases and the knee catches up with the source's bend).
  EXPECT_LE(r.after.knee_jump_max, r.before.knee_jump_max + 0.5);
  EXPECT_LE(r.after.bone_length_error_max, std::max(1e-6, r.before.bone_length_error_max));
  EXPECT_GT(r.plants[0] + r.plants[1], 2);
  // The result is keyed at the rate: one LINEAR key per frame on the joints it changed.
  const auto& hips = out.tracks[size_t(legs.rig.pelvis)].translation;
  EXPECT_EQ(static_cast<int>(hips.times.size()), r.frames);
  EXPECT_EQ(hips.interpolation, Interpolation::Linear);
}

TEST(FootGrounding, RealWalksSkateLessAndKeepTheirKnees) {
  expect_grounded_walk("/bvh/cmu_cgspeed_mb/02_01.bvh", 120);
  expect_grounded_walk("/bvh/cmu_iclone_cc3/007_12.bvh", 60);
}

TEST(FootGrounding, NaNKeysAndBadOptionsAreErrors) {
  const Skeleton sk = two_legs();
  const HumanoidLegs legs = legs_of_two_legs();
  Clip nan = standing(kHipsRest);
  nan.tracks[0].translation.values[1].y = std::nan("");
  EXPECT_THROW(ground_feet(sk, legs, nan, 30), Error);
  EXPECT_THROW(measure_motion(sk, legs, nan, 30), Error);
  const Clip ok = standing(kHipsRest);
  EXPECT_THROW(ground_feet(sk, legs, ok, 0), Error);
  GroundingOptions bad;
  bad.ramp = -1;
  EXPECT_THROW(ground_feet(sk, legs, ok, 30, bad), Error);
  GroundingOptions heights;
  heights.ankle_heights = {0.1};  // one for two legs
  EXPECT_THROW(ground_feet(sk, legs, ok, 30, heights), Error);
  HumanoidLegs crossed = legs;
  crossed.rig.legs[0].knee = 7;  // not below the thigh
  EXPECT_THROW(ground_feet(sk, crossed, ok, 30), Error);
}

}  // namespace
}  // namespace kinema
