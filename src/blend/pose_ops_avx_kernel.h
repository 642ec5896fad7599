// The unmasked blend kernel in 256-bit registers, included twice by pose_ops.cpp (hence no include
// guard): once for AVX2 + FMA and once for AVX-512VL, each in its own namespace. The includer
// defines KINEMA_BLEND_TARGET (the gnu::target string) and KINEMA_BLEND_SIGNED(w, sign, d) (w with
// its sign bit flipped where d is negative; `sign` holds −0.0f). Both builds compute the same
// operations in the same order, so they give the same bits; AVX-512VL adds 16 more registers
// (no spills) and the sign flip as one ternary-logic instruction.
// The unmasked blend with AVX2 + FMA, one group of four joints per iteration in 256-bit
// registers: (tx, ty), (tz), (sx), (sy, sz) and the rotation as (qx, qy), (qz, qw). The per-lane
// quaternion dot products sum the two halves (x·x' + z·z', y·y' + w·w') with one cross-lane
// shuffle, which leaves the dot in both halves, where the rotation's two registers need it.
#define KINEMA_AVX2_FN [[gnu::target(KINEMA_BLEND_TARGET), gnu::always_inline]] inline

// Per lane dot of two rotations held as (x, y) and (z, w) halves, in both halves.
KINEMA_AVX2_FN __m256 dot_halves(__m256 axy, __m256 azw, __m256 bxy, __m256 bzw) {
  const __m256 d = _mm256_fmadd_ps(axy, bxy, _mm256_mul_ps(azw, bzw));
  return _mm256_add_ps(d, _mm256_permute2f128_ps(d, d, 0x01));
}

// One group's weighted sums. The rotation sums q₀ + Σ ±(wᵢ/w₀)·qᵢ (`qw` holds wᵢ/w₀), which the
// normalization makes the same unit quaternion as Σ ±wᵢ·qᵢ, one multiply fewer; w₀ > 0.
struct Sums {
  __m256 txy, syz, qxy, qzw;
  __m128 tz, sx;
};

template <size_t N>
KINEMA_AVX2_FN Sums blend_sums(const SoaTransform* const* poses, const __m256* w, const __m256* qw,
                               size_t count, size_t g) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const float* p0 = poses[0][g].tx;
  const __m128 w0h = _mm256_castps256_ps128(w[0]);
  Sums r;
  r.txy = _mm256_mul_ps(_mm256_loadu_ps(p0), w[0]);
  r.tz = _mm_mul_ps(_mm_load_ps(p0 + 8), w0h);
  r.sx = _mm_mul_ps(_mm_load_ps(p0 + 28), w0h);
  r.syz = _mm256_mul_ps(_mm256_loadu_ps(p0 + 32), w[0]);
  const __m256 fxy = _mm256_loadu_ps(p0 + 12), fzw = _mm256_loadu_ps(p0 + 20);
  r.qxy = fxy, r.qzw = fzw;
  for (size_t i = 1; i < (N ? N : count); ++i) {
    const float* p = poses[i][g].tx;
    const __m128 wh = _mm256_castps256_ps128(w[i]);
    r.txy = _mm256_fmadd_ps(_mm256_loadu_ps(p), w[i], r.txy);
    r.tz = _mm_fmadd_ps(_mm_load_ps(p + 8), wh, r.tz);
    r.sx = _mm_fmadd_ps(_mm_load_ps(p + 28), wh, r.sx);
    r.syz = _mm256_fmadd_ps(_mm256_loadu_ps(p + 32), w[i], r.syz);
    const __m256 pxy = _mm256_loadu_ps(p + 12), pzw = _mm256_loadu_ps(p + 20);
    // Hemisphere of the first input: the weight takes the sign of the dot product.
    const __m256 wq = KINEMA_BLEND_SIGNED(qw[i], sign, dot_halves(pxy, pzw, fxy, fzw));
    r.qxy = _mm256_fmadd_ps(pxy, wq, r.qxy);
    r.qzw = _mm256_fmadd_ps(pzw, wq, r.qzw);
  }
  return r;
}

// 1/sqrt(x) from the hardware estimate and one Newton step (the SSE kernel's formula).
KINEMA_AVX2_FN __m256 rsqrt_nr(__m256 x) {
  const __m256 y = _mm256_rsqrt_ps(x);
  const __m256 half_x_y = _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), x), y);
  return _mm256_mul_ps(y, _mm256_fnmadd_ps(half_x_y, y, _mm256_set1_ps(1.5f)));
}

KINEMA_AVX2_FN void store_sums(const Sums& r, __m256 inv, float* out) {
  _mm256_storeu_ps(out, r.txy);
  _mm_store_ps(out + 8, r.tz);
  _mm256_storeu_ps(out + 12, _mm256_mul_ps(r.qxy, inv));
  _mm256_storeu_ps(out + 20, _mm256_mul_ps(r.qzw, inv));
  _mm_store_ps(out + 28, r.sx);
  _mm256_storeu_ps(out + 32, r.syz);
}

// `weights` normalized (Σ = 1); `rotation_weights` wᵢ/w₀ (w₀ > 0).
template <size_t N>
[[gnu::target(KINEMA_BLEND_TARGET)]] void blend_unmasked_groups_avx2(
    const SoaTransform* const* poses, const float* weights, const float* rotation_weights, size_t n,
    SoaTransform* o, size_t groups) {
  const size_t count = N ? N : n;
  __m256 w[kMaxFastLayers], qw[kMaxFastLayers];
  for (size_t i = 0; i < count; ++i)
    w[i] = _mm256_set1_ps(weights[i]), qw[i] = _mm256_set1_ps(rotation_weights[i]);
  size_t g = 0;
  // Two groups at a time: one normalization for both (their squared norms side by side).
  for (; g + 2 <= groups; g += 2) {
    const Sums a = blend_sums<N>(poses, w, qw, count, g);
    const Sums b = blend_sums<N>(poses, w, qw, count, g + 1);
    const __m256 da = _mm256_fmadd_ps(a.qxy, a.qxy, _mm256_mul_ps(a.qzw, a.qzw));
    const __m256 db = _mm256_fmadd_ps(b.qxy, b.qxy, _mm256_mul_ps(b.qzw, b.qzw));
    const __m256 len2 =
        _mm256_add_ps(_mm256_permute2f128_ps(da, db, 0x20), _mm256_permute2f128_ps(da, db, 0x31));
    const __m256 inv = rsqrt_nr(len2);
    store_sums(a, _mm256_permute2f128_ps(inv, inv, 0x00), o[g].tx);
    store_sums(b, _mm256_permute2f128_ps(inv, inv, 0x11), o[g + 1].tx);
  }
  if (g < groups) {
    const Sums a = blend_sums<N>(poses, w, qw, count, g);
    store_sums(a, rsqrt_nr(dot_halves(a.qxy, a.qzw, a.qxy, a.qzw)), o[g].tx);
  }
}

// `weights` normalized (Σ = 1); `rotation_weights` wᵢ/w₀ (w₀ > 0); n ≤ kMaxFastLayers.
[[gnu::target(KINEMA_BLEND_TARGET)]] void blend_unmasked_kernel(const SoaTransform* const* poses,
                                                                const float* weights,
                                                                const float* rotation_weights,
                                                                size_t n, SoaTransform* o,
                                                                size_t groups) {
  switch (n) {
    case 1:
      return blend_unmasked_groups_avx2<1>(poses, weights, rotation_weights, n, o, groups);
    case 2:
      return blend_unmasked_groups_avx2<2>(poses, weights, rotation_weights, n, o, groups);
    case 3:
      return blend_unmasked_groups_avx2<3>(poses, weights, rotation_weights, n, o, groups);
    case 4:
      return blend_unmasked_groups_avx2<4>(poses, weights, rotation_weights, n, o, groups);
    default:
      return blend_unmasked_groups_avx2<0>(poses, weights, rotation_weights, n, o, groups);
  }
}
#undef KINEMA_AVX2_FN
