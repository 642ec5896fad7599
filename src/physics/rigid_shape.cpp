// Rigid shapes (kinema/physics/rigid_shape.h): builders, checks, support points, bounds, and the
// convex hull of a point set.
#include "kinema/physics/rigid_shape.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include "kinema/core/error.h"

namespace kinema {

const char* shape_kind_name(ShapeKind kind) {
  switch (kind) {
    case ShapeKind::Sphere:
      return "sphere";
    case ShapeKind::Box:
      return "box";
    case ShapeKind::Capsule:
      return "capsule";
    case ShapeKind::Cylinder:
      return "cylinder";
    case ShapeKind::ConvexHull:
      return "convex_hull";
    case ShapeKind::TriangleMesh:
      return "triangle_mesh";
    case ShapeKind::HeightField:
      return "height_field";
  }
  return "unknown";
}

namespace {

bool positive_finite(double v) { return v > 0 && std::isfinite(v); }

void check_points_and_triangles(const RigidShape& s, const std::string& place) {
  for (std::size_t i = 0; i < s.points.size(); ++i)
    if (!is_finite(s.points[i]))
      throw Error({}, place, "point " + std::to_string(i) + " is not finite");
  for (std::size_t t = 0; t < s.triangles.size(); ++t) {
    const Triangle& tri = s.triangles[t];
    for (std::uint32_t v : tri)
      if (v >= s.points.size())
        throw Error({}, place,
                    "triangle " + std::to_string(t) + " names vertex " + std::to_string(v) +
                        " of " + std::to_string(s.points.size()));
    const Vec3 n = cross(s.points[tri[1]] - s.points[tri[0]], s.points[tri[2]] - s.points[tri[0]]);
    if (!(length(n) > 0)) throw Error({}, place, "triangle " + std::to_string(t) + " has no area");
  }
}

}  // namespace

void validate_shape(const RigidShape& s, const std::string& place) {
  const std::string what = shape_kind_name(s.kind);
  auto need_positive = [&](double v, const char* name) {
    if (!positive_finite(v))
      throw Error({}, place,
                  what + " " + name + " must be > 0 and finite (is " + std::to_string(v) + ")");
  };
  switch (s.kind) {
    case ShapeKind::Sphere:
      need_positive(s.radius, "radius");
      break;
    case ShapeKind::Box:
      need_positive(s.half_extents.x, "half extent x");
      need_positive(s.half_extents.y, "half extent y");
      need_positive(s.half_extents.z, "half extent z");
      break;
    case ShapeKind::Capsule:
      need_positive(s.radius, "radius");
      if (!(s.half_height >= 0) || !std::isfinite(s.half_height))
        throw Error({}, place, what + " half height must be ≥ 0 and finite");
      break;
    case ShapeKind::Cylinder:
      need_positive(s.radius, "radius");
      need_positive(s.half_height, "half height");
      break;
    case ShapeKind::ConvexHull:
      if (s.points.size() < 4) throw Error({}, place, "convex hull has fewer than 4 points");
      check_points_and_triangles(s, place);
      break;
    case ShapeKind::TriangleMesh:
      if (s.triangles.empty()) throw Error({}, place, "triangle mesh has no triangles");
      check_points_and_triangles(s, place);
      break;
    case ShapeKind::HeightField:
      if (s.columns < 2 || s.rows < 2)
        throw Error({}, place, "height field needs at least 2 × 2 samples");
      if (s.heights.size() != std::size_t(s.columns) * std::size_t(s.rows))
        throw Error({}, place,
                    "height field has " + std::to_string(s.heights.size()) + " heights, expected " +
                        std::to_string(std::size_t(s.columns) * std::size_t(s.rows)));
      need_positive(s.spacing_x, "spacing x");
      need_positive(s.spacing_z, "spacing z");
      for (std::size_t i = 0; i < s.heights.size(); ++i)
        if (!std::isfinite(s.heights[i]))
          throw Error({}, place, "height " + std::to_string(i) + " is not finite");
      break;
  }
}

RigidShape sphere_shape(double radius) {
  RigidShape s;
  s.kind = ShapeKind::Sphere;
  s.radius = radius;
  validate_shape(s, "sphere");
  return s;
}

RigidShape box_shape(const Vec3& half_extents) {
  RigidShape s;
  s.kind = ShapeKind::Box;
  s.half_extents = half_extents;
  validate_shape(s, "box");
  return s;
}

RigidShape capsule_shape(double radius, double half_height) {
  RigidShape s;
  s.kind = ShapeKind::Capsule;
  s.radius = radius;
  s.half_height = half_height;
  validate_shape(s, "capsule");
  return s;
}

RigidShape cylinder_shape(double radius, double half_height) {
  RigidShape s;
  s.kind = ShapeKind::Cylinder;
  s.radius = radius;
  s.half_height = half_height;
  validate_shape(s, "cylinder");
  return s;
}

RigidShape triangle_mesh_shape(std::vector<Vec3> points, std::vector<Triangle> triangles) {
  RigidShape s;
  s.kind = ShapeKind::TriangleMesh;
  s.points = std::move(points);
  s.triangles = std::move(triangles);
  validate_shape(s, "triangle mesh");
  return s;
}

RigidShape height_field_shape(std::vector<double> heights, int columns, int rows, double spacing_x,
                              double spacing_z) {
  RigidShape s;
  s.kind = ShapeKind::HeightField;
  s.heights = std::move(heights);
  s.columns = columns;
  s.rows = rows;
  s.spacing_x = spacing_x;
  s.spacing_z = spacing_z;
  validate_shape(s, "height field");
  return s;
}

bool is_closed_surface(std::span<const Triangle> triangles) {
  if (triangles.empty()) return false;
  // Every directed edge exactly once, and its reverse exactly once.
  std::map<std::pair<std::uint32_t, std::uint32_t>, int> directed;
  for (const Triangle& t : triangles) {
    if (t[0] == t[1] || t[1] == t[2] || t[2] == t[0]) return false;
    for (int e = 0; e < 3; ++e)
      if (++directed[{t[e], t[(e + 1) % 3]}] > 1) return false;
  }
  for (const auto& [edge, count] : directed)
    if (!directed.contains({edge.second, edge.first})) return false;
  return true;
}

Vec3 support_point(const RigidShape& s, const Vec3& d) {
  switch (s.kind) {
    case ShapeKind::Sphere:
      return normalize(d) * s.radius;
    case ShapeKind::Box:
      return {d.x >= 0 ? s.half_extents.x : -s.half_extents.x,
              d.y >= 0 ? s.half_extents.y : -s.half_extents.y,
              d.z >= 0 ? s.half_extents.z : -s.half_extents.z};
    case ShapeKind::Capsule:
      return Vec3{0, d.y >= 0 ? s.half_height : -s.half_height, 0} + normalize(d) * s.radius;
    case ShapeKind::Cylinder: {
      const double radial = std::sqrt(d.x * d.x + d.z * d.z);
      const double y = d.y >= 0 ? s.half_height : -s.half_height;
      if (!(radial > 0))
        return {0, y, 0};  // straight up or down: the cap's centre is as far as any
      return {d.x / radial * s.radius, y, d.z / radial * s.radius};
    }
    case ShapeKind::ConvexHull:
    case ShapeKind::TriangleMesh: {
      Vec3 best = s.points.empty() ? Vec3{0, 0, 0} : s.points[0];
      double best_dot = -std::numeric_limits<double>::infinity();
      for (const Vec3& p : s.points) {
        const double v = dot(p, d);
        if (v > best_dot) {
          best_dot = v;
          best = p;
        }
      }
      return best;
    }
    case ShapeKind::HeightField:
      return {0, 0, 0};
  }
  return {0, 0, 0};
}

void shape_bounds(const RigidShape& s, Vec3& lo, Vec3& hi) {
  switch (s.kind) {
    case ShapeKind::Sphere:
      hi = Vec3{s.radius, s.radius, s.radius};
      break;
    case ShapeKind::Box:
      hi = s.half_extents;
      break;
    case ShapeKind::Capsule:
      hi = Vec3{s.radius, s.half_height + s.radius, s.radius};
      break;
    case ShapeKind::Cylinder:
      hi = Vec3{s.radius, s.half_height, s.radius};
      break;
    case ShapeKind::ConvexHull:
    case ShapeKind::TriangleMesh: {
      const double inf = std::numeric_limits<double>::infinity();
      lo = {inf, inf, inf};
      hi = {-inf, -inf, -inf};
      for (const Vec3& p : s.points) {
        lo = {std::min(lo.x, p.x), std::min(lo.y, p.y), std::min(lo.z, p.z)};
        hi = {std::max(hi.x, p.x), std::max(hi.y, p.y), std::max(hi.z, p.z)};
      }
      if (s.points.empty()) lo = hi = {0, 0, 0};
      return;
    }
    case ShapeKind::HeightField: {
      const auto [mn, mx] = std::minmax_element(s.heights.begin(), s.heights.end());
      lo = {0, s.heights.empty() ? 0 : *mn, 0};
      hi = {(s.columns - 1) * s.spacing_x, s.heights.empty() ? 0 : *mx, (s.rows - 1) * s.spacing_z};
      return;
    }
  }
  lo = -hi;
}

// The convex hull, built incrementally: a first tetrahedron from extreme points, then each point
// outside the current hull replaces the faces it sees by a fan from the horizon to itself.
// O(n · faces), plenty for the tens to hundreds of points of a collision hull.
RigidShape convex_hull_shape(std::span<const Vec3> input) {
  const std::string place = "convex hull";
  if (input.size() < 4)
    throw Error({}, place, "needs at least 4 points, got " + std::to_string(input.size()));
  for (std::size_t i = 0; i < input.size(); ++i)
    if (!is_finite(input[i]))
      throw Error({}, place, "point " + std::to_string(i) + " is not finite");

  // Extent sets the tolerance: a point closer than eps to a face's plane is on it.
  Vec3 lo = input[0], hi = input[0];
  for (const Vec3& p : input) {
    lo = {std::min(lo.x, p.x), std::min(lo.y, p.y), std::min(lo.z, p.z)};
    hi = {std::max(hi.x, p.x), std::max(hi.y, p.y), std::max(hi.z, p.z)};
  }
  const double extent = length(hi - lo);
  if (!(extent > 0)) throw Error({}, place, "all points are the same point");
  const double eps = 1e-9 * extent;

  // First tetrahedron: the two points farthest apart along x (or y, z), the point farthest from
  // their line, the point farthest from their plane.
  std::size_t i0 = 0, i1 = 0;
  double best = -1;
  for (int axis = 0; axis < 3; ++axis) {
    std::size_t mn = 0, mx = 0;
    for (std::size_t i = 0; i < input.size(); ++i) {
      if (input[i][axis] < input[mn][axis]) mn = i;
      if (input[i][axis] > input[mx][axis]) mx = i;
    }
    const double span = input[mx][axis] - input[mn][axis];
    if (span > best) {
      best = span;
      i0 = mn;
      i1 = mx;
    }
  }
  const Vec3 line = input[i1] - input[i0];
  std::size_t i2 = i0;
  best = -1;
  for (std::size_t i = 0; i < input.size(); ++i) {
    const double d = length(cross(input[i] - input[i0], line));
    if (d > best) {
      best = d;
      i2 = i;
    }
  }
  if (!(best / length(line) > eps)) throw Error({}, place, "all points lie on one line");
  Vec3 normal = normalize(cross(line, input[i2] - input[i0]));
  std::size_t i3 = i0;
  best = -1;
  for (std::size_t i = 0; i < input.size(); ++i) {
    const double d = std::abs(dot(input[i] - input[i0], normal));
    if (d > best) {
      best = d;
      i3 = i;
    }
  }
  if (!(best > eps)) throw Error({}, place, "all points lie in one plane");

  struct Face {
    std::uint32_t v[3];
    Vec3 n;
    double offset;  // dot(n, x) for x on the face
  };
  auto make_face = [&](std::size_t a, std::size_t b, std::size_t c) {
    Face f{{std::uint32_t(a), std::uint32_t(b), std::uint32_t(c)}, {}, 0};
    f.n = normalize(cross(input[b] - input[a], input[c] - input[a]));
    f.offset = dot(f.n, input[a]);
    return f;
  };
  std::vector<Face> faces;
  {
    // Orient the tetrahedron outward: i3 must be below face (i0, i1, i2).
    const bool flip = dot(input[i3] - input[i0], normal) > 0;
    const std::size_t a = i0, b = flip ? i2 : i1, c = flip ? i1 : i2;
    faces = {make_face(a, b, c), make_face(a, i3, b), make_face(b, i3, c), make_face(c, i3, a)};
  }

  std::vector<char> visible;
  std::map<std::pair<std::uint32_t, std::uint32_t>, bool> edge_seen;
  for (std::size_t p = 0; p < input.size(); ++p) {
    if (p == i0 || p == i1 || p == i2 || p == i3) continue;
    visible.assign(faces.size(), 0);
    bool any = false;
    for (std::size_t f = 0; f < faces.size(); ++f)
      if (dot(faces[f].n, input[p]) - faces[f].offset > eps) visible[f] = any = true;
    if (!any) continue;  // inside (or on) the hull
    // Horizon: directed edges of visible faces whose reverse is on a hidden face.
    edge_seen.clear();
    for (std::size_t f = 0; f < faces.size(); ++f)
      if (!visible[f])
        for (int e = 0; e < 3; ++e) edge_seen[{faces[f].v[e], faces[f].v[(e + 1) % 3]}] = true;
    std::vector<Face> next;
    next.reserve(faces.size() + 8);
    for (std::size_t f = 0; f < faces.size(); ++f)
      if (!visible[f]) next.push_back(faces[f]);
    for (std::size_t f = 0; f < faces.size(); ++f) {
      if (!visible[f]) continue;
      for (int e = 0; e < 3; ++e) {
        const std::uint32_t a = faces[f].v[e], b = faces[f].v[(e + 1) % 3];
        if (edge_seen.contains({b, a})) next.push_back(make_face(a, b, p));
      }
    }
    faces = std::move(next);
  }

  // Keep only the vertices the faces use, in input order.
  RigidShape s;
  s.kind = ShapeKind::ConvexHull;
  std::vector<std::int64_t> remap(input.size(), -1);
  for (const Face& f : faces)
    for (std::uint32_t v : f.v) remap[v] = 0;
  for (std::size_t i = 0; i < input.size(); ++i)
    if (remap[i] == 0) {
      remap[i] = std::int64_t(s.points.size());
      s.points.push_back(input[i]);
    }
  for (const Face& f : faces)
    s.triangles.push_back(
        {std::uint32_t(remap[f.v[0]]), std::uint32_t(remap[f.v[1]]), std::uint32_t(remap[f.v[2]])});
  return s;
}

}  // namespace kinema
