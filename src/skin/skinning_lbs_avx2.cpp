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

/// cof(A)·n for the 3×3 parts A of a block's transposed blended matrices `m` (lbs_blend), and
/// det A's sign bit (0 or −0) in `sign`. With b0, b1, b2 the columns of A, cof(A) has columns
/// b1×b2, b2×b0, b0×b1, so cof(A)·n = n.x·(b1×b2) + n.y·(b2×b0) + n.z·(b0×b1)
/// = b2 × (n.y·b0 − n.x·b1) + n.z·(b0×b1), and det A = b2·(b0×b1): 24 operations instead of the
/// 30 of three cofactor rows, a determinant and three dot products.
KINEMA_SKIN_INLINE X3 cofactor_times(const W* m, const X3& n, W& sign) {
  const X3 b0{m[0], m[4], m[8]}, b1{m[1], m[5], m[9]}, b2{m[2], m[6], m[10]};
  const X3 w = cross(b0, b1);
  const X3 u{fmsub(n.y, b0.x, mul(n.x, b1.x)), fmsub(n.y, b0.y, mul(n.x, b1.y)),
             fmsub(n.y, b0.z, mul(n.x, b1.z))};
  sign = _mm256_and_ps(dot(b2, w), splat(-0.0f));
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
      const X3 n = block.load(mesh.normals, mesh.planar_normals, mesh.vertex_count);
      normals[b] = cofactor_times(mb, n, signs[b]);
    }
    if constexpr (T) {
      const X3 t = block.load(mesh.tangents, mesh.planar_tangents, mesh.vertex_count);
      tangents[b] = {dot(a0, t), dot(a1, t), dot(a2, t)};
    }
  }
#pragma GCC unroll 1
  for (size_t b = 0; b < blocks; ++b) {
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
