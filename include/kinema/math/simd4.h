// kinema/math/simd4.h — a four-lane float type with an SSE4.1 implementation and a portable
// fallback: only what the runtime kernels of the skeleton, clip and blend modules need. Public so
// that those modules share one implementation; its operations may grow or change with the kernels.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__SSE4_1__)
#include <smmintrin.h>
#define KINEMA_SIMD_SSE 1
#else
#define KINEMA_SIMD_SSE 0
#endif

namespace kinema::simd {

#if KINEMA_SIMD_SSE
struct F4 {
  __m128 v;
};
inline F4 load(const float* p) { return {_mm_load_ps(p)}; }
inline F4 loadu(const float* p) { return {_mm_loadu_ps(p)}; }
inline void store(float* p, F4 a) { _mm_store_ps(p, a.v); }
inline void storeu(float* p, F4 a) { _mm_storeu_ps(p, a.v); }
inline F4 splat(float x) { return {_mm_set1_ps(x)}; }
inline F4 broadcast(const float* p) { return {_mm_load1_ps(p)}; }
inline F4 zero() { return {_mm_setzero_ps()}; }
inline F4 operator+(F4 a, F4 b) { return {_mm_add_ps(a.v, b.v)}; }
inline F4 operator-(F4 a, F4 b) { return {_mm_sub_ps(a.v, b.v)}; }
inline F4 operator*(F4 a, F4 b) { return {_mm_mul_ps(a.v, b.v)}; }
inline F4 operator/(F4 a, F4 b) { return {_mm_div_ps(a.v, b.v)}; }
inline F4 max(F4 a, F4 b) { return {_mm_max_ps(a.v, b.v)}; }
inline F4 min(F4 a, F4 b) { return {_mm_min_ps(a.v, b.v)}; }
inline F4 abs(F4 a) { return {_mm_andnot_ps(_mm_set1_ps(-0.0f), a.v)}; }
/// Lane mask (all bits set) where a > b.
inline F4 greater(F4 a, F4 b) { return {_mm_cmpgt_ps(a.v, b.v)}; }
/// a where mask is set, else b.
inline F4 select(F4 mask, F4 a, F4 b) { return {_mm_blendv_ps(b.v, a.v, mask.v)}; }
inline F4 sqrt(F4 a) { return {_mm_sqrt_ps(a.v)}; }
/// 1/x from the hardware estimate plus one Newton step (relative error ~2e-7); x ≠ 0.
inline F4 recip(F4 x) {
  const __m128 r = _mm_rcp_ps(x.v);
  return {_mm_mul_ps(r, _mm_sub_ps(_mm_set1_ps(2.0f), _mm_mul_ps(x.v, r)))};
}
/// True when any lane of a is below the same lane of b.
inline bool any_less(F4 a, F4 b) { return _mm_movemask_ps(_mm_cmplt_ps(a.v, b.v)) != 0; }
/// 1/sqrt(x) from the hardware estimate plus one Newton step (relative error ~2e-7).
inline F4 rsqrt(F4 x) {
  const __m128 y = _mm_rsqrt_ps(x.v);
  const __m128 yy = _mm_mul_ps(y, y);
  const __m128 half_x = _mm_mul_ps(_mm_set1_ps(0.5f), x.v);
  return {_mm_mul_ps(y, _mm_sub_ps(_mm_set1_ps(1.5f), _mm_mul_ps(half_x, yy)))};
}
/// a where sign_source ≥ 0, −a where sign_source < 0 (flips the sign bit).
inline F4 copy_sign_of(F4 a, F4 sign_source) {
  const __m128 sign = _mm_and_ps(sign_source.v, _mm_set1_ps(-0.0f));
  return {_mm_xor_ps(a.v, sign)};
}
/// Four int16 (snorm) → float, times `scale`.
inline F4 load_i16(const int16_t* p, F4 scale) {
  // movq reads exactly 8 bytes; __m128i is declared may_alias, so this is well defined.
  const __m128i raw = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  return {_mm_mul_ps(_mm_cvtepi32_ps(_mm_cvtepi16_epi32(raw)), scale.v)};
}
#else
struct F4 {
  float v[4];
};
#define KINEMA_F4_MAP(expr)                  \
  F4 r;                                      \
  for (int i = 0; i < 4; ++i) r.v[i] = expr; \
  return r
inline F4 load(const float* p) { KINEMA_F4_MAP(p[i]); }
inline F4 loadu(const float* p) { KINEMA_F4_MAP(p[i]); }
inline void store(float* p, F4 a) { std::memcpy(p, a.v, sizeof a.v); }
inline void storeu(float* p, F4 a) { std::memcpy(p, a.v, sizeof a.v); }
inline F4 splat(float x) { KINEMA_F4_MAP(x); }
inline F4 broadcast(const float* p) { KINEMA_F4_MAP(*p); }
inline F4 zero() { KINEMA_F4_MAP(0.0f); }
inline F4 operator+(F4 a, F4 b) { KINEMA_F4_MAP(a.v[i] + b.v[i]); }
inline F4 operator-(F4 a, F4 b) { KINEMA_F4_MAP(a.v[i] - b.v[i]); }
inline F4 operator*(F4 a, F4 b) { KINEMA_F4_MAP(a.v[i] * b.v[i]); }
inline F4 operator/(F4 a, F4 b) { KINEMA_F4_MAP(a.v[i] / b.v[i]); }
inline F4 max(F4 a, F4 b) { KINEMA_F4_MAP(a.v[i] > b.v[i] ? a.v[i] : b.v[i]); }
inline F4 min(F4 a, F4 b) { KINEMA_F4_MAP(a.v[i] < b.v[i] ? a.v[i] : b.v[i]); }
inline F4 abs(F4 a) { KINEMA_F4_MAP(std::fabs(a.v[i])); }
// Masks are 1.0f / 0.0f lanes in the portable build.
inline F4 greater(F4 a, F4 b) { KINEMA_F4_MAP(a.v[i] > b.v[i] ? 1.0f : 0.0f); }
inline F4 select(F4 mask, F4 a, F4 b) { KINEMA_F4_MAP(mask.v[i] != 0.0f ? a.v[i] : b.v[i]); }
inline F4 sqrt(F4 a) { KINEMA_F4_MAP(std::sqrt(a.v[i])); }
inline F4 recip(F4 x) { KINEMA_F4_MAP(1.0f / x.v[i]); }
inline bool any_less(F4 a, F4 b) {
  return a.v[0] < b.v[0] || a.v[1] < b.v[1] || a.v[2] < b.v[2] || a.v[3] < b.v[3];
}
inline F4 rsqrt(F4 x) { KINEMA_F4_MAP(1.0f / std::sqrt(x.v[i])); }
inline F4 copy_sign_of(F4 a, F4 s) { KINEMA_F4_MAP(std::signbit(s.v[i]) ? -a.v[i] : a.v[i]); }
inline F4 load_i16(const int16_t* p, F4 scale) { KINEMA_F4_MAP(float(p[i]) * scale.v[i]); }
#undef KINEMA_F4_MAP
#endif

inline F4 lerp(F4 a, F4 b, F4 t) { return a + (b - a) * t; }

}  // namespace kinema::simd
