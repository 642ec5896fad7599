// kinema/math/vec3.h — 3-component vector.
//
// Convention: right-handed, +Y up, +Z forward for characters, metres.
#pragma once

#include <cmath>

#include "kinema/math/scalar.h"

namespace kinema {

/// A 3-component vector of scalar type T (float for runtime data, double for offline data).
template <class T>
struct Vec3T {
  T x = 0, y = 0, z = 0;

  constexpr Vec3T() = default;
  constexpr Vec3T(T x_, T y_, T z_) : x(x_), y(y_), z(z_) {}
  /// Converting constructor between precisions (explicit: narrowing must be visible).
  template <class U>
  constexpr explicit Vec3T(const Vec3T<U>& o) : x(T(o.x)), y(T(o.y)), z(T(o.z)) {}

  constexpr T& operator[](int i) { return i == 0 ? x : (i == 1 ? y : z); }
  constexpr T operator[](int i) const { return i == 0 ? x : (i == 1 ? y : z); }

  constexpr Vec3T operator+(const Vec3T& o) const { return {x + o.x, y + o.y, z + o.z}; }
  constexpr Vec3T operator-(const Vec3T& o) const { return {x - o.x, y - o.y, z - o.z}; }
  constexpr Vec3T operator-() const { return {-x, -y, -z}; }
  constexpr Vec3T operator*(T s) const { return {x * s, y * s, z * s}; }
  constexpr Vec3T operator/(T s) const { return {x / s, y / s, z / s}; }
  constexpr Vec3T& operator+=(const Vec3T& o) { return *this = *this + o; }
  constexpr Vec3T& operator-=(const Vec3T& o) { return *this = *this - o; }
  constexpr Vec3T& operator*=(T s) { return *this = *this * s; }
  constexpr bool operator==(const Vec3T&) const = default;

  static constexpr Vec3T zero() { return {0, 0, 0}; }
  static constexpr Vec3T one() { return {1, 1, 1}; }
  static constexpr Vec3T unit_x() { return {1, 0, 0}; }
  static constexpr Vec3T unit_y() { return {0, 1, 0}; }
  static constexpr Vec3T unit_z() { return {0, 0, 1}; }
};

template <class T>
constexpr Vec3T<T> operator*(T s, const Vec3T<T>& v) {
  return v * s;
}

/// Component-wise product.
template <class T>
constexpr Vec3T<T> mul(const Vec3T<T>& a, const Vec3T<T>& b) {
  return {a.x * b.x, a.y * b.y, a.z * b.z};
}

template <class T>
constexpr T dot(const Vec3T<T>& a, const Vec3T<T>& b) {
  return a.x * b.x + a.y * b.y + a.z * b.z;
}

template <class T>
constexpr Vec3T<T> cross(const Vec3T<T>& a, const Vec3T<T>& b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}

template <class T>
T length(const Vec3T<T>& v) {
  return std::sqrt(dot(v, v));
}

template <class T>
constexpr T length_squared(const Vec3T<T>& v) {
  return dot(v, v);
}

template <class T>
T distance(const Vec3T<T>& a, const Vec3T<T>& b) {
  return length(a - b);
}

/// Unit vector along v; returns `fallback` when |v| is zero or not finite.
template <class T>
Vec3T<T> normalize(const Vec3T<T>& v, const Vec3T<T>& fallback = Vec3T<T>::unit_x()) {
  const T len = length(v);
  if (!(len > T(0)) || !std::isfinite(len)) return fallback;
  return v / len;
}

template <class T>
constexpr Vec3T<T> lerp(const Vec3T<T>& a, const Vec3T<T>& b, T t) {
  return a + (b - a) * t;
}

/// A unit vector perpendicular to the unit vector d (crossed with +X, or +Y when d is near X).
template <class T>
Vec3T<T> any_perpendicular(const Vec3T<T>& d) {
  const Vec3T<T> other = std::abs(d.x) < T(0.9) ? Vec3T<T>{1, 0, 0} : Vec3T<T>{0, 1, 0};
  return normalize(cross(d, other));
}

/// True when every component is finite.
template <class T>
bool is_finite(const Vec3T<T>& v) {
  return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z);
}

using Vec3 = Vec3T<double>;  ///< offline precision (raw clips, skeletons, I/O)
using Vec3f = Vec3T<float>;  ///< runtime precision

}  // namespace kinema
