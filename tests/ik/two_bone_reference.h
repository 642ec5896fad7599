// tests/ik/two_bone_reference.h — the double-precision two-bone solve and apply of kinema up to
// commit 8b07023 (src/ik/two_bone.cpp as it was then, unchanged but for `inline` and this
// namespace), kept as the reference that the faster solve is tested against
// (two_bone_test.cpp, "AgreesWithReference...").
#pragma once

#include <algorithm>
#include <cmath>
#include <span>

#include "kinema/ik/two_bone.h"

namespace kinema::two_bone_reference {
namespace {

// Any unit vector perpendicular to unit x.
Vec3 any_perpendicular(const Vec3& x) {
  const Vec3 helper = std::abs(x.x) < 0.9 ? Vec3::unit_x() : Vec3::unit_y();
  return normalize(cross(x, helper));
}

// Rotation about the unit `axis` by the angle θ = atan2(sin_part, cos_part) — the quaternion
// (axis·sin θ/2, cos θ/2) of Quat::from_axis_angle, to rounding, without trigonometry: the half
// angle has (cos θ/2, sin θ/2) ∝ (r + c, s) = (s, r − c) (r = |(c, s)|); the second form is used
// for c < 0 so that nothing cancels near θ = ±π.
Quat axis_angle_of(const Vec3& axis, double sin_part, double cos_part) {
  const double r = std::sqrt(sin_part * sin_part + cos_part * cos_part);
  if (!(r > 0)) return Quat::identity();  // atan2(0, 0) = 0
  double ch, sh;                          // ∝ cos θ/2 ≥ 0, sin θ/2
  if (cos_part >= 0) {
    ch = r + cos_part;
    sh = sin_part;
  } else {
    ch = std::abs(sin_part);
    sh = std::copysign(r - cos_part, sin_part);
  }
  const double h = 1.0 / std::sqrt(ch * ch + sh * sh);
  return {axis.x * (sh * h), axis.y * (sh * h), axis.z * (sh * h), ch * h};
}

// Unit quaternion of the rotation matrix with rows (m00 m01 m02), (m10 m11 m12), (m20 m21 m22)
// (Shepperd's method: the largest of 4w², 4x², 4y², 4z² is taken from the diagonal, so there is
// no cancellation).
Quat quat_of_matrix(double m00, double m01, double m02, double m10, double m11, double m12,
                    double m20, double m21, double m22) {
  Quat q;
  const double trace = m00 + m11 + m22;
  if (trace > 0) {
    const double t = std::sqrt(trace + 1.0), s = 0.5 / t;
    q = {(m21 - m12) * s, (m02 - m20) * s, (m10 - m01) * s, 0.5 * t};
  } else if (m00 > m11 && m00 > m22) {
    const double t = std::sqrt(1.0 + m00 - m11 - m22), s = 0.5 / t;
    q = {0.5 * t, (m01 + m10) * s, (m02 + m20) * s, (m21 - m12) * s};
  } else if (m11 > m22) {
    const double t = std::sqrt(1.0 + m11 - m00 - m22), s = 0.5 / t;
    q = {(m01 + m10) * s, 0.5 * t, (m12 + m21) * s, (m02 - m20) * s};
  } else {
    const double t = std::sqrt(1.0 + m22 - m00 - m11), s = 0.5 / t;
    q = {(m02 + m20) * s, (m12 + m21) * s, 0.5 * t, (m10 - m01) * s};
  }
  return q;  // unit to rounding (the caller normalizes)
}

// Rotation taking the orthonormal frame (a0, n0) to (a1, n1) (unit a's, n's perpendicular to
// them): R = a1·a0ᵀ + n1·n0ᵀ + b1·b0ᵀ with b = a × n. The same rotation as the shortest arc
// a0 → a1 followed by the turn about a1 that brings the carried n0 onto n1, with one square root
// instead of trigonometry.
Quat frame_rotation(const Vec3& a0, const Vec3& n0, const Vec3& a1, const Vec3& n1) {
  const Vec3 b0 = cross(a0, n0), b1 = cross(a1, n1);
  const auto m = [&](double a1i, double n1i, double b1i, int j) {
    const double a0j = j == 0 ? a0.x : j == 1 ? a0.y : a0.z;
    const double n0j = j == 0 ? n0.x : j == 1 ? n0.y : n0.z;
    const double b0j = j == 0 ? b0.x : j == 1 ? b0.y : b0.z;
    return a1i * a0j + n1i * n0j + b1i * b0j;
  };
  return quat_of_matrix(m(a1.x, n1.x, b1.x, 0), m(a1.x, n1.x, b1.x, 1), m(a1.x, n1.x, b1.x, 2),
                        m(a1.y, n1.y, b1.y, 0), m(a1.y, n1.y, b1.y, 1), m(a1.y, n1.y, b1.y, 2),
                        m(a1.z, n1.z, b1.z, 0), m(a1.z, n1.z, b1.z, 1), m(a1.z, n1.z, b1.z, 2));
}

// slerp(identity, q, w) for w in [0, 1]. The ends, the common case, skip slerp's trigonometry:
// at w = 1 slerp returns normalize(±q) (the hemisphere of the identity) and at w = 0 the
// identity, so the shortcuts give the same values.
Quat weighted(const Quat& q, double w) {
  if (w >= 1) return normalize(q.w < 0 ? -q : q);
  if (w <= 0) return Quat::identity();
  return slerp(Quat::identity(), q, w);
}

bool finite_input(const TwoBoneInput& in) {
  return is_finite(in.root) && is_finite(in.mid) && is_finite(in.end) && is_finite(in.target) &&
         is_finite(in.pole) && std::isfinite(in.weight) && std::isfinite(in.soft_distance) &&
         (!in.match_end_rotation || (is_finite(in.end_rotation) && is_finite(in.target_rotation)));
}

// The solve plane: X along T − R, Z = X × (U − R), Y = Z × X (the side the elbow bends to), and
// the distance d from the root to the target (0 when the target is on the root, where X keeps
// the current reach direction). Without a usable pole the plane the chain bends in now, and if
// that too is a line any plane containing X (`pole_fallback` is then set).
struct SolvePlane {
  Vec3 x, y, z;
  double d;
};

SolvePlane solve_plane(const TwoBoneInput& in, const Vec3& bone1, double scale,
                       bool& pole_fallback) {
  const Vec3 to_target = in.target - in.root;
  double d = length(to_target);
  Vec3 x;
  if (d > 1e-12 * scale) {
    x = to_target * (1.0 / d);
  } else {  // target on the root: keep the current reach direction
    d = 0;
    x = normalize(in.end - in.root, normalize(bone1));
  }
  Vec3 z = cross(x, in.pole - in.root);
  double z_length = length(z);
  if (!(z_length > 1e-9 * scale)) {
    pole_fallback = true;
    z = cross(x, bone1);  // the plane the chain bends in now
    z_length = length(z);
    if (!(z_length > 1e-9 * scale)) {
      z = any_perpendicular(x);
      z_length = length(z);
    }
  }
  z = z * (1.0 / z_length);
  return {x, cross(z, x), z, d};
}

// Where the end joint goes, as a distance from the root: d clamped into [|l1 − l2|, l1 + l2],
// with soft IK near full extension (`softened` when that leaves it short of the clamp).
double chain_reach(double d, double shortest, double total, double soft_distance, bool& softened) {
  double reach = std::clamp(d, shortest, total);
  const double s = std::max(0.0, soft_distance);
  if (s > 0) {
    const double start = total - std::min(s, total);
    if (d > start) {
      const double soft = start + s * (1.0 - std::exp(-(d - start) / s));
      softened = soft < reach;
      reach = std::min(reach, soft);
    }
  }
  return std::max(reach, shortest);
}

// The new bones' unit directions in the solve plane's (x, y) coordinates: bone 1 is
// (cos α, ±sin α), α the angle at the root by the law of cosines, and bone 2 runs from the new
// mid joint l1·(c1, s1) to the new end (reach, 0). `side` picks the sign (the elbow's side).
struct PlanarBones {
  double c1, s1, c2, s2;
};

PlanarBones bend_in_plane(double l1, double l2, double reach, double scale, double side) {
  // Guard reach = 0 (l1 = l2, target on the root).
  double cos_a = 0;
  if (reach > 1e-12 * scale) {
    cos_a = std::clamp((l1 * l1 + reach * reach - l2 * l2) / (2.0 * l1 * reach), -1.0, 1.0);
  }
  const double sin_a = std::sqrt(std::max(0.0, 1.0 - cos_a * cos_a));
  const double c1 = cos_a, s1 = side * sin_a;
  double c2 = reach - l1 * c1, s2 = -l1 * s1;
  const double len2 = std::sqrt(c2 * c2 + s2 * s2);
  if (len2 > 0) {
    c2 *= 1.0 / len2;
    s2 *= 1.0 / len2;
  } else {
    c2 = 1;
    s2 = 0;
  }
  return {c1, s1, c2, s2};
}

// The full-weight model-space deltas: `root` takes the old (bone, bend normal) frame to the new
// one, so a hinge stays a hinge; `mid` (applied after `root`) then only bends about the new
// normal. The new bend normal is new_bone1 × new_bone2 = (c1·s2 − s1·c2)·z (x × y = z).
struct ChainDeltas {
  Quat root, mid;
};

ChainDeltas full_weight_deltas(const Vec3& bone1, const Vec3& bone2, double l1, double l2,
                               const Vec3& z, const PlanarBones& b, const Vec3& new_bone1,
                               const Vec3& new_bone2) {
  const Vec3 a0 = bone1 * (1.0 / l1), u0 = bone2 * (1.0 / l2);
  const Vec3 n0 = cross(a0, u0);
  const double n0_length = length(n0), n1_length = b.c1 * b.s2 - b.s1 * b.c2;
  ChainDeltas out;
  if (n0_length > 1e-9 && std::abs(n1_length) > 1e-9) {
    const Vec3 n1 = n1_length > 0 ? z : -z;
    out.root = frame_rotation(a0, n0 * (1.0 / n0_length), new_bone1, n1);
    // In either frame (a, n, b = a × n) the second bone is cos β·a − sin β·b, β the bend, so the
    // root delta carries the old bone 2 to bend β0 in the new frame and the mid joint turns
    // about n1 by β1 − β0: the shortest arc from the carried old bone 2 to the new one.
    const double cos_b0 = dot(a0, u0), sin_b0 = n0_length;
    const double cos_b1 = b.c1 * b.c2 + b.s1 * b.s2, sin_b1 = std::abs(n1_length);
    out.mid =
        axis_angle_of(n1, sin_b1 * cos_b0 - cos_b1 * sin_b0, cos_b1 * cos_b0 + sin_b1 * sin_b0);
  } else {
    out.root = from_to(a0, new_bone1);
    out.mid = from_to(rotate(out.root, bone2), new_bone2);  // bend only
  }
  return out;
}

// The result's deltas: the full-weight ones blended with FK by `w` (each slerped from identity),
// the mid delta composed with the root's, and the end delta turned towards the target rotation
// when the input asks for it.
void weighted_deltas(const ChainDeltas& full, double w, const TwoBoneInput& in, TwoBoneResult& r) {
  if (w >= 1) {  // the common case, inline; the mid delta is normalized once, after the product
    r.root_delta = normalize(full.root.w < 0 ? -full.root : full.root);
    r.mid_delta = normalize((full.mid.w < 0 ? -full.mid : full.mid) * r.root_delta);
  } else {
    r.root_delta = weighted(full.root, w);
    r.mid_delta = normalize(weighted(full.mid, w) * r.root_delta);
  }
  r.end_delta = r.mid_delta;
  if (in.match_end_rotation) {
    const Quat old_end = normalize(in.end_rotation);
    const Quat carried = r.mid_delta * old_end;
    r.end_delta = normalize(slerp(carried, normalize(in.target_rotation), w) * conjugate(old_end));
  }
}

}  // namespace

inline TwoBoneResult solve_two_bone(const TwoBoneInput& in) {
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

  const SolvePlane plane = solve_plane(in, bone1, scale, r.pole_fallback);
  bool softened = false;
  const double reach = chain_reach(plane.d, shortest, total, in.soft_distance, softened);
  const PlanarBones b = bend_in_plane(l1, l2, reach, scale, in.elbow_side < 0 ? -1.0 : 1.0);
  const Vec3 new_bone1 = plane.x * b.c1 + plane.y * b.s1;
  const Vec3 new_bone2 = plane.x * b.c2 + plane.y * b.s2;
  r.mid_bend = std::acos(std::clamp(b.c1 * b.c2 + b.s1 * b.s2, -1.0, 1.0));
  const ChainDeltas full =
      full_weight_deltas(bone1, bone2, l1, l2, plane.z, b, new_bone1, new_bone2);
  weighted_deltas(full, std::clamp(in.weight, 0.0, 1.0), in, r);
  r.mid_position = in.root + rotate(r.root_delta, bone1);
  r.end_position = r.mid_position + rotate(r.mid_delta, bone2);

  const bool reachable = plane.d >= shortest && plane.d <= total;
  r.status = !reachable ? TwoBoneStatus::kUnreachable
                        : (softened ? TwoBoneStatus::kSoftened : TwoBoneStatus::kReached);
  r.reached = r.status == TwoBoneStatus::kReached;
  return r;
}

inline bool apply_two_bone(const TwoBoneResult& result, std::span<const int> parents, int root,
                           int mid, int end, std::span<Transform> local) {
  if (result.status == TwoBoneStatus::kDegenerate || result.status == TwoBoneStatus::kInvalidInput)
    return false;
  const int n = static_cast<int>(parents.size());
  if (static_cast<int>(local.size()) != n || root < 0 || !(root < mid) || !(mid < end) || end >= n)
    return false;
  // Rotation from `ancestor`'s frame to `j`'s parent frame: the product of the local rotations
  // of the joints strictly between them (ancestor −1: the model frame). False when j does not
  // descend from ancestor or the parents are not parents-first.
  const auto between = [&](int j, int ancestor, Quat& q) {
    q = Quat::identity();
    for (int p = parents[j]; p != ancestor; p = parents[p]) {
      if (p < ancestor || p >= j) return false;
      q = local[p].rotation * q;
      j = p;
    }
    return true;
  };
  Quat q_root, q_mid, q_end;
  if (!between(root, -1, q_root) || !between(mid, root, q_mid) || !between(end, mid, q_end))
    return false;
  // Old model rotations of the three joints' parents (rotations only), each from the one above.
  // Not normalized: a norm k ≠ 1 only scales P⁻¹·X·P (written P*·X·P) by k², which the final
  // normalization removes, so three square roots and divisions leave the dependency chain.
  const Quat& p_root = q_root;
  const Quat p_mid = p_root * local[root].rotation * q_mid;
  const Quat p_end = p_mid * local[mid].rotation * q_end;
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

}  // namespace kinema::two_bone_reference
