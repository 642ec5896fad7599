// kinema/physics/rigid_body.h — one rigid body's state and its integration.
//
// A body's frame has its origin at the centre of mass and the axes of the shape it was made
// from; `position` is that centre in the world (m) and `orientation` turns body axes into world
// axes. Velocities are in the world: linear (m/s) at the centre of mass, angular (rad/s) as an
// axis times a speed (right-hand rule). A static body has zero inverse mass and inertia, so no
// force or impulse moves it.
//
// A step is semi-implicit, velocities first: v += h·(F/m + g), ω += h·I⁻¹·τ with the gyroscopic
// term −ω × Iω solved implicitly (one Newton step in the body frame, Catto 2015 "Numerical
// Methods", GDC), which keeps a spinning body's energy from growing where the explicit term makes
// it blow up; then x += h·v and q ← normalize(q + (h/2)·(0, ω)·q).
#pragma once

#include "kinema/math/mat3.h"
#include "kinema/math/quat.h"
#include "kinema/physics/mass_properties.h"

namespace kinema {

struct RigidBody {
  Vec3 position{0, 0, 0};                    ///< centre of mass, world (m)
  Quat orientation{0, 0, 0, 1};              ///< body → world
  Vec3 linear_velocity{0, 0, 0};             ///< m/s
  Vec3 angular_velocity{0, 0, 0};            ///< rad/s, world axes
  double inverse_mass = 0;                   ///< 1/kg; 0 for a static body
  Mat3 inertia_body = Mat3::zero();          ///< about the centre of mass, body axes (kg·m²)
  Mat3 inverse_inertia_body = Mat3::zero();  ///< its inverse; zero for a static body
  Vec3 centre_of_mass_in_shape{0, 0, 0};     ///< where the body's origin sits in its shape (m)
  Vec3 force{0, 0, 0};         ///< accumulated this step (N), cleared by integrate_velocity
  Vec3 torque{0, 0, 0};        ///< accumulated this step about the centre of mass (N·m)
  double linear_damping = 0;   ///< fraction of velocity lost per second (1/s)
  double angular_damping = 0;  ///< fraction of angular velocity lost per second (1/s)
  bool awake = true;
  double still_time = 0;  ///< seconds spent below the sleep thresholds
};

/// A dynamic body from `properties` (mass > 0, inertia invertible), its shape's origin placed at
/// `shape_origin` and turned by `orientation`. Throws kinema::Error naming `place` for zero,
/// negative or non-finite mass, or an inertia tensor that cannot be inverted.
RigidBody make_dynamic_body(const MassProperties& properties, const Vec3& shape_origin,
                            const Quat& orientation, const std::string& place = "body");

/// A static body (infinite mass) whose shape's origin is at `shape_origin`, turned by
/// `orientation`.
RigidBody make_static_body(const Vec3& shape_origin, const Quat& orientation);

inline bool is_static(const RigidBody& b) { return b.inverse_mass == 0; }

/// Where the body's shape origin is in the world (the pose its collision shape is tested at).
Vec3 shape_origin(const RigidBody& b);

/// The body's inverse inertia in world axes, R·I⁻¹·Rᵀ (1/(kg·m²)).
Mat3 world_inverse_inertia(const RigidBody& b);

/// The velocity of the body's material point at world position `point` (m/s): v + ω × r.
Vec3 velocity_at_point(const RigidBody& b, const Vec3& point);

/// Adds force `f` (N) acting at world point `point`: it accelerates the centre of mass as if it
/// acted there and adds the torque r × f about it (r = point − position).
void apply_force_at_point(RigidBody& b, const Vec3& f, const Vec3& point);

/// Applies impulse `j` (N·s) at world point `point` at once: v += j/m, ω += I⁻¹(r × j). Wakes the
/// body. A static body is unchanged.
void apply_impulse_at_point(RigidBody& b, const Vec3& j, const Vec3& point);

/// How easily an impulse along unit `direction` at arm `r` (world, from the centre of mass) moves
/// that point along it: 1/m + d·((I⁻¹(r × d)) × r), with `inverse_inertia` the body's world
/// inverse inertia (1/kg); 0 for a static body. Two bodies' values add up to the inverse of the
/// effective mass a contact or joint row sees.
double inverse_mass_along(const RigidBody& b, const Mat3& inverse_inertia, const Vec3& r,
                          const Vec3& direction);

/// Orientation q turned by the small world rotation vector `theta` (rad): normalize(q + ½(0, θ)q),
/// first-order in |θ| (the attitude update of integrate_position, and of position corrections).
Quat turned_by(const Quat& q, const Vec3& theta);

/// Moves two bodies apart on their positions (not their velocities) as an impulse `impulse` would
/// move their velocities in one second: b by +impulse at arm rb, a by −impulse at arm ra, each
/// through its inverse mass and world inverse inertia (ia, ib). Static bodies stay. The tool of
/// position-level corrections (penetration recovery, joint drift), which add no kinetic energy.
void apply_position_impulse(RigidBody& a, RigidBody& b, const Mat3& ia, const Mat3& ib,
                            const Vec3& ra, const Vec3& rb, const Vec3& impulse);

/// Velocities over `h` seconds from the accumulated force and torque, gravity `gravity` (m/s²)
/// and the gyroscopic term, then damping; clears the accumulators. Sleeping and static bodies
/// are left alone (their accumulators are cleared too).
void integrate_velocity(RigidBody& b, const Vec3& gravity, double h);

/// Positions over `h` seconds from the velocities: x += h·v, q ← normalize(q + (h/2)(0, ω)q).
void integrate_position(RigidBody& b, double h);

/// Kinetic energy ½mv² + ½ωᵀIω (J); zero for a static body.
double kinetic_energy(const RigidBody& b);

/// Angular momentum about the centre of mass, I_world·ω (kg·m²/s).
Vec3 angular_momentum(const RigidBody& b);

/// When a body counts as at rest: both speeds under their thresholds for `time_to_sleep` seconds.
struct SleepSettings {
  double linear_speed = 0.05;   ///< m/s
  double angular_speed = 0.05;  ///< rad/s
  double time_to_sleep = 0.5;   ///< s
};

/// Advances the body's rest timer by `h` and reports whether it has been still long enough to
/// sleep. It does not put the body to sleep: a world sleeps whole islands at once.
bool ready_to_sleep(RigidBody& b, double h, const SleepSettings& settings);

/// Puts a body to sleep (velocities zeroed, it stops integrating) or wakes it (timer reset).
void set_awake(RigidBody& b, bool awake);

/// The impulse and the new velocities when two bodies collide head-on along a line (1-D):
/// j = −(1 + e)·v_rel / (1/m1 + 1/m2), v1′ = v1 + j/m1, v2′ = v2 − j/m2, with v_rel = v1 − v2 and
/// restitution e in [0, 1] (1 elastic, 0 they stick). Momentum is kept; v_rel′ = −e·v_rel.
/// Use an infinite mass (inverse 0) for the ground.
struct Impulse1D {
  double impulse = 0;     ///< j (N·s), as applied to body 1
  double v1 = 0, v2 = 0;  ///< velocities after (m/s)
};
Impulse1D collision_impulse_1d(double inverse_mass1, double v1, double inverse_mass2, double v2,
                               double restitution);

/// The normal impulse that makes two bodies touching at world point `point` (unit `normal` from
/// a to b) separate at e times the speed they approach with, rotation included. With
/// u = (v_b − v_a)·n at the point (negative when approaching):
/// j = −(1 + e)·u / (1/ma + 1/mb + n·((Ia⁻¹(ra × n)) × ra) + n·((Ib⁻¹(rb × n)) × rb)).
/// Apply −j·n to a and +j·n to b. Zero when they are already separating (u ≥ 0).
double contact_normal_impulse(const RigidBody& a, const RigidBody& b, const Vec3& point,
                              const Vec3& normal, double restitution);

}  // namespace kinema
