// src/match/search_tree.cpp — BoundedTreeSearch: build and search (kinema/match/search.h).
#include <algorithm>
#include <cmath>

#include "kinema/core/error.h"
#include "kinema/match/search.h"
#include "search_internal.h"
#include "search_kernels.h"
#include "search_walk.h"

namespace kinema::match {

using namespace detail;

namespace {

// Principal axes the node boxes keep at most (the first ones, of largest variance): all of them
// for the 27 features of BENCHMARKS.md. Fewer axes (and the residual coordinate for the rest)
// made cheaper node tests but looser boxes: at 54k, 8 / 12 / 16 axes instead of 27 answered
// near queries as fast and random ones 1.3-1.6x slower.
constexpr size_t kBoxAxes = kMaxPcaAxes;
// Subtrees of at most this many frames (the last 9 levels of splits: 512 blocks) are split on
// the coordinate whose median split gives the tightest halves (least sum of their boxes'
// squared diagonals), tried on every coordinate; larger ones on the coordinate of largest
// spread. Measured on the real databases of BENCHMARKS.md: from 512 frames (6 levels), 30%
// fewer blocks scanned at 10k and 54k (real+noise and random queries), random queries at 10k
// 1.2x faster; 4096 then scans 5-11% fewer blocks and tests 4-10% fewer nodes than 512 at 54k
// and 200k, real+noise 4-8% and random 6-10% faster there (10k unchanged); 2048, 8192 and
// 32768 (every level at 10k) did worse than 4096 on the counters (docs/match_search.md). The
// build pays k² work per frame and tight level (about 0.4 s more at 200k frames).
constexpr size_t kTightSplitFrames = 4096;
// Pairs of leading coordinates each frame keeps on the grid for its own bound (frame_grid_).
constexpr size_t kFrameGridPairs = 8;

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

// An IEEE half float's value (exact in float).
float half_value(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  float v;
  if (exp == 0x1f) {
    v = man ? NAN : INFINITY;
  } else if (exp == 0) {
    v = std::ldexp(float(man), -24);
  } else {
    v = std::ldexp(float(man | 0x400u), int(exp) - 25);
  }
  return sign ? -v : v;
}

// The i-th of the 2 × 0x7c01 non-NaN halves in increasing order (−inf … −0, +0 … +inf).
uint16_t half_at(uint32_t i) {
  return i < 0x7c01u ? uint16_t(0x8000u | (0x7c00u - i)) : uint16_t(i - 0x7c01u);
}

// The largest half ≤ x (down) or the smallest half ≥ x (up); x not NaN.
uint16_t half_round(float x, bool up) {
  uint32_t a = 0, b = 2 * 0x7c01u - 1;  // half_at(a) = −inf ≤ x ≤ +inf = half_at(b)
  while (b - a > 1) {
    const uint32_t m = (a + b) / 2;
    const float v = half_value(half_at(m));
    if (v < x) {
      a = m;
    } else if (v > x) {
      b = m;
    } else {
      return half_at(m);
    }
  }
  if (half_value(half_at(a)) == x) return half_at(a);
  if (half_value(half_at(b)) == x) return half_at(b);
  return half_at(up ? b : a);
}

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
  for (size_t n = 0; n < block_mask_.size(); ++n) {
    if (block_mask_[n] == 0) continue;
    scan_nodes_.push_back(uint32_t(n));
    const unsigned c0 = unsigned(__builtin_ctz(block_mask_[n]));
    const uint32_t base = uint32_t(~child_[n * kLanes + c0]) - c0;
    // Builder::build gives a node's parts consecutive frames, so its blocks are consecutive;
    // checked, because the pass relies on it.
    for (unsigned c = c0; c < kLanes; ++c)
      if (((block_mask_[n] >> c) & 1u) && uint32_t(~child_[n * kLanes + c]) != base + c)
        throw Error("", "", "feature matrix: search tree blocks out of order");
    scan_block_base_.push_back(base);
  }
  build_grid_boxes(k);
  if (grid_pairs_ == 0) {
    box16_.resize(lo_.size() * 2);
    for (size_t i = 0; i < lo_.size(); ++i) {
      box16_[i] = half_round(lo_[i], false);
      box16_[lo_.size() + i] = half_round(hi_[i], true);
    }
  }
  build_frame_grid(pc, k, order);
  if (depth_ > kMaxDepth) throw Error("", "", "feature matrix: search tree too deep");
  blocks_.dims_ = features.dims;
  blocks_.frames_ = features.frames();
  blocks_.has_tags_ = !features.tags.empty();
  fill_blocks(features, order, blocks_.blocks_, blocks_.values_, blocks_.frame_, blocks_.tags_,
              blocks_.block_tags_);
  work_budget_ = blocks_.blocks_ / kWorkBudgetDivisor;
  far_early_work_ = std::max(kFarEarlyMinWork, blocks_.blocks_ / kFarEarlyDivisor);
  if (!searchable.empty()) {
    far_threshold_ = float(pca_.mean_square / kFarVarianceDivisor);
    far_early_threshold_ = float(kFarEarlyFactor * pca_.mean_square / kFarVarianceDivisor);
  }
}

// The grid step is the smallest power of two that puts every box coordinate within kGridMax − 1
// steps of 0 (coordinates are centred on the frames' mean; a box higher up holds the boxes below
// it, so the extent is the bottom nodes'). Rounded outward (lo down, hi up: exact, the step being
// a power of two), each grid box holds its float box. Every node gets its children's grid
// boxes, in node order.
void BoundedTreeSearch::build_grid_boxes(size_t k) {
  double extent = 0;
  for (size_t n = 0; n < child_mask_.size(); ++n)
    for (size_t c = 0; c < kLanes; ++c) {
      if (!((child_mask_[n] >> c) & 1u)) continue;
      for (size_t i = 0; i < k; ++i) {
        extent = std::max(extent, std::fabs(double(lo_[(n * k + i) * kLanes + c])));
        extent = std::max(extent, std::fabs(double(hi_[(n * k + i) * kLanes + c])));
      }
    }
  grid_pairs_ = 0;  // no grid: the walk and the pass test the half-float boxes
  const double step = grid_step_for(extent);
  if (step == 0) return;
  const size_t nodes = child_mask_.size();
  grid_step_ = step;
  grid_pairs_ = (k + 1) / 2;
  const size_t per_node = grid_pairs_ * 2 * kLanes;
  grid_hi_ = nodes * per_node;
  grid_box_.assign(2 * grid_hi_, 0);
  for (size_t n = 0; n < nodes; ++n)
    for (size_t i = 0; i < grid_pairs_ * 2; ++i)
      for (size_t c = 0; c < kLanes; ++c) {
        // Coordinates past k (padding) and slots without a child: a box that holds every grid
        // query, distance 0 (a slot without a child is masked out anyway).
        int32_t lo = -kGridMax, hi = kGridMax;
        if (i < k && ((child_mask_[n] >> c) & 1u))
          grid_box(lo_[(n * k + i) * kLanes + c], hi_[(n * k + i) * kLanes + c], step, lo, hi);
        const size_t at = n * per_node + (i / 2) * 2 * kLanes + c * 2 + i % 2;
        grid_box_[at] = uint16_t(32767 - int32_t(lo));
        grid_box_[grid_hi_ + at] = uint16_t(32768 + int32_t(hi));
      }
}

// Each frame's first 2 × frame_pairs_ coordinates as one grid value g such that the frame's
// double coordinate lies in [(g − 1) step, (g + 1) step] (its float one, one ulp outward as the
// boxes, rounded outward to the grid spans at most 2 steps whenever a float ulp is below a step,
// which the extent rule of the grid gives; otherwise no frame grid). Padding lanes get 0: their
// bound only decides whether a block's costs are computed, never an answer.
void BoundedTreeSearch::build_frame_grid(const std::vector<float>& pc, size_t k,
                                         const std::vector<uint32_t>& order) {
  frame_pairs_ = grid_pairs_ == 0 ? 0 : std::min(kFrameGridPairs, grid_pairs_);
  const size_t per_block = frame_pairs_ * 2 * kLanes, blocks = (order.size() + kLanes - 1) / kLanes;
  frame_grid_.assign(blocks * per_block, 32768);
  for (size_t b = 0; b < blocks; ++b)
    for (size_t i = 0; i < frame_pairs_ * 2; ++i)
      for (size_t l = 0; l < kLanes; ++l) {
        const size_t u = b * kLanes + l;
        if (i >= k || u >= order.size()) continue;
        const float x = pc[size_t(order[u]) * k + i];
        int32_t g;
        if (!grid_frame_value(x, grid_step_, g)) {
          frame_pairs_ = 0;
          frame_grid_.clear();
          return;
        }
        frame_grid_[b * per_block + (i / 2) * 2 * kLanes + l * 2 + i % 2] = uint16_t(32768 + g);
      }
}

SearchResult BoundedTreeSearch::search(std::span<const float> query, const SearchFilter& filter,
                                       SearchStats* stats) const noexcept {
#if defined(KINEMA_MATCH_AVX2)
  if (search_isa() == SearchIsa::kAvx2) return search_with<1>(query, filter, stats);
#endif
  return search_with<0>(query, filter, stats);
}

size_t BoundedTreeSearch::memory_bytes() const {
  return blocks_.memory_bytes() + lo_.capacity() * sizeof(float) + hi_.capacity() * sizeof(float) +
         search_detail::large_array_footprint(box16_.capacity() * sizeof(uint16_t)) +
         child_.capacity() * sizeof(int32_t) + child_tags_.capacity() * sizeof(uint64_t) +
         child_mask_.capacity() + block_mask_.capacity() +
         (scan_nodes_.capacity() + scan_block_base_.capacity()) * sizeof(uint32_t) +
         search_detail::large_array_footprint(grid_box_.capacity() * sizeof(uint16_t)) +
         frame_grid_.capacity() * sizeof(uint16_t) +
         (pca_.rows.capacity() + pca_.centre.capacity()) * sizeof(float);
}

}  // namespace kinema::match
