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
// Principal axes the node boxes keep at most (the first ones, of largest variance): all of them
// for the 27 features of BENCHMARKS.md. Fewer axes (and the residual coordinate for the rest)
// made cheaper node tests but looser boxes: at 54k, 8 / 12 / 16 axes instead of 27 answered
// near queries as fast and random ones 1.3-1.6x slower.
constexpr size_t kBoxAxes = kMaxPcaAxes;
// Subtrees of at most this many frames (the last 6 levels of splits: 8 bottom nodes of 8 blocks)
// are split on the coordinate whose median split gives the tightest halves (least sum of their
// boxes' squared diagonals), tried on every coordinate; larger ones on the coordinate of largest
// spread. Measured on the real databases of BENCHMARKS.md: 30% fewer blocks scanned at 10k and
// 54k (real+noise and random queries), random queries at 10k 1.2x faster; the same rule at
// every level was no better and builds far slower (k² work per frame and level).
constexpr size_t kTightSplitFrames = 512;

// Builds the tree over blocks of 8 frames, top-down by median splits of the frames' principal
// coordinates on the coordinate of largest spread; the splits also cut the blocks. (The previous
// version, with boxes in feature coordinates, preferred blocks of 8 consecutive frames: in
// feature coordinates a block cut by median splits stays wide in the features no split chose.
// In principal coordinates the first axes carry most of the spread and the splits follow them:
// at 54k, split blocks answer near queries 3x faster than time blocks, random ones 1.2x slower.)
struct Builder {
  const FeatureMatrix& m;               // for the tags
  const std::vector<float>& pc;         // every frame's principal coordinates: frames × k
  size_t k;                             // coordinates per frame (the boxes' dimensions)
  const std::vector<uint32_t>& frames;  // searchable frames in index order
  std::vector<uint32_t> unit;           // positions in `frames`, permuted into tree order
  std::vector<float> lo, hi;            // node boxes (BoundedTreeSearch's lo_, hi_)
  std::vector<int32_t> child;
  std::vector<uint64_t> child_tags;
  uint32_t max_depth = 0;

  Builder(const FeatureMatrix& m_, const std::vector<float>& pc_, size_t k_,
          const std::vector<uint32_t>& frames_)
      : m(m_), pc(pc_), k(k_), frames(frames_), unit(frames_.size()) {
    for (size_t u = 0; u < unit.size(); ++u) unit[u] = uint32_t(u);
  }

  // Coordinate d of the frame at position u of `frames`.
  float value(uint32_t u, size_t d) const { return pc[size_t(frames[u]) * k + d]; }

  // The coordinate along which the frames at [b, e) of `unit` spread most.
  size_t widest_dim(size_t b, size_t e) const {
    size_t best = 0;
    float best_spread = -1;
    for (size_t d = 0; d < k; ++d) {
      float mn = INFINITY, mx = -INFINITY;
      for (size_t i = b; i < e; ++i) {
        mn = std::min(mn, value(unit[i], d));
        mx = std::max(mx, value(unit[i], d));
      }
      if (mx - mn > best_spread) best_spread = mx - mn, best = d;
    }
    return best;
  }

  // The coordinate whose median split at `mid` gives the two halves of least Σ over coordinates
  // of squared box extents (the halves' boxes' squared diagonals).
  size_t tightest_dim(size_t b, size_t mid, size_t e) {
    size_t best = 0;
    double best_cost = INFINITY;
    std::vector<float> mn(k), mx(k);
    for (size_t d = 0; d < k; ++d) {
      std::nth_element(unit.begin() + long(b), unit.begin() + long(mid), unit.begin() + long(e),
                       [&](uint32_t x, uint32_t y) {
                         const float vx = value(x, d), vy = value(y, d);
                         return vx < vy || (vx == vy && x < y);
                       });
      double cost = 0;
      for (const auto& [pb, pe] : {std::pair{b, mid}, std::pair{mid, e}}) {
        std::fill(mn.begin(), mn.end(), INFINITY);
        std::fill(mx.begin(), mx.end(), -INFINITY);
        for (size_t i = pb; i < pe; ++i)
          for (size_t c = 0; c < k; ++c) {
            mn[c] = std::min(mn[c], value(unit[i], c));
            mx[c] = std::max(mx[c], value(unit[i], c));
          }
        for (size_t c = 0; c < k; ++c) cost += double(mx[c] - mn[c]) * double(mx[c] - mn[c]);
      }
      if (cost < best_cost) best_cost = cost, best = d;
    }
    return best;
  }

  // Splits frames [b, e) into `parts` parts of `size` frames (the last one may be smaller) by
  // median splits on the widest coordinate.
  void split(size_t b, size_t e, size_t parts, size_t size,
             std::vector<std::pair<size_t, size_t>>& out) {
    if (parts == 1) {
      out.emplace_back(b, e);
      return;
    }
    const size_t left = (parts + 1) / 2;
    const size_t mid = b + left * size;
    const size_t d = e - b <= kTightSplitFrames ? tightest_dim(b, mid, e) : widest_dim(b, e);
    // Ties by position: the same input always builds the same tree.
    std::nth_element(unit.begin() + long(b), unit.begin() + long(mid), unit.begin() + long(e),
                     [&](uint32_t x, uint32_t y) {
                       const float vx = value(x, d), vy = value(y, d);
                       return vx < vy || (vx == vy && x < y);
                     });
    split(b, mid, left, size, out);
    split(mid, e, parts - left, size, out);
  }

  // Builds the subtree of frames [b, e) (tree order): returns ~block for one block, else a node
  // index. Every part but the last holds a multiple of 8 frames, so only the very last block
  // may be partial.
  int32_t build(size_t b, size_t e, uint32_t depth) {
    if (e - b <= kLanes) return ~int32_t(b / kLanes);  // laid out in tree order later
    max_depth = std::max(max_depth, depth + 1);
    // A complete 8-ary tree: children hold 8^k blocks each (the last child fewer), so the nodes
    // above the blocks have 8 blocks each and there are about blocks / 7 nodes.
    const size_t blocks = (e - b + kLanes - 1) / kLanes;
    size_t child_blocks = 1;
    while (child_blocks * kLanes < blocks) child_blocks *= kLanes;
    std::vector<std::pair<size_t, size_t>> parts;
    split(b, e, (blocks + child_blocks - 1) / child_blocks, child_blocks * kLanes, parts);
    const size_t node = child.size() / kLanes;
    child.resize(child.size() + kLanes, kNoChild);
    lo.resize(lo.size() + k * kLanes, INFINITY);
    hi.resize(hi.size() + k * kLanes, INFINITY);
    child_tags.resize(child_tags.size() + kLanes * 2, 0);
    for (size_t c = 0; c < parts.size(); ++c) {
      const auto [pb, pe] = parts[c];
      const int32_t ref = build(pb, pe, depth + 1);
      child[node * kLanes + c] = ref;
      box(pb, pe, lo.data() + node * k * kLanes + c, hi.data() + node * k * kLanes + c);
      uint64_t tag_or = 0, tag_and = ~uint64_t{0};
      for (size_t i = pb; i < pe; ++i) {
        const uint64_t t = m.tags.empty() ? 0 : m.tags[frames[unit[i]]];
        tag_or |= t;
        tag_and &= t;
      }
      child_tags[(node * kLanes + c) * 2] = tag_or;
      child_tags[(node * kLanes + c) * 2 + 1] = tag_and;
    }
    return int32_t(node);
  }

  // The box of frames [b, e) into lo[d * 8], hi[d * 8]: outward by one ulp, because the
  // coordinates were rounded to nearest from double, and the box must hold the double
  // coordinates of its frames (search_pca.cpp).
  void box(size_t b, size_t e, float* lo_out, float* hi_out) const {
    for (size_t d = 0; d < k; ++d) {
      float mn = INFINITY, mx = -INFINITY;
      for (size_t i = b; i < e; ++i) {
        mn = std::min(mn, value(unit[i], d));
        mx = std::max(mx, value(unit[i], d));
      }
      lo_out[d * kLanes] = std::nextafter(mn, -INFINITY);
      hi_out[d * kLanes] = std::nextafter(mx, INFINITY);
    }
  }

  // The searchable frames in tree order, 8 per block.
  std::vector<uint32_t> order() const {
    std::vector<uint32_t> out;
    out.reserve(frames.size());
    for (const uint32_t u : unit) out.push_back(frames[u]);
    return out;
  }
};

}  // namespace

BoundedTreeSearch::BoundedTreeSearch(const FeatureMatrix& features) {
  const std::vector<uint32_t> searchable = check_features(features);
  // Boxes live in the frames' principal coordinates (search_pca.cpp): the features of a motion
  // database are strongly correlated, and boxes aligned with its principal axes are far
  // tighter than boxes aligned with the features.
  pca_ = build_pca(features, searchable, kBoxAxes);
  const size_t k = pca_.coords();
  std::vector<float> pc(features.frames() * k);
  {
    double y[kMaxPcaCoords];
    for (const uint32_t f : searchable) {
      pca_coords(pca_, features.values.data() + size_t(f) * features.dims, y);
      for (size_t i = 0; i < k; ++i) pc[size_t(f) * k + i] = float(y[i]);
    }
  }
  Builder builder(features, pc, k, searchable);
  // No searchable frame: no tree (search finds child_ empty and answers nothing).
  const int32_t root = searchable.empty() ? 0 : builder.build(0, builder.unit.size(), 0);
  lo_ = std::move(builder.lo);
  hi_ = std::move(builder.hi);
  child_ = std::move(builder.child);
  child_tags_ = std::move(builder.child_tags);
  const std::vector<uint32_t> order = builder.order();
  // The root is node 0 when there is a node; a single block is stored as a root-only node so
  // the search has one entry point.
  if (root < 0) {
    child_.assign(kLanes, kNoChild);
    lo_.assign(k * kLanes, INFINITY);
    hi_.assign(k * kLanes, INFINITY);
    child_tags_.assign(kLanes * 2, 0);
    child_[0] = root;
    builder.box(0, order.size(), lo_.data(), hi_.data());
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
// lambdas: the steps are forced inline, so search() compiles to one function again, except
// scan_block, left to the compiler, which keeps it out of line as it kept the lambda it replaces.
struct BoundedTreeSearch::Walk {
  const BoundedTreeSearch& tree;
  const SearchFilter& filter;
  const FilterPlan plan;
  const float* q;
  const size_t dims;
  const size_t early;  // dimensions before a block's early-out test
  const size_t k;      // the boxes' principal coordinates
  // The query in the boxes' principal coordinates, and the threshold above which a box bound
  // proves every frame in the box strictly worse than the best (search_pca.cpp): prune_threshold
  // of the best cost, updated when the best changes.
  alignas(32) float qp[kMaxPcaCoords];
  const double delta;
  Best best;
  float thr = INFINITY, thr_of = INFINITY;
  uint32_t blocks_visited = 0, nodes_visited = 0;

  KINEMA_MATCH_INLINE Walk(const BoundedTreeSearch& t, const float* query, const SearchFilter& f,
                           FilterPlan p)
      : tree(t),
        filter(f),
        plan(p),
        q(query),
        dims(t.blocks_.dims_),
        early(std::min(dims, kEarlyDims)),
        k(t.pca_.coords()),
        delta(project_query(t.pca_, query, qp)) {}

  KINEMA_MATCH_INLINE void update_threshold() {
    if (best.cost != thr_of) {
      thr_of = best.cost;
      thr = prune_threshold(tree.pca_, best.cost, delta);
    }
  }

  // A block's lanes, first `early` dims, then (unless every allowed partial sum is already
  // strictly above the best: sums only grow) the rest.
  void scan_block(size_t b) {
    const BruteForceSearch& blocks = tree.blocks_;
    const uint32_t* frame = blocks.frame_.data() + b * kLanes;
    unsigned lanes = valid_lanes(frame);
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
    const float* lo = tree.lo_.data() + node * k * kLanes;
    const float* hi = tree.hi_.data() + node * k * kLanes;
    Acc acc;
    add_bounds(lo, hi, qp, 0, k, acc);
    total(acc, out);
    return lanes_at_most(out, thr);
  }

  KINEMA_MATCH_INLINE void prefetch_block(size_t b) const {
    prefetch(tree.blocks_.values_.data() + b * dims * kLanes, dims * kLanes);
  }

  // The walk down the tree, nearest child first, pruning every box whose bound is above the
  // threshold. Returns false when it gives up because pruning fails: the work spent in the tree,
  // in block evaluations (a node test reads twice a block's floats), costs more than a plain
  // scan on data with no low-dimensional structure. Each time the work passes the budget
  // (blocks / 32, then doubling), the walk looks at the child boxes its node tests kept: if more
  // than half passed, it stops, keeping the best found so far (still exact: scan_bottom_nodes
  // then compares every frame). On real mocap even random queries far from every clip prune
  // most boxes and stay in the walk, which there beats the pass (BENCHMARKS.md, motion matching).
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
      if (e.bound > thr) continue;  // strictly: an equal bound may hide a smaller index
      if (e.ref < 0) {
        scan_block(size_t(~e.ref));
        ++work;
        continue;
      }
      if (work > check) {
        if (children_kept * 2 > children_tested) return false;
        check *= 2;
      }
      const size_t node = size_t(e.ref);
      ++nodes_visited;
      work += 2;
      // Children that may hold a better frame, pushed farthest first so the nearest pops next.
      const uint8_t children = tree.child_mask_[node];
      unsigned pass = node_bounds(node, bound) & children;
      children_tested += unsigned(__builtin_popcount(children));
      children_kept += unsigned(__builtin_popcount(pass));
      Entry kids[kLanes];
      size_t n = 0;
      while (pass) {
        const unsigned c = unsigned(__builtin_ctz(pass));
        pass &= pass - 1;
        const size_t slot = node * kLanes + c;
        if (plan.use_tags &&
            !group_may_pass(tree.child_tags_[slot * 2], tree.child_tags_[slot * 2 + 1], filter))
          continue;
        size_t i = n++;
        for (; i > 0 && kids[i - 1].bound < bound[c]; --i) kids[i] = kids[i - 1];
        kids[i] = {tree.child_[slot], bound[c]};
      }
      // Prefetch the blocks among the children (they are popped soon, nearest first): a database
      // larger than the cache otherwise waits on memory for every block. Not the child nodes'
      // boxes: prefetching those too measured 13-15 % slower on near queries (10k and 54k frames).
      for (size_t i = 0; i < n; ++i)
        if (kids[i].ref < 0) prefetch_block(size_t(~kids[i].ref));
      for (size_t i = 0; i < n; ++i) stack[top++] = kids[i];
    }
    return true;
  }

  // Every block has one parent node: test each such node's 8 boxes (a streaming pass) and scan
  // only the blocks whose box is not strictly farther than the best. If the boxes still prune
  // under a quarter of the blocks (data with no low-dimensional structure), the rest is a plain
  // scan of every block, as the brute force does: no box tests, no early-out branches.
  KINEMA_MATCH_INLINE void scan_bottom_nodes() {
    const BruteForceSearch& blocks = tree.blocks_;
    const std::vector<uint32_t>& nodes = tree.scan_nodes_;
    const size_t sample = std::max<size_t>(16, blocks.blocks_ / kSampleDivisor);
    size_t tested = 0, pruned = 0, i = 0;
    for (; i < nodes.size(); ++i) {
      if (tested >= sample && pruned * 4 < tested) break;
      const size_t node = nodes[i];
      ++nodes_visited;
      alignas(32) float bound[kLanes];
      const unsigned block_children = tree.block_mask_[node];
      unsigned pass = node_bounds(node, bound) & block_children;
      for (unsigned m = pass; m != 0; m &= m - 1)
        prefetch_block(size_t(~tree.child_[node * kLanes + unsigned(__builtin_ctz(m))]));
      tested += unsigned(__builtin_popcount(block_children));
      pruned += unsigned(__builtin_popcount(block_children & ~pass));
      while (pass) {
        const unsigned c = unsigned(__builtin_ctz(pass));
        pass &= pass - 1;
        // The bound was computed before the blocks on its left improved the best: test again.
        if (bound[c] > thr) continue;
        scan_block(size_t(~tree.child_[node * kLanes + c]));
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

SearchResult BoundedTreeSearch::search(std::span<const float> query, const SearchFilter& filter,
                                       SearchStats* stats) const noexcept {
  if (stats) *stats = {};
  if (!query_ok(query, blocks_.dims_) || child_.empty()) return {};
  FilterPlan plan;
  if (!plan_filter(blocks_.has_tags_, filter, plan)) return {};
  Walk walk(*this, query.data(), filter, plan);
  if (!walk.descend()) walk.scan_bottom_nodes();
  if (stats) *stats = {walk.blocks_visited, walk.nodes_visited};
  if (walk.best.frame == UINT32_MAX) return {};
  return {walk.best.frame, walk.best.cost};
}

size_t BoundedTreeSearch::memory_bytes() const {
  return blocks_.memory_bytes() + lo_.capacity() * sizeof(float) + hi_.capacity() * sizeof(float) +
         child_.capacity() * sizeof(int32_t) + child_tags_.capacity() * sizeof(uint64_t) +
         child_mask_.capacity() + block_mask_.capacity() +
         scan_nodes_.capacity() * sizeof(uint32_t) +
         (pca_.rows.capacity() + pca_.centre.capacity()) * sizeof(float);
}

}  // namespace kinema::match
