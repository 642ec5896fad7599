// The Delaunay triangulation of a 2D blend space's samples. See delaunay.h.
#include "delaunay.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "kinema/core/error.h"

namespace kinema::blend_detail {
namespace {

// Rounding bound for orient(): its terms' magnitude times a small multiple of the unit roundoff.
double orient_tolerance(double ax, double ay, double bx, double by, double cx, double cy) {
  return 1e-12 * (std::abs((bx - ax) * (cy - ay)) + std::abs((by - ay) * (cx - ax)));
}

struct Points {
  const std::vector<double>& x;
  const std::vector<double>& y;

  double orient(std::uint32_t a, std::uint32_t b, std::uint32_t c) const {
    return blend_detail::orient(x[a], y[a], x[b], y[b], x[c], y[c]);
  }
  // Sign of orient() with rounding-level values read as 0 (collinear).
  int orient_sign(std::uint32_t a, std::uint32_t b, std::uint32_t c) const {
    const double o = orient(a, b, c);
    const double tol = orient_tolerance(x[a], y[a], x[b], y[b], x[c], y[c]);
    return o > tol ? 1 : (o < -tol ? -1 : 0);
  }

  // Should edge a–b (triangles (a, b, c) and (b, a, d), both CCW) be flipped to c–d? True when d
  // is inside the circumcircle of (a, b, c). Ties (cocircular points) are decided by a perturbed
  // lift x² + y² + ε·y² + ε²·x·y (Delaunay with the second axis infinitesimally stretched, then
  // sheared), and last by index, so the result does not depend on the insertion order.
  bool should_flip(std::uint32_t a, std::uint32_t b, std::uint32_t c, std::uint32_t d) const {
    const double adx = x[a] - x[d], ady = y[a] - y[d];
    const double bdx = x[b] - x[d], bdy = y[b] - y[d];
    const double cdx = x[c] - x[d], cdy = y[c] - y[d];
    const double bc = bdx * cdy - cdx * bdy, ca = cdx * ady - adx * cdy, ab = adx * bdy - bdx * ady;
    const double pbc = std::abs(bdx * cdy) + std::abs(cdx * bdy);
    const double pca = std::abs(cdx * ady) + std::abs(adx * cdy);
    const double pab = std::abs(adx * bdy) + std::abs(bdx * ady);
    const auto lifted = [&](auto lift) {
      const double la = lift(adx, ady), lb = lift(bdx, bdy), lc = lift(cdx, cdy);
      const double det = la * bc + lb * ca + lc * ab;
      const double tol = 1e-12 * (std::abs(la) * pbc + std::abs(lb) * pca + std::abs(lc) * pab);
      return det > tol ? 1 : (det < -tol ? -1 : 0);
    };
    int s = lifted([](double u, double v) { return u * u + v * v; });
    if (s == 0) s = lifted([](double, double v) { return v * v; });
    if (s == 0) s = lifted([](double u, double v) { return u * v; });
    if (s != 0) return s > 0;
    return std::min(c, d) < std::min(a, b);  // keep the diagonal with the smaller index
  }
};

// Sweep triangulation: insert points in lexicographic order, each joined to the hull edges it
// sees. Throws when all points are collinear.
Triangulation sweep(const Points& pts, std::vector<std::uint32_t> ord) {
  Triangulation out;
  const std::size_t n = ord.size();
  std::size_t k = 2;
  while (k < n && pts.orient_sign(ord[0], ord[1], ord[k]) == 0) ++k;
  if (k == n)
    throw Error("", "",
                "samples are collinear: a 2D blend space needs 3 samples that are not on one line");
  // ord[0..k-1] lie on one line, in order along it: fan them to ord[k].
  const bool left = pts.orient_sign(ord[0], ord[1], ord[k]) > 0;
  for (std::size_t j = 0; j + 1 < k; ++j) {
    if (left)
      out.tris.push_back({ord[j], ord[j + 1], ord[k]});
    else
      out.tris.push_back({ord[j + 1], ord[j], ord[k]});
  }
  if (left) {
    out.hull.assign(ord.begin(), ord.begin() + static_cast<std::ptrdiff_t>(k + 1));
  } else {
    out.hull.push_back(ord[0]);
    for (std::size_t j = k; j >= 1; --j) out.hull.push_back(ord[j]);
  }
  std::vector<char> visible;
  std::vector<std::uint32_t> next_hull;
  for (std::size_t m = k + 1; m < n; ++m) {
    const std::uint32_t p = ord[m];
    const std::vector<std::uint32_t>& h = out.hull;
    const std::size_t hn = h.size();
    visible.assign(hn, 0);
    for (std::size_t i = 0; i < hn; ++i) visible[i] = pts.orient_sign(h[i], h[(i + 1) % hn], p) < 0;
    // p is lexicographically past every hull point, so it sees a non-empty chain of edges.
    std::size_t s = hn;
    for (std::size_t i = 0; i < hn && s == hn; ++i)
      if (visible[i] && !visible[(i + hn - 1) % hn]) s = i;
    // Exactly, p sees at least one edge; only rounding-level near-collinearity can hide them all.
    if (s == hn)
      throw Error(
          "", "",
          "samples are nearly collinear: cannot triangulate around sample " + std::to_string(p));
    std::size_t e = s;
    while (visible[(e + 1) % hn] && (e + 1) % hn != s) e = (e + 1) % hn;
    for (std::size_t i = s;; i = (i + 1) % hn) {
      out.tris.push_back({h[(i + 1) % hn], h[i], p});
      if (i == e) break;
    }
    next_hull.clear();
    for (std::size_t i = (e + 1) % hn;; i = (i + 1) % hn) {
      next_hull.push_back(h[i]);
      if (i == s) break;
    }
    next_hull.push_back(p);
    out.hull.swap(next_hull);
  }
  return out;
}

// Lawson flips until every interior edge is (tie-broken) Delaunay. Flips keep the triangulation
// valid, so even the defensive pass cap leaves a usable result.
void make_delaunay(const Points& pts, std::vector<std::array<std::uint32_t, 3>>& tris) {
  struct EdgeRef {
    std::uint32_t lo, hi, tri, opposite;  // opposite: local index of the vertex facing the edge
  };
  std::vector<EdgeRef> edges;
  std::vector<char> touched;
  const std::size_t max_passes = 4 * pts.x.size() * pts.x.size() + 16;
  for (std::size_t pass = 0; pass < max_passes; ++pass) {
    edges.clear();
    for (std::uint32_t t = 0; t < tris.size(); ++t)
      for (std::uint32_t j = 0; j < 3; ++j) {
        const std::uint32_t u = tris[t][(j + 1) % 3], v = tris[t][(j + 2) % 3];
        edges.push_back({std::min(u, v), std::max(u, v), t, j});
      }
    std::sort(edges.begin(), edges.end(), [](const EdgeRef& a, const EdgeRef& b) {
      return a.lo != b.lo ? a.lo < b.lo : (a.hi != b.hi ? a.hi < b.hi : a.tri < b.tri);
    });
    touched.assign(tris.size(), 0);
    bool flipped = false;
    for (std::size_t i = 0; i + 1 < edges.size(); ++i) {
      const EdgeRef& e1 = edges[i];
      const EdgeRef& e2 = edges[i + 1];
      if (e1.lo != e2.lo || e1.hi != e2.hi) continue;
      if (touched[e1.tri] || touched[e2.tri]) continue;  // stale: flipped earlier in this pass
      const std::uint32_t c = tris[e1.tri][e1.opposite];
      const std::uint32_t a = tris[e1.tri][(e1.opposite + 1) % 3];
      const std::uint32_t b = tris[e1.tri][(e1.opposite + 2) % 3];
      const std::uint32_t d = tris[e2.tri][e2.opposite];
      // Quad a, d, b, c (CCW): flip only if strictly convex at a and b.
      if (pts.orient_sign(c, a, d) <= 0 || pts.orient_sign(d, b, c) <= 0) continue;
      if (!pts.should_flip(a, b, c, d)) continue;
      tris[e1.tri] = {a, d, c};
      tris[e2.tri] = {d, b, c};
      touched[e1.tri] = touched[e2.tri] = 1;
      flipped = true;
    }
    if (!flipped) return;
  }
}

}  // namespace

Triangulation delaunay_triangulation(const std::vector<double>& x, const std::vector<double>& y,
                                     std::vector<std::uint32_t> order) {
  const Points pts{x, y};
  Triangulation t = sweep(pts, std::move(order));
  make_delaunay(pts, t.tris);
  return t;
}

}  // namespace kinema::blend_detail
