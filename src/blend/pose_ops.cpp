#include "kinema/blend/pose_ops.h"

#include <algorithm>
#include <atomic>
#include <cmath>

#include "kinema/core/cpu_features.h"
#include "kinema/math/simd4.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define KINEMA_BLEND_AVX2 1
#else
#define KINEMA_BLEND_AVX2 0
#endif

namespace kinema {
namespace {
using namespace simd;

bool good_weight(float w) { return std::isfinite(w) && w >= 0.0f; }

bool good_mask(std::span<const float> mask, int joint_count) {
  if (mask.empty()) return true;
  if (mask.size() < static_cast<size_t>(joint_count)) return false;
  for (int j = 0; j < joint_count; ++j)
    if (!good_weight(mask[static_cast<size_t>(j)])) return false;
  return true;
}

// The four joints' weights of group g: weight × mask (mask lanes past joint_count read as 0).
F4 group_weights(float weight, std::span<const float> mask, int joint_count, size_t g) {
  if (mask.empty()) return splat(weight);
  const size_t first = 4 * g;
  if (first + 4 <= static_cast<size_t>(joint_count)) return splat(weight) * loadu(&mask[first]);
  alignas(16) float m[4] = {0, 0, 0, 0};
  for (size_t l = 0; first + l < static_cast<size_t>(joint_count); ++l) m[l] = mask[first + l];
  return splat(weight) * load(m);
}

struct Rot {
  F4 x, y, z, w;
};
Rot load_rot(const SoaTransform& s) { return {load(s.qx), load(s.qy), load(s.qz), load(s.qw)}; }
void store_rot(SoaTransform& s, const Rot& q) {
  store(s.qx, q.x), store(s.qy, q.y), store(s.qz, q.z), store(s.qw, q.w);
}
F4 dot(const Rot& a, const Rot& b) { return a.x * b.x + a.y * b.y + (a.z * b.z + a.w * b.w); }
Rot normalized(const Rot& q) {
  const F4 inv = rsqrt(dot(q, q));
  return {q.x * inv, q.y * inv, q.z * inv, q.w * inv};
}
// a·b (Hamilton product; applies b first).
Rot mul(const Rot& a, const Rot& b) {
  return {a.w * b.x + a.x * b.w + (a.y * b.z - a.z * b.y),
          a.w * b.y + a.y * b.w + (a.z * b.x - a.x * b.z),
          a.w * b.z + a.z * b.w + (a.x * b.y - a.y * b.x),
          a.w * b.w - (a.x * b.x + a.y * b.y + a.z * b.z)};
}
// nlerp from a to b by t per lane, b put in a's hemisphere.
Rot nlerp(const Rot& a, const Rot& b, F4 t) {
  const F4 tb = copy_sign_of(t, dot(a, b));
  const F4 ta = splat(1.0f) - t;
  return normalized(
      {a.x * ta + b.x * tb, a.y * ta + b.y * tb, a.z * ta + b.z * tb, a.w * ta + b.w * tb});
}

// atan(a) for a in [0, 1]: reduced to |x| ≤ tan(π/8) by atan(a) = π/4 + atan((a−1)/(a+1)),
// then the Cephes atanf polynomial (error about one float ulp).
F4 atan01(F4 a) {
  const F4 one = splat(1.0f);
  const F4 big = greater(a, splat(0.41421356f));
  const F4 x = select(big, (a - one) * recip(a + one), a);
  const F4 z = x * x;
  const F4 p =
      ((splat(8.05374449538e-2f) * z - splat(1.38776856032e-1f)) * z + splat(1.99777106478e-1f)) *
          z -
      splat(3.33329491539e-1f);
  return select(big, splat(0.78539816f), zero()) + (p * z * x + x);
}

// sin and cos of x in [0, π/2]: Taylor to x¹³ / x¹⁴, error below 6e-8.
void sincos_quadrant(F4 x, F4& s, F4& c) {
  const F4 z = x * x;
  s = x * (splat(1.0f) +
           z * (splat(-1.0f / 6) +
                z * (splat(1.0f / 120) +
                     z * (splat(-1.0f / 5040) +
                          z * (splat(1.0f / 362880) +
                               z * (splat(-1.0f / 39916800) + z * splat(1.0f / 6227020800.0f)))))));
  c = splat(1.0f) +
      z * (splat(-0.5f) +
           z * (splat(1.0f / 24) +
                z * (splat(-1.0f / 720) +
                     z * (splat(1.0f / 40320) +
                          z * (splat(-1.0f / 3628800) + z * splat(1.0f / 479001600.0f))))));
}

// Scales an additive rotation by w per lane: slerp from identity, exact to float precision.
// q = (axis·sin θ/2, cos θ/2) in the identity's hemisphere → (axis·sin(w·θ/2), cos(w·θ/2)).
Rot scale_rotation_slerp(const Rot& q, F4 w) {
  alignas(16) float lanes[4];
  store(lanes, w);
  if (lanes[0] > 1 || lanes[1] > 1 || lanes[2] > 1 || lanes[3] > 1) {
    // Extrapolating weights leave [0, π/2]; rare, so the scalar path handles them.
    alignas(16) float x[4], y[4], z[4], qw[4];
    store(x, q.x), store(y, q.y), store(z, q.z), store(qw, q.w);
    for (int l = 0; l < 4; ++l) {
      const float sign = qw[l] < 0 ? -1.0f : 1.0f;  // shortest arc
      const float vx = x[l] * sign, vy = y[l] * sign, vz = z[l] * sign;
      const float v = std::sqrt(vx * vx + vy * vy + vz * vz);
      const float scaled = lanes[l] * std::atan2(v, qw[l] * sign);
      const float k = v > 1e-7f ? std::sin(scaled) / v : lanes[l];
      x[l] = vx * k, y[l] = vy * k, z[l] = vz * k, qw[l] = std::cos(scaled);
    }
    return {load(x), load(y), load(z), load(qw)};
  }
  const F4 x = copy_sign_of(q.x, q.w), y = copy_sign_of(q.y, q.w), z = copy_sign_of(q.z, q.w);
  const F4 c = abs(q.w);
  const F4 v = sqrt(x * x + y * y + z * z);
  // θ/2 = atan2(v, c) in [0, π/2], from atan of the smaller over the larger.
  const F4 v_larger = greater(v, c);
  const F4 ratio = min(v, c) * recip(max(max(v, c), splat(1e-30f)));
  const F4 r = atan01(ratio);
  const F4 half = select(v_larger, splat(1.57079633f) - r, r);
  F4 s, cs;
  sincos_quadrant(w * half, s, cs);
  // sin(w·θ/2)/v → w as v → 0 (the axis does not matter there).
  const F4 k = select(greater(v, splat(1e-6f)), s * recip(max(v, splat(1e-6f))), w);
  return {x * k, y * k, z * k, cs};
}

// The unnormalized nlerp from identity: the caller normalizes after composing (a product of
// quaternions scales their norms, so one normalization at the end is enough).
Rot scale_rotation_nlerp(const Rot& q, F4 w) {
  const F4 tw = copy_sign_of(w, q.w);  // hemisphere of the identity
  const F4 ti = splat(1.0f) - w;
  return {q.x * tw, q.y * tw, q.z * tw, q.w * tw + ti};
}

void additive_group(const SoaTransform& b, const SoaTransform& d, F4 w, AdditiveRotation mode,
                    SoaTransform& o) {
  const Rot qd = load_rot(d);
  const Rot scaled =
      mode == AdditiveRotation::Slerp ? scale_rotation_slerp(qd, w) : scale_rotation_nlerp(qd, w);
  const Rot q = normalized(mul(load_rot(b), scaled));
  const F4 one = splat(1.0f);
  store(o.tx, load(b.tx) + load(d.tx) * w);
  store(o.ty, load(b.ty) + load(d.ty) * w);
  store(o.tz, load(b.tz) + load(d.tz) * w);
  store(o.sx, load(b.sx) * (one + (load(d.sx) - one) * w));
  store(o.sy, load(b.sy) * (one + (load(d.sy) - one) * w));
  store(o.sz, load(b.sz) * (one + (load(d.sz) - one) * w));
  store_rot(o, q);
}

constexpr size_t kMaxFastLayers = 8;

// The unmasked blend over all groups with N inputs known at compile time (the loops unroll and
// the weights stay in registers); N = 0 means "n at run time".
template <size_t N>
void blend_unmasked_groups(const SoaTransform* const* poses, const F4* weights, size_t n,
                           SoaTransform* o, size_t groups) {
  const size_t count = N ? N : n;
  for (size_t g = 0; g < groups; ++g) {
    const SoaTransform& p0 = poses[0][g];
    const F4 w0 = weights[0];
    F4 tx = load(p0.tx) * w0, ty = load(p0.ty) * w0, tz = load(p0.tz) * w0;
    F4 sx = load(p0.sx) * w0, sy = load(p0.sy) * w0, sz = load(p0.sz) * w0;
    const Rot first = load_rot(p0);
    Rot q{first.x * w0, first.y * w0, first.z * w0, first.w * w0};
    for (size_t i = 1; i < count; ++i) {
      const SoaTransform& p = poses[i][g];
      const F4 w = weights[i];
      tx = tx + load(p.tx) * w, ty = ty + load(p.ty) * w, tz = tz + load(p.tz) * w;
      sx = sx + load(p.sx) * w, sy = sy + load(p.sy) * w, sz = sz + load(p.sz) * w;
      const Rot pq = load_rot(p);
      const F4 wq = copy_sign_of(w, dot(pq, first));  // hemisphere of the first input
      q = {q.x + pq.x * wq, q.y + pq.y * wq, q.z + pq.z * wq, q.w + pq.w * wq};
    }
    store(o[g].tx, tx), store(o[g].ty, ty), store(o[g].tz, tz);
    store(o[g].sx, sx), store(o[g].sy, sy), store(o[g].sz, sz);
    store_rot(o[g], normalized(q));
  }
}

#if KINEMA_BLEND_AVX2
namespace avx2 {
#define KINEMA_BLEND_TARGET "avx2,fma"
#define KINEMA_BLEND_SIGNED(w, sign, d) _mm256_xor_ps(w, _mm256_and_ps(sign, d))
#include "pose_ops_avx_kernel.h"  // NOLINT(build/include): included twice on purpose
#undef KINEMA_BLEND_SIGNED
#undef KINEMA_BLEND_TARGET
}  // namespace avx2
namespace avx512 {
#define KINEMA_BLEND_TARGET "avx2,fma,avx512f,avx512vl"
// 0x78: a ^ (b & c) for ternarylogic(a, b, c).
#define KINEMA_BLEND_SIGNED(w, sign, d)                                                            \
  _mm256_castsi256_ps(_mm256_ternarylogic_epi32(_mm256_castps_si256(w), _mm256_castps_si256(sign), \
                                                _mm256_castps_si256(d), 0x78))
#include "pose_ops_avx_kernel.h"  // NOLINT(build/include): included twice on purpose
#undef KINEMA_BLEND_SIGNED
#undef KINEMA_BLEND_TARGET
}  // namespace avx512

bool cpu_has_avx2_fma() { return cpu_features().avx2_fma(); }
bool cpu_has_avx512vl() { return cpu_features().avx2_fma() && cpu_features().avx512vl; }
#else
bool cpu_has_avx2_fma() { return false; }
bool cpu_has_avx512vl() { return false; }
#endif

// The kernel blend runs (set_blend_avx2 / set_blend_avx512 narrow it).
constinit KernelChoice g_kernels{&cpu_has_avx2_fma, &cpu_has_avx512vl};

int kernel() { return g_kernels.kernel(); }

// The common case: no bone masks, a total weight above the threshold and at most
// kMaxFastLayers inputs. Weights are then the same for every joint, so they are normalized
// once up front and no rest pose is needed.
void blend_unmasked(std::span<const BlendLayer> layers, float total_weight,
                    std::span<SoaTransform> out) {
  const size_t n = layers.size();
  const SoaTransform* poses[kMaxFastLayers];
  for (size_t i = 0; i < n; ++i) poses[i] = layers[i].pose.data();
#if KINEMA_BLEND_AVX2
  if (const int k = kernel(); k > 0 && layers[0].weight > 0) {
    // Two divisions, not two per layer: the divider's latency is on the kernel's critical path.
    const float inv_total = 1.0f / total_weight, inv_first = 1.0f / layers[0].weight;
    float w[kMaxFastLayers], qw[kMaxFastLayers];
    for (size_t i = 0; i < n; ++i)
      w[i] = layers[i].weight * inv_total, qw[i] = layers[i].weight * inv_first;
    if (k == 2) return avx512::blend_unmasked_kernel(poses, w, qw, n, out.data(), out.size());
    return avx2::blend_unmasked_kernel(poses, w, qw, n, out.data(), out.size());
  }
#endif
  F4 weights[kMaxFastLayers];
  for (size_t i = 0; i < n; ++i) weights[i] = splat(layers[i].weight / total_weight);
  switch (n) {
    case 1:
      return blend_unmasked_groups<1>(poses, weights, n, out.data(), out.size());
    case 2:
      return blend_unmasked_groups<2>(poses, weights, n, out.data(), out.size());
    case 3:
      return blend_unmasked_groups<3>(poses, weights, n, out.data(), out.size());
    case 4:
      return blend_unmasked_groups<4>(poses, weights, n, out.data(), out.size());
    default:
      return blend_unmasked_groups<0>(poses, weights, n, out.data(), out.size());
  }
}

}  // namespace

bool set_blend_avx2(bool allowed) { return g_kernels.allow_avx2(allowed); }

bool set_blend_avx512(bool allowed) { return g_kernels.allow_avx512(allowed); }

const char* blend_simd_kernels() {
  switch (kernel()) {
    case 2:
      return "avx512vl";
    case 1:
      return "avx2+fma";
    default:
      return KINEMA_SIMD_SSE ? "sse4.1" : "portable";
  }
}

bool blend(std::span<const BlendLayer> layers, std::span<const SoaTransform> rest, int joint_count,
           std::span<SoaTransform> out, float rest_threshold) {
  const size_t groups = rest.size();
  if (out.size() != groups || joint_count < 0 ||
      static_cast<size_t>(soa_count(joint_count)) != groups || !(rest_threshold > 0) ||
      !std::isfinite(rest_threshold))
    return false;
  for (const BlendLayer& layer : layers)
    if (layer.pose.size() != groups || !good_weight(layer.weight) ||
        !good_mask(layer.joint_weights, joint_count))
      return false;

  if (layers.empty()) {
    std::copy(rest.begin(), rest.end(), out.begin());
    return true;
  }
  bool masked = false;
  float total_weight = 0;
  for (const BlendLayer& layer : layers) {
    masked = masked || !layer.joint_weights.empty();
    total_weight += layer.weight;
  }
  if (!masked && total_weight >= rest_threshold && layers.size() <= kMaxFastLayers) {
    blend_unmasked(layers, total_weight, out);
    return true;
  }

  const F4 threshold = splat(rest_threshold);
  for (size_t g = 0; g < groups; ++g) {
    F4 tx = zero(), ty = zero(), tz = zero(), sx = zero(), sy = zero(), sz = zero();
    Rot q{zero(), zero(), zero(), zero()}, first{};
    F4 total = zero();
    for (size_t i = 0; i < layers.size(); ++i) {
      const SoaTransform& p = layers[i].pose[g];
      const F4 w = group_weights(layers[i].weight, layers[i].joint_weights, joint_count, g);
      total = total + w;
      tx = tx + load(p.tx) * w, ty = ty + load(p.ty) * w, tz = tz + load(p.tz) * w;
      sx = sx + load(p.sx) * w, sy = sy + load(p.sy) * w, sz = sz + load(p.sz) * w;
      const Rot pq = load_rot(p);
      if (i == 0) first = pq;
      // Hemisphere check against the first input: negate the weight, not the quaternion.
      const F4 wq = i == 0 ? w : copy_sign_of(w, dot(pq, first));
      q = {q.x + pq.x * wq, q.y + pq.y * wq, q.z + pq.z * wq, q.w + pq.w * wq};
    }
    if (any_less(total, threshold)) {
      // The rest pose fills whatever weight is missing below the threshold.
      const F4 wr = max(threshold - total, zero());
      const SoaTransform& r = rest[g];
      const Rot rq = load_rot(r);
      const F4 wrq = copy_sign_of(wr, dot(rq, first));
      tx = tx + load(r.tx) * wr, ty = ty + load(r.ty) * wr, tz = tz + load(r.tz) * wr;
      sx = sx + load(r.sx) * wr, sy = sy + load(r.sy) * wr, sz = sz + load(r.sz) * wr;
      q = {q.x + rq.x * wrq, q.y + rq.y * wrq, q.z + rq.z * wrq, q.w + rq.w * wrq};
      total = total + wr;
    }
    const F4 inv = splat(1.0f) / total;
    SoaTransform& o = out[g];
    store(o.tx, tx * inv), store(o.ty, ty * inv), store(o.tz, tz * inv);
    store(o.sx, sx * inv), store(o.sy, sy * inv), store(o.sz, sz * inv);
    store_rot(o, normalized(q));
  }
  return true;
}

bool make_additive(std::span<const SoaTransform> pose, std::span<const SoaTransform> reference,
                   std::span<SoaTransform> out) {
  if (pose.size() != reference.size() || out.size() != pose.size()) return false;
  for (size_t g = 0; g < pose.size(); ++g) {
    const SoaTransform &p = pose[g], &r = reference[g];
    SoaTransform& o = out[g];
    const Rot rq = load_rot(r);
    const Rot inv_ref{zero() - rq.x, zero() - rq.y, zero() - rq.z, rq.w};  // unit: conjugate
    const Rot q = mul(inv_ref, load_rot(p));
    store(o.tx, load(p.tx) - load(r.tx)), store(o.ty, load(p.ty) - load(r.ty));
    store(o.tz, load(p.tz) - load(r.tz));
    // s / s_ref, with a zero reference scale read as "no change".
    alignas(16) float sr[3][4], sp[3][4];
    store(sr[0], load(r.sx)), store(sr[1], load(r.sy)), store(sr[2], load(r.sz));
    store(sp[0], load(p.sx)), store(sp[1], load(p.sy)), store(sp[2], load(p.sz));
    for (int c = 0; c < 3; ++c)
      for (int l = 0; l < 4; ++l) sp[c][l] = sr[c][l] != 0.0f ? sp[c][l] / sr[c][l] : 1.0f;
    store(o.sx, load(sp[0])), store(o.sy, load(sp[1])), store(o.sz, load(sp[2]));
    store_rot(o, normalized(q));
  }
  return true;
}

bool apply_additive(std::span<const SoaTransform> base, std::span<const SoaTransform> additive,
                    float weight, std::span<const float> joint_weights, int joint_count,
                    std::span<SoaTransform> out, AdditiveRotation mode) {
  const size_t groups = base.size();
  if (additive.size() != groups || out.size() != groups || joint_count < 0 ||
      static_cast<size_t>(soa_count(joint_count)) != groups || !good_weight(weight) ||
      !good_mask(joint_weights, joint_count))
    return false;
  for (size_t g = 0; g < groups; ++g)
    additive_group(base[g], additive[g], group_weights(weight, joint_weights, joint_count, g), mode,
                   out[g]);
  return true;
}

bool apply_layers(std::span<const SoaTransform> base, std::span<const PoseLayer> layers,
                  int joint_count, std::span<SoaTransform> out, AdditiveRotation mode) {
  const size_t groups = base.size();
  if (out.size() != groups || joint_count < 0 ||
      static_cast<size_t>(soa_count(joint_count)) != groups)
    return false;
  for (const PoseLayer& layer : layers)
    if (layer.pose.size() != groups || !good_weight(layer.weight) || layer.weight > 1.0f ||
        !good_mask(layer.joint_weights, joint_count))
      return false;
  for (size_t g = 0; g < groups; ++g) {
    SoaTransform acc = base[g];
    for (const PoseLayer& layer : layers) {
      const SoaTransform& p = layer.pose[g];
      const F4 w = group_weights(layer.weight, layer.joint_weights, joint_count, g);
      if (layer.mode == PoseLayer::Mode::Additive) {
        additive_group(acc, p, w, mode, acc);
        continue;
      }
      store(acc.tx, lerp(load(acc.tx), load(p.tx), w));
      store(acc.ty, lerp(load(acc.ty), load(p.ty), w));
      store(acc.tz, lerp(load(acc.tz), load(p.tz), w));
      store(acc.sx, lerp(load(acc.sx), load(p.sx), w));
      store(acc.sy, lerp(load(acc.sy), load(p.sy), w));
      store(acc.sz, lerp(load(acc.sz), load(p.sz), w));
      store_rot(acc, nlerp(load_rot(acc), load_rot(p), w));
    }
    out[g] = acc;
  }
  return true;
}

}  // namespace kinema
