// kinema/ik/ground.cpp — height field and BVH triangle mesh ground queries.
#include "kinema/ik/ground.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "kinema/core/error.h"

namespace kinema {

namespace {

[[noreturn]] void fail(const std::string& place, const std::string& reason) {
  throw Error("", place, reason);
}

bool finite(double v) { return std::isfinite(v); }

}  // namespace

// ---------------------------------------------------------------------------------------------
// HeightField

HeightField::HeightField(double origin_x, double origin_z, double cell_size, int width, int depth,
                         std::vector<double> heights)
    : origin_x_(origin_x),
      origin_z_(origin_z),
      cell_(cell_size),
      width_(width),
      depth_(depth),
      heights_(std::move(heights)) {
  if (!finite(origin_x) || !finite(origin_z)) fail("origin", "height field origin is not finite");
  if (!finite(cell_size) || !(cell_size > 0))
    fail("cell_size", "height field cell size must be finite and > 0");
  if (width < 2 || depth < 2)
    fail("size", "height field needs at least 2×2 samples (got " + std::to_string(width) + "×" +
                     std::to_string(depth) + ")");
  if (heights_.size() != static_cast<std::size_t>(width) * static_cast<std::size_t>(depth))
    fail("heights", "height field has " + std::to_string(heights_.size()) +
                        " heights, expected width×depth = " +
                        std::to_string(static_cast<long long>(width) * depth));
  for (std::size_t i = 0; i < heights_.size(); ++i)
    if (!finite(heights_[i])) fail("heights[" + std::to_string(i) + "]", "height is not finite");
}

bool HeightField::cell_of(double x, double z, int& ix, int& iz, double& fx,
                          double& fz) const noexcept {
  if (!finite(x) || !finite(z)) return false;
  const double u = (x - origin_x_) / cell_, v = (z - origin_z_) / cell_;
  const double umax = width_ - 1, vmax = depth_ - 1;
  if (!(u >= 0 && u <= umax && v >= 0 && v <= vmax)) return false;
  ix = std::min(static_cast<int>(std::floor(u)), width_ - 2);
  iz = std::min(static_cast<int>(std::floor(v)), depth_ - 2);
  fx = u - ix;
  fz = v - iz;
  return true;
}

bool HeightField::corners(double x, double z, double& h00, double& h10, double& h01, double& h11,
                          double& fx, double& fz) const noexcept {
  int ix = 0, iz = 0;
  if (!cell_of(x, z, ix, iz, fx, fz)) return false;
  const std::size_t w = static_cast<std::size_t>(width_);
  const std::size_t i00 = static_cast<std::size_t>(iz) * w + static_cast<std::size_t>(ix);
  h00 = heights_[i00], h10 = heights_[i00 + 1], h01 = heights_[i00 + w],
  h11 = heights_[i00 + w + 1];
  return true;
}

bool HeightField::height(double x, double z, double& h) const noexcept {
  double h00, h10, h01, h11, fx, fz;
  if (!corners(x, z, h00, h10, h01, h11, fx, fz)) return false;
  h = (h00 * (1 - fx) + h10 * fx) * (1 - fz) + (h01 * (1 - fx) + h11 * fx) * fz;
  return true;
}

bool HeightField::normal(double x, double z, Vec3& n) const noexcept {
  double h00, h10, h01, h11, fx, fz;
  if (!corners(x, z, h00, h10, h01, h11, fx, fz)) return false;
  const double dhdx = ((h10 - h00) * (1 - fz) + (h11 - h01) * fz) / cell_;
  const double dhdz = ((h01 - h00) * (1 - fx) + (h11 - h10) * fx) / cell_;
  n = normalize(Vec3{-dhdx, 1, -dhdz}, Vec3::unit_y());
  return true;
}

bool HeightField::ray_down(const Vec3& origin, double max_distance, GroundHit& hit) const noexcept {
  if (!is_finite(origin) || !(max_distance >= 0)) return false;
  double h = 0;
  Vec3 n;
  if (!height(origin.x, origin.z, h) || !normal(origin.x, origin.z, n)) return false;
  const double dist = origin.y - h;
  if (!(dist >= 0 && dist <= max_distance)) return false;
  hit.point = {origin.x, h, origin.z};
  hit.normal = n;
  hit.distance = dist;
  return true;
}

// ---------------------------------------------------------------------------------------------
// TriangleMeshGround

TriangleMeshGround::TriangleMeshGround(std::vector<Vec3> vertices, std::vector<int> indices)
    : vertices_(std::move(vertices)), indices_(std::move(indices)) {
  if (indices_.empty()) fail("indices", "triangle mesh has no triangles");
  if (indices_.size() % 3 != 0)
    fail("indices", "index count " + std::to_string(indices_.size()) + " is not a multiple of 3");
  if (indices_.size() / 3 > static_cast<std::size_t>(std::numeric_limits<int>::max() / 4))
    fail("indices", "too many triangles");
  for (std::size_t i = 0; i < vertices_.size(); ++i)
    if (!is_finite(vertices_[i]))
      fail("vertices[" + std::to_string(i) + "]", "vertex is not finite");
  for (std::size_t i = 0; i < indices_.size(); ++i)
    if (indices_[i] < 0 || static_cast<std::size_t>(indices_[i]) >= vertices_.size())
      fail("indices[" + std::to_string(i) + "]",
           "vertex index " + std::to_string(indices_[i]) + " out of range (" +
               std::to_string(vertices_.size()) + " vertices)");
  const int n = static_cast<int>(indices_.size() / 3);
  std::vector<Vec3> centroids(static_cast<std::size_t>(n));
  for (int t = 0; t < n; ++t) {
    const Vec3& a = vertices_[static_cast<std::size_t>(indices_[3 * t])];
    const Vec3& b = vertices_[static_cast<std::size_t>(indices_[3 * t + 1])];
    const Vec3& c = vertices_[static_cast<std::size_t>(indices_[3 * t + 2])];
    const Vec3 cr = cross(b - a, c - a);
    const double scale = std::max({length_squared(b - a), length_squared(c - a), 1e-300});
    if (!(length(cr) > 1e-12 * scale))
      fail("triangles[" + std::to_string(t) + "]", "degenerate (zero-area) triangle");
    centroids[static_cast<std::size_t>(t)] = (a + b + c) * (1.0 / 3.0);
  }
  order_.resize(static_cast<std::size_t>(n));
  for (int t = 0; t < n; ++t) order_[static_cast<std::size_t>(t)] = t;
  nodes_.reserve(static_cast<std::size_t>(2 * n));
  nodes_.emplace_back();
  build(0, 0, n, centroids);
}

void TriangleMeshGround::build(int node, int begin, int end, const std::vector<Vec3>& centroids) {
  const double inf = std::numeric_limits<double>::infinity();
  Vec3 lo{inf, inf, inf}, hi{-inf, -inf, -inf}, clo = lo, chi = hi;
  for (int i = begin; i < end; ++i) {
    const int t = order_[static_cast<std::size_t>(i)];
    for (int k = 0; k < 3; ++k) {
      const Vec3& v = vertices_[static_cast<std::size_t>(indices_[3 * t + k])];
      for (int a = 0; a < 3; ++a) {
        lo[a] = std::min(lo[a], v[a]);
        hi[a] = std::max(hi[a], v[a]);
      }
    }
    const Vec3& c = centroids[static_cast<std::size_t>(t)];
    for (int a = 0; a < 3; ++a) {
      clo[a] = std::min(clo[a], c[a]);
      chi[a] = std::max(chi[a], c[a]);
    }
  }
  nodes_[static_cast<std::size_t>(node)].lo = lo;
  nodes_[static_cast<std::size_t>(node)].hi = hi;
  if (end - begin <= 4) {
    nodes_[static_cast<std::size_t>(node)].first = begin;
    nodes_[static_cast<std::size_t>(node)].count = end - begin;
    return;
  }
  int axis = 0;
  const Vec3 ext = chi - clo;
  if (ext.y > ext[axis]) axis = 1;
  if (ext.z > ext[axis]) axis = 2;
  const int mid = begin + (end - begin) / 2;
  std::nth_element(order_.begin() + begin, order_.begin() + mid, order_.begin() + end,
                   [&](int a, int b) {
                     return centroids[static_cast<std::size_t>(a)][axis] <
                            centroids[static_cast<std::size_t>(b)][axis];
                   });
  const int left = static_cast<int>(nodes_.size());
  nodes_.emplace_back();
  nodes_.emplace_back();
  nodes_[static_cast<std::size_t>(node)].first = left;
  nodes_[static_cast<std::size_t>(node)].count = 0;
  build(left, begin, mid, centroids);
  build(left + 1, mid, end, centroids);
}

bool TriangleMeshGround::hit_triangle(int tri, const Vec3& o, const Vec3& d, double t_max,
                                      double& t) const noexcept {
  const Vec3& a = vertices_[static_cast<std::size_t>(indices_[3 * tri])];
  const Vec3& b = vertices_[static_cast<std::size_t>(indices_[3 * tri + 1])];
  const Vec3& c = vertices_[static_cast<std::size_t>(indices_[3 * tri + 2])];
  const Vec3 e1 = b - a, e2 = c - a;
  const Vec3 p = cross(d, e2);
  const double det = dot(e1, p);
  if (det == 0 || !std::isfinite(det)) return false;
  const double inv = 1.0 / det;
  const Vec3 s = o - a;
  const double u = dot(s, p) * inv;
  if (!(u >= 0 && u <= 1)) return false;
  const Vec3 q = cross(s, e1);
  const double v = dot(d, q) * inv;
  if (!(v >= 0 && u + v <= 1)) return false;
  const double tt = dot(e2, q) * inv;
  if (!(tt >= 0 && tt <= t_max)) return false;
  t = tt;
  return true;
}

void TriangleMeshGround::fill_hit(int tri, const Vec3& o, const Vec3& d, double t,
                                  GroundHit& hit) const noexcept {
  const Vec3& a = vertices_[static_cast<std::size_t>(indices_[3 * tri])];
  const Vec3& b = vertices_[static_cast<std::size_t>(indices_[3 * tri + 1])];
  const Vec3& c = vertices_[static_cast<std::size_t>(indices_[3 * tri + 2])];
  const Vec3 cr = cross(b - a, c - a);
  Vec3 n = normalize(cr, Vec3::unit_y());
  if (dot(n, d) > 0) n = -n;
  hit.point = o + d * t;
  hit.normal = n;
  hit.distance = t;
  if (d.x == 0 && d.z == 0 && cr.y != 0) {
    // Vertical ray: the height from the plane equation, exact for flat triangles.
    const double y = a.y - (cr.x * (o.x - a.x) + cr.z * (o.z - a.z)) / cr.y;
    if (std::isfinite(y)) {
      hit.point = {o.x, y, o.z};
      hit.distance = std::abs(o.y - y);
    }
  }
}

bool TriangleMeshGround::raycast_brute_force(const Vec3& origin, const Vec3& direction,
                                             double max_distance, GroundHit& hit) const noexcept {
  if (!is_finite(origin) || !is_finite(direction) || !(max_distance >= 0)) return false;
  const double len = length(direction);
  if (!(len > 0) || !std::isfinite(len)) return false;
  const Vec3 d = direction / len;
  double best = max_distance;
  int best_tri = -1;
  const int n = static_cast<int>(triangle_count());
  for (int tri = 0; tri < n; ++tri) {
    double t = 0;
    if (hit_triangle(tri, origin, d, best, t) && (best_tri < 0 || t < best)) {
      best = t;
      best_tri = tri;
    }
  }
  if (best_tri < 0) return false;
  fill_hit(best_tri, origin, d, best, hit);
  return true;
}

bool TriangleMeshGround::raycast(const Vec3& origin, const Vec3& direction, double max_distance,
                                 GroundHit& hit) const noexcept {
  if (!is_finite(origin) || !is_finite(direction) || !(max_distance >= 0)) return false;
  const double len = length(direction);
  if (!(len > 0) || !std::isfinite(len)) return false;
  const Vec3 d = direction / len;
  const double inf = std::numeric_limits<double>::infinity();
  const Vec3 inv{d.x != 0 ? 1.0 / d.x : inf, d.y != 0 ? 1.0 / d.y : inf,
                 d.z != 0 ? 1.0 / d.z : inf};
  double best = max_distance;
  int best_tri = -1;
  // Median split: depth ≤ log2(triangles) + 1 < 64, and at most one pending node a level.
  int stack[128];
  int top = 0;
  stack[top++] = 0;
  while (top > 0) {
    const Node& node = nodes_[static_cast<std::size_t>(stack[--top])];
    // Slab test, conservative: boxes are widened by a relative epsilon.
    double t0 = 0, t1 = best;
    bool miss = false;
    for (int a = 0; a < 3 && !miss; ++a) {
      const double pad = 1e-9 * (1 + std::abs(node.lo[a]) + std::abs(node.hi[a]));
      const double lo = node.lo[a] - pad, hi = node.hi[a] + pad;
      if (d[a] == 0) {
        if (origin[a] < lo || origin[a] > hi) miss = true;
        continue;
      }
      double ta = (lo - origin[a]) * inv[a], tb = (hi - origin[a]) * inv[a];
      if (ta > tb) std::swap(ta, tb);
      t0 = std::max(t0, ta);
      t1 = std::min(t1, tb);
      if (t0 > t1) miss = true;
    }
    if (miss) continue;
    if (node.count > 0) {
      for (int i = node.first; i < node.first + node.count; ++i) {
        const int tri = order_[static_cast<std::size_t>(i)];
        double t = 0;
        if (hit_triangle(tri, origin, d, best, t) &&
            (best_tri < 0 || t < best || (t == best && tri < best_tri))) {
          best = t;
          best_tri = tri;
        }
      }
    } else if (top + 2 <= 128) {
      stack[top++] = node.first + 1;
      stack[top++] = node.first;
    }
  }
  if (best_tri < 0) return false;
  fill_hit(best_tri, origin, d, best, hit);
  return true;
}

bool TriangleMeshGround::ray_down(const Vec3& origin, double max_distance,
                                  GroundHit& hit) const noexcept {
  return raycast(origin, Vec3{0, -1, 0}, max_distance, hit);
}

}  // namespace kinema
