// src/match/search_internal.h — build helpers BruteForceSearch and BoundedTreeSearch share.
// Internal header.
#pragma once

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

/// For tests: frame x's cost as the searches compute it (search_kernels.h).
float frame_cost(const float* x, const float* q, size_t dims);
/// For tests: the 8 lower bounds of boxes lo/hi ([axis][8 lanes]) as the tree computes them.
void box_bounds(const float* lo, const float* hi, const float* qp, size_t coords, float* out);

}  // namespace kinema::match::detail
