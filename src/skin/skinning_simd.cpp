// The SIMD skinning kernels: one vertex per iteration, the blended 3×4 matrix built from the
// palette rows with 4-wide multiply-adds, transposed to columns, then applied to the position,
// normal (cofactor matrix = inverse transpose up to a positive factor) and tangent. SSE4.1 on
// x86-64-v2 (FMA when the compiler targets it); a plain C++ 4-vector elsewhere.
#include <cmath>
#include <cstring>

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
inline V zero() { return _mm_setzero_ps(); }
inline V splat(float f) { return _mm_set1_ps(f); }
inline V set(float x, float y, float z, float w) { return _mm_setr_ps(x, y, z, w); }
inline V load4(const float* p) { return _mm_loadu_ps(p); }
inline void store4(float* p, V v) { _mm_storeu_ps(p, v); }
inline V load3(const Vec3f& v) {
  const V xy = _mm_castpd_ps(_mm_load_sd(reinterpret_cast<const double*>(&v.x)));
  return _mm_movelh_ps(xy, _mm_load_ss(&v.z));
}
inline void store3(Vec3f& v, V a) {
  _mm_store_sd(reinterpret_cast<double*>(&v.x), _mm_castps_pd(a));
  _mm_store_ss(&v.z, _mm_movehl_ps(a, a));
}
inline V add(V a, V b) { return _mm_add_ps(a, b); }
inline V sub(V a, V b) { return _mm_sub_ps(a, b); }
inline V mul(V a, V b) { return _mm_mul_ps(a, b); }
#if defined(__FMA__)
inline V madd(V a, V b, V c) { return _mm_fmadd_ps(a, b, c); }
#else
inline V madd(V a, V b, V c) { return _mm_add_ps(_mm_mul_ps(a, b), c); }
#endif
template <int I>
inline V lane(V a) {
  return _mm_shuffle_ps(a, a, _MM_SHUFFLE(I, I, I, I));
}
inline V yzx(V a) { return _mm_shuffle_ps(a, a, _MM_SHUFFLE(3, 0, 2, 1)); }
inline V dot3(V a, V b) { return _mm_dp_ps(a, b, 0x7F); }
inline V dot4(V a, V b) { return _mm_dp_ps(a, b, 0xFF); }
/// `w` with the sign of `s` folded in (negated when s is negative).
inline V sign_from(V w, V s) { return _mm_xor_ps(w, _mm_and_ps(s, _mm_set1_ps(-0.0f))); }
/// 1/sqrt(x): the hardware estimate refined by one Newton step (relative error ≈ 1e-7).
inline V rsqrt(V x) {
  const V r = _mm_rsqrt_ps(x);
  return mul(mul(splat(0.5f), r), sub(splat(3.0f), mul(mul(x, r), r)));
}
/// v / |v| when |v|² is a normal float, else `fallback`.
inline V unit(V v, V fallback) {
  const V l2 = dot3(v, v);
  const V ok = _mm_cmpgt_ps(l2, splat(1e-36f));
  return _mm_blendv_ps(fallback, mul(v, rsqrt(_mm_max_ps(l2, splat(1e-36f)))), ok);
}
inline float first(V a) { return _mm_cvtss_f32(a); }
inline void transpose(V& a, V& b, V& c, V& d) { _MM_TRANSPOSE4_PS(a, b, c, d); }
#else
struct V {
  float v[4];
};
inline V zero() { return {{0, 0, 0, 0}}; }
inline V splat(float f) { return {{f, f, f, f}}; }
inline V set(float x, float y, float z, float w) { return {{x, y, z, w}}; }
inline V load4(const float* p) { return {{p[0], p[1], p[2], p[3]}}; }
inline void store4(float* p, V a) { std::memcpy(p, a.v, sizeof a.v); }
inline V load3(const Vec3f& a) { return {{a.x, a.y, a.z, 0}}; }
inline void store3(Vec3f& out, V a) { out = {a.v[0], a.v[1], a.v[2]}; }
inline V add(V a, V b) {
  return {{a.v[0] + b.v[0], a.v[1] + b.v[1], a.v[2] + b.v[2], a.v[3] + b.v[3]}};
}
inline V sub(V a, V b) {
  return {{a.v[0] - b.v[0], a.v[1] - b.v[1], a.v[2] - b.v[2], a.v[3] - b.v[3]}};
}
inline V mul(V a, V b) {
  return {{a.v[0] * b.v[0], a.v[1] * b.v[1], a.v[2] * b.v[2], a.v[3] * b.v[3]}};
}
inline V madd(V a, V b, V c) { return add(mul(a, b), c); }
template <int I>
inline V lane(V a) {
  return splat(a.v[I]);
}
inline V yzx(V a) { return {{a.v[1], a.v[2], a.v[0], a.v[3]}}; }
inline V dot3(V a, V b) { return splat(a.v[0] * b.v[0] + a.v[1] * b.v[1] + a.v[2] * b.v[2]); }
inline V dot4(V a, V b) {
  return splat(a.v[0] * b.v[0] + a.v[1] * b.v[1] + a.v[2] * b.v[2] + a.v[3] * b.v[3]);
}
inline V sign_from(V w, V s) { return s.v[0] < 0 ? mul(w, splat(-1.0f)) : w; }
inline V rsqrt(V x) { return splat(1.0f / std::sqrt(x.v[0])); }
inline V unit(V v, V fallback) {
  const V l2 = dot3(v, v);
  return l2.v[0] > 1e-36f ? mul(v, rsqrt(l2)) : fallback;
}
inline float first(V a) { return a.v[0]; }
inline void transpose(V& a, V& b, V& c, V& d) {
  const V r[4] = {a, b, c, d};
  a = {{r[0].v[0], r[1].v[0], r[2].v[0], r[3].v[0]}};
  b = {{r[0].v[1], r[1].v[1], r[2].v[1], r[3].v[1]}};
  c = {{r[0].v[2], r[1].v[2], r[2].v[2], r[3].v[2]}};
  d = {{r[0].v[3], r[1].v[3], r[2].v[3], r[3].v[3]}};
}
#endif

/// a × b, lane 3 zero when both lane 3s are zero.
inline V cross(V a, V b) { return yzx(sub(mul(a, yzx(b)), mul(yzx(a), b))); }

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

/// Σ w_k S_{j_k} over K pairs (K = 0: `k` pairs), as columns.
template <int K>
inline Cols blend(const float* palette, const uint16_t* joints, const float* weights, int k) {
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
  V r3 = zero();
  transpose(r0, r1, r2, r3);
  return {r0, r1, r2, r3};
}

struct Result {
  V p, n, t;
};

template <bool N, bool T>
inline Result apply_lbs(const Cols& m, const KernelMesh& mesh, size_t v) {
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
inline void write(const KernelOut& out, size_t o, const Result& r) {
  if (out.positions) store3(out.positions[o], r.p);
  if constexpr (N) store3(out.normals[o], r.n);
  if constexpr (T) store3(out.tangents[o], r.t);
}

template <int K, bool N, bool T>
void lbs_group(const KernelMesh& mesh, const Affine3x4f* palette, const KernelOut& out,
               const KernelGroup& g, size_t begin, size_t end) {
  const float* pal = palette->m.data();
  const int k = g.influences;
  for (size_t v = begin; v < end; ++v) {
    const size_t pair = g.pair_begin + (v - g.begin) * size_t(k);
    const Cols m = blend<K>(pal, mesh.joints + pair, mesh.weights + pair, k);
    write<N, T>(out, mesh.order ? mesh.order[v] : v, apply_lbs<N, T>(m, mesh, v));
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
    // The hemisphere anchor: the first pair with a non-zero weight (padding pairs have 0).
    int a = 0;
    while (a + 1 < count && weights[a] == 0.0f) ++a;
    const V anchor = load4(dq + 8 * size_t(joints[a]));
    V br = zero(), bd = zero();
    for (int i = 0; i < count; ++i) {
      const float* q = dq + 8 * size_t(joints[i]);
      const V real = load4(q);
      const V w = sign_from(splat(weights[i]), dot4(real, anchor));
      br = madd(w, real, br);
      bd = madd(w, load4(q + 4), bd);
    }
    const float len2 = first(dot4(br, br));
    alignas(16) float r[4] = {0, 0, 0, 1}, d[4] = {0, 0, 0, 0};
    if (len2 > 1e-36f) {
      const V inv = rsqrt(splat(len2));
      store4(r, mul(br, inv));
      store4(d, mul(bd, inv));
    }
    const float x = r[0], y = r[1], z = r[2], w = r[3];
    const float tx = 2 * (d[0] * w - x * d[3] + (y * d[2] - z * d[1]));
    const float ty = 2 * (d[1] * w - y * d[3] + (z * d[0] - x * d[2]));
    const float tz = 2 * (d[2] * w - z * d[3] + (x * d[1] - y * d[0]));
    Cols m{set(1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y), 0),
           set(2 * (x * y - w * z), 1 - 2 * (x * x + z * z), 2 * (y * z + w * x), 0),
           set(2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y), 0),
           set(tx, ty, tz, 0)};
    Result s;
    if (pre) {
      // Pre-scale stage: M = [R | t] · K, normals by M's cofactor matrix (= R · cof K).
      const Cols kc = blend<K>(pre, joints, weights, k);
      m = {m.vector(kc.c0), m.vector(kc.c1), m.vector(kc.c2), m.c3};
      s = apply_lbs<N, T>(m, mesh, v);
    } else {
      s.p = m.point(load3(mesh.positions[v]));
      if constexpr (N) {
        const V n = load3(mesh.normals[v]);
        s.n = unit(m.vector(n), n);
      }
      if constexpr (T) {
        const V t = load3(mesh.tangents[v]);
        s.t = unit(m.vector(t), t);
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

// Dispatch on the influence count (compile-time loops for 1…8) and the attributes written.
template <bool Dqs, bool N, bool T, class Palette>
void run_group(const KernelMesh& mesh, const Palette& palette, const KernelOut& out,
               const KernelGroup& g, size_t b, size_t e) {
  auto go = [&]<int K>() {
    if constexpr (Dqs)
      dqs_group<K, N, T>(mesh, palette, out, g, b, e);
    else
      lbs_group<K, N, T>(mesh, palette, out, g, b, e);
  };
  switch (g.influences) {
    case 1:
      go.template operator()<1>();
      break;
    case 2:
      go.template operator()<2>();
      break;
    case 3:
      go.template operator()<3>();
      break;
    case 4:
      go.template operator()<4>();
      break;
    case 8:
      go.template operator()<8>();
      break;
    default:
      go.template operator()<0>();
      break;
  }
}

template <bool Dqs, class Palette>
void run_range(const KernelMesh& mesh, const Palette& palette, const KernelOut& out, size_t begin,
               size_t end) {
  const bool n = out.normals != nullptr, t = out.tangents != nullptr;
  for (const KernelGroup& g : mesh.groups) {
    const size_t b = begin > g.begin ? begin : g.begin, e = end < g.end ? end : g.end;
    if (b >= e) continue;
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

void lbs_range(const KernelMesh& mesh, const Affine3x4f* palette, const KernelOut& out,
               size_t begin, size_t end) {
  run_range<false>(mesh, palette, out, begin, end);
}

void dqs_range(const KernelMesh& mesh, const DqsKernelPalette& palette, const KernelOut& out,
               size_t begin, size_t end) {
  run_range<true>(mesh, palette, out, begin, end);
}

}  // namespace kinema::skin_detail
