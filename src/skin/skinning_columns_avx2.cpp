// The AVX2 + FMA column kernels: skinning one vertex at a time from a column-major copy of the
// palette, as ozz-animation does, two columns per 8-wide register, with no transposition. They
// serve LBS of positions alone, LBS with normals and tangents by the blended matrix
// (LbsNormals::blended_matrix), and DQS of positions alone for one-influence vertices, whose
// transform is their joint's rigid matrix (a copy of the dual quaternion palette as matrices).
//
// Compiled with -mavx2 -mfma (CMakeLists.txt); runs only when the CPU reports both
// (skinning_simd.cpp checks once).
#include "skinning_avx2.h"

#if KINEMA_SKIN_AVX2

namespace kinema::skin_detail {

namespace {

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

/// Eight stored vertices [v, v + 8) that share their K = 1…4 joints (same_joints), in
/// structure of arrays: their blended columns by uniform_blend (no transposition needed), then
/// per row (c0·x + c2·z) + (c1·y + c3·h) — the column kernels' operations in their order
/// (column_apply, add_halves), so the same bits — and the packed stores of skinning_avx2.h.
template <int K, bool P, bool N, bool T>
KINEMA_SKIN_INLINE void uniform_column_block(const KernelMesh& mesh, const float* columns,
                                             const KernelOut& out, const uint16_t* joints,
                                             const float* weights, size_t v) {
  W m[12];
  uniform_blend<K, true>(columns, joints, weights, m);
  const Block<true> block{v, 8, mesh.order};
  const W h1 = splat(1.0f), h0 = _mm256_setzero_ps();
  const auto apply = [&](const X3& a, W h) -> X3 {
    const auto row = [&](int r) {
      const W lo = fmadd(m[4 * r + 2], a.z, mul(m[4 * r], a.x));
      const W hi = fmadd(m[4 * r + 3], h, mul(m[4 * r + 1], a.y));
      return add(lo, hi);
    };
    return {row(0), row(1), row(2)};
  };
  const size_t n = mesh.vertex_count;
  if constexpr (P)
    block.store(out.positions, apply(block.load(mesh.positions, mesh.planar_positions, n), h1));
  if constexpr (N)
    block.store(out.normals, apply(block.load(mesh.normals, mesh.planar_normals, n), h0));
  if constexpr (T)
    block.store(out.tangents, apply(block.load(mesh.tangents, mesh.planar_tangents, n), h0));
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
      if constexpr (K >= 1 && K <= 4 && !Unweighted) {
        // Eight vertices sharing their joints: one block without per-vertex blends.
        if (v + 8 <= end && same_joints<K>(joints)) {
          uniform_column_block<K, true, false, false>(mesh, columns, out, joints, weights, v);
          v += 6, joints += 6 * stride, weights += 6 * stride;
          continue;
        }
      }
      const W a = column_transform<K, Unweighted>(columns, joints, weights, count, src + 3 * v);
      const W b = column_transform<K, Unweighted>(columns, joints + stride, weights + stride, count,
                                                  src + 3 * v + 3);
      const W r = add(_mm256_permute2f128_ps(a, b, 0x20), _mm256_permute2f128_ps(a, b, 0x31));
      _mm_storeu_ps(dst + 3 * v, _mm256_castps256_ps128(r));
      _mm_storeu_ps(dst + 3 * v + 3, _mm256_extractf128_ps(r, 1));
    }
  }
  for (; v < end; ++v, joints += stride, weights += stride) {
    if constexpr (K >= 1 && K <= 4 && !Unweighted) {
      // Scattered: eight vertices sharing their joints as one block too, its stores scattered
      // (4–8 % for positions; with normals and tangents the scattering of three attributes
      // costs more than it saves, so lbs_attribute_columns does not).
      if (order && v + 8 <= end && same_joints<K>(joints)) {
        uniform_column_block<K, true, false, false>(mesh, columns, out, joints, weights, v);
        v += 7, joints += 7 * stride, weights += 7 * stride;
        continue;
      }
    }
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
      if constexpr (K >= 1 && K <= 4) {
        if (v + 8 <= end && same_joints<K>(joints)) {
          uniform_column_block<K, true, N, T>(mesh, columns, out, joints, weights, v);
          v += 6, joints += 6 * stride, weights += 6 * stride;
          continue;
        }
      }
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

}  // namespace

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

}  // namespace kinema::skin_detail

#endif  // KINEMA_SKIN_AVX2
