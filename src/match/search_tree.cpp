// src/match/search_tree.cpp — BoundedTreeSearch: build and search (kinema/match/search.h).
#include <algorithm>
#include <cmath>

#include "kinema/core/error.h"
#include "kinema/match/search.h"
#include "search_internal.h"
#include "search_kernels.h"

namespace kinema::match {

using namespace detail;

namespace {

constexpr int32_t kNoChild = INT32_MIN;
// Traversal stack: at most 7 siblings wait per level, plus the entry being expanded.
constexpr uint32_t kMaxDepth = 40;
constexpr size_t kStackSize = 8 * kMaxDepth + 8;
// The tree may spend 1 / kWorkBudgetDivisor of a full scan before it falls back to scanning.
constexpr size_t kWorkBudgetDivisor = 32;
// The fallback pass tests the boxes of blocks / kSampleDivisor blocks (at least 16) before it
// judges whether they prune.
constexpr size_t kSampleDivisor = 32;

struct Builder {
  const FeatureMatrix& m;
  std::vector<uint32_t>& order;  // searchable frames, permuted into block order as we go
  std::vector<float>& lo;
  std::vector<float>& hi;
  std::vector<int32_t>& child;
  std::vector<uint64_t>& child_tags;
  uint32_t max_depth = 0;

  float value(uint32_t f, size_t d) const { return m.values[size_t(f) * m.dims + d]; }

  // The dimension along which [b, e) spreads most.
  size_t widest_dim(size_t b, size_t e) const {
    size_t best = 0;
    float best_spread = -1;
    for (size_t d = 0; d < m.dims; ++d) {
      float mn = INFINITY, mx = -INFINITY;
      for (size_t i = b; i < e; ++i) {
        mn = std::min(mn, value(order[i], d));
        mx = std::max(mx, value(order[i], d));
      }
      if (mx - mn > best_spread) best_spread = mx - mn, best = d;
    }
    return best;
  }

  // Splits [b, e) into `parts` parts of `size` frames (the last one may be smaller) by median
  // splits on the widest dimension: the parts are tight clusters.
  void split(size_t b, size_t e, size_t parts, size_t size,
             std::vector<std::pair<size_t, size_t>>& out) {
    if (parts == 1) {
      out.emplace_back(b, e);
      return;
    }
    const size_t left = (parts + 1) / 2;
    const size_t mid = b + left * size;
    const size_t d = widest_dim(b, e);
    // Ties by frame index: the same input always builds the same tree.
    std::nth_element(order.begin() + long(b), order.begin() + long(mid), order.begin() + long(e),
                     [&](uint32_t x, uint32_t y) {
                       const float vx = value(x, d), vy = value(y, d);
                       return vx < vy || (vx == vy && x < y);
                     });
    split(b, mid, left, size, out);
    split(mid, e, parts - left, size, out);
  }

  // Builds the subtree of [b, e): returns ~block for ≤ 8 frames, else a node index.
  int32_t build(size_t b, size_t e, uint32_t depth) {
    if (e - b <= kLanes) return ~int32_t(b / kLanes);  // blocks are laid out from `order` later
    max_depth = std::max(max_depth, depth + 1);
    // A complete 8-ary tree: children hold 8^k blocks each (the last child fewer), so the nodes
    // above the blocks have 8 blocks each and there are about blocks / 7 nodes.
    const size_t blocks = (e - b + kLanes - 1) / kLanes;
    size_t child_blocks = 1;
    while (child_blocks * kLanes < blocks) child_blocks *= kLanes;
    std::vector<std::pair<size_t, size_t>> parts;
    split(b, e, (blocks + child_blocks - 1) / child_blocks, child_blocks * kLanes, parts);
    const size_t node = child.size() / kLanes;
    const size_t dims = m.dims;
    child.resize(child.size() + kLanes, kNoChild);
    lo.resize(lo.size() + dims * kLanes, INFINITY);
    hi.resize(hi.size() + dims * kLanes, INFINITY);
    child_tags.resize(child_tags.size() + kLanes * 2, 0);
    for (size_t c = 0; c < parts.size(); ++c) {
      const auto [pb, pe] = parts[c];
      const int32_t ref = build(pb, pe, depth + 1);
      child[node * kLanes + c] = ref;
      for (size_t d = 0; d < dims; ++d) {
        float mn = INFINITY, mx = -INFINITY;
        for (size_t i = pb; i < pe; ++i) {
          mn = std::min(mn, value(order[i], d));
          mx = std::max(mx, value(order[i], d));
        }
        lo[(node * dims + d) * kLanes + c] = mn;
        hi[(node * dims + d) * kLanes + c] = mx;
      }
      uint64_t tag_or = 0, tag_and = ~uint64_t{0};
      for (size_t i = pb; i < pe; ++i) {
        const uint64_t t = m.tags.empty() ? 0 : m.tags[order[i]];
        tag_or |= t;
        tag_and &= t;
      }
      child_tags[(node * kLanes + c) * 2] = tag_or;
      child_tags[(node * kLanes + c) * 2 + 1] = tag_and;
    }
    return int32_t(node);
  }
};

}  // namespace

BoundedTreeSearch::BoundedTreeSearch(const FeatureMatrix& features) {
  std::vector<uint32_t> order = check_features(features);
  Builder builder{features, order, lo_, hi_, child_, child_tags_};
  // No searchable frame: no tree (search finds child_ empty and answers nothing).
  const int32_t root = order.empty() ? 0 : builder.build(0, order.size(), 0);
  // The root is node 0 when there is a node; a single block is stored as a root-only node so
  // the search has one entry point.
  if (root < 0) {
    std::vector<std::pair<size_t, size_t>> one{{0, order.size()}};
    child_.assign(kLanes, kNoChild);
    lo_.assign(features.dims * kLanes, INFINITY);
    hi_.assign(features.dims * kLanes, INFINITY);
    child_tags_.assign(kLanes * 2, 0);
    child_[0] = root;
    for (size_t d = 0; d < features.dims; ++d) {
      float mn = INFINITY, mx = -INFINITY;
      for (const uint32_t f : order) {
        mn = std::min(mn, features.values[size_t(f) * features.dims + d]);
        mx = std::max(mx, features.values[size_t(f) * features.dims + d]);
      }
      lo_[d * kLanes] = mn;
      hi_[d * kLanes] = mx;
    }
    uint64_t tag_or = 0, tag_and = ~uint64_t{0};
    for (const uint32_t f : order) {
      const uint64_t t = features.tags.empty() ? 0 : features.tags[f];
      tag_or |= t;
      tag_and &= t;
    }
    child_tags_[0] = tag_or;
    child_tags_[1] = tag_and;
    builder.max_depth = 1;
  }
  depth_ = builder.max_depth;
  child_mask_.assign(child_.size() / kLanes, 0);
  block_mask_.assign(child_.size() / kLanes, 0);
  for (size_t i = 0; i < child_.size(); ++i) {
    if (child_[i] != kNoChild) child_mask_[i / kLanes] |= uint8_t(1u << (i % kLanes));
    if (child_[i] != kNoChild && child_[i] < 0)
      block_mask_[i / kLanes] |= uint8_t(1u << (i % kLanes));
  }
  for (size_t n = 0; n < block_mask_.size(); ++n)
    if (block_mask_[n] != 0) scan_nodes_.push_back(uint32_t(n));
  if (depth_ > kMaxDepth) throw Error("", "", "feature matrix: search tree too deep");
  blocks_.dims_ = features.dims;
  blocks_.frames_ = features.frames();
  blocks_.has_tags_ = !features.tags.empty();
  fill_blocks(features, order, blocks_.blocks_, blocks_.values_, blocks_.frame_, blocks_.tags_,
              blocks_.block_tags_);
  work_budget_ = blocks_.blocks_ / kWorkBudgetDivisor;
}

SearchResult BoundedTreeSearch::search(std::span<const float> query, const SearchFilter& filter,
                                       SearchStats* stats) const noexcept {
  if (stats) *stats = {};
  const size_t dims = blocks_.dims_;
  if (!query_ok(query, dims) || child_.empty()) return {};
  FilterPlan plan;
  if (!plan_filter(blocks_.has_tags_, filter, plan)) return {};
  const float* q = query.data();
  const size_t early = std::min(dims, kEarlyDims);
  Best best;
  uint32_t blocks_visited = 0, nodes_visited = 0;

  struct Entry {
    int32_t ref;
    float bound;
  };
  Entry stack[kStackSize];
  size_t top = 0;
  stack[top++] = {0, 0.0f};
  alignas(32) float v[kLanes];
  // A block's lanes, first `early` dims, then (unless every allowed partial sum is already
  // strictly above the best: sums only grow) the rest.
  auto scan_block = [&](size_t b) {
    const uint32_t* frame = blocks_.frame_.data() + b * kLanes;
    unsigned lanes = valid_lanes(frame);
    if (plan.use_tags) {
      if (!group_may_pass(blocks_.block_tags_[b * 2], blocks_.block_tags_[b * 2 + 1], filter))
        return;
      lanes = allowed_lanes(blocks_.tags_.data() + b * kLanes, lanes, filter);
    }
    ++blocks_visited;
    const float* block = blocks_.values_.data() + b * dims * kLanes;
    Acc acc;
    add_costs(block, q, 0, early, acc);
    if (early < dims) {
      total(acc, v);
      if ((lanes_at_most(v, best.cost) & lanes) == 0) return;
      add_costs(block, q, early, dims, acc);
    }
    total(acc, v);
    take(v, frame, lanes_at_most(v, best.cost) & lanes, best);
  };
  // Work spent in the tree, in block evaluations (a node test reads twice a block's floats).
  // When pruning fails (a query far from every clip), the tree costs more than a plain scan;
  // past the budget the search leaves the tree and scans every block with the early-out,
  // keeping the best found so far. Still exact: every frame is then compared.
  size_t work = 0;
  bool scan_all = false;
  while (top > 0) {
    const Entry e = stack[--top];
    if (e.bound > best.cost) continue;  // strictly: an equal bound may hide a smaller index
    if (e.ref < 0) {
      scan_block(size_t(~e.ref));
      ++work;
      continue;
    }
    if (work > work_budget_) {
      scan_all = true;
      break;
    }
    const size_t node = size_t(e.ref);
    ++nodes_visited;
    work += 2;
    Acc acc;
    add_bounds(lo_.data() + node * dims * kLanes, hi_.data() + node * dims * kLanes, q, 0, dims,
               acc);
    total(acc, v);
    // Children that may hold a better frame, pushed farthest first so the nearest pops next.
    unsigned pass = lanes_at_most(v, best.cost) & child_mask_[node];
    Entry kids[kLanes];
    size_t n = 0;
    while (pass) {
      const unsigned c = unsigned(__builtin_ctz(pass));
      pass &= pass - 1;
      if (plan.use_tags && !group_may_pass(child_tags_[(node * kLanes + c) * 2],
                                           child_tags_[(node * kLanes + c) * 2 + 1], filter))
        continue;
      size_t i = n++;
      for (; i > 0 && kids[i - 1].bound < v[c]; --i) kids[i] = kids[i - 1];
      kids[i] = {child_[node * kLanes + c], v[c]};
    }
    for (size_t i = 0; i < n; ++i) stack[top++] = kids[i];
  }
  if (scan_all) {
    // Every block has one parent node: test each such node's 8 boxes (a streaming pass) and
    // scan only the blocks whose box is not strictly farther than the best. If the boxes still
    // prune under a quarter of the blocks (data with no low-dimensional structure), the rest is
    // a plain scan of every block, as the brute force does: no box tests, no early-out branches.
    const size_t sample = std::max<size_t>(16, blocks_.blocks_ / kSampleDivisor);
    size_t tested = 0, pruned = 0, i = 0;
    for (; i < scan_nodes_.size(); ++i) {
      if (tested >= sample && pruned * 4 < tested) break;
      const size_t node = scan_nodes_[i];
      ++nodes_visited;
      Acc acc;
      add_bounds(lo_.data() + node * dims * kLanes, hi_.data() + node * dims * kLanes, q, 0, dims,
                 acc);
      alignas(32) float bound[kLanes];  // scan_block overwrites v
      total(acc, bound);
      const unsigned blocks = block_mask_[node];
      unsigned pass = lanes_at_most(bound, best.cost) & blocks;
      tested += unsigned(__builtin_popcount(blocks));
      pruned += unsigned(__builtin_popcount(blocks & ~pass));
      while (pass) {
        const unsigned c = unsigned(__builtin_ctz(pass));
        pass &= pass - 1;
        // The bound was computed before the blocks on its left improved the best: test again.
        if (bound[c] > best.cost) continue;
        scan_block(size_t(~child_[node * kLanes + c]));
      }
    }
    if (i < scan_nodes_.size()) {
      // All blocks, in memory order, with the brute force's loop (the few already scanned are
      // scanned again: harmless, the best only improves on a strictly smaller (cost, frame)).
      scan_blocks(blocks_.values_.data(), blocks_.frame_.data(), blocks_.tags_.data(),
                  blocks_.block_tags_.data(), dims, 0, blocks_.blocks_, plan.use_tags, filter, q,
                  best);
      blocks_visited += uint32_t(blocks_.blocks_);
    }
  }
  if (stats) *stats = {blocks_visited, nodes_visited};
  if (best.frame == UINT32_MAX) return {};
  return {best.frame, best.cost};
}

size_t BoundedTreeSearch::memory_bytes() const {
  return blocks_.memory_bytes() + lo_.capacity() * sizeof(float) + hi_.capacity() * sizeof(float) +
         child_.capacity() * sizeof(int32_t) + child_tags_.capacity() * sizeof(uint64_t) +
         child_mask_.capacity() + block_mask_.capacity() +
         scan_nodes_.capacity() * sizeof(uint32_t);
}

}  // namespace kinema::match
