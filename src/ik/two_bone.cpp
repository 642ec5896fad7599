// Analytic two-bone IK in seed 002's solve plane.
#include "kinema/ik/two_bone.h"

#include <algorithm>
#include <cmath>

namespace kinema {
namespace {

// Any unit vector perpendicular to unit x.
Vec3 any_perpendicular(const Vec3& x) {
  const Vec3 helper = std::abs(x.x) < 0.9 ? Vec3::unit_x() : Vec3::unit_y();
  return normalize(cross(x, helper));
}

// Rotation taking the frame (a0, n0) to (a1, n1) (unit a's, n's perpendicular to them): the
// shortest arc a0 → a1, then a turn about a1 that brings the carried n0 onto n1.
Quat frame_rotation(const Vec3& a0, const Vec3& n0, const Vec3& a1, const Vec3& n1) {
  const Quat q1 = from_to(a0, a1);
  const Vec3 m = rotate(q1, n0);
  const double angle = std::atan2(dot(cross(m, n1), a1), dot(m, n1));
  return normalize(Quat::from_axis_angle(a1, angle) * q1);
}

bool finite_input(const TwoBoneInput& in) {
  return is_finite(in.root) && is_finite(in.mid) && is_finite(in.end) && is_finite(in.target) &&
         is_finite(in.pole) && std::isfinite(in.weight) && std::isfinite(in.soft_distance) &&
         (!in.match_end_rotation || (is_finite(in.end_rotation) && is_finite(in.target_rotation)));
}

}  // namespace

TwoBoneResult solve_two_bone(const TwoBoneInput& in) {
  TwoBoneResult r;
  r.mid_position = in.mid;
  r.end_position = in.end;
  if (!finite_input(in)) {
    r.mid_position = is_finite(in.mid) ? in.mid : Vec3{};
    r.end_position = is_finite(in.end) ? in.end : Vec3{};
    return r;  // kInvalidInput, identity deltas
  }
  const Vec3 bone1 = in.mid - in.root, bone2 = in.end - in.mid;
  const double l1 = length(bone1), l2 = length(bone2);
  const double scale = std::max({1.0, l1 + l2, length(in.target - in.root)});
  if (!(l1 > 1e-12 * scale) || !(l2 > 1e-12 * scale)) {
    r.status = TwoBoneStatus::kDegenerate;
    return r;
  }
  const double total = l1 + l2, shortest = std::abs(l1 - l2);

  // Solve plane (seed 002): X along T − R, Z = X × (U − R), Y = Z × X.
  const Vec3 to_target = in.target - in.root;
  double d = length(to_target);
  Vec3 x;
  if (d > 1e-12 * scale) {
    x = to_target / d;
  } else {  // target on the root: keep the current reach direction
    d = 0;
    x = normalize(in.end - in.root, normalize(bone1));
  }
  Vec3 z = cross(x, in.pole - in.root);
  if (!(length(z) > 1e-9 * scale)) {
    r.pole_fallback = true;
    z = cross(x, bone1);  // the plane the chain bends in now
    if (!(length(z) > 1e-9 * scale)) z = any_perpendicular(x);
  }
  z = normalize(z);
  const Vec3 y = cross(z, x);

  // Reach: clamp into [|l1 − l2|, l1 + l2], with soft IK near full extension.
  double reach = std::clamp(d, shortest, total);
  bool softened = false;
  const double s = std::max(0.0, in.soft_distance);
  if (s > 0) {
    const double start = total - std::min(s, total);
    if (d > start) {
      const double soft = start + s * (1.0 - std::exp(-(d - start) / s));
      softened = soft < reach;
      reach = std::min(reach, soft);
    }
  }
  reach = std::max(reach, shortest);

  // Law of cosines for the angle at the root; guard reach = 0 (l1 = l2, target on the root).
  double cos_a = 0;
  if (reach > 1e-12 * scale) {
    cos_a = std::clamp((l1 * l1 + reach * reach - l2 * l2) / (2.0 * l1 * reach), -1.0, 1.0);
  }
  const double sin_a = std::sqrt(std::max(0.0, 1.0 - cos_a * cos_a));
  const double side = in.elbow_side < 0 ? -1.0 : 1.0;
  const Vec3 new_mid = in.root + x * (l1 * cos_a) + y * (side * l1 * sin_a);
  const Vec3 new_end = in.root + x * reach;
  const Vec3 new_bone1 = normalize(new_mid - in.root, x);
  const Vec3 new_bone2 = normalize(new_end - new_mid, x);
  r.mid_bend = std::acos(std::clamp(dot(new_bone1, new_bone2), -1.0, 1.0));

  // Root delta: old (bone, bend normal) frame → new one, so a hinge stays a hinge.
  const Vec3 a0 = bone1 / l1;
  const Vec3 n0 = cross(a0, bone2 / l2);
  const Vec3 n1 = cross(new_bone1, new_bone2);
  Quat root_delta;
  if (length(n0) > 1e-9 && length(n1) > 1e-9) {
    root_delta = frame_rotation(a0, normalize(n0), new_bone1, normalize(n1));
  } else {
    root_delta = from_to(a0, new_bone1);
  }
  const Quat mid_local = from_to(rotate(root_delta, bone2), new_bone2);  // bend only

  // Blend with FK by weight: each delta slerped from identity.
  const double w = std::clamp(in.weight, 0.0, 1.0);
  const Quat id = Quat::identity();
  r.root_delta = slerp(id, root_delta, w);
  r.mid_delta = normalize(slerp(id, mid_local, w) * r.root_delta);
  r.end_delta = r.mid_delta;
  if (in.match_end_rotation) {
    const Quat old_end = normalize(in.end_rotation);
    const Quat carried = r.mid_delta * old_end;
    r.end_delta = normalize(slerp(carried, normalize(in.target_rotation), w) * conjugate(old_end));
  }
  r.mid_position = in.root + rotate(r.root_delta, bone1);
  r.end_position = r.mid_position + rotate(r.mid_delta, bone2);

  const bool reachable = d >= shortest && d <= total;
  r.status = !reachable ? TwoBoneStatus::kUnreachable
                        : (softened ? TwoBoneStatus::kSoftened : TwoBoneStatus::kReached);
  r.reached = r.status == TwoBoneStatus::kReached;
  return r;
}

bool apply_two_bone(const TwoBoneResult& result, std::span<const int> parents, int root, int mid,
                    int end, std::span<Transform> local) {
  if (result.status == TwoBoneStatus::kDegenerate || result.status == TwoBoneStatus::kInvalidInput)
    return false;
  const int n = static_cast<int>(parents.size());
  if (static_cast<int>(local.size()) != n || root < 0 || !(root < mid) || !(mid < end) || end >= n)
    return false;
  // mid must descend from root, end from mid.
  const auto descends = [&](int j, int ancestor) {
    for (int p = parents[j]; p >= 0; p = parents[p]) {
      if (p >= j) return false;  // not parents-first
      if (p == ancestor) return true;
      j = p;
    }
    return false;
  };
  if (!descends(mid, root) || !descends(end, mid)) return false;
  // Old model rotation of joint j's parent (rotations only).
  const auto parent_rotation = [&](int j) {
    Quat q = Quat::identity();
    for (int p = parents[j]; p >= 0; p = parents[p]) q = local[p].rotation * q;
    return normalize(q);
  };
  const Quat p_root = parent_rotation(root), p_mid = parent_rotation(mid),
             p_end = parent_rotation(end);
  // local_j ← P_j⁻¹ · D_a⁻¹ · D_j · P_j · local_j (D_a: nearest chain ancestor's delta).
  const auto update = [](const Quat& p, const Quat& d_a, const Quat& d_j, const Quat& l) {
    return normalize(conjugate(p) * conjugate(d_a) * d_j * p * l);
  };
  const Quat id = Quat::identity();
  local[root].rotation = update(p_root, id, result.root_delta, local[root].rotation);
  local[mid].rotation = update(p_mid, result.root_delta, result.mid_delta, local[mid].rotation);
  local[end].rotation = update(p_end, result.mid_delta, result.end_delta, local[end].rotation);
  return true;
}

}  // namespace kinema
