// The SIMD skinning kernels. Each vertex's blend — the 3×4 matrix rows Σ w·S, or the dual
// quaternion Σ ±w·q — is built with 4-wide multiply-adds; four vertices at a time are then
// transposed so that the transforms (position, normal by the cofactor matrix = inverse transpose
// up to a positive factor, tangent), DQS's normalization and rotation, and the renormalization
// run lane by lane. SSE4.1 on x86-64-v2 (FMA when the compiler targets it); a plain C++ 4-vector
// elsewhere. The one-vertex kernels (Cols, apply_lbs, dqs_group) serve DQS with a pre-scale stage
// or an LBS/DQS mix. run_range hands LBS and pure DQS to the AVX2 kernels (the *_avx2.cpp files)
// where the CPU has AVX2 + FMA.
#include <atomic>
#include <cmath>
#include <cstring>

#include "kinema/core/cpu_features.h"
#include "skinning_kernels.h"

#if defined(__SSE4_1__)
#include <immintrin.h>
#define KINEMA_SKIN_SSE 1
#endif

namespace kinema::skin_detail {

namespace {

static_assert(sizeof(Affine3x4f) == 48, "palette entries are 12 packed floats");
static_assert(sizeof(DualQuatf) == 32, "dual quaternions are 8 packed floats");
static_assert(sizeof(Vec3f) == 12, "vectors are 3 packed floats");

#if KINEMA_SKIN_SSE
using V = __m128;
KINEMA_SKIN_INLINE V zero() { return _mm_setzero_ps(); }
KINEMA_SKIN_INLINE V splat(float f) { return _mm_set1_ps(f); }
KINEMA_SKIN_INLINE V set(float x, float y, float z, float w) { return _mm_setr_ps(x, y, z, w); }
KINEMA_SKIN_INLINE V load4(const float* p) { return _mm_loadu_ps(p); }
KINEMA_SKIN_INLINE void store4(float* p, V v) { _mm_storeu_ps(p, v); }
// x and y move as one 8-byte value (memcpy: vectors are only 4-byte aligned).
KINEMA_SKIN_INLINE V load_xy(const Vec3f& v) {
  double xy;
  std::memcpy(&xy, &v.x, sizeof xy);
  return _mm_castpd_ps(_mm_set_sd(xy));
}
KINEMA_SKIN_INLINE V load3(const Vec3f& v) { return _mm_movelh_ps(load_xy(v), _mm_load_ss(&v.z)); }
KINEMA_SKIN_INLINE void store3(Vec3f& v, V a) {
  const double xy = _mm_cvtsd_f64(_mm_castps_pd(a));
  std::memcpy(&v.x, &xy, sizeof xy);
  _mm_store_ss(&v.z, _mm_movehl_ps(a, a));
}
KINEMA_SKIN_INLINE V add(V a, V b) { return _mm_add_ps(a, b); }
KINEMA_SKIN_INLINE V sub(V a, V b) { return _mm_sub_ps(a, b); }
KINEMA_SKIN_INLINE V mul(V a, V b) { return _mm_mul_ps(a, b); }
#if defined(__FMA__)
KINEMA_SKIN_INLINE V madd(V a, V b, V c) { return _mm_fmadd_ps(a, b, c); }
#else
KINEMA_SKIN_INLINE V madd(V a, V b, V c) { return _mm_add_ps(_mm_mul_ps(a, b), c); }
#endif
template <int I>
KINEMA_SKIN_INLINE V lane(V a) {
  return _mm_shuffle_ps(a, a, _MM_SHUFFLE(I, I, I, I));
}
KINEMA_SKIN_INLINE V yzx(V a) { return _mm_shuffle_ps(a, a, _MM_SHUFFLE(3, 0, 2, 1)); }
// Dot products broadcast to every lane by shuffles and adds (dpps is slow on AMD's cores).
KINEMA_SKIN_INLINE V hsum4(V m) {
  const V s = _mm_add_ps(m, _mm_shuffle_ps(m, m, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm_add_ps(s, _mm_shuffle_ps(s, s, _MM_SHUFFLE(1, 0, 3, 2)));
}
KINEMA_SKIN_INLINE V dot4(V a, V b) { return hsum4(_mm_mul_ps(a, b)); }
/// Lane 3 of the operands must be 0 (vectors loaded by load3) in one of them.
KINEMA_SKIN_INLINE V dot3(V a, V b) { return dot4(a, b); }
/// `w` with the sign of `s` folded in (negated when s is negative).
KINEMA_SKIN_INLINE V sign_from(V w, V s) {
  return _mm_xor_ps(w, _mm_and_ps(s, _mm_set1_ps(-0.0f)));
}
/// Lane 3 set to 0.
KINEMA_SKIN_INLINE V xyz(V a) {
  return _mm_and_ps(a, _mm_castsi128_ps(_mm_setr_epi32(-1, -1, -1, 0)));
}
/// 1/sqrt(x): the hardware estimate refined by one Newton step (relative error ≈ 1e-7).
KINEMA_SKIN_INLINE V rsqrt(V x) {
  const V r = _mm_rsqrt_ps(x);
  return mul(mul(splat(0.5f), r), sub(splat(3.0f), mul(mul(x, r), r)));
}
/// v / |v| when |v|² is a normal float, else `fallback`.
KINEMA_SKIN_INLINE V unit(V v, V fallback) {
  const V l2 = dot3(v, v);
  const V ok = _mm_cmpgt_ps(l2, splat(1e-36f));
  return _mm_blendv_ps(fallback, mul(v, rsqrt(_mm_max_ps(l2, splat(1e-36f)))), ok);
}
/// (Σ a, Σ b, Σ c, Σ c): the horizontal sums of three vectors.
KINEMA_SKIN_INLINE V hsum3(V a, V b, V c) {
  return _mm_hadd_ps(_mm_hadd_ps(a, b), _mm_hadd_ps(c, c));
}
/// (Σ a, Σ b, Σ c, Σ d), added in the same order as hsum3.
KINEMA_SKIN_INLINE V hsum4x3(V a, V b, V c, V d) {
  return _mm_hadd_ps(_mm_hadd_ps(a, b), _mm_hadd_ps(c, d));
}
/// (x, y, z, 1).
KINEMA_SKIN_INLINE V load3_one(const Vec3f& v) {
  return _mm_movelh_ps(load_xy(v), _mm_setr_ps(v.z, 1.0f, 0.0f, 0.0f));
}
KINEMA_SKIN_INLINE V gt(V a, V b) { return _mm_cmpgt_ps(a, b); }
KINEMA_SKIN_INLINE V max(V a, V b) { return _mm_max_ps(a, b); }
KINEMA_SKIN_INLINE V select(V mask, V yes, V no) { return _mm_blendv_ps(no, yes, mask); }
KINEMA_SKIN_INLINE void transpose(V& a, V& b, V& c, V& d) { _MM_TRANSPOSE4_PS(a, b, c, d); }
#else
struct V {
  float v[4];
};
KINEMA_SKIN_INLINE V zero() { return {{0, 0, 0, 0}}; }
KINEMA_SKIN_INLINE V splat(float f) { return {{f, f, f, f}}; }
KINEMA_SKIN_INLINE V set(float x, float y, float z, float w) { return {{x, y, z, w}}; }
KINEMA_SKIN_INLINE V load4(const float* p) { return {{p[0], p[1], p[2], p[3]}}; }
KINEMA_SKIN_INLINE void store4(float* p, V a) { std::memcpy(p, a.v, sizeof a.v); }
KINEMA_SKIN_INLINE V load3(const Vec3f& a) { return {{a.x, a.y, a.z, 0}}; }
KINEMA_SKIN_INLINE void store3(Vec3f& out, V a) { out = {a.v[0], a.v[1], a.v[2]}; }
KINEMA_SKIN_INLINE V add(V a, V b) {
  return {{a.v[0] + b.v[0], a.v[1] + b.v[1], a.v[2] + b.v[2], a.v[3] + b.v[3]}};
}
KINEMA_SKIN_INLINE V sub(V a, V b) {
  return {{a.v[0] - b.v[0], a.v[1] - b.v[1], a.v[2] - b.v[2], a.v[3] - b.v[3]}};
}
KINEMA_SKIN_INLINE V mul(V a, V b) {
  return {{a.v[0] * b.v[0], a.v[1] * b.v[1], a.v[2] * b.v[2], a.v[3] * b.v[3]}};
}
KINEMA_SKIN_INLINE V madd(V a, V b, V c) { return add(mul(a, b), c); }
template <int I>
KINEMA_SKIN_INLINE V lane(V a) {
  return splat(a.v[I]);
}
KINEMA_SKIN_INLINE V yzx(V a) { return {{a.v[1], a.v[2], a.v[0], a.v[3]}}; }
KINEMA_SKIN_INLINE V dot3(V a, V b) {
  return splat(a.v[0] * b.v[0] + a.v[1] * b.v[1] + a.v[2] * b.v[2]);
}
KINEMA_SKIN_INLINE V dot4(V a, V b) {
  return splat(a.v[0] * b.v[0] + a.v[1] * b.v[1] + a.v[2] * b.v[2] + a.v[3] * b.v[3]);
}
KINEMA_SKIN_INLINE V sign_from(V w, V s) {
  V m;
  for (int i = 0; i < 4; ++i) m.v[i] = s.v[i] < 0 ? -w.v[i] : w.v[i];
  return m;
}
KINEMA_SKIN_INLINE V xyz(V a) { return {{a.v[0], a.v[1], a.v[2], 0}}; }
KINEMA_SKIN_INLINE V rsqrt(V x) {
  return {{1.0f / std::sqrt(x.v[0]), 1.0f / std::sqrt(x.v[1]), 1.0f / std::sqrt(x.v[2]),
           1.0f / std::sqrt(x.v[3])}};
}
KINEMA_SKIN_INLINE V unit(V v, V fallback) {
  const V l2 = dot3(v, v);
  return l2.v[0] > 1e-36f ? mul(v, rsqrt(l2)) : fallback;
}
KINEMA_SKIN_INLINE V hsum3(V a, V b, V c) {
  const auto sum = [](V x) { return (x.v[0] + x.v[1]) + (x.v[2] + x.v[3]); };
  return {{sum(a), sum(b), sum(c), sum(c)}};
}
KINEMA_SKIN_INLINE V load3_one(const Vec3f& a) { return {{a.x, a.y, a.z, 1}}; }
KINEMA_SKIN_INLINE V hsum4x3(V a, V b, V c, V d) {
  const auto sum = [](V x) { return (x.v[0] + x.v[1]) + (x.v[2] + x.v[3]); };
  return {{sum(a), sum(b), sum(c), sum(d)}};
}
KINEMA_SKIN_INLINE V gt(V a, V b) {
  V m;
  for (int i = 0; i < 4; ++i) m.v[i] = a.v[i] > b.v[i] ? 1.0f : 0.0f;
  return m;
}
KINEMA_SKIN_INLINE V max(V a, V b) {
  V m;
  for (int i = 0; i < 4; ++i) m.v[i] = a.v[i] > b.v[i] ? a.v[i] : b.v[i];
  return m;
}
KINEMA_SKIN_INLINE V select(V mask, V yes, V no) {
  V m;
  for (int i = 0; i < 4; ++i) m.v[i] = mask.v[i] != 0 ? yes.v[i] : no.v[i];
  return m;
}
KINEMA_SKIN_INLINE void transpose(V& a, V& b, V& c, V& d) {
  const V r[4] = {a, b, c, d};
  a = {{r[0].v[0], r[1].v[0], r[2].v[0], r[3].v[0]}};
  b = {{r[0].v[1], r[1].v[1], r[2].v[1], r[3].v[1]}};
  c = {{r[0].v[2], r[1].v[2], r[2].v[2], r[3].v[2]}};
  d = {{r[0].v[3], r[1].v[3], r[2].v[3], r[3].v[3]}};
}
#endif

/// a × b, lane 3 zero when both lane 3s are zero.
KINEMA_SKIN_INLINE V cross(V a, V b) { return yzx(sub(mul(a, yzx(b)), mul(yzx(a), b))); }

/// Rotation by a unit quaternion r = (u, w): v + 2·u × (u × v + w·v).
struct Rotation {
  V r, w;
  V apply(V v) const {
    const V c = cross(r, madd(w, v, cross(r, v)));
    return add(v, add(c, c));
  }
};

/// An affine matrix as four columns (lane 3 of each is 0).
struct Cols {
  V c0, c1, c2, c3;
  V point(V p) const {
    return madd(c0, lane<0>(p), madd(c1, lane<1>(p), madd(c2, lane<2>(p), c3)));
  }
  V vector(V v) const { return madd(c0, lane<0>(v), madd(c1, lane<1>(v), mul(c2, lane<2>(v)))); }
  /// The cofactor matrix (det · inverse transpose) with det's sign folded out: maps normals.
  Cols normal_matrix() const {
    Cols n{cross(c1, c2), cross(c2, c0), cross(c0, c1), zero()};
    const V det = dot3(c0, n.c0);
    n.c0 = sign_from(n.c0, det);
    n.c1 = sign_from(n.c1, det);
    n.c2 = sign_from(n.c2, det);
    return n;
  }
};

/// An affine matrix as its three rows.
struct Rows {
  V r0, r1, r2;
  /// M · (p, 1), p with lane 3 = 1: three row dot products summed horizontally.
  V point(V p1) const { return hsum3(mul(r0, p1), mul(r1, p1), mul(r2, p1)); }
  /// The 3×3 part times v (lane 3 of v is 0); lane 3 of the result cleared.
  V vector(V v) const { return xyz(hsum3(mul(r0, v), mul(r1, v), mul(r2, v))); }
  /// The normal transform: the cofactor matrix of the 3×3 part (rows r1×r2, r2×r0, r0×r1 = det
  /// times the inverse transpose) times n, with the determinant's sign folded in.
  V normal(V n) const {
    const V a0 = xyz(r0), a1 = xyz(r1), a2 = xyz(r2);
    const V c0 = cross(a1, a2), c1 = cross(a2, a0), c2 = cross(a0, a1);
    return sign_from(xyz(hsum3(mul(c0, n), mul(c1, n), mul(c2, n))), dot4(a0, c0));
  }
  Cols cols() const {
    V a = r0, b = r1, c = r2, d = zero();
    transpose(a, b, c, d);
    return {a, b, c, d};
  }
};

/// Σ w_k S_{j_k} over K pairs (K = 0: `k` pairs), as rows.
template <int K>
KINEMA_SKIN_INLINE Rows blend_rows(const float* palette, const uint16_t* joints,
                                   const float* weights, int k) {
  const int count = K > 0 ? K : k;
  const float* s = palette + 12 * size_t(joints[0]);
  V w = splat(weights[0]);
  V r0 = mul(w, load4(s)), r1 = mul(w, load4(s + 4)), r2 = mul(w, load4(s + 8));
  for (int i = 1; i < count; ++i) {
    s = palette + 12 * size_t(joints[i]);
    w = splat(weights[i]);
    r0 = madd(w, load4(s), r0);
    r1 = madd(w, load4(s + 4), r1);
    r2 = madd(w, load4(s + 8), r2);
  }
  return {r0, r1, r2};
}

template <int K>
KINEMA_SKIN_INLINE Cols blend(const float* palette, const uint16_t* joints, const float* weights,
                              int k) {
  return blend_rows<K>(palette, joints, weights, k).cols();
}

struct Result {
  V p, n, t;
};

template <bool N, bool T>
KINEMA_SKIN_INLINE Result apply_lbs(const Cols& m, const KernelMesh& mesh, size_t v) {
  Result r;
  r.p = m.point(load3(mesh.positions[v]));
  if constexpr (N) {
    const V n = load3(mesh.normals[v]);
    r.n = unit(m.normal_matrix().vector(n), n);
  }
  if constexpr (T) {
    const V t = load3(mesh.tangents[v]);
    r.t = unit(m.vector(t), t);
  }
  return r;
}

template <bool N, bool T>
KINEMA_SKIN_INLINE void write(const KernelOut& out, size_t o, const Result& r) {
  if (out.positions) store3(out.positions[o], r.p);
  if constexpr (N) store3(out.normals[o], r.n);
  if constexpr (T) store3(out.tangents[o], r.t);
}

// Positions only, four vertices at a time: the twelve row products are summed by a tree of
// horizontal adds that leaves the four results packed as x0 y0 z0 x1 | y1 z1 x2 y2 | z2 x3 y3
// z3 (the same additions, in the same order, as Rows::point: the same bits as one at a time).
template <int K>
void lbs_positions(const KernelMesh& mesh, const float* pal, const KernelOut& out,
                   const KernelGroup& g, size_t begin, size_t end) {
  const int k = g.influences;
  const size_t stride = size_t(K > 0 ? K : k);
  const uint16_t* joints = mesh.joints + g.pair_begin + (begin - g.begin) * stride;
  const float* weights = mesh.weights + g.pair_begin + (begin - g.begin) * stride;
  size_t v = begin;
  for (; v + 4 <= end; v += 4, joints += 4 * stride, weights += 4 * stride) {
    V x[4], y[4], z[4];
    for (size_t i = 0; i < 4; ++i) {
      const Rows r = blend_rows<K>(pal, joints + i * stride, weights + i * stride, k);
      const V p = load3_one(mesh.positions[v + i]);
      x[i] = mul(r.r0, p);
      y[i] = mul(r.r1, p);
      z[i] = mul(r.r2, p);
    }
    alignas(16) float packed[12];
    store4(packed, hsum4x3(x[0], y[0], z[0], x[1]));
    store4(packed + 4, hsum4x3(y[1], z[1], x[2], y[2]));
    store4(packed + 8, hsum4x3(z[2], x[3], y[3], z[3]));
    if (!mesh.order) {
      std::memcpy(&out.positions[v].x, packed, sizeof packed);
    } else {
      for (size_t i = 0; i < 4; ++i)
        out.positions[mesh.order[v + i]] = {packed[3 * i], packed[3 * i + 1], packed[3 * i + 2]};
    }
  }
  for (; v < end; ++v, joints += stride, weights += stride) {
    const Rows r = blend_rows<K>(pal, joints, weights, k);
    store3(out.positions[mesh.order ? mesh.order[v] : v], r.point(load3_one(mesh.positions[v])));
  }
}

/// Dual quaternion linear blending of one vertex's pairs, each on the hemisphere of the first
/// pair with a non-zero weight (padding pairs have 0). Not normalized.
KINEMA_SKIN_INLINE void blend_dq(const float* dq, const uint16_t* joints, const float* weights,
                                 int count, V& br, V& bd) {
  int a = 0;
  while (a + 1 < count && weights[a] == 0.0f) ++a;
  const V anchor = load4(dq + 8 * size_t(joints[a]));
  br = zero();
  bd = zero();
  for (int i = 0; i < count; ++i) {
    const float* q = dq + 8 * size_t(joints[i]);
    const V real = load4(q);
    const V w = sign_from(splat(weights[i]), dot4(real, anchor));
    br = madd(w, real, br);
    bd = madd(w, load4(q + 4), bd);
  }
}

/// Four 3-vectors as structure of arrays (lane i = vertex i).
struct Soa3 {
  V x, y, z;
};

KINEMA_SKIN_INLINE Soa3 soa_load(const Vec3f* base, const size_t* index) {
  V a = load3(base[index[0]]), b = load3(base[index[1]]), c = load3(base[index[2]]),
    d = load3(base[index[3]]);
  transpose(a, b, c, d);
  return {a, b, c};
}

KINEMA_SKIN_INLINE void soa_store(Vec3f* base, const size_t* index, size_t count, const Soa3& s) {
  V a = s.x, b = s.y, c = s.z, d = zero();
  transpose(a, b, c, d);
  const V rows[4] = {a, b, c, d};
  for (size_t i = 0; i < count; ++i) store3(base[index[i]], rows[i]);
}

KINEMA_SKIN_INLINE Soa3 soa_cross(const Soa3& a, const Soa3& b) {
  return {sub(mul(a.y, b.z), mul(a.z, b.y)), sub(mul(a.z, b.x), mul(a.x, b.z)),
          sub(mul(a.x, b.y), mul(a.y, b.x))};
}

/// v / |v| lane by lane; `fallback` where |v|² is not a normal float.
KINEMA_SKIN_INLINE Soa3 soa_unit(const Soa3& v, const Soa3& fallback) {
  const V l2 = madd(v.x, v.x, madd(v.y, v.y, mul(v.z, v.z)));
  const V ok = gt(l2, splat(1e-36f));
  const V inv = rsqrt(max(l2, splat(1e-36f)));
  return {select(ok, mul(v.x, inv), fallback.x), select(ok, mul(v.y, inv), fallback.y),
          select(ok, mul(v.z, inv), fallback.z)};
}

/// Pure DQS (no pre-scale, no mix), four vertices at a time: each vertex's blend as above, then
/// normalization, translation and rotation lane by lane. A short tail repeats its last vertex in
/// the unused lanes, so every vertex gets the same operations (the same bits) wherever a block
/// starts.
KINEMA_SKIN_INLINE V soa_dot(const Soa3& a, const Soa3& b) {
  return madd(a.x, b.x, madd(a.y, b.y, mul(a.z, b.z)));
}

/// LBS with normals and/or tangents, four vertices at a time: each vertex's blended rows as
/// above, transposed so that every matrix entry holds the four vertices, then the transforms,
/// the cofactor (normal) matrix and the normalization lane by lane. A short tail repeats its
/// last vertex, so every vertex gets the same operations wherever a block starts.
template <int K, bool N, bool T>
void lbs_group4(const KernelMesh& mesh, const float* pal, const KernelOut& out,
                const KernelGroup& g, size_t begin, size_t end) {
  const int k = g.influences;
  for (size_t v = begin; v < end; v += 4) {
    const size_t live = end - v < 4 ? end - v : 4;
    size_t in[4], o[4];
    V r0[4], r1[4], r2[4];
    for (size_t i = 0; i < 4; ++i) {
      in[i] = v + (i < live ? i : live - 1);
      o[i] = mesh.order ? mesh.order[in[i]] : in[i];
      const size_t pair = g.pair_begin + (in[i] - g.begin) * size_t(k);
      const Rows r = blend_rows<K>(pal, mesh.joints + pair, mesh.weights + pair, k);
      r0[i] = r.r0;
      r1[i] = r.r1;
      r2[i] = r.r2;
    }
    // Entry (r, c) of the four blended matrices: a_r.{x,y,z} = columns 0..2, t_r = column 3.
    transpose(r0[0], r0[1], r0[2], r0[3]);
    transpose(r1[0], r1[1], r1[2], r1[3]);
    transpose(r2[0], r2[1], r2[2], r2[3]);
    const Soa3 a0{r0[0], r0[1], r0[2]}, a1{r1[0], r1[1], r1[2]}, a2{r2[0], r2[1], r2[2]};
    if (out.positions) {
      const Soa3 p = soa_load(mesh.positions, in);
      soa_store(
          out.positions, o, live,
          {add(soa_dot(a0, p), r0[3]), add(soa_dot(a1, p), r1[3]), add(soa_dot(a2, p), r2[3])});
    }
    if (mesh.blended_matrix_normals) {  // LbsNormals::blended_matrix: M·n, M·t as they are
      if constexpr (N) {
        const Soa3 n = soa_load(mesh.normals, in);
        soa_store(out.normals, o, live, {soa_dot(a0, n), soa_dot(a1, n), soa_dot(a2, n)});
      }
      if constexpr (T) {
        const Soa3 t = soa_load(mesh.tangents, in);
        soa_store(out.tangents, o, live, {soa_dot(a0, t), soa_dot(a1, t), soa_dot(a2, t)});
      }
      continue;
    }
    if constexpr (N) {
      // Cofactor rows a1×a2, a2×a0, a0×a1 (det · inverse transpose), det's sign folded in.
      const Soa3 c0 = soa_cross(a1, a2), c1 = soa_cross(a2, a0), c2 = soa_cross(a0, a1);
      const V det = soa_dot(a0, c0);
      const Soa3 n = soa_load(mesh.normals, in);
      const Soa3 m{sign_from(soa_dot(c0, n), det), sign_from(soa_dot(c1, n), det),
                   sign_from(soa_dot(c2, n), det)};
      soa_store(out.normals, o, live, soa_unit(m, n));
    }
    if constexpr (T) {
      const Soa3 t = soa_load(mesh.tangents, in);
      soa_store(out.tangents, o, live,
                soa_unit({soa_dot(a0, t), soa_dot(a1, t), soa_dot(a2, t)}, t));
    }
  }
}

template <int K, bool N, bool T>
void dqs_group4(const KernelMesh& mesh, const DqsKernelPalette& palette, const KernelOut& out,
                const KernelGroup& g, size_t begin, size_t end) {
  const float* dq = &palette.dual_quats->real.x;
  const int k = g.influences;
  const int count = K > 0 ? K : k;
  for (size_t v = begin; v < end; v += 4) {
    const size_t live = end - v < 4 ? end - v : 4;
    size_t in[4], o[4];
    V br[4], bd[4];
    for (size_t i = 0; i < 4; ++i) {
      in[i] = v + (i < live ? i : live - 1);
      o[i] = mesh.order ? mesh.order[in[i]] : in[i];
      const size_t pair = g.pair_begin + (in[i] - g.begin) * size_t(k);
      blend_dq(dq, mesh.joints + pair, mesh.weights + pair, count, br[i], bd[i]);
    }
    transpose(br[0], br[1], br[2], br[3]);  // now x, y, z, w of the four real parts
    transpose(bd[0], bd[1], bd[2], bd[3]);
    const V len2 = madd(br[0], br[0], madd(br[1], br[1], madd(br[2], br[2], mul(br[3], br[3]))));
    const V ok = gt(len2, splat(1e-36f));
    const V inv = rsqrt(max(len2, splat(1e-36f)));
    const Soa3 r{select(ok, mul(br[0], inv), zero()), select(ok, mul(br[1], inv), zero()),
                 select(ok, mul(br[2], inv), zero())};
    const V rw = select(ok, mul(br[3], inv), splat(1.0f));
    const Soa3 d{select(ok, mul(bd[0], inv), zero()), select(ok, mul(bd[1], inv), zero()),
                 select(ok, mul(bd[2], inv), zero())};
    const V dw = select(ok, mul(bd[3], inv), zero());
    // Translation 2·(w_r·d − w_d·r + r × d); rotation v + 2·r × (r × v + w_r·v).
    const Soa3 rd = soa_cross(r, d);
    const V two = splat(2.0f);
    const Soa3 t{mul(two, add(sub(mul(rw, d.x), mul(dw, r.x)), rd.x)),
                 mul(two, add(sub(mul(rw, d.y), mul(dw, r.y)), rd.y)),
                 mul(two, add(sub(mul(rw, d.z), mul(dw, r.z)), rd.z))};
    const auto rotate = [&](const Soa3& a) {
      const Soa3 c0 = soa_cross(r, a);
      const Soa3 c = soa_cross(r, {madd(rw, a.x, c0.x), madd(rw, a.y, c0.y), madd(rw, a.z, c0.z)});
      return Soa3{madd(two, c.x, a.x), madd(two, c.y, a.y), madd(two, c.z, a.z)};
    };
    if (out.positions) {
      const Soa3 p = rotate(soa_load(mesh.positions, in));
      soa_store(out.positions, o, live, {add(p.x, t.x), add(p.y, t.y), add(p.z, t.z)});
    }
    if constexpr (N) {
      const Soa3 n = soa_load(mesh.normals, in);
      soa_store(out.normals, o, live, soa_unit(rotate(n), n));
    }
    if constexpr (T) {
      const Soa3 tv = soa_load(mesh.tangents, in);
      soa_store(out.tangents, o, live, soa_unit(rotate(tv), tv));
    }
  }
}

template <int K, bool N, bool T>
void lbs_group(const KernelMesh& mesh, const Affine3x4f* palette, const KernelOut& out,
               const KernelGroup& g, size_t begin, size_t end) {
  const float* pal = palette->m.data();
  if constexpr (!N && !T) {
    if (out.positions) lbs_positions<K>(mesh, pal, out, g, begin, end);
  } else {
    lbs_group4<K, N, T>(mesh, pal, out, g, begin, end);
  }
}

template <int K, bool N, bool T>
void dqs_group(const KernelMesh& mesh, const DqsKernelPalette& palette, const KernelOut& out,
               const KernelGroup& g, size_t begin, size_t end) {
  const float* dq = &palette.dual_quats->real.x;
  const float* pre = palette.prescale ? palette.prescale->m.data() : nullptr;
  const int k = g.influences;
  const int count = K > 0 ? K : k;
  for (size_t v = begin; v < end; ++v) {
    const size_t pair = g.pair_begin + (v - g.begin) * size_t(k);
    const uint16_t* joints = mesh.joints + pair;
    const float* weights = mesh.weights + pair;
    V br, bd;
    blend_dq(dq, joints, weights, count, br, bd);
    // Normalize by the real part's length (branch-free: a zero blend gives the identity).
    const V len2 = dot4(br, br);
    const V ok = gt(len2, splat(1e-36f));
    const V inv = rsqrt(max(len2, splat(1e-36f)));
    br = select(ok, mul(br, inv), set(0, 0, 0, 1));
    bd = select(ok, mul(bd, inv), zero());
    // Translation 2·(w_r·d − w_d·r + r × d), rotation p + 2·r × (r × p + w_r·p).
    const V rw = lane<3>(br);
    const V t = mul(splat(2.0f), add(sub(mul(rw, bd), mul(lane<3>(bd), br)), cross(br, bd)));
    const Rotation rot{br, rw};
    Result s;
    if (pre) {
      // Pre-scale stage: M = [R | t] · K, normals by M's cofactor matrix (= R · cof K).
      const Cols kc = blend<K>(pre, joints, weights, k);
      const Cols m{rot.apply(kc.c0), rot.apply(kc.c1), rot.apply(kc.c2), t};
      s = apply_lbs<N, T>(m, mesh, v);
    } else {
      s.p = add(rot.apply(load3(mesh.positions[v])), t);
      if constexpr (N) {
        const V n = load3(mesh.normals[v]);
        s.n = unit(rot.apply(n), n);
      }
      if constexpr (T) {
        const V tv = load3(mesh.tangents[v]);
        s.t = unit(rot.apply(tv), tv);
      }
    }
    const size_t o = mesh.order ? mesh.order[v] : v;
    if (palette.amount && palette.amount[o] < 1.0f) {
      // Per-vertex LBS/DQS mix: a linear mix of the two results.
      const float amount = palette.amount[o] < 0.0f ? 0.0f : palette.amount[o];
      const Result l =
          apply_lbs<N, T>(blend<K>(palette.lbs->m.data(), joints, weights, k), mesh, v);
      const V ka = splat(amount), kl = splat(1.0f - amount);
      s.p = add(mul(l.p, kl), mul(s.p, ka));
      if constexpr (N) s.n = unit(add(mul(l.n, kl), mul(s.n, ka)), s.n);
      if constexpr (T) s.t = unit(add(mul(l.t, kl), mul(s.t, ka)), s.t);
    }
    write<N, T>(out, o, s);
  }
}

// Dispatch on the influence count and the attributes written.
template <bool Dqs, bool N, bool T, class Palette>
void run_group(const KernelMesh& mesh, const Palette& palette, const KernelOut& out,
               const KernelGroup& g, size_t b, size_t e) {
  auto go = [&]<int K>() {
    if constexpr (Dqs) {
      if (!palette.prescale && !palette.amount)
        dqs_group4<K, N, T>(mesh, palette, out, g, b, e);
      else
        dqs_group<K, N, T>(mesh, palette, out, g, b, e);
    } else
      lbs_group<K, N, T>(mesh, palette, out, g, b, e);
  };
  with_influence_count(g.influences, go);
}

// 1 when the AVX2 + FMA kernels run, 0 when the SSE4.1 (or portable) ones do; -1 before the
// first call asks the CPU.
std::atomic<int> g_use_avx2{-1};

bool cpu_has_avx2_fma() {
#if KINEMA_SKIN_AVX2
  return cpu_features().avx2_fma();
#else
  return false;
#endif
}

bool use_avx2() {
  int use = g_use_avx2.load(std::memory_order_relaxed);
  if (use < 0) {
    use = cpu_has_avx2_fma() ? 1 : 0;
    g_use_avx2.store(use, std::memory_order_relaxed);
  }
  return use == 1;
}

// 1 when the AVX-512 kernel runs (with the AVX2 ones where it does not apply), 0 when it does
// not; -1 before the first call asks the CPU.
std::atomic<int> g_use_avx512{-1};

bool cpu_has_avx512() {
#if KINEMA_SKIN_AVX512
  return cpu_features().avx512_fvldqbw();
#else
  return false;
#endif
}

// The AVX-512 kernel runs only where the AVX2 ones are allowed as well.
bool use_avx512() {
  int use = g_use_avx512.load(std::memory_order_relaxed);
  if (use < 0) {
    use = cpu_has_avx512() ? 1 : 0;
    g_use_avx512.store(use, std::memory_order_relaxed);
  }
  return use == 1 && use_avx2();
}

template <bool Dqs, class Palette>
void run_range(const KernelMesh& mesh, const Palette& palette, const KernelOut& out, size_t begin,
               size_t end) {
  const bool n = out.normals != nullptr, t = out.tangents != nullptr;
#if KINEMA_SKIN_AVX2
  const bool avx2 = use_avx2();
#endif
#if KINEMA_SKIN_AVX512
  const bool avx512 = use_avx512();
#endif
  for (const KernelGroup& g : mesh.groups) {
    const size_t b = begin > g.begin ? begin : g.begin, e = end < g.end ? end : g.end;
    if (b >= e) continue;
#if KINEMA_SKIN_AVX2
    if (avx2) {
      if constexpr (Dqs) {
        if (palette.rigid_columns && g.influences == 1) {
          dqs_rigid_positions_avx2(mesh, palette.rigid_columns, out, g, b, e);
          continue;
        }
        if (!palette.prescale && !palette.amount) {
          dqs_group_avx2(mesh, palette.dual_quats, out, g, b, e);
          continue;
        }
      } else {
#if KINEMA_SKIN_AVX512
        if (avx512) {
          lbs_group_avx512(mesh, palette, out, g, b, e);
          continue;
        }
#endif
        lbs_group_avx2(mesh, palette, out, g, b, e);
        continue;
      }
    }
#endif
    if (n && t)
      run_group<Dqs, true, true>(mesh, palette, out, g, b, e);
    else if (n)
      run_group<Dqs, true, false>(mesh, palette, out, g, b, e);
    else if (t)
      run_group<Dqs, false, true>(mesh, palette, out, g, b, e);
    else
      run_group<Dqs, false, false>(mesh, palette, out, g, b, e);
  }
}

}  // namespace

bool lbs_by_columns(const KernelMesh& mesh, const KernelOut& out) {
#if KINEMA_SKIN_AVX2
  return out.positions && (!out.normals || mesh.blended_matrix_normals) && mesh.palette_size > 0 &&
         mesh.palette_size <= column_palette_joints && use_avx2();
#else
  (void)mesh;
  (void)out;
  return false;
#endif
}

void lbs_range(const KernelMesh& mesh, const Affine3x4f* palette, const KernelOut& out,
               size_t begin, size_t end) {
#if KINEMA_SKIN_AVX2
  if (lbs_by_columns(mesh, out)) {
    alignas(32) float columns[column_palette_joints * 16];
    column_palette_avx2(palette, mesh.palette_size, columns);
    lbs_columns_avx2(mesh, columns, out, begin, end);
    return;
  }
#endif
  run_range<false>(mesh, palette, out, begin, end);
}

bool dqs_by_call_copies(const KernelMesh& mesh, const DqsKernelPalette& palette,
                        const KernelOut& out) {
#if KINEMA_SKIN_AVX2
  const bool positions_only = out.positions && !out.normals && !out.tangents;
  return (mesh.has_dqs_links || positions_only) && !palette.prescale && !palette.amount &&
         mesh.palette_size > 0 && mesh.palette_size <= column_palette_joints && use_avx2();
#else
  (void)mesh;
  (void)palette;
  (void)out;
  return false;
#endif
}

bool signed_dual_quats(const KernelMesh& mesh, const DualQuatf* dual_quats, float* signed_quats) {
  const float* dq = &dual_quats->real.x;
  // The per-influence test negates an influence when the dot product of the real parts, summed
  // as (x·x + y·y) + (z·z + w·w), has its sign bit set; the links must agree with it.
  const auto negative = [dq](size_t a, size_t b) {
    const float* p = dq + 8 * a;
    const float* q = dq + 8 * b;
    return std::signbit((q[0] * p[0] + q[1] * p[1]) + (q[2] * p[2] + q[3] * p[3]));
  };
  const size_t joints = mesh.palette_size;
  bool flip[column_palette_joints] = {};
  for (size_t i = 0; i < mesh.dqs_link_count; ++i) {
    const size_t a = mesh.dqs_links[i][0], b = mesh.dqs_links[i][1];
    if (i < mesh.dqs_tree_links)
      flip[b] = flip[a] != negative(a, b);
    else if ((flip[a] != flip[b]) != negative(a, b))
      return false;
  }
  for (size_t j = 0; j < joints; ++j) {
    const float sign = flip[j] ? -1.0f : 1.0f;  // × −1 is an exact negation
    for (size_t c = 0; c < 8; ++c) signed_quats[8 * j + c] = dq[8 * j + c] * sign;
  }
  return true;
}

void dqs_range_direct(const KernelMesh& mesh, const DqsKernelPalette& palette, const KernelOut& out,
                      size_t begin, size_t end) {
  run_range<true>(mesh, palette, out, begin, end);
}

void dqs_range(const KernelMesh& mesh, const DqsKernelPalette& palette, const KernelOut& out,
               size_t begin, size_t end) {
#if KINEMA_SKIN_AVX2
  if (dqs_by_call_copies(mesh, palette, out)) {
    with_dqs_call_copies(mesh, palette, out,
                         [&](const float* signed_quats, const DqsKernelPalette& p) {
                           if (signed_quats)
                             dqs_signed_avx2(mesh, signed_quats, out, begin, end, p.rigid_columns);
                           else
                             run_range<true>(mesh, p, out, begin, end);
                         });
    return;
  }
#endif
  run_range<true>(mesh, palette, out, begin, end);
}

}  // namespace kinema::skin_detail

namespace kinema {

const char* skin_simd_kernels() {
  if (skin_detail::use_avx512()) return "avx512";
  if (skin_detail::use_avx2()) return "avx2+fma";
#if KINEMA_SKIN_SSE
  return "sse4.1";
#else
  return "portable";
#endif
}

bool set_skin_simd_avx2(bool allowed) {
  skin_detail::g_use_avx2.store(allowed && skin_detail::cpu_has_avx2_fma() ? 1 : 0,
                                std::memory_order_relaxed);
  return skin_detail::use_avx2();
}

bool set_skin_simd_avx512(bool allowed) {
  skin_detail::g_use_avx512.store(allowed && skin_detail::cpu_has_avx512() ? 1 : 0,
                                  std::memory_order_relaxed);
  return skin_detail::use_avx512();
}

}  // namespace kinema
