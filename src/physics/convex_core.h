// Module-private: convex shapes as GJK and EPA see them, and the face clipping that turns one
// contact into a manifold. Used by narrow_phase.cpp; not part of the public API.
#pragma once

#include <array>

#include "kinema/physics/narrow_phase.h"

namespace kinema::detail {

/// A convex shape in the world: a core (point, segment, box, cylinder, hull, triangle) grown by
/// `radius` (sphere = point + radius, capsule = segment + radius; 0 for the others).
struct ConvexCore {
  enum class Kind { Point, Segment, Box, Cylinder, Hull, Triangle };
  Kind kind = Kind::Point;
  Vec3 centre{0, 0, 0};        ///< a point inside (Box, Cylinder, Hull: the shape's origin)
  std::array<Vec3, 3> axes{};  ///< Box, Cylinder: the shape's axes in the world
  std::array<Vec3, 3> v{};     ///< Point: v[0]; Segment: v[0], v[1]; Triangle: v[0..2] (world)
  Vec3 half_extents{0, 0, 0};  ///< Box
  double half_height = 0;      ///< Cylinder
  double cylinder_radius = 0;  ///< Cylinder
  const RigidShape* hull = nullptr;  ///< Hull (points in its own frame)
  Pose pose;                         ///< Hull
  double radius = 0;                 ///< rounding

  /// The core's farthest point along world direction `d` (any non-zero d).
  Vec3 support(const Vec3& d) const;
  /// The grown shape's farthest point along `d`.
  Vec3 support_full(const Vec3& d) const { return support(d) + normalize(d) * radius; }
  /// Moves the whole shape by `offset` (m).
  void translate(const Vec3& offset);
};

/// The core of a convex RigidShape at `pose`; false for a mesh, a height field, or a hull with
/// no points.
bool make_core(const RigidShape& shape, const Pose& pose, ConvexCore& out);
ConvexCore point_core(const Vec3& centre, double radius);
ConvexCore segment_core(const Vec3& p0, const Vec3& p1, double radius);
ConvexCore box_core(const Pose& pose, const Vec3& half_extents);
ConvexCore triangle_core(const Vec3& a, const Vec3& b, const Vec3& c);

struct SupportVertex {
  Vec3 w{0, 0, 0};  ///< a − b: a point of the Minkowski difference A − B
  Vec3 a{0, 0, 0};  ///< on A
  Vec3 b{0, 0, 0};  ///< on B
};

struct GjkState {
  double distance = 0;  ///< between what was tested (cores or grown shapes)
  Vec3 point_a{0, 0, 0}, point_b{0, 0, 0};
  bool overlap = false;
  int iterations = 0;
  std::array<SupportVertex, 4> simplex{};
  int simplex_size = 0;
};

/// GJK between the cores (`grown` false) or the grown shapes (`grown` true).
void gjk(const ConvexCore& a, const ConvexCore& b, bool grown, GjkState& out);

/// EPA on the grown shapes from GJK's final simplex (`start`, which found them overlapping).
/// `normal` from A toward B, `depth` ≥ 0, and the deepest points of each. False when the
/// simplex cannot be grown into a tetrahedron (a flat Minkowski difference) or it fails.
bool epa(const ConvexCore& a, const ConvexCore& b, const GjkState& start, Vec3& normal,
         double& depth, Vec3& point_a, Vec3& point_b);

/// GJK on the cores, EPA on the grown shapes when the cores overlap: the normal (A → B), depth
/// and each shape's deepest point. False when the shapes are apart.
bool convex_penetration(const ConvexCore& a, const ConvexCore& b, Vec3& normal, double& depth,
                        Vec3& on_a, Vec3& on_b);

/// The whole convex pipeline: convex_penetration, then face clipping.
bool convex_contact(const ConvexCore& a, const ConvexCore& b, ContactManifold& out);

inline constexpr int kMaxFeature = 32;
using Feature = std::array<Vec3, kMaxFeature>;

/// The grown shape's supporting feature along unit direction `d`: a face polygon (≥ 3 points, in
/// ring order), an edge (2 points) or a vertex (1 point), and the feature's outward normal.
int support_feature(const ConvexCore& c, const Vec3& d, Feature& points, Vec3& normal);

/// Clips `incident` (n points, ring order) by the side planes of the reference face `reference`
/// (m ≥ 3 points, convex, in its plane, outward normal `ref_normal`) and writes the clipped points
/// that lie below the reference plane into `out` as contacts: depth = how far the point must move
/// along unit `lift` (dot(lift, ref_normal) > 0) to reach the plane, position midway along it; at
/// most 4 (reduced keeping the deepest and the widest spread). Returns the count.
int clip_features(const Feature& reference, int m, const Vec3& ref_normal, const Vec3& lift,
                  const Feature& incident, int n, std::array<ContactPoint, 4>& out);

/// Keeps at most 4 of `count` points (the deepest, the farthest from it, then the two that
/// span the largest area about the normal `normal`), in place; returns the new count.
int reduce_contacts(ContactPoint* points, int count, const Vec3& normal);

/// Closest points between segments p0–p1 and q0–q1: parameters s, t ∈ [0, 1].
void closest_segment_segment(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1,
                             double& s, double& t);

}  // namespace kinema::detail
