// Joint rows for the sequential-impulse solver (src/physics/rigid_joint_solver.h).
#include "rigid_joint_solver.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kinema {

const char* joint_kind_name(JointKind kind) {
  switch (kind) {
    case JointKind::Ball:
      return "ball";
    case JointKind::Hinge:
      return "hinge";
    case JointKind::ConeTwist:
      return "cone_twist";
    case JointKind::Distance:
      return "distance";
    case JointKind::Fixed:
      return "fixed";
  }
  return "unknown";
}

double critical_damping_gain(double kp, double inertia) {
  return kp > 0 && inertia > 0 ? 2 * std::sqrt(kp * inertia) : 0.0;
}

namespace detail {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
// Limit rows join the solve when the angle is this close to its bound (rad): the row is
// speculative, letting the joint approach the bound within the step but not pass it.
constexpr double kLimitMargin = 0.25;

// The 3 × 3 matrix that maps an impulse pair (+P on b at rb, −P on a at ra) to the change of the
// anchors' relative velocity.
Mat3 point_matrix(const RigidBody& a, const RigidBody& b, const Mat3& ia, const Mat3& ib,
                  const Vec3& ra, const Vec3& rb) {
  Mat3 k = Mat3::identity() * (a.inverse_mass + b.inverse_mass);
  const Mat3 sa = Mat3::skew(ra), sb = Mat3::skew(rb);
  return k - sa * ia * sa - sb * ib * sb;
}

void apply_linear(RigidBody& a, RigidBody& b, const Mat3& ia, const Mat3& ib, const Vec3& ra,
                  const Vec3& rb, const Vec3& impulse) {
  a.linear_velocity -= impulse * a.inverse_mass;
  a.angular_velocity -= ia * cross(ra, impulse);
  b.linear_velocity += impulse * b.inverse_mass;
  b.angular_velocity += ib * cross(rb, impulse);
}

void apply_angular(RigidBody& a, RigidBody& b, const Mat3& ia, const Mat3& ib, const Vec3& l) {
  a.angular_velocity -= ia * l;
  b.angular_velocity += ib * l;
}

double angular_mass(const Mat3& ia, const Mat3& ib, const Vec3& axis) {
  const double k = dot(axis, (ia + ib) * axis);
  return k > 0 ? 1.0 / k : 0.0;
}

double linear_mass(const RigidBody& a, const RigidBody& b, const Mat3& ia, const Mat3& ib,
                   const Vec3& ra, const Vec3& rb, const Vec3& d) {
  const double k = inverse_mass_along(a, ia, ra, d) + inverse_mass_along(b, ib, rb, d);
  return k > 0 ? 1.0 / k : 0.0;
}

// Turns b relative to a by the world rotation vector e, split by their inertias.
void rotate_apart(RigidBody& a, RigidBody& b, const Mat3& ia, const Mat3& ib, const Vec3& e) {
  const Mat3 k_inverse = inverse(ia + ib);
  if (k_inverse == Mat3::zero()) return;
  const Vec3 l = k_inverse * e;
  if (!is_static(a)) a.orientation = turned_by(a.orientation, -(ia * l));
  if (!is_static(b)) b.orientation = turned_by(b.orientation, ib * l);
}

// b's rotation relative to a beyond the rest pose, in a's frame: q_b = q_a · d · rest.
Quat relative_rotation(const JointState& j, const RigidBody& a, const RigidBody& b) {
  Quat d = conjugate(a.orientation) * b.orientation * conjugate(j.rest);
  if (d.w < 0) d = -d;
  return d;
}

// The angle of d about unit axis `axis` (rad, in (−π, π]).
double twist_angle(const Quat& d, const Vec3& axis) {
  return 2 * std::atan2(dot(d.vec(), axis), d.w);
}

// d's swing away from `axis`: the angle (rad) and the swing's unit axis (a's frame).
double swing_angle(const Quat& d, const Vec3& axis, Vec3& swing_axis) {
  Quat swing, twist;
  swing_twist(d, axis, swing, twist);
  if (swing.w < 0) swing = -swing;
  const double s = length(swing.vec());
  swing_axis = s > 1e-12 ? swing.vec() / s : any_perpendicular(axis);
  return 2 * std::atan2(s, swing.w);
}

void add_row(JointState& j, const Vec3& axis, double mass, double target, double lo, double hi,
             double warm) {
  AngularRow& r = j.rows[j.row_count++];
  r.axis = axis;
  r.mass = mass;
  r.target = target;
  r.lo = lo;
  r.hi = hi;
  r.lambda = warm;
}

// Speculative limit rows about world `axis` for an angle at `angle` kept within [lower, upper].
void add_limit_rows(JointState& j, const Vec3& axis, double mass, double angle, double lower,
                    double upper, double h) {
  if (angle - lower < kLimitMargin) add_row(j, axis, mass, (lower - angle) / h, 0, kInfinity, 0);
  if (upper - angle < kLimitMargin) add_row(j, axis, mass, (upper - angle) / h, -kInfinity, 0, 0);
}

bool has_point(JointKind k) { return k != JointKind::Distance; }

// The rows at the front of `rows` that are equalities (always present): a hinge's two, a weld's
// three. The rest are limits and motors.
int equality_angular_rows(JointKind k) {
  return k == JointKind::Hinge ? 2 : k == JointKind::Fixed ? 3 : 0;
}

}  // namespace

void initialise_joint(JointState& j, const RigidBody& a, const RigidBody& b) {
  const JointDesc& d = j.desc;
  j.anchor_a = rotate(conjugate(a.orientation), d.anchor - a.position);
  const Vec3 b_end = d.kind == JointKind::Distance ? d.anchor_b : d.anchor;
  j.anchor_b = rotate(conjugate(b.orientation), b_end - b.position);
  const Vec3 axis = normalize(d.axis);
  j.axis_a = rotate(conjugate(a.orientation), axis);
  j.axis_b = rotate(conjugate(b.orientation), axis);
  j.rest = conjugate(a.orientation) * b.orientation;
  if (d.kind == JointKind::Distance && d.min_distance == 0 && d.max_distance == 0)
    j.desc.min_distance = j.desc.max_distance = distance(d.anchor, d.anchor_b);
}

void prepare_joint(JointState& j, RigidBody& a, RigidBody& b, const Mat3& ia, const Mat3& ib,
                   double h, bool warm_start) {
  const JointDesc& d = j.desc;
  j.ra = rotate(a.orientation, j.anchor_a);
  j.rb = rotate(b.orientation, j.anchor_b);
  j.row_count = 0;
  j.point_lambda = {0, 0, 0};
  j.rod_lambda = 0;
  // Joints solved directly have their equalities solved exactly each pass: nothing to warm-start.
  const double w = warm_start && !j.direct ? 1.0 : 0.0;
  // The point's rows are always solved directly (joint_direct_solver.h), which gives a joint its
  // point_mass when it hands the joint back to the iterations.
  if (has_point(d.kind)) j.point_lambda = j.previous_point_lambda * w;
  const Vec3 axis_world = rotate(a.orientation, j.axis_a);
  switch (d.kind) {
    case JointKind::Ball:
      break;
    case JointKind::Hinge: {
      const Vec3 t1 = normalize(any_perpendicular(axis_world));
      const Vec3 t2 = cross(axis_world, t1);
      add_row(j, t1, angular_mass(ia, ib, t1), 0, -kInfinity, kInfinity, j.previous_rows[0] * w);
      add_row(j, t2, angular_mass(ia, ib, t2), 0, -kInfinity, kInfinity, j.previous_rows[1] * w);
      const double mass = angular_mass(ia, ib, axis_world);
      if (d.motor) {
        const double most = d.max_motor_torque * h;
        add_row(j, axis_world, mass, d.motor_speed, -most, most, 0);
      }
      if (d.limit)
        add_limit_rows(j, axis_world, mass, twist_angle(relative_rotation(j, a, b), j.axis_a),
                       d.lower, d.upper, h);
      break;
    }
    case JointKind::ConeTwist: {
      const Quat rel = relative_rotation(j, a, b);
      Vec3 swing_axis;
      const double swing = swing_angle(rel, j.axis_a, swing_axis);
      if (d.swing_limit - swing < kLimitMargin) {
        const Vec3 n = rotate(a.orientation, swing_axis);
        add_row(j, n, angular_mass(ia, ib, n), (d.swing_limit - swing) / h, -kInfinity, 0, 0);
      }
      Quat swing_part, twist_part;
      swing_twist(rel, j.axis_a, swing_part, twist_part);
      add_limit_rows(j, axis_world, angular_mass(ia, ib, axis_world),
                     twist_angle(twist_part.w < 0 ? -twist_part : twist_part, j.axis_a),
                     d.twist_lower, d.twist_upper, h);
      break;
    }
    case JointKind::Fixed:
      for (int i = 0; i < 3; ++i) {
        Vec3 e{0, 0, 0};
        e[i] = 1;
        add_row(j, e, angular_mass(ia, ib, e), 0, -kInfinity, kInfinity, j.previous_rows[i] * w);
      }
      break;
    case JointKind::Distance: {
      const Vec3 between = (b.position + j.rb) - (a.position + j.ra);
      const double len = length(between);
      j.rod_direction = len > 1e-12 ? between / len : rotate(a.orientation, j.axis_a);
      j.rod_mass = linear_mass(a, b, ia, ib, j.ra, j.rb, j.rod_direction);
      if (d.max_distance - d.min_distance < 1e-12) {
        j.rod_target = 0;
        j.rod_lo = -kInfinity;
        j.rod_hi = kInfinity;
      } else if (len > 0.5 * (d.min_distance + d.max_distance)) {
        j.rod_target = (d.max_distance - len) / h;  // may open up to the maximum, no further
        j.rod_lo = -kInfinity;
        j.rod_hi = 0;
      } else {
        j.rod_target = (d.min_distance - len) / h;
        j.rod_lo = 0;
        j.rod_hi = kInfinity;
      }
      j.rod_lambda = std::clamp(j.previous_rod * w, j.rod_lo, j.rod_hi);
      break;
    }
  }
  // Warm start.
  if (has_point(d.kind)) apply_linear(a, b, ia, ib, j.ra, j.rb, j.point_lambda);
  if (d.kind == JointKind::Distance)
    apply_linear(a, b, ia, ib, j.ra, j.rb, j.rod_direction * j.rod_lambda);
  for (int i = 0; i < j.row_count; ++i)
    apply_angular(a, b, ia, ib, j.rows[i].axis * j.rows[i].lambda);
}

void prepare_point_mass(JointState& j, const RigidBody& a, const RigidBody& b, const Mat3& ia,
                        const Mat3& ib) {
  if (has_point(j.desc.kind)) j.point_mass = inverse(point_matrix(a, b, ia, ib, j.ra, j.rb));
}

bool needs_iterations(const JointState& j) {
  return !j.direct || j.row_count > equality_angular_rows(j.desc.kind);
}

void solve_joint_velocity(JointState& j, RigidBody& a, RigidBody& b, const Mat3& ia,
                          const Mat3& ib) {
  // Motors and limits first, the rows that hold the joint together last (they then win).
  const int first = j.direct ? equality_angular_rows(j.desc.kind) : 0;
  for (int i = j.row_count - 1; i >= first; --i) {
    AngularRow& r = j.rows[i];
    const double rate = dot(b.angular_velocity - a.angular_velocity, r.axis);
    const double next = std::clamp(r.lambda + (r.target - rate) * r.mass, r.lo, r.hi);
    apply_angular(a, b, ia, ib, r.axis * (next - r.lambda));
    r.lambda = next;
  }
  auto anchor_velocity = [&] {
    return (b.linear_velocity + cross(b.angular_velocity, j.rb)) -
           (a.linear_velocity + cross(a.angular_velocity, j.ra));
  };
  if (j.direct) return;  // the direct solve takes the point and the rod
  if (has_point(j.desc.kind)) {
    const Vec3 impulse = j.point_mass * -anchor_velocity();
    j.point_lambda += impulse;
    apply_linear(a, b, ia, ib, j.ra, j.rb, impulse);
  } else {
    const double rate = dot(anchor_velocity(), j.rod_direction);
    const double next =
        std::clamp(j.rod_lambda + (j.rod_target - rate) * j.rod_mass, j.rod_lo, j.rod_hi);
    apply_linear(a, b, ia, ib, j.ra, j.rb, j.rod_direction * (next - j.rod_lambda));
    j.rod_lambda = next;
  }
}

void finish_joint_step(JointState& j) {
  j.last_impulse = std::max(length(j.point_lambda), std::abs(j.rod_lambda));
  j.previous_point_lambda = j.point_lambda;
  j.previous_rod = j.rod_lambda;
  // Only the rows present every step are warm-started (the first two of a hinge, three of a weld).
  for (int i = 0; i < 3; ++i) j.previous_rows[i] = i < j.row_count ? j.rows[i].lambda : 0;
  if (j.last_impulse > j.desc.break_impulse) j.broken = true;
}

void solve_joint_position(JointState& j, RigidBody& a, RigidBody& b, double fraction) {
  const JointDesc& d = j.desc;
  // The inertias at the current poses, computed when first needed (most direct joints have
  // nothing to do here).
  Mat3 ia, ib;
  bool inertias_current = false;
  auto inertias = [&] {
    if (!inertias_current) {
      ia = world_inverse_inertia(a);
      ib = world_inverse_inertia(b);
      inertias_current = true;
    }
  };
  if (has_point(d.kind) && !j.direct) {
    inertias();
    const Vec3 ra = rotate(a.orientation, j.anchor_a), rb = rotate(b.orientation, j.anchor_b);
    const Vec3 c = (b.position + rb) - (a.position + ra);
    const Vec3 impulse = inverse(point_matrix(a, b, ia, ib, ra, rb)) * c * -fraction;
    apply_position_impulse(a, b, ia, ib, ra, rb, impulse);
    inertias_current = false;  // the impulse turned them
  }
  const Vec3 axis_world = rotate(a.orientation, j.axis_a);
  switch (d.kind) {
    case JointKind::Ball:
      break;
    case JointKind::Hinge: {
      const Vec3 axis_b = rotate(b.orientation, j.axis_b);
      if (!j.direct) {
        inertias();
        rotate_apart(a, b, ia, ib, cross(axis_b, axis_world) * fraction);
      }
      if (d.limit) {
        const double angle = twist_angle(relative_rotation(j, a, b), j.axis_a);
        const double bound = std::clamp(angle, d.lower, d.upper);
        if (bound != angle) {
          inertias();
          rotate_apart(a, b, ia, ib, axis_world * ((bound - angle) * fraction));
        }
      }
      break;
    }
    case JointKind::ConeTwist: {
      Vec3 swing_axis;
      const double swing = swing_angle(relative_rotation(j, a, b), j.axis_a, swing_axis);
      if (swing > d.swing_limit) {
        inertias();
        rotate_apart(a, b, ia, ib,
                     rotate(a.orientation, swing_axis) * ((d.swing_limit - swing) * fraction));
      }
      Quat swing_part, twist_part;
      swing_twist(relative_rotation(j, a, b), j.axis_a, swing_part, twist_part);
      const double twist = twist_angle(twist_part.w < 0 ? -twist_part : twist_part, j.axis_a);
      const double bound = std::clamp(twist, d.twist_lower, d.twist_upper);
      if (bound != twist) {
        inertias();
        rotate_apart(a, b, ia, ib, axis_world * ((bound - twist) * fraction));
      }
      break;
    }
    case JointKind::Fixed: {
      if (j.direct) break;
      Quat error = a.orientation * j.rest * conjugate(b.orientation);
      if (error.w < 0) error = -error;
      inertias();
      rotate_apart(a, b, ia, ib, error.vec() * (2 * fraction));
      break;
    }
    case JointKind::Distance: {
      if (j.direct) break;
      const Vec3 ra = rotate(a.orientation, j.anchor_a), rb = rotate(b.orientation, j.anchor_b);
      const Vec3 between = (b.position + rb) - (a.position + ra);
      const double len = length(between);
      if (!(len > 1e-12)) break;
      const Vec3 dir = between / len;
      const double c = len - std::clamp(len, d.min_distance, d.max_distance);
      if (c == 0) break;
      inertias();
      const double mass = linear_mass(a, b, ia, ib, ra, rb, dir);
      const Vec3 impulse = dir * (-c * mass * fraction);
      apply_position_impulse(a, b, ia, ib, ra, rb, impulse);
      break;
    }
  }
}

double joint_position_error(const JointState& j, const RigidBody& a, const RigidBody& b) {
  const Vec3 xa = a.position + rotate(a.orientation, j.anchor_a);
  const Vec3 xb = b.position + rotate(b.orientation, j.anchor_b);
  if (j.desc.kind != JointKind::Distance) return distance(xa, xb);
  const double len = distance(xa, xb);
  return std::abs(len - std::clamp(len, j.desc.min_distance, j.desc.max_distance));
}

}  // namespace detail
}  // namespace kinema
