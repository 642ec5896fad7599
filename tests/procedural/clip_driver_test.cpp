// Drivers on clips: a wheel keyed from the distance its car travelled (θ = d / r: 10 rad after
// 3 m on a 0.3 m wheel, and the arc length on a curved path), translations driven by time, names
// made into variables, and errors.
#include "kinema/procedural/clip_driver.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "kinema/core/error.h"

namespace kinema {
namespace {

/// A car (root) with a wheel 0.3 m below it, the car keyed along `path(t)` at 30 fps for 1 s.
template <class Path>
std::pair<Skeleton, Clip> car(const Path& path) {
  std::vector<Joint> joints(2);
  joints[0].name = "car body";
  joints[1].name = "wheel";
  joints[1].parent = 0;
  joints[1].rest.translation = {0, -0.3, 0};
  Skeleton skeleton = Skeleton::build(joints);
  Clip clip;
  clip.duration = 1;
  clip.sample_rate = 30;
  clip.tracks.resize(2);
  for (int f = 0; f <= 30; ++f) {
    clip.tracks[0].translation.times.push_back(f / 30.0);
    clip.tracks[0].translation.values.push_back(path(f / 30.0));
  }
  return {skeleton, clip};
}

/// Where the wheel's spoke (0, 1, 0) points at time t, in the car's frame.
Vec3 wheel_spoke(const Clip& clip, const Skeleton& skeleton, double t) {
  std::vector<Transform> pose(2);
  sample_pose(clip, skeleton, t, WrapMode::Clamp, pose);
  return rotate(pose[1].rotation, Vec3{0, 1, 0});
}

TEST(ClipDriver, WheelTurnsTenRadiansAfterThreeMetres) {
  // Straight along x, 3 m in 1 s: θ = car_body_dist / 0.3 reaches 10 rad at the end; the spoke
  // (0, 1, 0) turned 10 rad about x points at (0, cos 10, sin 10).
  auto [skeleton, clip] = car([](double t) { return Vec3{3 * t, 0, 0}; });
  EXPECT_EQ(driver_variable_name("car body"), "car_body");
  const Clip driven =
      drive_clip(clip, skeleton, "wheel", DrivenChannel::RotateX, "car_body_dist / 0.3");
  const Vec3 spoke = wheel_spoke(driven, skeleton, 1.0);
  EXPECT_NEAR(spoke.y, std::cos(10.0), 1e-9);
  EXPECT_NEAR(spoke.z, std::sin(10.0), 1e-9);
  const Vec3 halfway = wheel_spoke(driven, skeleton, 0.5);  // 1.5 m: 5 rad
  EXPECT_NEAR(halfway.y, std::cos(5.0), 1e-9);
  EXPECT_EQ(driven.tracks[1].rotation.key_count(), 31u);
  // The wheel's translation is kept (its rest offset, sampled at the frames).
  std::vector<Transform> pose(2);
  sample_pose(driven, skeleton, 0.7, WrapMode::Clamp, pose);
  EXPECT_NEAR(pose[1].translation.y, -0.3, 1e-12);
}

TEST(ClipDriver, TheDistanceFollowsACurvedPath) {
  // A quarter circle of 2 m radius: the car travels π m (summed over 30 chords: 0.07 % short),
  // so the wheel ends at π/0.3 rad, whatever way the path bends.
  auto [skeleton, clip] = car([](double t) {
    const double a = t * std::numbers::pi / 2;
    return Vec3{2 * std::sin(a), 0, 2 - 2 * std::cos(a)};
  });
  const Clip driven =
      drive_clip(clip, skeleton, "wheel", DrivenChannel::RotateX, "car_body_dist / 0.3");
  const double chords = 30 * 2 * 2 * std::sin(std::numbers::pi / 4 / 30);
  const Vec3 spoke = wheel_spoke(driven, skeleton, 1.0);
  EXPECT_NEAR(spoke.y, std::cos(chords / 0.3), 1e-9);
  EXPECT_NEAR(spoke.z, std::sin(chords / 0.3), 1e-9);
  EXPECT_NEAR(chords, std::numbers::pi, 0.0025);
}

TEST(ClipDriver, TranslationFromTimeAndOtherJoints) {
  // The wheel bobs with a buoy's oscillation and follows the car's height.
  auto [skeleton, clip] = car([](double t) { return Vec3{t, 0.5 * t, 0}; });
  const Clip driven = drive_clip(clip, skeleton, "wheel", DrivenChannel::TranslateY,
                                 "-0.3 + 0.2 * sin(2 * _pi * 0.5 * t) - car_body_py", 10);
  std::vector<Transform> pose(2);
  sample_pose(driven, skeleton, 0.5, WrapMode::Clamp, pose);
  EXPECT_NEAR(pose[1].translation.y, -0.3 + 0.2 - 0.25, 1e-12);
  EXPECT_EQ(driven.tracks[1].translation.key_count(), 11u);
}

TEST(ClipDriver, Errors) {
  auto [skeleton, clip] = car([](double t) { return Vec3{t, 0, 0}; });
  EXPECT_THROW(drive_clip(clip, skeleton, "tyre", DrivenChannel::RotateX, "1"), Error);
  try {
    drive_clip(clip, skeleton, "wheel", DrivenChannel::RotateX, "car_dist / 0.3");
    ADD_FAILURE() << "an unknown variable was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.place(), "column 1");
  }
  try {
    drive_clip(clip, skeleton, "wheel", DrivenChannel::RotateX, "1 / (t - 0.5)");
    ADD_FAILURE() << "a division by zero was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.place(), "t = 0.500000 s");
  }
}

}  // namespace
}  // namespace kinema
