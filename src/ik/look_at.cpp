// Look-at spread over a chain with per-joint cones.
#include "kinema/ik/look_at.h"

#include <algorithm>
#include <cmath>

#include "kinema/ik/joint_limits.h"

namespace kinema {

Quat look_rotation(const Vec3& forward, const Vec3& direction, const Vec3& up) {
  const double lf = length(forward), ld = length(direction);
  if (!(lf > 0) || !(ld > 0) || !std::isfinite(lf) || !std::isfinite(ld)) return Quat::identity();
  const Vec3 f = forward / lf, d = direction / ld;
  const Vec3 c = cross(f, d);
  const double s = length(c), cosine = dot(f, d);
  const double angle = std::atan2(s, cosine);
  if (s > 1e-12) return Quat::from_axis_angle(c / s, angle);
  if (cosine > 0) return Quat::identity();
  // Antiparallel: turn about up (made perpendicular to f), else about any perpendicular.
  Vec3 axis = is_finite(up) ? up - f * dot(up, f) : Vec3{};
  if (!(length(axis) > 1e-9)) {
    axis = cross(f, std::abs(f.x) < 0.9 ? Vec3::unit_x() : Vec3::unit_y());
  }
  return Quat::from_axis_angle(normalize(axis), kPi);
}

LookAtResult look_at(const Vec3& eye, const Vec3& forward, const Vec3& target,
                     std::span<const double> weights, std::span<const double> cone_half_angles,
                     std::span<Quat> deltas) {
  LookAtResult r;
  std::fill(deltas.begin(), deltas.end(), Quat::identity());
  if (weights.size() != deltas.size() ||
      (!cone_half_angles.empty() && cone_half_angles.size() != deltas.size()))
    return r;
  if (!is_finite(eye) || !is_finite(forward) || !is_finite(target) || !(length(forward) > 0))
    return r;
  double weight_sum = 0;
  for (const double w : weights) {
    if (!std::isfinite(w) || w < 0) return r;
    weight_sum += w;
  }
  if (weight_sum > 1.0 + 1e-9) return r;
  for (const double c : cone_half_angles) {
    if (!std::isfinite(c) || c < 0 || c > kPi) return r;
  }
  const Vec3 to_target = target - eye;
  if (!(length(to_target) > 1e-12)) {
    r.status = LookAtStatus::kTargetAtEye;
    return r;
  }

  r.full = look_rotation(forward, to_target);
  Vec3 axis;
  to_axis_angle(r.full, axis, r.angle);

  // Each share is a pure swing about an axis ⟂ forward, so a circular swing cone about forward
  // (twist unrestricted) clamps exactly its angle.
  SwingTwistLimit cone;
  cone.twist_axis = normalize(forward);
  cone.swing_axis_a = normalize(
      cross(cone.twist_axis, std::abs(cone.twist_axis.x) < 0.9 ? Vec3::unit_x() : Vec3::unit_y()));
  cone.swing_axis_b = cross(cone.twist_axis, cone.swing_axis_a);
  double applied = 0;
  bool clamped = weight_sum < 1.0 - 1e-9 && r.angle > 0;
  for (std::size_t i = 0; i < deltas.size(); ++i) {
    Quat share = slerp(Quat::identity(), r.full, weights[i]);
    if (!cone_half_angles.empty()) {
      cone.swing_a = cone.swing_b = cone_half_angles[i];
      const Quat limited = project(cone, share);
      if (angle_between(limited, share) > 1e-12) clamped = true;
      share = limited;
    }
    deltas[i] = share;
    applied += 2.0 * std::atan2(length(share.vec()), std::abs(share.w));
  }
  r.remainder_angle = std::max(0.0, r.angle - applied);
  r.remainder = Quat::from_axis_angle(axis, r.remainder_angle);
  r.status = clamped ? LookAtStatus::kClamped : LookAtStatus::kOk;
  return r;
}

}  // namespace kinema
