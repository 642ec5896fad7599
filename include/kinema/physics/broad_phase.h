// kinema/physics/broad_phase.h — which bodies might touch: pairs of overlapping world bounds.
//
// A broad phase holds one axis-aligned box (AABB, world frame, metres) per proxy and reports the
// pairs of proxies whose boxes overlap, so that the narrow phase (kinema/physics/narrow_phase.h)
// runs only on those instead of on all n·(n−1)/2 pairs (499,500 for 1,000 bodies). Three are
// offered behind one interface:
//
// - a dynamic AABB tree (the default): a balanced bounding-volume hierarchy (surface-area
//   heuristic insertion, AVL rotations) of boxes fattened by a margin and stretched ahead of their
//   last displacement, so a proxy that stays inside its fattened box costs nothing to update. Each
//   proxy keeps the list of proxies whose fattened boxes overlap its own, refreshed only when it
//   is reinserted; pairs() filters those lists by the exact boxes. Cheapest where most bodies rest
//   and sizes differ;
// - sweep-and-prune along one axis: the boxes sorted by their lower bound (incrementally, by
//   insertion sort, which is near linear while motion is coherent), overlaps found by one sweep;
// - a uniform grid of cubic cells hashed by their integer coordinates, each proxy listed in the
//   cells its box covers (proxies covering too many cells are kept aside and tested with all).
//
// bench/broad_phase_bench.cpp times all three on moving boxes: the grid wins when every body
// flies and all are of one size, the tree when most rest (as in a settled scene) and by 2–3× when
// a few are large; sweep-and-prune along one axis trails in 3D scatter. Every broad phase reports
// exactly the pairs whose (unfattened) boxes overlap, each once, smaller id first, sorted: the
// result depends only on the current boxes, never on the order of insertions, updates, removals.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "kinema/math/vec3.h"

namespace kinema {

/// An axis-aligned box in the world frame (m); valid when finite and min ≤ max on every axis.
struct Aabb {
  Vec3 min{0, 0, 0};
  Vec3 max{0, 0, 0};
};

/// Whether `a` and `b` overlap, touching included: on every axis a.min ≤ b.max and b.min ≤ a.max.
constexpr bool aabb_overlap(const Aabb& a, const Aabb& b) {
  return a.min.x <= b.max.x && b.min.x <= a.max.x && a.min.y <= b.max.y && b.min.y <= a.max.y &&
         a.min.z <= b.max.z && b.min.z <= a.max.z;
}

/// Whether `inner` lies inside `outer` (touching allowed).
constexpr bool aabb_contains(const Aabb& outer, const Aabb& inner) {
  return outer.min.x <= inner.min.x && outer.min.y <= inner.min.y && outer.min.z <= inner.min.z &&
         inner.max.x <= outer.max.x && inner.max.y <= outer.max.y && inner.max.z <= outer.max.z;
}

/// The smallest box holding both.
Aabb aabb_union(const Aabb& a, const Aabb& b);

/// Finite, with min ≤ max on every axis.
bool aabb_is_valid(const Aabb& box);

/// A proxy's id: chosen by the caller (typically the body's index). Storage grows with the largest
/// id in use, so keep ids small and dense; ids above kMaxProxyId are refused.
using ProxyId = std::uint32_t;
inline constexpr ProxyId kMaxProxyId = (1u << 28) - 1;

/// Two proxies whose boxes overlap; `first` < `second`. Ordered lexicographically.
struct ProxyPair {
  ProxyId first = 0;
  ProxyId second = 0;
  constexpr auto operator<=>(const ProxyPair&) const = default;
};

enum class BroadPhaseKind { AabbTree, SweepAndPrune, UniformGrid };

/// "aabb_tree", "sweep_and_prune", "uniform_grid".
const char* broad_phase_kind_name(BroadPhaseKind kind);

struct BroadPhaseOptions {
  BroadPhaseKind kind = BroadPhaseKind::AabbTree;
  /// AABB tree: how far (m) each stored box is grown on every side beyond the proxy's box; a
  /// proxy whose new box stays inside its fattened box is not moved in the tree. ≥ 0.
  double fat_margin = 0.1;
  /// Sweep-and-prune: the axis swept (0 = x, 1 = y, 2 = z), or −1 to choose, at each pairs(),
  /// the axis along which the box centres spread most.
  int sweep_axis = -1;
  /// Uniform grid: a cell's edge (m), or ≤ 0 to choose it at the first pairs() as twice the mean
  /// of the boxes' largest extents (a box then covers at most a few cells).
  double cell_size = 0;
};

/// The common interface. Not thread-safe for writes; one broad phase per scene.
class BroadPhase {
 public:
  virtual ~BroadPhase() = default;

  virtual BroadPhaseKind kind() const = 0;

  /// Adds proxy `id` with world box `box`. Returns false, changing nothing, when `id` is already
  /// present or above kMaxProxyId, or `box` is not valid (aabb_is_valid).
  virtual bool insert(ProxyId id, const Aabb& box) = 0;

  /// Moves proxy `id` to box `box`. False, changing nothing, when `id` is absent or `box` invalid.
  virtual bool update(ProxyId id, const Aabb& box) = 0;

  /// Removes proxy `id`; false when it is absent.
  virtual bool remove(ProxyId id) = 0;

  /// Whether proxy `id` is present.
  virtual bool contains(ProxyId id) const = 0;

  /// How many proxies are present.
  virtual std::size_t size() const = 0;

  /// Replaces `out` with every pair of present proxies whose boxes overlap (aabb_overlap), each
  /// once, `first` < `second`, sorted lexicographically. Not const: it may bring the structure up
  /// to date (re-sort, re-bin) first.
  virtual void pairs(std::vector<ProxyPair>& out) = 0;

  /// Replaces `out` with the ids of the proxies whose boxes overlap `box`, sorted ascending.
  virtual void query(const Aabb& box, std::vector<ProxyId>& out) = 0;

  /// The same answer as query(box, out), for a box near proxy `near`'s own (its sweep over a
  /// step): the AABB tree answers from the neighbours it keeps for `near` when its fattened box
  /// holds `box`, without walking the tree. The others walk as query does.
  virtual void query_near(ProxyId near, const Aabb& box, std::vector<ProxyId>& out) {
    (void)near;
    query(box, out);
  }
};

/// A new, empty broad phase of `options.kind`. Options out of range (a negative margin, an axis
/// other than −1, 0, 1, 2, a non-finite size) fall back to their defaults.
std::unique_ptr<BroadPhase> make_broad_phase(const BroadPhaseOptions& options = {});

}  // namespace kinema
