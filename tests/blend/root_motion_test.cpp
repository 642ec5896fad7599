// Root motion, in-place clips and foot sliding (worked numbers: docs/worked_examples.md, "Root
// motion").
#include "kinema/blend/root_motion.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/math/scalar.h"
#include "kinema/skeleton/skeleton.h"
#include "test_paths.h"

namespace kinema {
namespace {

const std::string kData = test_paths::data_dir();

void expect_vec_near(const Vec3& a, const Vec3& b, double tol, const std::string& what = {}) {
  EXPECT_NEAR(a.x, b.x, tol) << what;
  EXPECT_NEAR(a.y, b.y, tol) << what;
  EXPECT_NEAR(a.z, b.z, tol) << what;
}

// ---- a synthetic walk: 1.5 m/s along +Z, 1.2 s cycle (1.8 m), 60 fps ------------------------
//
// Hips bob up and down; each foot is planted (fixed in the world, on the ground) for half the
// cycle and swings forward 1.8 m in the other half, 15 cm high. Hips do not rotate, so the feet's
// world positions are hips + local translation, known exactly.

constexpr double kSpeed = 1.5, kCycle = 1.2, kFps = 60;

double smoothstep(double u) { return u * u * (3 - 2 * u); }

// World positions over the cycle t ∈ [0, 1.2]. Left: planted at z = 0.45 until 0.6 s, then
// swings to 2.25 (the next lap's 0.45). Right: swings from −0.45 to 1.35 until 0.6 s, then
// planted.
Vec3 swing(double u, double x, double from_z) {
  return {x, 0.15 * std::sin(kPi * u), from_z + 1.8 * smoothstep(u)};
}
Vec3 left_world(double t) {
  return t <= 0.6 ? Vec3{0.1, 0, 0.45} : swing((t - 0.6) / 0.6, 0.1, 0.45);
}
Vec3 right_world(double t) { return t >= 0.6 ? Vec3{-0.1, 0, 1.35} : swing(t / 0.6, -0.1, -0.45); }
Vec3 hips_world(double t) { return {0, 0.9 + 0.02 * std::cos(4 * kPi * t / kCycle), kSpeed * t}; }

struct Rig {
  Skeleton skeleton;
  Clip clip;
};

Rig synthetic_walk() {
  std::vector<Joint> joints(3);
  joints[0].name = "Hips", joints[0].rest.translation = {0, 0.9, 0};
  joints[1].name = "LeftFoot", joints[1].parent = 0, joints[1].rest.translation = {0.1, -0.9, 0};
  joints[2].name = "RightFoot", joints[2].parent = 0;
  joints[2].rest.translation = {-0.1, -0.9, 0};
  Rig r{Skeleton::build(joints), {}};
  r.clip.name = "synthetic_walk";
  r.clip.duration = kCycle;
  r.clip.sample_rate = kFps;
  r.clip.tracks.resize(3);
  for (int i = 0; i <= 72; ++i) {
    const double t = i / kFps;
    const Vec3 h = hips_world(t);
    r.clip.tracks[0].translation.times.push_back(t);
    r.clip.tracks[0].translation.values.push_back(h);
    for (int f = 1; f <= 2; ++f) {
      r.clip.tracks[static_cast<size_t>(f)].translation.times.push_back(t);
      r.clip.tracks[static_cast<size_t>(f)].translation.values.push_back(
          (f == 1 ? left_world(t) : right_world(t)) - h);
    }
  }
  return r;
}

TEST(RootMotion, WalkStepsAlongPlusZAndTurnsWithTheCharacter) {
  const Rig r = synthetic_walk();
  const RootMotion m = RootMotion::extract(r.clip, r.skeleton);
  EXPECT_EQ(m.joint(), 0);  // "Hips"
  EXPECT_EQ(m.frame_count(), 73);
  EXPECT_DOUBLE_EQ(m.sample_rate(), 60.0);
  expect_vec_near(m.forward_axis(), {0, 0, 1}, 1e-15);
  // 1.8 m per 1.2 s cycle: 1.5 m/s, 1.8 / 72 = 0.025 m per frame at 60 fps, along +Z.
  expect_vec_near(m.path().back().translation, {0, 0, 1.8}, 1e-12);
  for (int i : {0, 17, 40, 71}) {
    RootDelta d;
    ASSERT_TRUE(m.delta(m.frame_time(i), m.frame_time(i + 1), WrapMode::Loop, d));
    expect_vec_near(d.translation, {0, 0, 0.025}, 1e-12, "frame " + std::to_string(i));
    EXPECT_NEAR(d.yaw, 0.0, 1e-15);
  }
  // The character faces 30° about +Y: the world step is R_y(30°)·(0, 0, 0.025)
  // = (0.025·sin 30°, 0, 0.025·cos 30°) = (0.0125, 0, 0.0217) m.
  RootDelta step;
  ASSERT_TRUE(m.delta(0.5, 0.5 + 1 / kFps, WrapMode::Loop, step));
  Vec3 position{3, 0, -1};
  double yaw = radians(30.0);
  apply_root_motion(step, position, yaw);
  const Vec3 moved = position - Vec3{3, 0, -1};
  EXPECT_NEAR(moved.x, 0.0125, 5e-5);
  EXPECT_NEAR(moved.y, 0.0, 1e-15);
  EXPECT_NEAR(moved.z, 0.0217, 5e-5);
  expect_vec_near(moved, {0.025 * 0.5, 0, 0.025 * std::sqrt(3.0) / 2}, 1e-12);
  EXPECT_NEAR(yaw, radians(30.0), 1e-15);
  // Sampling between frames and across the loop: 0.3 s from 1.0 s wraps past the end.
  RootDelta across;
  ASSERT_TRUE(m.delta(1.0, 1.3, WrapMode::Loop, across));
  expect_vec_near(across.translation, {0, 0, 0.45}, 1e-12);
  ASSERT_TRUE(m.delta(1.0, 1.3, WrapMode::Clamp, across));  // clamped at the end: 0.2 s
  expect_vec_near(across.translation, {0, 0, 0.3}, 1e-12);
  ASSERT_TRUE(m.delta(0.1037, 3 * kCycle + 0.1037, WrapMode::Loop, across));  // three laps
  expect_vec_near(across.translation, {0, 0, 5.4}, 1e-12);
}

// ---- a turning clip: the hips walk a circle of radius 2 m at 0.5 rad/s ------------------------

constexpr double kRadius = 2.0, kTurn = 0.5;

Vec3 on_circle(double phi) { return {kRadius * (1 - std::cos(phi)), 0, kRadius * std::sin(phi)}; }

Rig circle_walk(const Quat& rest_rotation = Quat::identity()) {
  std::vector<Joint> joints(1);
  joints[0].name = "pelvis";
  joints[0].rest.rotation = rest_rotation;
  Rig r{Skeleton::build(joints), {}};
  r.clip.duration = 2.0;
  r.clip.sample_rate = 30;
  r.clip.tracks.resize(1);
  for (int i = 0; i <= 60; ++i) {
    const double t = i / 30.0;
    r.clip.tracks[0].translation.times.push_back(t);
    r.clip.tracks[0].translation.values.push_back(on_circle(kTurn * t) + Vec3{0, 0.9, 0});
    r.clip.tracks[0].rotation.times.push_back(t);
    // Heading ωt: +Z turns toward +X, the way the circle bends.
    r.clip.tracks[0].rotation.values.push_back(Quat::from_axis_angle(Vec3::unit_y(), kTurn * t) *
                                               rest_rotation);
  }
  return r;
}

TEST(RootMotion, TurningPathComposesAcrossLoopsAndHeadings) {
  const Rig r = circle_walk();
  const RootMotion m = RootMotion::extract(r.clip, r.skeleton);
  EXPECT_EQ(m.joint(), 0);  // "pelvis"
  for (int i = 0; i < m.frame_count(); ++i)
    EXPECT_NEAR(m.path()[static_cast<size_t>(i)].yaw, kTurn * m.frame_time(i), 1e-12);
  // A circle is the same motion everywhere: any interval of length τ, in the character's frame,
  // is the chord (R(1 − cos ωτ), 0, R sin ωτ) and a turn of ωτ — also across the loop seam,
  // over any number of laps and backwards.
  const struct {
    double t0, t1;
  } cases[] = {{0.0, 1 / 30.0}, {0.4, 1.1},      {1.5, 2.5},   {1.9, 2.05},
               {0.5, -0.5},     {0.25, 2000.25}, {3.7, -12.3}, {-4.1, -3.3}};
  for (const auto& c : cases) {
    RootDelta d;
    ASSERT_TRUE(m.delta(c.t0, c.t1, WrapMode::Loop, d));
    const double phi = kTurn * (c.t1 - c.t0);
    const std::string what = std::to_string(c.t0) + " → " + std::to_string(c.t1);
    EXPECT_NEAR(d.yaw, phi, 1e-9) << what;
    // Frames are keyed 1/30 s apart; between them the path is interpolated linearly, so off the
    // frames the chord is matched to the sagitta of one frame step (R·(ω/30)²/8 ≈ 1e-4 m).
    expect_vec_near(d.translation, on_circle(phi), 2e-4, what);
  }
  // Exact composition: delta(a, b) then delta(b, c) is delta(a, c), in loop and clamp modes.
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-5, 5);
  for (WrapMode mode : {WrapMode::Loop, WrapMode::Clamp})
    for (int trial = 0; trial < 50; ++trial) {
      const double a = u(rng), b = u(rng), c = u(rng);
      RootDelta ab, bc, ac;
      ASSERT_TRUE(m.delta(a, b, mode, ab));
      ASSERT_TRUE(m.delta(b, c, mode, bc));
      ASSERT_TRUE(m.delta(a, c, mode, ac));
      const RootDelta two = compose(ab, bc);
      expect_vec_near(two.translation, ac.translation, 1e-9);
      EXPECT_NEAR(two.yaw, ac.yaw, 1e-12);
      // …and applying them one after the other to a character facing anywhere.
      Vec3 p1{1, 0, 2}, p2 = p1;
      double y1 = 2.0, y2 = 2.0;
      apply_root_motion(ab, p1, y1);
      apply_root_motion(bc, p1, y1);
      apply_root_motion(ac, p2, y2);
      expect_vec_near(p1, p2, 1e-9);
      EXPECT_NEAR(y1, y2, 1e-12);
    }
  // The placement of a ground motion as a transform.
  const Transform g = ground_transform({{1, 0, 2}, radians(90.0)});
  expect_vec_near(g.transform_point({0, 0, 1}), {2, 0, 2}, 1e-12);
}

TEST(RootMotion, HeadingComesFromTheForwardAxisNotTheBoneAxes) {
  // A hips joint whose bone axes are turned 90° about X at rest (as FBX rigs often are): the
  // forward axis is the local direction that is +Z at rest, so the heading is the circle's.
  const Quat rest = Quat::from_axis_angle(Vec3::unit_x(), radians(90.0));
  const Rig r = circle_walk(rest);
  const RootMotion m = RootMotion::extract(r.clip, r.skeleton);
  expect_vec_near(rotate(rest, m.forward_axis()), {0, 0, 1}, 1e-12);
  EXPECT_NEAR(m.start().yaw, 0.0, 1e-12);
  EXPECT_NEAR(m.path().back().yaw, kTurn * 2.0, 1e-12);
  // An explicit axis: the local +Y here points along world +Z at rest too.
  RootMotionOptions o;
  o.forward_axis = Vec3{0, 1, 0};
  EXPECT_NEAR(RootMotion::extract(r.clip, r.skeleton, o).path().back().yaw, 1.0, 1e-12);

  // Pitch and roll do not change the heading; a turn of 40° plus a 30° forward bend reads 40°.
  Rig bent = circle_walk();
  for (size_t k = 0; k < bent.clip.tracks[0].rotation.values.size(); ++k)
    bent.clip.tracks[0].rotation.values[k] =
        Quat::from_axis_angle(Vec3::unit_y(), radians(40.0)) *
        Quat::from_axis_angle(Vec3::unit_x(), radians(30.0)) *
        Quat::from_axis_angle(Vec3::unit_z(), radians(10.0 * std::sin(double(k))));
  const RootMotion b = RootMotion::extract(bent.clip, bent.skeleton);
  EXPECT_NEAR(b.start().yaw, radians(40.0), 0.02);  // roll moves the projection slightly
  EXPECT_NEAR(degrees(b.start().yaw), 40.0, 1.5);

  // Headings are unwrapped: three full turns read 6π, not a saw-tooth in (−π, π].
  Rig spin = circle_walk();
  for (size_t k = 0; k < spin.clip.tracks[0].rotation.values.size(); ++k)
    spin.clip.tracks[0].rotation.values[k] =
        Quat::from_axis_angle(Vec3::unit_y(), 3 * kPi * spin.clip.tracks[0].rotation.times[k]);
  EXPECT_NEAR(RootMotion::extract(spin.clip, spin.skeleton).path().back().yaw, 6 * kPi, 1e-9);
}

// ---- in place
// ------------------------------------------------------------------------------------

TEST(RootMotion, InPlaceWithRootMotionReproducesTheCmuWalk) {
  // CMU 02_01 (walk). The file is in CMU ASF units (1 unit = 5.644 cm); the BVH reader converts
  // to metres, so the extracted motion is in metres.
  const Asset walk = load_asset(kData + "/bvh/cmu_cgspeed_mb/02_01.bvh");
  EXPECT_NEAR(walk.source.unit_in_meters, 0.05644, 1e-5);
  const Skeleton& sk = walk.skeleton;
  const Clip& clip = walk.clips.at(0);
  const RootMotion m = RootMotion::extract(clip, sk);
  EXPECT_EQ(sk.joint(m.joint()).name, "Hips");
  EXPECT_EQ(m.frame_count(), clip.frame_count());
  // A human walk: 1.0–1.6 m/s over the ground.
  const double speed = length(m.path().back().translation) / m.duration();
  EXPECT_GT(speed, 1.0);
  EXPECT_LT(speed, 1.6);

  const Clip in_place = make_in_place(clip, sk, m);
  const int n = sk.joint_count();
  std::vector<Transform> local(static_cast<size_t>(n));
  std::vector<Mat4> original(local.size()), placed(local.size());
  // The character starts where the clip starts and is moved frame by frame by the root motion.
  Vec3 position = m.start().translation;
  double yaw = m.start().yaw;
  double worst = 0, worst_hips_ground = 0, worst_hips_yaw = 0;
  for (int i = 0; i < m.frame_count(); ++i) {
    const double t = m.frame_time(i);
    if (i > 0) {
      RootDelta d;
      ASSERT_TRUE(m.delta(m.frame_time(i - 1), t, WrapMode::Clamp, d));
      apply_root_motion(d, position, yaw);
    }
    ASSERT_TRUE(sample_pose(clip, sk, t, WrapMode::Clamp, local));
    ASSERT_TRUE(local_to_model(sk.parents(), local, original));
    ASSERT_TRUE(sample_pose(in_place, sk, t, WrapMode::Clamp, local));
    // The in-place hips: no ground offset, no heading; height and tilt kept.
    const Transform hips = local[static_cast<size_t>(m.joint())];
    worst_hips_ground =
        std::max(worst_hips_ground, std::hypot(hips.translation.x, hips.translation.z));
    const Vec3 f = rotate(hips.rotation, m.forward_axis());
    worst_hips_yaw = std::max(worst_hips_yaw, std::abs(std::atan2(f.x, f.z)));
    EXPECT_NEAR(hips.translation.y, original[static_cast<size_t>(m.joint())].translation_part().y,
                1e-9);
    ASSERT_TRUE(
        local_to_model(sk.parents(), local, placed, ground_transform({position, yaw}).to_matrix()));
    for (int j = 0; j < n; ++j)
      worst = std::max(worst, distance(placed[static_cast<size_t>(j)].translation_part(),
                                       original[static_cast<size_t>(j)].translation_part()));
  }
  EXPECT_LT(worst, 1e-9) << "metres";
  EXPECT_LT(worst_hips_ground, 1e-9);
  EXPECT_LT(worst_hips_yaw, 1e-9);
  // The hips' original heading does sway (±10° or so): something was really taken out.
  double sway = 0;
  for (const RootDelta& p : m.path()) sway = std::max(sway, std::abs(p.yaw));
  EXPECT_GT(sway, radians(5.0));
}

// ---- foot sliding
// --------------------------------------------------------------------------------

std::vector<uint8_t> planted_flags(const RootMotion& m) {
  // The synthetic walk's stance phases, known exactly: left on [0, 0.6], right on [0.6, 1.2].
  std::vector<uint8_t> flags;
  for (int i = 0; i < m.frame_count(); ++i) {
    const double t = m.frame_time(i);
    flags.push_back(t <= 0.6 + 1e-9);
    flags.push_back(t >= 0.6 - 1e-9);
  }
  return flags;
}

TEST(RootMotion, WrongSpeedSlidesHalfAMetrePerSecond) {
  const Rig r = synthetic_walk();
  const RootMotion m = RootMotion::extract(r.clip, r.skeleton);
  const Clip in_place = make_in_place(r.clip, r.skeleton, m);
  const int feet[] = {1, 2};
  const double dt = 1 / kFps;
  const int frames = sampled_frame_count(r.clip, kFps);
  ASSERT_EQ(frames, 73);

  // Root motion: the character follows the clip's own path (here, the model space itself).
  std::vector<Transform> with_root_motion, wrong_speed;
  for (int i = 0; i < frames; ++i) {
    RootDelta placed = compose(m.start(), m.at(m.frame_time(i)));
    with_root_motion.push_back(ground_transform(placed));
    // Code-driven movement at 2.0 m/s while the walk animates 1.5 m/s.
    wrong_speed.push_back(ground_transform({{0, 0, 2.0 * m.frame_time(i)}, 0}));
  }
  const std::vector<Vec3> good =
      foot_world_positions(in_place, r.skeleton, feet, kFps, with_root_motion);
  const std::vector<Vec3> bad = foot_world_positions(in_place, r.skeleton, feet, kFps, wrong_speed);
  const std::vector<uint8_t> planted = planted_flags(m);

  const FootSlidingReport ok = measure_foot_sliding(good, 2, dt, planted);
  EXPECT_EQ(ok.total.contact_segments, 72);  // 36 per foot
  EXPECT_NEAR(ok.total.max_speed, 0.0, 1e-9);
  EXPECT_NEAR(ok.total.drift_distance, 0.0, 1e-9);

  // 2.0 − 1.5 = 0.5 m of sliding every second a foot is planted: 0.3 m per 0.6 s stance.
  const FootSlidingReport slid = measure_foot_sliding(bad, 2, dt, planted);
  for (const FootSliding& f : slid.feet) {
    EXPECT_EQ(f.contact_segments, 36);
    EXPECT_NEAR(f.mean_speed, 0.5, 1e-9);
    EXPECT_NEAR(f.max_speed, 0.5, 1e-9);
    EXPECT_NEAR(f.drift_distance, 0.3, 1e-9);
  }
  EXPECT_NEAR(slid.total.mean_speed, 0.5, 1e-9);
  EXPECT_NEAR(slid.total.drift_distance, 0.6, 1e-9);

  // With contacts detected from the motion itself (defaults: 5 cm, 1 m/s) the numbers agree to
  // within the frames at lift-off, where the swing has started but the foot is still low.
  const FootSlidingReport detected_ok = measure_foot_sliding(good, 2, dt);
  EXPECT_GE(detected_ok.total.contact_segments, 72);
  EXPECT_LT(detected_ok.total.mean_speed, 0.05);
  const FootSlidingReport detected_bad = measure_foot_sliding(bad, 2, dt);
  EXPECT_GE(detected_bad.total.contact_segments, 72);
  EXPECT_NEAR(detected_bad.total.mean_speed, 0.5, 0.05);

  // The clip played as authored (root motion left in the clip, identity placement) is the
  // same as in place + root motion.
  const std::vector<Vec3> authored = foot_world_positions(r.clip, r.skeleton, feet, kFps);
  for (size_t i = 0; i < authored.size(); ++i) expect_vec_near(authored[i], good[i], 1e-12);
}

TEST(RootMotion, CmuWalkSlidesLittleWithRootMotionAndMuchAtAWrongSpeed) {
  const Asset walk = load_asset(kData + "/bvh/cmu_cgspeed_mb/02_01.bvh");
  const Skeleton& sk = walk.skeleton;
  const Clip& clip = walk.clips.at(0);
  const int feet[] = {sk.find("LeftToeBase"), sk.find("RightToeBase")};
  ASSERT_GE(feet[0], 0);
  ASSERT_GE(feet[1], 0);
  const RootMotion m = RootMotion::extract(clip, sk);
  const Clip in_place = make_in_place(clip, sk, m);
  const double rate = m.sample_rate(), dt = 1 / rate;
  const int frames = sampled_frame_count(clip, rate);
  ASSERT_EQ(frames, m.frame_count());

  // The walk's average velocity, and code that moves the character 0.5 m/s faster than that
  // in a straight line with the start heading (the clip turns a little, so only about).
  const Vec3 average = m.path().back().translation / m.duration();
  const Vec3 direction = normalize(average);
  const double wrong = length(average) + 0.5;
  std::vector<Transform> with_root_motion, wrong_speed;
  for (int i = 0; i < frames; ++i) {
    const double t = m.frame_time(i);
    with_root_motion.push_back(ground_transform(compose(m.start(), m.at(t))));
    const RootDelta straight{direction * (wrong * t), 0.0};
    wrong_speed.push_back(ground_transform(compose(m.start(), straight)));
  }
  const std::vector<Vec3> good = foot_world_positions(in_place, sk, feet, rate, with_root_motion);
  const std::vector<Vec3> bad = foot_world_positions(in_place, sk, feet, rate, wrong_speed);
  const std::vector<uint8_t> contacts = detect_foot_contacts(good, 2, dt);
  const FootSlidingReport ok = measure_foot_sliding(good, 2, dt, contacts);
  const FootSlidingReport slid = measure_foot_sliding(bad, 2, dt, contacts);
  std::printf(
      "CMU 02_01 toes: root motion %.3f m/s mean (%.3f max, %.3f m, %d segments); wrong "
      "speed %.3f m/s mean (%.3f max, %.3f m)\n",
      ok.total.mean_speed, ok.total.max_speed, ok.total.drift_distance, ok.total.contact_segments,
      slid.total.mean_speed, slid.total.max_speed, slid.total.drift_distance);
  for (const FootSliding& f : ok.feet) EXPECT_GT(f.contact_segments, 60);  // both feet plant
  // The capture itself slides a little (about 0.1 m/s at the toes while planted, whatever the
  // thresholds); the wrong speed adds about 0.5 m/s (plus the heading the straight line
  // ignores).
  EXPECT_LT(ok.total.mean_speed, 0.15);
  EXPECT_GT(slid.total.mean_speed - ok.total.mean_speed, 0.35);
  EXPECT_LT(slid.total.mean_speed - ok.total.mean_speed, 0.8);
  // The original clip (root motion baked in) measures the same as in place + root motion.
  const std::vector<Vec3> authored = foot_world_positions(clip, sk, feet, rate);
  const FootSlidingReport same = measure_foot_sliding(authored, 2, dt, contacts);
  EXPECT_NEAR(same.total.drift_distance, ok.total.drift_distance, 1e-6);
}

// ---- bad input
// -----------------------------------------------------------------------------------

TEST(RootMotion, BadInputIsRejected) {
  const Rig r = synthetic_walk();
  RootMotionOptions o;
  o.joint = 7;
  EXPECT_THROW(RootMotion::extract(r.clip, r.skeleton, o), Error);
  o = {};
  o.forward_axis = Vec3{0, 0, 0};
  EXPECT_THROW(RootMotion::extract(r.clip, r.skeleton, o), Error);
  o.forward_axis = Vec3{std::nan(""), 0, 1};
  EXPECT_THROW(RootMotion::extract(r.clip, r.skeleton, o), Error);
  o = {};
  o.sample_rate = -30;
  EXPECT_THROW(RootMotion::extract(r.clip, r.skeleton, o), Error);
  o.sample_rate = std::nan("");
  EXPECT_THROW(RootMotion::extract(r.clip, r.skeleton, o), Error);
  Clip zero = r.clip;
  zero.duration = 0;
  EXPECT_THROW(RootMotion::extract(zero, r.skeleton), Error);
  zero.duration = std::nan("");
  EXPECT_THROW(RootMotion::extract(zero, r.skeleton), Error);
  EXPECT_THROW(RootMotion::extract(r.clip, Skeleton{}), Error);
  try {
    RootMotion::extract(r.clip, r.skeleton, RootMotionOptions{9, {}, 0});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(e.reason().find("out of range"), std::string::npos) << e.what();
  }

  const RootMotion m = RootMotion::extract(r.clip, r.skeleton);
  RootDelta d{{1, 2, 3}, 4};
  EXPECT_FALSE(m.delta(std::nan(""), 1.0, WrapMode::Loop, d));
  EXPECT_FALSE(m.delta(0.0, INFINITY, WrapMode::Clamp, d));
  EXPECT_FALSE(RootMotion{}.delta(0.0, 1.0, WrapMode::Loop, d));
  EXPECT_EQ(d.yaw, 4.0);  // nothing written
  EXPECT_EQ(d.translation.z, 3.0);

  Clip longer = r.clip;
  longer.duration = 2.0;
  EXPECT_THROW(make_in_place(longer, r.skeleton, m), Error);
  EXPECT_THROW(make_in_place(r.clip, r.skeleton, RootMotion{}), Error);

  const std::vector<Vec3> five(5);
  EXPECT_THROW(measure_foot_sliding(five, 2, 0.01), Error);  // not whole frames
  EXPECT_THROW(measure_foot_sliding(five, 0, 0.01), Error);
  EXPECT_THROW(measure_foot_sliding(five, 1, 0.0), Error);
  EXPECT_THROW(measure_foot_sliding(five, 1, std::nan("")), Error);
  EXPECT_THROW(measure_foot_sliding(five, 1, 0.01, std::vector<uint8_t>(4)), Error);
  std::vector<Vec3> nan_position(4);
  nan_position[2].y = std::nan("");
  EXPECT_THROW(measure_foot_sliding(nan_position, 2, 0.01), Error);
  FootContactOptions bad_thresholds;
  bad_thresholds.height_threshold = -1;
  EXPECT_THROW(detect_foot_contacts(five, 1, 0.01, bad_thresholds), Error);
  bad_thresholds = {};
  bad_thresholds.speed_threshold = std::nan("");
  EXPECT_THROW(detect_foot_contacts(five, 1, 0.01, bad_thresholds), Error);

  const int feet[] = {1, 5};
  EXPECT_THROW(foot_world_positions(r.clip, r.skeleton, feet, 60), Error);
  const int good_feet[] = {1, 2};
  EXPECT_THROW(foot_world_positions(r.clip, r.skeleton, good_feet, 0), Error);
  EXPECT_THROW(foot_world_positions(r.clip, r.skeleton, good_feet, 60, std::vector<Transform>(3)),
               Error);
}

}  // namespace
}  // namespace kinema
