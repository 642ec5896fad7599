// kinema/math/mat4.h — 4×4 matrices, column-major, column vectors.
//
// Element (row r, column c) is stored at m[c * 4 + r], as in glTF and OpenGL. A point p is
// transformed as M·p, so `model = parent_model * local`.
#pragma once

#include <array>
#include <cmath>

#include "kinema/math/quat.h"
#include "kinema/math/vec3.h"

namespace kinema {

template <class T>
struct Mat4T {
  std::array<T, 16> m{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};

  constexpr T& operator()(int row, int col) { return m[col * 4 + row]; }
  constexpr T operator()(int row, int col) const { return m[col * 4 + row]; }
  constexpr bool operator==(const Mat4T&) const = default;

  static constexpr Mat4T identity() { return Mat4T{}; }

  /// Builds from 16 values in column-major order (glTF's `matrix`, `inverseBindMatrices`).
  template <class U>
  static constexpr Mat4T from_column_major(const U* values) {
    Mat4T r;
    for (int i = 0; i < 16; ++i) r.m[i] = T(values[i]);
    return r;
  }

  static constexpr Mat4T translation(const Vec3T<T>& t) {
    Mat4T r;
    r(0, 3) = t.x;
    r(1, 3) = t.y;
    r(2, 3) = t.z;
    return r;
  }

  static constexpr Mat4T scaling(const Vec3T<T>& s) {
    Mat4T r;
    r(0, 0) = s.x;
    r(1, 1) = s.y;
    r(2, 2) = s.z;
    return r;
  }

  /// Rotation matrix of unit quaternion q.
  static constexpr Mat4T rotation(const QuatT<T>& q) {
    Mat4T r;
    const T xx = q.x * q.x, yy = q.y * q.y, zz = q.z * q.z;
    const T xy = q.x * q.y, xz = q.x * q.z, yz = q.y * q.z;
    const T wx = q.w * q.x, wy = q.w * q.y, wz = q.w * q.z;
    r(0, 0) = 1 - 2 * (yy + zz);
    r(0, 1) = 2 * (xy - wz);
    r(0, 2) = 2 * (xz + wy);
    r(1, 0) = 2 * (xy + wz);
    r(1, 1) = 1 - 2 * (xx + zz);
    r(1, 2) = 2 * (yz - wx);
    r(2, 0) = 2 * (xz - wy);
    r(2, 1) = 2 * (yz + wx);
    r(2, 2) = 1 - 2 * (xx + yy);
    return r;
  }

  /// T·R·S, the matrix of a glTF node's translation/rotation/scale.
  static constexpr Mat4T trs(const Vec3T<T>& t, const QuatT<T>& q, const Vec3T<T>& s) {
    Mat4T r = rotation(q);
    for (int row = 0; row < 3; ++row) {
      r(row, 0) *= s.x;
      r(row, 1) *= s.y;
      r(row, 2) *= s.z;
    }
    r(0, 3) = t.x;
    r(1, 3) = t.y;
    r(2, 3) = t.z;
    return r;
  }

  constexpr Mat4T operator*(const Mat4T& b) const {
    Mat4T r;
    for (int c = 0; c < 4; ++c)
      for (int rr = 0; rr < 4; ++rr) {
        T s = 0;
        for (int k = 0; k < 4; ++k) s += (*this)(rr, k) * b(k, c);
        r(rr, c) = s;
      }
    return r;
  }
  constexpr Mat4T operator*(T s) const {
    Mat4T r;
    for (int i = 0; i < 16; ++i) r.m[i] = m[i] * s;
    return r;
  }
  constexpr Mat4T operator+(const Mat4T& b) const {
    Mat4T r;
    for (int i = 0; i < 16; ++i) r.m[i] = m[i] + b.m[i];
    return r;
  }

  /// M·(p, 1), dropping w (affine matrices).
  constexpr Vec3T<T> transform_point(const Vec3T<T>& p) const {
    const auto& a = *this;
    return {a(0, 0) * p.x + a(0, 1) * p.y + a(0, 2) * p.z + a(0, 3),
            a(1, 0) * p.x + a(1, 1) * p.y + a(1, 2) * p.z + a(1, 3),
            a(2, 0) * p.x + a(2, 1) * p.y + a(2, 2) * p.z + a(2, 3)};
  }
  /// M·(v, 0): direction, no translation.
  constexpr Vec3T<T> transform_vector(const Vec3T<T>& v) const {
    const auto& a = *this;
    return {a(0, 0) * v.x + a(0, 1) * v.y + a(0, 2) * v.z,
            a(1, 0) * v.x + a(1, 1) * v.y + a(1, 2) * v.z,
            a(2, 0) * v.x + a(2, 1) * v.y + a(2, 2) * v.z};
  }

  constexpr Vec3T<T> column3(int c) const { return {(*this)(0, c), (*this)(1, c), (*this)(2, c)}; }
  constexpr Vec3T<T> translation_part() const { return column3(3); }
};

template <class T>
constexpr Mat4T<T> transpose(const Mat4T<T>& a) {
  Mat4T<T> r;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) r(i, j) = a(j, i);
  return r;
}

/// Determinant of the upper-left 3×3 block (the linear part).
template <class T>
constexpr T determinant3(const Mat4T<T>& a) {
  return a(0, 0) * (a(1, 1) * a(2, 2) - a(1, 2) * a(2, 1)) -
         a(0, 1) * (a(1, 0) * a(2, 2) - a(1, 2) * a(2, 0)) +
         a(0, 2) * (a(1, 0) * a(2, 1) - a(1, 1) * a(2, 0));
}

/// General 4×4 inverse (cofactor expansion). Returns false, leaving `out` untouched, when the
/// matrix is singular (|det| below `epsilon`) or not finite.
template <class T>
bool inverse(const Mat4T<T>& a, Mat4T<T>& out, T epsilon = T(1e-12)) {
  const auto& m = a.m;
  std::array<T, 16> inv;
  inv[0] = m[5] * m[10] * m[15] - m[5] * m[11] * m[14] - m[9] * m[6] * m[15] + m[9] * m[7] * m[14] +
           m[13] * m[6] * m[11] - m[13] * m[7] * m[10];
  inv[4] = -m[4] * m[10] * m[15] + m[4] * m[11] * m[14] + m[8] * m[6] * m[15] -
           m[8] * m[7] * m[14] - m[12] * m[6] * m[11] + m[12] * m[7] * m[10];
  inv[8] = m[4] * m[9] * m[15] - m[4] * m[11] * m[13] - m[8] * m[5] * m[15] + m[8] * m[7] * m[13] +
           m[12] * m[5] * m[11] - m[12] * m[7] * m[9];
  inv[12] = -m[4] * m[9] * m[14] + m[4] * m[10] * m[13] + m[8] * m[5] * m[14] -
            m[8] * m[6] * m[13] - m[12] * m[5] * m[10] + m[12] * m[6] * m[9];
  inv[1] = -m[1] * m[10] * m[15] + m[1] * m[11] * m[14] + m[9] * m[2] * m[15] -
           m[9] * m[3] * m[14] - m[13] * m[2] * m[11] + m[13] * m[3] * m[10];
  inv[5] = m[0] * m[10] * m[15] - m[0] * m[11] * m[14] - m[8] * m[2] * m[15] + m[8] * m[3] * m[14] +
           m[12] * m[2] * m[11] - m[12] * m[3] * m[10];
  inv[9] = -m[0] * m[9] * m[15] + m[0] * m[11] * m[13] + m[8] * m[1] * m[15] - m[8] * m[3] * m[13] -
           m[12] * m[1] * m[11] + m[12] * m[3] * m[9];
  inv[13] = m[0] * m[9] * m[14] - m[0] * m[10] * m[13] - m[8] * m[1] * m[14] + m[8] * m[2] * m[13] +
            m[12] * m[1] * m[10] - m[12] * m[2] * m[9];
  inv[2] = m[1] * m[6] * m[15] - m[1] * m[7] * m[14] - m[5] * m[2] * m[15] + m[5] * m[3] * m[14] +
           m[13] * m[2] * m[7] - m[13] * m[3] * m[6];
  inv[6] = -m[0] * m[6] * m[15] + m[0] * m[7] * m[14] + m[4] * m[2] * m[15] - m[4] * m[3] * m[14] -
           m[12] * m[2] * m[7] + m[12] * m[3] * m[6];
  inv[10] = m[0] * m[5] * m[15] - m[0] * m[7] * m[13] - m[4] * m[1] * m[15] + m[4] * m[3] * m[13] +
            m[12] * m[1] * m[7] - m[12] * m[3] * m[5];
  inv[14] = -m[0] * m[5] * m[14] + m[0] * m[6] * m[13] + m[4] * m[1] * m[14] - m[4] * m[2] * m[13] -
            m[12] * m[1] * m[6] + m[12] * m[2] * m[5];
  inv[3] = -m[1] * m[6] * m[11] + m[1] * m[7] * m[10] + m[5] * m[2] * m[11] - m[5] * m[3] * m[10] -
           m[9] * m[2] * m[7] + m[9] * m[3] * m[6];
  inv[7] = m[0] * m[6] * m[11] - m[0] * m[7] * m[10] - m[4] * m[2] * m[11] + m[4] * m[3] * m[10] +
           m[8] * m[2] * m[7] - m[8] * m[3] * m[6];
  inv[11] = -m[0] * m[5] * m[11] + m[0] * m[7] * m[9] + m[4] * m[1] * m[11] - m[4] * m[3] * m[9] -
            m[8] * m[1] * m[7] + m[8] * m[3] * m[5];
  inv[15] = m[0] * m[5] * m[10] - m[0] * m[6] * m[9] - m[4] * m[1] * m[10] + m[4] * m[2] * m[9] +
            m[8] * m[1] * m[6] - m[8] * m[2] * m[5];
  const T det = m[0] * inv[0] + m[1] * inv[4] + m[2] * inv[8] + m[3] * inv[12];
  if (!std::isfinite(det) || std::abs(det) < epsilon) return false;
  const T inv_det = T(1) / det;
  for (int i = 0; i < 16; ++i) out.m[i] = inv[i] * inv_det;
  return true;
}

/// Inverse of a rigid transform [R t; 0 1] (rotation + translation only): [Rᵀ −Rᵀt; 0 1].
/// Exact and much cheaper than the general inverse; wrong if the matrix scales or shears.
template <class T>
constexpr Mat4T<T> rigid_inverse(const Mat4T<T>& a) {
  Mat4T<T> r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r(i, j) = a(j, i);
  const Vec3T<T> t = a.translation_part();
  for (int i = 0; i < 3; ++i) r(i, 3) = -(r(i, 0) * t.x + r(i, 1) * t.y + r(i, 2) * t.z);
  return r;
}

/// Inverse-transpose of the linear 3×3 part (for transforming normals under non-uniform scale),
/// returned in the upper-left block of a Mat4 with zero translation. Identity if singular.
template <class T>
Mat4T<T> normal_matrix(const Mat4T<T>& a) {
  Mat4T<T> linear = a;
  linear(0, 3) = linear(1, 3) = linear(2, 3) = 0;
  Mat4T<T> inv;
  if (!inverse(linear, inv)) return Mat4T<T>::identity();
  return transpose(inv);
}

/// Rotation of the upper-left 3×3 block after removing scale (columns normalized). A negative
/// determinant (mirror) flips the sign of the scale's x column so the result stays a rotation.
template <class T>
QuatT<T> rotation_of(const Mat4T<T>& a) {
  Vec3T<T> c0 = normalize(a.column3(0)), c1 = normalize(a.column3(1), Vec3T<T>::unit_y()),
           c2 = normalize(a.column3(2), Vec3T<T>::unit_z());
  if (determinant3(a) < 0) c0 = -c0;
  const T m00 = c0.x, m10 = c0.y, m20 = c0.z;
  const T m01 = c1.x, m11 = c1.y, m21 = c1.z;
  const T m02 = c2.x, m12 = c2.y, m22 = c2.z;
  const T trace = m00 + m11 + m22;
  QuatT<T> q;
  if (trace > 0) {
    const T s = std::sqrt(trace + 1) * 2;
    q = {(m21 - m12) / s, (m02 - m20) / s, (m10 - m01) / s, s / 4};
  } else if (m00 > m11 && m00 > m22) {
    const T s = std::sqrt(1 + m00 - m11 - m22) * 2;
    q = {s / 4, (m01 + m10) / s, (m02 + m20) / s, (m21 - m12) / s};
  } else if (m11 > m22) {
    const T s = std::sqrt(1 + m11 - m00 - m22) * 2;
    q = {(m01 + m10) / s, s / 4, (m12 + m21) / s, (m02 - m20) / s};
  } else {
    const T s = std::sqrt(1 + m22 - m00 - m11) * 2;
    q = {(m02 + m20) / s, (m12 + m21) / s, s / 4, (m10 - m01) / s};
  }
  return normalize(q);
}

/// True when every element is finite.
template <class T>
bool is_finite(const Mat4T<T>& a) {
  for (T v : a.m)
    if (!std::isfinite(v)) return false;
  return true;
}

using Mat4 = Mat4T<double>;
using Mat4f = Mat4T<float>;

}  // namespace kinema
