// The scenes of bench/rigid_bench.h built as kinema RigidWorlds: shared by kinema_rigid_bench
// and the stability tests (tests/physics/rigid_stability_test.cpp), so that the figures in
// BENCHMARKS.md and what the tests hold come from the same worlds.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <vector>

#include "kinema/physics/rigid_world.h"
#include "rigid_bench.h"

namespace kinema::rigid_bench {

inline RigidShape shape_of(const BodySpec& b) {
  switch (b.kind) {
    case Kind::Box:
      return box_shape({b.hx, b.hy, b.hz});
    case Kind::Sphere:
      return sphere_shape(b.radius);
    case Kind::Capsule:
      return capsule_shape(b.radius, b.half_height);
  }
  return sphere_shape(b.radius);
}

/// Body b's shape origin and orientation (its frame in the scene description).
inline Vec3 shape_origin_of(const RigidBody& b) {
  return b.position - rotate(b.orientation, b.centre_of_mass_in_shape);
}

/// The rotation that carries x onto the unit twist axis and y onto the plane axis (made ⟂ twist):
/// a cone–twist joint's frame in its body.
inline Quat joint_frame(const std::array<double, 3>& twist, const std::array<double, 3>& plane) {
  const Vec3 t = normalize(Vec3{twist[0], twist[1], twist[2]});
  const Quat to_twist = from_to(Vec3{1, 0, 0}, t);
  const Vec3 y = rotate(to_twist, Vec3{0, 1, 0});
  Vec3 p{plane[0], plane[1], plane[2]};
  p = normalize(p - t * dot(p, t));
  return Quat::from_axis_angle(t, std::atan2(dot(cross(y, p), t), dot(y, p))) * to_twist;
}

/// The scene as a RigidWorld with `substeps` substeps a step and `settings` otherwise (the
/// iterations split across the substeps, gravity, materials and damping as for every engine).
inline RigidWorld build_kinema_world(const Scene& scene, int substeps,
                                     RigidWorldSettings settings = {}) {
  settings.gravity = {0, -kGravity, 0};
  // The same solver passes a step as the other engines, split across the substeps.
  settings.substeps = substeps;
  settings.velocity_iterations = std::max(1, scene.velocity_iterations / substeps);
  if (scene.position_iterations > 0) settings.position_iterations = scene.position_iterations;
  settings.sleeping = scene.sleeping;
  RigidWorld world(settings);
  for (const BodySpec& b : scene.bodies) {
    const RigidShape shape = shape_of(b);
    // Capsules along x: kinema's capsules run along y, so turn them a quarter about z.
    const Quat q =
        normalize(Quat{b.qx, b.qy, b.qz, b.qw}) *
        (b.along_x ? Quat::from_axis_angle({0, 0, 1}, std::numbers::pi / 2) : Quat::identity());
    const Vec3 at{b.x, b.y, b.z};
    MassProperties mass;
    if (b.explicit_inertia) {
      mass.mass = b.mass;
      mass.centre_of_mass = {b.cx, b.cy, b.cz};
      const auto& i = b.inertia;  // xx, yy, zz, xy, xz, yz
      mass.inertia.m[0][0] = i[0];
      mass.inertia.m[1][1] = i[1];
      mass.inertia.m[2][2] = i[2];
      mass.inertia.m[0][1] = mass.inertia.m[1][0] = i[3];
      mass.inertia.m[0][2] = mass.inertia.m[2][0] = i[4];
      mass.inertia.m[1][2] = mass.inertia.m[2][1] = i[5];
    } else if (b.mass > 0) {
      mass = scaled_to_mass(mass_properties(shape, 1), b.mass);
    }
    RigidBody body = b.mass > 0 ? make_dynamic_body(mass, at, q) : make_static_body(at, q);
    body.linear_velocity = {b.vx, b.vy, b.vz};
    body.linear_damping = b.linear_damping;
    body.angular_damping = b.angular_damping;
    world.add_body(body, shape, {b.friction, b.restitution});
  }
  for (const BallSpec& j : scene.joints) {
    JointDesc d;
    d.a = BodyId(j.a);
    d.b = BodyId(j.b);
    d.anchor = {j.x, j.y, j.z};
    world.add_joint(d);
  }
  for (const ConeTwistSpec& j : scene.cone_twists) {
    // kinema measures a joint's limits from the pose the bodies are in when it is added: put b
    // for a moment where its joint frame meets a's (the joint's rest), add it, put b back.
    RigidBody& a = world.body(BodyId(j.a));
    RigidBody& b = world.body(BodyId(j.b));
    const RigidBody start = b;
    const Vec3 anchor = shape_origin_of(a) +
                        rotate(a.orientation, Vec3{j.anchor_a[0], j.anchor_a[1], j.anchor_a[2]});
    const Quat frame = a.orientation * joint_frame(j.twist_a, j.plane_a);
    b.orientation = normalize(frame * conjugate(joint_frame(j.twist_b, j.plane_b)));
    b.position = anchor - rotate(b.orientation, Vec3{j.anchor_b[0], j.anchor_b[1], j.anchor_b[2]}) +
                 rotate(b.orientation, b.centre_of_mass_in_shape);
    JointDesc d;
    d.kind = JointKind::ConeTwist;
    d.a = BodyId(j.a);
    d.b = BodyId(j.b);
    d.anchor = anchor;
    d.axis = rotate(frame, Vec3{1, 0, 0});
    // kinema's cone is round: the wider of Jolt's two half-angles, so that every pose Jolt allows
    // is allowed (the start poses of the ragdoll pile swing past the narrower one).
    d.swing_limit = std::max(j.normal_half_cone, j.plane_half_cone);
    d.twist_lower = j.twist_min;
    d.twist_upper = j.twist_max;
    world.add_joint(d);
    world.body(BodyId(j.b)) = start;
  }
  for (const auto& [a, b] : scene.no_collision) world.disable_collision(BodyId(a), BodyId(b));
  return world;
}

/// The cone–twist joints' motors, holding the pose the bodies start in as kinema's powered ragdoll
/// holds an animation (kinema/physics/ragdoll.h, Ragdoll::drive): PD torques on each pair,
/// τ = I·(ω_n²·θ − 2ω_n·Δω) with I the pair's reduced inertia in world axes and θ the rotation
/// from the current relative rotation to the start's, critically damped at kinema's default
/// ω_n = 25 rad/s (RagdollOptions::natural_frequency) — explicit torques are stable up to
/// ω_n·h ≈ 0.5, so not Jolt's 20 Hz (126 rad/s), which only an implicit (soft-constraint) motor
/// can hold — and within the joint's motor_torque.
class KinemaMotors {
 public:
  static constexpr double kNaturalFrequency = 25;  ///< rad/s

  KinemaMotors(const Scene& scene, const RigidWorld& world) {
    for (const ConeTwistSpec& j : scene.cone_twists) {
      if (!j.motor) continue;
      const Quat qa = world.body(BodyId(j.a)).orientation;
      const Quat qb = world.body(BodyId(j.b)).orientation;
      motors_.push_back({BodyId(j.a), BodyId(j.b), conjugate(qa) * qb, j.motor_torque});
    }
  }

  /// Adds the torques for the next step.
  void drive(RigidWorld& world) const {
    const double wn = kNaturalFrequency;
    for (const Motor& m : motors_) {
      RigidBody& parent = world.body(m.a);
      RigidBody& child = world.body(m.b);
      if (!parent.awake && !child.awake) continue;  // asleep: holding already
      const Quat relative = conjugate(parent.orientation) * child.orientation;
      const Vec3 error =
          rotate(parent.orientation, to_rotation_vector(m.target * conjugate(relative)));
      const Mat3 reduced = inverse(world_inverse_inertia(child) + world_inverse_inertia(parent));
      Vec3 torque = reduced * (error * (wn * wn) -
                               (child.angular_velocity - parent.angular_velocity) * (2 * wn));
      const double size = length(torque);
      if (size > m.max_torque) torque = torque * (m.max_torque / size);
      child.torque += torque;
      parent.torque -= torque;
    }
  }

 private:
  struct Motor {
    BodyId a, b;
    Quat target;  // b's rotation relative to a's to hold
    double max_torque;
  };
  std::vector<Motor> motors_;
};

inline double max_joint_error(const RigidWorld& world) {
  double worst = 0;
  for (JointId j = 0; j < world.joint_count(); ++j) worst = std::max(worst, world.joint_error(j));
  return worst;
}

}  // namespace kinema::rigid_bench
