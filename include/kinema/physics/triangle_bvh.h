// kinema/physics/triangle_bvh.h — a bounding-volume hierarchy over a triangle mesh's triangles.
//
// Built once per mesh shape (its own frame, metres) and handed to the narrow phase
// (kinema/physics/narrow_phase.h), which then visits only the triangles whose boxes meet the
// convex shape's instead of scanning them all. Top-down: each node's triangles are split at the
// median of their centroids along the node's longest axis, down to leaves of at most 4 triangles.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kinema/math/vec3.h"
#include "kinema/physics/rigid_shape.h"

namespace kinema {

class TriangleBvh {
 public:
  TriangleBvh() = default;

  /// The hierarchy of `mesh`'s triangles; empty when `mesh` is not a triangle mesh, has no
  /// triangles, or a triangle indexes a point it does not have.
  explicit TriangleBvh(const RigidShape& mesh);

  bool empty() const { return nodes_.empty(); }
  /// How many triangles it was built over (to check it belongs to a mesh).
  std::size_t triangle_count() const { return order_.size(); }

  /// Replaces `out` with the indices of the triangles whose bounds meet the box lo–hi (mesh
  /// frame, touching included), in no particular order.
  void query(const Vec3& lo, const Vec3& hi, std::vector<std::uint32_t>& out) const;

 private:
  struct Node {
    Vec3 lo{0, 0, 0}, hi{0, 0, 0};
    std::uint32_t first = 0;  ///< leaf: first slot in order_; internal: its left child (right = +1)
    std::uint32_t count = 0;  ///< leaf: how many triangles; 0 for an internal node
  };
  std::vector<Node> nodes_;
  std::vector<std::uint32_t> order_;   ///< triangle indices, grouped by leaf
  std::vector<Vec3> tri_lo_, tri_hi_;  ///< each triangle's bounds, by slot in order_
};

}  // namespace kinema
