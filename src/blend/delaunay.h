// delaunay.h — the Delaunay triangulation of a 2D blend space's samples: a sweep triangulation
// made Delaunay by Lawson edge flips, with cocircular ties broken so that the result does not
// depend on the order of the samples. Private to the blend module.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

namespace kinema::blend_detail {

// Twice the signed area of (a, b, c): > 0 when counter-clockwise. One formula everywhere, so the
// query's edge functions reproduce a triangle's own area bit for bit at its vertices.
inline double orient(double ax, double ay, double bx, double by, double cx, double cy) {
  return (bx - ax) * (cy - ay) - (by - ay) * (cx - ax);
}

// A triangulation of points given by index: its triangles (counter-clockwise) and the vertices of
// its convex hull in counter-clockwise order (points on a hull edge may be among them).
struct Triangulation {
  std::vector<std::array<std::uint32_t, 3>> tris;
  std::vector<std::uint32_t> hull;
};

// The Delaunay triangulation of the points (x[i], y[i]); `order` lists their indices in
// lexicographic (x, then y) order, without duplicate points. Throws kinema::Error when the points
// are (nearly) collinear.
Triangulation delaunay_triangulation(const std::vector<double>& x, const std::vector<double>& y,
                                     std::vector<std::uint32_t> order);

}  // namespace kinema::blend_detail
