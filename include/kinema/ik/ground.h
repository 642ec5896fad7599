// kinema/ik/ground.h — ground queries for foot placement: a height field and a triangle mesh.
//
// Double precision, metres, right-handed, +Y up. Construction validates its input and throws
// kinema::Error with the reason; queries never throw, never allocate and never return NaN (a
// non-finite query simply misses).
#pragma once

#include <cstddef>
#include <vector>

#include "kinema/math/vec3.h"

namespace kinema {

/// A ray hit on the ground.
struct GroundHit {
  Vec3 point;            ///< hit point, metres
  Vec3 normal{0, 1, 0};  ///< unit surface normal at the hit, facing the ray's origin side
  double distance = 0;   ///< distance from the ray origin to the hit along the (unit) ray
};

/// Common interface of the grounds, so that foot placement takes either.
class Ground {
 public:
  virtual ~Ground() = default;
  /// Casts a vertical ray from `origin` straight down (−Y) for at most `max_distance` metres.
  /// Returns true and fills `hit` for the first surface met; false (hit untouched) on a miss, for
  /// a non-finite origin or a negative/NaN max_distance.
  virtual bool ray_down(const Vec3& origin, double max_distance, GroundHit& hit) const noexcept = 0;
};

/// Regular grid of heights. Sample (ix, iz) lies at (origin_x + ix·cell_size, h, origin_z +
/// iz·cell_size) with h = heights[iz·width + ix]; the field covers
/// [origin_x, origin_x + (width−1)·cell_size] × [origin_z, origin_z + (depth−1)·cell_size] and
/// is bilinear inside each cell. Nothing is there outside that rectangle.
class HeightField final : public Ground {
 public:
  /// Throws kinema::Error when cell_size is not finite and > 0, width or depth < 2,
  /// heights.size() != width·depth, or an origin or height is not finite.
  HeightField(double origin_x, double origin_z, double cell_size, int width, int depth,
              std::vector<double> heights);

  /// Bilinear height at (x, z); false (h untouched) outside the field or for non-finite x/z.
  bool height(double x, double z, double& h) const noexcept;
  /// Unit normal of the bilinear surface at (x, z): normalize(−∂h/∂x, 1, −∂h/∂z) (always +Y
  /// side). On a cell edge the cell with the larger index is used. False outside the field.
  bool normal(double x, double z, Vec3& n) const noexcept;
  /// Hit at (origin.x, height, origin.z) when the height is at or below origin.y and within
  /// max_distance of it; the normal is normal(x, z).
  bool ray_down(const Vec3& origin, double max_distance, GroundHit& hit) const noexcept override;

  double origin_x() const noexcept { return origin_x_; }
  double origin_z() const noexcept { return origin_z_; }
  double cell_size() const noexcept { return cell_; }
  int width() const noexcept { return width_; }
  int depth() const noexcept { return depth_; }

 private:
  bool cell_of(double x, double z, int& ix, int& iz, double& fx, double& fz) const noexcept;
  // The four heights of the cell holding (x, z) and the position inside it, in [0, 1].
  bool corners(double x, double z, double& h00, double& h10, double& h01, double& h11, double& fx,
               double& fz) const noexcept;
  double origin_x_, origin_z_, cell_;
  int width_, depth_;
  std::vector<double> heights_;
};

/// Triangle soup with a bounding-volume hierarchy (AABB tree built once by median split along
/// the longest axis of the triangle centroids, at most 4 triangles a leaf) for ray casts.
class TriangleMeshGround final : public Ground {
 public:
  /// `vertices` are positions in metres; `indices` hold three vertex indices per triangle
  /// (either winding). Throws kinema::Error for: no triangles, indices.size() not a multiple of
  /// 3, an index out of range, a non-finite vertex, or a degenerate (zero-area) triangle.
  TriangleMeshGround(std::vector<Vec3> vertices, std::vector<int> indices);

  /// Closest hit along the ray origin + t·direction with direction normalised first and t in
  /// metres, 0 ≤ t ≤ max_distance (Möller–Trumbore, double precision). The
  /// normal is the triangle's unit face normal turned to face the ray (dot(normal, dir) ≤ 0).
  /// False for a miss, a zero or non-finite direction, a non-finite origin, or max_distance < 0.
  bool raycast(const Vec3& origin, const Vec3& direction, double max_distance,
               GroundHit& hit) const noexcept;
  /// raycast with direction −Y.
  bool ray_down(const Vec3& origin, double max_distance, GroundHit& hit) const noexcept override;
  /// The same answer as raycast by testing every triangle (no BVH): a reference for tests.
  bool raycast_brute_force(const Vec3& origin, const Vec3& direction, double max_distance,
                           GroundHit& hit) const noexcept;

  std::size_t triangle_count() const noexcept { return indices_.size() / 3; }
  std::size_t node_count() const noexcept { return nodes_.size(); }

 private:
  struct Node {
    Vec3 lo, hi;    // bounds
    int first = 0;  // leaf: first entry in order_; inner: index of the left child
    int count = 0;  // leaf: triangle count (> 0); inner: 0 (right child = left + 1)
  };
  void build(int node, int begin, int end, const std::vector<Vec3>& centroids);
  bool hit_triangle(int tri, const Vec3& o, const Vec3& d, double t_max, double& t) const noexcept;
  void fill_hit(int tri, const Vec3& o, const Vec3& d, double t, GroundHit& hit) const noexcept;

  std::vector<Vec3> vertices_;
  std::vector<int> indices_;
  std::vector<int> order_;  // triangle indices in leaf order
  std::vector<Node> nodes_;
};

}  // namespace kinema
