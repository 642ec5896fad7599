// src/match/search_walk.h — the search loops of BruteForceSearch and BoundedTreeSearch, compiled
// once per instruction set: search.cpp / search_tree.cpp instantiate them for the baseline
// (kIsa = 0), search_avx2.cpp with -mavx2 (kIsa = 1); search() picks one at run time
// (search_isa()). The kernels of search_kernels.h live in one inline namespace per instruction
// set, and the template argument keeps every instantiation's symbols apart. Internal header.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>

#include "kinema/match/search.h"
#include "search_internal.h"
#include "search_kernels.h"

namespace kinema::match {

namespace detail {

constexpr int32_t kNoChild = INT32_MIN;
// Traversal stack: at most 7 siblings wait per level, plus the entry being expanded.
constexpr uint32_t kMaxDepth = 40;
constexpr size_t kStackSize = 8 * kMaxDepth + 8;
// The tree may spend 1 / kWorkBudgetDivisor of a full scan before it falls back to scanning.
constexpr size_t kWorkBudgetDivisor = 32;
// At a check, a prune threshold above the frames' mean squared distance from their mean divided
// by this marks a query far from the data, and the walk gives up for the grid pass over the
// bottom nodes. On the three real databases of docs/match_search.md (10,730 to 196,716 frames,
// normalized features, mean squared distance 35) random queries have a best cost of 7 to 63 at
// the first check, and real+noise ones mostly under 5; per query, the pass beat the walk on
// 99 % of the random ones at 54k frames and lost on 95 % of the real+noise ones that reach a
// check. Divisors from 3.5 to 7 measured the same.
constexpr double kFarVarianceDivisor = 5;
// A query whose threshold is above kFarEarlyFactor × far_threshold_ when a bottom node's blocks
// are done, once the work passes blocks / kFarEarlyDivisor (at least kFarEarlyMinWork), leaves
// the walk for the grid pass then, before the first check (blocks / 32): on the real databases
// of docs/match_search.md, 54k and 200k frames, random and box queries 4-12 % faster, near ones
// unchanged (no near query there has such a threshold; with a factor of 1 or 2 some do and pay
// a pass). Leaving sooner than kFarEarlyMinWork gives the pass too poor a threshold: at 10k
// frames box queries then scanned 3x the blocks.
constexpr double kFarEarlyFactor = 3;
constexpr size_t kFarEarlyDivisor = 128;
constexpr size_t kFarEarlyMinWork = 48;
// The fallback pass tests the boxes of blocks / kSampleDivisor blocks (at least 16) before it
// judges whether they prune.
constexpr size_t kSampleDivisor = 32;
// A node prefetches the blocks among its kept children only for its nearest kPrefetchKids kept
// children (popped first; the farther ones are often pruned by then). Measured with the change
// to ranks below: 54k near 3.5 -> 3.2-3.3 us together with scan_block inlined.
constexpr size_t kPrefetchKids = 4;
// Bottom nodes per step of the AVX2 pass over the bottom nodes (scan_bottom_nodes).
constexpr size_t kPassChunk = 8;
// kLaneList[m]: the indices of the set bits of m, one byte each in increasing order.
constexpr auto kLaneList = [] {
  std::array<uint64_t, 256> t{};
  for (unsigned m = 0; m < 256; ++m)
    for (unsigned c = 0, n = 0; c < 8; ++c)
      if ((m >> c) & 1u) t[m] |= uint64_t(c) << (8 * n++);
  return t;
}();

}  // namespace detail

using namespace detail;

template <int kIsa>
SearchResult BruteForceSearch::search_with(std::span<const float> query, const SearchFilter& filter,
                                           SearchStats* stats) const noexcept {
  if (stats) *stats = {};
  if (!query_ok(query, dims_)) return {};
  FilterPlan plan;
  if (!plan_filter(has_tags_, filter, plan)) return {};
  const float* q = query.data();
  Best best;
  scan_blocks(values_.data(), frame_.data(), tags_.data(), block_tags_.data(), dims_, 0, blocks_,
              plan.use_tags, filter, q, best);
  if (stats) stats->blocks_visited = uint32_t(blocks_);
  if (best.frame == UINT32_MAX) return {};
  return {best.frame, best.cost};
}

namespace {

// Software prefetch of `floats` floats from p, one request per cache line.
KINEMA_MATCH_INLINE void prefetch(const float* p, size_t floats) {
  for (size_t i = 0; i < floats; i += 16) __builtin_prefetch(p + i);
}

}  // namespace

// One search: the query (and its principal coordinates), the filter, the best frame so far and
// the pruning threshold that follows it, and the counters of SearchStats. Its steps are the
// search's: the walk down the tree (descend), the pass over the bottom nodes when pruning fails
// (scan_bottom_nodes), and what both do with one block (scan_block) and one node (node_bounds).
// This is the hot path of motion matching, and it keeps the code it had as one function with
// lambdas: the steps are forced inline, so search() compiles to one function (scan_block too:
// out of line it cost a call, a vzeroupper and reloads of the tree's pointers per block).
template <int kIsa>
struct BoundedTreeSearch::Walk {
  const BoundedTreeSearch& tree;
  const SearchFilter& filter;
  const FilterPlan plan;
  const float* q;
  const size_t dims;
  const size_t early;          // dimensions before a block's early-out test
  const size_t k;              // the boxes' principal coordinates
  const uint16_t* const lo16;  // the half-float boxes (BoundedTreeSearch::box16_)
  const uint16_t* const hi16;
  // The query in the boxes' principal coordinates, and the threshold above which a box bound
  // proves every frame in the box strictly worse than the best (search_pca.cpp): prune_threshold
  // of the best cost, updated when the best changes.
  alignas(32) float qp[kMaxPcaCoords];
  const double delta;
  Best best;
  float thr = INFINITY, thr_of = INFINITY;
  uint32_t blocks_visited = 0, nodes_visited = 0;
  // The grid (AVX2 loops, when the tree has one): the query per pair of coordinates, packed two
  // 16-bit halves, for the box test (32767 − ⌈q⌉, 32768 + ⌊q⌋) and, 8 copies each, for the
  // frames' test (32768 + ⌈q⌉ + 1, 32768 + ⌊q⌋ − 1); the threshold in squared steps. Only
  // with the grid do queries far from the data leave the walk (descend): the baseline's pass
  // over float boxes has no per-frame bounds and is not faster there.
  const bool grid;
  const size_t pairs, fpairs;
  const size_t per_node, per_block;  // grid_box_ values per node, frame_grid_ values per block
  alignas(32) uint32_t gqh[kMaxPcaCoords / 2], gql[kMaxPcaCoords / 2];
  alignas(32) uint32_t fqh[kMaxPcaCoords / 2 * kLanes], fql[kMaxPcaCoords / 2 * kLanes];
  int32_t gthr = INT32_MAX;
  // What the walk compares a bound with: thr, or on the grid float(gthr) (a bound in squared
  // steps G with float(G) > float(gthr) has G > gthr: rounding never cuts more).
  float cut = INFINITY;

  KINEMA_MATCH_INLINE Walk(const BoundedTreeSearch& t, const float* query, const SearchFilter& f,
                           FilterPlan p)
      : tree(t),
        filter(f),
        plan(p),
        q(query),
        dims(t.blocks_.dims_),
        early(std::min(dims, kEarlyDims)),
        k(t.pca_.coords()),
        lo16(t.box16_.data()),
        hi16(t.box16_.data() + t.lo_.size()),
        delta(project_query_with(t.pca_, query, qp)),
        grid(kIsa == 1 && t.grid_pairs_ > 0),
        pairs(grid ? t.grid_pairs_ : 0),
        fpairs(grid ? t.frame_pairs_ : 0),
        per_node(pairs * 2 * kLanes),
        per_block(fpairs * 2 * kLanes) {
    if (grid) set_grid_query();
  }

  KINEMA_MATCH_INLINE void set_grid_query() {
    for (size_t p = 0; p < pairs; ++p) {
      uint32_t h2 = 0, l2 = 0, h1 = 0, l1 = 0;
      for (size_t j = 0; j < 2; ++j) {
        const size_t c = 2 * p + j;
        int32_t up = 0, down = 0;  // padding coordinate: 0, inside every padding box
        if (c < k) grid_query(qp[c], tree.grid_step_, up, down);
        h2 |= uint32_t(32767 - up) << (16 * j);
        l2 |= uint32_t(32768 + down) << (16 * j);
        h1 |= uint32_t(32768 + up + 1) << (16 * j);
        l1 |= uint32_t(32768 + down - 1) << (16 * j);
      }
      gqh[p] = h2;
      gql[p] = l2;
      if (p < fpairs)
        for (size_t j = 0; j < kLanes; ++j) fqh[p * kLanes + j] = h1, fql[p * kLanes + j] = l1;
    }
  }

  KINEMA_MATCH_INLINE void update_threshold() {
    if (best.cost != thr_of) {
      thr_of = best.cost;
      thr = prune_threshold(tree.pca_, best.cost, delta);
      if (grid) {
        gthr = grid_limit(thr, tree.grid_step_);
        cut = float(gthr);
      } else {
        cut = thr;
      }
    }
  }

  // A block's lanes, first `early` dims, then (unless every allowed partial sum is already
  // strictly above the best: sums only grow) the rest.
  KINEMA_MATCH_INLINE void scan_block(size_t b) {
    const BruteForceSearch& blocks = tree.blocks_;
    const uint32_t* frame = blocks.frame_.data() + b * kLanes;
    // Only the store's last block may hold padding lanes.
    unsigned lanes = b + 1 == blocks.blocks_ ? valid_lanes(frame) : 0xffu;
    if (plan.use_tags) {
      if (!group_may_pass(blocks.block_tags_[b * 2], blocks.block_tags_[b * 2 + 1], filter)) return;
      lanes = allowed_lanes(blocks.tags_.data() + b * kLanes, lanes, filter);
    }
    ++blocks_visited;
    const float* block = blocks.values_.data() + b * dims * kLanes;
    alignas(32) float v[kLanes];
    Acc acc;
    add_costs(block, q, 0, early, acc);
    if (early < dims) {
      total(acc, v);
      if ((lanes_at_most(v, best.cost) & lanes) == 0) return;
      add_costs(block, q, early, dims, acc);
    }
    total(acc, v);
    take(v, frame, lanes_at_most(v, best.cost) & lanes, best);
    update_threshold();
  }

  // A node's 8 child boxes: their lower bounds in `out`, and the lanes whose bound is not
  // above the threshold. (An early-out after 8 dims, as for blocks, measured no faster, in feature
  // coordinates and in principal ones.)
  KINEMA_MATCH_INLINE unsigned node_bounds(size_t node, float* out) const {
    Acc acc;
    if constexpr (kIsa == 1) {
      add_bounds_half(lo16 + node * k * kLanes, hi16 + node * k * kLanes, qp, 0, k, acc);
    } else {
      add_bounds(tree.lo_.data() + node * k * kLanes, tree.hi_.data() + node * k * kLanes, qp, 0, k,
                 acc);
    }
    total(acc, out);
    return lanes_at_most(out, thr);
  }

  KINEMA_MATCH_INLINE void prefetch_block(size_t b) const {
    prefetch(tree.blocks_.values_.data() + b * dims * kLanes, (early + 1) * kLanes);
  }

  // The walk down the tree, nearest child first, pruning every box whose bound is above the
  // threshold. Returns false when it gives up because pruning fails: the work spent in the tree,
  // in block evaluations (a node test reads twice a block's floats), costs more than a plain
  // scan on data with no low-dimensional structure. Each time the work passes the budget
  // (blocks / 32, then doubling), the walk looks at the child boxes its node tests kept and at
  // the threshold: if more than half passed, or if the threshold is above far_threshold_ (the
  // query lies far from the data, where the walk tests most nodes and the grid pass's per-frame
  // bounds scan far fewer blocks), it stops, keeping the best found so far (still exact:
  // scan_bottom_nodes then compares every frame). Real+noise queries mostly end before the first
  // check, and those that reach it have a small threshold and stay in the walk. A query far
  // beyond far_threshold_ leaves sooner, after a bottom node (far_early_work_,
  // far_early_threshold_).
  KINEMA_MATCH_INLINE bool descend() {
    struct Entry {
      int32_t ref;
      float bound;
    };
    Entry stack[kStackSize];
    size_t top = 0;
    stack[top++] = {0, 0.0f};
    alignas(32) float bound[kLanes];
    size_t work = 0, check = tree.work_budget_;
    uint32_t children_tested = 0, children_kept = 0;
    while (top > 0) {
      const Entry e = stack[--top];
      if (e.bound > cut) continue;  // strictly: an equal bound may hide a smaller index
      if (e.ref < 0) {
        scan_block(size_t(~e.ref));
        ++work;
        continue;
      }
      if (work > check) {
        if (children_kept * 2 > children_tested || (grid && thr > tree.far_threshold_))
          return false;
        check *= 2;
      }
      const size_t node = size_t(e.ref);
      ++nodes_visited;
      work += 2;
      // Children that may hold a better frame, pushed farthest first so the nearest pops next.
      const uint8_t children = tree.child_mask_[node];
      // On the grid (AVX2 loops) a node's boxes are tested as in the pass, five integer
      // instructions per pair of coordinates instead of eight float ones per coordinate; the
      // bounds, in squared steps, rank the children, and the blocks of a node whose children
      // are all blocks get their frames' test before their costs.
      const bool bottom = tree.block_mask_[node] == children;
      alignas(32) int32_t grest[kLanes];
      unsigned pass;
      if (grid) {
        alignas(32) int32_t gbound[kLanes];
        grid_bounds(tree.grid_box_.data() + node * per_node,
                    tree.grid_box_.data() + tree.grid_hi_ + node * per_node, gqh, gql, pairs,
                    fpairs, gbound, grest);
        pass = lanes_at_most_int(gbound, gthr) & children;
        for (size_t l = 0; l < kLanes; ++l) bound[l] = float(gbound[l]);
      } else {
        pass = node_bounds(node, bound) & children;
      }
      children_tested += unsigned(__builtin_popcount(children));
      children_kept += unsigned(__builtin_popcount(pass));
      if (plan.use_tags)
        for (unsigned m = pass; m != 0; m &= m - 1) {
          const size_t slot = node * kLanes + unsigned(__builtin_ctz(m));
          if (!group_may_pass(tree.child_tags_[slot * 2], tree.child_tags_[slot * 2 + 1], filter))
            pass &= ~(1u << (slot % kLanes));
        }
      // Written in place on the stack in decreasing order of bound (ties: the smaller child lower),
      // each child at its rank among the kept ones, found by compares and a popcount: the
      // insertion sort this replaces branched on every comparison, unpredictably.
      Entry* kids = stack + top;
      uint8_t kid_slot[kLanes];
      const int32_t* child = tree.child_.data() + node * kLanes;
      const size_t n = size_t(__builtin_popcount(pass));
      for (unsigned m = pass; m != 0; m &= m - 1) {
        const unsigned c = unsigned(__builtin_ctz(m));
        unsigned gt, eq;
        lanes_above_equal(bound, bound[c], gt, eq);
        const unsigned before = pass & (gt | (eq & ((1u << c) - 1)));
        kids[__builtin_popcount(before)] = {child[c], bound[c]};
        kid_slot[__builtin_popcount(before)] = uint8_t(c);
      }
      // Prefetch the blocks among the nearest children (they are popped soon): a database
      // larger than the cache otherwise waits on memory for every block. Not the child nodes'
      // boxes: prefetching those too measured 13-15 % slower on near queries (10k and 54k frames),
      // and their grid boxes no faster; nor the kept blocks' frame grid values instead of the
      // blocks (no faster, though most blocks now stop at their frames' test).
      for (size_t i = n > kPrefetchKids ? n - kPrefetchKids : 0; i < n; ++i)
        if (kids[i].ref < 0) prefetch_block(size_t(~kids[i].ref));
      if (bottom) {
        // Only blocks: scanned now, nearest first, as popping them would, without the stack
        // round trip; the first one above the threshold ends it (the rest are farther).
        for (size_t i = n; i-- > 0;) {
          if (kids[i].bound > cut) break;
          ++work;
          const size_t b = size_t(~kids[i].ref);
          if (fpairs != 0 && frame_bound_lanes(tree.frame_grid_.data() + b * per_block, fqh, fql,
                                               fpairs, grest[kid_slot[i]], gthr) == 0)
            continue;
          scan_block(b);
        }
        if (grid && work > tree.far_early_work_ && thr > tree.far_early_threshold_) return false;
        continue;
      }
      top += n;
    }
    return true;
  }

  // Every block has one parent node: test each such node's 8 boxes (a streaming pass) and scan
  // only the blocks whose box is not strictly farther than the best. If the boxes still prune
  // under a quarter of the blocks (data with no low-dimensional structure), the rest is a plain
  // scan of every block, as the brute force does: no box tests, no early-out branches.
  //
  // The AVX2 loops test the boxes on the integer grid of grid_box_ (five integer instructions per
  // pair of coordinates instead of eight float ones per coordinate): a grid bound G, in squared
  // steps, never exceeds the float box's squared distance from the query's float coordinates
  // (every rounding is outward, search_kernels.h), so G > thr / step² (compared as integers:
  // G > ⌊thr / step²⌋) proves what the float bound's B > thr proves (search_pca.cpp: B > thr
  // is used there only through D² ≥ B / (1 + (K + 7) u)², and D² ≥ step² G directly).
  KINEMA_MATCH_INLINE void scan_bottom_nodes() {
    const BruteForceSearch& blocks = tree.blocks_;
    const std::vector<uint32_t>& nodes = tree.scan_nodes_;
    const size_t sample = std::max<size_t>(16, blocks.blocks_ / kSampleDivisor);
    size_t tested = 0, pruned = 0, i = 0;
    // The grid pass works on kPassChunk bottom nodes at a time, in three branch-free steps
    // (their outcomes are unpredictable, ~2 boxes of 8 pass and a quarter of those blocks pass
    // their frames' test at 10k random): the node tests list the blocks whose box passes (with
    // the box's bound over the coordinates the frames do not keep), the frames' test lists the
    // blocks one of whose frames passes, and only those are scanned. The tests of a chunk use
    // the threshold of its start; a staler threshold only keeps more. A frame's bound (its own
    // grid interval on the first 2 × fpairs coordinates, its block's grid box on the others) is
    // a sum of per-coordinate distances each ≤ the float box's, so it proves what a box does.
    // (Measured at 10k random: 357 blocks scanned per query before, 97 now; 363 with the grid
    // boxes alone. Prefetching the frames' values one chunk ahead was slower.)
    if (grid) {
      // The kept children of a node as a list of bytes (kLaneList: the set bits of each 8-bit
      // mask, in increasing order), copied 8 bytes at a time: one copy and a popcount per node.
      uint8_t cand[kPassChunk * kLanes + 8];
      uint32_t scan[kPassChunk * kLanes], base[kPassChunk];
      alignas(32) int32_t grest[kPassChunk][kLanes];
      while (i < nodes.size()) {
        if (tested >= sample && pruned * 4 < tested) break;
        const size_t i0 = i, end = std::min(nodes.size(), i + kPassChunk);
        size_t n = 0;
        for (; i < end; ++i) {
          const size_t node = nodes[i];
          base[i - i0] = tree.scan_block_base_[i];
          ++nodes_visited;
          alignas(32) int32_t gbound[kLanes];
          const unsigned block_children = tree.block_mask_[node];
          grid_bounds(tree.grid_box_.data() + node * per_node,
                      tree.grid_box_.data() + tree.grid_hi_ + node * per_node, gqh, gql, pairs,
                      fpairs, gbound, grest[i - i0]);
          const unsigned pass = lanes_at_most_int(gbound, gthr) & block_children;
          tested += unsigned(__builtin_popcount(block_children));
          pruned += unsigned(__builtin_popcount(block_children & ~pass));
          const uint64_t list = kLaneList[pass] + uint64_t(i - i0) * 0x0808080808080808ull;
          std::memcpy(cand + n, &list, sizeof list);
          n += unsigned(__builtin_popcount(pass));
        }
        size_t m = 0;
        for (size_t j = 0; j < n; ++j) {
          const unsigned slot = cand[j];
          // The block from the node's first block (scan_block_base_): reading child_ here
          // waited on a load per candidate (a tenth of the pass's samples at 10k random).
          const uint32_t b = base[slot / kLanes] + slot % kLanes;
          scan[m] = b;
          m += fpairs == 0 ||
               frame_bound_lanes(tree.frame_grid_.data() + b * per_block, fqh, fql, fpairs,
                                 grest[slot / kLanes][slot % kLanes], gthr) != 0;
        }
        for (size_t j = 0; j < m; ++j) prefetch_block(scan[j]);
        for (size_t j = 0; j < m; ++j) scan_block(scan[j]);
      }
    }
    for (; !grid && i < nodes.size(); ++i) {
      if (tested >= sample && pruned * 4 < tested) break;
      const size_t node = nodes[i];
      ++nodes_visited;
      alignas(32) float bound[kLanes];
      const unsigned block_children = tree.block_mask_[node];
      const unsigned pass = node_bounds(node, bound) & block_children;
      const size_t base = tree.scan_block_base_[i];
      for (unsigned m = pass; m != 0; m &= m - 1) prefetch_block(base + unsigned(__builtin_ctz(m)));
      tested += unsigned(__builtin_popcount(block_children));
      pruned += unsigned(__builtin_popcount(block_children & ~pass));
      for (unsigned m = pass; m != 0; m &= m - 1) {
        const unsigned c = unsigned(__builtin_ctz(m));
        // The bound was computed before the blocks on its left improved the best: test again.
        if (bound[c] > thr) continue;
        scan_block(base + c);
      }
    }
    if (i < nodes.size()) {
      // All blocks, in memory order, with the brute force's loop (the few already scanned are
      // scanned again: harmless, the best only improves on a strictly smaller (cost, frame)).
      scan_blocks(blocks.values_.data(), blocks.frame_.data(), blocks.tags_.data(),
                  blocks.block_tags_.data(), dims, 0, blocks.blocks_, plan.use_tags, filter, q,
                  best);
      blocks_visited += uint32_t(blocks.blocks_);
    }
  }
};

template <int kIsa>
SearchResult BoundedTreeSearch::search_with(std::span<const float> query,
                                            const SearchFilter& filter,
                                            SearchStats* stats) const noexcept {
  if (stats) *stats = {};
  if (!query_ok(query, blocks_.dims_) || child_.empty()) return {};
  FilterPlan plan;
  if (!plan_filter(blocks_.has_tags_, filter, plan)) return {};
  Walk<kIsa> walk(*this, query.data(), filter, plan);
  if (!walk.descend()) walk.scan_bottom_nodes();
  if (stats) *stats = {walk.blocks_visited, walk.nodes_visited};
  if (walk.best.frame == UINT32_MAX) return {};
  return {walk.best.frame, walk.best.cost};
}

// The baseline's instantiations are made where search() calls them; the AVX2 ones only in
// search_avx2.cpp (with -mavx2), never here.
extern template SearchResult BruteForceSearch::search_with<1>(std::span<const float>,
                                                              const SearchFilter&,
                                                              SearchStats*) const noexcept;
extern template SearchResult BoundedTreeSearch::search_with<1>(std::span<const float>,
                                                               const SearchFilter&,
                                                               SearchStats*) const noexcept;

}  // namespace kinema::match
