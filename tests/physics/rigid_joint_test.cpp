// Joints: the textbook's PD elbow, the 50-link chain released horizontally, pendulums, hinge
// motors and limits, cone–twist limits, ropes, welds and breaking; and errors.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "kinema/core/error.h"
#include "kinema/physics/rigid_joint.h"
#include "kinema/physics/rigid_world.h"

namespace kinema {
namespace {

constexpr double pi = std::numbers::pi;

BodyId add_static_point(RigidWorld& world, const Vec3& at) {
  return world.add_body(make_static_body(at, Quat::identity()), sphere_shape(0.01), {}, "pin");
}

BodyId add_dynamic(RigidWorld& world, const RigidShape& shape, const Vec3& at,
                   const Quat& q = Quat::identity(), double density = 1000) {
  return world.add_body(make_dynamic_body(mass_properties(shape, density), at, q), shape);
}

double max_joint_error(const RigidWorld& world) {
  double worst = 0;
  for (JointId j = 0; j < world.joint_count(); ++j) worst = std::max(worst, world.joint_error(j));
  return worst;
}

TEST(RigidJointWorked, PdElbowGivesFortyNewtonMetresAndEightyRadiansPerSecondSquared) {
  // I = 0.5 kg·m², kp = 200 N·m/rad, kd = 20 N·m·s/rad, 0.3 rad behind, turning at 1 rad/s.
  const double tau = pd_torque(200, 20, 0.3, 0.0, 1.0);
  EXPECT_DOUBLE_EQ(tau, 40);
  EXPECT_DOUBLE_EQ(tau / 0.5, 80);
  EXPECT_DOUBLE_EQ(critical_damping_gain(200, 0.5), 20);  // 2·√(200·0.5) = 2·10
}

TEST(RigidJointWorked, CriticallyDampedPdMotorReachesItsTargetWithoutOvershoot) {
  // The elbow of the example on a hinge, driven by the PD torque from 0.3 rad behind.
  const double inertia = 0.5, kp = 200, kd = critical_damping_gain(kp, inertia);
  double angle = 0, speed = 0;
  const double target = 0.3, h = 1e-3;
  double highest = 0;
  for (int i = 0; i < 3000; ++i) {
    speed += h * pd_torque(kp, kd, target, angle, speed) / inertia;
    angle += h * speed;
    highest = std::max(highest, angle);
  }
  EXPECT_NEAR(angle, target, 1e-6);
  EXPECT_LE(highest, target * (1 + 1e-3));
}

// 50 capsules 0.1 m long joined end to end by ball joints, pinned at the first one's end, 10 m up
// and horizontal; returns the free end's link.
BodyId build_horizontal_chain(RigidWorld& world) {
  const BodyId pin = add_static_point(world, {0, 10, 0});
  const double link = 0.1;
  const RigidShape capsule = capsule_shape(0.025, link / 2 - 0.025);
  const Quat along_x = Quat::from_axis_angle({0, 0, 1}, pi / 2);
  BodyId previous = pin;
  for (int i = 0; i < 50; ++i) {
    const BodyId id = add_dynamic(world, capsule, {link * i + link / 2, 10, 0}, along_x);
    JointDesc j;
    j.kind = JointKind::Ball;
    j.a = previous;
    j.b = id;
    j.anchor = {link * i, 10, 0};
    world.add_joint(j);
    previous = id;
  }
  return previous;
}

// Kinetic plus gravitational energy of the dynamic bodies (J), gravity −9.81 along y.
double total_energy(const RigidWorld& world) {
  double energy = world.kinetic_energy();
  for (BodyId id = 0; id < world.body_count(); ++id) {
    const RigidBody& b = world.body(id);
    if (b.inverse_mass > 0) energy += 9.81 * b.position.y / b.inverse_mass;
  }
  return energy;
}

TEST(RigidJoint, FiftyLinkChainReleasedHorizontallyKeepsItsJointsWithinTenMicrometres) {
  RigidWorldSettings settings;  // the defaults: substeps only while the chain whips
  settings.sleeping = false;
  RigidWorld world(settings);
  const BodyId previous = build_horizontal_chain(world);
  double worst = 0;
  int most_substeps = 0, total_substeps = 0;
  for (int i = 0; i < 300; ++i) {
    world.step(1.0 / 60);
    worst = std::max(worst, max_joint_error(world));
    most_substeps = std::max(most_substeps, world.last_substeps());
    total_substeps += world.last_substeps();
  }
  EXPECT_LT(worst, 1e-5);              // 1.3 µm: the stabilization runs to 1 µm each substep
  EXPECT_GT(most_substeps, 1);         // it did need small steps while whipping
  EXPECT_LT(total_substeps, 300 * 2);  // but not all the time (1.04 a step on average)
  // It swung down: the free end is below the pin by most of the chain's 5 m.
  EXPECT_LT(world.body(previous).position.y, 10 - 2.0);
}

// The stabilization's metric only chooses which closed pose its passes head for: a heavier one
// (bodies turned less, moved more) converges in fewer passes, holds the joints as tightly and,
// like the true one, adds no energy to the whipping chain.
TEST(RigidJoint, HeavierStabilizationMetricTakesFewerPassesAndAddsNoEnergyToTheWhippingChain) {
  int passes[2] = {0, 0};
  for (const int scaled : {0, 1}) {
    RigidWorldSettings settings;
    settings.sleeping = false;
    settings.joint_stabilization_inertia_scale = scaled ? 4 : 1;
    RigidWorld world(settings);
    build_horizontal_chain(world);
    const double start = total_energy(world);
    double worst = 0, highest = -1e9;
    for (int i = 0; i < 300; ++i) {
      world.step(1.0 / 60);
      worst = std::max(worst, max_joint_error(world));
      highest = std::max(highest, total_energy(world) - start);
      passes[scaled] += world.last_stabilization_passes();
    }
    EXPECT_LT(worst, 1e-5) << "scale " << settings.joint_stabilization_inertia_scale;
    EXPECT_LT(highest, 1e-3) << "scale " << settings.joint_stabilization_inertia_scale;
  }
  EXPECT_GT(passes[0], 300 * 3);            // 4.1 a step with the bodies' own inertias
  EXPECT_LT(passes[1], passes[0] * 3 / 4);  // 2.4 at four times
}

TEST(RigidJoint, BallJointPendulumSwingsWithThePhysicalPendulumsPeriod) {
  RigidWorldSettings settings;
  settings.sleeping = false;
  RigidWorld world(settings);
  const BodyId pin = add_static_point(world, {0, 2, 0});
  const double length = 1.0, r = 0.05, angle = 0.05;
  const RigidShape ball = sphere_shape(r);
  const BodyId bob =
      add_dynamic(world, ball, {length * std::sin(angle), 2 - length * std::cos(angle), 0});
  JointDesc j;
  j.a = pin;
  j.b = bob;
  j.anchor = {0, 2, 0};
  world.add_joint(j);
  // A sphere on a massless rod: T = 2π·√((L + (2/5)r²/L)/g).
  const double g = 9.81;
  const double period = 2 * pi * std::sqrt((length + 0.4 * r * r / length) / g);
  const double h = 1.0 / 600;
  double previous_x = world.body(bob).position.x, first_crossing = -1, third_crossing = -1;
  int crossings = 0;
  for (int i = 1; i < 4000 && crossings < 3; ++i) {
    world.step(h);
    const double x = world.body(bob).position.x;
    if ((previous_x > 0) != (x > 0)) {
      const double t = (i - 1 + previous_x / (previous_x - x)) * h;
      if (++crossings == 1) first_crossing = t;
      if (crossings == 3) third_crossing = t;
    }
    previous_x = x;
  }
  ASSERT_EQ(crossings, 3);
  EXPECT_NEAR(third_crossing - first_crossing, period, 2e-3 * period);
  EXPECT_LT(world.joint_error(0), 1e-6);
}

TEST(RigidJoint, HingeMotorSpinsAWheelUpAtItsTorqueAndHoldsItsSpeed) {
  RigidWorldSettings settings;
  settings.gravity = {0, 0, 0};
  settings.sleeping = false;
  RigidWorld world(settings);
  const BodyId pin = add_static_point(world, {0, 0, 0});
  const RigidShape disc = cylinder_shape(0.3, 0.05);
  const BodyId wheel = add_dynamic(world, disc, {0, 0, 0});
  const double inertia = world.body(wheel).inertia_body.m[1][1];
  JointDesc j;
  j.kind = JointKind::Hinge;
  j.a = pin;
  j.b = wheel;
  j.anchor = {0, 0, 0};
  j.axis = {0, 1, 0};
  j.motor = true;
  j.motor_speed = 5;
  j.max_motor_torque = 2;
  world.add_joint(j);
  world.step(0.1);
  EXPECT_NEAR(world.body(wheel).angular_velocity.y, 2 * 0.1 / inertia, 1e-9);  // α = τ/I
  for (int i = 0; i < 600; ++i) world.step(1.0 / 60);
  EXPECT_NEAR(world.body(wheel).angular_velocity.y, 5, 1e-9);
  EXPECT_NEAR(
      std::hypot(world.body(wheel).angular_velocity.x, world.body(wheel).angular_velocity.z), 0,
      1e-9);
}

TEST(RigidJoint, HingeLimitStopsADoorSwingingUnderGravity) {
  RigidWorldSettings settings;
  settings.sleeping = false;
  RigidWorld world(settings);
  const BodyId pin = add_static_point(world, {0, 1, 0});
  const RigidShape plank = box_shape({0.5, 0.05, 0.05});
  const BodyId door = add_dynamic(world, plank, {0.5, 1, 0});  // horizontal, hinged at its end
  JointDesc j;
  j.kind = JointKind::Hinge;
  j.a = pin;
  j.b = door;
  j.anchor = {0, 1, 0};
  j.axis = {0, 0, 1};
  j.limit = true;
  j.lower = -0.5;  // it may fall 0.5 rad (clockwise about +z)
  j.upper = 0.5;
  world.add_joint(j);
  double lowest = 0;
  for (int i = 0; i < 300; ++i) {
    world.step(1.0 / 60);
    const Vec3 x = rotate(world.body(door).orientation, Vec3{1, 0, 0});
    lowest = std::min(lowest, std::atan2(x.y, x.x));
  }
  EXPECT_GT(lowest, -0.5 - 0.01);
  EXPECT_LT(lowest, -0.45);  // it did swing onto the stop
  EXPECT_LT(world.joint_error(0), 1e-6);
}

TEST(RigidJoint, ConeTwistKeepsTheSwingInsideItsCone) {
  RigidWorldSettings settings;
  settings.sleeping = false;
  RigidWorld world(settings);
  const BodyId pin = add_static_point(world, {0, 2, 0});
  const RigidShape rod = capsule_shape(0.05, 0.4);
  // Hanging along −y from the pin; the twist axis is −y; the cone is 30°.
  const BodyId limb = add_dynamic(world, rod, {0, 2 - 0.45, 0});
  world.body(limb).linear_velocity = {4, 0, 1};  // flung sideways
  JointDesc j;
  j.kind = JointKind::ConeTwist;
  j.a = pin;
  j.b = limb;
  j.anchor = {0, 2, 0};
  j.axis = {0, -1, 0};
  j.swing_limit = pi / 6;
  world.add_joint(j);
  double widest = 0;
  for (int i = 0; i < 240; ++i) {
    world.step(1.0 / 60);
    const Vec3 down = rotate(world.body(limb).orientation, Vec3{0, -1, 0});
    widest = std::max(widest, std::acos(std::clamp(-down.y, -1.0, 1.0)));
  }
  EXPECT_LT(widest, pi / 6 + 0.02);
  EXPECT_GT(widest, pi / 6 - 0.05);  // it reached the cone's wall
}

TEST(RigidJoint, RopeHoldsABallAtItsLengthAndLetsItComeCloser) {
  RigidWorldSettings settings;
  settings.sleeping = false;
  RigidWorld world(settings);
  const BodyId pin = add_static_point(world, {0, 5, 0});
  const BodyId ball = add_dynamic(world, sphere_shape(0.1), {0, 5, 0.3});
  JointDesc j;
  j.kind = JointKind::Distance;
  j.a = pin;
  j.b = ball;
  j.anchor = {0, 5, 0};
  j.anchor_b = {0, 5, 0.3};
  j.min_distance = 0;
  j.max_distance = 1;
  world.add_joint(j);
  double farthest = 0;
  for (int i = 0; i < 300; ++i) {
    world.step(1.0 / 60);
    farthest = std::max(farthest, distance(world.body(ball).position, Vec3{0, 5, 0}));
  }
  EXPECT_LT(farthest, 1 + 1e-3);
  EXPECT_GT(farthest, 1 - 1e-3);
}

TEST(RigidJoint, WeldedBoxesFallAndLandAsOne) {
  RigidWorldSettings settings;
  settings.sleeping = false;
  RigidWorld world(settings);
  world.add_body(make_static_body({0, -0.5, 0}, Quat::identity()), box_shape({10, 0.5, 10}));
  const RigidShape cube = box_shape({0.2, 0.2, 0.2});
  const Quat tilt = Quat::from_axis_angle({1, 0, 1}, 0.3);
  const BodyId a = add_dynamic(world, cube, {0, 2, 0}, tilt);
  const BodyId b = add_dynamic(world, cube, Vec3{0, 2, 0} + rotate(tilt, Vec3{0.4, 0, 0}), tilt);
  JointDesc j;
  j.kind = JointKind::Fixed;
  j.a = a;
  j.b = b;
  j.anchor = Vec3{0, 2, 0} + rotate(tilt, Vec3{0.2, 0, 0});
  world.add_joint(j);
  for (int i = 0; i < 240; ++i) world.step(1.0 / 60);
  const Quat relative = conjugate(world.body(a).orientation) * world.body(b).orientation;
  EXPECT_NEAR(std::abs(relative.w), 1, 1e-6);
  EXPECT_NEAR(distance(world.body(a).position, world.body(b).position), 0.4, 1e-3);
  EXPECT_LT(world.body(a).position.y, 0.6);  // it landed
}

TEST(RigidJoint, JointBreaksWhenItsLoadExceedsTheThreshold) {
  for (const double threshold : {0.05, 5.0}) {
    RigidWorldSettings settings;
    settings.sleeping = false;
    RigidWorld world(settings);
    const BodyId pin = add_static_point(world, {0, 3, 0});
    // 8 kg hanging: its weight needs 8·9.81/60 ≈ 1.3 N·s a step.
    const BodyId crate = world.add_body(
        make_dynamic_body(scaled_to_mass(mass_properties(box_shape({0.2, 0.2, 0.2}), 1), 8),
                          {0, 2.8, 0}, Quat::identity()),
        box_shape({0.2, 0.2, 0.2}));
    JointDesc j;
    j.kind = JointKind::Fixed;
    j.a = pin;
    j.b = crate;
    j.anchor = {0, 3, 0};
    j.break_impulse = threshold;
    world.add_joint(j);
    for (int i = 0; i < 60; ++i) world.step(1.0 / 60);
    if (threshold < 1) {
      EXPECT_TRUE(world.joint_broken(0));
      EXPECT_LT(world.body(crate).position.y, 2.0);  // it fell
    } else {
      EXPECT_FALSE(world.joint_broken(0));
      EXPECT_NEAR(world.joint_impulse(0), 8 * 9.81 / 60, 0.02);
      EXPECT_NEAR(world.body(crate).position.y, 2.8, 1e-3);
    }
  }
}

TEST(RigidJoint, BadJointsAreRefusedNamingThem) {
  RigidWorld world;
  const BodyId pin = add_static_point(world, {0, 0, 0});
  const BodyId other = add_static_point(world, {1, 0, 0});
  const BodyId box = add_dynamic(world, box_shape({0.1, 0.1, 0.1}), {0, 1, 0});
  JointDesc j;
  j.a = pin;
  j.b = other;
  EXPECT_THROW(world.add_joint(j), Error);  // two static bodies
  j.b = 7;
  EXPECT_THROW(world.add_joint(j), Error);  // no such body
  j.b = box;
  j.kind = JointKind::Hinge;
  j.axis = {0, 0, 0};
  EXPECT_THROW(world.add_joint(j), Error);
  j.axis = {0, 1, 0};
  j.limit = true;
  j.lower = 0.5;
  j.upper = -0.5;
  try {
    world.add_joint(j);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.place(), "joint 0");
  }
  EXPECT_EQ(world.joint_count(), 0u);
}

}  // namespace
}  // namespace kinema
