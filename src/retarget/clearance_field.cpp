// The k-nearest plane push of a body surface (kinema/retarget/clearance_field.h).
#include "kinema/retarget/clearance_field.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>

#include "kinema/core/error.h"

namespace kinema {

namespace {

constexpr int kMaxNeighbours = 64;

/// The k smallest (squared distance, index) pairs seen, kept sorted (k is small: insertion).
/// Single precision: only the selection uses it; the plane is fitted in double.
struct NearestK {
  int k = 1, count = 0;
  float worst = std::numeric_limits<float>::infinity();  // the k-th smallest, once k are seen
  // Left uninitialized (only the first `count` are read): this runs millions of times a clip.
  std::array<float, kMaxNeighbours> d2;
  std::array<uint32_t, kMaxNeighbours> index;
  void offer(float dist2, uint32_t i) {
    int at = std::min(count, k - 1);
    while (at > 0 && d2[static_cast<size_t>(at - 1)] > dist2) {
      d2[static_cast<size_t>(at)] = d2[static_cast<size_t>(at - 1)];
      index[static_cast<size_t>(at)] = index[static_cast<size_t>(at - 1)];
      --at;
    }
    d2[static_cast<size_t>(at)] = dist2;
    index[static_cast<size_t>(at)] = i;
    count = std::min(count + 1, k);
    if (count == k) worst = d2[static_cast<size_t>(k - 1)];
  }
};

}  // namespace

void ClearanceField::build(std::span<const Vec3f> points, std::span<const Vec3f> normals,
                           const ClearanceFieldOptions& options, double max_clearance_m) {
  if (points.size() != normals.size())
    throw Error("", "clearance field",
                std::to_string(points.size()) + " points but " + std::to_string(normals.size()) +
                    " normals");
  if (options.neighbours < 1 || options.neighbours > kMaxNeighbours || !(options.soft_m > 0) ||
      !(options.reach_m >= 0) || !(max_clearance_m >= 0))
    throw Error("", "clearance field",
                "neighbours must be 1–64, soft > 0, reach and clearance ≥ 0");
  options_ = options;
  points_.clear();
  normals_.clear();
  cell_start_.assign(1, 0);
  nx_ = ny_ = nz_ = 0;
  if (points.empty()) return;

  Vec3f lo = points[0], hi = points[0];
  for (const Vec3f& p : points) {
    lo = {std::min(lo.x, p.x), std::min(lo.y, p.y), std::min(lo.z, p.z)};
    hi = {std::max(hi.x, p.x), std::max(hi.y, p.y), std::max(hi.z, p.z)};
  }
  // Cells of about 60 % of the near limit: a near query's 16 nearest lie within one or two
  // rings (measured on Godette: smaller cells visit many empty ones, larger ones many points).
  const double near_max = max_clearance_m + options.reach_m;
  cell_m_ = std::max(0.01, near_max / 1.7);
  origin_ = Vec3(lo);
  auto cells = [&](double extent) {
    return std::clamp(static_cast<int>(extent / cell_m_) + 1, 1, 1 << 10);
  };
  nx_ = cells(hi.x - lo.x);
  ny_ = cells(hi.y - lo.y);
  nz_ = cells(hi.z - lo.z);
  const size_t cell_count = size_t(nx_) * size_t(ny_) * size_t(nz_);

  // Counting sort of the points by cell (scratch kept between builds: this runs every frame).
  // Single precision: every point lies at or above the origin, so truncation is the floor.
  const float inv_cell = float(1 / cell_m_);
  cell_of_.resize(points.size());
  cell_start_.assign(cell_count + 1, 0);
  for (size_t i = 0; i < points.size(); ++i) {
    const int cx = std::min(static_cast<int>((points[i].x - lo.x) * inv_cell), nx_ - 1);
    const int cy = std::min(static_cast<int>((points[i].y - lo.y) * inv_cell), ny_ - 1);
    const int cz = std::min(static_cast<int>((points[i].z - lo.z) * inv_cell), nz_ - 1);
    cell_of_[i] = static_cast<uint32_t>((cz * ny_ + cy) * nx_ + cx);
    ++cell_start_[cell_of_[i] + 1];
  }
  std::partial_sum(cell_start_.begin(), cell_start_.end(), cell_start_.begin());

  // The coarse grid: blocks of ratio³ cells, at least the largest near limit wide, marked from
  // the occupied cells.
  const int ratio = std::max(1, static_cast<int>(std::ceil(near_max / cell_m_ - 1e-9)));
  coarse_m_ = cell_m_ * ratio;
  cnx_ = (nx_ + ratio - 1) / ratio;
  cny_ = (ny_ + ratio - 1) / ratio;
  cnz_ = (nz_ + ratio - 1) / ratio;
  coarse_.assign(size_t(cnx_) * size_t(cny_) * size_t(cnz_), 0);
  for (int z = 0, c = 0; z < nz_; ++z)
    for (int y = 0; y < ny_; ++y)
      for (int x = 0; x < nx_; ++x, ++c)
        if (cell_start_[size_t(c) + 1] > cell_start_[size_t(c)])
          coarse_[(size_t(z / ratio) * size_t(cny_) + size_t(y / ratio)) * size_t(cnx_) +
                  size_t(x / ratio)] = 1;
  points_.resize(points.size());
  normals_.resize(points.size());
  fill_.assign(cell_start_.begin(), cell_start_.end() - 1);
  for (size_t i = 0; i < points.size(); ++i) {  // stable: the input order within a cell
    const uint32_t at = fill_[cell_of_[i]]++;
    points_[at] = points[i];
    normals_[at] = normals[i];
  }
}

ClearancePush ClearanceField::push_of(const ClearancePlane& plane, double clearance_m) const {
  ClearancePush out;
  if (!(plane.nearest_m <= clearance_m + options_.reach_m)) return out;
  out.near = true;
  out.depth = std::max(0.0, -plane.signed_m);
  out.push = plane.normal * std::max(0.0, clearance_m - plane.signed_m);
  return out;
}

ClearancePlane ClearanceField::plane(const Vec3& p, double clearance_m) const {
  ClearancePlane out;
  if (points_.empty()) return out;
  const double near_limit = clearance_m + options_.reach_m;
  // Distance from p to the grid's box: farther than the near limit, nothing can be near.
  const Vec3 box_hi = origin_ + Vec3{nx_ * cell_m_, ny_ * cell_m_, nz_ * cell_m_};
  const Vec3 gap{std::max({0.0, origin_.x - p.x, p.x - box_hi.x}),
                 std::max({0.0, origin_.y - p.y, p.y - box_hi.y}),
                 std::max({0.0, origin_.z - p.z, p.z - box_hi.z})};
  if (length(gap) > near_limit) return out;
  if (near_limit <= coarse_m_) {  // no point in the 27 coarse cells around p: none is near
    const int cx = static_cast<int>(std::floor((p.x - origin_.x) / coarse_m_));
    const int cy = static_cast<int>(std::floor((p.y - origin_.y) / coarse_m_));
    const int cz = static_cast<int>(std::floor((p.z - origin_.z) / coarse_m_));
    bool any = false;
    for (int z = std::max(cz - 1, 0); z <= std::min(cz + 1, cnz_ - 1) && !any; ++z)
      for (int y = std::max(cy - 1, 0); y <= std::min(cy + 1, cny_ - 1) && !any; ++y)
        for (int x = std::max(cx - 1, 0); x <= std::min(cx + 1, cnx_ - 1); ++x)
          if (coarse_[(size_t(z) * size_t(cny_) + size_t(y)) * size_t(cnx_) + size_t(x)]) {
            any = true;
            break;
          }
    if (!any) return out;
  }

  const int qx = static_cast<int>(std::floor((p.x - origin_.x) / cell_m_));
  const int qy = static_cast<int>(std::floor((p.y - origin_.y) / cell_m_));
  const int qz = static_cast<int>(std::floor((p.z - origin_.z) / cell_m_));
  const float px = float(p.x), py = float(p.y), pz = float(p.z);
  NearestK nearest;
  nearest.k = std::min<int>(options_.neighbours, static_cast<int>(points_.size()));
  // Points are sorted by cell, cells by (z, y, x): the cells x0…x1 of a row are one range.
  auto scan_row = [&](int z, int y, int xa, int xb) {
    if (xa > xb) return;
    const size_t row = (size_t(z) * size_t(ny_) + size_t(y)) * size_t(nx_);
    const uint32_t end = cell_start_[row + size_t(xb) + 1];
    for (uint32_t i = cell_start_[row + size_t(xa)]; i < end; ++i) {
      const float dx = px - points_[i].x, dy = py - points_[i].y, dz = pz - points_[i].z;
      const float d2 = dx * dx + dy * dy + dz * dz;
      if (d2 < nearest.worst) nearest.offer(d2, i);
    }
  };
  // Squared distance from p to a slab of cells along one axis (0 within it): rows and cells
  // wholly farther than the k-th nearest so far are skipped.
  auto gap2 = [&](double v, double o, int c) {
    const double g = std::max({0.0, o + c * cell_m_ - v, v - (o + (c + 1) * cell_m_)});
    return g * g;
  };
  auto cell_x = [&](double x) { return static_cast<int>(std::floor((x - origin_.x) / cell_m_)); };
  const int max_ring =
      std::max({nx_, ny_, nz_}) + std::max({std::abs(qx), std::abs(qy), std::abs(qz)}) + 1;
  for (int r = 0; r <= max_ring; ++r) {
    const int z0 = std::max(qz - r, 0), z1 = std::min(qz + r, nz_ - 1);
    const int y0 = std::max(qy - r, 0), y1 = std::min(qy + r, ny_ - 1);
    const int x0 = std::max(qx - r, 0), x1 = std::min(qx + r, nx_ - 1);
    for (int z = z0; z <= z1; ++z) {
      const double gz = gap2(p.z, origin_.z, z);
      if (gz >= nearest.worst) continue;
      for (int y = y0; y <= y1; ++y) {
        const double gzy = gz + gap2(p.y, origin_.y, y);
        if (gzy >= nearest.worst) continue;
        if (std::abs(z - qz) < r && std::abs(y - qy) < r) {  // the ring's two ends of this row
          if (qx - r >= 0 && gzy + gap2(p.x, origin_.x, qx - r) < nearest.worst)
            scan_row(z, y, qx - r, qx - r);
          if (qx + r < nx_ && gzy + gap2(p.x, origin_.x, qx + r) < nearest.worst)
            scan_row(z, y, qx + r, qx + r);
        } else if (nearest.count < nearest.k) {
          scan_row(z, y, x0, x1);
        } else {  // only the cells of the row within the k-th distance
          const double reach_x = std::sqrt(nearest.worst - gzy);
          scan_row(z, y, std::max(x0, cell_x(p.x - reach_x)), std::min(x1, cell_x(p.x + reach_x)));
        }
      }
    }
    // The nearest an unvisited cell can be: the distance from p to the visited block's faces,
    // on the sides where the grid goes on beyond it.
    double unvisited = INFINITY;
    auto face = [&](double v, double o, int q, int n) {
      if (q - r > 0) unvisited = std::min(unvisited, v - (o + (q - r) * cell_m_));
      if (q + r < n - 1) unvisited = std::min(unvisited, o + (q + r + 1) * cell_m_ - v);
    };
    face(p.x, origin_.x, qx, nx_);
    face(p.y, origin_.y, qy, ny_);
    face(p.z, origin_.z, qz, nz_);
    if (unvisited == INFINITY) {  // the whole grid is visited
      if (nearest.count == 0) return out;
      break;
    }
    unvisited = std::max(unvisited, 0.0);
    // Nothing within the near limit so far and everything unvisited beyond it: not near.
    if (unvisited > near_limit && (nearest.count == 0 || nearest.d2[0] > near_limit * near_limit))
      return out;
    if (nearest.count == nearest.k && nearest.worst <= unvisited * unvisited) break;
  }
  if (nearest.count == 0) return out;
  // The plane in double precision: distances recomputed for the k selected.
  std::array<double, kMaxNeighbours> dist;
  int nearest_j = 0;
  double d_min = INFINITY;
  for (int j = 0; j < nearest.count; ++j) {
    dist[size_t(j)] = length(p - Vec3(points_[nearest.index[size_t(j)]]));
    if (dist[size_t(j)] < d_min) {
      d_min = dist[size_t(j)];
      nearest_j = j;
    }
  }
  if (d_min > near_limit) return out;

  // Weights relative to the nearest vertex: exp(0) = 1 for it, so the sum never underflows.
  // s = Σ w_j (p − v_j)·n = (p − Σ w_j v_j)·n: the plane through the weighted centroid.
  double w_sum = 0;
  Vec3 n{0, 0, 0}, centroid{0, 0, 0};
  for (int j = 0; j < nearest.count; ++j) {
    const double rel = (dist[size_t(j)] - d_min) / options_.soft_m;
    if (rel >= 6) continue;  // below 1e-15 of the nearest's weight: none
    const double w = std::exp(float(-rel * rel));
    const uint32_t v = nearest.index[size_t(j)];
    w_sum += w;
    n = n + Vec3(normals_[v]) * w;
    centroid = centroid + Vec3(points_[v]) * w;
  }
  const double n_len = length(n);
  n = n_len > 1e-9 ? n / n_len : Vec3(normals_[nearest.index[size_t(nearest_j)]]);
  out.normal = n;
  out.signed_m = dot(p - centroid / w_sum, n);
  out.nearest_m = d_min;
  return out;
}

}  // namespace kinema
