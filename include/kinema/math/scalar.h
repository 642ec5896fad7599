// kinema/math/scalar.h — constants and scalar helpers shared by the math types.
#pragma once

#include <cmath>

namespace kinema {

/// π to double precision.
inline constexpr double kPi = 3.14159265358979323846;

/// Degrees → radians. kinema works in radians everywhere; degrees appear only at the CLI/UI edge.
template <class T>
constexpr T radians(T degrees) {
  return degrees * T(kPi / 180.0);
}

/// Radians → degrees.
template <class T>
constexpr T degrees(T radians) {
  return radians * T(180.0 / kPi);
}

/// True when `v` is neither NaN nor ±Inf.
template <class T>
bool is_finite(T v) {
  return std::isfinite(v);
}

/// Linear interpolation a + (b − a)·t.
template <class T>
constexpr T lerp(T a, T b, T t) {
  return a + (b - a) * t;
}

}  // namespace kinema
