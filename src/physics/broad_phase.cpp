// The three broad phases of kinema/physics/broad_phase.h.
#include "kinema/physics/broad_phase.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <utility>

namespace kinema {

Aabb aabb_union(const Aabb& a, const Aabb& b) {
  return {{std::min(a.min.x, b.min.x), std::min(a.min.y, b.min.y), std::min(a.min.z, b.min.z)},
          {std::max(a.max.x, b.max.x), std::max(a.max.y, b.max.y), std::max(a.max.z, b.max.z)}};
}

bool aabb_is_valid(const Aabb& box) {
  return is_finite(box.min) && is_finite(box.max) && box.min.x <= box.max.x &&
         box.min.y <= box.max.y && box.min.z <= box.max.z;
}

const char* broad_phase_kind_name(BroadPhaseKind kind) {
  switch (kind) {
    case BroadPhaseKind::AabbTree:
      return "aabb_tree";
    case BroadPhaseKind::SweepAndPrune:
      return "sweep_and_prune";
    case BroadPhaseKind::UniformGrid:
      return "uniform_grid";
  }
  return "unknown";
}

namespace {

ProxyPair ordered_pair(ProxyId a, ProxyId b) { return a < b ? ProxyPair{a, b} : ProxyPair{b, a}; }

// What every broad phase stores: the exact box of each present id.
class ProxyStore : public BroadPhase {
 public:
  bool contains(ProxyId id) const override { return id < present_.size() && present_[id] != 0; }
  std::size_t size() const override { return count_; }

 protected:
  bool can_insert(ProxyId id, const Aabb& box) const {
    return id <= kMaxProxyId && !contains(id) && aabb_is_valid(box);
  }
  void store(ProxyId id, const Aabb& box) {
    if (id >= present_.size()) {
      present_.resize(id + 1, 0);
      boxes_.resize(id + 1);
    }
    present_[id] = 1;
    boxes_[id] = box;
    ++count_;
  }
  void forget(ProxyId id) {
    present_[id] = 0;
    --count_;
  }
  std::vector<Aabb> boxes_;
  std::vector<std::uint8_t> present_;
  std::size_t count_ = 0;
};

// A box in floats (the tree's nodes) and the operations the tree needs on it.
struct FloatBox {
  Vec3f min{0, 0, 0};
  Vec3f max{0, 0, 0};
};

// The float box holding `b`: each bound rounded away from the box's inside.
FloatBox outward(const Aabb& b) {
  FloatBox f;
  for (int k = 0; k < 3; ++k) {
    float lo = static_cast<float>(b.min[k]), hi = static_cast<float>(b.max[k]);
    if (static_cast<double>(lo) > b.min[k]) lo = std::nextafter(lo, -INFINITY);
    if (static_cast<double>(hi) < b.max[k]) hi = std::nextafter(hi, INFINITY);
    f.min[k] = lo;
    f.max[k] = hi;
  }
  return f;
}

bool aabb_overlap(const FloatBox& a, const FloatBox& b) {
  return a.min.x <= b.max.x && b.min.x <= a.max.x && a.min.y <= b.max.y && b.min.y <= a.max.y &&
         a.min.z <= b.max.z && b.min.z <= a.max.z;
}
bool aabb_overlap(const FloatBox& a, const Aabb& b) {
  return a.min.x <= b.max.x && b.min.x <= a.max.x && a.min.y <= b.max.y && b.min.y <= a.max.y &&
         a.min.z <= b.max.z && b.min.z <= a.max.z;
}
bool aabb_contains(const FloatBox& outer, const Aabb& inner) {
  return outer.min.x <= inner.min.x && outer.min.y <= inner.min.y && outer.min.z <= inner.min.z &&
         inner.max.x <= outer.max.x && inner.max.y <= outer.max.y && inner.max.z <= outer.max.z;
}
FloatBox aabb_union(const FloatBox& a, const FloatBox& b) {
  return {{std::min(a.min.x, b.min.x), std::min(a.min.y, b.min.y), std::min(a.min.z, b.min.z)},
          {std::max(a.max.x, b.max.x), std::max(a.max.y, b.max.y), std::max(a.max.z, b.max.z)}};
}
// Half the surface area: the cost measure of the tree's insertion heuristic.
double perimeter(const FloatBox& b) {
  const Vec3f d = b.max - b.min;
  return double(d.x) * d.y + double(d.y) * d.z + double(d.z) * d.x;
}

// ---- dynamic AABB tree ----------------------------------------------------------------------

class AabbTree final : public ProxyStore {
 public:
  explicit AabbTree(double margin) : margin_(margin) {}
  BroadPhaseKind kind() const override { return BroadPhaseKind::AabbTree; }

  bool insert(ProxyId id, const Aabb& box) override {
    if (!can_insert(id, box)) return false;
    store(id, box);
    if (id >= leaf_of_.size()) leaf_of_.resize(id + 1, -1);
    const int leaf = allocate();
    nodes_[leaf].box = outward(fatten(box));
    nodes_[leaf].id = id;
    leaf_of_[id] = leaf;
    insert_leaf(leaf);
    if (id >= near_.size()) near_.resize(id + 1);
    link(id);
    return true;
  }

  bool update(ProxyId id, const Aabb& box) override {
    if (!contains(id) || !aabb_is_valid(box)) return false;
    // The box's displacement since the last update, to stretch the new fattened box ahead of it.
    const Vec3 moved = (box.min + box.max - boxes_[id].min - boxes_[id].max) * 0.5;
    boxes_[id] = box;
    const int leaf = leaf_of_[id];
    if (aabb_contains(nodes_[leaf].box, box)) return true;  // still inside its margin: no work
    unlink(id);
    remove_leaf(leaf);
    Aabb fat = fatten(box);
    // Stretched by two more such steps on the side it moves toward: a body in steady flight is
    // reinserted a few times less often (the trick of Box2D's dynamic tree).
    for (int k = 0; k < 3; ++k) {
      const double ahead = kPredictedSteps * moved[k];
      if (ahead < 0) fat.min[k] += ahead;
      if (ahead > 0) fat.max[k] += ahead;
    }
    nodes_[leaf].box = outward(fat);
    insert_leaf(leaf);
    link(id);
    return true;
  }

  bool remove(ProxyId id) override {
    if (!contains(id)) return false;
    forget(id);
    unlink(id);
    const int leaf = leaf_of_[id];
    remove_leaf(leaf);
    release(leaf);
    leaf_of_[id] = -1;
    return true;
  }

  // The fattened-overlap lists hold every candidate; keep those whose exact boxes overlap.
  // The ids come in ascending order, so sorting each one's partners sorts the whole list.
  void pairs(std::vector<ProxyPair>& out) override {
    out.clear();
    for (ProxyId id = 0; id < near_.size(); ++id) {
      if (!contains(id)) continue;
      const std::size_t first = out.size();
      for (const ProxyId other : near_[id])
        if (other > id && aabb_overlap(boxes_[id], boxes_[other])) out.push_back({id, other});
      std::sort(out.begin() + std::ptrdiff_t(first), out.end());
    }
  }

  void query(const Aabb& box, std::vector<ProxyId>& out) override {
    out.clear();
    if (root_ < 0) return;
    int top = 0;  // the walk's stack is kept between calls: no allocation per query
    walk_[top++] = root_;
    while (top > 0) {
      const Node& n = nodes_[walk_[--top]];
      if (!aabb_overlap(n.box, box)) continue;
      if (!n.is_leaf()) {
        if (top + 2 > static_cast<int>(walk_.size())) walk_.resize(walk_.size() * 2);
        walk_[top++] = n.left;
        walk_[top++] = n.right;
      } else if (aabb_overlap(boxes_[n.id], box)) {
        out.push_back(n.id);
      }
    }
    std::sort(out.begin(), out.end());
  }

  // Every proxy whose box overlaps one inside `near`'s fattened box has a fattened box
  // overlapping it, so it is on `near`'s list (or is `near`).
  void query_near(ProxyId near, const Aabb& box, std::vector<ProxyId>& out) override {
    if (!contains(near) || !aabb_contains(nodes_[leaf_of_[near]].box, box)) return query(box, out);
    out.clear();
    if (aabb_overlap(boxes_[near], box)) out.push_back(near);
    for (const ProxyId other : near_[near])
      if (aabb_overlap(boxes_[other], box)) out.push_back(other);
    std::sort(out.begin(), out.end());
  }

 private:
  // Node boxes in single precision, rounded outward: half the bytes of doubles, so twice the
  // nodes per cache line in the traversals, and still holding every exact box they stand for.
  struct Node {
    FloatBox box;
    int parent = -1, left = -1, right = -1;
    int height = 0;  // 0 for a leaf
    ProxyId id = 0;
    bool is_leaf() const { return left < 0; }
  };

  // Records, both ways, every proxy whose fattened box overlaps `id`'s: the candidates for
  // pairs() until one of the two is reinserted. Only proxies that left their margin pay this.
  void link(ProxyId id) {
    const int leaf = leaf_of_[id];
    const FloatBox fat = nodes_[leaf].box;
    int top = 0;
    walk_[top++] = root_;
    while (top > 0) {
      const int index = walk_[--top];
      const Node& n = nodes_[index];
      if (!aabb_overlap(n.box, fat)) continue;
      if (n.is_leaf()) {
        if (index != leaf) {
          near_[id].push_back(n.id);
          near_[n.id].push_back(id);
        }
        continue;
      }
      if (top + 2 > static_cast<int>(walk_.size())) walk_.resize(walk_.size() * 2);
      walk_[top++] = n.left;
      walk_[top++] = n.right;
    }
  }

  void unlink(ProxyId id) {
    for (const ProxyId other : near_[id]) {
      std::vector<ProxyId>& list = near_[other];
      const auto at = std::find(list.begin(), list.end(), id);
      if (at != list.end()) {
        *at = list.back();
        list.pop_back();
      }
    }
    near_[id].clear();
  }

  Aabb fatten(const Aabb& b) const {
    const Vec3 m{margin_, margin_, margin_};
    return {b.min - m, b.max + m};
  }

  int allocate() {
    if (!free_.empty()) {
      const int n = free_.back();
      free_.pop_back();
      nodes_[n] = Node{};
      return n;
    }
    nodes_.push_back(Node{});
    return static_cast<int>(nodes_.size()) - 1;
  }
  void release(int n) { free_.push_back(n); }

  // Descends by the surface-area heuristic to the sibling whose enlargement costs least, then
  // joins the leaf and that sibling under a new parent and rebalances on the way up.
  void insert_leaf(int leaf) {
    if (root_ < 0) {
      root_ = leaf;
      nodes_[leaf].parent = -1;
      return;
    }
    const FloatBox box = nodes_[leaf].box;
    int index = root_;
    while (!nodes_[index].is_leaf()) {
      const Node& n = nodes_[index];
      const double area = perimeter(n.box);
      const double combined = perimeter(aabb_union(n.box, box));
      const double cost_here = 2 * combined;
      const double inherited = 2 * (combined - area);
      auto child_cost = [&](int c) {
        const Node& cn = nodes_[c];
        const double grown = perimeter(aabb_union(cn.box, box));
        return (cn.is_leaf() ? grown : grown - perimeter(cn.box)) + inherited;
      };
      const double cost_left = child_cost(n.left), cost_right = child_cost(n.right);
      if (cost_here < cost_left && cost_here < cost_right) break;
      index = cost_left <= cost_right ? n.left : n.right;
    }
    const int sibling = index;
    const int old_parent = nodes_[sibling].parent;
    const int parent = allocate();
    nodes_[parent].parent = old_parent;
    nodes_[parent].box = aabb_union(box, nodes_[sibling].box);
    nodes_[parent].height = nodes_[sibling].height + 1;
    nodes_[parent].left = sibling;
    nodes_[parent].right = leaf;
    nodes_[sibling].parent = parent;
    nodes_[leaf].parent = parent;
    if (old_parent < 0) {
      root_ = parent;
    } else if (nodes_[old_parent].left == sibling) {
      nodes_[old_parent].left = parent;
    } else {
      nodes_[old_parent].right = parent;
    }
    refit_from(nodes_[leaf].parent);
  }

  void remove_leaf(int leaf) {
    if (leaf == root_) {
      root_ = -1;
      return;
    }
    const int parent = nodes_[leaf].parent;
    const int grand = nodes_[parent].parent;
    const int sibling = nodes_[parent].left == leaf ? nodes_[parent].right : nodes_[parent].left;
    if (grand < 0) {
      root_ = sibling;
      nodes_[sibling].parent = -1;
    } else {
      if (nodes_[grand].left == parent) {
        nodes_[grand].left = sibling;
      } else {
        nodes_[grand].right = sibling;
      }
      nodes_[sibling].parent = grand;
      refit_from(grand);
    }
    release(parent);
  }

  // Walks to the root, rebalancing each node and recomputing its box and height.
  void refit_from(int index) {
    while (index >= 0) {
      index = balance(index);
      Node& n = nodes_[index];
      n.height = 1 + std::max(nodes_[n.left].height, nodes_[n.right].height);
      n.box = aabb_union(nodes_[n.left].box, nodes_[n.right].box);
      index = n.parent;
    }
  }

  // An AVL rotation when one child is taller than the other by more than one level; returns the
  // node now standing where `a` stood.
  int balance(int a) {
    Node& na = nodes_[a];
    if (na.is_leaf() || na.height < 2) return a;
    const int b = na.left, c = na.right;
    const int diff = nodes_[c].height - nodes_[b].height;
    if (diff > 1) return rotate_up(a, c, /*child_is_right=*/true);
    if (diff < -1) return rotate_up(a, b, /*child_is_right=*/false);
    return a;
  }

  // Lifts child `c` of `a` into a's place; a keeps c's shorter grandchild.
  int rotate_up(int a, int c, bool child_is_right) {
    const int f = nodes_[c].left, g = nodes_[c].right;
    const int a_parent = nodes_[a].parent;
    nodes_[c].parent = a_parent;
    nodes_[a].parent = c;
    if (a_parent < 0) {
      root_ = c;
    } else if (nodes_[a_parent].left == a) {
      nodes_[a_parent].left = c;
    } else {
      nodes_[a_parent].right = c;
    }
    const bool f_taller = nodes_[f].height > nodes_[g].height;
    const int keep = f_taller ? f : g;  // stays under c
    const int give = f_taller ? g : f;  // moves under a
    nodes_[c].left = a;
    nodes_[c].right = keep;
    if (child_is_right) {
      nodes_[a].right = give;
    } else {
      nodes_[a].left = give;
    }
    nodes_[give].parent = a;
    Node& na = nodes_[a];
    na.box = aabb_union(nodes_[na.left].box, nodes_[na.right].box);
    na.height = 1 + std::max(nodes_[na.left].height, nodes_[na.right].height);
    Node& nc = nodes_[c];
    nc.box = aabb_union(nodes_[nc.left].box, nodes_[nc.right].box);
    nc.height = 1 + std::max(nodes_[nc.left].height, nodes_[nc.right].height);
    return c;
  }

  static constexpr double kPredictedSteps = 2;
  double margin_;
  std::vector<Node> nodes_;
  std::vector<int> free_;
  std::vector<int> leaf_of_;
  std::vector<int> walk_ = std::vector<int>(64);
  std::vector<std::vector<ProxyId>> near_;  // per id: the ids whose fattened boxes overlap
  int root_ = -1;
};

// ---- sweep and prune --------------------------------------------------------------------------

class SweepAndPrune final : public ProxyStore {
 public:
  explicit SweepAndPrune(int axis) : fixed_axis_(axis) {}
  BroadPhaseKind kind() const override { return BroadPhaseKind::SweepAndPrune; }

  bool insert(ProxyId id, const Aabb& box) override {
    if (!can_insert(id, box)) return false;
    store(id, box);
    if (id >= listed_.size()) listed_.resize(id + 1, 0);
    if (!listed_[id]) {  // a removed id still listed keeps its place until the next compaction
      listed_[id] = 1;
      order_.push_back(id);
    }
    return true;
  }
  bool update(ProxyId id, const Aabb& box) override {
    if (!contains(id) || !aabb_is_valid(box)) return false;
    boxes_[id] = box;
    return true;
  }
  bool remove(ProxyId id) override {
    if (!contains(id)) return false;
    forget(id);
    return true;
  }

  void pairs(std::vector<ProxyPair>& out) override {
    out.clear();
    bring_up_to_date();
    const int ax = axis_;
    const int ay = (ax + 1) % 3, az = (ax + 2) % 3;
    for (std::size_t i = 0; i < order_.size(); ++i) {
      const Aabb& a = boxes_[order_[i]];
      const double reach = a.max[ax];
      for (std::size_t j = i + 1; j < order_.size(); ++j) {
        const Aabb& b = boxes_[order_[j]];
        if (b.min[ax] > reach) break;  // every later box starts further along the axis
        if (a.min[ay] <= b.max[ay] && b.min[ay] <= a.max[ay] && a.min[az] <= b.max[az] &&
            b.min[az] <= a.max[az]) {
          out.push_back(ordered_pair(order_[i], order_[j]));
        }
      }
    }
    std::sort(out.begin(), out.end());
  }

  void query(const Aabb& box, std::vector<ProxyId>& out) override {
    out.clear();
    bring_up_to_date();
    for (const ProxyId id : order_) {
      if (boxes_[id].min[axis_] > box.max[axis_]) break;
      if (aabb_overlap(boxes_[id], box)) out.push_back(id);
    }
    std::sort(out.begin(), out.end());
  }

 private:
  // Drops removed ids, picks the axis and sorts by lower bound: insertion sort while the axis is
  // unchanged (the order is nearly right after a small step), a full sort when it changes.
  void bring_up_to_date() {
    std::erase_if(order_, [&](ProxyId id) {
      if (present_[id]) return false;
      listed_[id] = 0;
      return true;
    });
    const int axis = fixed_axis_ >= 0 ? fixed_axis_ : widest_axis();
    auto lower = [&](ProxyId id) { return boxes_[id].min[axis]; };
    if (axis != axis_) {
      axis_ = axis;
      std::sort(order_.begin(), order_.end(), [&](ProxyId a, ProxyId b) {
        return lower(a) < lower(b) || (lower(a) == lower(b) && a < b);
      });
      return;
    }
    for (std::size_t i = 1; i < order_.size(); ++i) {
      const ProxyId id = order_[i];
      const double key = lower(id);
      std::size_t j = i;
      while (j > 0 && lower(order_[j - 1]) > key) {
        order_[j] = order_[j - 1];
        --j;
      }
      order_[j] = id;
    }
  }

  int widest_axis() const {
    if (order_.empty()) return axis_ >= 0 ? axis_ : 0;
    Vec3 sum{0, 0, 0}, sum_sq{0, 0, 0};
    for (const ProxyId id : order_) {
      const Vec3 c = (boxes_[id].min + boxes_[id].max) * 0.5;
      sum += c;
      sum_sq += mul(c, c);
    }
    const double n = static_cast<double>(order_.size());
    const Vec3 var = sum_sq / n - mul(sum, sum) / (n * n);
    int best = axis_ >= 0 ? axis_ : 0;
    // Keep the current axis unless another spreads clearly more: switching costs a full sort.
    for (int k = 0; k < 3; ++k)
      if (var[k] > 1.2 * var[best]) best = k;
    return best;
  }

  int fixed_axis_;
  int axis_ = -1;
  std::vector<ProxyId> order_;
  std::vector<std::uint8_t> listed_;
};

// ---- uniform grid -----------------------------------------------------------------------------

class UniformGrid final : public ProxyStore {
 public:
  explicit UniformGrid(double cell_size) : cell_(cell_size) {}
  BroadPhaseKind kind() const override { return BroadPhaseKind::UniformGrid; }

  bool insert(ProxyId id, const Aabb& box) override {
    if (!can_insert(id, box)) return false;
    store(id, box);
    if (id >= ranges_.size()) ranges_.resize(id + 1);
    if (cell_ > 0) bin(id);
    return true;
  }
  bool update(ProxyId id, const Aabb& box) override {
    if (!contains(id) || !aabb_is_valid(box)) return false;
    boxes_[id] = box;
    if (cell_ <= 0) return true;
    const Range r = range_of(box);
    if (r == ranges_[id]) return true;  // same cells: nothing to move
    unbin(id);
    bin(id);
    return true;
  }
  bool remove(ProxyId id) override {
    if (!contains(id)) return false;
    if (cell_ > 0) unbin(id);
    forget(id);
    return true;
  }

  void pairs(std::vector<ProxyPair>& out) override {
    out.clear();
    choose_cell_size();
    for (const auto& [key, cell] : cells_) {
      const std::vector<ProxyId>& ids = cell.ids;
      for (std::size_t i = 0; i < ids.size(); ++i) {
        for (std::size_t j = i + 1; j < ids.size(); ++j) {
          const ProxyId a = ids[i], b = ids[j];
          if (!aabb_overlap(boxes_[a], boxes_[b])) continue;
          // Report a pair only in the cell holding the lower corner of the two ranges' overlap,
          // the one cell both are in that is unique to the pair.
          const Range &ra = ranges_[a], &rb = ranges_[b];
          if (std::max(ra.lo[0], rb.lo[0]) == cell.x && std::max(ra.lo[1], rb.lo[1]) == cell.y &&
              std::max(ra.lo[2], rb.lo[2]) == cell.z) {
            out.push_back(ordered_pair(a, b));
          }
        }
      }
    }
    for (const ProxyId big : oversized_) {
      for (ProxyId other = 0; other < present_.size(); ++other) {
        if (!present_[other] || other == big) continue;
        if (ranges_[other].oversized && other < big) continue;  // that one reports this pair
        if (aabb_overlap(boxes_[big], boxes_[other])) out.push_back(ordered_pair(big, other));
      }
    }
    std::sort(out.begin(), out.end());
  }

  void query(const Aabb& box, std::vector<ProxyId>& out) override {
    out.clear();
    choose_cell_size();
    const Range r = range_of(box);
    if (r.oversized) {
      for (ProxyId id = 0; id < present_.size(); ++id)
        if (present_[id] && aabb_overlap(boxes_[id], box)) out.push_back(id);
      return;
    }
    for (int x = r.lo[0]; x <= r.hi[0]; ++x)
      for (int y = r.lo[1]; y <= r.hi[1]; ++y)
        for (int z = r.lo[2]; z <= r.hi[2]; ++z) {
          const auto it = cells_.find(key_of(x, y, z));
          if (it == cells_.end()) continue;
          for (const ProxyId id : it->second.ids)
            if (aabb_overlap(boxes_[id], box)) out.push_back(id);
        }
    for (const ProxyId id : oversized_)
      if (aabb_overlap(boxes_[id], box)) out.push_back(id);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  }

 private:
  // Cell coordinates are clamped to ±2^20 so that three fit one 64-bit key; boxes beyond
  // ±2^20 cells share the border cells, which costs pair tests but never misses a pair.
  static constexpr int kCoordLimit = 1 << 20;
  // A proxy covering more cells than this is kept aside and tested against every proxy.
  static constexpr long kMaxCellsPerProxy = 64;

  struct Range {
    int lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
    bool oversized = false;
    bool operator==(const Range&) const = default;
  };
  struct Cell {
    int x = 0, y = 0, z = 0;
    std::vector<ProxyId> ids;
  };

  int coord(double v) const {
    const double c = std::floor(v / cell_);
    return static_cast<int>(std::clamp(c, double(-kCoordLimit), double(kCoordLimit - 1)));
  }
  static std::uint64_t key_of(int x, int y, int z) {
    auto part = [](int c) { return static_cast<std::uint64_t>(c + kCoordLimit); };
    return (part(x) << 42) | (part(y) << 21) | part(z);
  }
  Range range_of(const Aabb& b) const {
    Range r;
    long cells = 1;
    for (int k = 0; k < 3; ++k) {
      r.lo[k] = coord(b.min[k]);
      r.hi[k] = coord(b.max[k]);
      cells *= static_cast<long>(r.hi[k]) - r.lo[k] + 1;
    }
    r.oversized = cells > kMaxCellsPerProxy;
    return r;
  }

  void bin(ProxyId id) {
    Range& r = ranges_[id];
    r = range_of(boxes_[id]);
    if (r.oversized) {
      oversized_.push_back(id);
      return;
    }
    for (int x = r.lo[0]; x <= r.hi[0]; ++x)
      for (int y = r.lo[1]; y <= r.hi[1]; ++y)
        for (int z = r.lo[2]; z <= r.hi[2]; ++z) {
          Cell& cell = cells_[key_of(x, y, z)];
          cell.x = x;
          cell.y = y;
          cell.z = z;
          cell.ids.push_back(id);
        }
  }
  void unbin(ProxyId id) {
    const Range& r = ranges_[id];
    if (r.oversized) {
      std::erase(oversized_, id);
      return;
    }
    for (int x = r.lo[0]; x <= r.hi[0]; ++x)
      for (int y = r.lo[1]; y <= r.hi[1]; ++y)
        for (int z = r.lo[2]; z <= r.hi[2]; ++z) {
          const auto it = cells_.find(key_of(x, y, z));
          if (it == cells_.end()) continue;
          std::vector<ProxyId>& ids = it->second.ids;
          const auto at = std::find(ids.begin(), ids.end(), id);
          if (at != ids.end()) {
            *at = ids.back();
            ids.pop_back();
          }
          if (ids.empty()) cells_.erase(it);
        }
  }

  void choose_cell_size() {
    if (cell_ > 0) return;
    double sum = 0;
    for (ProxyId id = 0; id < present_.size(); ++id) {
      if (!present_[id]) continue;
      const Vec3 d = boxes_[id].max - boxes_[id].min;
      sum += std::max({d.x, d.y, d.z});
    }
    const double mean = count_ > 0 ? sum / static_cast<double>(count_) : 0;
    cell_ = mean > 0 ? 2 * mean : 1.0;
    for (ProxyId id = 0; id < present_.size(); ++id)
      if (present_[id]) bin(id);
  }

  double cell_;
  std::unordered_map<std::uint64_t, Cell> cells_;
  std::vector<Range> ranges_;
  std::vector<ProxyId> oversized_;
};

}  // namespace

std::unique_ptr<BroadPhase> make_broad_phase(const BroadPhaseOptions& options) {
  switch (options.kind) {
    case BroadPhaseKind::SweepAndPrune: {
      const int axis = options.sweep_axis >= 0 && options.sweep_axis <= 2 ? options.sweep_axis : -1;
      return std::make_unique<SweepAndPrune>(axis);
    }
    case BroadPhaseKind::UniformGrid: {
      const double cell =
          std::isfinite(options.cell_size) && options.cell_size > 0 ? options.cell_size : 0;
      return std::make_unique<UniformGrid>(cell);
    }
    case BroadPhaseKind::AabbTree:
      break;
  }
  const double margin =
      std::isfinite(options.fat_margin) && options.fat_margin >= 0 ? options.fat_margin : 0.1;
  return std::make_unique<AabbTree>(margin);
}

}  // namespace kinema
