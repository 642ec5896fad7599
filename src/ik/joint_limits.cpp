// Joint limits: hinge clamp and swing-twist cone/twist projection.
#include "kinema/ik/joint_limits.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "kinema/core/error.h"

namespace kinema {
namespace {

constexpr double kUnchangedTolerance = 1e-12;  // "already within": return the input untouched

bool angle_ok(double a) { return std::isfinite(a) && a >= -kPi && a <= kPi; }

void check_range(const char* place, double lo, double hi) {
  if (!angle_ok(lo) || !angle_ok(hi))
    throw Error("", place, "angles must be finite radians in [-pi, pi]");
  if (lo > hi) throw Error("", place, "min angle is greater than max angle");
}

Vec3 check_axis(const char* place, const Vec3& axis, const char* what) {
  const double len = length(axis);
  if (!std::isfinite(len) || !(len > 1e-12))
    throw Error("", place, std::string(what) + " is zero or not finite");
  return axis / len;
}

// Twist of unit q about unit axis with w ≥ 0 (hemisphere fixed so the angle is in [−π, π]);
// `swing` gets the matching swing (q = swing · twist still holds).
void split(const Quat& q, const Vec3& axis, Quat& swing, Quat& twist) {
  swing_twist(q, axis, swing, twist);
  if (twist.w < 0) {
    twist = -twist;
    swing = -swing;
  }
}

// Signed twist angle in (−π, π] (−π and π are the same rotation; one answer keeps within/clamp
// consistent).
double signed_twist(const Quat& twist, const Vec3& axis) {
  const double a = 2.0 * std::atan2(dot(twist.vec(), axis), twist.w);
  return a <= -kPi ? a + 2.0 * kPi : a;
}

// Ellipse measure (u/a)² + (v/b)²; a zero half-angle allows only a zero component.
double ellipse_value(double u, double v, double a, double b) {
  double r = 0;
  if (a > 0) {
    r += (u / a) * (u / a);
  } else if (u != 0) {
    return std::numeric_limits<double>::infinity();
  }
  if (b > 0) {
    r += (v / b) * (v / b);
  } else if (v != 0) {
    return std::numeric_limits<double>::infinity();
  }
  return r;
}

// Closest point of the ellipse (x/e0)² + (y/e1)² = 1, e0 ≥ e1 > 0, to (x, y) outside it,
// written back into (x, y). Eberly, "Distance from a Point to an Ellipse" (2013): bisection on
// G(s) = (r0·z0/(s + r0))² + (z1/(s + 1))² − 1 with r0 = (e0/e1)², which has one root in
// [z1 − 1, |(r0·z0, z1)| − 1] for outside points; bisection runs until the bracket stops
// shrinking (≤ ~1100 halvings, typically ~60).
void closest_on_ellipse(double e0, double e1, double& x, double& y) {
  const double sx = x < 0 ? -1.0 : 1.0, sy = y < 0 ? -1.0 : 1.0;
  const double y0 = std::abs(x), y1 = std::abs(y);
  if (y1 == 0) {  // on the major axis, outside: the vertex
    x = sx * e0;
    y = 0;
    return;
  }
  if (y0 == 0) {  // on the minor axis, outside: the co-vertex
    x = 0;
    y = sy * e1;
    return;
  }
  const double z0 = y0 / e0, z1 = y1 / e1, r0 = (e0 / e1) * (e0 / e1), n0 = r0 * z0;
  double s0 = z1 - 1.0, s1 = std::hypot(n0, z1) - 1.0, s = s0;
  for (int i = 0; i < 1100; ++i) {
    s = 0.5 * (s0 + s1);
    if (s == s0 || s == s1) break;
    const double g0 = n0 / (s + r0), g1 = z1 / (s + 1.0);
    const double g = g0 * g0 + g1 * g1 - 1.0;
    if (g > 0) {
      s0 = s;
    } else if (g < 0) {
      s1 = s;
    } else {
      break;
    }
  }
  x = sx * r0 * y0 / (s + r0);
  y = sy * y1 / (s + 1.0);
}

bool in_range(double x, double lo, double hi, double tol) { return x >= lo - tol && x <= hi + tol; }

}  // namespace

HingeLimit make_hinge_limit(const Vec3& axis, double min_angle, double max_angle) {
  HingeLimit h;
  h.axis = check_axis("hinge limit", axis, "hinge axis");
  check_range("hinge limit", min_angle, max_angle);
  h.min_angle = min_angle;
  h.max_angle = max_angle;
  return h;
}

SwingTwistLimit make_swing_twist_limit(const Vec3& twist_axis, double cone_half_angle,
                                       double twist_min, double twist_max) {
  const Vec3 t = check_axis("swing-twist limit", twist_axis, "twist axis");
  // Any perpendicular will do for a circular cone: pick the one least parallel to t.
  const Vec3 helper = std::abs(t.x) < 0.9 ? Vec3::unit_x() : Vec3::unit_y();
  return make_swing_twist_limit(t, cross(cross(t, helper), t), cone_half_angle, cone_half_angle,
                                twist_min, twist_max);
}

SwingTwistLimit make_swing_twist_limit(const Vec3& twist_axis, const Vec3& swing_axis_a,
                                       double swing_a, double swing_b, double twist_min,
                                       double twist_max) {
  constexpr const char* kPlace = "swing-twist limit";
  SwingTwistLimit s;
  s.twist_axis = check_axis(kPlace, twist_axis, "twist axis");
  const Vec3 a = check_axis(kPlace, swing_axis_a, "swing axis");
  const Vec3 perp = a - s.twist_axis * dot(a, s.twist_axis);
  if (!(length(perp) > 1e-9)) throw Error("", kPlace, "swing axis is parallel to the twist axis");
  s.swing_axis_a = normalize(perp);
  s.swing_axis_b = cross(s.twist_axis, s.swing_axis_a);
  if (!std::isfinite(swing_a) || !std::isfinite(swing_b) || swing_a < 0 || swing_b < 0 ||
      swing_a > kPi || swing_b > kPi)
    throw Error("", kPlace, "swing half-angles must be finite radians in [0, pi]");
  s.swing_a = swing_a;
  s.swing_b = swing_b;
  check_range(kPlace, twist_min, twist_max);
  s.twist_min = twist_min;
  s.twist_max = twist_max;
  return s;
}

double twist_angle(const Quat& q, const Vec3& axis) {
  const Vec3 n = normalize(axis);
  Quat swing, twist;
  split(normalize(q), n, swing, twist);
  return signed_twist(twist, n);
}

double clamp_angle(double angle, double min_angle, double max_angle) {
  if (!std::isfinite(angle)) angle = 0;  // never propagate NaN
  double a = std::remainder(angle, 2.0 * kPi);
  if (a <= -kPi) a += 2.0 * kPi;  // (−π, π]
  if (a >= min_angle && a <= max_angle) return a;
  // Outside: the nearer end around the circle.
  const double d_min = std::abs(std::remainder(a - min_angle, 2.0 * kPi));
  const double d_max = std::abs(std::remainder(a - max_angle, 2.0 * kPi));
  return d_min < d_max ? min_angle : max_angle;
}

bool within(const HingeLimit& limit, const Quat& q, double tolerance) {
  const Quat n = normalize(q);
  Quat swing, twist;
  split(n, limit.axis, swing, twist);
  const double swing_angle = 2.0 * std::atan2(length(swing.vec()), std::abs(swing.w));
  return swing_angle <= tolerance &&
         in_range(signed_twist(twist, limit.axis), limit.min_angle, limit.max_angle, tolerance);
}

Quat project(const HingeLimit& limit, const Quat& q) {
  const Quat n = normalize(q);
  if (within(limit, n, kUnchangedTolerance)) return n;
  Quat swing, twist;
  split(n, limit.axis, swing, twist);
  const double angle =
      clamp_angle(signed_twist(twist, limit.axis), limit.min_angle, limit.max_angle);
  return Quat::from_axis_angle(limit.axis, angle);
}

SwingTwistAngles measure(const SwingTwistLimit& limit, const Quat& q) {
  Quat swing, twist;
  split(normalize(q), limit.twist_axis, swing, twist);
  const Vec3 rv = to_rotation_vector(swing);  // perpendicular to twist_axis
  return {dot(rv, limit.swing_axis_a), dot(rv, limit.swing_axis_b),
          signed_twist(twist, limit.twist_axis)};
}

bool within(const SwingTwistLimit& limit, const Quat& q, double tolerance) {
  const SwingTwistAngles m = measure(limit, q);
  return ellipse_value(m.u, m.v, limit.swing_a + tolerance, limit.swing_b + tolerance) <= 1.0 &&
         in_range(m.twist, limit.twist_min, limit.twist_max, tolerance);
}

Quat project(const SwingTwistLimit& limit, const Quat& q) {
  const Quat n = normalize(q);
  if (within(limit, n, kUnchangedTolerance)) return n;
  const SwingTwistAngles m = measure(limit, n);
  double u = m.u, v = m.v;
  const double a = limit.swing_a, b = limit.swing_b;
  if (a <= 0) u = 0;
  if (b <= 0) v = 0;
  if (a > 0 && b > 0) {
    if (ellipse_value(u, v, a, b) > 1.0) {
      if (a == b) {  // circle: radial scaling is the closest point
        const double k = a / std::hypot(u, v);
        u *= k;
        v *= k;
      } else if (a > b) {
        closest_on_ellipse(a, b, u, v);
      } else {
        closest_on_ellipse(b, a, v, u);
      }
    }
  } else {
    u = std::clamp(u, -a, a);
    v = std::clamp(v, -b, b);
  }
  const double t = clamp_angle(m.twist, limit.twist_min, limit.twist_max);
  const Quat swing = from_rotation_vector(limit.swing_axis_a * u + limit.swing_axis_b * v);
  return normalize(swing * Quat::from_axis_angle(limit.twist_axis, t));
}

Quat project(const JointLimit& limit, const Quat& q) {
  switch (limit.kind) {
    case JointLimit::Kind::kHinge:
      return project(limit.hinge, q);
    case JointLimit::Kind::kSwingTwist:
      return project(limit.swing_twist, q);
    case JointLimit::Kind::kNone:
      break;
  }
  return normalize(q);
}

bool within(const JointLimit& limit, const Quat& q, double tolerance) {
  switch (limit.kind) {
    case JointLimit::Kind::kHinge:
      return within(limit.hinge, q, tolerance);
    case JointLimit::Kind::kSwingTwist:
      return within(limit.swing_twist, q, tolerance);
    case JointLimit::Kind::kNone:
      break;
  }
  return true;
}

}  // namespace kinema
