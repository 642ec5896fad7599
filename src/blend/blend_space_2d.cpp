// BlendSpace2D: samples scattered in a plane, weights by barycentric coordinates in their
// Delaunay triangulation (delaunay.h), the nearest hull point outside it. See
// kinema/blend/blend_space.h.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "blend_space_internal.h"
#include "delaunay.h"
#include "kinema/blend/blend_space.h"
#include "kinema/core/error.h"

namespace kinema {

using blend_detail::cycles_of;
using blend_detail::entry_place;
using blend_detail::names_of;
using blend_detail::num;
using blend_detail::orient;

BlendSpace2D::BlendSpace2D(std::vector<BlendSample2D> samples) : samples_(std::move(samples)) {
  const std::size_t n = samples_.size();
  if (n < 3)
    throw Error("", "",
                "a 2D blend space needs at least 3 samples (got " + std::to_string(n) + ")");
  const std::vector<std::string> names = names_of(samples_);
  for (std::size_t i = 0; i < n; ++i) {
    const BlendPoint2D p = samples_[i].position;
    if (!std::isfinite(p.x) || !std::isfinite(p.y))
      throw Error("", entry_place("sample", i, names), "position is not finite");
    px_.push_back(p.x);
    py_.push_back(p.y);
  }
  std::vector<std::uint32_t> ord(n);
  for (std::size_t i = 0; i < n; ++i) ord[i] = static_cast<std::uint32_t>(i);
  std::stable_sort(ord.begin(), ord.end(), [&](std::uint32_t a, std::uint32_t b) {
    return px_[a] != px_[b] ? px_[a] < px_[b] : py_[a] < py_[b];
  });
  for (std::size_t k = 1; k < n; ++k)
    if (px_[ord[k]] == px_[ord[k - 1]] && py_[ord[k]] == py_[ord[k - 1]])
      throw Error("", entry_place("sample", ord[k], names),
                  "duplicate position (" + num(px_[ord[k]]) + ", " + num(py_[ord[k]]) +
                      ") (same as " + entry_place("sample", ord[k - 1], names) + ")");
  blend_detail::Triangulation t = blend_detail::delaunay_triangulation(px_, py_, std::move(ord));
  tris_ = std::move(t.tris);
  hull_ = std::move(t.hull);
  for (const auto& tri : tris_) {
    TriangleGeometry g{};
    for (int j = 0; j < 3; ++j) {
      g.x[j] = px_[tri[j]];
      g.y[j] = py_[tri[j]];
    }
    g.inv_area = 1.0 / orient(g.x[0], g.y[0], g.x[1], g.y[1], g.x[2], g.y[2]);
    geometry_.push_back(g);
  }
  const std::vector<ClipCycle> cycles = cycles_of(samples_);
  sync_ = PhaseSync(cycles, names, "sample");
}

void BlendSpace2D::nearest_on_hull(double px, double py, std::size_t& edge,
                                   double& t) const noexcept {
  double best = std::numeric_limits<double>::infinity();
  edge = 0;
  t = 0.0;
  for (std::size_t i = 0; i < hull_.size(); ++i) {
    const std::uint32_t a = hull_[i], b = hull_[(i + 1) % hull_.size()];
    const double ex = px_[b] - px_[a], ey = py_[b] - py_[a];
    const double len2 = ex * ex + ey * ey;
    const double u = std::clamp(((px - px_[a]) * ex + (py - py_[a]) * ey) / len2, 0.0, 1.0);
    const double dx = px_[a] + u * ex - px, dy = py_[a] + u * ey - py;
    const double d2 = dx * dx + dy * dy;
    if (d2 < best) {
      best = d2;
      edge = i;
      t = u;
    }
  }
}

std::size_t BlendSpace2D::compute(double px, double py, std::array<std::uint32_t, 3>& idx,
                                  std::array<double, 3>& w) const noexcept {
  // Linear scan: the first triangle whose barycentrics are all ≥ 0 contains p. Rounding can leave
  // a point on an edge a hair outside both neighbours, so also keep the least-outside triangle.
  constexpr double kInside = -1e-9;  // barycentric slack for "on the boundary"
  double best_min = -std::numeric_limits<double>::infinity();
  std::size_t best = tris_.size();
  std::array<double, 3> best_l{};
  for (std::size_t t = 0; t < tris_.size(); ++t) {
    const TriangleGeometry& g = geometry_[t];
    const double la = orient(px, py, g.x[1], g.y[1], g.x[2], g.y[2]) * g.inv_area;
    const double lb = orient(g.x[0], g.y[0], px, py, g.x[2], g.y[2]) * g.inv_area;
    const double lc = orient(g.x[0], g.y[0], g.x[1], g.y[1], px, py) * g.inv_area;
    const double m = std::min({la, lb, lc});
    if (m > best_min) {
      best_min = m;
      best = t;
      best_l = {la, lb, lc};
      if (m >= 0.0) break;
    }
  }
  if (best < tris_.size() && best_min >= kInside) {
    idx = tris_[best];
    double sum = 0.0;
    for (double& l : best_l) sum += (l = std::max(l, 0.0));
    for (int j = 0; j < 3; ++j) w[j] = best_l[j] / sum;
    return 3;
  }
  // Outside the hull: the weights of the nearest hull point, on one hull edge.
  std::size_t e = 0;
  double t = 0.0;
  nearest_on_hull(px, py, e, t);
  idx = {hull_[e], hull_[(e + 1) % hull_.size()], hull_[e]};
  w = {1.0 - t, t, 0.0};
  return 2;
}

bool BlendSpace2D::weights(BlendPoint2D p, std::span<float> out) const noexcept {
  if (!std::isfinite(p.x) || !std::isfinite(p.y) || out.size() != samples_.size()) return false;
  std::array<std::uint32_t, 3> idx{};
  std::array<double, 3> w{};
  const std::size_t count = compute(p.x, p.y, idx, w);
  std::fill(out.begin(), out.end(), 0.0f);
  for (std::size_t j = 0; j < count; ++j) out[idx[j]] = static_cast<float>(w[j]);
  return true;
}

std::size_t BlendSpace2D::sparse_weights(BlendPoint2D p,
                                         std::span<BlendWeight> out) const noexcept {
  if (!std::isfinite(p.x) || !std::isfinite(p.y) || out.size() < kMaxActive) return 0;
  std::array<std::uint32_t, 3> idx{};
  std::array<double, 3> w{};
  const std::size_t count = compute(p.x, p.y, idx, w);
  std::size_t written = 0;
  for (std::size_t j = 0; j < count; ++j) {
    const float wf = static_cast<float>(w[j]);
    if (wf > 0.0f) out[written++] = {idx[j], wf};
  }
  std::sort(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(written),
            [](const BlendWeight& a, const BlendWeight& b) { return a.sample < b.sample; });
  return written;
}

std::optional<BlendPoint2D> BlendSpace2D::project_to_hull(BlendPoint2D p) const noexcept {
  if (!std::isfinite(p.x) || !std::isfinite(p.y)) return std::nullopt;
  std::array<std::uint32_t, 3> idx{};
  std::array<double, 3> w{};
  if (compute(p.x, p.y, idx, w) == 3) return p;
  std::size_t e = 0;
  double t = 0.0;
  nearest_on_hull(p.x, p.y, e, t);
  const std::uint32_t a = hull_[e], b = hull_[(e + 1) % hull_.size()];
  return BlendPoint2D{static_cast<float>(px_[a] + t * (px_[b] - px_[a])),
                      static_cast<float>(py_[a] + t * (py_[b] - py_[a]))};
}

}  // namespace kinema
