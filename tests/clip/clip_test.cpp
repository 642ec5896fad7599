// Raw clips: interpolation modes, wrapping, whole-pose sampling, validation, resampling.
#include <gtest/gtest.h>

#include <cmath>

#include "kinema/clip/clip.h"
#include "kinema/core/error.h"
#include "kinema/skeleton/skeleton.h"

namespace kinema {
namespace {

Keyframes<Vec3> vec_keys(Interpolation mode, std::vector<double> t, std::vector<Vec3> v) {
  Keyframes<Vec3> k;
  k.interpolation = mode;
  k.times = std::move(t);
  k.values = std::move(v);
  return k;
}

Quat rot_y(double deg) { return Quat::from_axis_angle({0, 1, 0}, radians(deg)); }

TEST(Clip, StepHoldsUntilTheNextKey) {
  const auto k = vec_keys(Interpolation::Step, {0, 1, 2}, {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}});
  EXPECT_EQ(sample(k, 0.99, {}).x, 0);
  EXPECT_EQ(sample(k, 1.0, {}).x, 1);
  EXPECT_EQ(sample(k, 1.5, {}).x, 1);
  EXPECT_EQ(sample(k, 2.0, {}).x, 2);
  EXPECT_EQ(sample(k, 9.0, {}).x, 2);
  EXPECT_EQ(sample(k, -1.0, {}).x, 0);
}

TEST(Clip, LinearInterpolatesAndHoldsOutside) {
  const auto k = vec_keys(Interpolation::Linear, {0, 2}, {{0, 0, 0}, {4, 2, 0}});
  EXPECT_NEAR(sample(k, 0.5, {}).x, 1, 1e-12);
  EXPECT_NEAR(sample(k, 0.5, {}).y, 0.5, 1e-12);
  EXPECT_NEAR(sample(k, -3, {}).x, 0, 1e-12);
  EXPECT_NEAR(sample(k, 3, {}).x, 4, 1e-12);
  EXPECT_EQ(sample(Keyframes<Vec3>{}, 1, {7, 7, 7}).x, 7);  // empty track → fallback
}

TEST(Clip, CubicSplineFollowsGltfHermite) {
  // Two keys at t = 1 and 3 (dt = 2), values 0 and 1, out-tangent 0.5/s, in-tangent −0.25/s.
  Keyframes<Vec3> k;
  k.interpolation = Interpolation::CubicSpline;
  k.times = {1, 3};
  k.values = {{9, 9, 9}, {0, 0, 0}, {0.5, 0, 0}, {-0.25, 0, 0}, {1, 0, 0}, {9, 9, 9}};
  for (double t : {1.0, 1.5, 2.0, 2.7, 3.0}) {
    const double s = (t - 1) / 2, dt = 2;
    const double h00 = 2 * s * s * s - 3 * s * s + 1, h10 = s * s * s - 2 * s * s + s,
                 h01 = -2 * s * s * s + 3 * s * s, h11 = s * s * s - s * s;
    const double expected = h00 * 0 + h10 * dt * 0.5 + h01 * 1 + h11 * dt * -0.25;
    EXPECT_NEAR(sample(k, t, {}).x, expected, 1e-12) << t;
  }
  EXPECT_EQ(k.key_value(1).x, 1);
}

TEST(Clip, RotationLinearUsesSlerpOrNlerp) {
  Keyframes<Quat> k;
  k.times = {0, 1};
  k.values = {rot_y(0), rot_y(120)};
  const Quat s = sample(k, 0.25, Quat::identity(), RotationInterp::Slerp);
  EXPECT_NEAR(degrees(angle_between(s, rot_y(30))), 0, 1e-9);
  const Quat n = sample(k, 0.25, Quat::identity(), RotationInterp::Nlerp);
  EXPECT_GT(degrees(angle_between(n, rot_y(30))), 0.5);  // nlerp is not constant-speed
  EXPECT_NEAR(length(n), 1, 1e-12);
  // The hemisphere check: a key stored as −q still interpolates the short way.
  k.values[1] = -rot_y(20);
  EXPECT_NEAR(degrees(angle_between(sample(k, 0.5, Quat::identity()), rot_y(10))), 0, 1e-9);
}

TEST(Clip, WrapTimeLoopsAndClamps) {
  EXPECT_DOUBLE_EQ(wrap_time(2.5, 2.0, WrapMode::Loop), 0.5);
  EXPECT_DOUBLE_EQ(wrap_time(-0.5, 2.0, WrapMode::Loop), 1.5);
  EXPECT_DOUBLE_EQ(wrap_time(2.0, 2.0, WrapMode::Loop), 2.0);
  EXPECT_DOUBLE_EQ(wrap_time(2.5, 2.0, WrapMode::Clamp), 2.0);
  EXPECT_DOUBLE_EQ(wrap_time(-1, 2.0, WrapMode::Clamp), 0.0);
  EXPECT_DOUBLE_EQ(wrap_time(NAN, 2.0, WrapMode::Loop), 0.0);
  EXPECT_DOUBLE_EQ(wrap_time(5, 0.0, WrapMode::Loop), 0.0);
}

Skeleton two_joints() {
  Joint a, b;
  a.name = "root";
  b.name = "tip";
  b.parent = 0;
  b.rest.translation = {0, 1, 0};
  b.rest.rotation = rot_y(5);
  return Skeleton::build({a, b}, true);
}

TEST(Clip, SamplePoseUsesRestForUnanimatedChannels) {
  const Skeleton s = two_joints();
  Clip c;
  c.name = "walk";
  c.duration = 1;
  c.tracks.resize(1);
  c.tracks[0].translation = vec_keys(Interpolation::Linear, {0, 1}, {{0, 0, 0}, {2, 0, 0}});
  std::vector<Transform> pose(2);
  ASSERT_TRUE(sample_pose(c, s, 1.25, WrapMode::Loop, pose));
  EXPECT_NEAR(pose[0].translation.x, 0.5, 1e-12);
  EXPECT_EQ(pose[1].translation, s.joint(1).rest.translation);
  EXPECT_EQ(pose[1].rotation, s.joint(1).rest.rotation);
  ASSERT_TRUE(sample_pose(c, s, 1.25, WrapMode::Clamp, pose));
  EXPECT_NEAR(pose[0].translation.x, 2, 1e-12);
  std::vector<Transform> wrong(3);
  EXPECT_FALSE(sample_pose(c, s, 0, WrapMode::Loop, wrong));
}

TEST(Clip, SampleModelPoseComposesTheHierarchy) {
  const Skeleton s = two_joints();
  Clip c;
  c.name = "lift";
  c.duration = 1;
  c.tracks.resize(1);
  c.tracks[0].translation = vec_keys(Interpolation::Linear, {0, 1}, {{0, 0, 0}, {0, 2, 0}});
  const std::vector<Mat4> model = sample_model_pose(c, s, 0.5);
  ASSERT_EQ(model.size(), 2u);
  EXPECT_NEAR(distance(model[0].translation_part(), Vec3{0, 1, 0}), 0, 1e-12);
  EXPECT_NEAR(distance(model[1].translation_part(), Vec3{0, 2, 0}), 0,
              1e-12);  // rest (0,1,0) on top
  c.tracks.resize(3);  // more tracks than joints
  EXPECT_THROW(sample_model_pose(c, s, 0.5), Error);
}

TEST(Clip, MorphWeightsSampleAllInterpolations) {
  MorphTrack m;
  m.target_count = 2;
  m.times = {0, 1};
  m.values = {0, 1, 1, 0};
  std::vector<double> w(2);
  ASSERT_TRUE(sample(m, 0.25, w));
  EXPECT_NEAR(w[0], 0.25, 1e-12);
  EXPECT_NEAR(w[1], 0.75, 1e-12);
  m.interpolation = Interpolation::Step;
  ASSERT_TRUE(sample(m, 0.5, w));
  EXPECT_EQ(w[0], 0);
  m.interpolation = Interpolation::CubicSpline;
  m.values = {0, 0, 0, 1, 0, 0, /*key 1*/ 0, 0, 1, 0, 0, 0};
  ASSERT_TRUE(sample(m, 0.5, w));
  EXPECT_NEAR(w[0], 0.5, 1e-12);  // zero tangents: smoothstep, symmetric at the middle
  EXPECT_NEAR(w[1], 0.5, 1e-12);
  std::vector<double> wrong(3);
  EXPECT_FALSE(sample(m, 0.5, wrong));
}

TEST(Clip, ValidateRejectsBadTracks) {
  Clip c;
  c.name = "bad";
  c.duration = 1;
  c.tracks.resize(1);
  c.tracks[0].translation = vec_keys(Interpolation::Linear, {0, 0}, {{0, 0, 0}, {1, 0, 0}});
  EXPECT_THROW(c.validate(1, "x.bvh"), Error);
  c.tracks[0].translation = vec_keys(Interpolation::Linear, {0, 1}, {{0, 0, 0}});
  EXPECT_THROW(c.validate(1), Error);
  c.tracks[0].translation = vec_keys(Interpolation::Linear, {0, 1}, {{0, 0, 0}, {NAN, 0, 0}});
  try {
    c.validate(1, "x.bvh");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not finite"), std::string::npos);
    EXPECT_EQ(e.file(), "x.bvh");
  }
  c.tracks[0].translation = vec_keys(Interpolation::Linear, {0, 1}, {{0, 0, 0}, {1, 0, 0}});
  EXPECT_NO_THROW(c.validate(1));
  EXPECT_THROW(c.validate(0), Error);  // more tracks than joints
  c.tracks[0].rotation.times = {0};
  c.tracks[0].rotation.values = {Quat{0, 0, 0, 0}};
  EXPECT_THROW(c.validate(1), Error);
}

TEST(Clip, ResampleKeepsTheMotion) {
  const Skeleton s = two_joints();
  Clip c;
  c.name = "turn";
  c.duration = 1.0;
  c.tracks.resize(2);
  c.tracks[1].rotation.times = {0, 0.3, 1.0};
  c.tracks[1].rotation.values = {rot_y(0), rot_y(60), rot_y(-40)};
  const Clip r = resample(c, s, 30);
  EXPECT_EQ(r.frame_count(), 31);
  EXPECT_EQ(r.tracks[1].rotation.key_count(), 31u);
  EXPECT_TRUE(r.tracks[0].empty());
  for (double t = 0; t <= 1.0; t += 1.0 / 30) {
    EXPECT_LT(degrees(angle_between(sample(r.tracks[1].rotation, t, {}),
                                    sample(c.tracks[1].rotation, t, {}))),
              1e-9);
  }
  EXPECT_EQ(c.key_count(), 3u);
}

}  // namespace
}  // namespace kinema
