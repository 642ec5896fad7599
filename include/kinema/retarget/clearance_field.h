// kinema/retarget/clearance_field.h — how far a point must move to clear a body surface.
// Metres, model space. Used by arm clearance (kinema/retarget/arm_clearance.h).
//
// The body near a point is approximated by a plane fitted to its k nearest surface vertices
// (k = 16 by default). With d_j the distance to vertex j and d_min the nearest one, each vertex
// weighs w_j = exp(−((d_j − d_min) / soft)²) — measured relative to the nearest so that the
// weights never all underflow when the whole neighbourhood is far — normalized to sum to one.
// The plane's normal is the weighted mean of the vertices' normals (normalized; the nearest
// vertex's normal when they cancel), and the signed distance s is the weighted mean of the
// point's distance to each vertex's own plane: s = Σ w_j (p − v_j)·n. Then
//   depth = max(0, −s)          how deep the point is behind the surface,
//   need  = max(0, clearance − s),  push = n · need   (clearance = the part's radius + margin).
// A point farther than clearance + reach from every vertex is "not near": no push, no depth.
// Nearest-1 (k = 1) is kept for comparison: the direction jumps from vertex to vertex as an arm
// slides over a round body.
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "kinema/math/vec3.h"

namespace kinema {

struct ClearanceFieldOptions {
  int neighbours = 16;    ///< k nearest vertices the plane is fitted to (≥ 1)
  double soft_m = 0.02;   ///< the weights' fall-off beyond the nearest vertex, metres
  double reach_m = 0.10;  ///< beyond clearance + reach from the nearest vertex: not near, metres
};

/// The push that clears one point.
struct ClearancePush {
  Vec3 push{0, 0, 0};  ///< metres: move the point by this to stand `clearance` off the surface
  double depth = 0;    ///< metres behind the fitted plane (0 when in front or not near)
  bool near = false;   ///< a vertex lies within clearance + reach
};

/// The plane fitted under a point, from which its push follows for any clearance.
struct ClearancePlane {
  Vec3 normal{0, 0, 0};         ///< unit, outward (zero when not near)
  double signed_m = 0;          ///< s: metres in front of the plane (negative: behind it)
  double nearest_m = INFINITY;  ///< distance to the nearest vertex (INFINITY: none within reach)
};

/// A body surface indexed for k-nearest queries (a uniform grid). Build once per frame; queries
/// are const and safe from several threads.
class ClearanceField {
 public:
  ClearanceField() = default;
  /// Indexes points with unit outward normals (same length). `max_clearance_m` is the largest
  /// clearance queries will pass (it sizes the grid's cells). An empty surface pushes nothing.
  void build(std::span<const Vec3f> points, std::span<const Vec3f> normals,
             const ClearanceFieldOptions& options, double max_clearance_m);

  /// The push and depth of point p for a clearance in metres (≤ max_clearance_m).
  ClearancePush push(const Vec3& p, double clearance_m) const {
    return push_of(plane(p, clearance_m), clearance_m);
  }

  /// The plane under p, searched for a clearance up to clearance_m (≤ max_clearance_m): one
  /// search serves every clearance up to it (the elbow ends one bone and starts the next).
  ClearancePlane plane(const Vec3& p, double clearance_m) const;

  /// The push of a point with this plane under it, for a clearance ≤ the one it was searched for.
  ClearancePush push_of(const ClearancePlane& plane, double clearance_m) const;

  size_t size() const { return points_.size(); }
  const ClearanceFieldOptions& options() const { return options_; }

 private:
  ClearanceFieldOptions options_;
  std::vector<Vec3f> points_, normals_;  // sorted by cell
  std::vector<uint32_t> cell_start_;     // cells + 1 offsets into points_
  Vec3 origin_{0, 0, 0};
  double cell_m_ = 1;
  int nx_ = 0, ny_ = 0, nz_ = 0;
  // A coarse grid (cells of the largest near limit) marking where any point lies: a query with
  // no marked cell among its 27 neighbours is not near, without a ring search.
  std::vector<uint8_t> coarse_;
  std::vector<uint32_t> cell_of_, fill_;  // build's scratch, kept to reuse its memory
  double coarse_m_ = 1;
  int cnx_ = 0, cny_ = 0, cnz_ = 0;
};

}  // namespace kinema
