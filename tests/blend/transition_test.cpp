// Crossfade and inertialization (Bollo's quintic offset decay; worked numbers: the elbow switch,
// the velocity clamp and the knee settling onto an IK pose, docs/worked_examples.md,
// "Inertialization").
#include "kinema/blend/transition.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "kinema/clip/clip.h"
#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/math/scalar.h"
#include "kinema/skeleton/skeleton.h"
#include "test_paths.h"

namespace kinema {
namespace {

const std::string kData = test_paths::data_dir();

using Pose = std::vector<SoaTransform>;

Pose identity_pose(int joints) {
  return Pose(static_cast<size_t>(soa_count(joints)), SoaTransform::identity());
}

Pose to_soa_pose(std::span<const Transform> local) {
  Pose p = identity_pose(static_cast<int>(local.size()));
  for (size_t j = 0; j < local.size(); ++j)
    set_joint(p, static_cast<int>(j), static_cast<Transformf>(local[j]));
  return p;
}

// Signed angle (radians) of a rotation about a unit axis it is known to turn about.
double angle_about(const Quatf& q, const Vec3f& axis) {
  return 2.0 * std::atan2(static_cast<double>(dot(q.vec(), axis)), static_cast<double>(q.w));
}

// ---- the scalar curve ------------------------------------------------------------------------

TEST(Transition, InertializationQuinticOfTheElbowSwitch) {
  // Elbow: old clip at 30° moving −45°/s, new clip at 10° moving +15°/s → x0 = 20°, v0 = −60°/s
  // (already shrinking, so kept), T = 0.3 s, V = −18°: x(s) = 20 − 18s − 92s³ + 156s⁴ − 66s⁵.
  const InertializationCurve c = InertializationCurve::make(20.0, -60.0, 0.3);
  EXPECT_DOUBLE_EQ(c.x0, 20.0);
  EXPECT_DOUBLE_EQ(c.v0, -60.0);
  EXPECT_DOUBLE_EQ(c.blend_time, 0.3);
  EXPECT_NEAR(c.velocity_scale(), -18.0, 1e-12);
  EXPECT_NEAR(c.c3, -92.0, 1e-12);
  EXPECT_NEAR(c.c4, 156.0, 1e-12);
  EXPECT_NEAR(c.c5, -66.0, 1e-12);
  // x(1) = 20 − 18 − 92 + 156 − 66 = 0.
  EXPECT_NEAR(c.x0 + c.velocity_scale() + c.c3 + c.c4 + c.c5, 0.0, 1e-12);
  EXPECT_EQ(c.value(0.3), 0.0);
  EXPECT_EQ(c.value(1.0), 0.0);
  EXPECT_DOUBLE_EQ(c.value(0.0), 20.0);
  // s = 0.5: 20 − 9 − 11.5 + 9.75 − 2.0625 = 7.1875 ≈ 7.19°.
  EXPECT_NEAR(c.value(0.15), 7.1875, 1e-12);
  EXPECT_NEAR(inertialize_offset(20.0, -60.0, 0.3, 0.15), 7.19, 0.005);
  // The curve leaves at v0 and lands with zero velocity.
  EXPECT_NEAR(c.velocity(0.0), -60.0, 1e-12);
  EXPECT_NEAR(c.velocity(1e-9), -60.0, 1e-6);
  EXPECT_NEAR(c.velocity(0.3 - 1e-9), 0.0, 1e-6);
  // The elbow at t = 0.15 s: new clip 10 + 15·0.15 plus the offset = 19.44°.
  EXPECT_NEAR(10.0 + 15.0 * 0.15 + c.value(0.15), 19.44, 0.005);
  // With V = 0 it is x0·(1 − 10s³ + 15s⁴ − 6s⁵), the "smootherstep" relative of smoothstep.
  const InertializationCurve r = InertializationCurve::make(1.0, 0.0, 1.0);
  for (double s : {0.1, 0.25, 0.5, 0.8})
    EXPECT_NEAR(r.value(s), 1 - 10 * s * s * s + 15 * std::pow(s, 4) - 6 * std::pow(s, 5), 1e-14);
}

TEST(Transition, OffsetVelocityTowardZeroIsKeptAndAwayFromZeroIsClamped) {
  // x0 = −12°, v0 = 30°/s (toward zero: kept), T = 0.25 s, V = 7.5°:
  // x(s) = −12 + 7.5s + 75s³ − 120s⁴ + 49.5s⁵.
  const InertializationCurve c = InertializationCurve::make(-12.0, 30.0, 0.25);
  EXPECT_DOUBLE_EQ(c.v0, 30.0);
  EXPECT_NEAR(c.velocity_scale(), 7.5, 1e-12);
  EXPECT_NEAR(c.c3, 75.0, 1e-12);
  EXPECT_NEAR(c.c4, -120.0, 1e-12);
  EXPECT_NEAR(c.c5, 49.5, 1e-12);
  EXPECT_NEAR(-12.0 + 7.5 + 75.0 - 120.0 + 49.5, 0.0, 1e-12);  // x(1) = 0
  EXPECT_EQ(c.value(0.25), 0.0);
  // x(0.5) = −12 + 3.75 + 9.375 − 7.5 + 1.546875 = −4.828125°.
  EXPECT_NEAR(c.value(0.125), -4.828125, 1e-12);

  // v0 = −30°/s points away from zero (x0·v0 > 0): the offset would first grow past 12°
  // before coming back, so it is clamped to 0: x(s) = −12·(1 − 10s³ + 15s⁴ − 6s⁵), x(0.5) = −6.
  const InertializationCurve d = InertializationCurve::make(-12.0, -30.0, 0.25);
  EXPECT_EQ(d.v0, 0.0);
  EXPECT_NEAR(d.c3, 120.0, 1e-12);
  EXPECT_NEAR(d.c4, -180.0, 1e-12);
  EXPECT_NEAR(d.c5, 72.0, 1e-12);
  EXPECT_NEAR(d.value(0.125), -6.0, 1e-12);
  // Unclamped (V = −7.5): −12 − 7.5s + 165s³ − 240s⁴ + 94.5s⁵ reaches beyond −12 first.
  auto unclamped = [](double s) {
    return -12 - 7.5 * s + 165 * s * s * s - 240 * std::pow(s, 4) + 94.5 * std::pow(s, 5);
  };
  EXPECT_LT(unclamped(0.1), -12.5);
  for (int i = 0; i <= 100; ++i) {
    const double t = 0.25 * i / 100;
    EXPECT_GE(d.value(t), -12.0);
    EXPECT_LE(d.value(t), 0.0);
  }
}

TEST(Transition, KneeSettlesOntoTheIkBendWithoutOvershoot) {
  // A playing clip holds the knee at 20°; foot IK asks for 75.5° (cos θ = 0.25). With x0 = 20° −
  // 75.5°, v0 = 0 and T = 0.2 s the offset is x0·(1 − 10s³ + 15s⁴ − 6s⁵), whose factor is 1,
  // 0.896, 0.5, 0.104, 0 at s = 0, ¼, ½, ¾, 1: the knee goes 20°, 25.8°, 47.8°, 69.8°, 75.5°.
  const double ik_bend = degrees(std::acos(0.25));
  const InertializationCurve c = InertializationCurve::make(20.0 - ik_bend, 0.0, 0.2);
  EXPECT_DOUBLE_EQ(c.blend_time, 0.2);
  const double s[5] = {0, 0.25, 0.5, 0.75, 1}, factor[5] = {1, 0.896, 0.5, 0.104, 0};
  // The hand figures are worked from the rounded 75.5° and 3-decimal factors: 25.8 is 0.053 above
  // the exact 25.747, so they are checked to ±0.06 and the exact curve through the factor.
  const double knee[5] = {20.0, 25.8, 47.8, 69.8, 75.5};
  for (int i = 0; i < 5; ++i) {
    const double smoother =
        1 - 10 * std::pow(s[i], 3) + 15 * std::pow(s[i], 4) - 6 * std::pow(s[i], 5);
    EXPECT_NEAR(c.value(0.2 * s[i]), c.x0 * smoother, 1e-12) << s[i];
    EXPECT_NEAR(smoother, factor[i], 5e-4) << s[i];
    EXPECT_NEAR(ik_bend + c.value(0.2 * s[i]), knee[i], 0.06) << s[i];
    EXPECT_LE(ik_bend + c.value(0.2 * s[i]), ik_bend);  // never past the IK bend
  }
}

TEST(Transition, InertializationNeverOvershootsWhenClamped) {
  // Random offsets and velocities: with the clamps the offset keeps x0's sign, its magnitude
  // never grows, and it lands on 0 at the (possibly shortened) blend time — while a velocity
  // toward zero is kept, so the start stays C¹.
  std::mt19937 rng(25004);
  std::uniform_real_distribution<double> x_dist(-2.0, 2.0), v_dist(-40.0, 40.0), t_dist(0.05, 1);
  int shortened = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    const double x0 = x_dist(rng), v0 = v_dist(rng), T = t_dist(rng);
    const InertializationCurve c = InertializationCurve::make(x0, v0, T);
    EXPECT_EQ(c.v0, x0 * v0 < 0 ? v0 : 0.0);
    EXPECT_LE(c.blend_time, T);
    shortened += c.blend_time < T;
    double previous = std::abs(x0);
    for (int i = 0; i <= 400; ++i) {
      const double x = c.value(c.blend_time * i / 400.0);
      ASSERT_GE(x * x0, -1e-12) << "x0 " << x0 << " v0 " << v0 << " T " << T << " i " << i;
      ASSERT_LE(std::abs(x), previous + 1e-12) << "x0 " << x0 << " v0 " << v0 << " T " << T;
      previous = std::abs(x);
    }
    EXPECT_EQ(c.value(c.blend_time), 0.0);
  }
  EXPECT_GT(shortened, 100);  // the shortening guard was exercised

  // Without the shortening guard a fast approach overshoots (the reason for the guard).
  const InertializationCurve fast = InertializationCurve::make(1.0, -20.0, 0.5, false);
  double lowest = 1.0;
  for (int i = 0; i <= 100; ++i) lowest = std::min(lowest, fast.value(0.005 * i));
  EXPECT_LT(lowest, -0.1);
}

// ---- the elbow switch through the joint pipeline ----------------------------------------------

// Shoulder → elbow → wrist along +X; the clip turns the elbow about +Z at a constant rate,
// angle(τ) = a1 + rate·(τ − 1) degrees, so τ = 1 s is "the switch".
Skeleton arm() {
  std::vector<Joint> joints(3);
  joints[0].name = "shoulder";
  joints[1].name = "elbow", joints[1].parent = 0, joints[1].rest.translation = {0.3, 0, 0};
  joints[2].name = "wrist", joints[2].parent = 1, joints[2].rest.translation = {0.25, 0, 0};
  return Skeleton::build(joints);
}

Clip elbow_clip(double angle_at_1_deg, double rate_deg) {
  Clip c;
  c.name = "elbow";
  c.duration = 2.0;
  c.tracks.resize(3);
  Keyframes<Quat>& r = c.tracks[1].rotation;
  r.times = {0.0, 2.0};
  for (double t : r.times)
    r.values.push_back(
        Quat::from_axis_angle(Vec3::unit_z(), radians(angle_at_1_deg + rate_deg * (t - 1.0))));
  return c;
}

Pose sample_soa(const Clip& clip, const Skeleton& skeleton, double t) {
  std::vector<Transform> local(static_cast<size_t>(skeleton.joint_count()));
  EXPECT_TRUE(sample_pose(clip, skeleton, t, WrapMode::Clamp, local));
  return to_soa_pose(local);
}

TEST(Transition, InertializerDrivesTheElbowThroughTheQuintic) {
  const Skeleton sk = arm();
  const Clip old_clip = elbow_clip(30.0, -45.0), new_clip = elbow_clip(10.0, 15.0);
  const float dt = 1.0f / 60.0f;
  Inertializer in(sk.joint_count());
  ASSERT_TRUE(in.transition(sample_soa(old_clip, sk, 1.0 - dt), sample_soa(old_clip, sk, 1.0),
                            sample_soa(new_clip, sk, 1.0 - dt), sample_soa(new_clip, sk, 1.0), dt,
                            0.3f));
  // The recorded elbow curve: x0 = 20°, v0 = −60°/s (from the two frames), about +Z.
  const InertializationCurve c = in.curve(1, 0);
  const Vec3f axis = in.rotation_axis(1);
  const double sign = axis.z > 0 ? 1.0 : -1.0;  // x0 ≥ 0 is an angle about ±Z
  EXPECT_NEAR(std::abs(axis.z), 1.0, 1e-6);
  EXPECT_NEAR(degrees(sign * c.x0), 20.0, 1e-4);
  EXPECT_NEAR(degrees(sign * c.v0), -60.0, 0.01);
  EXPECT_FLOAT_EQ(static_cast<float>(c.blend_time), 0.3f);

  Pose out = identity_pose(sk.joint_count());
  // At the switch the output is the old clip's pose: 30°.
  ASSERT_TRUE(in.apply(sample_soa(new_clip, sk, 1.0), out));
  EXPECT_NEAR(degrees(angle_about(get_joint(out, 1).rotation, {0, 0, 1})), 30.0, 1e-4);
  // Nine frames of 1/60 s: t = 0.15 s, elbow = 10 + 15·0.15 + 7.19 = 19.44°.
  for (int frame = 1; frame <= 9; ++frame) {
    ASSERT_TRUE(in.advance(dt));
    ASSERT_TRUE(in.apply(sample_soa(new_clip, sk, 1.0 + in.elapsed()), out));
  }
  EXPECT_NEAR(in.elapsed(), 0.15f, 1e-6f);
  const double elbow = degrees(angle_about(get_joint(out, 1).rotation, {0, 0, 1}));
  EXPECT_NEAR(elbow, 19.44, 0.005);
  EXPECT_NEAR(elbow, 10.0 + 2.25 + 7.1875, 2e-3);
  // Through FK: the wrist sits 0.25 m from the elbow at 19.44° (the shoulder does not turn).
  std::vector<Transformf> local(3);
  ASSERT_TRUE(to_aos(out, local));
  const Vec3f wrist = (local[0] * local[1] * local[2]).translation;
  EXPECT_NEAR(wrist.x, 0.3 + 0.25 * std::cos(radians(19.4375)), 1e-4);
  EXPECT_NEAR(wrist.y, 0.25 * std::sin(radians(19.4375)), 1e-4);
  // At T = 0.3 s the output is the new clip: 10 + 15·0.3 = 14.5°.
  for (int frame = 10; frame <= 18; ++frame) {
    ASSERT_TRUE(in.advance(dt));
    ASSERT_TRUE(in.apply(sample_soa(new_clip, sk, 1.0 + in.elapsed()), out));
  }
  EXPECT_FALSE(in.active());
  EXPECT_NEAR(degrees(angle_about(get_joint(out, 1).rotation, {0, 0, 1})), 14.5, 1e-3);
}

// ---- continuity --------------------------------------------------------------------------------

// A two-joint pose moving smoothly in every channel; rotations about one fixed axis per source.
struct Motion {
  Vec3f axis;
  std::function<double(double)> angle;
  std::function<Vec3f(double)> translation, scale;
  Pose at(double t) const {
    Pose p = identity_pose(2);
    for (int j = 0; j < 2; ++j) {
      Transformf x;
      x.rotation = Quatf::from_axis_angle(axis, static_cast<float>(angle(t) * (j + 1)));
      x.translation = translation(t) * static_cast<float>(j + 1);
      x.scale = scale(t);
      set_joint(p, j, x);
    }
    return p;
  }
};

const Vec3f kAxis = normalize(Vec3f{0.3f, 0.8f, 0.5f});

// Every channel's offset velocity points toward zero here and is slow enough not to shorten
// the blend (|v0|·T < 2.5·|x0|), so the plain quintic is used unchanged and the switch is C¹.
Motion old_motion() {
  return {kAxis, [](double t) { return 0.4 - 1.2 * std::sin(2 * t); },
          [](double t) {
            return Vec3f{float(0.1 + 0.3 * t * t), float(0.1 - 0.2 * t), float(0.5 * std::cos(t))};
          },
          [](double t) {
            return Vec3f{float(1 - 0.1 * t), 1.1f, float(1 - 0.05 * t * t)};
          }};
}

Motion new_motion() {
  return {kAxis, [](double t) { return -0.3 + 0.8 * t - 0.5 * t * t; },
          [](double t) {
            return Vec3f{float(-0.2 + 0.1 * std::sin(3 * t)), float(0.2 * t), 0.1f};
          },
          [](double t) {
            return Vec3f{0.9f, float(1 + 0.2 * t), 1.0f};
          }};
}

// The channels of joint j as numbers: angle about kAxis, translation xyz, scale xyz.
std::vector<double> channels(const Pose& p, int j) {
  const Transformf x = get_joint(p, j);
  return {angle_about(x.rotation, kAxis),
          x.translation.x,
          x.translation.y,
          x.translation.z,
          x.scale.x,
          x.scale.y,
          x.scale.z};
}

TEST(Transition, InertializationIsC1AtTheSwitchAndAtT) {
  const Motion a = old_motion(), b = new_motion();
  const double h = 1e-3, T = 0.5;
  Inertializer in(2);
  ASSERT_TRUE(in.transition(a.at(-h), a.at(0), b.at(-h), b.at(0), float(h), float(T)));
  for (int j = 0; j < 2; ++j)
    for (int c = 0; c < 7; ++c) {
      const InertializationCurve curve = in.curve(j, c);
      if (curve.x0 == 0) continue;
      EXPECT_FLOAT_EQ(curve.blend_time, T) << j << " " << c;  // not shortened
      if (c != 3) {
        EXPECT_NE(curve.v0, 0.0) << j << " " << c;  // not clamped
      }
    }
  auto output = [&](double t) {
    Inertializer copy = in;
    EXPECT_TRUE(copy.advance(float(t)));
    Pose out = identity_pose(2);
    EXPECT_TRUE(copy.apply(b.at(t), out));
    return out;
  };
  for (int j = 0; j < 2; ++j) {
    SCOPED_TRACE("joint " + std::to_string(j));
    const std::vector<double> y0 = channels(output(0), j), yh = channels(output(h), j);
    const std::vector<double> a0 = channels(a.at(0), j), ah = channels(a.at(h), j);
    const std::vector<double> b0 = channels(b.at(0), j), bh = channels(b.at(h), j);
    const std::vector<double> yT = channels(output(T), j), yTh = channels(output(T - h), j);
    const std::vector<double> bT = channels(b.at(T), j), bTh = channels(b.at(T - h), j);
    for (size_t c = 0; c < y0.size(); ++c) {
      SCOPED_TRACE("channel " + std::to_string(c));
      // C⁰ and C¹ at the switch: the old clip's value and velocity (forward differences over
      // h = 1 ms differ by h/2·(acceleration difference), so 5e-3 units/s). For the rotation,
      // the angle about the (common) axis.
      EXPECT_NEAR(y0[c], a0[c], 2e-6);
      const double v_out = (yh[c] - y0[c]) / h, v_old = (ah[c] - a0[c]) / h;
      const double v_new = (bh[c] - b0[c]) / h;
      EXPECT_NEAR(v_out, v_old, 5e-3);
      // A hard cut would jump in velocity here (so this test can fail).
      if (c == 0 || c == 1 || c == 2 || c == 5) {
        EXPECT_GT(std::abs(v_new - v_old), 0.1);
      }
      // At T: exactly the new clip, arriving with the new clip's velocity.
      EXPECT_NEAR(yT[c], bT[c], 1e-6);
      EXPECT_NEAR((yT[c] - yTh[c]) / h, (bT[c] - bTh[c]) / h, 5e-3);
    }
  }
}

TEST(Transition, NewTransitionDuringATransitionDoesNotPop) {
  // A → B at t = 0 (T = 0.4 s); at t = 0.2 s, mid-blend, on to C. The second offset is measured
  // against what was shown (the inertialized output), so the output neither jumps nor kinks.
  const Motion a = old_motion(), b = new_motion();
  Motion c = new_motion();
  c.angle = [](double t) { return 1.0 - 0.6 * t; };
  c.translation = [](double t) { return Vec3f{0.3f, float(-0.1 + 0.2 * t), float(0.2 * t)}; };
  const float dt = 1.0f / 240.0f;
  Inertializer in(2);
  ASSERT_TRUE(in.transition(a.at(-dt), a.at(0), b.at(-dt), b.at(0), dt, 0.4f));
  std::vector<Pose> shown;  // one per frame, frame k at t = k·dt
  Pose out = identity_pose(2);
  ASSERT_TRUE(in.apply(b.at(0), out));
  shown.push_back(out);
  const int switch_frame = 48;  // t = 0.2 s
  for (int k = 1; k <= switch_frame; ++k) {
    ASSERT_TRUE(in.advance(dt));
    ASSERT_TRUE(in.apply(b.at(k * dt), out));
    shown.push_back(out);
  }
  ASSERT_TRUE(in.active());
  // What a naive restart against B's raw pose would have lost: the offset still on screen.
  EXPECT_GT(std::abs(channels(out, 0)[0] - channels(b.at(switch_frame * dt), 0)[0]), 0.05);

  const double ts = switch_frame * dt;
  ASSERT_TRUE(in.transition(shown[switch_frame - 1], shown[switch_frame], c.at(ts - dt), c.at(ts),
                            dt, 0.4f));
  ASSERT_TRUE(in.apply(c.at(ts), out));
  for (int j = 0; j < 2; ++j) {
    const std::vector<double> before = channels(shown[switch_frame], j), now = channels(out, j);
    for (size_t ch = 0; ch < now.size(); ++ch) EXPECT_NEAR(now[ch], before[ch], 2e-6);
  }
  shown[switch_frame] = out;
  for (int k = switch_frame + 1; k <= switch_frame + 120; ++k) {
    ASSERT_TRUE(in.advance(dt));
    ASSERT_TRUE(in.apply(c.at(k * dt), out));
    shown.push_back(out);
  }
  EXPECT_FALSE(in.active());
  // Velocity across the second switch, from second-order one-sided differences: where the
  // new offset's velocity points toward zero it is kept (C¹); where it pointed away it was
  // clamped to 0, so the output leaves with C's own velocity (the no-overshoot rule).
  const size_t s0 = switch_frame;
  int kept = 0;
  for (int j = 0; j < 2; ++j)
    for (size_t ch = 0; ch < 7; ++ch) {
      auto y = [&](size_t k) { return channels(shown[k], j)[ch]; };
      auto yc = [&](size_t k) { return channels(c.at(double(k) * dt), j)[ch]; };
      const double before = (3 * y(s0) - 4 * y(s0 - 1) + y(s0 - 2)) / (2 * dt);
      const double after = (-3 * y(s0) + 4 * y(s0 + 1) - y(s0 + 2)) / (2 * dt);
      const double own = (-3 * yc(s0) + 4 * yc(s0 + 1) - yc(s0 + 2)) / (2 * dt);
      const bool keeps_velocity = in.curve(j, int(ch)).v0 != 0;
      kept += keeps_velocity;
      EXPECT_NEAR(after, keeps_velocity ? before : own, 0.05) << "joint " << j << " ch " << ch;
    }
  EXPECT_GE(kept, 4);
  // And the output lands on C.
  for (size_t ch = 0; ch < 7; ++ch)
    EXPECT_NEAR(channels(out, 1)[ch], channels(c.at((switch_frame + 120) * dt), 1)[ch], 1e-6);
}

TEST(Transition, PoseOffsetsNeverOvershoot) {
  // Whole poses with random offsets and velocities: each joint's distance to the new pose
  // (rotation angle, translation per axis) only ever shrinks.
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const int joints = 9;
  auto random_pose = [&] {
    Pose p = identity_pose(joints);
    for (int j = 0; j < joints; ++j) {
      Transformf x;
      x.rotation = normalize(Quatf{u(rng), u(rng), u(rng), u(rng)});
      x.translation = {u(rng), u(rng), u(rng)};
      set_joint(p, j, x);
    }
    return p;
  };
  for (int trial = 0; trial < 20; ++trial) {
    const Pose op = random_pose(), nw = random_pose();
    Pose oc = op, np = nw;  // the previous frames: small random steps away
    for (int j = 0; j < joints; ++j) {
      Transformf x = get_joint(op, j), y = get_joint(nw, j);
      x.rotation = normalize(x.rotation + Quatf{u(rng), u(rng), u(rng), u(rng)} * 0.05f);
      x.translation += Vec3f{u(rng), u(rng), u(rng)} * 0.05f;
      y.rotation = normalize(y.rotation + Quatf{u(rng), u(rng), u(rng), u(rng)} * 0.05f);
      set_joint(oc, j, x), set_joint(np, j, y);
    }
    Inertializer in(joints);
    ASSERT_TRUE(in.transition(op, oc, np, nw, 1.0f / 60, 0.3f));
    std::vector<float> angle(joints, 10.0f), dist(joints * 3, 10.0f);
    Pose out = identity_pose(joints);
    for (int k = 0; k <= 40; ++k) {
      ASSERT_TRUE(in.apply(nw, out));
      for (int j = 0; j < joints; ++j) {
        const Transformf o = get_joint(out, j), n = get_joint(nw, j);
        const float a = angle_between(o.rotation, n.rotation);
        EXPECT_LE(a, angle[static_cast<size_t>(j)] + 2e-4f);
        angle[static_cast<size_t>(j)] = a;
        for (int c = 0; c < 3; ++c) {
          const float d = std::abs(o.translation[c] - n.translation[c]);
          EXPECT_LE(d, dist[static_cast<size_t>(j * 3 + c)] + 1e-6f);
          dist[static_cast<size_t>(j * 3 + c)] = d;
        }
      }
      ASSERT_TRUE(in.advance(1.0f / 120));
    }
  }
}

// ---- crossfade ---------------------------------------------------------------------------------

TEST(Transition, CrossfadeWeightRamp) {
  float w = -1;
  ASSERT_TRUE(crossfade_weight(0.0f, 0.25f, FadeCurve::Linear, w));
  EXPECT_EQ(w, 0.0f);
  ASSERT_TRUE(crossfade_weight(0.1f, 0.25f, FadeCurve::Linear, w));
  EXPECT_FLOAT_EQ(w, 0.4f);
  ASSERT_TRUE(crossfade_weight(0.1f, 0.25f, FadeCurve::Smoothstep, w));
  EXPECT_FLOAT_EQ(w, 3 * 0.16f - 2 * 0.064f);  // 3s² − 2s³ at s = 0.4
  ASSERT_TRUE(crossfade_weight(0.25f, 0.25f, FadeCurve::Smoothstep, w));
  EXPECT_EQ(w, 1.0f);
  ASSERT_TRUE(crossfade_weight(7.0f, 0.25f, FadeCurve::Smoothstep, w));
  EXPECT_EQ(w, 1.0f);
  ASSERT_TRUE(crossfade_weight(-0.1f, 0.25f, FadeCurve::Linear, w));
  EXPECT_EQ(w, 0.0f);
  ASSERT_TRUE(crossfade_weight(0.0f, 0.0f, FadeCurve::Linear, w));  // zero duration: a cut
  EXPECT_EQ(w, 1.0f);

  CrossfadeRamp ramp;
  ASSERT_TRUE(ramp.start(0.2f, FadeCurve::Linear));
  EXPECT_EQ(ramp.weight(), 0.0f);
  EXPECT_FALSE(ramp.done());
  ASSERT_TRUE(ramp.advance(0.05f));
  EXPECT_FLOAT_EQ(ramp.weight(), 0.25f);
  ASSERT_TRUE(ramp.advance(0.2f));
  EXPECT_EQ(ramp.weight(), 1.0f);
  EXPECT_TRUE(ramp.done());
}

TEST(Transition, CrossfadeIsC0AtBothEndsAndC1WithSmoothstep) {
  // Two static poses. Both are evaluated during the whole fade.
  Pose a = identity_pose(3), b = identity_pose(3);
  for (int j = 0; j < 3; ++j) {
    set_joint(a, j,
              {{0, 1, 0.1f * j}, Quatf::from_axis_angle({1, 0, 0}, radians(10.0f)), {1, 1, 1}});
    set_joint(b, j,
              {{0.5f, 1, 0.2f}, Quatf::from_axis_angle({0, 1, 0}, radians(70.0f)), {1, 2, 1}});
  }
  const float d = 0.25f, h = 1e-4f;
  auto faded = [&](float t, FadeCurve curve) {
    float w = 0;
    EXPECT_TRUE(crossfade_weight(t, d, curve, w));
    Pose out = identity_pose(3);
    EXPECT_TRUE(crossfade(a, b, w, 3, out));
    return out;
  };
  auto x_at = [](const Pose& p) { return get_joint(p, 1).translation.x; };
  auto rot_dist = [](const Pose& p, const Pose& q) {
    return angle_between(get_joint(p, 1).rotation, get_joint(q, 1).rotation);
  };
  for (FadeCurve curve : {FadeCurve::Linear, FadeCurve::Smoothstep}) {
    // C⁰: weight 0 is exactly A, weight 1 exactly B.
    const Pose start = faded(0, curve), end = faded(d, curve);
    EXPECT_NEAR(x_at(start), 0.0f, 1e-7f);
    EXPECT_LT(rot_dist(start, a), 1e-3f);
    EXPECT_NEAR(x_at(end), 0.5f, 1e-7f);
    EXPECT_LT(rot_dist(end, b), 1e-3f);
    // Slopes at the ends (per second). Linear: (B − A)/d = 2 m/s in x; smoothstep: 0.
    const float s0 = (x_at(faded(h, curve)) - x_at(start)) / h;
    const float s1 = (x_at(end) - x_at(faded(d - h, curve))) / h;
    if (curve == FadeCurve::Linear) {
      EXPECT_NEAR(s0, 2.0f, 0.02f);
      EXPECT_NEAR(s1, 2.0f, 0.02f);
    } else {
      EXPECT_NEAR(s0, 0.0f, 0.02f);
      EXPECT_NEAR(s1, 0.0f, 0.02f);
      const float r0 = rot_dist(faded(h, curve), start) / h;
      EXPECT_LT(r0, 0.02f);  // rad/s (linear would be ≈ 72°·π/180 / 0.25 ≈ 5 rad/s)
    }
  }
  // Mid-fade: a real blend of both (x halfway at w = 0.5).
  Pose mid = identity_pose(3);
  ASSERT_TRUE(crossfade(a, b, 0.5f, 3, mid));
  EXPECT_NEAR(x_at(mid), 0.25f, 1e-6f);
}

TEST(Transition, CrossfadeOfMovingClipsIsC1WithSmoothstep) {
  // Both clips keep playing, so with smoothstep the output leaves at A's velocity and arrives
  // with B's.
  const Motion a = old_motion(), b = new_motion();
  const double d = 0.3, h = 1e-4;
  auto out_at = [&](double t) {
    float w = 0;
    EXPECT_TRUE(crossfade_weight(float(t), float(d), FadeCurve::Smoothstep, w));
    Pose out = identity_pose(2);
    EXPECT_TRUE(crossfade(a.at(t), b.at(t), w, 2, out));
    return out;
  };
  for (size_t c : {1u, 2u, 3u}) {  // translation components (lerped exactly)
    const double v0 = (channels(out_at(h), 0)[c] - channels(out_at(0), 0)[c]) / h;
    const double va = (channels(a.at(h), 0)[c] - channels(a.at(0), 0)[c]) / h;
    EXPECT_NEAR(v0, va, 5e-3);
    const double v1 = (channels(out_at(d), 0)[c] - channels(out_at(d - h), 0)[c]) / h;
    const double vb = (channels(b.at(d), 0)[c] - channels(b.at(d - h), 0)[c]) / h;
    EXPECT_NEAR(v1, vb, 5e-3);
  }
}

// ---- real data: pab walk → run -----------------------------------------------------------------

bool is_camera_or_light(const std::string& name) {
  return name.rfind("Camera", 0) == 0 || name.rfind("Sky", 0) == 0;
}

TEST(Transition, InertializedWalkToRunHasNoAngularVelocityJump) {
  const Asset walk = load_asset(kData + "/fbx/ozz_pab/walk.fbx");
  const Asset run = load_asset(kData + "/fbx/ozz_pab/run.fbx");
  const Skeleton& sk = walk.skeleton;
  const int n = sk.joint_count();
  ASSERT_EQ(run.skeleton.joint_count(), n);
  for (int j = 0; j < n; ++j) ASSERT_EQ(run.skeleton.joint(j).name, sk.joint(j).name);
  const Clip &wc = walk.clips.at(0), &rc = run.clips.at(0);
  const double fps = 60, dt = 1 / fps;
  auto pose = [&](const Clip& c, double t) {
    return sample_soa(c, sk, wrap_time(t, c.duration, WrapMode::Loop));
  };
  auto rates = [&](const Pose& p, const Pose& q, std::vector<double>& max_rate) {
    for (int j = 0; j < n; ++j)
      max_rate[static_cast<size_t>(j)] =
          std::max(max_rate[static_cast<size_t>(j)],
                   double(angle_between(get_joint(p, j).rotation, get_joint(q, j).rotation)) * fps);
  };
  // What the clips themselves show: the largest frame-to-frame angular velocity of each joint.
  std::vector<double> clip_max(static_cast<size_t>(n), 0.0);
  for (const Clip* c : {&wc, &rc})
    for (double t = 0; t + dt <= c->duration + 1e-9; t += dt)
      rates(pose(*c, t), pose(*c, t + dt), clip_max);

  // Switch from the walk at 0.6 s to the run at 0.05 s (opposite feet), T = 0.3 s.
  const double tw = 0.6, tr = 0.05, T = 0.3;
  Inertializer in(n);
  const Pose old_prev = pose(wc, tw - dt), old_now = pose(wc, tw);
  ASSERT_TRUE(
      in.transition(old_prev, old_now, pose(rc, tr - dt), pose(rc, tr), float(dt), float(T)));
  std::vector<double> inert_max(static_cast<size_t>(n), 0.0), cut_max(static_cast<size_t>(n), 0.0);
  Pose shown = old_now, out = identity_pose(n);
  ASSERT_TRUE(in.apply(pose(rc, tr), out));
  rates(old_prev, out, inert_max);  // the frame into the switch (out = old_now here)
  shown = out;
  Pose cut_prev = old_now;
  for (int k = 1; k * dt <= T + 0.1; ++k) {
    const Pose now = pose(rc, tr + k * dt);
    ASSERT_TRUE(in.advance(float(dt)));
    ASSERT_TRUE(in.apply(now, out));
    rates(shown, out, inert_max);
    rates(cut_prev, now, cut_max);
    shown = out;
    cut_prev = now;
  }
  int moving = 0, cut_jumps = 0;
  for (int j = 0; j < n; ++j) {
    if (is_camera_or_light(sk.joint(j).name)) continue;
    const size_t i = static_cast<size_t>(j);
    const InertializationCurve c = in.curve(j, 0);
    const std::string why = sk.joint(j).name + ": clips " + std::to_string(clip_max[i]) +
                            " rad/s, inertialized " + std::to_string(inert_max[i]) + ", hard cut " +
                            std::to_string(cut_max[i]) + ", offset " + std::to_string(c.x0) +
                            " rad";
    // How fast the offset itself must move: the smootherstep covering x0 in T peaks at
    // 1.875·x0/T (a kept v0 toward zero may be faster at the start).
    const double decay = std::max(1.875 * c.x0 / c.blend_time, std::abs(c.v0));
    // Joints that the clips turn faster than that (hips, spine, head, limbs): within 10% +
    // 0.2 rad/s of the fastest the clips themselves turn them.
    if (clip_max[i] >= 1.0 && clip_max[i] >= decay) {
      ++moving;
      EXPECT_LE(inert_max[i], 1.1 * clip_max[i] + 0.2) << why;
      cut_jumps += cut_max[i] > 1.5 * clip_max[i] + 1.0;
    }
    // Every joint, also those still in both clips but posed differently (fingers, end nodes),
    // which any transition has to move: no faster than the clips plus the offset's decay.
    EXPECT_LE(inert_max[i], clip_max[i] + 1.05 * decay + 0.05) << why;
  }
  EXPECT_GE(moving, 15);
  // A hard cut jumps far beyond what the clips show on most of those joints, so the first
  // check can fail.
  EXPECT_GE(cut_jumps, moving / 2) << "of " << moving;
}

// ---- bad input ---------------------------------------------------------------------------------

TEST(Transition, BadInputIsRejected) {
  const float nan = std::nanf("");
  float w = 0.5f;
  EXPECT_FALSE(crossfade_weight(0.1f, nan, FadeCurve::Linear, w));
  EXPECT_FALSE(crossfade_weight(0.1f, -0.2f, FadeCurve::Linear, w));
  EXPECT_FALSE(crossfade_weight(nan, 0.2f, FadeCurve::Linear, w));
  EXPECT_FALSE(crossfade_weight(0.1f, INFINITY, FadeCurve::Linear, w));
  EXPECT_EQ(w, 0.5f);  // nothing written

  CrossfadeRamp ramp;
  ASSERT_TRUE(ramp.start(0.2f));
  ASSERT_TRUE(ramp.advance(0.1f));
  EXPECT_FALSE(ramp.start(nan));
  EXPECT_FALSE(ramp.start(-1.0f));
  EXPECT_FALSE(ramp.advance(nan));
  EXPECT_FALSE(ramp.advance(-0.1f));
  EXPECT_EQ(ramp.duration, 0.2f);
  EXPECT_EQ(ramp.elapsed, 0.1f);

  const Pose a = identity_pose(5), b = identity_pose(5), small = identity_pose(3);
  Pose out(2);
  out[0].tx[0] = 42.0f;
  EXPECT_FALSE(crossfade(a, b, nan, 5, out));
  EXPECT_FALSE(crossfade(a, b, 1.5f, 5, out));
  EXPECT_FALSE(crossfade(a, b, -0.1f, 5, out));
  EXPECT_FALSE(crossfade(a, small, 0.5f, 5, out));
  EXPECT_FALSE(crossfade(a, b, 0.5f, 9, out));
  EXPECT_FALSE(crossfade(a, b, 0.5f, -1, out));
  EXPECT_EQ(out[0].tx[0], 42.0f);

  EXPECT_THROW(InertializationCurve::make(1.0, 0.0, nan), Error);
  EXPECT_THROW(InertializationCurve::make(1.0, 0.0, -0.3), Error);
  EXPECT_THROW(InertializationCurve::make(nan, 0.0, 0.3), Error);
  EXPECT_THROW(InertializationCurve::make(1.0, INFINITY, 0.3), Error);
  EXPECT_THROW(inertialize_offset(1.0, 0.0, 0.3, std::nan("")), Error);
  try {
    InertializationCurve::make(1.0, 0.0, -0.3);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.reason()).find("blend time"), std::string::npos) << e.what();
  }

  Inertializer in(5);
  Pose moved = identity_pose(5);
  moved[0].tx[1] = 1.0f;
  // A good transition first, so "changing nothing" is visible.
  ASSERT_TRUE(in.transition(moved, moved, a, a, 0.01f, 0.3f));
  ASSERT_TRUE(in.advance(0.05f));
  const float elapsed = in.elapsed();
  const InertializationCurve before = in.curve(1, 1);
  EXPECT_FALSE(in.transition(a, a, b, b, nan, 0.3f));
  EXPECT_FALSE(in.transition(a, a, b, b, 0.0f, 0.3f));
  EXPECT_FALSE(in.transition(a, a, b, b, -0.01f, 0.3f));
  EXPECT_FALSE(in.transition(a, a, b, b, 0.01f, nan));
  EXPECT_FALSE(in.transition(a, a, b, b, 0.01f, -0.3f));
  EXPECT_FALSE(in.transition(a, a, b, b, 0.01f, INFINITY));
  EXPECT_FALSE(in.transition(a, small, b, b, 0.01f, 0.3f));
  Pose bad = identity_pose(5);
  bad[1].qw[2] = nan;
  EXPECT_FALSE(in.transition(a, a, bad, b, 0.01f, 0.3f));
  EXPECT_FALSE(in.advance(nan));
  EXPECT_FALSE(in.advance(-0.01f));
  EXPECT_EQ(in.elapsed(), elapsed);
  EXPECT_EQ(in.curve(1, 1).x0, before.x0);
  EXPECT_TRUE(in.active());
  Pose wrong(1);
  wrong[0].tx[0] = 42.0f;
  EXPECT_FALSE(in.apply(a, wrong));
  EXPECT_FALSE(in.apply(small, out));
  EXPECT_EQ(wrong[0].tx[0], 42.0f);
  EXPECT_EQ(out[0].tx[0], 42.0f);

  // Blend time 0 is a hard cut: the output is the new pose at once.
  ASSERT_TRUE(in.transition(moved, moved, a, a, 0.01f, 0.0f));
  EXPECT_FALSE(in.active());
  Pose cut = identity_pose(5);
  ASSERT_TRUE(in.apply(a, cut));
  EXPECT_EQ(cut[0].tx[1], 0.0f);
}

}  // namespace
}  // namespace kinema
