// support_polygon.h — the support polygon of the full-body solver's centre-of-mass goal: built
// once per solve (convex, counter-clockwise, shrunk by the goal's margin) and queried at every
// iteration for where the centre of mass stands against it. Private to the ik module.
#pragma once

#include <array>
#include <cstddef>
#include <span>

#include "kinema/ik/full_body.h"
#include "kinema/math/vec3.h"

namespace kinema::full_body_detail {

// A support polygon in the ground plane, counter-clockwise in (x, z), already shrunk by the
// margin.
struct Polygon {
  // Clipping by a half-plane adds at most one vertex: room for every step.
  std::array<double, 2 * kMaxSupportPolygonVertices + 2> x{}, z{};
  std::size_t count = 0;
};

// Counter-clockwise copy of `vertices` (model space, y ignored) shrunk by `margin`; false when
// the polygon is not strictly convex, has no area, or vanishes (an edge flips) when shrunk.
bool make_support_polygon(std::span<const Vec3> vertices, double margin, Polygon& out);

// Where (px, pz) stands against the (counter-clockwise, convex) polygon: `outside` is the
// distance to it (0 inside), `inside` the distance to the nearest edge when inside (0 outside),
// and (nx, nz) the unit direction pointing out of the polygon there (from the nearest point
// towards the point when outside, the nearest edge's outward normal when inside).
struct PolygonQuery {
  double outside = 0, inside = 0, nx = 1, nz = 0;
};

PolygonQuery query_polygon(const Polygon& poly, double px, double pz);

}  // namespace kinema::full_body_detail
