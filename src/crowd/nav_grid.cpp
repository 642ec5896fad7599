// The navigation grid: sampling a ground, closing cells, line of sight and A* (see nav_grid.h).
#include "kinema/crowd/nav_grid.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <queue>
#include <string>

#include "kinema/core/error.h"

namespace kinema {
namespace {

constexpr std::size_t kMaxCells = std::size_t{1} << 26;
constexpr int kNeighbourDx[8] = {1, -1, 0, 0, 1, 1, -1, -1};
constexpr int kNeighbourDz[8] = {0, 0, 1, -1, 1, -1, 1, -1};

std::string describe(Vec2 p) {
  return "(" + std::to_string(p.x) + ", " + std::to_string(p.y) + ")";
}

// A* scratch, reused between queries on one thread: stamps say which entries this query wrote.
struct SearchScratch {
  std::vector<std::uint32_t> stamp;
  std::vector<float> cost;  // best known cost from the start, m
  std::vector<std::int32_t> parent;
  std::vector<std::uint8_t> closed;
  std::uint32_t current = 0;
  std::size_t expanded = 0;

  void prepare(std::size_t cells) {
    if (stamp.size() != cells) {
      stamp.assign(cells, 0);
      cost.resize(cells);
      parent.resize(cells);
      closed.resize(cells);
      current = 0;
    }
    if (++current == 0) {  // wrapped: forget every stamp
      std::fill(stamp.begin(), stamp.end(), 0);
      current = 1;
    }
    expanded = 0;
  }
  bool seen(std::size_t i) const { return stamp[i] == current; }
  void touch(std::size_t i) {
    if (!seen(i)) {
      stamp[i] = current;
      cost[i] = INFINITY;
      parent[i] = -1;
      closed[i] = 0;
    }
  }
};

thread_local SearchScratch g_scratch;

}  // namespace

NavGrid::NavGrid(Vec2 origin, double cell_size, int width, int depth)
    : origin_(origin), cell_(cell_size), width_(width), depth_(depth) {
  if (!is_finite(origin)) throw Error("", "navigation grid", "the origin is not finite");
  if (!(cell_size > 0) || !std::isfinite(cell_size)) {
    throw Error("", "navigation grid", "the cell size must be a finite number > 0");
  }
  if (width < 1 || depth < 1 ||
      static_cast<std::size_t>(width) * static_cast<std::size_t>(depth) > kMaxCells) {
    throw Error("", "navigation grid",
                std::to_string(width) + " × " + std::to_string(depth) +
                    " cells: each side needs at least one cell and the grid at most 2^26");
  }
  open_.assign(static_cast<std::size_t>(width) * static_cast<std::size_t>(depth), 1);
  heights_.assign(open_.size(), 0.0f);
}

NavGrid NavGrid::from_ground(const Ground& ground, Vec2 lo, Vec2 hi,
                             const NavGridSettings& settings) {
  if (!is_finite(lo) || !is_finite(hi) || !(lo.x < hi.x) || !(lo.y < hi.y)) {
    throw Error("", "navigation grid",
                "the rectangle " + describe(lo) + "–" + describe(hi) + " is empty or not finite");
  }
  if (!(settings.max_slope >= 0 && settings.max_slope <= std::numbers::pi / 2)) {
    throw Error("", "navigation grid", "max_slope must lie in [0, π/2] radians");
  }
  if (!(settings.max_step >= 0) || !(settings.clearance >= 0) || !std::isfinite(settings.ray_top)) {
    throw Error("", "navigation grid", "max_step and clearance must be ≥ 0 and ray_top finite");
  }
  const double extent = std::max(hi.x - lo.x, hi.y - lo.y);
  if (!(settings.cell_size > 0) || extent / settings.cell_size > double(kMaxCells)) {
    throw Error("", "navigation grid", "the cell size must be > 0 and give at most 2^26 cells");
  }
  const int width = std::max(1, static_cast<int>(std::ceil((hi.x - lo.x) / settings.cell_size)));
  const int depth = std::max(1, static_cast<int>(std::ceil((hi.y - lo.y) / settings.cell_size)));
  NavGrid grid(lo, settings.cell_size, width, depth);
  grid.max_step_ = settings.max_step;
  const double min_normal_y = std::cos(settings.max_slope) - 1e-12;
  for (int iz = 0; iz < depth; ++iz) {
    for (int ix = 0; ix < width; ++ix) {
      const Vec2 c = grid.centre(ix, iz);
      GroundHit hit;
      const bool found =
          ground.ray_down({c.x, settings.ray_top, c.y}, std::numeric_limits<double>::max(), hit);
      const std::size_t i = grid.index(ix, iz);
      grid.open_[i] = found && hit.normal.y >= min_normal_y;
      grid.heights_[i] = found ? static_cast<float>(hit.point.y) : 0.0f;
    }
  }
  if (settings.clearance > 0) grid.apply_clearance(settings.clearance);
  return grid;
}

void NavGrid::close_disc(Vec2 centre_point, double radius) {
  for (int iz = 0; iz < depth_; ++iz) {
    for (int ix = 0; ix < width_; ++ix) {
      const Vec2 d = centre(ix, iz) - centre_point;
      if (length_squared(d) <= radius * radius) open_[index(ix, iz)] = 0;
    }
  }
}

void NavGrid::close_rectangle(Vec2 lo, Vec2 hi) {
  for (int iz = 0; iz < depth_; ++iz) {
    for (int ix = 0; ix < width_; ++ix) {
      const Vec2 c = centre(ix, iz);
      if (c.x >= lo.x && c.x <= hi.x && c.y >= lo.y && c.y <= hi.y) open_[index(ix, iz)] = 0;
    }
  }
}

void NavGrid::apply_clearance(double clearance) {
  if (!(clearance > 0)) return;
  // A closed cell's nearest point to a centre: the cell square; the grid's edge counts as closed.
  const int reach = static_cast<int>(std::ceil(clearance / cell_)) + 1;
  std::vector<std::uint8_t> result = open_;
  for (int iz = 0; iz < depth_; ++iz) {
    for (int ix = 0; ix < width_; ++ix) {
      if (!open_[index(ix, iz)]) continue;
      const Vec2 c = centre(ix, iz);
      bool near_closed = false;
      for (int dz = -reach; dz <= reach && !near_closed; ++dz) {
        for (int dx = -reach; dx <= reach && !near_closed; ++dx) {
          const int jx = ix + dx, jz = iz + dz;
          const bool inside = jx >= 0 && jz >= 0 && jx < width_ && jz < depth_;
          if (inside && open_[index(jx, jz)]) continue;
          const double x0 = origin_.x + jx * cell_, z0 = origin_.y + jz * cell_;
          const double nx = std::clamp(c.x, x0, x0 + cell_), nz = std::clamp(c.y, z0, z0 + cell_);
          near_closed = (nx - c.x) * (nx - c.x) + (nz - c.y) * (nz - c.y) < clearance * clearance;
        }
      }
      if (near_closed) result[index(ix, iz)] = 0;
    }
  }
  open_ = std::move(result);
}

bool NavGrid::cell_of(Vec2 p, int& ix, int& iz) const noexcept {
  if (!is_finite(p)) return false;
  const double fx = std::floor((p.x - origin_.x) / cell_),
               fz = std::floor((p.y - origin_.y) / cell_);
  if (fx < 0 || fz < 0 || fx >= width_ || fz >= depth_) return false;
  ix = static_cast<int>(fx);
  iz = static_cast<int>(fz);
  return true;
}

Vec2 NavGrid::centre(int ix, int iz) const noexcept {
  return {origin_.x + (ix + 0.5) * cell_, origin_.y + (iz + 0.5) * cell_};
}

bool NavGrid::open(int ix, int iz) const noexcept {
  return ix >= 0 && iz >= 0 && ix < width_ && iz < depth_ && open_[index(ix, iz)];
}

bool NavGrid::walkable(Vec2 p) const noexcept {
  int ix, iz;
  return cell_of(p, ix, iz) && open_[index(ix, iz)];
}

double NavGrid::height(Vec2 p) const noexcept {
  int ix, iz;
  return cell_of(p, ix, iz) ? heights_[index(ix, iz)] : 0.0;
}

std::size_t NavGrid::open_cell_count() const noexcept {
  return static_cast<std::size_t>(std::count(open_.begin(), open_.end(), std::uint8_t{1}));
}

bool NavGrid::connected(int a, int b) const noexcept {
  return open_[a] && open_[b] && std::abs(heights_[a] - heights_[b]) <= max_step_;
}

bool NavGrid::passable(int ix, int iz, int dx, int dz) const noexcept {
  if (!open(ix + dx, iz + dz)) return false;
  const int here = static_cast<int>(index(ix, iz));
  const int there = static_cast<int>(index(ix + dx, iz + dz));
  if (dx == 0 || dz == 0) return connected(here, there);
  // Diagonal: through both side cells, as a walker squeezing past the corner would.
  if (!open(ix + dx, iz) || !open(ix, iz + dz)) return false;
  const int side_x = static_cast<int>(index(ix + dx, iz));
  const int side_z = static_cast<int>(index(ix, iz + dz));
  return connected(here, side_x) && connected(here, side_z) && connected(side_x, there) &&
         connected(side_z, there);
}

bool NavGrid::line_of_sight(Vec2 a, Vec2 b) const noexcept {
  int ix, iz, end_x, end_z;
  if (!cell_of(a, ix, iz) || !cell_of(b, end_x, end_z) || !open(ix, iz)) return false;
  // Walk the cells the segment crosses before its end (Amanatides & Woo); through a corner, the
  // step is diagonal and both side cells must be passable too.
  const Vec2 d = b - a;
  const int step_x = d.x > 0 ? 1 : -1, step_z = d.y > 0 ? 1 : -1;
  const double next_x = origin_.x + (ix + (step_x > 0 ? 1 : 0)) * cell_;
  const double next_z = origin_.y + (iz + (step_z > 0 ? 1 : 0)) * cell_;
  double t_x = d.x != 0 ? (next_x - a.x) / d.x : INFINITY;
  double t_z = d.y != 0 ? (next_z - a.y) / d.y : INFINITY;
  const double dt_x = d.x != 0 ? cell_ / std::abs(d.x) : INFINITY;
  const double dt_z = d.y != 0 ? cell_ / std::abs(d.y) : INFINITY;
  constexpr double kEnd = 1 - 1e-12;
  while (std::min(t_x, t_z) < kEnd) {
    int dx = 0, dz = 0;
    if (std::abs(t_x - t_z) < 1e-12) {
      dx = step_x;
      dz = step_z;
      t_x += dt_x;
      t_z += dt_z;
    } else if (t_x < t_z) {
      dx = step_x;
      t_x += dt_x;
    } else {
      dz = step_z;
      t_z += dt_z;
    }
    if (!passable(ix, iz, dx, dz)) return false;
    ix += dx;
    iz += dz;
  }
  // b on a cell boundary belongs to the cell above it, which the walk may stop just short of.
  const int dx = end_x - ix, dz = end_z - iz;
  if (dx == 0 && dz == 0) return true;
  return std::abs(dx) <= 1 && std::abs(dz) <= 1 && passable(ix, iz, dx, dz);
}

std::optional<std::vector<Vec2>> NavGrid::find_path(Vec2 from, Vec2 to, double keep_right) const {
  int sx, sz, gx, gz;
  if (!cell_of(from, sx, sz) || !cell_of(to, gx, gz) || !open(sx, sz) || !open(gx, gz)) {
    return std::nullopt;
  }
  const int start = static_cast<int>(index(sx, sz)), goal = static_cast<int>(index(gx, gz));
  SearchScratch& s = g_scratch;
  s.prepare(open_.size());
  const double diagonal_cost = cell_ * std::numbers::sqrt2;
  auto heuristic = [&](int cell) {
    const int dx = std::abs(cell % width_ - gx), dz = std::abs(cell / width_ - gz);
    return static_cast<float>(cell_ * std::max(dx, dz) +
                              (diagonal_cost - cell_) * std::min(dx, dz));
  };
  struct Entry {
    float f;
    int cell;
    bool operator>(const Entry& o) const { return f > o.f || (f == o.f && cell > o.cell); }
  };
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> frontier;
  s.touch(start);
  s.cost[start] = 0;
  frontier.push({heuristic(start), start});
  while (!frontier.empty()) {
    const Entry e = frontier.top();
    frontier.pop();
    if (s.closed[e.cell]) continue;
    s.closed[e.cell] = 1;
    ++s.expanded;
    if (e.cell == goal) break;
    const int cx = e.cell % width_, cz = e.cell / width_;
    for (int k = 0; k < 8; ++k) {
      const int nx = cx + kNeighbourDx[k], nz = cz + kNeighbourDz[k];
      if (!passable(cx, cz, kNeighbourDx[k], kNeighbourDz[k])) continue;
      const int next = static_cast<int>(index(nx, nz));
      s.touch(next);
      if (s.closed[next]) continue;
      double length = k >= 4 ? diagonal_cost : cell_;
      if (keep_right > 0 && det(to - from, centre(nx, nz) - from) < 0) length *= 1 + keep_right;
      const float cost = s.cost[e.cell] + static_cast<float>(length);
      if (cost < s.cost[next]) {
        s.cost[next] = cost;
        s.parent[next] = e.cell;
        frontier.push({cost + heuristic(next), next});
      }
    }
  }
  if (!s.seen(goal) || !s.closed[goal]) return std::nullopt;

  std::vector<Vec2> cells;
  for (int c = goal; c != -1; c = s.parent[c]) cells.push_back(centre(c % width_, c / width_));
  std::reverse(cells.begin(), cells.end());
  cells.front() = from;
  cells.back() = to;
  // Pull taut: from each kept waypoint, skip ahead while the next cell is still in sight (linear
  // in the path's length, where looking back from its end would be quadratic).
  std::vector<Vec2> path{cells.front()};
  std::size_t anchor = 0;
  while (anchor + 1 < cells.size()) {
    std::size_t next = anchor + 1;
    while (next + 1 < cells.size() && line_of_sight(cells[anchor], cells[next + 1])) ++next;
    path.push_back(cells[next]);
    anchor = next;
  }
  return path;
}

std::size_t NavGrid::last_expanded_count() noexcept { return g_scratch.expanded; }

}  // namespace kinema
