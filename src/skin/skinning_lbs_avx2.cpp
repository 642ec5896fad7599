// The AVX2 + FMA kernel of linear blend skinning by blocks of eight vertices: LBS with normals
// by the inverse transpose (LbsNormals::inverse_transpose), and any LBS the column kernels
// (skinning_columns_avx2.cpp) do not take: no positions, or a palette too large for their copy.
// Each vertex's blended 3×4 rows Σ w·S are built with 4-wide fused multiply-adds (weights
// broadcast straight from memory); the eight blends are then transposed so that every matrix
// entry holds the eight vertices, and the transforms, the cofactor (normal) matrix and the
// renormalization run lane by lane. Full blocks with normals or tangents run in chunks, pass by
// pass (lbs_chunk), so that blocks overlap instead of each waiting on its own long dependency
// chain.
//
// Compiled with -mavx2 -mfma (CMakeLists.txt); runs only when the CPU reports both
// (skinning_simd.cpp checks once).
#include "skinning_avx2.h"

#if KINEMA_SKIN_AVX2

#include <algorithm>

namespace kinema::skin_detail {

namespace {

/// unit(v, input) stored to `dst`, negated in the lanes where `sign` (0 or −0) is −0; the input
/// is read only when a lane is degenerate.
template <bool Full>
KINEMA_SKIN_INLINE void store_unit(const Block<Full>& block, Vec3f* dst, const Vec3f* input,
                                   const X3& v, W sign = _mm256_setzero_ps()) {
  const W l2 = dot(v, v);
  const W ok = _mm256_cmp_ps(l2, splat(1e-36f), _CMP_GT_OQ);
  const W inv = _mm256_xor_ps(rsqrt(_mm256_max_ps(l2, splat(1e-36f))), sign);
  X3 scaled{mul(v.x, inv), mul(v.y, inv), mul(v.z, inv)};
  if (__builtin_expect(_mm256_movemask_ps(ok) != 0xFF, 0)) {
    const X3 f = block.load(input);
    scaled = {select(ok, scaled.x, f.x), select(ok, scaled.y, f.y), select(ok, scaled.z, f.z)};
  }
  block.store(dst, scaled);
}

/// a's sign bit (0 or −0) in every lane.
KINEMA_SKIN_INLINE W sign_bit(W a) { return _mm256_and_ps(a, splat(-0.0f)); }

#if defined(__AVX512F__) && defined(__AVX512DQ__)
// The AVX-512 build (skinning_lbs_avx512.cpp) runs the lane-by-lane passes of lbs_chunk on two
// blocks at once: sixteen lanes, the first block's eight in the low half. Each lane's operations
// are the 8-lane code's, in its order (and the reciprocal square root's estimate is taken with
// the 8-lane instruction on each half: the 16-lane one gives other bits), so the bits are the
// same. The blends and their transposition stay eight lanes wide.
using Z = __m512;
struct Z3 {
  Z x, y, z;
};
KINEMA_SKIN_INLINE Z zsplat(float f) { return _mm512_set1_ps(f); }
KINEMA_SKIN_INLINE Z join(W low, W high) {
  // (zext, not cast: GCC 12 warns that the cast's undefined upper half is uninitialized)
  return _mm512_insertf32x8(_mm512_zextps256_ps512(low), high, 1);
}
KINEMA_SKIN_INLINE W low_half(Z a) { return _mm512_castps512_ps256(a); }
KINEMA_SKIN_INLINE W high_half(Z a) { return _mm512_extractf32x8_ps(a, 1); }
// The 8-lane arithmetic of skinning_avx2.h on sixteen lanes (the overloads cofactor_times finds).
KINEMA_SKIN_INLINE Z mul(Z a, Z b) { return _mm512_mul_ps(a, b); }
KINEMA_SKIN_INLINE Z fmadd(Z a, Z b, Z c) { return _mm512_fmadd_ps(a, b, c); }
KINEMA_SKIN_INLINE Z fmsub(Z a, Z b, Z c) { return _mm512_fmsub_ps(a, b, c); }
KINEMA_SKIN_INLINE Z dot(const Z3& a, const Z3& b) {
  return fmadd(a.x, b.x, fmadd(a.y, b.y, mul(a.z, b.z)));
}
KINEMA_SKIN_INLINE Z3 cross(const Z3& a, const Z3& b) {
  return {fmsub(a.y, b.z, mul(a.z, b.y)), fmsub(a.z, b.x, mul(a.x, b.z)),
          fmsub(a.x, b.y, mul(a.y, b.x))};
}
KINEMA_SKIN_INLINE Z sign_bit(Z a) { return _mm512_and_ps(a, zsplat(-0.0f)); }

KINEMA_SKIN_INLINE X3 low_half(const Z3& v) {
  return {low_half(v.x), low_half(v.y), low_half(v.z)};
}
KINEMA_SKIN_INLINE X3 high_half(const Z3& v) {
  return {high_half(v.x), high_half(v.y), high_half(v.z)};
}

/// Two full blocks' xyz (blocks a and a + 8 of the stored order): from the planar copy when
/// there is one (three loads), else two regroupings.
KINEMA_SKIN_INLINE Z3 load_pair(const Block<true>& a, const Block<true>& b, const Vec3f* base,
                                const float* planar, size_t n) {
  if (planar)
    return {_mm512_loadu_ps(planar + a.v), _mm512_loadu_ps(planar + n + a.v),
            _mm512_loadu_ps(planar + 2 * n + a.v)};
  const X3 x = a.load(base), y = b.load(base);
  return {join(x.x, y.x), join(x.y, y.y), join(x.z, y.z)};
}

/// Sixteen vertices' xyz stored as packed triples (48 floats): store_xyz8's six in-lane
/// shuffles, then each 16-float output gathered from the three results' 128-bit lanes by a
/// two-source permute and a masked one (12 shuffles instead of 2 × 9 and three extractions).
KINEMA_SKIN_INLINE void store_xyz16(float* p, const Z3& v) {
  const Z xy = _mm512_shuffle_ps(v.x, v.y, _MM_SHUFFLE(2, 0, 2, 0));
  const Z yz = _mm512_shuffle_ps(v.y, v.z, _MM_SHUFFLE(3, 1, 3, 1));
  const Z zx = _mm512_shuffle_ps(v.z, v.x, _MM_SHUFFLE(3, 1, 2, 0));
  // 128-bit lane k of m03 / m14 / m25: floats 12k … 12k + 3 / + 4 … + 7 / + 8 … + 11.
  const Z m03 = _mm512_shuffle_ps(xy, zx, _MM_SHUFFLE(2, 0, 2, 0));
  const Z m14 = _mm512_shuffle_ps(yz, xy, _MM_SHUFFLE(3, 1, 2, 0));
  const Z m25 = _mm512_shuffle_ps(zx, yz, _MM_SHUFFLE(3, 1, 3, 1));
  // Indices 16 and up pick the second source.
  const __m512i i0 = _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 0, 0, 0, 0, 4, 5, 6, 7);
  const __m512i i1 = _mm512_setr_epi32(4, 5, 6, 7, 20, 21, 22, 23, 0, 0, 0, 0, 8, 9, 10, 11);
  const __m512i i2 = _mm512_setr_epi32(0, 0, 0, 0, 12, 13, 14, 15, 28, 29, 30, 31, 0, 0, 0, 0);
  const __m512i f0 = _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 0, 0, 0, 0);
  const __m512i f1 = _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 8, 9, 10, 11, 0, 0, 0, 0);
  const __m512i f2 = _mm512_setr_epi32(8, 9, 10, 11, 0, 0, 0, 0, 0, 0, 0, 0, 12, 13, 14, 15);
  _mm512_storeu_ps(
      p, _mm512_mask_permutexvar_ps(_mm512_permutex2var_ps(m03, i0, m14), 0x0F00, f0, m25));
  _mm512_storeu_ps(
      p + 16, _mm512_mask_permutexvar_ps(_mm512_permutex2var_ps(m14, i1, m25), 0x0F00, f1, m03));
  _mm512_storeu_ps(
      p + 32, _mm512_mask_permutexvar_ps(_mm512_permutex2var_ps(m03, i2, m14), 0xF00F, f2, m25));
}

/// Blocks a and b (b = a + 8) written: in place as one run of sixteen vertices when stored order
/// is output order, else block by block.
KINEMA_SKIN_INLINE void store_pair(const Block<true>& a, const Block<true>& b, Vec3f* base,
                                   const Z3& v) {
  if (!a.order) {
    store_xyz16(&base[a.v].x, v);
    return;
  }
  a.store(base, low_half(v));
  b.store(base, high_half(v));
}

/// store_unit on two blocks; a pair with a degenerate lane goes back to store_unit per block.
KINEMA_SKIN_INLINE void store_unit_pair(const Block<true>& a, const Block<true>& b, Vec3f* dst,
                                        const Vec3f* input, const Z3& v, Z sign) {
  const Z l2 = dot(v, v);
  if (__builtin_expect(_mm512_cmp_ps_mask(l2, zsplat(1e-36f), _CMP_GT_OQ) != 0xFFFF, 0)) {
    store_unit(a, dst, input, low_half(v), low_half(sign));
    store_unit(b, dst, input, high_half(v), high_half(sign));
    return;
  }
  const Z x = _mm512_max_ps(l2, zsplat(1e-36f));
  const Z r = join(_mm256_rsqrt_ps(low_half(x)), _mm256_rsqrt_ps(high_half(x)));
  const Z root = mul(mul(zsplat(0.5f), r), _mm512_fnmadd_ps(mul(x, r), r, zsplat(3.0f)));
  const Z inv = _mm512_xor_ps(root, sign);
  store_pair(a, b, dst, {mul(v.x, inv), mul(v.y, inv), mul(v.z, inv)});
}
#endif

/// cof(A)·n for the 3×3 parts A of a block's transposed blended matrices `m` (lbs_blend), and
/// det A's sign bit (0 or −0) in `sign`. With b0, b1, b2 the columns of A, cof(A) has columns
/// b1×b2, b2×b0, b0×b1, so cof(A)·n = n.x·(b1×b2) + n.y·(b2×b0) + n.z·(b0×b1)
/// = b2 × (n.y·b0 − n.x·b1) + n.z·(b0×b1), and det A = b2·(b0×b1): 24 operations instead of the
/// 30 of three cofactor rows, a determinant and three dot products. V3 is X3 (eight lanes) or,
/// in the AVX-512 build, Z3 (two blocks): the same operations per lane.
template <class V, class V3>
KINEMA_SKIN_INLINE V3 cofactor_times(const V* m, const V3& n, V& sign) {
  const V3 b0{m[0], m[4], m[8]}, b1{m[1], m[5], m[9]}, b2{m[2], m[6], m[10]};
  const V3 w = cross(b0, b1);
  const V3 u{fmsub(n.y, b0.x, mul(n.x, b1.x)), fmsub(n.y, b0.y, mul(n.x, b1.y)),
             fmsub(n.y, b0.z, mul(n.x, b1.z))};
  sign = sign_bit(dot(b2, w));
  return {fmadd(n.z, w.x, fmsub(b2.y, u.z, mul(b2.z, u.y))),
          fmadd(n.z, w.y, fmsub(b2.z, u.x, mul(b2.x, u.z))),
          fmadd(n.z, w.z, fmsub(b2.x, u.y, mul(b2.y, u.x)))};
}

/// Σ w_k S_{j_k} of one vertex's K pairs (K = 0: `k` pairs): rows 0 and 1 in one 8-wide
/// register, row 2 in a 4-wide one.
template <int K>
KINEMA_SKIN_INLINE void blend_rows(const float* palette, const uint16_t* joints,
                                   const float* weights, int k, W& rows01, H& row2) {
  // One broadcast of each weight serves both rows (its low half for row 2): a load fewer per
  // influence than broadcasting it twice.
  const int count = K > 0 ? K : k;
  const float* s = palette + 12 * size_t(joints[0]);
  W w = _mm256_broadcast_ss(weights);
  rows01 = mul(w, _mm256_loadu_ps(s));
  row2 = _mm_mul_ps(_mm256_castps256_ps128(w), _mm_loadu_ps(s + 8));
  for (int i = 1; i < count; ++i) {
    s = palette + 12 * size_t(joints[i]);
    w = _mm256_broadcast_ss(weights + i);
    rows01 = fmadd(w, _mm256_loadu_ps(s), rows01);
    row2 = _mm_fmadd_ps(_mm256_castps256_ps128(w), _mm_loadu_ps(s + 8), row2);
  }
}

/// The blended 3×4 matrices of one block's eight vertices, transposed: m[4·r + c] holds entry
/// (r, c) of the eight matrices (column 3 is the translation). A full block of vertices with one
/// to four influences that share their joints (make_skin_mesh gathers them: 89 / 77 / 56 / 21 %
/// of arnaud's full blocks of one / two / three / four influences) takes uniform_blend.
template <int K, bool Full>
KINEMA_SKIN_INLINE void lbs_blend(const float* palette, const KernelGroup& g,
                                  const uint16_t* joints, const float* weights,
                                  const Block<Full>& block, W* m) {
  if constexpr (Full && K >= 1 && K <= 4) {
    const size_t p = (block.v - g.begin) * size_t(K);
    if (same_joints<K>(joints + p)) {
      uniform_blend<K, false>(palette, joints + p, weights + p, m);
      return;
    }
  }
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
    // The cofactor matrix (det · inverse transpose) times n, det's sign folded into 1/|·|.
    const X3 n = block.load(mesh.normals, mesh.planar_normals, mesh.vertex_count);
    W sign;
    const X3 c = cofactor_times(m, n, sign);
    store_unit(block, out.normals, mesh.normals, c, sign);
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
  alignas(32) W signs[kChunk];
  size_t first = 0;  // the blocks before it were done in pairs
#if defined(__AVX512F__) && defined(__AVX512DQ__)
  {
    alignas(64) Z3 normals16[kChunk / 2], tangents16[kChunk / 2];
    alignas(64) Z signs16[kChunk / 2];
    first = blocks & ~size_t{1};
#pragma GCC unroll 1
    for (size_t b = 0; b < first; b += 2) {
      const Block<true> ba{v + 8 * b, 8, mesh.order}, bb{v + 8 * b + 8, 8, mesh.order};
      Z mz[12];
#pragma GCC unroll 12
      for (int e = 0; e < 12; ++e) mz[e] = join(m[b][e], m[b + 1][e]);
      const Z3 a0{mz[0], mz[1], mz[2]}, a1{mz[4], mz[5], mz[6]}, a2{mz[8], mz[9], mz[10]};
      if (out.positions) {
        const Z3 p = load_pair(ba, bb, mesh.positions, mesh.planar_positions, mesh.vertex_count);
        store_pair(ba, bb, out.positions,
                   {fmadd(a0.x, p.x, fmadd(a0.y, p.y, fmadd(a0.z, p.z, mz[3]))),
                    fmadd(a1.x, p.x, fmadd(a1.y, p.y, fmadd(a1.z, p.z, mz[7]))),
                    fmadd(a2.x, p.x, fmadd(a2.y, p.y, fmadd(a2.z, p.z, mz[11])))});
      }
      if constexpr (N) {
        const Z3 n = load_pair(ba, bb, mesh.normals, mesh.planar_normals, mesh.vertex_count);
        normals16[b / 2] = cofactor_times(mz, n, signs16[b / 2]);
      }
      if constexpr (T) {
        const Z3 t = load_pair(ba, bb, mesh.tangents, mesh.planar_tangents, mesh.vertex_count);
        tangents16[b / 2] = {dot(a0, t), dot(a1, t), dot(a2, t)};
      }
    }
#pragma GCC unroll 1
    for (size_t b = 0; b < first; b += 2) {
      const Block<true> ba{v + 8 * b, 8, mesh.order}, bb{v + 8 * b + 8, 8, mesh.order};
      if constexpr (N)
        store_unit_pair(ba, bb, out.normals, mesh.normals, normals16[b / 2], signs16[b / 2]);
      if constexpr (T)
        store_unit_pair(ba, bb, out.tangents, mesh.tangents, tangents16[b / 2],
                        _mm512_setzero_ps());
    }
  }
#endif
#pragma GCC unroll 1
  for (size_t b = first; b < blocks; ++b) {
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
      const X3 n = block.load(mesh.normals, mesh.planar_normals, mesh.vertex_count);
      normals[b] = cofactor_times(mb, n, signs[b]);
    }
    if constexpr (T) {
      const X3 t = block.load(mesh.tangents, mesh.planar_tangents, mesh.vertex_count);
      tangents[b] = {dot(a0, t), dot(a1, t), dot(a2, t)};
    }
  }
#pragma GCC unroll 1
  for (size_t b = first; b < blocks; ++b) {
    const Block<true> block{v + 8 * b, 8, mesh.order};
    if constexpr (N) store_unit(block, out.normals, mesh.normals, normals[b], signs[b]);
    if constexpr (T) store_unit(block, out.tangents, mesh.tangents, tangents[b]);
  }
}

/// Stored vertices [begin, end) of group g, eight at a time: full blocks with normals or
/// tangents in chunks (lbs_chunk), other full blocks one by one, the last short block as a tail.
template <int K, bool N, bool T>
void lbs_blocks(const KernelMesh& mesh, const float* palette, const KernelOut& out,
                const KernelGroup& g, size_t begin, size_t end) {
  size_t v = begin;
  if constexpr (N || T) {
    for (; v + 8 <= end;) {
      const size_t blocks = std::min<size_t>(8, (end - v) / 8);
      lbs_chunk<K, N, T>(mesh, palette, out, g, v, blocks);
      v += 8 * blocks;
    }
  }
  for (; v + 8 <= end; v += 8)
    lbs_block<K, N, T, true>(mesh, palette, out, g, Block<true>{v, 8, mesh.order});
  if (v < end)
    lbs_block<K, N, T, false>(mesh, palette, out, g, Block<false>{v, end - v, mesh.order});
}

// Dispatch on the influence count.
template <bool N, bool T>
void lbs_influences(const KernelMesh& mesh, const float* palette, const KernelOut& out,
                    const KernelGroup& g, size_t b, size_t e) {
  auto go = [&]<int K>() { lbs_blocks<K, N, T>(mesh, palette, out, g, b, e); };
  with_influence_count(g.influences, go);
}

}  // namespace

void lbs_group_avx2(const KernelMesh& mesh, const Affine3x4f* palette, const KernelOut& out,
                    const KernelGroup& g, size_t begin, size_t end) {
  const float* p = reinterpret_cast<const float*>(palette);
  if (out.normals && out.tangents)
    lbs_influences<true, true>(mesh, p, out, g, begin, end);
  else if (out.normals)
    lbs_influences<true, false>(mesh, p, out, g, begin, end);
  else if (out.tangents)
    lbs_influences<false, true>(mesh, p, out, g, begin, end);
  else
    lbs_influences<false, false>(mesh, p, out, g, begin, end);
}

}  // namespace kinema::skin_detail

#endif  // KINEMA_SKIN_AVX2
