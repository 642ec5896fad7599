// Analytic two-bone IK in the solve plane of root, target and up vector (law of cosines).
#include "kinema/ik/two_bone.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "bend_acos.h"
#include "kinema/core/cpu_features.h"

// The solve and the apply are compiled twice: for the build's baseline and, on x86-64, for AVX2
// (chosen at run time). The AVX2 copy is the same C++ with VEX encoding — three-operand
// instructions, no register copies — and no FMA (not enabled), so both give the same bits.
// Every helper on their path is forced inline so that it is compiled into both copies.
#define KINEMA_TWO_BONE_INLINE [[gnu::always_inline]] inline

namespace kinema {
namespace {

// Two square roots or two divisions in one instruction (SSE2: both copies have it); the same
// IEEE results as two scalar ones, at half the divider's time.
struct Pair {
  double a, b;
};
#if defined(__SSE2__)
KINEMA_TWO_BONE_INLINE Pair sqrt_pair(double a, double b) {
  const __m128d r = _mm_sqrt_pd(_mm_set_pd(b, a));
  return {_mm_cvtsd_f64(r), _mm_cvtsd_f64(_mm_unpackhi_pd(r, r))};
}
KINEMA_TWO_BONE_INLINE Pair divide_pair(double na, double da, double nb, double db) {
  const __m128d r = _mm_div_pd(_mm_set_pd(nb, na), _mm_set_pd(db, da));
  return {_mm_cvtsd_f64(r), _mm_cvtsd_f64(_mm_unpackhi_pd(r, r))};
}
#else
KINEMA_TWO_BONE_INLINE Pair sqrt_pair(double a, double b) { return {std::sqrt(a), std::sqrt(b)}; }
KINEMA_TWO_BONE_INLINE Pair divide_pair(double na, double da, double nb, double db) {
  return {na / da, nb / db};
}
#endif

// Any unit vector perpendicular to unit x.
Vec3 any_perpendicular(const Vec3& x) {
  const Vec3 helper = std::abs(x.x) < 0.9 ? Vec3::unit_x() : Vec3::unit_y();
  return normalize(cross(x, helper));
}

// Rotation about the unit `axis` by the angle θ with (cos θ, sin θ) = (cos_part, sin_part), a
// unit pair (to rounding) — the quaternion (axis·sin θ/2, cos θ/2) of Quat::from_axis_angle, to
// rounding, without trigonometry: the half angle has (cos θ/2, sin θ/2) ∝ (1 + c, s) = (s, 1 − c);
// the second form is used for c < 0 so that nothing cancels near θ = ±π.
// The (cos θ/2, sin θ/2) direction unnormalized, and its squared length: the caller scales by
// h = 1/√(squared length) (paired with frame_rotation's root).
struct HalfAngle {
  double ch, sh, length2;
};

KINEMA_TWO_BONE_INLINE HalfAngle half_angle(double sin_part, double cos_part) {
  double ch, sh;  // ∝ cos θ/2 ≥ 0, sin θ/2
  if (cos_part >= 0) {
    ch = 1.0 + cos_part;
    sh = sin_part;
  } else {
    ch = std::abs(sin_part);
    sh = std::copysign(1.0 - cos_part, sin_part);
  }
  return {ch, sh, ch * ch + sh * sh};
}

KINEMA_TWO_BONE_INLINE Quat half_angle_rotation(const Vec3& axis, const HalfAngle& a, double h) {
  return {axis.x * (a.sh * h), axis.y * (a.sh * h), axis.z * (a.sh * h), a.ch * h};
}

// Rotation taking the orthonormal frame (a0, n0, b0 = a0 × n0) to (a1, n1, b1 = a1 × n1):
// R = a1·a0ᵀ + n1·n0ᵀ + b1·b0ᵀ, turned into a quaternion by Shepperd's method: the largest of
// 4w², 4x², 4y², 4z² is read off the diagonal (it is ≥ 1, so nothing cancels) and its row of
// the quaternion times 4·(that component) is scaled by 1/(2·√(4·component²)). One square root,
// one division, no trigonometry; unit to rounding for frames orthonormal to rounding.
// Returned unscaled, with `big`: the rotation is q·(0.5/√big) (the caller pairs the root).
struct Shepperd {
  Quat q;
  double big;
};

KINEMA_TWO_BONE_INLINE Shepperd frame_rotation(const Vec3& a0, const Vec3& n0, const Vec3& b0,
                                               const Vec3& a1, const Vec3& n1, const Vec3& b1) {
  const auto m = [&](double a1i, double n1i, double b1i, double a0j, double n0j, double b0j) {
    return a1i * a0j + n1i * n0j + b1i * b0j;
  };
  const double m00 = m(a1.x, n1.x, b1.x, a0.x, n0.x, b0.x);
  const double m01 = m(a1.x, n1.x, b1.x, a0.y, n0.y, b0.y);
  const double m02 = m(a1.x, n1.x, b1.x, a0.z, n0.z, b0.z);
  const double m10 = m(a1.y, n1.y, b1.y, a0.x, n0.x, b0.x);
  const double m11 = m(a1.y, n1.y, b1.y, a0.y, n0.y, b0.y);
  const double m12 = m(a1.y, n1.y, b1.y, a0.z, n0.z, b0.z);
  const double m20 = m(a1.z, n1.z, b1.z, a0.x, n0.x, b0.x);
  const double m21 = m(a1.z, n1.z, b1.z, a0.y, n0.y, b0.y);
  const double m22 = m(a1.z, n1.z, b1.z, a0.z, n0.z, b0.z);
  const double trace = m00 + m11 + m22;
  Quat q;
  double big;  // 4·(largest component)²
  if (trace > 0) {
    big = 1.0 + trace;
    q = {m21 - m12, m02 - m20, m10 - m01, big};
  } else if (m00 > m11 && m00 > m22) {
    big = 1.0 + m00 - m11 - m22;
    q = {big, m01 + m10, m02 + m20, m21 - m12};
  } else if (m11 > m22) {
    big = 1.0 + m11 - m00 - m22;
    q = {m01 + m10, big, m12 + m21, m02 - m20};
  } else {
    big = 1.0 + m22 - m00 - m11;
    q = {m02 + m20, m12 + m21, big, m10 - m01};
  }
  return {q, big};
}

// Shortest arc between unit vectors a and b — Quat's from_to without normalizing its inputs, and
// without its error near a half turn: there a × b is ⊥ a only to ~ulp/(π − θ), and so is the
// axis, which then misses b by as much (2e-11 at π − θ = 3e-5). For a·b ≥ 0 it is
// (a × h, a·h) normalized, h = a + b. For a·b < 0 it is the half turn about the axis k — a × b
// made ⊥ a, or from_to's axis within ~4.5e-5 rad of π, where from_to takes the half turn — which
// takes a to −a exactly, followed by the small arc −a → b, which lands on b to rounding: the
// same rotation as the shortest arc (both turn about k), where from_to's half turn alone misses
// b by the residual angle.
[[gnu::noinline]] Quat unit_from_to(const Vec3& a, const Vec3& b) {
  const double d = dot(a, b);
  if (d >= 0) {
    const Vec3 h = a + b, c = cross(a, h);
    return normalize(Quat{c.x, c.y, c.z, dot(a, h)});
  }
  Vec3 axis;
  if (d < -1.0 + 1e-9) {
    axis = cross(Vec3::unit_x(), a);
    if (length_squared(axis) < 1e-12) axis = cross(Vec3::unit_y(), a);
  } else {
    axis = cross(a, b);
    axis = axis - a * dot(axis, a);
  }
  axis = normalize(axis);
  const Vec3 h = b - a, c = cross(-a, h);
  return normalize(Quat{c.x, c.y, c.z, dot(-a, h)}) * Quat{axis.x, axis.y, axis.z, 0.0};
}

// slerp(identity, q, w) for w in [0, 1]. The ends, the common case, skip slerp's trigonometry:
// at w = 1 slerp returns normalize(±q) (the hemisphere of the identity) and at w = 0 the
// identity, so the shortcuts give the same values.
Quat weighted(const Quat& q, double w) {
  if (w >= 1) return normalize(q.w < 0 ? -q : q);
  if (w <= 0) return Quat::identity();
  return slerp(Quat::identity(), q, w);
}

// Whether every input is finite: a double is ±∞ or NaN exactly when its exponent bits are all
// ones, and then (bits & exponent mask) + 2⁵² carries into the sign bit. Integer operations
// only, over the 15 contiguous coordinates of root, mid, end, target and pole (which the
// compiler vectorizes) and the few others: no branch per component.
static_assert(offsetof(TwoBoneInput, pole) == offsetof(TwoBoneInput, root) + 4 * sizeof(Vec3) &&
              sizeof(Vec3) == 3 * sizeof(double));

KINEMA_TWO_BONE_INLINE std::uint64_t exponent_carry(const double* v, int n) {
  constexpr std::uint64_t kExponent = 0x7ff0000000000000ull, kCarry = 1ull << 52;
  std::uint64_t bad = 0;
  for (int i = 0; i < n; ++i) {
    std::uint64_t bits;
    std::memcpy(&bits, v + i, sizeof bits);
    bad |= (bits & kExponent) + kCarry;
  }
  return bad;
}

KINEMA_TWO_BONE_INLINE bool finite_input(const TwoBoneInput& in) {
  std::uint64_t bad = exponent_carry(&in.root.x, 15) | exponent_carry(&in.weight, 1) |
                      exponent_carry(&in.soft_distance, 1);
  if (in.match_end_rotation)
    bad |= exponent_carry(&in.end_rotation.x, 4) | exponent_carry(&in.target_rotation.x, 4);
  return !(bad >> 63);
}

// The solve plane: X along T − R, Z = X × (U − R), Y = Z × X (the side the elbow bends to), and
// the distance d from the root to the target (0 when the target is on the root, where X keeps
// the current reach direction). Without a usable pole the plane the chain bends in now, and if
// that too is a line any plane containing X (`pole_fallback` is then set).
struct SolvePlane {
  Vec3 x, y, z;
  double d;
};

// The rare cases of solve_plane: the target on the root, or no usable pole. Kept out of line.
[[gnu::noinline, gnu::cold]] SolvePlane solve_plane_slow(const TwoBoneInput& in, const Vec3& bone1,
                                                         double d_raw, double scale,
                                                         bool& pole_fallback) {
  const Vec3 to_target = in.target - in.root;
  double d = d_raw;
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
  const Vec3 y = cross(z, x);
  return {x, y, cross(x, y), d};
}

// Common case: Z is taken as (T − R) × (U − R) normalized — the same plane, with its square root
// independent of d's, so the two run side by side ( |X × (U − R)| > 1e-9·scale is tested as
// |(T − R) × (U − R)| > 1e-9·scale·d ).
// zc = (T − R) × (U − R), its length and the reciprocals 1/d_raw, 1/|zc| come from the caller
// (computed beside the bones' lengths).
KINEMA_TWO_BONE_INLINE SolvePlane solve_plane(const TwoBoneInput& in, const Vec3& to_target,
                                              double d_raw, const Vec3& zc, double zc_length,
                                              Pair inverse, double scale, const Vec3& bone1,
                                              bool& pole_fallback) {
  if (!(d_raw > 1e-12 * scale) || !(zc_length > 1e-9 * scale * d_raw))
    return solve_plane_slow(in, bone1, d_raw, scale, pole_fallback);
  // zc/|zc| is ⊥ x only to ~ulp/sin(x, U − R): Y = Z × X and then Z = X × Y make the frame
  // orthogonal to rounding (|Y| = |Z| = 1 − O(ulp²/sin²), far below what the solve needs).
  const Vec3 x = to_target * inverse.a, z = zc * inverse.b, y = cross(z, x);
  return {x, y, cross(x, y), d_raw};
}

// Where the end joint goes, as a distance from the root: d clamped into [|l1 − l2|, l1 + l2],
// with soft IK near full extension (`softened` when that leaves it short of the clamp).
KINEMA_TWO_BONE_INLINE double chain_reach(double d, double shortest, double total,
                                          double soft_distance, bool& softened) {
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
// (cos α, ±sin α), α the angle at the root, and bone 2 (cos γ, ∓sin γ), γ the angle at the
// target, in the triangle of sides l1, l2 and reach. `side` picks the sign (the elbow's side).
// The cosines come from the law of cosines and the sines from the triangle's area A (Heron,
// as the product of its four factors, of which only (l1 + l2 − reach) and (reach − |l1 − l2|)
// can be small, each a difference of two numbers): sin α = 2A/(l1·reach),
// sin γ = 2A/(l2·reach). One division and one square root, side by side; the end lands on
// reach·x to rounding (l1·cos α + l2·cos γ = reach, l1·sin α = l2·sin γ by construction).
struct PlanarBones {
  double c1, s1, c2, s2;
};

[[gnu::noinline, gnu::cold]] PlanarBones bend_at_root(double l1, double reach, double side) {
  // reach ≈ 0 (l1 = l2, target on the root): the bones fold back at a right angle to x.
  const double c1 = 0, s1 = side;
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

KINEMA_TWO_BONE_INLINE PlanarBones bend_in_plane(double l1, double l2, double reach, double total,
                                                 double scale, double side) {
  if (!(reach > 1e-12 * scale)) return bend_at_root(l1, reach, side);
  const double inv = 1.0 / (2.0 * l1 * l2 * reach);
  const double difference = l1 - l2;
  const double area16 =
      std::max(0.0, ((total - reach) * (total + reach)) *
                        ((reach - std::abs(difference)) * (reach + std::abs(difference))));
  const double k = side * std::sqrt(area16) * inv;               // ±2A/(l1·l2·reach)
  const double r2 = reach * reach, sq = difference * (l1 + l2);  // l1² − l2²
  return {std::clamp((r2 + sq) * l2 * inv, -1.0, 1.0), k * l2,
          std::clamp((r2 - sq) * l1 * inv, -1.0, 1.0), -k * l1};
}

// The full-weight model-space deltas: `root` takes the old (bone, bend normal) frame to the new
// one, so a hinge stays a hinge; `mid` (applied after `root`) then only bends about the new
// normal. The new bend normal is new_bone1 × new_bone2 = (c1·s2 − s1·c2)·z (x × y = z).
struct ChainDeltas {
  Quat root, mid;
};

// The old chain: bone directions a0 and u0, their bend β0 and the unnormalized bend normal
// a0 × u0. Only input — the out-of-order core computes it beside the target's long chain.
struct OldChain {
  Vec3 a0, u0, n;
  double cos_b0, sin_b0;
};

KINEMA_TWO_BONE_INLINE OldChain old_chain(const Vec3& bone1, const Vec3& bone2,
                                          Pair inverse_lengths) {
  OldChain o;
  o.a0 = bone1 * inverse_lengths.a;
  o.u0 = bone2 * inverse_lengths.b;
  o.n = cross(o.a0, o.u0);
  o.sin_b0 = length(o.n);
  o.cos_b0 = dot(o.a0, o.u0);
  return o;
}

// A straight new chain (or a straight old one): shortest arcs, the root's from the old bone 1 to
// the new, the mid's from the carried old bone 2 to the new (bend only). All four are unit.
[[gnu::noinline]] ChainDeltas shortest_arc_deltas(const Vec3& a0, const Vec3& u0,
                                                  const Vec3& new_bone1, const Vec3& new_bone2) {
  ChainDeltas out;
  out.root = unit_from_to(a0, new_bone1);
  out.mid = unit_from_to(rotate(out.root, u0), new_bone2);
  return out;
}

KINEMA_TWO_BONE_INLINE ChainDeltas full_weight_deltas(const OldChain& o, const Vec3& x,
                                                      const Vec3& y, const Vec3& z,
                                                      const PlanarBones& b, const Vec3& new_bone1,
                                                      const Vec3& new_bone2) {
  const double n1_length = b.c1 * b.s2 - b.s1 * b.c2;
  if (!(o.sin_b0 > 1e-9 && std::abs(n1_length) > 1e-9))
    return shortest_arc_deltas(o.a0, o.u0, new_bone1, new_bone2);
  ChainDeltas out;
  // a0 × u0 is ⊥ a0 only to rounding relative to |a0|·|u0|, i.e. to ~ulp/sin β0 once normalized
  // for a nearly straight chain: one Gram–Schmidt step first keeps (a0, n0, b0) orthonormal.
  const Vec3 n = o.n - o.a0 * dot(o.n, o.a0);
  const Vec3 n0 = n * (1.0 / length(n)), b0 = cross(o.a0, n0);
  // n1 = ±z; b1 = new_bone1 × n1 = ±(s1·x − c1·y) (x × z = −y, y × z = x).
  const double sign = n1_length > 0 ? 1.0 : -1.0;
  const Vec3 n1 = z * sign, b1 = (x * b.s1 - y * b.c1) * sign;
  const Shepperd root = frame_rotation(o.a0, n0, b0, new_bone1, n1, b1);
  // In either frame (a, n, b = a × n) the second bone is cos β·a − sin β·b, β the bend, so the
  // root delta carries the old bone 2 to bend β0 in the new frame and the mid joint turns
  // about n1 by β1 − β0: the shortest arc from the carried old bone 2 to the new one.
  const double cos_b1 = b.c1 * b.c2 + b.s1 * b.s2, sin_b1 = std::abs(n1_length);
  const HalfAngle bend =
      half_angle(sin_b1 * o.cos_b0 - cos_b1 * o.sin_b0, cos_b1 * o.cos_b0 + sin_b1 * o.sin_b0);
  // The two normalizations side by side: q·(0.5/√big) and (ch, sh)/√(ch² + sh²).
  const Pair roots = sqrt_pair(root.big, bend.length2);
  const Pair scales = divide_pair(0.5, roots.a, 1.0, roots.b);
  out.root = root.q * scales.a;
  out.mid = half_angle_rotation(n1, bend, scales.b);
  return out;
}

// The result's deltas when the weight is below 1 or the end rotation is matched: the full-weight
// ones blended with FK by `w` (each slerped from identity), the mid delta composed with the
// root's, and the end delta turned towards the target rotation when the input asks for it.
[[gnu::noinline]] void blended_deltas(const ChainDeltas& full, double w, const TwoBoneInput& in,
                                      TwoBoneResult& r) {
  if (w >= 1) {
    r.root_delta = full.root.w < 0 ? -full.root : full.root;
    r.mid_delta = (full.mid.w < 0 ? -full.mid : full.mid) * r.root_delta;
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

// The common case, full weight without a matched end: slerp(identity, q, 1) is q in the
// identity's hemisphere, and the deltas are unit to rounding as they come (products of unit
// quaternions), so they are not normalized again.
KINEMA_TWO_BONE_INLINE void weighted_deltas(const ChainDeltas& full, double w,
                                            const TwoBoneInput& in, TwoBoneResult& r) {
  if (w >= 1 && !in.match_end_rotation) {
    r.root_delta = full.root.w < 0 ? -full.root : full.root;
    r.mid_delta = (full.mid.w < 0 ? -full.mid : full.mid) * r.root_delta;
    r.end_delta = r.mid_delta;
  } else {
    blended_deltas(full, w, in, r);
  }
}

KINEMA_TWO_BONE_INLINE TwoBoneResult solve(const TwoBoneInput& in) {
  TwoBoneResult r;
  r.mid_position = in.mid;
  r.end_position = in.end;
  if (!finite_input(in)) {
    r.mid_position = is_finite(in.mid) ? in.mid : Vec3{};
    r.end_position = is_finite(in.end) ? in.end : Vec3{};
    return r;  // kInvalidInput, identity deltas
  }
  const Vec3 bone1 = in.mid - in.root, bone2 = in.end - in.mid, to_target = in.target - in.root;
  const Vec3 zc = cross(to_target, in.pole - in.root);  // the solve plane's normal, unnormalized
  // |bone1|, |bone2|, |T − R|, |zc| and their reciprocals: two paired roots, two paired divisions.
  const Pair lengths = sqrt_pair(length_squared(bone1), length_squared(bone2));
  const Pair reach_lengths = sqrt_pair(length_squared(to_target), length_squared(zc));
  const double l1 = lengths.a, l2 = lengths.b, d_raw = reach_lengths.a;
  const double scale = std::max({1.0, l1 + l2, d_raw});
  if (!(l1 > 1e-12 * scale) || !(l2 > 1e-12 * scale)) {
    r.status = TwoBoneStatus::kDegenerate;
    return r;
  }
  const double total = l1 + l2, shortest = std::abs(l1 - l2);
  const OldChain old = old_chain(bone1, bone2, divide_pair(1.0, l1, 1.0, l2));

  const SolvePlane plane =
      solve_plane(in, to_target, d_raw, zc, reach_lengths.b,
                  divide_pair(1.0, d_raw, 1.0, reach_lengths.b), scale, bone1, r.pole_fallback);
  bool softened = false;
  const double reach = chain_reach(plane.d, shortest, total, in.soft_distance, softened);
  const PlanarBones b = bend_in_plane(l1, l2, reach, total, scale, in.elbow_side < 0 ? -1.0 : 1.0);
  const Vec3 new_bone1 = plane.x * b.c1 + plane.y * b.s1;
  const Vec3 new_bone2 = plane.x * b.c2 + plane.y * b.s2;
  const ChainDeltas full =
      full_weight_deltas(old, plane.x, plane.y, plane.z, b, new_bone1, new_bone2);
  const double w = std::clamp(in.weight, 0.0, 1.0);
  weighted_deltas(full, w, in, r);
  if (w >= 1) {  // the new bones themselves (what the deltas give, to rounding)
    r.mid_position = in.root + new_bone1 * l1;
    r.end_position = r.mid_position + new_bone2 * l2;
  } else {
    r.mid_position = in.root + rotate(r.root_delta, bone1);
    r.end_position = r.mid_position + rotate(r.mid_delta, bone2);
  }

  const bool reachable = plane.d >= shortest && plane.d <= total;
  r.status = !reachable ? TwoBoneStatus::kUnreachable
                        : (softened ? TwoBoneStatus::kSoftened : TwoBoneStatus::kReached);
  r.reached = r.status == TwoBoneStatus::kReached;
  // Inline (no libm call): within 1.5 ulp of acos, the same bits in both copies (bend_acos.h).
  r.mid_bend = ik_detail::bend_acos(std::clamp(b.c1 * b.c2 + b.s1 * b.s2, -1.0, 1.0));
  return r;
}

// Quaternions (x, y, z, w) as four-lane vectors for apply: the same IEEE operations in the same
// order as Quat's scalar product (a − b computed as a + (−b), which is exact), so each lane gets
// the bits the scalar code would; two SSE halves or one AVX register. The functions are inline
// into apply only, so the vector ABI warning (given at the end of the file) does not concern them.
#pragma GCC diagnostic ignored "-Wpsabi"
using QuatLanes = double __attribute__((vector_size(32)));

KINEMA_TWO_BONE_INLINE QuatLanes lanes(const Quat& q) {
  QuatLanes v;
  static_assert(sizeof(Quat) == sizeof(QuatLanes));
  std::memcpy(&v, &q, sizeof v);
  return v;
}

KINEMA_TWO_BONE_INLINE Quat quat(const QuatLanes& v) { return {v[0], v[1], v[2], v[3]}; }

// a·b: w_a·b + x_a·(b_w, −b_z, b_y, −b_x) + y_a·(b_z, b_w, −b_x, −b_y) + z_a·(−b_y, b_x, b_w,
// −b_z), summed left to right as Quat::operator* does.
KINEMA_TWO_BONE_INLINE QuatLanes product(const QuatLanes& a, const QuatLanes& b) {
  const QuatLanes bx = __builtin_shufflevector(b, b, 3, 2, 1, 0) * QuatLanes{1, -1, 1, -1};
  const QuatLanes by = __builtin_shufflevector(b, b, 2, 3, 0, 1) * QuatLanes{1, 1, -1, -1};
  const QuatLanes bz = __builtin_shufflevector(b, b, 1, 0, 3, 2) * QuatLanes{-1, 1, 1, -1};
  return ((a[3] * b + a[0] * bx) + a[1] * by) + a[2] * bz;
}

KINEMA_TWO_BONE_INLINE QuatLanes conjugated(const QuatLanes& q) {
  return q * QuatLanes{-1, -1, -1, 1};
}

KINEMA_TWO_BONE_INLINE double norm2(const QuatLanes& q) {
  const QuatLanes s = q * q;
  return (s[0] + s[1]) + (s[2] + s[3]);
}

// 1/√n for n = 1 + ε with |ε| < 1e-8 (a product of squared norms of unit quaternions): 1 − ε/2,
// which misses by 3ε²/8 < 4e-17, below half an ulp of 1. No square root, no division.
KINEMA_TWO_BONE_INLINE double near_one_rsqrt(double n) { return 1.5 - 0.5 * n; }

// q·s with s = 1/|q| predicted as scale·(1/√n): `scale` is 1/√(the squared norms of the factors
// known before the deltas), computed off the deltas' path, and n the deltas' squared norms. The
// prediction is |q| to rounding (|a·b| = |a|·|b|), so the result is unit to rounding, like
// normalize(q), without a square root and a division after the last product. Outside the
// prediction's range (n not within 1e-8 of 1, scale not finite and moderate) it is normalize(q).
KINEMA_TWO_BONE_INLINE Quat normalized_as_predicted(const QuatLanes& q, double scale, double n) {
  if (std::abs(n - 1.0) < 1e-8 && scale > 1e-100 && scale < 1e100)
    return quat(q * (scale * near_one_rsqrt(n)));
  return normalize(quat(q));
}

KINEMA_TWO_BONE_INLINE bool apply(const TwoBoneResult& result, std::span<const int> parents,
                                  int root, int mid, int end, std::span<Transform> local) {
  if (result.status == TwoBoneStatus::kDegenerate || result.status == TwoBoneStatus::kInvalidInput)
    return false;
  const int n = static_cast<int>(parents.size());
  if (static_cast<int>(local.size()) != n || root < 0 || !(root < mid) || !(mid < end) || end >= n)
    return false;
  // Rotation from `ancestor`'s frame to `j`'s parent frame: the product of the local rotations
  // of the joints strictly between them (ancestor −1: the model frame), 0 when there are none
  // (q left as it is), 1 when q holds it, −1 when j does not descend from ancestor or the parents
  // are not parents-first.
  const auto between = [&](int j, int ancestor, QuatLanes& q) {
    int found = 0;
    for (int p = parents[j]; p != ancestor; p = parents[p]) {
      if (p < ancestor || p >= j) return -1;
      const QuatLanes l = lanes(local[p].rotation);
      q = found ? product(l, q) : l;
      found = 1;
      j = p;
    }
    return found;
  };
  QuatLanes q_root{}, q_mid{}, q_end{};
  const int k_root = between(root, -1, q_root), k_mid = between(mid, root, q_mid),
            k_end = between(end, mid, q_end);
  if (k_root < 0 || k_mid < 0 || k_end < 0) return false;
  // A model delta D applied to a joint of model rotation M = P·L (P its parent's) gives it the
  // local rotation P⁻¹·D·M; a joint below a turned chain ancestor a owes D_a⁻¹·D_j instead of D:
  //   root: Q⁻¹·(D_r·M_r)               (Q = q_root, M_r = Q·L_r; P = Q)
  //   mid:  (D_r·P_m)⁻¹·(D_m·M_m)       (P_m = M_r·q_mid, M_m = P_m·L_m)
  // with ⁻¹ taken as the conjugate: P is the product of `local` rotations, not normalized, and a
  // norm k ≠ 1 only scales the result by k², which the normalization removes. Everything but the
  // deltas is known first, so after them come two products side by side, one more and a scale:
  // the scale 1/|result| is predicted from the factors' squared norms (|a·b|² = |a|²·|b|²), the
  // part without the deltas computed before them. When the mid joint is the root's child
  // (P_m = M_r), D_r·P_m is the root's D_r·M_r. Products with an empty `between` are skipped.
  const QuatLanes l_root = lanes(local[root].rotation), l_mid = lanes(local[mid].rotation);
  const QuatLanes m_root = k_root ? product(q_root, l_root) : l_root;
  const QuatLanes p_mid = k_mid ? product(m_root, q_mid) : m_root;
  const QuatLanes m_mid = product(p_mid, l_mid);
  const double n_m_root = norm2(m_root);
  const double scale_root =
      1.0 / std::sqrt(k_root ? norm2(q_root) * n_m_root : n_m_root);  // 1/(|Q|·|M_r|)
  const double scale_mid = 1.0 / std::sqrt((k_mid ? norm2(p_mid) : n_m_root) * norm2(m_mid));
  const QuatLanes d_root = lanes(result.root_delta), d_mid = lanes(result.mid_delta);
  const double n_d_root = norm2(d_root), n_d_mid = norm2(d_mid);
  const QuatLanes turned_root = product(d_root, m_root);                         // D_r·M_r
  const QuatLanes turned_parent = k_mid ? product(d_root, p_mid) : turned_root;  // D_r·P_m
  const QuatLanes turned_mid = product(d_mid, m_mid);                            // D_m·M_m
  local[root].rotation = normalized_as_predicted(
      k_root ? product(conjugated(q_root), turned_root) : turned_root, scale_root, n_d_root);
  local[mid].rotation = normalized_as_predicted(product(conjugated(turned_parent), turned_mid),
                                                scale_mid, n_d_root * n_d_mid);
  // Without a matched end rotation end_delta equals mid_delta: the end joint keeps its local
  // rotation (its correction is the identity).
  if (!(result.end_delta == result.mid_delta)) {
    const Quat p_end = quat(k_end ? product(m_mid, q_end) : m_mid);
    const Quat turn = conjugate(result.mid_delta) * result.end_delta;
    local[end].rotation = normalize(conjugate(p_end) * (turn * (p_end * local[end].rotation)));
  }
  return true;
}
// solve_two_bone_local's FK: the model positions of root, mid and end (and the end's model
// rotation when it is matched) into `chain`, from `local` along the end's ancestors. False when
// the indices or spans are invalid, mid and root are not ancestors of end in that order, the
// parents are not parents-first on the way, a scale on the way is not uniform, or the chain is
// deeper than 64 joints.
KINEMA_TWO_BONE_INLINE bool chain_fk(std::span<const int> parents, std::span<const Transform> local,
                                     int root, int mid, int end, TwoBoneInput& chain) {
  // apply's checks, written out again on purpose: one shared helper let GCC fold the two copies
  // in solve_local, which changed its register allocation (about 90 more stack accesses) and made
  // solve_two_bone_local 16 % slower (172 → 200 ns on the bench's leg).
  const int n = static_cast<int>(parents.size());
  if (static_cast<int>(local.size()) != n || root < 0 || !(root < mid) || !(mid < end) || end >= n)
    return false;
  constexpr int kMaxDepth = 64;
  int path[kMaxDepth];  // the end's ancestors, end first
  int depth = 0, mid_at = -1, root_at = -1;
  for (int c = end; c >= 0; c = parents[static_cast<size_t>(c)]) {
    if (depth == kMaxDepth || parents[static_cast<size_t>(c)] >= c) return false;
    if (c == mid) mid_at = depth;
    if (c == root) root_at = depth;
    path[depth++] = c;
  }
  if (mid_at < 0 || root_at < mid_at) return false;
  // Top-down over uniform scales (four-lane products, Quat's operations per lane). The model
  // rotations R_i = l_0·…·l_i are the only dependent chain, and each position hangs off its
  // parent's: to halve that chain's depth, R_i = R_(i−2)·(l_(i−1)·l_i), where the pair's product
  // does not wait on the chain (two interleaved chains, each a product per two joints).
  Vec3 position = local[static_cast<size_t>(path[depth - 1])].translation;
  QuatLanes before_parent{}, parent{}, previous_local{};  // R_(i−2), R_(i−1), l_(i−1)
  double scale = 1;
  for (int i = 0; i < depth; ++i) {
    const int k = depth - 1 - i;  // path index: the top joint first
    const Transform& l = local[static_cast<size_t>(path[k])];
    if (!(l.scale.x == l.scale.y && l.scale.y == l.scale.z)) return false;
    if (i > 0) position = position + scale * rotate(quat(parent), l.translation);
    scale *= l.scale.x;
    if (k == root_at) chain.root = position;
    if (k == mid_at) chain.mid = position;
    if (k == 0 && !chain.match_end_rotation) break;  // the end's own rotation is not needed
    const QuatLanes l_i = lanes(l.rotation);
    const QuatLanes rotation = i == 0   ? l_i
                               : i == 1 ? product(parent, l_i)
                                        : product(before_parent, product(previous_local, l_i));
    before_parent = parent;
    parent = rotation;
    previous_local = l_i;
  }
  chain.end = position;
  if (chain.match_end_rotation) chain.end_rotation = normalize(quat(parent));
  return true;
}
// The whole of solve_two_bone_local in one function per copy, so that the FK's positions reach
// the solve and the solve's deltas the apply in registers rather than through copies of the
// input and the result.
KINEMA_TWO_BONE_INLINE TwoBoneResult solve_local(const TwoBoneInput& in,
                                                 std::span<const int> parents, int root, int mid,
                                                 int end, std::span<Transform> local) {
  TwoBoneInput chain = in;
  if (!chain_fk(parents, local, root, mid, end, chain)) return {};
  const TwoBoneResult result = solve(chain);
  apply(result, parents, root, mid, end, local);
  return result;
}
TwoBoneResult solve_local_portable(const TwoBoneInput& in, std::span<const int> parents, int root,
                                   int mid, int end, std::span<Transform> local) {
  return solve_local(in, parents, root, mid, end, local);
}

TwoBoneResult solve_portable(const TwoBoneInput& in) { return solve(in); }
bool apply_portable(const TwoBoneResult& result, std::span<const int> parents, int root, int mid,
                    int end, std::span<Transform> local) {
  return apply(result, parents, root, mid, end, local);
}

#if defined(__x86_64__) && defined(__GNUC__)
[[gnu::target("avx2")]] TwoBoneResult solve_avx2(const TwoBoneInput& in) { return solve(in); }
[[gnu::target("avx2")]] bool apply_avx2(const TwoBoneResult& result, std::span<const int> parents,
                                        int root, int mid, int end, std::span<Transform> local) {
  return apply(result, parents, root, mid, end, local);
}
[[gnu::target("avx2")]] TwoBoneResult solve_local_avx2(const TwoBoneInput& in,
                                                       std::span<const int> parents, int root,
                                                       int mid, int end,
                                                       std::span<Transform> local) {
  return solve_local(in, parents, root, mid, end, local);
}
bool cpu_has_avx2() { return cpu_features().avx2; }
#else
TwoBoneResult solve_local_avx2(const TwoBoneInput& in, std::span<const int> parents, int root,
                               int mid, int end, std::span<Transform> local) {
  return solve_local(in, parents, root, mid, end, local);
}
TwoBoneResult solve_avx2(const TwoBoneInput& in) { return solve(in); }
bool apply_avx2(const TwoBoneResult& result, std::span<const int> parents, int root, int mid,
                int end, std::span<Transform> local) {
  return apply(result, parents, root, mid, end, local);
}
bool cpu_has_avx2() { return false; }
#endif

// -1: not asked yet; 0: the baseline copy; 1: the AVX2 copy.
std::atomic<int> g_use_avx2{-1};

bool use_avx2() {
  int use = g_use_avx2.load(std::memory_order_relaxed);
  if (use < 0) {
    use = cpu_has_avx2() ? 1 : 0;
    g_use_avx2.store(use, std::memory_order_relaxed);
  }
  return use == 1;
}

}  // namespace

TwoBoneResult solve_two_bone(const TwoBoneInput& in) {
  return use_avx2() ? solve_avx2(in) : solve_portable(in);
}

bool apply_two_bone(const TwoBoneResult& result, std::span<const int> parents, int root, int mid,
                    int end, std::span<Transform> local) {
  return use_avx2() ? apply_avx2(result, parents, root, mid, end, local)
                    : apply_portable(result, parents, root, mid, end, local);
}

TwoBoneResult solve_two_bone_local(const TwoBoneInput& in, std::span<const int> parents, int root,
                                   int mid, int end, std::span<Transform> local) {
  return use_avx2() ? solve_local_avx2(in, parents, root, mid, end, local)
                    : solve_local_portable(in, parents, root, mid, end, local);
}

bool set_two_bone_avx2(bool allowed) {
  g_use_avx2.store(allowed && cpu_has_avx2() ? 1 : 0, std::memory_order_relaxed);
  return use_avx2();
}

TwoBoneCorrections two_bone_local_corrections(const TwoBoneResult& result, const Quat& root_model,
                                              const Quat& mid_model, const Quat& end_model) {
  TwoBoneCorrections c;
  if (result.status == TwoBoneStatus::kDegenerate || result.status == TwoBoneStatus::kInvalidInput)
    return c;
  // A model delta D applied to a joint whose model rotation is M = P·L changes L to
  // P⁻¹·D·M = L·(M⁻¹·D·M); a joint below a turned ancestor only owes the difference D_a⁻¹·D_j.
  // Products of unit quaternions stay unit to rounding: no normalization needed.
  const auto conjugated = [](const Quat& m, const Quat& d) { return conjugate(m) * d * m; };
  c.root = conjugated(root_model, result.root_delta);
  c.mid = conjugated(mid_model, conjugate(result.root_delta) * result.mid_delta);
  // Without a matched end rotation end_delta equals mid_delta: nothing to correct.
  if (!(result.end_delta == result.mid_delta))
    c.end = conjugated(end_model, conjugate(result.mid_delta) * result.end_delta);
  return c;
}

}  // namespace kinema
