// src/match/search_internal.h — build helpers BruteForceSearch and BoundedTreeSearch share.
// Internal header.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "kinema/match/search.h"

// The search loops have an AVX2 + F16C copy (search_avx2.cpp), chosen at run time, where GCC
// compiles for x86-64. (Other compilers and CPUs take the baseline loops: the same answers.)
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define KINEMA_MATCH_AVX2 1
#endif

namespace kinema::match::detail {

/// Throws kinema::Error on bad input (search.h lists the rules); returns the searchable frames
/// in increasing order.
std::vector<uint32_t> check_features(const FeatureMatrix& m);

/// The instruction set of the search loops (search_walk.h). Every one gives the same bits.
enum class SearchIsa { kBase, kAvx2 };
/// The one search() uses: AVX2 when it was compiled in (x86-64) and the CPU has it, unless
/// force_baseline_search(true) is in effect.
SearchIsa search_isa();
/// For tests: every search from now on takes the baseline loops (true), or the CPU's best again
/// (false). Not for use while other threads search.
void force_baseline_search(bool on);

/// Whether a query may be searched: dims values, all finite.
bool query_ok(std::span<const float> query, size_t dims);

/// Lays the frames `order` out in blocks of 8 lanes, dimension-major inside a block; padding
/// lanes get frame UINT32_MAX and +inf features. block_tags: OR and AND of each block's tags.
void fill_blocks(const FeatureMatrix& m, std::span<const uint32_t> order, size_t& blocks,
                 std::vector<float, search_detail::LargeArrayAllocator<float>>& values,
                 std::vector<uint32_t>& frame, std::vector<uint64_t>& tags,
                 std::vector<uint64_t>& block_tags);

/// How a filter applies to a database: use_tags is false when every frame passes.
struct FilterPlan {
  bool use_tags = false;
};

/// False when the filter lets no frame through (a database without tags is all tags = 0).
inline bool plan_filter(bool has_tags, const SearchFilter& filter, FilterPlan& plan) {
  if (filter.is_default()) return true;
  if (!has_tags) return filter.allows(0);
  plan.use_tags = true;
  return true;
}

/// Bit l set when lane l of a block holds a frame.
__attribute__((always_inline)) inline unsigned valid_lanes(const uint32_t* frame) {
  unsigned m = 0;
  for (unsigned l = 0; l < 8; ++l) m |= unsigned(frame[l] != UINT32_MAX) << l;
  return m;
}

}  // namespace kinema::match::detail

namespace kinema::match::detail {

/// The most principal axes a BoundedTreeSearch keeps for its boxes; with the residual
/// coordinate, at most 32 coordinates (sizes a search-time buffer).
constexpr size_t kMaxPcaAxes = 31;
constexpr size_t kMaxPcaCoords = kMaxPcaAxes + 1;

// PcaBasis (kinema/match/search.h, as BoundedTreeSearch holds one) is built and used here.
using search_detail::PcaBasis;

/// The principal axes of the frames `frames` of m (at most `max_axes` kept, and at most dims).
/// Constant features, one frame, or equal frames give some orthonormal basis: still exact.
PcaBasis build_pca(const FeatureMatrix& m, std::span<const uint32_t> frames, size_t max_axes);

/// The coordinates of features x (dims floats): on the kept axes, then the residual (the norm of
/// what the kept axes leave out); pca.coords() values, in double (not rounded).
void pca_coords(const PcaBasis& pca, const float* x, double* out);

/// The query's coordinates (as pca_coords), rounded to nearest float into out[coords]; returns
/// the absolute slack δ to pass to prune_threshold (it covers the rounding of the query's and
/// the frames' coordinates).
double project_query(const PcaBasis& pca, const float* q, float* out);

/// The smallest float t such that a computed PCA box bound B > t proves that every frame in the
/// box has a computed cost (search_kernels.h) strictly greater than `best`. ≥ best; +inf when
/// best is +inf.
float prune_threshold(const PcaBasis& pca, float best, double delta);

}  // namespace kinema::match::detail

namespace kinema::match::detail {

/// BoundedTreeSearch's integer grid (the AVX2 pass over the bottom nodes, search_walk.h): every
/// box and frame coordinate lies within ±kGridMax steps, so a bound (at most 32 coordinates,
/// each distance at most 2 kGridMax + 1 steps) sums below 2^31.
constexpr int32_t kGridMax = 4095;

/// The grid's step for coordinates of magnitude ≤ extent: the smallest power of two (down to
/// 2^-200) that puts them within kGridMax − 1 steps; 0 (no grid) unless extent < 2^100.
inline double grid_step_for(double extent) {
  if (!(extent < 0x1p100)) return 0;
  double step = 1;
  while (extent / step > kGridMax - 1) step *= 2;
  while (step > 0x1p-200 && extent / (step / 2) <= kGridMax - 1) step /= 2;
  return step;
}

/// A float box [lo, hi] outward on the grid (exact: the step is a power of two).
inline void grid_box(float lo, float hi, double step, int32_t& glo, int32_t& ghi) {
  glo = int32_t(std::floor(double(lo) / step));
  ghi = int32_t(std::ceil(double(hi) / step));
}

/// A frame's coordinate x (rounded to nearest from its double coordinate) as one grid value g
/// with the double coordinate in [(g − 1) step, (g + 1) step]: x one ulp outward, then outward
/// to the grid, must span at most 2 steps. False when it does not, or leaves the grid.
inline bool grid_frame_value(float x, double step, int32_t& g) {
  const double lo = std::floor(double(std::nextafter(x, -INFINITY)) / step);
  const double hi = std::ceil(double(std::nextafter(x, INFINITY)) / step);
  if (!(hi - lo <= 2 && lo >= -kGridMax && hi <= kGridMax)) return false;
  g = int32_t(lo) + 1;
  return true;
}

/// A query coordinate q as ⌈q / step⌉ and ⌊q / step⌋, clamped to the grid (every box and frame
/// lies inside it, so a clamped coordinate is only nearer to each); NaN (never seen) gets the
/// whole grid, distance 0.
inline void grid_query(float q, double step, int32_t& up, int32_t& down) {
  const double x = double(q) / step;
  up = kGridMax, down = -kGridMax;
  if (x == x) {
    up = int32_t(std::clamp(std::ceil(x), double(-kGridMax), double(kGridMax)));
    down = int32_t(std::clamp(std::floor(x), double(-kGridMax), double(kGridMax)));
  }
}

/// ⌊thr / step²⌋ (INT32_MAX when larger, or thr infinite): a grid bound G (an integer, in
/// squared steps) is above it iff step² G > thr.
inline int32_t grid_limit(float thr, double step) {
  const double x = std::floor(double(thr) / (step * step));
  return !(x < double(INT32_MAX)) ? INT32_MAX : int32_t(x);
}

/// For tests: frame x's cost as the searches compute it (search_kernels.h).
float frame_cost(const float* x, const float* q, size_t dims);
/// For tests: the 8 lower bounds of boxes lo/hi ([axis][8 lanes]) as the tree computes them.
void box_bounds(const float* lo, const float* hi, const float* qp, size_t coords, float* out);

}  // namespace kinema::match::detail
