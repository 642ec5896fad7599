// The pose vector of learned motion matching (kinema/match/learned.h): per joint a local
// translation and the first two columns of its rotation matrix (Zhou et al.'s continuous 6D
// representation), then the root step and the two foot contacts.
//
// Decoding rebuilds an orthonormal frame from the two columns by Gram–Schmidt (the first column
// normalized, the second made orthogonal to it and normalized, the third their cross product)
// and the quaternion from that matrix by Shepperd's method: the largest of w², x², y², z² is
// taken from the trace or a diagonal element, the others from off-diagonal sums, so no division
// by a small number. Degenerate columns (zero, parallel, not finite) fall back to a perpendicular
// axis: a network's output always decodes to a rotation. Done in double, stored as float.
#include <cassert>
#include <cmath>

#include "kinema/match/learned.h"
#include "kinema/math/mat3.h"
#include "kinema/math/quat.h"
#include "kinema/math/vec3.h"

namespace kinema::match {

namespace learned_detail {

/// The rotation whose matrix has first columns along `a` and (after Gram–Schmidt) `b`.
Quatf rotation_from_columns(const Vec3& a, const Vec3& b) {
  const Vec3 x = normalize(a, Vec3::unit_x());
  Vec3 y = b - x * dot(x, b);
  const double y_length = length(y);
  y = y_length > 1e-12 && std::isfinite(y_length) ? y / y_length : any_perpendicular(x);
  const Vec3 z = cross(x, y);
  // m[row][col] with columns x, y, z.
  const double m00 = x.x, m10 = x.y, m20 = x.z;
  const double m01 = y.x, m11 = y.y, m21 = y.z;
  const double m02 = z.x, m12 = z.y, m22 = z.z;
  const double trace = m00 + m11 + m22;
  Quat q;
  if (trace >= m00 && trace >= m11 && trace >= m22) {
    const double s = std::sqrt(trace + 1) * 2;  // 4w
    q = {(m21 - m12) / s, (m02 - m20) / s, (m10 - m01) / s, s / 4};
  } else if (m00 >= m11 && m00 >= m22) {
    const double s = std::sqrt(1 + m00 - m11 - m22) * 2;  // 4x
    q = {s / 4, (m01 + m10) / s, (m02 + m20) / s, (m21 - m12) / s};
  } else if (m11 >= m22) {
    const double s = std::sqrt(1 + m11 - m00 - m22) * 2;  // 4y
    q = {(m01 + m10) / s, s / 4, (m12 + m21) / s, (m02 - m20) / s};
  } else {
    const double s = std::sqrt(1 + m22 - m00 - m11) * 2;  // 4z
    q = {(m02 + m20) / s, (m12 + m21) / s, s / 4, (m10 - m01) / s};
  }
  return Quatf(normalize(q));
}

}  // namespace learned_detail

void decode_pose(std::span<const float> pose_vector, std::span<Transformf> local, RootStep& step,
                 bool contacts[2]) {
  const size_t joints = local.size();
  assert(pose_vector.size() >= pose_vector_size(int(joints)));
  const float* p = pose_vector.data();
  for (size_t j = 0; j < joints; ++j, p += 9) {
    local[j].translation = {p[0], p[1], p[2]};
    local[j].rotation =
        learned_detail::rotation_from_columns(Vec3(p[3], p[4], p[5]), Vec3(p[6], p[7], p[8]));
    local[j].scale = {1, 1, 1};
  }
  step = {p[0], p[1], p[2]};
  contacts[0] = p[3] >= 0.5f;
  contacts[1] = p[4] >= 0.5f;
}

void encode_pose(std::span<const Transformf> local, const RootStep& step, const bool contacts[2],
                 std::span<float> pose_vector) {
  const size_t joints = local.size();
  assert(pose_vector.size() >= pose_vector_size(int(joints)));
  float* p = pose_vector.data();
  for (size_t j = 0; j < joints; ++j, p += 9) {
    const Vec3f& t = local[j].translation;
    const Mat3 r = Mat3::from_quat(normalize(Quat(local[j].rotation)));
    p[0] = t.x;
    p[1] = t.y;
    p[2] = t.z;
    for (int row = 0; row < 3; ++row) {
      p[3 + row] = float(r.m[row][0]);
      p[6 + row] = float(r.m[row][1]);
    }
  }
  p[0] = step.x;
  p[1] = step.z;
  p[2] = step.turn;
  p[3] = contacts[0] ? 1.0f : 0.0f;
  p[4] = contacts[1] ? 1.0f : 0.0f;
}

}  // namespace kinema::match
