// kinema/math/vec2.h — 2-component vector, for motion on the ground plane (crowds, navigation).
//
// A crowd moves on the ground: a Vec2's (x, y) is the world's (x, z) in kinema's +Y-up frame,
// metres. det(a, b) = a.x·b.y − a.y·b.x is positive when b lies counter-clockwise of a in the
// Vec2's own (x, y) axes.
#pragma once

#include <cmath>

namespace kinema {

template <class T>
struct Vec2T {
  T x = 0, y = 0;

  constexpr Vec2T() = default;
  constexpr Vec2T(T x_, T y_) : x(x_), y(y_) {}
  template <class U>
  constexpr explicit Vec2T(const Vec2T<U>& o) : x(T(o.x)), y(T(o.y)) {}

  constexpr Vec2T operator+(const Vec2T& o) const { return {x + o.x, y + o.y}; }
  constexpr Vec2T operator-(const Vec2T& o) const { return {x - o.x, y - o.y}; }
  constexpr Vec2T operator-() const { return {-x, -y}; }
  constexpr Vec2T operator*(T s) const { return {x * s, y * s}; }
  constexpr Vec2T operator/(T s) const { return {x / s, y / s}; }
  constexpr Vec2T& operator+=(const Vec2T& o) { return *this = *this + o; }
  constexpr Vec2T& operator-=(const Vec2T& o) { return *this = *this - o; }
  constexpr Vec2T& operator*=(T s) { return *this = *this * s; }
  constexpr bool operator==(const Vec2T&) const = default;
};

template <class T>
constexpr Vec2T<T> operator*(T s, const Vec2T<T>& v) {
  return v * s;
}

template <class T>
constexpr T dot(const Vec2T<T>& a, const Vec2T<T>& b) {
  return a.x * b.x + a.y * b.y;
}

/// The 2-D cross product (the z of the 3-D one): > 0 when b is counter-clockwise of a.
template <class T>
constexpr T det(const Vec2T<T>& a, const Vec2T<T>& b) {
  return a.x * b.y - a.y * b.x;
}

template <class T>
constexpr T length_squared(const Vec2T<T>& v) {
  return dot(v, v);
}

template <class T>
T length(const Vec2T<T>& v) {
  return std::sqrt(dot(v, v));
}

/// Unit vector along v; `fallback` when |v| is zero or not finite.
template <class T>
Vec2T<T> normalize(const Vec2T<T>& v, const Vec2T<T>& fallback = Vec2T<T>{1, 0}) {
  const T len = length(v);
  if (!(len > T(0)) || !std::isfinite(len)) return fallback;
  return v / len;
}

template <class T>
bool is_finite(const Vec2T<T>& v) {
  return std::isfinite(v.x) && std::isfinite(v.y);
}

using Vec2 = Vec2T<double>;
using Vec2f = Vec2T<float>;

}  // namespace kinema
