// kinema/math/transform.h — translation / rotation / scale (TRS) transforms.
//
// A Transform maps a point p to t + r·(s ⊙ p), i.e. the matrix T·R·S of a glTF node.
#pragma once

#include "kinema/math/mat4.h"
#include "kinema/math/quat.h"
#include "kinema/math/vec3.h"

namespace kinema {

template <class T>
struct TransformT {
  Vec3T<T> translation{0, 0, 0};
  QuatT<T> rotation{0, 0, 0, 1};
  Vec3T<T> scale{1, 1, 1};

  static constexpr TransformT identity() { return {}; }
  constexpr bool operator==(const TransformT&) const = default;

  template <class U>
  constexpr explicit operator TransformT<U>() const {
    return {Vec3T<U>(translation), QuatT<U>(rotation), Vec3T<U>(scale)};
  }

  constexpr Mat4T<T> to_matrix() const { return Mat4T<T>::trs(translation, rotation, scale); }

  /// Decomposes an affine matrix into TRS. Shear is lost; a mirror goes into scale.x < 0.
  static TransformT from_matrix(const Mat4T<T>& m) {
    TransformT r;
    r.translation = m.translation_part();
    r.scale = {length(m.column3(0)), length(m.column3(1)), length(m.column3(2))};
    if (determinant3(m) < 0) r.scale.x = -r.scale.x;
    r.rotation = rotation_of(m);
    return r;
  }

  constexpr Vec3T<T> transform_point(const Vec3T<T>& p) const {
    return translation + rotate(rotation, mul(scale, p));
  }
  constexpr Vec3T<T> transform_vector(const Vec3T<T>& v) const {
    return rotate(rotation, mul(scale, v));
  }
};

/// Composition: (a * b) applies b first, then a — `model = parent_model * local`.
/// Exact for uniform or axis-aligned scale; with non-uniform scale under a rotated child the
/// true result has shear, which TRS cannot hold (use matrices there).
template <class T>
constexpr TransformT<T> operator*(const TransformT<T>& a, const TransformT<T>& b) {
  return {a.translation + rotate(a.rotation, mul(a.scale, b.translation)), a.rotation * b.rotation,
          mul(a.scale, b.scale)};
}

/// Inverse transform (exact when scale is uniform).
template <class T>
TransformT<T> inverse(const TransformT<T>& a) {
  const Vec3T<T> inv_s{T(1) / a.scale.x, T(1) / a.scale.y, T(1) / a.scale.z};
  const QuatT<T> inv_r = conjugate(a.rotation);
  return {mul(inv_s, rotate(inv_r, -a.translation)), inv_r, inv_s};
}

/// Rigid inverse (ignores scale): fast inverse for rotation + translation only.
template <class T>
constexpr TransformT<T> rigid_inverse(const TransformT<T>& a) {
  const QuatT<T> inv_r = conjugate(a.rotation);
  return {rotate(inv_r, -a.translation), inv_r, {1, 1, 1}};
}

template <class T>
bool is_finite(const TransformT<T>& a) {
  return is_finite(a.translation) && is_finite(a.rotation) && is_finite(a.scale);
}

using Transform = TransformT<double>;
using Transformf = TransformT<float>;

}  // namespace kinema
