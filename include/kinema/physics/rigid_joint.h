// kinema/physics/rigid_joint.h — joints that hold two rigid bodies together in a RigidWorld
// (kinema/physics/rigid_world.h).
//
// A joint is described in the world at the moment it is added (the bodies' poses then are its
// rest pose): an anchor point where the bodies join and, for hinges and cone–twists, an axis.
// kinema stores both in each body's frame, so the joint follows the bodies from then on.
//
//   Ball       the two anchors stay together; any rotation.
//   Hinge      a ball joint that turns only about `axis`; optional angle limits about it (measured
//              from the rest pose, right-hand rule, radians) and a motor that drives b's angular
//              speed relative to a toward `motor_speed` with at most `max_motor_torque`.
//   ConeTwist  a ball joint whose twist axis on b may leave a's by at most `swing_limit` (a cone)
//              and twist about it within [twist_lower, twist_upper] — a shoulder or hip.
//   Distance   the anchor `anchor` on a and `anchor_b` on b stay between min_distance and
//              max_distance apart (both 0: the distance they start at, a rigid rod).
//   Fixed      the bodies keep the relative pose they start in (glue).
//
// Any joint breaks when the impulse it needs within one step exceeds `break_impulse` (N·s): it is
// then gone for good (fracture pieces, a door off its hinges). Joints are solved with the contacts
// by sequential impulses, warm-started from the previous step, and their drift is removed on the
// positions after the step, like the contacts' overlap.
#pragma once

#include <cstdint>
#include <limits>

#include "kinema/math/vec3.h"

namespace kinema {

enum class JointKind { Ball, Hinge, ConeTwist, Distance, Fixed };

/// "ball", "hinge", "cone_twist", "distance", "fixed".
const char* joint_kind_name(JointKind kind);

using JointId = std::uint32_t;

struct JointDesc {
  JointKind kind = JointKind::Ball;
  std::uint32_t a = 0, b = 0;   ///< the two bodies (BodyId); a may be static
  Vec3 anchor{0, 0, 0};         ///< where they join, world, at creation (m); a's end for Distance
  Vec3 anchor_b{0, 0, 0};       ///< Distance only: b's end, world, at creation (m)
  Vec3 axis{0, 1, 0};           ///< Hinge axis / ConeTwist twist axis, world, at creation (≠ 0)
  bool limit = false;           ///< Hinge: keep the angle within [lower, upper]
  double lower = 0, upper = 0;  ///< Hinge limits (rad, −π < lower ≤ 0 ≤ upper < π)
  bool motor = false;           ///< Hinge: drive the relative angular speed
  double motor_speed = 0;       ///< rad/s, b relative to a, about the axis
  double max_motor_torque = 0;  ///< N·m
  double swing_limit = 0.785398163397448;   ///< ConeTwist: cone half-angle (rad, in (0, π))
  double twist_lower = -0.785398163397448;  ///< ConeTwist twist range (rad)
  double twist_upper = 0.785398163397448;
  double min_distance = 0, max_distance = 0;  ///< Distance (m); both 0 for a rigid rod
  double break_impulse = std::numeric_limits<double>::infinity();  ///< N·s in one step
  /// Whether the two bodies still collide with each other (off by default: links of a chain or
  /// bones of a ragdoll overlap at their joints).
  bool collide_connected = false;
};

/// The torque of a PD (proportional–derivative) motor driving a joint toward a target angle, the
/// muscle of a powered ragdoll: τ = kp·(θ_target − θ) − kd·ω (N·m), with kp in N·m/rad, kd in
/// N·m·s/rad, angles in rad and ω the joint's angular speed (rad/s) toward increasing θ.
constexpr double pd_torque(double kp, double kd, double target, double angle, double speed) {
  return kp * (target - angle) - kd * speed;
}

/// The derivative gain that damps a PD motor critically on inertia `inertia` (kg·m²): it reaches
/// its target as fast as it can without overshooting, kd = 2·√(kp·I) — the joint's version of a
/// spring's c = 2·√(k·m).
double critical_damping_gain(double kp, double inertia);

}  // namespace kinema
