// Pose matching: a frame of a walk found again wherever the character stands and whichever way
// it faces — upright or lying down — with the move that puts the candidate onto the query, and
// the errors of a bad set-up.
#include "kinema/match/pose_match.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "test_paths.h"

namespace kinema::match {
namespace {

const Asset& walk() {
  static const Asset a = load_asset(test_paths::data_dir() + "/bvh/cmu_cgspeed_mb/02_01.bvh");
  return a;
}

std::vector<Mat4> pose_at(const Asset& a, double t, const Mat4& placed) {
  std::vector<Transform> local(size_t(a.skeleton.joint_count()));
  sample_pose(a.clips[0], a.skeleton, t, WrapMode::Clamp, local);
  std::vector<Mat4> model(local.size());
  local_to_model(a.skeleton.parents(), std::span<const Transform>(local), std::span<Mat4>(model),
                 placed);
  return model;
}

double wrapped(double angle) { return std::remainder(angle, 2 * std::numbers::pi); }

TEST(PoseMatch, FindsAFrameAgainWhereverTheCharacterStandsAndFaces) {
  const Asset& a = walk();
  const PoseMatcher matcher(a.skeleton, a.clips);
  EXPECT_GT(matcher.frames(), 80u);  // 2.86 s at 30 fps
  for (const double yaw : {0.0, 1.2, -2.5, 3.1}) {
    const Mat4 placed = Mat4::trs({3, 0, -2}, Quat::from_axis_angle({0, 1, 0}, yaw), {1, 1, 1});
    const std::vector<Mat4> query = pose_at(a, 1.0, placed);
    const PoseMatch m = matcher.find(query);
    ASSERT_EQ(m.clip, 0);
    EXPECT_NEAR(m.time, 1.0, 1e-9) << yaw;
    EXPECT_LT(m.cost, 1e-6);
    EXPECT_NEAR(wrapped(m.yaw - yaw), 0, 1e-5);
    // The move takes the candidate's root onto the query's, on the ground.
    const Vec3 candidate = pose_at(a, 1.0, Mat4::identity())[0].transform_point({0, 0, 0});
    const Vec3 moved = rotate(Quat::from_axis_angle({0, 1, 0}, m.yaw), candidate) + m.offset;
    const Vec3 target = query[0].transform_point({0, 0, 0});
    EXPECT_NEAR(moved.x, target.x, 1e-4);
    EXPECT_NEAR(moved.z, target.z, 1e-4);
  }
}

TEST(PoseMatch, LyingPosesHaveAHeadingToo) {
  const Asset& a = walk();
  // The walk laid on its back (turned a quarter about x), as candidates and as queries.
  Clip lying = a.clips[0];
  lying.name = "lying";
  const Quat on_back = Quat::from_axis_angle({1, 0, 0}, -std::numbers::pi / 2);
  for (Quat& q : lying.tracks[0].rotation.values) q = on_back * q;
  for (Vec3& p : lying.tracks[0].translation.values) p = rotate(on_back, p);
  const std::vector<Clip> candidates{a.clips[0], lying};
  const PoseMatcher matcher(a.skeleton, candidates);
  const Mat4 placed =
      Mat4::trs({-1, 0, 4}, Quat::from_axis_angle({0, 1, 0}, 0.7) * on_back, {1, 1, 1});
  const PoseMatch m = matcher.find(pose_at(a, 1.5, placed));
  EXPECT_EQ(m.clip, 1);  // lying, not standing
  EXPECT_NEAR(m.time, 1.5, 1e-9);
  EXPECT_NEAR(wrapped(m.yaw - 0.7), 0, 1e-3);
}

TEST(PoseMatch, BadSetUpsAreRefused) {
  const Asset& a = walk();
  EXPECT_THROW(PoseMatcher(a.skeleton, std::span<const Clip>{}), Error);
  PoseMatchOptions options;
  options.root = a.skeleton.joint_count();
  EXPECT_THROW(PoseMatcher(a.skeleton, a.clips, options), Error);
  options = {};
  options.rest_up = options.rest_forward;
  EXPECT_THROW(PoseMatcher(a.skeleton, a.clips, options), Error);
  options = {};
  options.joints = {-1};
  EXPECT_THROW(PoseMatcher(a.skeleton, a.clips, options), Error);
  const PoseMatcher matcher(a.skeleton, a.clips);
  EXPECT_THROW(matcher.find(std::vector<Mat4>(3)), Error);
}

}  // namespace
}  // namespace kinema::match
