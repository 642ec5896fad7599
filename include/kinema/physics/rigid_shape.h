// kinema/physics/rigid_shape.h — the solid shapes rigid bodies are made of.
//
// A shape lives in its own frame (metres): spheres, boxes and convex hulls around the origin as
// given; capsules and cylinders centred on the origin with their axis along +y (as in Jolt, PhysX
// and Unity). A capsule's `half_height` is half the segment between its two cap centres (its
// full length is 2·half_height + 2·radius); a cylinder's is half its height. Triangles are
// counter-clockwise seen from outside (outward normals by the right-hand rule). A height field is
// a grid of `columns` × `rows` heights (y, m), row-major, sample (i, j) at
// x = i·spacing_x, z = j·spacing_z: its solid is everything below the surface.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kinema/math/vec3.h"

namespace kinema {

enum class ShapeKind { Sphere, Box, Capsule, Cylinder, ConvexHull, TriangleMesh, HeightField };

/// "sphere", "box", "capsule", "cylinder", "convex_hull", "triangle_mesh", "height_field".
const char* shape_kind_name(ShapeKind kind);

using Triangle = std::array<std::uint32_t, 3>;

struct RigidShape {
  ShapeKind kind = ShapeKind::Sphere;
  double radius = 0;           ///< sphere, capsule, cylinder (m)
  double half_height = 0;      ///< capsule: half its inner segment; cylinder: half its height (m)
  Vec3 half_extents{0, 0, 0};  ///< box (m)
  std::vector<Vec3> points;    ///< convex hull and mesh vertices (m)
  std::vector<Triangle> triangles;      ///< convex hull faces and mesh triangles (outward, CCW)
  std::vector<double> heights;          ///< height field, row-major (columns × rows) (m)
  int columns = 0, rows = 0;            ///< height field samples along x and z
  double spacing_x = 1, spacing_z = 1;  ///< height field sample spacing (m)
};

RigidShape sphere_shape(double radius);
RigidShape box_shape(const Vec3& half_extents);
RigidShape capsule_shape(double radius, double half_height);
RigidShape cylinder_shape(double radius, double half_height);

/// The convex hull of `points` (at least 4 not all in one plane), its faces triangulated and
/// outward. Points inside the hull are dropped. Throws kinema::Error (place "convex hull") when
/// the points are fewer than 4, not finite, or flat (all within 1e-9 of one plane, relative to
/// their extent).
RigidShape convex_hull_shape(std::span<const Vec3> points);

/// A triangle mesh as given (checked: finite points, indices in range, no degenerate triangle).
/// It need not be closed to collide; it must be closed to have mass
/// (kinema/physics/mass_properties.h).
RigidShape triangle_mesh_shape(std::vector<Vec3> points, std::vector<Triangle> triangles);

/// A height field; `heights` has columns × rows finite values, columns and rows ≥ 2.
RigidShape height_field_shape(std::vector<double> heights, int columns, int rows, double spacing_x,
                              double spacing_z);

/// Throws kinema::Error naming `place` and the fault for a shape whose sizes are not positive and
/// finite, or whose points, triangles or heights are out of order (as the builders above check).
void validate_shape(const RigidShape& shape, const std::string& place);

/// Whether every edge of the triangles is shared by exactly two triangles that run it in opposite
/// directions (a closed, consistently wound surface: the condition for a volume and a mass).
bool is_closed_surface(std::span<const Triangle> triangles);

/// The point of `shape` farthest along `direction` (shape frame; any non-zero direction). For a
/// triangle mesh, the farthest vertex; not defined for height fields (returns the origin).
Vec3 support_point(const RigidShape& shape, const Vec3& direction);

/// The shape's bounds in its own frame: min and max corners (m).
void shape_bounds(const RigidShape& shape, Vec3& min_corner, Vec3& max_corner);

}  // namespace kinema
