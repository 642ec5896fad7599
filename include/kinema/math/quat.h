// kinema/math/quat.h — unit quaternions for rotations.
//
// Storage order is (x, y, z, w) as in glTF. Composition follows column-vector convention:
// (a * b) applied to v rotates by b first, then by a.
#pragma once

#include <algorithm>
#include <cmath>

#include "kinema/math/vec3.h"

namespace kinema {

template <class T>
struct QuatT {
  T x = 0, y = 0, z = 0, w = 1;

  constexpr QuatT() = default;
  constexpr QuatT(T x_, T y_, T z_, T w_) : x(x_), y(y_), z(z_), w(w_) {}
  template <class U>
  constexpr explicit QuatT(const QuatT<U>& o) : x(T(o.x)), y(T(o.y)), z(T(o.z)), w(T(o.w)) {}

  static constexpr QuatT identity() { return {0, 0, 0, 1}; }

  /// Rotation of `angle` radians about `axis` (need not be unit; a zero axis gives identity).
  static QuatT from_axis_angle(const Vec3T<T>& axis, T angle) {
    const T len = length(axis);
    if (!(len > T(0))) return identity();
    const T s = std::sin(angle * T(0.5)) / len;
    return {axis.x * s, axis.y * s, axis.z * s, std::cos(angle * T(0.5))};
  }

  constexpr Vec3T<T> vec() const { return {x, y, z}; }

  constexpr QuatT operator*(const QuatT& b) const {
    return {w * b.x + x * b.w + y * b.z - z * b.y, w * b.y - x * b.z + y * b.w + z * b.x,
            w * b.z + x * b.y - y * b.x + z * b.w, w * b.w - x * b.x - y * b.y - z * b.z};
  }
  constexpr QuatT operator*(T s) const { return {x * s, y * s, z * s, w * s}; }
  constexpr QuatT operator+(const QuatT& b) const { return {x + b.x, y + b.y, z + b.z, w + b.w}; }
  constexpr QuatT operator-(const QuatT& b) const { return {x - b.x, y - b.y, z - b.z, w - b.w}; }
  constexpr QuatT operator-() const { return {-x, -y, -z, -w}; }
  constexpr bool operator==(const QuatT&) const = default;
};

template <class T>
constexpr T dot(const QuatT<T>& a, const QuatT<T>& b) {
  return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
}

template <class T>
T length(const QuatT<T>& q) {
  return std::sqrt(dot(q, q));
}

/// Unit quaternion along q; identity when q is zero or not finite.
template <class T>
QuatT<T> normalize(const QuatT<T>& q) {
  const T len = length(q);
  if (!(len > T(0)) || !std::isfinite(len)) return QuatT<T>::identity();
  return q * (T(1) / len);
}

template <class T>
constexpr QuatT<T> conjugate(const QuatT<T>& q) {
  return {-q.x, -q.y, -q.z, q.w};
}

/// Inverse of a unit quaternion (its conjugate).
template <class T>
constexpr QuatT<T> inverse(const QuatT<T>& q) {
  return conjugate(q);
}

/// Rotates v by unit quaternion q (v' = q v q*), using the two-cross-product form.
template <class T>
constexpr Vec3T<T> rotate(const QuatT<T>& q, const Vec3T<T>& v) {
  const Vec3T<T> u{q.x, q.y, q.z};
  const Vec3T<T> t = cross(u, v) * T(2);
  return v + t * q.w + cross(u, t);
}

/// Axis and angle (radians, in [0, π]) of a unit quaternion; axis is +X for the identity.
template <class T>
void to_axis_angle(const QuatT<T>& q_in, Vec3T<T>& axis, T& angle) {
  QuatT<T> q = normalize(q_in);
  if (q.w < 0) q = -q;  // shortest arc
  const T s = std::sqrt(std::max(T(0), T(1) - q.w * q.w));
  angle = T(2) * std::atan2(s, q.w);
  axis = s > T(1e-12) ? Vec3T<T>{q.x / s, q.y / s, q.z / s} : Vec3T<T>::unit_x();
}

/// Rotation vector (axis × angle, radians) of the shortest arc — the quaternion logarithm × 2.
template <class T>
Vec3T<T> to_rotation_vector(const QuatT<T>& q) {
  Vec3T<T> axis;
  T angle;
  to_axis_angle(q, axis, angle);
  return axis * angle;
}

/// Inverse of to_rotation_vector.
template <class T>
QuatT<T> from_rotation_vector(const Vec3T<T>& v) {
  const T angle = length(v);
  if (angle < T(1e-12)) return normalize(QuatT<T>{v.x * T(0.5), v.y * T(0.5), v.z * T(0.5), 1});
  return QuatT<T>::from_axis_angle(v, angle);
}

/// Angle (radians, in [0, π]) of the rotation that takes a to b; q and −q count as equal.
/// Uses atan2 on the relative rotation, which stays precise for tiny angles (acos does not).
template <class T>
T angle_between(const QuatT<T>& a, const QuatT<T>& b) {
  const QuatT<T> d = conjugate(normalize(a)) * normalize(b);
  return T(2) * std::atan2(length(Vec3T<T>{d.x, d.y, d.z}), std::abs(d.w));
}

/// Normalized linear interpolation with the hemisphere check: b is negated when it lies in the
/// opposite hemisphere from a, so the blend takes the short way round.
template <class T>
QuatT<T> nlerp(const QuatT<T>& a, const QuatT<T>& b, T t) {
  const QuatT<T> bb = dot(a, b) < T(0) ? -b : b;
  return normalize(a * (T(1) - t) + bb * t);
}

/// Spherical linear interpolation with the hemisphere check (constant angular velocity).
/// Falls back to nlerp when a and b are nearly parallel, where sin θ underflows.
template <class T>
QuatT<T> slerp(const QuatT<T>& a, const QuatT<T>& b, T t) {
  T d = dot(a, b);
  QuatT<T> bb = b;
  if (d < T(0)) {
    d = -d;
    bb = -b;
  }
  if (d > T(0.9995)) return nlerp(a, bb, t);
  const T theta = std::acos(std::min(d, T(1)));
  const T s = std::sin(theta);
  const T wa = std::sin((T(1) - t) * theta) / s;
  const T wb = std::sin(t * theta) / s;
  return normalize(a * wa + bb * wb);
}

/// Shortest-arc rotation that takes direction `from` to direction `to` (neither need be unit).
template <class T>
QuatT<T> from_to(const Vec3T<T>& from, const Vec3T<T>& to) {
  const Vec3T<T> a = normalize(from), b = normalize(to);
  const T d = dot(a, b);
  if (d < T(-1) + T(1e-9)) {
    // Opposite: any axis perpendicular to a.
    Vec3T<T> axis = cross(Vec3T<T>::unit_x(), a);
    if (length_squared(axis) < T(1e-12)) axis = cross(Vec3T<T>::unit_y(), a);
    return QuatT<T>::from_axis_angle(axis, T(kPi));
  }
  const Vec3T<T> c = cross(a, b);
  return normalize(QuatT<T>{c.x, c.y, c.z, T(1) + d});
}

/// Swing-twist decomposition about `twist_axis` (unit): q = swing * twist, where twist rotates
/// about twist_axis and swing rotates about an axis perpendicular to it. When q is a pure
/// 180° swing the twist is undefined and is returned as identity.
template <class T>
void swing_twist(const QuatT<T>& q, const Vec3T<T>& twist_axis, QuatT<T>& swing, QuatT<T>& twist) {
  const Vec3T<T> r{q.x, q.y, q.z};
  const Vec3T<T> p = twist_axis * dot(r, twist_axis);
  QuatT<T> t{p.x, p.y, p.z, q.w};
  const T len2 = dot(t, t);
  if (len2 < T(1e-18)) {
    twist = QuatT<T>::identity();
  } else {
    twist = t * (T(1) / std::sqrt(len2));
  }
  swing = q * conjugate(twist);
}

/// True when every component is finite.
template <class T>
bool is_finite(const QuatT<T>& q) {
  return std::isfinite(q.x) && std::isfinite(q.y) && std::isfinite(q.z) && std::isfinite(q.w);
}

using Quat = QuatT<double>;
using Quatf = QuatT<float>;

}  // namespace kinema
