// kinema/fluid/mesh_sdf.h — the signed distance to a closed triangle mesh, for fluid obstacles.
//
// A MeshSdf takes a triangle mesh (vertices in metres, triangles as index triples), checks that it
// bounds a volume — every undirected edge is shared by exactly two triangles, consistently oriented
// — and answers distance(p): the exact Euclidean distance from p to the nearest point of the
// surface, negative inside, positive outside, zero on it (metres).
//
// The sign comes from the angle-weighted pseudo-normal of Bærentzen & Aanæs, "Signed Distance
// Computation Using the Angle Weighted Pseudonormal" (IEEE TVCG 11(3), 2005): the nearest point
// lies on a face, an edge or a vertex of the mesh, and p is outside when (p − nearest) points along
// that feature's pseudo-normal — the face's normal; for an edge the sum of its two faces' normals;
// for a vertex the sum of its faces' normals weighted by the faces' angles at it. That test is
// exact for a closed, manifold, consistently oriented mesh, which is why open ones are refused.
// Either winding works: a mesh wound clockwise seen from outside (negative signed volume) is turned
// around at construction, so "inside" is always the bounded volume.
//
// Queries walk a bounding-volume hierarchy over the triangles (axis-aligned boxes, split at the
// median of the longest axis, ≤ 4 triangles a leaf), nearest box first, pruning boxes farther than
// the best distance found: O(log n) per query for points near the mesh. distance() is const and
// safe to call from many threads at once.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "kinema/math/vec3.h"

namespace kinema {

class MeshSdf {
 public:
  /// `vertices` in metres; `triangles` index `vertices` (0-based). `name` (a file name, say) is the
  /// file of the errors. Throws kinema::Error(name, "mesh", reason) when the mesh has no triangles,
  /// a non-finite vertex, an index out of range, a degenerate (zero-area) triangle, an open
  /// (boundary) edge — the reason gives the number of open edges and the first one's vertex
  /// indices, e.g. "is not closed: 3 open edges (the first between vertices 2 and 5)" —, an edge
  /// shared by more than two triangles (non-manifold), or two triangles that run through a shared
  /// edge in the same direction (inconsistent winding). Each reason reads on from the mesh's name:
  /// "rock.obj is not closed: …", "rock.obj has vertex 5 not finite".
  MeshSdf(std::vector<Vec3> vertices, std::vector<std::array<int, 3>> triangles,
          std::string name = "mesh");

  /// Signed distance from p (metres) to the surface: negative inside, positive outside, metres.
  double distance(const Vec3& p) const;

  /// The axis-aligned bounding box of the vertices that the triangles use, metres.
  const Vec3& lower() const { return lo_; }
  const Vec3& upper() const { return hi_; }
  /// The enclosed volume, m³ (> 0).
  double volume() const { return volume_; }

  const std::vector<Vec3>& vertices() const { return vertices_; }
  /// As given, or each turned around when the mesh was wound inside out.
  const std::vector<std::array<int, 3>>& triangles() const { return triangles_; }

 private:
  struct Node {
    Vec3 lo, hi;
    int first = 0, count = 0;  ///< leaf: triangles order_[first, first + count)
    int left = -1, right = -1;
  };
  int build(int first, int count);

  std::vector<Vec3> vertices_;
  std::vector<std::array<int, 3>> triangles_;
  std::vector<Vec3> face_normal_;                 ///< unit, per triangle
  std::vector<std::array<Vec3, 3>> edge_normal_;  ///< per triangle, edge (i, i+1 mod 3)
  std::vector<Vec3> vertex_normal_;               ///< angle-weighted, per vertex
  std::vector<int> order_;                        ///< triangle indices in BVH leaf order
  std::vector<Node> nodes_;                       ///< nodes_[0] is the root
  Vec3 lo_, hi_;
  double volume_ = 0;
};

}  // namespace kinema
