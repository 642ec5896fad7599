// Rigid bodies (kinema/physics/rigid_body.h).
#include "kinema/physics/rigid_body.h"

#include <cmath>

#include "kinema/core/error.h"

namespace kinema {

RigidBody make_dynamic_body(const MassProperties& p, const Vec3& origin, const Quat& orientation,
                            const std::string& place) {
  if (!(p.mass > 0) || !std::isfinite(p.mass))
    throw Error({}, place,
                "a dynamic body needs a mass > 0 and finite (is " + std::to_string(p.mass) +
                    " kg); make it static instead");
  const Mat3 inv = inverse(p.inertia);
  if (inv == Mat3::zero())
    throw Error({}, place, "inertia tensor is singular or not finite; the body could spin freely");
  RigidBody b;
  b.orientation = normalize(orientation);
  b.centre_of_mass_in_shape = p.centre_of_mass;
  b.position = origin + rotate(b.orientation, p.centre_of_mass);
  b.inverse_mass = 1.0 / p.mass;
  b.inertia_body = p.inertia;
  b.inverse_inertia_body = inv;
  return b;
}

RigidBody make_static_body(const Vec3& origin, const Quat& orientation) {
  RigidBody b;
  b.position = origin;
  b.orientation = normalize(orientation);
  return b;
}

Vec3 shape_origin(const RigidBody& b) {
  return b.position - rotate(b.orientation, b.centre_of_mass_in_shape);
}

Mat3 world_inverse_inertia(const RigidBody& b) {
  return rotate_tensor(b.orientation, b.inverse_inertia_body);
}

Vec3 velocity_at_point(const RigidBody& b, const Vec3& point) {
  return b.linear_velocity + cross(b.angular_velocity, point - b.position);
}

void apply_force_at_point(RigidBody& b, const Vec3& f, const Vec3& point) {
  b.force += f;
  b.torque += cross(point - b.position, f);
}

void apply_impulse_at_point(RigidBody& b, const Vec3& j, const Vec3& point) {
  if (is_static(b)) return;
  b.linear_velocity += j * b.inverse_mass;
  b.angular_velocity += world_inverse_inertia(b) * cross(point - b.position, j);
  set_awake(b, true);
}

double inverse_mass_along(const RigidBody& b, const Mat3& inverse_inertia, const Vec3& r,
                          const Vec3& direction) {
  if (is_static(b)) return 0;
  return b.inverse_mass + dot(direction, cross(inverse_inertia * cross(r, direction), r));
}

Quat turned_by(const Quat& q, const Vec3& theta) {
  return normalize(q + Quat{theta.x, theta.y, theta.z, 0} * q * 0.5);
}

void apply_position_impulse(RigidBody& a, RigidBody& b, const Mat3& ia, const Mat3& ib,
                            const Vec3& ra, const Vec3& rb, const Vec3& impulse) {
  if (!is_static(a)) {
    a.position -= impulse * a.inverse_mass;
    a.orientation = turned_by(a.orientation, -(ia * cross(ra, impulse)));
  }
  if (!is_static(b)) {
    b.position += impulse * b.inverse_mass;
    b.orientation = turned_by(b.orientation, ib * cross(rb, impulse));
  }
}

void integrate_velocity(RigidBody& b, const Vec3& gravity, double h) {
  if (is_static(b) || !b.awake) {
    b.force = b.torque = {0, 0, 0};
    return;
  }
  b.linear_velocity += (b.force * b.inverse_mass + gravity) * h;

  // Gyroscopic term, implicitly: one Newton step on I(ω′ − ω) + h·ω′ × Iω′ = 0 in body axes.
  const Quat to_body = conjugate(b.orientation);
  Vec3 w = rotate(to_body, b.angular_velocity);
  const Mat3& I = b.inertia_body;
  const Vec3 residual = cross(w, I * w) * h;
  const Mat3 jacobian = I + (Mat3::skew(w) * I - Mat3::skew(I * w)) * h;
  const Mat3 jacobian_inverse = inverse(jacobian);
  if (!(jacobian_inverse == Mat3::zero())) w = w - jacobian_inverse * residual;
  b.angular_velocity = rotate(b.orientation, w) + world_inverse_inertia(b) * b.torque * h;

  // Damping as an exact decay over the step, so it never reverses a velocity whatever h is.
  if (b.linear_damping > 0) b.linear_velocity = b.linear_velocity * std::exp(-b.linear_damping * h);
  if (b.angular_damping > 0)
    b.angular_velocity = b.angular_velocity * std::exp(-b.angular_damping * h);
  b.force = b.torque = {0, 0, 0};
}

void integrate_position(RigidBody& b, double h) {
  if (is_static(b) || !b.awake) return;
  b.position += b.linear_velocity * h;
  b.orientation = turned_by(b.orientation, b.angular_velocity * h);
}

double kinetic_energy(const RigidBody& b) {
  if (is_static(b)) return 0;
  const Vec3 w = rotate(conjugate(b.orientation), b.angular_velocity);
  return 0.5 * dot(b.linear_velocity, b.linear_velocity) / b.inverse_mass +
         0.5 * dot(w, b.inertia_body * w);
}

Vec3 angular_momentum(const RigidBody& b) {
  return rotate_tensor(b.orientation, b.inertia_body) * b.angular_velocity;
}

bool ready_to_sleep(RigidBody& b, double h, const SleepSettings& s) {
  if (is_static(b)) return true;
  const bool still = length_squared(b.linear_velocity) < s.linear_speed * s.linear_speed &&
                     length_squared(b.angular_velocity) < s.angular_speed * s.angular_speed;
  b.still_time = still ? b.still_time + h : 0;
  return b.still_time >= s.time_to_sleep - 1e-6 * h;  // 30 × (1/60) falls short of 0.5 in doubles
}

void set_awake(RigidBody& b, bool awake) {
  if (is_static(b)) return;
  if (!awake)
    b.linear_velocity = b.angular_velocity = {0, 0, 0};
  else if (!b.awake)
    b.still_time = 0;
  b.awake = awake;
}

Impulse1D collision_impulse_1d(double inverse_mass1, double v1, double inverse_mass2, double v2,
                               double e) {
  Impulse1D r;
  const double denominator = inverse_mass1 + inverse_mass2;
  if (!(denominator > 0)) return {0, v1, v2};  // two immovable bodies
  r.impulse = -(1 + e) * (v1 - v2) / denominator;
  r.v1 = v1 + r.impulse * inverse_mass1;
  r.v2 = v2 - r.impulse * inverse_mass2;
  return r;
}

double contact_normal_impulse(const RigidBody& a, const RigidBody& b, const Vec3& point,
                              const Vec3& n, double e) {
  const Vec3 ra = point - a.position, rb = point - b.position;
  const double approach = dot(velocity_at_point(b, point) - velocity_at_point(a, point), n);
  if (approach >= 0) return 0;
  const double k = inverse_mass_along(a, world_inverse_inertia(a), ra, n) +
                   inverse_mass_along(b, world_inverse_inertia(b), rb, n);
  if (!(k > 0)) return 0;
  return -(1 + e) * approach / k;
}

}  // namespace kinema
