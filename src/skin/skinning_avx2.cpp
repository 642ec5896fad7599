// The AVX2 + FMA skinning kernels: eight vertices at a time. Each vertex's blend — the 3×4 rows
// Σ w·S, or the dual quaternion Σ ±w·q — is built with 4-wide fused multiply-adds (weights
// broadcast straight from memory); the eight blends are then transposed so that every matrix
// entry holds the eight vertices, and the transforms, the cofactor (normal) matrix, DQS's
// normalization and rotation, and the renormalization run lane by lane. Inputs come from a
// SkinMesh's planar copies (three loads per attribute) or as packed xyz triples (five shuffles
// per eight vertices); outputs are written as packed triples. Full blocks of LBS with normals or
// tangents and of signed DQS run in chunks, pass by pass (lbs_chunk, dqs_signed_chunk), so that
// blocks overlap instead of each waiting on its own long dependency chain. Positions alone, and
// LBS with LbsNormals::blended_matrix, skip the transpositions: they are blended one vertex at a
// time from a column-major copy of the palette, as ozz does, two columns per 8-wide register.
//
// CMake compiles this file alone with -mavx2 -mfma and defines KINEMA_SKIN_AVX2; the kernels
// run only when the CPU reports both (skinning_simd.cpp checks once). Everything here is in an
// anonymous namespace and calls no inline function of a shared header, so the linker cannot
// pick an AVX2 copy of some inline function for code that runs on older CPUs.
#include "skinning_kernels.h"

#if KINEMA_SKIN_AVX2

#if !defined(__AVX2__) || !defined(__FMA__)
#error "skinning_avx2.cpp must be compiled with -mavx2 -mfma"
#endif

#include <immintrin.h>

#include <algorithm>
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

/// unit(v, input) stored to `dst`; the input is read only when a lane is degenerate.
template <bool Full>
KINEMA_SKIN_INLINE void store_unit(const Block<Full>& block, Vec3f* dst, const Vec3f* input,
                                   const X3& v) {
  const W l2 = dot(v, v);
  const W ok = _mm256_cmp_ps(l2, splat(1e-36f), _CMP_GT_OQ);
  const W inv = rsqrt(_mm256_max_ps(l2, splat(1e-36f)));
  X3 scaled{mul(v.x, inv), mul(v.y, inv), mul(v.z, inv)};
  if (__builtin_expect(_mm256_movemask_ps(ok) != 0xFF, 0)) {
    const X3 f = block.load(input);
    scaled = {select(ok, scaled.x, f.x), select(ok, scaled.y, f.y), select(ok, scaled.z, f.z)};
  }
  block.store(dst, scaled);
}

/// Σ w_k S_{j_k} of one vertex's K pairs (K = 0: `k` pairs): rows 0 and 1 in one 8-wide
/// register, row 2 in a 4-wide one.
template <int K>
KINEMA_SKIN_INLINE void blend_rows(const float* palette, const uint16_t* joints,
                                   const float* weights, int k, W& rows01, H& row2) {
  const int count = K > 0 ? K : k;
  const float* s = palette + 12 * size_t(joints[0]);
  rows01 = mul(_mm256_broadcast_ss(weights), _mm256_loadu_ps(s));
  row2 = _mm_mul_ps(_mm_broadcast_ss(weights), _mm_loadu_ps(s + 8));
  for (int i = 1; i < count; ++i) {
    s = palette + 12 * size_t(joints[i]);
    rows01 = fmadd(_mm256_broadcast_ss(weights + i), _mm256_loadu_ps(s), rows01);
    row2 = _mm_fmadd_ps(_mm_broadcast_ss(weights + i), _mm_loadu_ps(s + 8), row2);
  }
}

/// The blended 3×4 matrices of one block's eight vertices, transposed: m[4·r + c] holds entry
/// (r, c) of the eight matrices (column 3 is the translation).
template <int K, bool Full>
KINEMA_SKIN_INLINE void lbs_blend(const float* palette, const KernelGroup& g,
                                  const uint16_t* joints, const float* weights,
                                  const Block<Full>& block, W* m) {
  const int k = g.influences;
  const size_t stride = size_t(K > 0 ? K : k);
  // Row r of vertices i and i + 4 side by side, then transposed. Unrolled: the rows stay in
  // registers instead of going through the stack (GCC spills a few palette loads instead).
  W rows[3][4];
#pragma GCC unroll 4
  for (size_t i = 0; i < 4; ++i) {
    W a01, b01;
    H a2, b2;
    const size_t pa = (block.vertex(i) - g.begin) * stride;
    const size_t pb = (block.vertex(i + 4) - g.begin) * stride;
    blend_rows<K>(palette, joints + pa, weights + pa, k, a01, a2);
    blend_rows<K>(palette, joints + pb, weights + pb, k, b01, b2);
    rows[0][i] = _mm256_permute2f128_ps(a01, b01, 0x20);
    rows[1][i] = _mm256_permute2f128_ps(a01, b01, 0x31);
    rows[2][i] = pack(a2, b2);
  }
  transpose8(rows[0], m);
  transpose8(rows[1], m + 4);
  transpose8(rows[2], m + 8);
}

/// Positions, normals and tangents of one block from its transposed blended matrices `m`.
template <bool N, bool T, bool Full>
KINEMA_SKIN_INLINE void lbs_apply(const KernelMesh& mesh, const KernelOut& out,
                                  const Block<Full>& block, const W* m) {
  const X3 a0{m[0], m[1], m[2]}, a1{m[4], m[5], m[6]}, a2{m[8], m[9], m[10]};
  if (out.positions) {
    const X3 p = block.load(mesh.positions, mesh.planar_positions, mesh.vertex_count);
    block.store(out.positions, {fmadd(a0.x, p.x, fmadd(a0.y, p.y, fmadd(a0.z, p.z, m[3]))),
                                fmadd(a1.x, p.x, fmadd(a1.y, p.y, fmadd(a1.z, p.z, m[7]))),
                                fmadd(a2.x, p.x, fmadd(a2.y, p.y, fmadd(a2.z, p.z, m[11])))});
  }
  if (mesh.blended_matrix_normals) {  // LbsNormals::blended_matrix: M·n, M·t as they are
    if constexpr (N) {
      const X3 n = block.load(mesh.normals, mesh.planar_normals, mesh.vertex_count);
      block.store(out.normals, {dot(a0, n), dot(a1, n), dot(a2, n)});
    }
    if constexpr (T) {
      const X3 t = block.load(mesh.tangents, mesh.planar_tangents, mesh.vertex_count);
      block.store(out.tangents, {dot(a0, t), dot(a1, t), dot(a2, t)});
    }
    return;
  }
  if constexpr (N) {
    // Cofactor rows a1×a2, a2×a0, a0×a1 (det · inverse transpose), det's sign folded in.
    const X3 c0 = cross(a1, a2), c1 = cross(a2, a0), c2 = cross(a0, a1);
    const W det = dot(a0, c0);
    const X3 n = block.load(mesh.normals, mesh.planar_normals, mesh.vertex_count);
    block.store(out.normals, unit({sign_from(dot(c0, n), det), sign_from(dot(c1, n), det),
                                   sign_from(dot(c2, n), det)},
                                  n));
  }
  if constexpr (T) {
    const X3 t = block.load(mesh.tangents, mesh.planar_tangents, mesh.vertex_count);
    block.store(out.tangents, unit({dot(a0, t), dot(a1, t), dot(a2, t)}, t));
  }
}

template <int K, bool N, bool T, bool Full>
KINEMA_SKIN_INLINE void lbs_block(const KernelMesh& mesh, const float* palette,
                                  const KernelOut& out, const KernelGroup& g,
                                  const Block<Full>& block) {
  W m[12];
  lbs_blend<K>(palette, g, mesh.joints + g.pair_begin, mesh.weights + g.pair_begin, block, m);
  lbs_apply<N, T>(mesh, out, block, m);
}

/// Full blocks of LBS with normals or tangents in chunks of up to eight blocks, in passes: the
/// blends of every block of the chunk (to the stack), then positions and unnormalized normals
/// and tangents, then the renormalization. One block from blend to renormalized normal is a
/// dependency chain of ~80 cycles and ~150 vector instructions; run block after block, the
/// scheduler fills with instructions that wait on that chain and the next block cannot start
/// (one block every ~chain length). Each pass has a short chain of its own and its blocks are
/// independent, so they overlap. Same operations, same bits as lbs_block; ~12 % faster with
/// normals on arnaud (BENCHMARKS.md, run 9).
template <int K, bool N, bool T>
KINEMA_SKIN_INLINE void lbs_chunk(const KernelMesh& mesh, const float* palette,
                                  const KernelOut& out, const KernelGroup& g, size_t v,
                                  size_t blocks) {
  constexpr size_t kChunk = 8;
  alignas(32) W m[kChunk][12];
  const uint16_t* joints = mesh.joints + g.pair_begin;
  const float* weights = mesh.weights + g.pair_begin;
#pragma GCC unroll 1
  for (size_t b = 0; b < blocks; ++b)
    lbs_blend<K>(palette, g, joints, weights, Block<true>{v + 8 * b, 8, mesh.order}, m[b]);
  if (mesh.blended_matrix_normals) {
#pragma GCC unroll 1
    for (size_t b = 0; b < blocks; ++b)
      lbs_apply<N, T>(mesh, out, Block<true>{v + 8 * b, 8, mesh.order}, m[b]);
    return;
  }
  // Inverse-transpose normals: a third pass renormalizes (its reciprocal square root and
  // Newton step are the tail of the chain).
  alignas(32) X3 normals[kChunk], tangents[kChunk];
#pragma GCC unroll 1
  for (size_t b = 0; b < blocks; ++b) {
    const Block<true> block{v + 8 * b, 8, mesh.order};
    const W* mb = m[b];
    const X3 a0{mb[0], mb[1], mb[2]}, a1{mb[4], mb[5], mb[6]}, a2{mb[8], mb[9], mb[10]};
    if (out.positions) {
      const X3 p = block.load(mesh.positions, mesh.planar_positions, mesh.vertex_count);
      block.store(out.positions, {fmadd(a0.x, p.x, fmadd(a0.y, p.y, fmadd(a0.z, p.z, mb[3]))),
                                  fmadd(a1.x, p.x, fmadd(a1.y, p.y, fmadd(a1.z, p.z, mb[7]))),
                                  fmadd(a2.x, p.x, fmadd(a2.y, p.y, fmadd(a2.z, p.z, mb[11])))});
    }
    if constexpr (N) {
      const X3 c0 = cross(a1, a2), c1 = cross(a2, a0), c2 = cross(a0, a1);
      const W det = dot(a0, c0);
      const X3 n = block.load(mesh.normals, mesh.planar_normals, mesh.vertex_count);
      normals[b] = {sign_from(dot(c0, n), det), sign_from(dot(c1, n), det),
                    sign_from(dot(c2, n), det)};
    }
    if constexpr (T) {
      const X3 t = block.load(mesh.tangents, mesh.planar_tangents, mesh.vertex_count);
      tangents[b] = {dot(a0, t), dot(a1, t), dot(a2, t)};
    }
  }
#pragma GCC unroll 1
  for (size_t b = 0; b < blocks; ++b) {
    const Block<true> block{v + 8 * b, 8, mesh.order};
    if constexpr (N) store_unit(block, out.normals, mesh.normals, normals[b]);
    if constexpr (T) store_unit(block, out.tangents, mesh.tangents, tangents[b]);
  }
}

/// Index of the pair that anchors DQS's hemisphere test: the first with a non-zero weight
/// (padding pairs have 0), else the last.
KINEMA_SKIN_INLINE int anchor_pair(const float* weights, int count) {
  int a = 0;
  while (a + 1 < count && weights[a] == 0.0f) ++a;
  return a;
}

/// Dual quaternion linear blending of two vertices at once (vertex a in the low half, b in the
/// high half): each pair on the hemisphere of its vertex's anchor, not normalized. The sign
/// test's horizontal sum runs on both vertices with one set of shuffles.
template <int K, bool AnchorFirst>
KINEMA_SKIN_INLINE void blend_dq_pair(const float* dq, const uint16_t* ja, const float* wa,
                                      const uint16_t* jb, const float* wb, int k, W& real,
                                      W& dual) {
  const int count = K > 0 ? K : k;
  const int aa = AnchorFirst ? 0 : anchor_pair(wa, count);
  const int ab = AnchorFirst ? 0 : anchor_pair(wb, count);
  const W anchor = _mm256_loadu2_m128(dq + 8 * size_t(jb[ab]), dq + 8 * size_t(ja[aa]));
  real = _mm256_setzero_ps();
  dual = _mm256_setzero_ps();
  for (int i = 0; i < count; ++i) {
    const float* qa = dq + 8 * size_t(ja[i]);
    const float* qb = dq + 8 * size_t(jb[i]);
    const W r = _mm256_loadu2_m128(qb, qa);
    W w = _mm256_set_m128(_mm_broadcast_ss(wb + i), _mm_broadcast_ss(wa + i));
    if (i != aa || i != ab) {  // an anchor's own dot product is |q|² ≥ 0
      W d = mul(r, anchor);
      d = add(d, _mm256_shuffle_ps(d, d, _MM_SHUFFLE(2, 3, 0, 1)));
      d = add(d, _mm256_shuffle_ps(d, d, _MM_SHUFFLE(1, 0, 3, 2)));
      w = sign_from(w, d);
    }
    real = fmadd(w, r, real);
    dual = fmadd(w, _mm256_loadu2_m128(qb + 4, qa + 4), dual);
  }
}

/// The blend [real | dual] of one vertex from a signed palette (signed_dual_quats, 32-byte
/// aligned, 8 floats per joint): one 8-float load and one fused multiply-add per influence. The
/// products and sums are blend_dq_pair's: a negated quaternion times w is the same number as
/// the quaternion times a negated w, so the result has the per-influence test's bits.
template <int K>
KINEMA_SKIN_INLINE W blend_signed_dq(const float* dq, const uint16_t* joints, const float* weights,
                                     int k) {
  W q = _mm256_setzero_ps();
  for (int i = 0; i < (K > 0 ? K : k); ++i)
    q = fmadd(_mm256_broadcast_ss(weights + i), _mm256_load_ps(dq + 8 * size_t(joints[i])), q);
  return q;
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

/// Eight vertices' blended dual quaternions (pairs [i | i + 4] as blend_dq_pair leaves them) to
/// positions, normals and tangents: normalization, translation and rotation lane by lane.
template <bool N, bool T, bool Full>
KINEMA_SKIN_INLINE void dqs_apply(const KernelMesh& mesh, const KernelOut& out, const W* br,
                                  const W* bd, const Block<Full>& block);

template <bool N, bool T, bool Full>
KINEMA_SKIN_INLINE void dqs_finish(const KernelMesh& mesh, const KernelOut& out, W* reals, W* duals,
                                   const Block<Full>& block) {
  W br[4], bd[4];  // x, y, z, w of the eight real and dual parts
  transpose8(reals, br);
  transpose8(duals, bd);
  dqs_apply<N, T>(mesh, out, br, bd, block);
}

/// Positions, normals and tangents of one block from its transposed blends (x, y, z, w of the
/// eight real parts in br, of the dual parts in bd).
template <bool N, bool T, bool Full>
KINEMA_SKIN_INLINE void dqs_apply(const KernelMesh& mesh, const KernelOut& out, const W* br,
                                  const W* bd, const Block<Full>& block) {
  const RigidBlend q = rigid_blend(br, bd);
  const X3& r = q.r;
  const W& rw = q.rw;
  const W& s = q.s;
  const auto rotate = [&](const X3& a) {
    const X3 c0 = cross(r, a);
    const X3 c = cross(r, {fmadd(rw, a.x, c0.x), fmadd(rw, a.y, c0.y), fmadd(rw, a.z, c0.z)});
    return X3{fmadd(s, c.x, a.x), fmadd(s, c.y, a.y), fmadd(s, c.z, a.z)};
  };
  if (out.positions) {
    // p + s·r × (r × p + w_r·p) + t with t's r × d folded into the second cross product:
    // p + s·(r × (r × p + w_r·p + d) + w_r·d − w_d·r), two cross products in all instead of three.
    const X3 d{bd[0], bd[1], bd[2]};
    const W dw = bd[3];
    const X3 p = block.load(mesh.positions, mesh.planar_positions, mesh.vertex_count);
    const X3 c0 = cross(r, p);
    const X3 c = cross(r, {add(fmadd(rw, p.x, c0.x), d.x), add(fmadd(rw, p.y, c0.y), d.y),
                           add(fmadd(rw, p.z, c0.z), d.z)});
    block.store(out.positions, {fmadd(s, add(c.x, fmsub(rw, d.x, mul(dw, r.x))), p.x),
                                fmadd(s, add(c.y, fmsub(rw, d.y, mul(dw, r.y))), p.y),
                                fmadd(s, add(c.z, fmsub(rw, d.z, mul(dw, r.z))), p.z)});
  }
  if constexpr (N) {
    const X3 n = block.load(mesh.normals, mesh.planar_normals, mesh.vertex_count);
    block.store(out.normals, unit(rotate(n), n));
  }
  if constexpr (T) {
    const X3 tv = block.load(mesh.tangents, mesh.planar_tangents, mesh.vertex_count);
    block.store(out.tangents, unit(rotate(tv), tv));
  }
}

/// DQS of one block of eight vertices: with the per-influence sign test (Signed = false), or
/// from a signed palette (Signed = true, SkinMesh only).
template <int K, bool N, bool T, bool Full, bool AnchorFirst, bool Signed = false>
KINEMA_SKIN_INLINE void dqs_block(const KernelMesh& mesh, const float* dq, const KernelOut& out,
                                  const KernelGroup& g, const Block<Full>& block) {
  const int k = g.influences;
  const size_t stride = size_t(K > 0 ? K : k);
  const uint16_t* joints = mesh.joints + g.pair_begin;
  const float* weights = mesh.weights + g.pair_begin;
  W reals[4], duals[4];
#pragma GCC unroll 1
  for (size_t i = 0; i < 4; ++i) {
    const size_t pa = (block.vertex(i) - g.begin) * stride;
    const size_t pb = (block.vertex(i + 4) - g.begin) * stride;
    if constexpr (Signed) {
      const W qa = blend_signed_dq<K>(dq, joints + pa, weights + pa, k);
      const W qb = blend_signed_dq<K>(dq, joints + pb, weights + pb, k);
      reals[i] = _mm256_permute2f128_ps(qa, qb, 0x20);
      duals[i] = _mm256_permute2f128_ps(qa, qb, 0x31);
    } else
      blend_dq_pair<K, AnchorFirst>(dq, joints + pa, weights + pa, joints + pb, weights + pb, k,
                                    reals[i], duals[i]);
  }
  dqs_finish<N, T, Full>(mesh, out, reals, duals, block);
}

/// Full blocks of signed DQS in chunks, for the reason lbs_chunk gives: every block's blend
/// (transposed, to the stack) first, then the transforms. Same bits as dqs_block.
template <int K, bool N, bool T>
KINEMA_SKIN_INLINE void dqs_signed_chunk(const KernelMesh& mesh, const float* dq,
                                         const KernelOut& out, const KernelGroup& g, size_t v,
                                         size_t blocks) {
  constexpr size_t kChunk = 8;
  const int k = g.influences;
  const size_t stride = size_t(K > 0 ? K : k);
  const uint16_t* joints = mesh.joints + g.pair_begin;
  const float* weights = mesh.weights + g.pair_begin;
  alignas(32) W parts[kChunk][8];
#pragma GCC unroll 1
  for (size_t b = 0; b < blocks; ++b) {
    W reals[4], duals[4];
    for (size_t i = 0; i < 4; ++i) {
      const size_t pa = (v + 8 * b + i - g.begin) * stride;
      const size_t pb = pa + 4 * stride;
      const W qa = blend_signed_dq<K>(dq, joints + pa, weights + pa, k);
      const W qb = blend_signed_dq<K>(dq, joints + pb, weights + pb, k);
      reals[i] = _mm256_permute2f128_ps(qa, qb, 0x20);
      duals[i] = _mm256_permute2f128_ps(qa, qb, 0x31);
    }
    transpose8(reals, parts[b]);
    transpose8(duals, parts[b] + 4);
  }
#pragma GCC unroll 1
  for (size_t b = 0; b < blocks; ++b)
    dqs_apply<N, T>(mesh, out, parts[b], parts[b] + 4, Block<true>{v + 8 * b, 8, mesh.order});
}

template <bool Dqs, int K, bool N, bool T, bool AnchorFirst, bool Signed, bool Full>
KINEMA_SKIN_INLINE void run_block(const KernelMesh& mesh, const float* palette,
                                  const KernelOut& out, const KernelGroup& g,
                                  const Block<Full>& block) {
  if constexpr (Dqs)
    dqs_block<K, N, T, Full, AnchorFirst, Signed>(mesh, palette, out, g, block);
  else
    lbs_block<K, N, T, Full>(mesh, palette, out, g, block);
}

/// Stored vertices [begin, end) of group g, eight at a time; the last short block as a tail.
template <bool Dqs, int K, bool N, bool T, bool AnchorFirst, bool Signed = false>
void run_blocks(const KernelMesh& mesh, const float* palette, const KernelOut& out,
                const KernelGroup& g, size_t begin, size_t end) {
  size_t v = begin;
  if constexpr (!Dqs && (N || T)) {
    for (; v + 8 <= end;) {
      const size_t blocks = std::min<size_t>(8, (end - v) / 8);
      lbs_chunk<K, N, T>(mesh, palette, out, g, v, blocks);
      v += 8 * blocks;
    }
  }
  if constexpr (Dqs && Signed) {
    for (; v + 8 <= end;) {
      const size_t blocks = std::min<size_t>(8, (end - v) / 8);
      dqs_signed_chunk<K, N, T>(mesh, palette, out, g, v, blocks);
      v += 8 * blocks;
    }
  }
  for (; v + 8 <= end; v += 8)
    run_block<Dqs, K, N, T, AnchorFirst, Signed>(mesh, palette, out, g,
                                                 Block<true>{v, 8, mesh.order});
  if (v < end)
    run_block<Dqs, K, N, T, AnchorFirst, Signed>(mesh, palette, out, g,
                                                 Block<false>{v, end - v, mesh.order});
}

/// The palette's columns for the positions-only kernel: per joint 16 floats, [c0 | c1] and
/// [c2 | c3] (c3 = translation, lane 3 of each column 0), so one vertex's blend is two 8-wide
/// fused multiply-adds per influence and its transform needs no transposition.
void fill_column_palette(const float* palette, size_t joints, float* columns) {
  const H zero = _mm_setzero_ps();
  for (size_t j = 0; j < joints; ++j) {
    H r0 = _mm_loadu_ps(palette + 12 * j), r1 = _mm_loadu_ps(palette + 12 * j + 4);
    H r2 = _mm_loadu_ps(palette + 12 * j + 8), r3 = zero;
    _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
    _mm256_store_ps(columns + 16 * j, pack(r0, r1));
    _mm256_store_ps(columns + 16 * j + 8, pack(r2, r3));
  }
}

/// The rigid transforms of unit-normalized dual quaternions as column palette entries (the
/// layout of fill_column_palette), eight joints at a time: R = I + (2/n)·[…] and
/// t = (2/n)·(w_r·d − w_d·r + r × d) with n = |real|², the transform DQS gives a vertex with one
/// influence. A tail block repeats its last joint.
void fill_dq_column_palette(const float* dq, size_t joints, float* columns) {
  for (size_t j0 = 0; j0 < joints; j0 += 8) {
    W reals[4], duals[4];
    for (size_t i = 0; i < 4; ++i) {
      const size_t a = j0 + i < joints ? j0 + i : joints - 1;
      const size_t b = j0 + i + 4 < joints ? j0 + i + 4 : joints - 1;
      reals[i] = _mm256_loadu2_m128(dq + 8 * b, dq + 8 * a);
      duals[i] = _mm256_loadu2_m128(dq + 8 * b + 4, dq + 8 * a + 4);
    }
    W br[4], bd[4];
    transpose8(reals, br);
    transpose8(duals, bd);
    const RigidBlend q = rigid_blend(br, bd);
    const X3& r = q.r;
    const W& rw = q.rw;
    const W& s = q.s;
    const W one = splat(1.0f), zero = _mm256_setzero_ps();
    const W xx = mul(r.x, r.x), yy = mul(r.y, r.y), zz = mul(r.z, r.z);
    const W xy = mul(r.x, r.y), xz = mul(r.x, r.z), yz = mul(r.y, r.z);
    const W wx = mul(rw, r.x), wy = mul(rw, r.y), wz = mul(rw, r.z);
    // Column c of R as (R0c, R1c, R2c, 0) for the eight joints; column 3 = t.
    W c0[4] = {_mm256_fnmadd_ps(s, add(yy, zz), one), mul(s, add(xy, wz)), mul(s, sub(xz, wy)),
               zero};
    W c1[4] = {mul(s, sub(xy, wz)), _mm256_fnmadd_ps(s, add(xx, zz), one), mul(s, add(yz, wx)),
               zero};
    W c2[4] = {mul(s, add(xz, wy)), mul(s, sub(yz, wx)), _mm256_fnmadd_ps(s, add(xx, yy), one),
               zero};
    W c3[4] = {q.t.x, q.t.y, q.t.z, zero};
    // Each transposition leaves [joint i | joint i + 4] of one column in register i.
    W t0[4], t1[4], t2[4], t3[4];
    transpose8(c0, t0);
    transpose8(c1, t1);
    transpose8(c2, t2);
    transpose8(c3, t3);
    for (size_t i = 0; i < 4; ++i) {
      if (j0 + i < joints) {
        _mm256_store_ps(columns + 16 * (j0 + i), _mm256_permute2f128_ps(t0[i], t1[i], 0x20));
        _mm256_store_ps(columns + 16 * (j0 + i) + 8, _mm256_permute2f128_ps(t2[i], t3[i], 0x20));
      }
      if (j0 + i + 4 < joints) {
        _mm256_store_ps(columns + 16 * (j0 + i + 4), _mm256_permute2f128_ps(t0[i], t1[i], 0x31));
        _mm256_store_ps(columns + 16 * (j0 + i + 4) + 8,
                        _mm256_permute2f128_ps(t2[i], t3[i], 0x31));
      }
    }
  }
}

/// One vertex's blended columns applied to its position: [c0·x + c2·z | c1·y + c3]; the two
/// halves still have to be added.
template <int K, bool Unweighted = false>
KINEMA_SKIN_INLINE W column_transform(const float* columns, const uint16_t* joints,
                                      const float* weights, int count, const float* p) {
  const float* c = columns + 16 * size_t(joints[0]);
  W w = _mm256_broadcast_ss(weights);
  W c01 = _mm256_load_ps(c), c23 = _mm256_load_ps(c + 8);
  if constexpr (!Unweighted) c01 = mul(w, c01), c23 = mul(w, c23);
  for (int i = 1; i < (K > 0 ? K : count); ++i) {
    c = columns + 16 * size_t(joints[i]);
    w = _mm256_broadcast_ss(weights + i);
    c01 = fmadd(w, _mm256_load_ps(c), c01);
    c23 = fmadd(w, _mm256_load_ps(c + 8), c23);
  }
  const W xy = _mm256_insertf128_ps(_mm256_broadcast_ss(p), _mm_broadcast_ss(p + 1), 1);
  const W z1 = _mm256_blend_ps(_mm256_broadcast_ss(p + 2), splat(1.0f), 0xF0);
  return fmadd(c23, z1, mul(c01, xy));
}

/// Positions only, in AoS: p' = c0·x + c1·y + c2·z + c3 with the blended columns — the layout
/// ozz uses, here two columns per 8-wide register, two vertices per step. Stores write 16 bytes
/// (the next vertex's x is rewritten right after) except at the range's end or when scattering.
template <int K, bool Unweighted = false>
void lbs_positions_columns(const KernelMesh& mesh, const float* columns, const KernelOut& out,
                           const KernelGroup& g, size_t begin, size_t end) {
  static_assert(!Unweighted || K == 1, "only one-influence vertices ignore their weight");
  const size_t stride = size_t(K > 0 ? K : g.influences);
  const int count = int(stride);
  const uint16_t* joints = mesh.joints + g.pair_begin + (begin - g.begin) * stride;
  const float* weights = mesh.weights + g.pair_begin + (begin - g.begin) * stride;
  float* dst = &out.positions[0].x;
  const uint32_t* order = mesh.order;
  const float* src = &mesh.positions[0].x;
  size_t v = begin;
  if (!order) {
    for (; v + 2 < end; v += 2, joints += 2 * stride, weights += 2 * stride) {
      const W a = column_transform<K, Unweighted>(columns, joints, weights, count, src + 3 * v);
      const W b = column_transform<K, Unweighted>(columns, joints + stride, weights + stride, count,
                                                  src + 3 * v + 3);
      const W r = add(_mm256_permute2f128_ps(a, b, 0x20), _mm256_permute2f128_ps(a, b, 0x31));
      _mm_storeu_ps(dst + 3 * v, _mm256_castps256_ps128(r));
      _mm_storeu_ps(dst + 3 * v + 3, _mm256_extractf128_ps(r, 1));
    }
  }
  for (; v < end; ++v, joints += stride, weights += stride) {
    const W u = column_transform<K, Unweighted>(columns, joints, weights, count, src + 3 * v);
    const H r = _mm_add_ps(_mm256_castps256_ps128(u), _mm256_extractf128_ps(u, 1));
    float* o = dst + 3 * size_t(order ? order[v] : v);
    _mm_storel_pi(reinterpret_cast<__m64*>(o), r);
    _mm_store_ss(o + 2, _mm_movehl_ps(r, r));
  }
}

/// Σ w·[c0 | c1] and Σ w·[c2 | c3] of one vertex's K pairs (K = 0: `count` pairs).
template <int K>
KINEMA_SKIN_INLINE void column_blend(const float* columns, const uint16_t* joints,
                                     const float* weights, int count, W& c01, W& c23) {
  const float* c = columns + 16 * size_t(joints[0]);
  W w = _mm256_broadcast_ss(weights);
  c01 = mul(w, _mm256_load_ps(c));
  c23 = mul(w, _mm256_load_ps(c + 8));
  for (int i = 1; i < (K > 0 ? K : count); ++i) {
    c = columns + 16 * size_t(joints[i]);
    w = _mm256_broadcast_ss(weights + i);
    c01 = fmadd(w, _mm256_load_ps(c), c01);
    c23 = fmadd(w, _mm256_load_ps(c + 8), c23);
  }
}

/// [c0·x + c2·z | c1·y + c3·h] for the 3-vector at `v` (h = 1: a point, 0: a direction); the
/// halves still have to be added.
template <bool Point>
KINEMA_SKIN_INLINE W column_apply(W c01, W c23, const float* v) {
  const W xy = _mm256_insertf128_ps(_mm256_broadcast_ss(v), _mm_broadcast_ss(v + 1), 1);
  const W z = _mm256_broadcast_ss(v + 2);
  const W zh =
      Point ? _mm256_blend_ps(z, splat(1.0f), 0xF0) : _mm256_blend_ps(z, _mm256_setzero_ps(), 0xF0);
  return fmadd(c23, zh, mul(c01, xy));
}

/// The halves of a and b added: [a's xyz, 0 | b's xyz, 0].
KINEMA_SKIN_INLINE W add_halves(W a, W b) {
  return add(_mm256_permute2f128_ps(a, b, 0x20), _mm256_permute2f128_ps(a, b, 0x31));
}

/// Stores [a | b] (lane 3 of each half 0) as the xyz of vertices v and v + 1 with two 16-byte
/// stores; the fourth float lands on vertex v + 2's x, which the caller writes afterwards.
KINEMA_SKIN_INLINE void store_pair(float* dst, size_t v, W r) {
  _mm_storeu_ps(dst + 3 * v, _mm256_castps256_ps128(r));
  _mm_storeu_ps(dst + 3 * v + 3, _mm256_extractf128_ps(r, 1));
}

/// LBS with LbsNormals::blended_matrix, ozz-animation's SkinningJob math: positions, normals and
/// tangents all by the blended matrix from the column palette (lbs_positions_columns' layout),
/// one blend per vertex, two vertices a step, normals and tangents not renormalized.
template <int K, bool N, bool T>
void lbs_attribute_columns(const KernelMesh& mesh, const float* columns, const KernelOut& out,
                           const KernelGroup& g, size_t begin, size_t end) {
  const size_t stride = size_t(K > 0 ? K : g.influences);
  const int count = int(stride);
  const uint16_t* joints = mesh.joints + g.pair_begin + (begin - g.begin) * stride;
  const float* weights = mesh.weights + g.pair_begin + (begin - g.begin) * stride;
  const uint32_t* order = mesh.order;
  const float* src_p = &mesh.positions[0].x;
  const float* src_n = N ? &mesh.normals[0].x : nullptr;
  const float* src_t = T ? &mesh.tangents[0].x : nullptr;
  float* dst_p = &out.positions[0].x;
  float* dst_n = N ? &out.normals[0].x : nullptr;
  float* dst_t = T ? &out.tangents[0].x : nullptr;
  size_t v = begin;
  if (!order) {
    // v + 2 < end: the range's last vertex is written by the loop below with 12-byte stores, so
    // no 16-byte store reaches past the range.
    for (; v + 2 < end; v += 2, joints += 2 * stride, weights += 2 * stride) {
      W a01, a23, b01, b23;
      column_blend<K>(columns, joints, weights, count, a01, a23);
      column_blend<K>(columns, joints + stride, weights + stride, count, b01, b23);
      store_pair(dst_p, v,
                 add_halves(column_apply<true>(a01, a23, src_p + 3 * v),
                            column_apply<true>(b01, b23, src_p + 3 * v + 3)));
      if constexpr (N)
        store_pair(dst_n, v,
                   add_halves(column_apply<false>(a01, a23, src_n + 3 * v),
                              column_apply<false>(b01, b23, src_n + 3 * v + 3)));
      if constexpr (T)
        store_pair(dst_t, v,
                   add_halves(column_apply<false>(a01, a23, src_t + 3 * v),
                              column_apply<false>(b01, b23, src_t + 3 * v + 3)));
    }
  }
  for (; v < end; ++v, joints += stride, weights += stride) {
    W c01, c23;
    column_blend<K>(columns, joints, weights, count, c01, c23);
    const size_t o = order ? order[v] : v;
    auto store3 = [](float* dst, W u) {
      const H r = _mm_add_ps(_mm256_castps256_ps128(u), _mm256_extractf128_ps(u, 1));
      _mm_storel_pi(reinterpret_cast<__m64*>(dst), r);
      _mm_store_ss(dst + 2, _mm_movehl_ps(r, r));
    };
    store3(dst_p + 3 * o, column_apply<true>(c01, c23, src_p + 3 * v));
    if constexpr (N) store3(dst_n + 3 * o, column_apply<false>(c01, c23, src_n + 3 * v));
    if constexpr (T) store3(dst_t + 3 * o, column_apply<false>(c01, c23, src_t + 3 * v));
  }
}

// Dispatch on the influence count and the attributes.
template <bool Dqs, bool N, bool T>
void run(const KernelMesh& mesh, const float* palette, const KernelOut& out, const KernelGroup& g,
         size_t b, size_t e) {
  auto go = [&]<int K>() {
    if constexpr (Dqs) {
      if (mesh.positive_weights)
        run_blocks<true, K, N, T, true>(mesh, palette, out, g, b, e);
      else
        run_blocks<true, K, N, T, false>(mesh, palette, out, g, b, e);
    } else {
      run_blocks<false, K, N, T, false>(mesh, palette, out, g, b, e);  // LBS has no anchor
    }
  };
  with_influence_count(g.influences, go);
}

template <bool N, bool T>
void run_signed(const KernelMesh& mesh, const float* dq, const KernelOut& out, const KernelGroup& g,
                size_t b, size_t e) {
  auto go = [&]<int K>() { run_blocks<true, K, N, T, true, true>(mesh, dq, out, g, b, e); };
  with_influence_count(g.influences, go);
}

template <bool Dqs>
void run_attributes(const KernelMesh& mesh, const float* palette, const KernelOut& out,
                    const KernelGroup& g, size_t b, size_t e) {
  if (out.normals && out.tangents)
    run<Dqs, true, true>(mesh, palette, out, g, b, e);
  else if (out.normals)
    run<Dqs, true, false>(mesh, palette, out, g, b, e);
  else if (out.tangents)
    run<Dqs, false, true>(mesh, palette, out, g, b, e);
  else
    run<Dqs, false, false>(mesh, palette, out, g, b, e);
}

}  // namespace

void lbs_group_avx2(const KernelMesh& mesh, const Affine3x4f* palette, const KernelOut& out,
                    const KernelGroup& g, size_t begin, size_t end) {
  run_attributes<false>(mesh, reinterpret_cast<const float*>(palette), out, g, begin, end);
}

void dqs_group_avx2(const KernelMesh& mesh, const DualQuatf* dual_quats, const KernelOut& out,
                    const KernelGroup& g, size_t begin, size_t end) {
  run_attributes<true>(mesh, reinterpret_cast<const float*>(dual_quats), out, g, begin, end);
}

void column_palette_avx2(const Affine3x4f* palette, size_t joints, float* columns) {
  fill_column_palette(reinterpret_cast<const float*>(palette), joints, columns);
}

void lbs_columns_avx2(const KernelMesh& mesh, const float* columns, const KernelOut& out,
                      size_t begin, size_t end) {
  for (const KernelGroup& g : mesh.groups) {
    const size_t b = begin > g.begin ? begin : g.begin, e = end < g.end ? end : g.end;
    if (b >= e) continue;
    auto go = [&]<int K>() {
      if (out.normals && out.tangents)
        lbs_attribute_columns<K, true, true>(mesh, columns, out, g, b, e);
      else if (out.normals)
        lbs_attribute_columns<K, true, false>(mesh, columns, out, g, b, e);
      else if (out.tangents)
        lbs_attribute_columns<K, false, true>(mesh, columns, out, g, b, e);
      else
        lbs_positions_columns<K>(mesh, columns, out, g, b, e);
    };
    with_influence_count(g.influences, go);
  }
}

void dq_column_palette_avx2(const DualQuatf* dual_quats, size_t joints, float* columns) {
  fill_dq_column_palette(&dual_quats->real.x, joints, columns);
}

void dqs_rigid_positions_avx2(const KernelMesh& mesh, const float* columns, const KernelOut& out,
                              const KernelGroup& g, size_t begin, size_t end) {
  lbs_positions_columns<1, true>(mesh, columns, out, g, begin, end);
}

void dqs_signed_avx2(const KernelMesh& mesh, const float* dual_quats, const KernelOut& out,
                     size_t begin, size_t end, const float* rigid_columns) {
  for (const KernelGroup& g : mesh.groups) {
    const size_t b = begin > g.begin ? begin : g.begin, e = end < g.end ? end : g.end;
    if (b >= e) continue;
    if (rigid_columns && g.influences == 1 && !out.normals && !out.tangents) {
      lbs_positions_columns<1, true>(mesh, rigid_columns, out, g, b, e);
      continue;
    }
    if (out.normals && out.tangents)
      run_signed<true, true>(mesh, dual_quats, out, g, b, e);
    else if (out.normals)
      run_signed<true, false>(mesh, dual_quats, out, g, b, e);
    else if (out.tangents)
      run_signed<false, true>(mesh, dual_quats, out, g, b, e);
    else
      run_signed<false, false>(mesh, dual_quats, out, g, b, e);
  }
}

}  // namespace kinema::skin_detail

#endif  // KINEMA_SKIN_AVX2
