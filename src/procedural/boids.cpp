// Boids (kinema/procedural/boids.h): the rules, the grid and the step.
#include "kinema/procedural/boids.h"

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>

#include "kinema/core/error.h"

namespace kinema {

namespace {

constexpr const char* kPlace = "boids";
constexpr std::size_t kBlock = 512;  ///< boids per parallel task

void require(bool ok, const std::string& reason) {
  if (!ok) throw Error({}, kPlace, reason);
}

/// v turned toward `to` by at most `angle` radians (in the plane of the two; a 2-D flock turns
/// in the xy-plane when `to` points straight back).
Vec3 turn_toward(const Vec3& v, const Vec3& to, double angle, bool planar) {
  const double lv = length(v), lt = length(to);
  if (!(lv > 0) || !(lt > 0)) return to;
  const Vec3 a = v / lv, b = to / lt;
  const double between = std::acos(std::clamp(dot(a, b), -1.0, 1.0));
  if (between <= angle) return to;
  // The unit vector in the plane, perpendicular to a, on b's side.
  Vec3 side = b - a * dot(a, b);
  const double ls = length(side);
  if (!(ls > 1e-12))  // straight back: turn either way
    side = planar ? Vec3{-a.y, a.x, 0} : any_perpendicular(a);
  else
    side = side / ls;
  return (a * std::cos(angle) + side * std::sin(angle)) * lt;
}

/// p moved into [0, size) along each simulated axis.
Vec3 wrapped(Vec3 p, double size, int dimensions) {
  auto into = [size](double x) {
    const double r = x - size * std::floor(x / size);
    return r < size ? r : 0.0;  // x just below 0 can round to size itself
  };
  p.x = into(p.x);
  p.y = into(p.y);
  if (dimensions == 3) p.z = into(p.z);
  return p;
}

}  // namespace

/// A uniform grid hashed into a table twice the flock's size. Each step the boids are sorted by
/// bucket (a counting sort, stable: a bucket lists its boids in index order) with copies of their
/// positions, velocities and cell keys in that order, so that looking at a cell's boids reads
/// memory in a row. A bucket may also hold far cells that hash alike: a boid counts for a cell
/// only when its key is that cell's.
struct Flock::Grid {
  double cell = 1;
  int dimensions = 3;
  std::int64_t wrap_cells = 0;  ///< > 0: cells per side of a periodic world
  std::size_t buckets = 1;
  int bucket_bits = 0;
  std::vector<std::uint32_t> start, order;
  std::vector<std::uint64_t> key;        ///< per sorted boid: its cell
  std::vector<Vec3> position, velocity;  ///< per sorted boid

  std::array<std::int64_t, 3> cell_of(const Vec3& p) const {
    return {std::int64_t(std::floor(p.x / cell)), std::int64_t(std::floor(p.y / cell)),
            dimensions == 3 ? std::int64_t(std::floor(p.z / cell)) : 0};
  }
  /// A cell's key: its coordinates (wrapped in a periodic world), 21 bits each.
  std::uint64_t key_of(std::array<std::int64_t, 3> c) const {
    if (wrap_cells > 0)
      for (std::int64_t& k : c) k = ((k % wrap_cells) + wrap_cells) % wrap_cells;
    constexpr std::uint64_t mask = (std::uint64_t(1) << 21) - 1;
    return (std::uint64_t(c[0]) & mask) | (std::uint64_t(c[1]) & mask) << 21 |
           (std::uint64_t(c[2]) & mask) << 42;
  }
  /// Fibonacci hashing: the top bits of the key times 2⁶⁴/φ.
  std::size_t bucket_of(std::uint64_t k) const {
    return bucket_bits == 0 ? 0 : std::size_t((k * 0x9E3779B97F4A7C15ull) >> (64 - bucket_bits));
  }
  void build(std::span<const Vec3> positions, std::span<const Vec3> velocities) {
    const std::size_t n = positions.size();
    buckets = 1;
    bucket_bits = 0;
    while (buckets < 2 * n) buckets *= 2, ++bucket_bits;
    start.assign(buckets + 1, 0);
    std::vector<std::uint64_t> keys(n);
    for (std::size_t i = 0; i < n; ++i) {
      keys[i] = key_of(cell_of(positions[i]));
      ++start[bucket_of(keys[i]) + 1];
    }
    for (std::size_t b = 0; b < buckets; ++b) start[b + 1] += start[b];
    order.resize(n);
    key.resize(n);
    position.resize(n);
    velocity.resize(n);
    std::vector<std::uint32_t> fill(start.begin(), start.end() - 1);
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint32_t k = fill[bucket_of(keys[i])]++;
      order[k] = std::uint32_t(i);
      key[k] = keys[i];
      position[k] = positions[i];
      velocity[k] = velocities[i];
    }
  }
  /// The buckets of the cells around a cell (each cell once), and those cells' keys.
  struct Neighbourhood {
    std::uint64_t key = ~std::uint64_t(0);  ///< the cell they surround
    std::size_t count = 0;
    std::array<std::uint64_t, 27> cell_key{};
    std::array<std::uint32_t, 27> begin{}, end{};
  };
  void surround(const Vec3& p, Neighbourhood& out) const {
    const auto c = cell_of(p);
    out.key = key_of(c);
    out.count = 0;
    const int dz = dimensions == 3 ? 1 : 0;
    for (int z = -dz; z <= dz; ++z)
      for (int y = -1; y <= 1; ++y)
        for (int x = -1; x <= 1; ++x) {
          const std::uint64_t k = key_of({c[0] + x, c[1] + y, c[2] + z});
          // In a periodic world under three cells wide, neighbours wrap onto the same cell.
          if (std::find(out.cell_key.begin(), out.cell_key.begin() + long(out.count), k) !=
              out.cell_key.begin() + long(out.count))
            continue;
          const std::size_t b = bucket_of(k);
          out.cell_key[out.count] = k;
          out.begin[out.count] = start[b];
          out.end[out.count++] = start[b + 1];
        }
  }
  /// Calls f(j, position, velocity, in_cell) for every boid j in the neighbourhood's buckets;
  /// in_cell is false for a boid of another cell that hashes alike.
  template <class F>
  void for_each_near(const Neighbourhood& hood, const F& f) const {
    for (std::size_t c = 0; c < hood.count; ++c)
      for (std::uint32_t m = hood.begin[c]; m < hood.end[c]; ++m)
        f(order[m], position[m], velocity[m], key[m] == hood.cell_key[c]);
  }
  template <class F>
  void for_each_near(const Vec3& p, const F& f) const {
    Neighbourhood hood;
    surround(p, hood);
    for_each_near(hood, f);
  }
};

BoidSettings classic_boid_settings(int dimensions) {
  BoidSettings s;
  s.separation_weight = 1.5;
  s.alignment_weight = 1;
  s.cohesion_weight = 0.6;
  s.min_speed = 1.5;
  s.max_speed = 3;
  s.dimensions = dimensions;
  return s;
}

/// The threads a flock runs on, made once (an arena per step cost its set-up every time).
struct Flock::Parallel {
  tbb::task_arena arena;
  explicit Parallel(int threads) : arena(threads > 0 ? threads : tbb::task_arena::automatic) {}
};

Flock::Flock(std::vector<Vec3> positions, std::vector<Vec3> velocities, BoidSettings settings)
    : settings_(settings),
      positions_(std::move(positions)),
      velocities_(std::move(velocities)),
      grid_(std::make_unique<Grid>()),
      parallel_(std::make_unique<Parallel>(settings.threads)) {
  const BoidSettings& s = settings_;
  require(positions_.size() == velocities_.size(),
          "a flock needs one velocity per position (" + std::to_string(positions_.size()) +
              " positions, " + std::to_string(velocities_.size()) + " velocities)");
  require(s.dimensions == 2 || s.dimensions == 3, "dimensions must be 2 or 3");
  require(s.neighbour_radius > 0 && std::isfinite(s.neighbour_radius),
          "the neighbour radius must be positive and finite");
  require(s.separation_radius >= 0 && s.separation_radius <= s.neighbour_radius,
          "the separation radius must be within [0, neighbour radius]");
  require(s.separation_weight >= 0 && s.alignment_weight >= 0 && s.cohesion_weight >= 0 &&
              std::isfinite(s.separation_weight + s.alignment_weight + s.cohesion_weight),
          "the weights must be finite and ≥ 0");
  require(s.min_speed >= 0 && s.min_speed <= s.max_speed,
          "speeds must satisfy 0 ≤ min_speed ≤ max_speed");
  require(s.max_turn_rate > 0, "the turn rate must be positive");
  for (std::size_t i = 0; i < positions_.size(); ++i) {
    require(is_finite(positions_[i]) && is_finite(velocities_[i]),
            "boid " + std::to_string(i) + " is not finite");
    require(s.dimensions == 3 || (positions_[i].z == 0 && velocities_[i].z == 0),
            "boid " + std::to_string(i) + " leaves the plane of a 2-D flock (z ≠ 0)");
  }
  require(s.wrap_size >= 0 && std::isfinite(s.wrap_size), "the wrap size must be ≥ 0 and finite");
  require(s.wrap_size == 0 || s.wrap_size >= 2 * s.neighbour_radius,
          "a periodic world must be at least twice the neighbour radius wide");
  grid_->dimensions = s.dimensions;
  grid_->cell = s.neighbour_radius;
  if (s.wrap_size > 0) {
    // Whole cells across the world, each at least a neighbour radius wide.
    grid_->wrap_cells = std::max<std::int64_t>(1, std::int64_t(s.wrap_size / s.neighbour_radius));
    grid_->cell = s.wrap_size / double(grid_->wrap_cells);
    for (Vec3& p : positions_) p = wrapped(p, s.wrap_size, s.dimensions);
  }
}

Flock::~Flock() = default;
Flock::Flock(Flock&&) noexcept = default;
Flock& Flock::operator=(Flock&&) noexcept = default;

inline Vec3 Flock::displacement(const Vec3& from, const Vec3& to) const {
  Vec3 d = to - from;
  const double size = settings_.wrap_size;
  if (size > 0) {
    d.x -= size * std::round(d.x / size);
    d.y -= size * std::round(d.y / size);
    d.z -= size * std::round(d.z / size);
  }
  return d;
}

template <class ForEachMate>
BoidSteering Flock::steer(std::size_t i, const ForEachMate& for_each_mate) const {
  const BoidSettings& s = settings_;
  const Vec3 p = positions_[i], v = velocities_[i];
  const double seen2 = s.neighbour_radius * s.neighbour_radius;
  const double close2 = s.separation_radius * s.separation_radius;
  BoidSteering out;
  Vec3 centre{0, 0, 0}, heading{0, 0, 0};
  // `candidate` is false for a boid of another cell that shares the grid's bucket.
  for_each_mate([&](std::uint32_t j, const Vec3& position, const Vec3& velocity, bool candidate) {
    if (!candidate || j == i) return;
    const Vec3 away = displacement(position, p);
    const double d2 = length_squared(away);
    if (!(d2 < seen2)) return;
    ++out.neighbours;
    centre += p - away;  // the mate where it is seen from here (across the seam if nearer)
    heading += velocity;
    // Inverse-square weighting: the direction away over the distance, over the distance again.
    if (d2 < close2 && d2 > 0) out.separation += away / d2;
  });
  if (out.neighbours > 0) {
    const double inverse = 1.0 / double(out.neighbours);
    out.cohesion = centre * inverse - p;
    out.alignment = heading * inverse - v;
  }
  out.total = out.separation * s.separation_weight + out.alignment * s.alignment_weight +
              out.cohesion * s.cohesion_weight;
  return out;
}

BoidSteering Flock::steering(std::size_t i) const {
  require(i < positions_.size(), "no boid " + std::to_string(i));
  return steer(i, [&](const auto& f) {
    for (std::size_t j = 0; j < positions_.size(); ++j)
      f(std::uint32_t(j), positions_[j], velocities_[j], true);
  });
}

Vec3 Flock::steered_velocity(std::size_t i, const Vec3& acceleration, double h) const {
  const BoidSettings& s = settings_;
  const Vec3 v = velocities_[i];
  Vec3 next = v + acceleration * h;
  if (std::isfinite(s.max_turn_rate))
    next = turn_toward(v, next, s.max_turn_rate * h, s.dimensions == 2);
  const double speed = length(next);
  if (speed > s.max_speed) {
    next = next * (s.max_speed / speed);
  } else if (speed < s.min_speed) {
    // Too slow: speed up along the heading (or the old one, or +x, when there is none).
    const Vec3 direction = speed > 0 ? next / speed : length(v) > 0 ? v / length(v) : Vec3{1, 0, 0};
    next = direction * s.min_speed;
  }
  return next;
}

void Flock::advance(double h, bool use_grid) {
  require(h > 0 && std::isfinite(h), "the step must be positive and finite");
  const std::size_t n = positions_.size();
  if (use_grid) grid_->build(positions_, velocities_);
  next_velocities_.resize(n);
  // With the grid, the boids go in the grid's order: the boids of a cell one after another share
  // the 27 cells around them, looked up once.
  auto run = [&](std::size_t begin, std::size_t end) {
    Grid::Neighbourhood hood;
    for (std::size_t k = begin; k < end; ++k) {
      if (!use_grid) {
        const BoidSteering steering = steer(k, [&](const auto& f) {
          for (std::size_t j = 0; j < n; ++j)
            f(std::uint32_t(j), positions_[j], velocities_[j], true);
        });
        next_velocities_[k] = steered_velocity(k, steering.total, h);
        continue;
      }
      const std::size_t i = grid_->order[k];
      if (grid_->key[k] != hood.key) grid_->surround(positions_[i], hood);
      const BoidSteering steering = steer(i, [&](const auto& f) { grid_->for_each_near(hood, f); });
      next_velocities_[i] = steered_velocity(i, steering.total, h);
    }
  };
  if (settings_.threads == 1 || n <= kBlock) {
    run(0, n);
  } else {
    parallel_->arena.execute([&] {
      tbb::parallel_for(std::size_t(0), (n + kBlock - 1) / kBlock,
                        [&](std::size_t b) { run(b * kBlock, std::min(n, (b + 1) * kBlock)); });
    });
  }
  velocities_.swap(next_velocities_);
  for (std::size_t i = 0; i < n; ++i) {
    positions_[i] += velocities_[i] * h;
    if (settings_.wrap_size > 0)
      positions_[i] = wrapped(positions_[i], settings_.wrap_size, settings_.dimensions);
  }
}

void Flock::step(double h) { advance(h, true); }
void Flock::step_all_pairs(double h) { advance(h, false); }

double Flock::alignment_order() const {
  if (velocities_.empty()) return 0;
  Vec3 sum{0, 0, 0};
  for (const Vec3& v : velocities_) {
    const double speed = length(v);
    if (speed > 0) sum += v / speed;
  }
  return length(sum) / double(velocities_.size());
}

std::size_t Flock::flock_count() const {
  const std::size_t n = positions_.size();
  std::vector<std::uint32_t> parent(n);
  for (std::size_t i = 0; i < n; ++i) parent[i] = std::uint32_t(i);
  auto root = [&](std::uint32_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  };
  Grid grid = *grid_;
  grid.build(positions_, velocities_);
  const double seen2 = settings_.neighbour_radius * settings_.neighbour_radius;
  for (std::size_t i = 0; i < n; ++i)
    grid.for_each_near(positions_[i], [&](std::uint32_t j, const Vec3&, const Vec3&, bool in_cell) {
      if (in_cell && length_squared(positions_[i] - positions_[j]) < seen2)
        parent[root(std::uint32_t(i))] = root(j);
    });
  std::size_t groups = 0;
  for (std::size_t i = 0; i < n; ++i) groups += root(std::uint32_t(i)) == i;
  return groups;
}

}  // namespace kinema
