// The AVX2 + FMA kernels of pure dual quaternion skinning, eight vertices at a time. Each
// vertex's blend Σ ±w·q is built with 4-wide fused multiply-adds, each influence on the
// hemisphere of its vertex's anchor (the sign test), or, from a palette whose dual quaternions
// were negated beforehand so that no test is needed (signed_dual_quats), with one 8-float load
// and one fused multiply-add per influence. The eight blends are then transposed so that every
// component holds the eight vertices, and the normalization, rotation and translation run lane
// by lane. Full blocks from a signed palette run in chunks, pass by pass (dqs_signed_chunk), so
// that blocks overlap instead of each waiting on its own long dependency chain. One-influence
// vertices of positions alone take the column kernel (skinning_columns_avx2.cpp).
//
// Compiled with -mavx2 -mfma (CMakeLists.txt); runs only when the CPU reports both
// (skinning_simd.cpp checks once).
#include "skinning_avx2.h"

#if KINEMA_SKIN_AVX2

#include <algorithm>

namespace kinema::skin_detail {

namespace {

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

/// Stored vertices [begin, end) of group g, eight at a time: full blocks from a signed palette
/// in chunks (dqs_signed_chunk), other full blocks one by one, the last short block as a tail.
template <int K, bool N, bool T, bool AnchorFirst, bool Signed = false>
void dqs_blocks(const KernelMesh& mesh, const float* dq, const KernelOut& out, const KernelGroup& g,
                size_t begin, size_t end) {
  size_t v = begin;
  if constexpr (Signed) {
    for (; v + 8 <= end;) {
      const size_t blocks = std::min<size_t>(8, (end - v) / 8);
      dqs_signed_chunk<K, N, T>(mesh, dq, out, g, v, blocks);
      v += 8 * blocks;
    }
  }
  for (; v + 8 <= end; v += 8)
    dqs_block<K, N, T, true, AnchorFirst, Signed>(mesh, dq, out, g, Block<true>{v, 8, mesh.order});
  if (v < end)
    dqs_block<K, N, T, false, AnchorFirst, Signed>(mesh, dq, out, g,
                                                   Block<false>{v, end - v, mesh.order});
}

// Dispatch on the influence count (and on the anchor: pair 0 when every weight is positive).
template <bool N, bool T>
void dqs_influences(const KernelMesh& mesh, const float* dq, const KernelOut& out,
                    const KernelGroup& g, size_t b, size_t e) {
  auto go = [&]<int K>() {
    if (mesh.positive_weights)
      dqs_blocks<K, N, T, true>(mesh, dq, out, g, b, e);
    else
      dqs_blocks<K, N, T, false>(mesh, dq, out, g, b, e);
  };
  with_influence_count(g.influences, go);
}

template <bool N, bool T>
void dqs_signed_influences(const KernelMesh& mesh, const float* dq, const KernelOut& out,
                           const KernelGroup& g, size_t b, size_t e) {
  auto go = [&]<int K>() { dqs_blocks<K, N, T, true, true>(mesh, dq, out, g, b, e); };
  with_influence_count(g.influences, go);
}

}  // namespace

void dqs_group_avx2(const KernelMesh& mesh, const DualQuatf* dual_quats, const KernelOut& out,
                    const KernelGroup& g, size_t begin, size_t end) {
  const float* dq = reinterpret_cast<const float*>(dual_quats);
  if (out.normals && out.tangents)
    dqs_influences<true, true>(mesh, dq, out, g, begin, end);
  else if (out.normals)
    dqs_influences<true, false>(mesh, dq, out, g, begin, end);
  else if (out.tangents)
    dqs_influences<false, true>(mesh, dq, out, g, begin, end);
  else
    dqs_influences<false, false>(mesh, dq, out, g, begin, end);
}

void dqs_signed_avx2(const KernelMesh& mesh, const float* dual_quats, const KernelOut& out,
                     size_t begin, size_t end, const float* rigid_columns) {
  for (const KernelGroup& g : mesh.groups) {
    const size_t b = begin > g.begin ? begin : g.begin, e = end < g.end ? end : g.end;
    if (b >= e) continue;
    if (rigid_columns && g.influences == 1 && !out.normals && !out.tangents) {
      dqs_rigid_positions_avx2(mesh, rigid_columns, out, g, b, e);
      continue;
    }
    if (out.normals && out.tangents)
      dqs_signed_influences<true, true>(mesh, dual_quats, out, g, b, e);
    else if (out.normals)
      dqs_signed_influences<true, false>(mesh, dual_quats, out, g, b, e);
    else if (out.tangents)
      dqs_signed_influences<false, true>(mesh, dual_quats, out, g, b, e);
    else
      dqs_signed_influences<false, false>(mesh, dual_quats, out, g, b, e);
  }
}

}  // namespace kinema::skin_detail

#endif  // KINEMA_SKIN_AVX2
