// kinema/match/search.h — exact nearest-neighbour search over a motion-matching feature database
// (Clavet, GDC 2016).
//
// A motion-matching query is a feature vector (future trajectory, foot positions, velocities, …)
// and the answer is the database frame whose features are nearest to it. The database
// (kinema/match/database.h) normalizes and weights the features, so here the cost of a frame is
// the plain squared Euclidean distance between its feature row and the query.
//
// Two structures answer the same question with the same interface:
//  - BruteForceSearch computes every allowed frame's cost and takes the minimum (the baseline);
//  - BoundedTreeSearch is a bounding-volume hierarchy over blocks of 8 frames, its boxes aligned
//    with the database's principal axes, that skips blocks whose box is provably farther than
//    the best frame found so far.
// Both return bit-for-bit the same SearchResult for every query and filter: they compute each
// frame's cost with the same kernel (same dimension order, same accumulation, no fused
// multiply-add), break ties on equal cost by the smallest frame index, and the tree discards a
// partial sum only when it is strictly greater than the best cost, and a box only when its bound
// exceeds the best cost by more than every rounding error of the bound (docs/match_search.md
// has the argument).
//
// On x86-64 CPUs with AVX2 and F16C (GCC builds), both search with AVX2 loops chosen at run time;
// they return the same bits as the baseline loops.
//
// Building is offline: it allocates and throws kinema::Error on bad input. Searching is runtime:
// it never allocates, never throws, and is safe to call from many threads on one structure.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace kinema::match {

/// Features of every database frame, row-major: frame f's features are values[f*dims …
/// f*dims+dims). Already normalized and weighted, so the cost of a frame is the plain squared
/// Euclidean distance to the query.
struct FeatureMatrix {
  size_t dims = 0;
  std::vector<float> values;  ///< frames × dims, all finite
  /// Empty (no frame has tags), or one per frame: bit i set = the frame carries tag i.
  std::vector<uint64_t> tags;
  /// Empty (every frame may be returned), or one per frame: 0 = never returned (e.g. the last
  /// frames of a clip, which have no future to play).
  std::vector<uint8_t> searchable;

  size_t frames() const { return dims == 0 ? 0 : values.size() / dims; }
};

/// Which frames a query may return, by their tags (a frame without tags has tags = 0).
/// A frame is allowed iff
///   (require_any == ~0 or (tags & require_any) != 0) and (tags & exclude) == 0.
/// require_any == ~0 (the default) means "no requirement", so untagged frames are found by
/// default; any other value requires at least one of its bits (so untagged frames are then
/// excluded, and require_any == 0 allows nothing).
struct SearchFilter {
  uint64_t require_any = ~uint64_t{0};
  uint64_t exclude = 0;

  constexpr bool is_default() const { return require_any == ~uint64_t{0} && exclude == 0; }
  constexpr bool allows(uint64_t tags) const {
    return (require_any == ~uint64_t{0} || (tags & require_any) != 0) && (tags & exclude) == 0;
  }
};

/// The best frame and its cost (squared distance, normalized units). frame == UINT32_MAX (and
/// cost == +inf) when no frame is allowed or the query was rejected.
struct SearchResult {
  uint32_t frame = UINT32_MAX;
  float cost = INFINITY;

  bool found() const { return frame != UINT32_MAX; }
  friend bool operator==(const SearchResult&, const SearchResult&) = default;
};

/// What one search did, for benchmarks and tuning (counts, not times).
struct SearchStats {
  uint32_t blocks_visited = 0;  ///< blocks of 8 frames whose costs were (at least partly) computed
  uint32_t nodes_visited = 0;   ///< tree nodes whose 8 child boxes were tested (0 for brute force)
};

namespace search_detail {
/// Internal (src/match/search.cpp): memory for the searches' feature blocks. An array of
/// kLargeArrayBytes or more gets its own mapping on Linux, 2 MiB aligned and rounded up to
/// 2 MiB, with madvise(MADV_HUGEPAGE), so that where transparent huge pages are enabled ("always"
/// or "madvise") it is backed by 2 MiB pages: a search's scattered reads of a database larger
/// than the cache then miss the TLB far less (measured at 54k frames: the tree search 10-15 %
/// faster). Smaller arrays, and other systems, use operator new.
constexpr size_t kLargeArrayBytes = size_t{2} << 20;
void* allocate_large(size_t bytes);
void deallocate_large(void* p, size_t bytes) noexcept;
/// The bytes an allocate_large(bytes) holds (the rounding up to 2 MiB included).
size_t large_array_footprint(size_t bytes);
template <class T>
struct LargeArrayAllocator {
  using value_type = T;
  LargeArrayAllocator() = default;
  template <class U>
  LargeArrayAllocator(const LargeArrayAllocator<U>&) noexcept {}
  T* allocate(size_t n) { return static_cast<T*>(allocate_large(n * sizeof(T))); }
  void deallocate(T* p, size_t n) noexcept { deallocate_large(p, n * sizeof(T)); }
  friend bool operator==(const LargeArrayAllocator&, const LargeArrayAllocator&) { return true; }
};
}  // namespace search_detail

/// The baseline: every allowed frame's cost, minimum taken. Frames are stored in blocks of 8
/// (one lane per frame, dimension-major) so the cost kernel runs 8 frames at a time.
class BruteForceSearch {
 public:
  BruteForceSearch() = default;
  /// Copies the searchable frames of `features`. Throws kinema::Error when dims == 0, there are
  /// no frames, values.size() is not a multiple of dims, a value is NaN or infinite (the message
  /// names the frame and the dimension), tags or searchable has the wrong length, or there are
  /// 2^32 − 1 frames or more.
  explicit BruteForceSearch(const FeatureMatrix& features);

  /// The allowed frame of least cost; ties go to the smallest frame index. Returns the empty
  /// result (frame UINT32_MAX, cost +inf) when query.size() != dims(), a query value is NaN or
  /// infinite, or no frame is allowed. `stats`, when given, is overwritten.
  SearchResult search(std::span<const float> query, const SearchFilter& filter = {},
                      SearchStats* stats = nullptr) const noexcept;

  size_t dims() const { return dims_; }
  size_t frames() const { return frames_; }  ///< frames of the database, searchable or not
  size_t memory_bytes() const;               ///< heap bytes held

 private:
  friend class BoundedTreeSearch;
  // search() for one instruction set (src/match/search_walk.h; 0 = baseline, 1 = AVX2).
  template <int kIsa>
  SearchResult search_with(std::span<const float> query, const SearchFilter& filter,
                           SearchStats* stats) const noexcept;
  size_t dims_ = 0, frames_ = 0, blocks_ = 0;
  // blocks × dims × 8: [block][dim][lane]
  std::vector<float, search_detail::LargeArrayAllocator<float>> values_;
  std::vector<uint32_t> frame_;       // blocks × 8, UINT32_MAX in padding lanes
  std::vector<uint64_t> tags_;        // blocks × 8
  std::vector<uint64_t> block_tags_;  // blocks × 2: OR and AND of the block's frames' tags
  bool has_tags_ = false;
};

namespace search_detail {  // not `detail`: that would hide kinema::detail in kinema::match
/// Internal (src/match/search_pca.cpp). The principal axes of the searchable frames (decreasing
/// variance), of which the first `axes` are kept, as the float rows of R: the frame of features
/// x has coordinates y = R (x − c) and a residual r = ‖(I − RᵀR)(x − c)‖, what the kept axes
/// leave out. For pruning bounds only, never for costs: for an orthonormal R,
/// ‖x − q‖² = ‖y_x − y_q‖² + ‖(I − RᵀR)(x − q)‖² ≥ ‖y_x − y_q‖² + (r_x − r_q)², so the squared
/// distance from the query's coordinates to a box holding some frames' (y, r) is a lower bound
/// of their costs in exact arithmetic. The residual keeps far queries (whose distance lies in
/// the axes of least variance) prunable with few axes. `prune_threshold` adds the slack that
/// makes it a bound of the float costs as computed (search_pca.cpp has the error analysis).
struct PcaBasis {
  size_t dims = 0, axes = 0;
  std::vector<float> rows;    ///< dims × axes: rows[d * axes + i] = component d of axis i
  std::vector<float> centre;  ///< dims: the frames' mean, rounded to float
  double rel = 0;             ///< relative slack of a bound's square root
  double frame_extent = 0;    ///< max over frames of ‖x − c‖ (double)
  double mean_square = 0;  ///< mean over frames of ‖x − c‖² (the covariance's trace; double)
  /// The kept axes, and the residual when they are fewer than dims.
  size_t coords() const { return axes + (axes < dims ? 1 : 0); }
};

}  // namespace search_detail

/// Exact search in a bounding-volume hierarchy of boxes aligned with the database's principal
/// axes. The constructor rotates the searchable frames into their principal coordinates (PCA of
/// the frames; up to 31 axes, with one residual coordinate for the rest beyond that), used for
/// the boxes only. Frames are grouped in blocks of 8 by top-down median splits of those
/// coordinates on the one of largest spread; the tree is a complete 8-ary tree over the blocks
/// whose nodes store their 8 children's boxes coordinate-major, so one node test yields 8 lower
/// bounds Σ_i max(0, lo_i − p_i, p_i − hi_i)², p the query's principal coordinates. A rotation
/// preserves distances, so a bound is a lower bound of the cost of every frame in its box; a
/// child is pruned when its bound is above prune_threshold(best), which is the best cost plus
/// a slack (about 1e-6 relative) that covers the float rounding of coordinates and bounds.
/// Costs themselves are always computed from the stored features, with BruteForceSearch's
/// kernel. The search descends nearest-child-first (the first leaf is the greedy descent's) and
/// stops computing a block's costs once all its allowed partial sums (first 8 dims) are strictly
/// greater than the best. When pruning fails (more than half of the child boxes tested pass, or
/// the best cost so far is above a fifth of the frames' total variance: a query far from the
/// data; checked at a work budget of blocks / 32 and its doublings), it switches to one pass over
/// the bottom nodes, scanning only blocks whose box is not above the threshold, and to the brute
/// force's plain loop if those boxes prune under a quarter of a sample. Same answers as
/// BruteForceSearch, bit for bit (docs/match_search.md).
class BoundedTreeSearch {
 public:
  BoundedTreeSearch() = default;
  /// Same input rules and errors as BruteForceSearch's constructor.
  explicit BoundedTreeSearch(const FeatureMatrix& features);

  /// Same contract as BruteForceSearch::search (and the same result, bit for bit).
  SearchResult search(std::span<const float> query, const SearchFilter& filter = {},
                      SearchStats* stats = nullptr) const noexcept;

  size_t dims() const { return blocks_.dims(); }
  size_t frames() const { return blocks_.frames(); }
  size_t memory_bytes() const;
  size_t blocks() const { return blocks_.blocks_; }
  size_t nodes() const { return child_.size() / 8; }

 private:
  template <int kIsa>
  struct Walk;  // one search's state and steps (src/match/search_walk.h)
  // search() for one instruction set (0 = baseline, 1 = AVX2), chosen at run time.
  template <int kIsa>
  SearchResult search_with(std::span<const float> query, const SearchFilter& filter,
                           SearchStats* stats) const noexcept;

  BruteForceSearch blocks_;      // the same block storage, in tree order
  search_detail::PcaBasis pca_;  // the principal axes the boxes are expressed in
  // Node n's 8 children: boxes lo/hi at [n][dim][child], refs ≥ 0 = node, < 0 = block ~ref,
  // unused slots = INT32_MIN; OR and AND of each child's tags.
  std::vector<float> lo_, hi_;
  // The same boxes as IEEE half floats, lo rounded down and hi up (so each holds its float box):
  // half the bytes a node test reads, for the AVX2 + F16C loops when the tree has no grid
  // (grid_box_: none when a principal coordinate reaches 2^100, where costs overflow anyway),
  // else empty. One array, the lo boxes then the hi ones (from lo_.size() on), so that from
  // 2 MiB (about 140k frames) it is one mapping on huge pages like the block store.
  std::vector<uint16_t, search_detail::LargeArrayAllocator<uint16_t>> box16_;
  std::vector<int32_t> child_;
  std::vector<uint64_t> child_tags_;  // nodes × 8 × 2
  std::vector<uint8_t> child_mask_;   // per node: bit c set when child c exists
  std::vector<uint8_t> block_mask_;   // per node: bit c set when child c is a block
  std::vector<uint32_t> scan_nodes_;  // the nodes with a block child, in memory order
  // Per entry of scan_nodes_, the block of child slot 0: a node's block children are
  // consecutive blocks from it (the build lays a node's parts out in order), so the pass finds
  // child c's block as base + c without reading child_.
  std::vector<uint32_t> scan_block_base_;
  // Every node's child boxes (node order) on an integer grid of step grid_step_ (a power of two),
  // for the AVX2 loops' node tests, in the walk and the pass: per node, per pair of coordinates p,
  // per child c, the two coordinates as 16-bit values, first 32767 − ⌊lo / step⌋ (all nodes),
  // then 32768 + ⌈hi / step⌉ (from grid_hi_ on), so that a saturating unsigned subtraction gives
  // max(0, lo − q) and max(0, q − hi) in grid steps (src/match/search_walk.h).
  std::vector<uint16_t, search_detail::LargeArrayAllocator<uint16_t>> grid_box_;
  size_t grid_hi_ = 0;     // offset of the hi boxes in grid_box_
  size_t grid_pairs_ = 0;  // pairs of coordinates (the last one padded when coords is odd)
  double grid_step_ = 1;   // the grid's step, a power of two
  // Every block's frames' first 2 × frame_pairs_ principal coordinates on the same grid, one
  // 16-bit value 32768 + g per frame and coordinate (per block, per pair, per lane, the pair's
  // two coordinates), the frame's coordinate lying in [(g − 1) step, (g + 1) step]: the grid
  // pass's per-frame bound before a block's costs (src/match/search_walk.h).
  std::vector<uint16_t> frame_grid_;
  size_t frame_pairs_ = 0;
  void build_grid_boxes(size_t k);  // grid_box_ from lo_, hi_ and child_mask_
  void build_frame_grid(const std::vector<float>& pc, size_t k, const std::vector<uint32_t>& order);
  size_t work_budget_ = 0;  // block evaluations before the first pruning check
  // A fifth of the frames' mean squared distance from their mean (pca_.mean_square): at a
  // pruning check, a prune threshold above it marks a query far from the data, which the pass
  // over the bottom nodes answers faster than the walk (src/match/search_walk.h).
  float far_threshold_ = INFINITY;
  // The sooner leave for queries far beyond it: after a bottom node, once the work passes
  // far_early_work_, with a threshold above far_early_threshold_ (src/match/search_walk.h).
  size_t far_early_work_ = 0;
  float far_early_threshold_ = INFINITY;
  uint32_t depth_ = 0;  // levels of nodes (sizes the traversal stack)
};

}  // namespace kinema::match
