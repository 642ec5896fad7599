// The full-body solver's support polygon: shrinking it by the margin (a Sutherland–Hodgman
// clip by each edge's moved half-plane) and locating a point against it. See
// support_polygon.h.
#include "support_polygon.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace kinema::full_body_detail {
namespace {

double cross2(double ax, double az, double bx, double bz) { return ax * bz - az * bx; }

}  // namespace

bool make_support_polygon(std::span<const Vec3> vertices, double margin, Polygon& out) {
  const std::size_t n = vertices.size();
  if (n < 3 || n > kMaxSupportPolygonVertices || !std::isfinite(margin) || margin < 0) return false;
  for (const Vec3& v : vertices)
    if (!is_finite(v)) return false;
  double area2 = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const Vec3& a = vertices[k];
    const Vec3& b = vertices[(k + 1) % n];
    area2 += cross2(a.x, a.z, b.x, b.z);
  }
  if (!(std::abs(area2) > 1e-12)) return false;
  Polygon ccw;
  ccw.count = n;
  for (std::size_t k = 0; k < n; ++k) {
    const Vec3& v = vertices[area2 > 0 ? k : n - 1 - k];
    ccw.x[k] = v.x;
    ccw.z[k] = v.z;
  }
  // Unit edge directions and strict convexity (every turn to the left).
  std::array<double, kMaxSupportPolygonVertices> dx{}, dz{};
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t k1 = (k + 1) % n;
    const double ex = ccw.x[k1] - ccw.x[k], ez = ccw.z[k1] - ccw.z[k];
    const double len = std::hypot(ex, ez);
    if (!(len > 1e-12)) return false;
    dx[k] = ex / len;
    dz[k] = ez / len;
  }
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t k1 = (k + 1) % n;
    if (!(cross2(dx[k], dz[k], dx[k1], dz[k1]) > 1e-12)) return false;
  }
  // The shrunk polygon is the intersection of the edges' half-planes moved inwards by the
  // margin: clip the polygon by each in turn (Sutherland–Hodgman), so short edges that the
  // margin swallows simply disappear.
  Polygon buffer;
  Polygon* cur = &out;
  Polygon* next = &buffer;
  *cur = ccw;
  for (std::size_t k = 0; k < n && cur->count > 0; ++k) {
    const double nx = -dz[k], nz = dx[k];  // inward normal
    const double offset = nx * ccw.x[k] + nz * ccw.z[k] + margin;
    next->count = 0;
    for (std::size_t i = 0; i < cur->count; ++i) {
      const std::size_t i1 = (i + 1) % cur->count;
      const double si = nx * cur->x[i] + nz * cur->z[i] - offset;
      const double si1 = nx * cur->x[i1] + nz * cur->z[i1] - offset;
      auto emit = [&](double x, double z) {
        if (next->count > 0 &&
            std::hypot(x - next->x[next->count - 1], z - next->z[next->count - 1]) <= 1e-12)
          return;  // a repeated vertex would make a zero-length edge
        next->x[next->count] = x;
        next->z[next->count] = z;
        ++next->count;
      };
      if (si >= 0) emit(cur->x[i], cur->z[i]);
      if ((si >= 0) != (si1 >= 0)) {
        const double t = si / (si - si1);
        emit(cur->x[i] + (cur->x[i1] - cur->x[i]) * t, cur->z[i] + (cur->z[i1] - cur->z[i]) * t);
      }
    }
    while (next->count > 1 && std::hypot(next->x[0] - next->x[next->count - 1],
                                         next->z[0] - next->z[next->count - 1]) <= 1e-12)
      --next->count;
    std::swap(cur, next);
  }
  if (cur != &out) out = *cur;
  if (out.count < 3) return false;
  double shrunk_area2 = 0;
  for (std::size_t k = 0; k < out.count; ++k) {
    const std::size_t k1 = (k + 1) % out.count;
    shrunk_area2 += cross2(out.x[k], out.z[k], out.x[k1], out.z[k1]);
  }
  if (!(shrunk_area2 > 1e-12)) return false;  // nothing (or only a sliver) left
  return true;
}

PolygonQuery query_polygon(const Polygon& poly, double px, double pz) {
  PolygonQuery q;
  double nearest_inside = std::numeric_limits<double>::infinity();
  bool is_inside = true;
  for (std::size_t k = 0; k < poly.count; ++k) {
    const std::size_t k1 = (k + 1) % poly.count;
    const double ex = poly.x[k1] - poly.x[k], ez = poly.z[k1] - poly.z[k];
    const double len = std::hypot(ex, ez);
    const double side = cross2(ex, ez, px - poly.x[k], pz - poly.z[k]) / len;  // > 0: inside
    if (side < 0) is_inside = false;
    if (side < nearest_inside) {
      nearest_inside = side;
      q.nx = ez / len;  // right of the edge: outwards for a counter-clockwise polygon
      q.nz = -ex / len;
    }
  }
  if (is_inside) {
    q.inside = nearest_inside;
    return q;
  }
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k < poly.count; ++k) {
    const std::size_t k1 = (k + 1) % poly.count;
    const double ex = poly.x[k1] - poly.x[k], ez = poly.z[k1] - poly.z[k];
    const double t =
        std::clamp(((px - poly.x[k]) * ex + (pz - poly.z[k]) * ez) / (ex * ex + ez * ez), 0.0, 1.0);
    const double cx = poly.x[k] + ex * t, cz = poly.z[k] + ez * t;
    const double d = std::hypot(px - cx, pz - cz);
    if (d < best) {
      best = d;
      if (d > 0) {
        q.nx = (px - cx) / d;
        q.nz = (pz - cz) / d;
      }
    }
  }
  q.outside = best;
  return q;
}

}  // namespace kinema::full_body_detail
