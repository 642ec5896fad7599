// Internal: the eight-lane building blocks of the AVX2 + FMA skinning kernels (the
// src/skin/*_avx2.cpp files): arithmetic on eight vertices at once (lane i = vertex i of a
// block), 3-vectors as structure of arrays, the 8×4 transposition, a block of eight stored
// vertices, and a blended dual quaternion as a rigid transform. A block reads its inputs from a
// SkinMesh's planar copies (three loads per attribute) or as packed xyz triples (five shuffles
// per eight vertices) and writes its outputs as packed triples.
//
// Only files compiled with -mavx2 -mfma include this (CMakeLists.txt gives the flags to
// src/skin/*_avx2.cpp). Everything here is in an anonymous namespace, so each such file has its
// own copies: no inline function with external linkage is compiled with AVX2 here, and the linker
// cannot pick an AVX2 copy of one for code that runs on older CPUs.
#pragma once

#include "skinning_kernels.h"

#if KINEMA_SKIN_AVX2

#if !defined(__AVX2__) || !defined(__FMA__)
#error "skinning_avx2.h is for the *_avx2.cpp files, compiled with -mavx2 -mfma"
#endif

#include <immintrin.h>

#include <cstring>

namespace kinema::skin_detail {

namespace {

using W = __m256;  // eight lanes: lane i = vertex i of the block
using H = __m128;  // one vertex's row or quaternion

KINEMA_SKIN_INLINE W splat(float f) { return _mm256_set1_ps(f); }
KINEMA_SKIN_INLINE W add(W a, W b) { return _mm256_add_ps(a, b); }
KINEMA_SKIN_INLINE W sub(W a, W b) { return _mm256_sub_ps(a, b); }
KINEMA_SKIN_INLINE W mul(W a, W b) { return _mm256_mul_ps(a, b); }
KINEMA_SKIN_INLINE W fmadd(W a, W b, W c) { return _mm256_fmadd_ps(a, b, c); }
/// a·b − c.
KINEMA_SKIN_INLINE W fmsub(W a, W b, W c) { return _mm256_fmsub_ps(a, b, c); }
/// `w` negated where `s` is negative.
KINEMA_SKIN_INLINE W sign_from(W w, W s) {
  return _mm256_xor_ps(w, _mm256_and_ps(s, splat(-0.0f)));
}
KINEMA_SKIN_INLINE W select(W mask, W yes, W no) { return _mm256_blendv_ps(no, yes, mask); }
/// 1/√x: the hardware estimate refined by one Newton step (relative error ≈ 1e-7).
KINEMA_SKIN_INLINE W rsqrt(W x) {
  const W r = _mm256_rsqrt_ps(x);
  return mul(mul(splat(0.5f), r), _mm256_fnmadd_ps(mul(x, r), r, splat(3.0f)));
}

/// Eight 3-vectors as structure of arrays.
struct X3 {
  W x, y, z;
};

KINEMA_SKIN_INLINE W dot(const X3& a, const X3& b) {
  return fmadd(a.x, b.x, fmadd(a.y, b.y, mul(a.z, b.z)));
}
KINEMA_SKIN_INLINE X3 cross(const X3& a, const X3& b) {
  return {fmsub(a.y, b.z, mul(a.z, b.y)), fmsub(a.z, b.x, mul(a.x, b.z)),
          fmsub(a.x, b.y, mul(a.y, b.x))};
}
/// v / |v| lane by lane; `fallback` where |v|² is not a normal float.
KINEMA_SKIN_INLINE X3 unit(const X3& v, const X3& fallback) {
  const W l2 = dot(v, v);
  const W ok = _mm256_cmp_ps(l2, splat(1e-36f), _CMP_GT_OQ);
  const W inv = rsqrt(_mm256_max_ps(l2, splat(1e-36f)));
  const X3 scaled{mul(v.x, inv), mul(v.y, inv), mul(v.z, inv)};
  // Degenerate lanes are rare: one branch per block instead of three blends.
  if (__builtin_expect(_mm256_movemask_ps(ok) == 0xFF, 1)) return scaled;
  return {select(ok, scaled.x, fallback.x), select(ok, scaled.y, fallback.y),
          select(ok, scaled.z, fallback.z)};
}

/// Eight packed xyz triples (24 floats) as structure of arrays: each 128-bit half holds four
/// vertices, regrouped by five shuffles.
KINEMA_SKIN_INLINE X3 load_xyz8(const float* p) {
  const W m03 = _mm256_set_m128(_mm_loadu_ps(p + 12), _mm_loadu_ps(p));      // x0y0z0x1
  const W m14 = _mm256_set_m128(_mm_loadu_ps(p + 16), _mm_loadu_ps(p + 4));  // y1z1x2y2
  const W m25 = _mm256_set_m128(_mm_loadu_ps(p + 20), _mm_loadu_ps(p + 8));  // z2x3y3z3
  const W xy = _mm256_shuffle_ps(m14, m25, _MM_SHUFFLE(2, 1, 3, 2));         // x2y2x3y3
  const W yz = _mm256_shuffle_ps(m03, m14, _MM_SHUFFLE(1, 0, 2, 1));         // y0z0y1z1
  return {_mm256_shuffle_ps(m03, xy, _MM_SHUFFLE(2, 0, 3, 0)),
          _mm256_shuffle_ps(yz, xy, _MM_SHUFFLE(3, 1, 2, 0)),
          _mm256_shuffle_ps(yz, m25, _MM_SHUFFLE(3, 0, 3, 1))};
}

/// The inverse of load_xyz8.
KINEMA_SKIN_INLINE void store_xyz8(float* p, const X3& v) {
  const W xy = _mm256_shuffle_ps(v.x, v.y, _MM_SHUFFLE(2, 0, 2, 0));  // x0x2y0y2
  const W yz = _mm256_shuffle_ps(v.y, v.z, _MM_SHUFFLE(3, 1, 3, 1));  // y1y3z1z3
  const W zx = _mm256_shuffle_ps(v.z, v.x, _MM_SHUFFLE(3, 1, 2, 0));  // z0z2x1x3
  const W m03 = _mm256_shuffle_ps(xy, zx, _MM_SHUFFLE(2, 0, 2, 0));   // x0y0z0x1
  const W m14 = _mm256_shuffle_ps(yz, xy, _MM_SHUFFLE(3, 1, 2, 0));   // y1z1x2y2
  const W m25 = _mm256_shuffle_ps(zx, yz, _MM_SHUFFLE(3, 1, 3, 1));   // z2x3y3z3
  _mm256_storeu_ps(p, _mm256_permute2f128_ps(m03, m14, 0x20));
  _mm256_storeu_ps(p + 8, _mm256_permute2f128_ps(m25, m03, 0x30));
  _mm256_storeu_ps(p + 16, _mm256_permute2f128_ps(m14, m25, 0x31));
}

/// Four register pairs [a_i | a_{i+4}] → four registers, register c holding component c of
/// the eight vectors (vertices 0–3 in the low half, 4–7 in the high half).
KINEMA_SKIN_INLINE void transpose8(const W* a, W* out) {
  const W t0 = _mm256_unpacklo_ps(a[0], a[1]), t1 = _mm256_unpackhi_ps(a[0], a[1]);
  const W t2 = _mm256_unpacklo_ps(a[2], a[3]), t3 = _mm256_unpackhi_ps(a[2], a[3]);
  out[0] = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
  out[1] = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
  out[2] = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
  out[3] = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
}

KINEMA_SKIN_INLINE W pack(H low, H high) { return _mm256_set_m128(high, low); }

/// One block of eight stored vertices [v, v + live). Full blocks (Full: live = 8) read their
/// inputs in place; a tail block reads a copy whose unused slots repeat its last vertex, so every
/// lane computes a real vertex with the same operations wherever the block starts. Outputs go
/// in place when the block is full and stored order is output order, else one by one through
/// `order`.
template <bool Full>
struct Block {
  size_t v, live;
  const uint32_t* order;

  /// Stored index of lane i.
  KINEMA_SKIN_INLINE size_t vertex(size_t i) const {
    if constexpr (Full) return v + i;
    return v + (i < live ? i : live - 1);
  }
  /// Eight vertices' xyz from `planar` (SkinMesh::planar_*, n vertices) when it is there and the
  /// block is full: three loads; else regrouped from the packed `base`.
  KINEMA_SKIN_INLINE X3 load(const Vec3f* base, const float* planar, size_t n) const {
    if (Full && planar)
      return {_mm256_loadu_ps(planar + v), _mm256_loadu_ps(planar + n + v),
              _mm256_loadu_ps(planar + 2 * n + v)};
    return load(base);
  }
  KINEMA_SKIN_INLINE X3 load(const Vec3f* base) const {
    if constexpr (Full) return load_xyz8(&base[v].x);
    float copy[24];
    for (size_t i = 0; i < 8; ++i) std::memcpy(copy + 3 * i, &base[vertex(i)].x, 12);
    return load_xyz8(copy);
  }
  KINEMA_SKIN_INLINE void store(Vec3f* base, const X3& value) const {
    if (Full && !order) {
      store_xyz8(&base[v].x, value);
      return;
    }
    // Scattered (or a tail): each vertex's xyz from one transposition, written with an 8-byte
    // and a 4-byte store straight from registers. (Through a packed copy on the stack, the
    // 12-byte reloads straddle the 16-byte halves of its 32-byte stores and miss store-to-load
    // forwarding: that cost ~0.8 ns a vertex per attribute.)
    W c[4] = {value.x, value.y, value.z, _mm256_setzero_ps()}, t[4];
    transpose8(c, t);  // t[i] = [lane i | lane i + 4], xyz0 each
    const size_t count = Full ? 8 : live;
    for (size_t i = 0; i < count; ++i) {
      const H r = i < 4 ? _mm256_castps256_ps128(t[i]) : _mm256_extractf128_ps(t[i - 4], 1);
      float* o = &base[order ? order[v + i] : v + i].x;
      _mm_storel_pi(reinterpret_cast<__m64*>(o), r);
      _mm_store_ss(o + 2, _mm_movehl_ps(r, r));
    }
  }
};

/// Whether the eight vertices whose K = 1…4 joints start at `j` all have the same joints in the
/// same order (one or two compares of the 8·K indices).
template <int K>
KINEMA_SKIN_INLINE bool same_joints(const uint16_t* j) {
  static_assert(K >= 1 && K <= 4, "shared-joint blocks of one to four influences");
  const auto load16 = [](const uint16_t* p) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  };
  const auto load32 = [](const uint16_t* p) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  };
  if constexpr (K == 1) {
    return _mm_movemask_epi8(_mm_cmpeq_epi16(load16(j), _mm_set1_epi16(short(j[0])))) == 0xFFFF;
  } else if constexpr (K == 2) {
    int first;
    std::memcpy(&first, j, 4);
    return _mm256_movemask_epi8(_mm256_cmpeq_epi32(load32(j), _mm256_set1_epi32(first))) == -1;
  } else if constexpr (K == 3) {
    // The 24 indices equal themselves shifted by one vertex: j[i] = j[i + 3] for i < 21, checked
    // on [0, 16) and [13, 21).
    const __m256i a = _mm256_cmpeq_epi16(load32(j), load32(j + 3));
    const __m128i b = _mm_cmpeq_epi16(load16(j + 13), load16(j + 16));
    return (~unsigned(_mm256_movemask_epi8(a)) | (unsigned(_mm_movemask_epi8(b)) ^ 0xFFFFu)) == 0;
  } else {
    long long first;
    std::memcpy(&first, j, 8);
    const __m256i f = _mm256_set1_epi64x(first);
    const __m256i eq =
        _mm256_and_si256(_mm256_cmpeq_epi64(load32(j), f), _mm256_cmpeq_epi64(load32(j + 16), f));
    return _mm256_movemask_epi8(eq) == -1;
  }
}

/// The K = 1…4 weights of eight vertices (8·K floats, vertex by vertex) as K vectors: w[k] lane i
/// = weight k of vertex i.
template <int K>
KINEMA_SKIN_INLINE void deinterleave_weights(const float* weights, W* w) {
  if constexpr (K == 1) {
    w[0] = _mm256_loadu_ps(weights);
  } else if constexpr (K == 2) {
    // The even and odd floats of 16, in order.
    const W a = _mm256_loadu_ps(weights), b = _mm256_loadu_ps(weights + 8);
    w[0] = _mm256_castpd_ps(_mm256_permute4x64_pd(
        _mm256_castps_pd(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0))), 0xD8));
    w[1] = _mm256_castpd_ps(_mm256_permute4x64_pd(
        _mm256_castps_pd(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1))), 0xD8));
  } else if constexpr (K == 3) {
    const X3 t = load_xyz8(weights);  // eight packed triples
    w[0] = t.x, w[1] = t.y, w[2] = t.z;
  } else {
    W a[4];
    for (int i = 0; i < 4; ++i) a[i] = _mm256_loadu2_m128(weights + 4 * (i + 4), weights + 4 * i);
    transpose8(a, w);
  }
}

/// The blended matrices of eight vertices with the same K = 1…4 joints (same_joints), as
/// lbs_blend returns them (m[4·r + c] = entry (r, c) of the eight): every entry is
/// w0·S0[e] + w1·S1[e] + … (fused in that order) with the eight vertices' weights as vectors and
/// the entry broadcast. The same operations on the same numbers as the per-vertex blends (rows or
/// columns), so the same bits, without their transposition. `palette`: rows (12 floats a joint),
/// or with Columns the column copy (column_palette_avx2: 16 floats a joint, entry (r, c) at
/// 4·c + r).
template <int K, bool Columns>
KINEMA_SKIN_INLINE void uniform_blend(const float* palette, const uint16_t* j, const float* weights,
                                      W* m) {
  constexpr size_t kStride = Columns ? 16 : 12;
  const auto at = [](int e) { return Columns ? 4 * (e % 4) + e / 4 : e; };
  W w[K];
  deinterleave_weights<K>(weights, w);
  const float* s[K];
  for (int k = 0; k < K; ++k) s[k] = palette + kStride * size_t(j[k]);
  // In registers, each entry written once at the end (m may alias the palette as far as the
  // compiler knows).
  W sum[12];
#pragma GCC unroll 12
  for (int e = 0; e < 12; ++e) sum[e] = mul(w[0], _mm256_broadcast_ss(s[0] + at(e)));
#pragma GCC unroll 4
  for (int k = 1; k < K; ++k) {
#pragma GCC unroll 12
    for (int e = 0; e < 12; ++e) sum[e] = fmadd(w[k], _mm256_broadcast_ss(s[k] + at(e)), sum[e]);
  }
#pragma GCC unroll 12
  for (int e = 0; e < 12; ++e) m[e] = sum[e];
}

/// A blended dual quaternion (real part r, w_r; dual part d, w_d; eight lanes, not normalized)
/// as what rotating and translating by it takes. With n = |real|², rotating by the unnormalized
/// blend and dividing by n is the rotation by its unit quaternion, v′ = v + s·r × (r × v + w_r·v)
/// with s = 2/n, and the translation is s·(w_r·d − w_d·r + r × d). The one reciprocal runs beside
/// the cross products instead of in front of them (a shorter dependency chain than normalizing
/// the eight components first). A zero blend (n not a normal float) gives s = 0: the identity.
struct RigidBlend {
  X3 r;
  W rw, s;
  X3 t;
};

KINEMA_SKIN_INLINE RigidBlend rigid_blend(const W* br, const W* bd) {
  RigidBlend b;
  b.r = {br[0], br[1], br[2]};
  b.rw = br[3];
  const X3 d{bd[0], bd[1], bd[2]};
  const W dw = bd[3];
  const W n = fmadd(b.r.x, b.r.x, fmadd(b.r.y, b.r.y, fmadd(b.r.z, b.r.z, mul(b.rw, b.rw))));
  const W ok = _mm256_cmp_ps(n, splat(1e-36f), _CMP_GT_OQ);
  const W estimate = _mm256_rcp_ps(n);  // refined by one Newton step: 2/n to ≈ 1e-7
  b.s = _mm256_and_ps(ok, mul(add(estimate, estimate), _mm256_fnmadd_ps(n, estimate, splat(2.0f))));
  const X3 rd = cross(b.r, d);
  b.t = {mul(b.s, add(fmsub(b.rw, d.x, mul(dw, b.r.x)), rd.x)),
         mul(b.s, add(fmsub(b.rw, d.y, mul(dw, b.r.y)), rd.y)),
         mul(b.s, add(fmsub(b.rw, d.z, mul(dw, b.r.z)), rd.z))};
  return b;
}

}  // namespace

}  // namespace kinema::skin_detail

#endif  // KINEMA_SKIN_AVX2
