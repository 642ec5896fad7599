// Crowd agents: preferred velocities along paths, neighbours from a uniform grid, ORCA (crowd.h).
#include "kinema/crowd/crowd.h"

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <string>

#include "kinema/core/error.h"
#include "kinema/crowd/orca.h"

namespace kinema {
namespace {

constexpr int kMaxNeighbours = 64;
constexpr int kMaxObstacles = 8;            // nearest closed cells an agent steers clear of
constexpr std::size_t kBlock = 256;         // agents a task
constexpr std::uint32_t kReplanEvery = 16;  // steps between an agent's line-of-sight checks

bool positive_finite(float v) { return v > 0 && std::isfinite(v); }

std::string agent_place(std::size_t agent) { return "agent " + std::to_string(agent); }

}  // namespace

/// The agents sorted into square cells at least `neighbour_distance` wide, with copies of their
/// state in cell order (so a neighbourhood is three contiguous runs of memory).
struct Crowd::Grid {
  float x0 = 0, y0 = 0, cell = 1;
  int nx = 1, ny = 1;
  int reach = 1;  // rows either side that a neighbourhood can reach
  std::vector<std::uint32_t> cell_start, order, agent_cell;
  std::vector<Vec2f> position, velocity;
  std::vector<float> radius;

  void build(std::span<const Vec2f> positions, std::span<const Vec2f> velocities,
             std::span<const float> radii, float min_cell, float neighbourhood) {
    const std::size_t n = positions.size();
    Vec2f lo{INFINITY, INFINITY}, hi{-INFINITY, -INFINITY};
    for (const Vec2f& p : positions) {
      lo = {std::min(lo.x, p.x), std::min(lo.y, p.y)};
      hi = {std::max(hi.x, p.x), std::max(hi.y, p.y)};
    }
    if (n == 0) lo = hi = {0, 0};
    // At least min_cell wide; wider when the agents are spread so thin that cells would
    // outnumber them four to one.
    const double area = (double(hi.x - lo.x) + min_cell) * (double(hi.y - lo.y) + min_cell);
    cell = static_cast<float>(std::max<double>(min_cell, std::sqrt(area / (4.0 * double(n) + 16))));
    reach = static_cast<int>(std::ceil(neighbourhood / cell));
    x0 = lo.x;
    y0 = lo.y;
    nx = static_cast<int>((hi.x - lo.x) / cell) + 1;
    ny = static_cast<int>((hi.y - lo.y) / cell) + 1;
    const std::size_t cells = static_cast<std::size_t>(nx) * static_cast<std::size_t>(ny);
    cell_start.assign(cells + 1, 0);
    agent_cell.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      agent_cell[i] = static_cast<std::uint32_t>(cell_index(positions[i]));
      ++cell_start[agent_cell[i] + 1];
    }
    for (std::size_t c = 0; c < cells; ++c) cell_start[c + 1] += cell_start[c];
    order.resize(n);
    position.resize(n);
    velocity.resize(n);
    radius.resize(n);
    std::vector<std::uint32_t> fill(cell_start.begin(), cell_start.end() - 1);
    for (std::size_t i = 0; i < n; ++i) {  // stable: agents keep index order within a cell
      const std::uint32_t s = fill[agent_cell[i]]++;
      order[s] = static_cast<std::uint32_t>(i);
      position[s] = positions[i];
      velocity[s] = velocities[i];
      radius[s] = radii[i];
    }
  }

  int column(float x) const { return std::clamp(static_cast<int>((x - x0) / cell), 0, nx - 1); }
  int row(float y) const { return std::clamp(static_cast<int>((y - y0) / cell), 0, ny - 1); }
  std::size_t cell_index(Vec2f p) const {
    return static_cast<std::size_t>(row(p.y)) * static_cast<std::size_t>(nx) +
           static_cast<std::size_t>(column(p.x));
  }

  /// Calls visit(s) for every sorted slot s in the 3 × 3 cells around p.
  template <class Visit>
  void for_each_near(Vec2f p, const Visit& visit) const {
    const int cx = column(p.x), cy = row(p.y);
    const int c0 = std::max(cx - 1, 0), c1 = std::min(cx + 1, nx - 1);
    for (int y = std::max(cy - 1, 0); y <= std::min(cy + 1, ny - 1); ++y) {
      const std::size_t base = static_cast<std::size_t>(y) * static_cast<std::size_t>(nx);
      for (std::uint32_t s = cell_start[base + c0], end = cell_start[base + c1 + 1]; s < end; ++s) {
        visit(s);
      }
    }
  }
};

struct Crowd::Parallel {
  tbb::task_arena arena;
  std::uint32_t steps = 0;
  explicit Parallel(int threads) : arena(threads > 0 ? threads : tbb::task_arena::automatic) {}
};

Crowd::Crowd(const CrowdSettings& settings, std::shared_ptr<const NavGrid> nav)
    : settings_(settings),
      nav_(std::move(nav)),
      grid_(std::make_unique<Grid>()),
      parallel_(std::make_unique<Parallel>(settings.threads)) {
  if (!positive_finite(settings.neighbour_distance) || !positive_finite(settings.time_horizon) ||
      !positive_finite(settings.radius) || !positive_finite(settings.max_speed) ||
      !positive_finite(settings.waypoint_reach) || !(settings.avoidance_margin >= 0) ||
      !std::isfinite(settings.avoidance_margin) || !positive_finite(settings.obstacle_horizon) ||
      !(settings.keep_right >= 0) || !std::isfinite(settings.keep_right)) {
    throw Error(
        "", "crowd settings",
        "neighbour_distance, time_horizon, obstacle_horizon, radius, max_speed and "
        "waypoint_reach must be finite and > 0, avoidance_margin and keep_right finite and ≥ 0");
  }
  if (settings.max_neighbours < 1 || settings.max_neighbours > kMaxNeighbours) {
    throw Error("", "crowd settings", "max_neighbours must lie in 1 … 64");
  }
  if (nav_) measure_wall_distance();
}

void Crowd::measure_wall_distance() {
  // Distance from each cell's centre to the nearest closed cell's centre (outside the grid counts
  // as closed), by a two-pass chamfer transform: an estimate within 8 % of the Euclidean distance,
  // used only to skip the wall scan for agents far from any wall.
  const int w = nav_->width(), d = nav_->depth();
  const float c = static_cast<float>(nav_->cell_size()),
              diagonal = c * std::numbers::sqrt2_v<float>;
  wall_distance_.assign(static_cast<std::size_t>(w) * static_cast<std::size_t>(d), 0.0f);
  auto at = [&](int x, int z) -> float& {
    return wall_distance_[std::size_t(z) * std::size_t(w) + std::size_t(x)];
  };
  for (int z = 0; z < d; ++z) {
    for (int x = 0; x < w; ++x) {
      const float edge = c * static_cast<float>(std::min({x + 1, z + 1, w - x, d - z}));
      at(x, z) = nav_->open(x, z) ? edge : 0.0f;
    }
  }
  for (int z = 0; z < d; ++z) {
    for (int x = 0; x < w; ++x) {
      float& v = at(x, z);
      if (x > 0) v = std::min(v, at(x - 1, z) + c);
      if (z > 0) v = std::min(v, at(x, z - 1) + c);
      if (x > 0 && z > 0) v = std::min(v, at(x - 1, z - 1) + diagonal);
      if (x + 1 < w && z > 0) v = std::min(v, at(x + 1, z - 1) + diagonal);
    }
  }
  for (int z = d - 1; z >= 0; --z) {
    for (int x = w - 1; x >= 0; --x) {
      float& v = at(x, z);
      if (x + 1 < w) v = std::min(v, at(x + 1, z) + c);
      if (z + 1 < d) v = std::min(v, at(x, z + 1) + c);
      if (x + 1 < w && z + 1 < d) v = std::min(v, at(x + 1, z + 1) + diagonal);
      if (x > 0 && z + 1 < d) v = std::min(v, at(x - 1, z + 1) + diagonal);
    }
  }
}

int Crowd::wall_lines(std::size_t agent, std::span<OrcaLine> lines, float h) const noexcept {
  // Closed cells the agent could reach within the obstacle horizon, each a static disc inscribed
  // in its cell (an agent's centre on open cells stays outside it: clearance already widened
  // the walls by the radius); the nearest kMaxObstacles of them become hard half-planes.
  const Vec2f p = positions_[agent];
  const float speed = max_speeds_[agent];
  const float cell = static_cast<float>(nav_->cell_size());
  const float reach = speed * settings_.obstacle_horizon + cell;
  int cx, cz;
  if (!nav_->cell_of(Vec2(p), cx, cz)) return 0;
  // The chamfer estimate is at most 8 % above the true distance: skip only when clearly far.
  if (wall_distance_[std::size_t(cz) * std::size_t(nav_->width()) + std::size_t(cx)] * 0.9f - cell >
      reach) {
    return 0;
  }
  struct Wall {
    float distance_sq;
    Vec2f centre;
  };
  std::array<Wall, kMaxObstacles> nearest;
  int count = 0;
  const int span = static_cast<int>(std::ceil(reach / cell));
  const float limit = reach + 0.5f * cell;
  for (int z = cz - span; z <= cz + span; ++z) {
    for (int x = cx - span; x <= cx + span; ++x) {
      if (nav_->open(x, z)) continue;  // outside the grid counts as closed
      const Vec2f centre(nav_->centre(x, z));
      const float d_sq = length_squared(centre - p);
      if (d_sq >= limit * limit) continue;
      if (count == kMaxObstacles && d_sq >= nearest[count - 1].distance_sq) continue;
      int k = count < kMaxObstacles ? count++ : count - 1;
      for (; k > 0 && d_sq < nearest[k - 1].distance_sq; --k) nearest[k] = nearest[k - 1];
      nearest[k] = {d_sq, centre};
    }
  }
  const Vec2f v = velocities_[agent];
  for (int k = 0; k < count; ++k) {
    lines[k] = orca_half_plane(nearest[k].centre - p, v, v, 0.5f * cell, settings_.obstacle_horizon,
                               h, 1.0f);
  }
  return count;
}

Crowd::~Crowd() = default;
Crowd::Crowd(Crowd&&) noexcept = default;
Crowd& Crowd::operator=(Crowd&&) noexcept = default;

std::size_t Crowd::add_agent(Vec2f position, Vec2f goal, float radius, float max_speed) {
  const std::size_t agent = positions_.size();
  if (!is_finite(position) || !is_finite(goal)) {
    throw Error("", agent_place(agent), "the position or goal is not finite");
  }
  if (radius < 0 || !std::isfinite(radius) || max_speed < 0 || !std::isfinite(max_speed)) {
    throw Error("", agent_place(agent), "the radius and speed must be finite and ≥ 0 (0: default)");
  }
  positions_.push_back(position);
  velocities_.push_back({0, 0});
  next_velocities_.push_back({0, 0});
  goals_.push_back(goal);
  radii_.push_back(radius > 0 ? radius : settings_.radius);
  max_speeds_.push_back(max_speed > 0 ? max_speed : settings_.max_speed);
  paths_.emplace_back();
  next_waypoint_.push_back(0);
  try {
    plan(agent);
  } catch (...) {  // leave the crowd as it was
    positions_.pop_back();
    velocities_.pop_back();
    next_velocities_.pop_back();
    goals_.pop_back();
    radii_.pop_back();
    max_speeds_.pop_back();
    paths_.pop_back();
    next_waypoint_.pop_back();
    throw;
  }
  return agent;
}

void Crowd::set_goal(std::size_t agent, Vec2f goal) {
  if (agent >= size()) throw Error("", agent_place(agent), "there is no such agent");
  if (!is_finite(goal)) throw Error("", agent_place(agent), "the goal is not finite");
  const Vec2f previous = goals_[agent];
  goals_[agent] = goal;
  try {
    plan(agent);
  } catch (...) {
    goals_[agent] = previous;
    throw;
  }
}

void Crowd::plan(std::size_t agent) {
  next_waypoint_[agent] = 0;
  if (!nav_) {
    paths_[agent] = {goals_[agent]};
    return;
  }
  const Vec2 from(positions_[agent]), to(goals_[agent]);
  auto describe = [](Vec2 p) {
    return "(" + std::to_string(p.x) + ", " + std::to_string(p.y) + ")";
  };
  if (!nav_->walkable(from)) {
    throw Error("", agent_place(agent),
                "the position " + describe(from) + " is not on the navigation grid's open cells");
  }
  if (!nav_->walkable(to)) {
    throw Error("", agent_place(agent),
                "the goal " + describe(to) + " is not on the navigation grid's open cells");
  }
  const auto path = nav_->find_path(from, to, settings_.keep_right);
  if (!path) {
    throw Error(
        "", agent_place(agent),
        "no path on the navigation grid leads from " + describe(from) + " to " + describe(to));
  }
  store_path(agent, *path);
}

void Crowd::store_path(std::size_t agent, const std::vector<Vec2>& path) {
  // The path starts where the agent stands: its waypoints are the rest, the goal last.
  std::vector<Vec2f>& waypoints = paths_[agent];
  waypoints.clear();
  for (std::size_t k = 1; k < path.size(); ++k) waypoints.push_back(Vec2f(path[k]));
  if (waypoints.empty()) waypoints.push_back(goals_[agent]);
  next_waypoint_[agent] = 0;
}

std::span<const Vec2f> Crowd::path(std::size_t agent) const noexcept {
  return std::span<const Vec2f>(paths_[agent]).subspan(next_waypoint_[agent]);
}

bool Crowd::arrived(std::size_t agent) const noexcept {
  return length_squared(goals_[agent] - positions_[agent]) <= radii_[agent] * radii_[agent];
}

std::size_t Crowd::arrived_count() const noexcept {
  std::size_t count = 0;
  for (std::size_t i = 0; i < size(); ++i) count += arrived(i);
  return count;
}

Vec2f Crowd::preferred_velocity(std::size_t agent, float h) const noexcept {
  const std::vector<Vec2f>& waypoints = paths_[agent];
  const std::uint32_t k = next_waypoint_[agent];
  const Vec2f to = waypoints[k] - positions_[agent];
  const float distance = length(to);
  if (!(distance > 0)) return {0, 0};
  float speed = max_speeds_[agent];
  if (k + 1 == waypoints.size()) speed = std::min(speed, distance / h);  // stop on the goal
  return to * (speed / distance);
}

Vec2f Crowd::avoid(std::size_t agent, Vec2f preferred, float h, std::span<OrcaLine> lines,
                   std::span<OrcaLine> scratch) const noexcept {
  struct Near {
    float distance_sq;
    std::uint32_t agent, slot;
    bool operator<(const Near& o) const {
      return distance_sq < o.distance_sq || (distance_sq == o.distance_sq && agent < o.agent);
    }
  };
  std::array<Near, kMaxNeighbours> nearest;
  const int capacity = settings_.max_neighbours;
  int count = 0;
  const Vec2f p = positions_[agent];
  float range_sq = settings_.neighbour_distance * settings_.neighbour_distance;
  const Grid& grid = *grid_;
  auto consider = [&](std::uint32_t s) {
    const std::uint32_t other = grid.order[s];
    const float d_sq = length_squared(grid.position[s] - p);
    if (!(d_sq < range_sq) || other == agent) return;
    const Near candidate{d_sq, other, s};
    if (count == capacity && !(candidate < nearest[count - 1])) return;
    int at = count < capacity ? count++ : count - 1;
    for (; at > 0 && candidate < nearest[at - 1]; --at) nearest[at] = nearest[at - 1];
    nearest[at] = candidate;
    // Full: only agents nearer than the farthest kept can still enter.
    if (count == capacity) range_sq = std::nextafter(nearest[count - 1].distance_sq, INFINITY);
  };
  // The agent's own row first, then outward, each row only across the cells the (shrinking)
  // neighbourhood disc still reaches.
  const int row = grid.row(p.y);
  auto scan_row = [&](int y) {
    if (y < 0 || y >= grid.ny) return;
    const float band_lo = grid.y0 + static_cast<float>(y) * grid.cell;
    const float gap = std::max({band_lo - p.y, p.y - (band_lo + grid.cell), 0.0f});
    if (gap * gap >= range_sq) return;
    const float half_width = std::sqrt(range_sq - gap * gap);
    const std::size_t base = static_cast<std::size_t>(y) * static_cast<std::size_t>(grid.nx);
    const std::uint32_t begin = grid.cell_start[base + grid.column(p.x - half_width)];
    const std::uint32_t end = grid.cell_start[base + grid.column(p.x + half_width) + 1];
    for (std::uint32_t s = begin; s < end; ++s) consider(s);
  };
  scan_row(row);
  for (int k = 1; k <= grid.reach; ++k) {
    scan_row(row - k);
    scan_row(row + k);
  }

  // Walls first: hard lines, kept even when the agents' lines leave no room.
  const int walls = nav_ ? wall_lines(agent, lines, h) : 0;
  const Vec2f v = velocities_[agent];
  const float r = radii_[agent];
  const float margin = 2 * settings_.avoidance_margin;
  for (int j = 0; j < count; ++j) {
    const std::uint32_t s = nearest[j].slot;
    lines[walls + j] = orca_half_plane(grid.position[s] - p, v - grid.velocity[s], v,
                                       r + grid.radius[s] + margin, settings_.time_horizon, h);
  }
  return solve_orca(lines.first(walls + count), preferred, max_speeds_[agent], scratch,
                    static_cast<std::size_t>(walls));
}

Vec2f Crowd::slide(Vec2f from, Vec2f to) const noexcept {
  if (!nav_ || nav_->walkable(Vec2(to))) return to;
  const Vec2f along_x{to.x, from.y}, along_y{from.x, to.y};
  if (nav_->walkable(Vec2(along_x))) return along_x;
  if (nav_->walkable(Vec2(along_y))) return along_y;
  return from;
}

void Crowd::advance_waypoints(std::size_t agent) noexcept {
  const std::vector<Vec2f>& waypoints = paths_[agent];
  std::uint32_t& k = next_waypoint_[agent];
  const float reach_sq = settings_.waypoint_reach * settings_.waypoint_reach;
  while (k + 1 < waypoints.size() && length_squared(waypoints[k] - positions_[agent]) < reach_sq) {
    ++k;
  }
}

void Crowd::step(float h) {
  if (!(h > 0) || !std::isfinite(h) || positions_.empty()) return;
  // Cells half a neighbourhood wide: a neighbourhood spans about 2 × 2 of them instead of 3 × 3
  // cells as wide as it (fewer agents looked at), and the scan skips what its disc cannot reach.
  grid_->build(positions_, velocities_, radii_, 0.5f * settings_.neighbour_distance,
               settings_.neighbour_distance);
  const std::uint32_t step_index = parallel_->steps++;
  const std::size_t n = size();
  auto run = [&](std::size_t block) {
    // ORCA lines for the block's agents, made once a block (not zeroed once an agent).
    constexpr int kLines = kMaxNeighbours + kMaxObstacles;
    std::array<OrcaLine, 2 * kLines> buffer;
    const std::span<OrcaLine> lines(buffer.data(), kLines);
    const std::span<OrcaLine> scratch(buffer.data() + kLines, kLines);
    const std::size_t end = std::min(n, (block + 1) * kBlock);
    for (std::size_t s = block * kBlock; s < end; ++s) {
      const std::size_t i = grid_->order[s];  // in cell order: neighbours stay in cache
      const Vec2f v = avoid(i, preferred_velocity(i, h), h, lines, scratch);
      const Vec2f from = positions_[i];
      const Vec2f to = slide(from, from + v * h);
      next_velocities_[i] = (to - from) / h;
      positions_[i] = to;
      advance_waypoints(i);
      // Pushed round a corner, the waypoint can fall out of sight: check now and then, and plan
      // again from here (the goal itself stays reachable: the agent stands on an open cell).
      if (nav_ && (step_index + i) % kReplanEvery == 0 &&
          !nav_->line_of_sight(Vec2(to), Vec2(paths_[i][next_waypoint_[i]]))) {
        if (auto path = nav_->find_path(Vec2(to), Vec2(goals_[i]), settings_.keep_right)) {
          store_path(i, *path);
        }
      }
    }
  };
  const std::size_t blocks = (n + kBlock - 1) / kBlock;
  if (blocks == 1) {
    run(0);
  } else {
    parallel_->arena.execute(
        [&] { tbb::parallel_for(std::size_t(0), blocks, [&](std::size_t b) { run(b); }); });
  }
  velocities_.swap(next_velocities_);
}

float Crowd::max_overlap() const {
  if (size() < 2) return 0;
  Grid grid;
  const float max_radius = *std::max_element(radii_.begin(), radii_.end());
  grid.build(positions_, velocities_, radii_, 2 * max_radius, 2 * max_radius);
  float worst = 0;
  for (std::size_t s = 0; s < size(); ++s) {
    const Vec2f p = grid.position[s];
    const float r = grid.radius[s];
    grid.for_each_near(p, [&](std::uint32_t t) {
      if (t <= s) return;  // each pair once
      const float reach = r + grid.radius[t];
      const float d_sq = length_squared(grid.position[t] - p);
      if (d_sq >= reach * reach) return;
      worst = std::max(worst, (reach - std::sqrt(d_sq)) / std::min(r, grid.radius[t]));
    });
  }
  return worst;
}

}  // namespace kinema
