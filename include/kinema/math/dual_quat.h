// kinema/math/dual_quat.h — unit dual quaternions for rigid transforms (DQS skinning).
//
// q = real + ε·dual, with real the rotation and dual = ½·(t, 0)·real for translation t.
#pragma once

#include "kinema/math/quat.h"
#include "kinema/math/transform.h"

namespace kinema {

template <class T>
struct DualQuatT {
  QuatT<T> real{0, 0, 0, 1};
  QuatT<T> dual{0, 0, 0, 0};

  static constexpr DualQuatT identity() { return {}; }

  /// Rigid transform (rotation r, then translation t) as a unit dual quaternion.
  static constexpr DualQuatT from_rigid(const QuatT<T>& r, const Vec3T<T>& t) {
    return {r, QuatT<T>{t.x, t.y, t.z, 0} * r * T(0.5)};
  }
  /// From a Transform; its scale is ignored (DQS handles scale in a separate pre-scale stage).
  static constexpr DualQuatT from_transform(const TransformT<T>& x) {
    return from_rigid(x.rotation, x.translation);
  }

  /// Translation 2·dual·real* (valid for a unit dual quaternion).
  constexpr Vec3T<T> translation() const {
    const QuatT<T> t = dual * conjugate(real) * T(2);
    return {t.x, t.y, t.z};
  }
  constexpr TransformT<T> to_transform() const { return {translation(), real, {1, 1, 1}}; }

  constexpr DualQuatT operator*(const DualQuatT& b) const {
    return {real * b.real, real * b.dual + dual * b.real};
  }
  constexpr DualQuatT operator*(T s) const { return {real * s, dual * s}; }
  constexpr DualQuatT operator+(const DualQuatT& b) const { return {real + b.real, dual + b.dual}; }

  /// Applies the rigid motion to a point.
  constexpr Vec3T<T> transform_point(const Vec3T<T>& p) const {
    return rotate(real, p) + translation();
  }
};

/// Divides by the real part's length, so a blended dual quaternion becomes a rigid transform
/// again; also removes the dual part's component along the real part (keeps it a unit DQ).
template <class T>
DualQuatT<T> normalize(const DualQuatT<T>& q) {
  const T len = length(q.real);
  if (!(len > T(0))) return DualQuatT<T>::identity();
  const QuatT<T> r = q.real * (T(1) / len);
  QuatT<T> d = q.dual * (T(1) / len);
  d = d - r * dot(r, d);
  return {r, d};
}

using DualQuat = DualQuatT<double>;
using DualQuatf = DualQuatT<float>;

}  // namespace kinema
