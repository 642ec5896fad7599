// src/match/search_kernels.h — the cost and lower-bound kernels that BruteForceSearch and
// BoundedTreeSearch share. Internal header.
//
// Exactness (kinema/match/search.h): both structures must produce the same float cost for a
// frame, and a box's lower bound must never exceed the cost of a frame inside it. So there is
// exactly one way to sum a frame's squared differences: dimension d goes to accumulator d % 4 in
// increasing d, and the cost is (a0 + a1) + (a2 + a3). The lower bound sums its per-dimension
// terms the same way; since every term of the bound is ≤ the frame's term (rounding is
// monotone) and float addition is monotone, bound ≤ cost after rounding too. These files are
// compiled with -ffp-contract=off (CMakeLists.txt), so no FMA fuses a product into a sum in one
// place and not in another. Four accumulators also break the add latency chain.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "kinema/match/search.h"
#include "search_internal.h"

#define KINEMA_MATCH_INLINE __attribute__((always_inline)) inline

// The kernels are compiled once per instruction set (search_walk.h: the baseline in
// search_tree.cpp, AVX2 in search_avx2.cpp, chosen at run time), each copy in its own inline
// namespace, so that no inline function of one instruction set can stand in for another's at
// link time. Every copy performs the same IEEE operations lane by lane in the same order (no FMA:
// -ffp-contract=off), so every copy gives the same bits.
// KINEMA_MATCH_TARGET_AVX2: search_avx2.cpp, whose functions are compiled for AVX2 + F16C by
// `#pragma GCC target` (which does not define __AVX__).
#if defined(__AVX__) || defined(KINEMA_MATCH_TARGET_AVX2)
#define KINEMA_MATCH_ISA_NS isa_avx2
#else
#define KINEMA_MATCH_ISA_NS isa_base
#endif

namespace kinema::match::detail {
inline namespace KINEMA_MATCH_ISA_NS {

/// A hardware vector of floats: 8 lanes (one AVX register) when AVX is enabled, else 4 (one
/// SSE / NEON register); a block's 8 lanes are kParts of them. (A 32-byte GCC vector without
/// AVX is lowered poorly, compares and selects lane by lane: 3-10x slower.) Every operation is
/// lane-wise, so a lane's arithmetic is the same whatever the width. Kept out of function
/// signatures (passed by reference) so the ABI never depends on the instruction set.
#if defined(__AVX__) || defined(KINEMA_MATCH_TARGET_AVX2)
typedef float VF __attribute__((vector_size(32)));
#else
typedef float VF __attribute__((vector_size(16)));
#endif

constexpr size_t kLanes = 8;
constexpr size_t kWidth = sizeof(VF) / sizeof(float);
constexpr size_t kParts = kLanes / kWidth;
/// Dimensions computed before a block's first early-out test in the tree search.
constexpr size_t kEarlyDims = 8;

KINEMA_MATCH_INLINE void load(const float* p, VF& v) { std::memcpy(&v, p, sizeof v); }

/// Four partial sums per lane; dimension d adds into a[d % 4].
struct Acc {
  VF a[4][kParts] = {};
};

/// Adds dimension d's squared differences of a block (8 lanes per dimension) to `acc`.
KINEMA_MATCH_INLINE void add_cost(const float* block, const float* q, size_t d, VF (&acc)[kParts]) {
  for (size_t p = 0; p < kParts; ++p) {
    VF x;
    load(block + d * kLanes + p * kWidth, x);
    const VF diff = x - q[d];
    acc[p] += diff * diff;
  }
}

/// Adds the squared differences of dimensions [d0, d1) of a block (dimension-major, 8 lanes per
/// dimension) to `acc`. d0 must be a multiple of 4.
KINEMA_MATCH_INLINE void add_costs(const float* block, const float* q, size_t d0, size_t d1,
                                   Acc& acc) {
  size_t d = d0;
  for (; d + 4 <= d1; d += 4) {
    for (size_t k = 0; k < 4; ++k) add_cost(block, q, d + k, acc.a[k]);
  }
  // The last 1-3 dimensions with constant accumulator indices, so that the accumulators stay in
  // registers (a loop over k kept them in memory, zeroed by a 128-byte memset per call).
  if (d < d1) add_cost(block, q, d, acc.a[0]);
  if (d + 1 < d1) add_cost(block, q, d + 1, acc.a[1]);
  if (d + 2 < d1) add_cost(block, q, d + 2, acc.a[2]);
}

/// Adds dimension d's squared distances from q to 8 boxes (lo/hi dimension-major, 8 lanes per
/// dimension): max(0, lo − q, q − hi)².
KINEMA_MATCH_INLINE void add_bound(const float* lo, const float* hi, const float* q, size_t d,
                                   VF (&acc)[kParts]) {
  const VF zero = {};
  for (size_t p = 0; p < kParts; ++p) {
    VF l, h;
    load(lo + d * kLanes + p * kWidth, l);
    load(hi + d * kLanes + p * kWidth, h);
    const VF below = l - q[d];  // > 0 when q is below the box
    const VF above = q[d] - h;  // > 0 when q is above the box
    VF t = below > above ? below : above;
    t = t > zero ? t : zero;
    acc[p] += t * t;
  }
}

/// add_bound for boxes stored as IEEE half floats (lo rounded down, hi up: BoundedTreeSearch's
/// half boxes), widened exactly to float. Only the AVX2 + F16C loops use them; the baseline
/// build keeps the float boxes and has no copy of this kernel that runs.
KINEMA_MATCH_INLINE void add_bound_half(const uint16_t* lo, const uint16_t* hi, const float* q,
                                        size_t d, VF (&acc)[kParts]) {
#if (defined(__F16C__) && defined(__AVX__)) || defined(KINEMA_MATCH_TARGET_AVX2)
  const VF zero = {};
  __m128i lh, hh;
  std::memcpy(&lh, lo + d * kLanes, sizeof lh);
  std::memcpy(&hh, hi + d * kLanes, sizeof hh);
  const VF l = VF(_mm256_cvtph_ps(lh)), h = VF(_mm256_cvtph_ps(hh));
  const VF below = l - q[d];
  const VF above = q[d] - h;
  // maxps(a, b) is exactly a > b ? a : b (add_bound's selects), one instruction each.
  const VF t = VF(_mm256_max_ps(_mm256_max_ps(__m256(below), __m256(above)), __m256(zero)));
  acc[0] += t * t;
#else
  (void)lo, (void)hi, (void)q, (void)d, (void)acc;
  __builtin_trap();
#endif
}

/// The squared distances, in squared grid steps, from a query to the 8 integer boxes of a node
/// (BoundedTreeSearch::grid_box_): per pair of coordinates p, lo_c holds 32767 − lo and hi_c
/// 32768 + hi for each child (16-bit, the pair's two coordinates adjacent), qh[p] the pair's
/// 32767 − ⌈q / step⌉ and ql[p] its 32768 + ⌊q / step⌋. A saturating unsigned subtraction gives
/// max(0, lo − ⌈q⌉) and max(0, ⌊q⌋ − hi), at most one of them non-zero, so their OR is the
/// coordinate's distance in steps, never more than the float box's (lo and hi were rounded
/// outward, the query's coordinate to ⌈q⌉ and ⌊q⌋); one multiply-add squares and sums a pair.
/// Integer sums are exact whatever the order. Five instructions per pair of coordinates and 8
/// children, against eight per coordinate for the half-float boxes. AVX2 only.
/// The sum is split in two: pairs [0, first) and [first, pairs); `out` gets the whole bound,
/// `rest` the second part (for the frames' own bounds over the first pairs, frame_bound_lanes).
KINEMA_MATCH_INLINE void grid_bounds(const uint16_t* lo_c, const uint16_t* hi_c, const uint32_t* qh,
                                     const uint32_t* ql, size_t pairs, size_t first, int32_t* out,
                                     int32_t* rest) {
#if defined(__AVX2__) || defined(KINEMA_MATCH_TARGET_AVX2)
  __m256i acc0 = _mm256_setzero_si256(), acc1 = _mm256_setzero_si256();
  auto pair = [&](size_t i, __m256i& acc) {
    const __m256i l = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(lo_c + i * 16));
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(hi_c + i * 16));
    const __m256i below = _mm256_subs_epu16(_mm256_set1_epi32(int(qh[i])), l);
    const __m256i above = _mm256_subs_epu16(_mm256_set1_epi32(int(ql[i])), h);
    const __m256i t = _mm256_or_si256(below, above);
    acc = _mm256_add_epi32(acc, _mm256_madd_epi16(t, t));
  };
  for (size_t p = 0; p < first; ++p) pair(p, acc0);
  for (size_t p = first; p < pairs; ++p) pair(p, acc1);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(rest), acc1);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm256_add_epi32(acc0, acc1));
#else
  (void)lo_c, (void)hi_c, (void)qh, (void)ql, (void)pairs, (void)first, (void)out, (void)rest;
  __builtin_trap();
#endif
}

/// The lanes of a block whose frame bound (each frame's own grid value g on the first `pairs`
/// pairs of coordinates, standing for [g − 1, g + 1], plus `rest`: its block's box bound over the
/// other coordinates) is not above `limit`. qh1 / ql1: per pair, 8 copies of the query's packed
/// 32768 + ⌈q⌉ + 1 and 32768 + ⌊q⌋ − 1, so that max(0, g − 1 − ⌈q⌉) and max(0, ⌊q⌋ − g − 1)
/// are saturating subtractions. Lanes holding no frame may pass or not. AVX2 only.
KINEMA_MATCH_INLINE unsigned frame_bound_lanes(const uint16_t* g, const uint32_t* qh1,
                                               const uint32_t* ql1, size_t pairs, int32_t rest,
                                               int32_t limit) {
#if defined(__AVX2__) || defined(KINEMA_MATCH_TARGET_AVX2)
  __m256i acc = _mm256_set1_epi32(rest);
  for (size_t i = 0; i < pairs; ++i) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(g + i * 16));
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qh1 + i * 8));
    const __m256i l = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql1 + i * 8));
    const __m256i t = _mm256_or_si256(_mm256_subs_epu16(v, h), _mm256_subs_epu16(l, v));
    acc = _mm256_add_epi32(acc, _mm256_madd_epi16(t, t));
  }
  const __m256i gt = _mm256_cmpgt_epi32(acc, _mm256_set1_epi32(limit));
  return ~unsigned(_mm256_movemask_ps(_mm256_castsi256_ps(gt))) & 0xffu;
#else
  (void)g, (void)qh1, (void)ql1, (void)pairs, (void)rest, (void)limit;
  __builtin_trap();
#endif
}

/// Bit l set when lane l's value is ≤ limit.
KINEMA_MATCH_INLINE unsigned lanes_at_most_int(const int32_t* v, int32_t limit) {
#if defined(__AVX2__) || defined(KINEMA_MATCH_TARGET_AVX2)
  const __m256i gt = _mm256_cmpgt_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(v)),
                                        _mm256_set1_epi32(limit));
  return ~unsigned(_mm256_movemask_ps(_mm256_castsi256_ps(gt))) & 0xffu;
#else
  unsigned m = 0;
  for (unsigned l = 0; l < kLanes; ++l) m |= unsigned(v[l] <= limit) << l;
  return m;
#endif
}

/// Dimensions [d0, d1) of the half-float bounds, summed like add_costs.
KINEMA_MATCH_INLINE void add_bounds_half(const uint16_t* lo, const uint16_t* hi, const float* q,
                                         size_t d0, size_t d1, Acc& acc) {
  size_t d = d0;
  for (; d + 4 <= d1; d += 4) {
    for (size_t k = 0; k < 4; ++k) add_bound_half(lo, hi, q, d + k, acc.a[k]);
  }
  if (d < d1) add_bound_half(lo, hi, q, d, acc.a[0]);
  if (d + 1 < d1) add_bound_half(lo, hi, q, d + 1, acc.a[1]);
  if (d + 2 < d1) add_bound_half(lo, hi, q, d + 2, acc.a[2]);
}

/// Dimensions [d0, d1) of the bounds, summed like add_costs.
KINEMA_MATCH_INLINE void add_bounds(const float* lo, const float* hi, const float* q, size_t d0,
                                    size_t d1, Acc& acc) {
  size_t d = d0;
  for (; d + 4 <= d1; d += 4) {
    for (size_t k = 0; k < 4; ++k) add_bound(lo, hi, q, d + k, acc.a[k]);
  }
  if (d < d1) add_bound(lo, hi, q, d, acc.a[0]);
  if (d + 1 < d1) add_bound(lo, hi, q, d + 1, acc.a[1]);
  if (d + 2 < d1) add_bound(lo, hi, q, d + 2, acc.a[2]);
}

/// The lane sums: (a0 + a1) + (a2 + a3), written to out[8].
KINEMA_MATCH_INLINE void total(const Acc& acc, float* out) {
  for (size_t p = 0; p < kParts; ++p) {
    const VF s = (acc.a[0][p] + acc.a[1][p]) + (acc.a[2][p] + acc.a[3][p]);
    std::memcpy(out + p * kWidth, &s, sizeof s);
  }
}

/// Bit l set when lane l's value is ≤ limit (false for NaN). One compare and movemask per
/// register on x86 (GCC's vectorization of the scalar loop below took ~15 shuffles and ORs).
KINEMA_MATCH_INLINE unsigned lanes_at_most(const float* v, float limit) {
#if defined(__AVX__) || defined(KINEMA_MATCH_TARGET_AVX2)
  return unsigned(
      _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(v), _mm256_set1_ps(limit), _CMP_LE_OQ)));
#elif defined(__SSE2__)
  const __m128 t = _mm_set1_ps(limit);
  return unsigned(_mm_movemask_ps(_mm_cmple_ps(_mm_loadu_ps(v), t))) |
         unsigned(_mm_movemask_ps(_mm_cmple_ps(_mm_loadu_ps(v + 4), t))) << 4;
#else
  unsigned m = 0;
  for (unsigned l = 0; l < kLanes; ++l) m |= unsigned(v[l] <= limit) << l;
  return m;
#endif
}

/// Bit l set when lane l's value is > x (gt) or == x (eq) (false for NaN): lanes_at_most's
/// compare + movemask.
KINEMA_MATCH_INLINE void lanes_above_equal(const float* v, float x, unsigned& gt, unsigned& eq) {
#if defined(__AVX__) || defined(KINEMA_MATCH_TARGET_AVX2)
  const __m256 a = _mm256_loadu_ps(v), b = _mm256_set1_ps(x);
  gt = unsigned(_mm256_movemask_ps(_mm256_cmp_ps(a, b, _CMP_GT_OQ)));
  eq = unsigned(_mm256_movemask_ps(_mm256_cmp_ps(a, b, _CMP_EQ_OQ)));
#elif defined(__SSE2__)
  const __m128 b = _mm_set1_ps(x), a0 = _mm_loadu_ps(v), a1 = _mm_loadu_ps(v + 4);
  gt = unsigned(_mm_movemask_ps(_mm_cmpgt_ps(a0, b))) |
       unsigned(_mm_movemask_ps(_mm_cmpgt_ps(a1, b))) << 4;
  eq = unsigned(_mm_movemask_ps(_mm_cmpeq_ps(a0, b))) |
       unsigned(_mm_movemask_ps(_mm_cmpeq_ps(a1, b))) << 4;
#else
  gt = eq = 0;
  for (unsigned l = 0; l < kLanes; ++l) {
    gt |= unsigned(v[l] > x) << l;
    eq |= unsigned(v[l] == x) << l;
  }
#endif
}

/// project_query (search_internal.h), compiled with the loops of each instruction set: the same
/// operations in the same order (mul then add per axis, no FMA), so the same bits; the AVX2 copy
/// runs 4 axes per register instead of 2.
KINEMA_MATCH_INLINE double project_query_with(const PcaBasis& p, const float* q, float* out) {
  constexpr double kU = 0x1p-24, kDoubleU = 0x1p-53;
  const size_t n = p.dims, k = p.axes;
  // Dimension-major, so the inner loop runs over the axes (vectorizable, no reassociation).
  double y[kMaxPcaAxes] = {};
  double norm_qc = 0;
  for (size_t d = 0; d < n; ++d) {
    const double v = double(q[d]) - p.centre[d];
    norm_qc += v * v;
    const float* r = p.rows.data() + d * k;
    for (size_t i = 0; i < k; ++i) y[i] += double(r[i]) * v;
  }
  double norm_y = 0;
  if (k < n) {  // the residual
    for (size_t d = 0; d < n; ++d) {
      double b = double(q[d]) - p.centre[d];
      const float* r = p.rows.data() + d * k;
      for (size_t i = 0; i < k; ++i) b -= double(r[i]) * y[i];
      norm_y += b * b;
    }
    out[k] = float(std::sqrt(norm_y));
  }
  for (size_t i = 0; i < k; ++i) {
    out[i] = float(y[i]);
    norm_y += y[i] * y[i];
  }
  return 2 * kU * std::sqrt(norm_y) + 4 * (std::sqrt(double(k + 1)) + 1) * double(n + k + 4) * 2 *
                                          kDoubleU * (std::sqrt(norm_qc) + p.frame_extent);
}

/// The best (cost, frame) so far; (cost, frame) pairs are ordered lexicographically, so ties on
/// cost go to the smallest frame index whatever order the frames are visited in.
struct Best {
  float cost = INFINITY;
  uint32_t frame = UINT32_MAX;
};

/// Takes the lanes in `lanes` (a bit mask) of a block's costs into `best`.
KINEMA_MATCH_INLINE void take(const float* cost, const uint32_t* frame, unsigned lanes,
                              Best& best) {
  while (lanes) {
    const unsigned l = unsigned(__builtin_ctz(lanes));
    lanes &= lanes - 1;
    if (cost[l] < best.cost || (cost[l] == best.cost && frame[l] < best.frame)) {
      best.cost = cost[l];
      best.frame = frame[l];
    }
  }
}

/// Lanes of a block whose frames the filter allows. `valid`: the lanes holding a frame.
KINEMA_MATCH_INLINE unsigned allowed_lanes(const uint64_t* tags, unsigned valid,
                                           const SearchFilter& filter) {
  unsigned m = 0;
  for (unsigned l = 0; l < kLanes; ++l) m |= unsigned(filter.allows(tags[l])) << l;
  return m & valid;
}

/// Whether any frame of a group with these OR / AND of tags may pass the filter.
KINEMA_MATCH_INLINE bool group_may_pass(uint64_t tags_or, uint64_t tags_and,
                                        const SearchFilter& filter) {
  return (filter.require_any == ~uint64_t{0} || (tags_or & filter.require_any) != 0) &&
         (tags_and & filter.exclude) == 0;
}

/// Blocks [b0, b1) of a block store, every allowed lane's full cost taken into `best`: the brute
/// force's loop, also the tree's fallback when its boxes do not prune.
KINEMA_MATCH_INLINE void scan_blocks(const float* values, const uint32_t* frames,
                                     const uint64_t* tags, const uint64_t* block_tags, size_t dims,
                                     size_t b0, size_t b1, bool use_tags,
                                     const SearchFilter& filter, const float* q, Best& best) {
  alignas(32) float cost[kLanes];
  for (size_t b = b0; b < b1; ++b) {
    const uint32_t* frame = frames + b * kLanes;
    // Only a store's last block may hold padding lanes.
    unsigned lanes = b + 1 == b1 ? valid_lanes(frame) : 0xffu;
    if (use_tags) {
      if (!group_may_pass(block_tags[b * 2], block_tags[b * 2 + 1], filter)) continue;
      lanes = allowed_lanes(tags + b * kLanes, lanes, filter);
    }
    Acc acc;
    add_costs(values + b * dims * kLanes, q, 0, dims, acc);
    total(acc, cost);
    take(cost, frame, lanes_at_most(cost, best.cost) & lanes, best);
  }
}

}  // namespace KINEMA_MATCH_ISA_NS
}  // namespace kinema::match::detail
