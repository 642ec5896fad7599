// kinema/math/mat3.h — 3 × 3 matrices for inertia tensors and rotations.
//
// Row-major storage, m[row][col]; multiplication by column vectors (M * v). Used by the rigid-body
// code for inertia tensors (kg·m²), which are symmetric, and for rotation matrices built from unit
// quaternions (kinema/math/quat.h), with the same column-vector convention.
#pragma once

#include <cmath>

#include "kinema/math/quat.h"
#include "kinema/math/vec3.h"

namespace kinema {

template <class T>
struct Mat3T {
  T m[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};

  static constexpr Mat3T zero() { return {}; }
  static constexpr Mat3T identity() { return diagonal({1, 1, 1}); }
  static constexpr Mat3T diagonal(const Vec3T<T>& d) {
    Mat3T r;
    r.m[0][0] = d.x;
    r.m[1][1] = d.y;
    r.m[2][2] = d.z;
    return r;
  }
  /// The matrix of a unit quaternion's rotation: from_quat(q) * v == rotate(q, v).
  static Mat3T from_quat(const QuatT<T>& q) {
    const T x = q.x, y = q.y, z = q.z, w = q.w;
    Mat3T r;
    r.m[0][0] = 1 - 2 * (y * y + z * z);
    r.m[0][1] = 2 * (x * y - z * w);
    r.m[0][2] = 2 * (x * z + y * w);
    r.m[1][0] = 2 * (x * y + z * w);
    r.m[1][1] = 1 - 2 * (x * x + z * z);
    r.m[1][2] = 2 * (y * z - x * w);
    r.m[2][0] = 2 * (x * z - y * w);
    r.m[2][1] = 2 * (y * z + x * w);
    r.m[2][2] = 1 - 2 * (x * x + y * y);
    return r;
  }
  /// The cross-product matrix: skew(a) * b == cross(a, b).
  static constexpr Mat3T skew(const Vec3T<T>& a) {
    Mat3T r;
    r.m[0][1] = -a.z;
    r.m[0][2] = a.y;
    r.m[1][0] = a.z;
    r.m[1][2] = -a.x;
    r.m[2][0] = -a.y;
    r.m[2][1] = a.x;
    return r;
  }

  constexpr Vec3T<T> row(int i) const { return {m[i][0], m[i][1], m[i][2]}; }
  constexpr Vec3T<T> column(int j) const { return {m[0][j], m[1][j], m[2][j]}; }

  constexpr Vec3T<T> operator*(const Vec3T<T>& v) const {
    return {m[0][0] * v.x + m[0][1] * v.y + m[0][2] * v.z,
            m[1][0] * v.x + m[1][1] * v.y + m[1][2] * v.z,
            m[2][0] * v.x + m[2][1] * v.y + m[2][2] * v.z};
  }
  constexpr Mat3T operator*(const Mat3T& b) const {
    Mat3T r;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        r.m[i][j] = m[i][0] * b.m[0][j] + m[i][1] * b.m[1][j] + m[i][2] * b.m[2][j];
    return r;
  }
  constexpr Mat3T operator*(T s) const {
    Mat3T r;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) r.m[i][j] = m[i][j] * s;
    return r;
  }
  constexpr Mat3T operator+(const Mat3T& b) const {
    Mat3T r;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) r.m[i][j] = m[i][j] + b.m[i][j];
    return r;
  }
  constexpr Mat3T operator-(const Mat3T& b) const { return *this + b * T(-1); }
  constexpr bool operator==(const Mat3T&) const = default;
};

template <class T>
constexpr Mat3T<T> transpose(const Mat3T<T>& a) {
  Mat3T<T> r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r.m[i][j] = a.m[j][i];
  return r;
}

template <class T>
constexpr T determinant(const Mat3T<T>& a) {
  return dot(a.row(0), cross(a.row(1), a.row(2)));
}

/// The inverse of `a`; the zero matrix when `a` is singular (|det| not above 0 or not finite),
/// which is what an infinite mass or inertia needs (a static body's inverse inertia is zero).
template <class T>
Mat3T<T> inverse(const Mat3T<T>& a) {
  const Vec3T<T> r0 = a.row(0), r1 = a.row(1), r2 = a.row(2);
  const Vec3T<T> c0 = cross(r1, r2), c1 = cross(r2, r0), c2 = cross(r0, r1);
  const T det = dot(r0, c0);
  if (!(std::abs(det) > T(0)) || !std::isfinite(det)) return {};
  const T s = T(1) / det;
  Mat3T<T> r;  // the adjugate's columns are the cross products of the rows
  for (int i = 0; i < 3; ++i) {
    r.m[i][0] = c0[i] * s;
    r.m[i][1] = c1[i] * s;
    r.m[i][2] = c2[i] * s;
  }
  return r;
}

/// R · a · Rᵀ with R the rotation of unit quaternion q: a tensor given in a body's frame, seen in
/// the world (the world inertia of a body turned by q).
template <class T>
Mat3T<T> rotate_tensor(const QuatT<T>& q, const Mat3T<T>& a) {
  const Mat3T<T> r = Mat3T<T>::from_quat(q);
  return r * a * transpose(r);
}

using Mat3 = Mat3T<double>;

}  // namespace kinema
