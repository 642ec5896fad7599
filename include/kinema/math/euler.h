// kinema/math/euler.h — Euler angles in all six Tait-Bryan orders, both ways.
//
// An order names the rotations from left to right in the product, which is also the order the
// channels are listed in a BVH file: EulerOrder::ZXY means R = Rz(a.z) · Rx(a.x) · Ry(a.y), so
// with column vectors Y is applied first. Angles are radians and are stored per axis
// (angles.x is always the angle about X), whatever the order.
#pragma once

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <optional>
#include <string_view>

#include "kinema/math/mat4.h"
#include "kinema/math/quat.h"

namespace kinema {

enum class EulerOrder { XYZ, XZY, YXZ, YZX, ZXY, ZYX };

/// The three axis indices (0 = X, 1 = Y, 2 = Z) of an order, left to right.
constexpr std::array<int, 3> euler_axes(EulerOrder order) {
  switch (order) {
    case EulerOrder::XYZ:
      return {0, 1, 2};
    case EulerOrder::XZY:
      return {0, 2, 1};
    case EulerOrder::YXZ:
      return {1, 0, 2};
    case EulerOrder::YZX:
      return {1, 2, 0};
    case EulerOrder::ZXY:
      return {2, 0, 1};
    case EulerOrder::ZYX:
      return {2, 1, 0};
  }
  return {0, 1, 2};
}

/// "XYZ", "ZXY", …
constexpr std::string_view to_string(EulerOrder order) {
  constexpr std::string_view names[] = {"XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"};
  return names[static_cast<int>(order)];
}

/// Parses "XYZ"… (case-insensitive); nullopt for anything else.
inline std::optional<EulerOrder> euler_order_from_string(std::string_view s) {
  if (s.size() != 3) return std::nullopt;
  constexpr std::string_view names[] = {"XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"};
  for (int i = 0; i < 6; ++i) {
    bool same = true;
    for (int k = 0; k < 3; ++k)
      if (std::toupper(static_cast<unsigned char>(s[k])) != names[i][k]) same = false;
    if (same) return static_cast<EulerOrder>(i);
  }
  return std::nullopt;
}

/// Quaternion of Euler angles (radians, per axis) in the given order.
template <class T>
QuatT<T> quat_from_euler(const Vec3T<T>& angles, EulerOrder order) {
  const auto axes = euler_axes(order);
  QuatT<T> q = QuatT<T>::identity();
  for (int axis : axes) {
    Vec3T<T> unit{0, 0, 0};
    unit[axis] = 1;
    q = q * QuatT<T>::from_axis_angle(unit, angles[axis]);
  }
  return q;
}

/// Euler angles (radians, per axis) of a unit quaternion in the given order. The middle angle
/// lies in [−π/2, π/2]; at gimbal lock (middle angle ±90°) the last angle is set to zero.
template <class T>
Vec3T<T> euler_from_quat(const QuatT<T>& q, EulerOrder order) {
  const Mat4T<T> m = Mat4T<T>::rotation(normalize(q));
  const auto [i, j, k] = euler_axes(order);
  // Even permutations of (X, Y, Z) have parity +1.
  const T s = ((j - i + 3) % 3 == 1) ? T(1) : T(-1);
  const T sin_b = std::clamp(s * m(i, k), T(-1), T(1));
  Vec3T<T> out{0, 0, 0};
  out[j] = std::asin(sin_b);
  if (std::abs(sin_b) < T(1) - T(1e-12)) {
    out[i] = std::atan2(-s * m(j, k), m(k, k));
    out[k] = std::atan2(-s * m(i, j), m(i, i));
  } else {
    out[i] = std::atan2(s * m(k, j), m(j, j));
    out[k] = 0;
  }
  return out;
}

}  // namespace kinema
