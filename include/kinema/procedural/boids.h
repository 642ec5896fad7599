// kinema/procedural/boids.h — flocks after Reynolds (1987), "Flocks, Herds, and Schools: A
// Distributed Behavioral Model": each boid sees only its flock-mates within a radius and steers by
// three rules, in Reynolds' order of priority —
//   separation: away from mates closer than the separation radius, Σ (p − pⱼ)/|p − pⱼ|² (each
//               weighted by its inverse squared distance);
//   alignment:  toward the mates' mean velocity, v̄ − v;
//   cohesion:   toward the mates' centre, p̄ − p.
// The weighted sum is an acceleration, integrated by semi-implicit Euler (v′ = v + h·a, then
// p′ = p + h·v′), with the speed kept within [min_speed, max_speed] and the turn per step within
// max_turn_rate·h. There is no leader and no boid knows the flock's shape: flocking emerges.
//
// Neighbours come from a uniform grid of cells one neighbour radius wide (27 cells in 3-D, 9 in
// 2-D), not from every other boid (n² pairs). A step is parallel (oneTBB) and has the same bits
// whatever the thread count: every boid reads the last step's state only. Units: metres, seconds.
#pragma once

#include <cstddef>
#include <limits>
#include <memory>
#include <span>
#include <vector>

#include "kinema/math/vec3.h"

namespace kinema {

struct BoidSettings {
  double neighbour_radius = 3;   ///< m: mates within this are seen (strictly closer)
  double separation_radius = 1;  ///< m: mates closer than this are too close
  double separation_weight = 1, alignment_weight = 1, cohesion_weight = 1;
  double min_speed = 0;                                            ///< m/s
  double max_speed = std::numeric_limits<double>::infinity();      ///< m/s
  double max_turn_rate = std::numeric_limits<double>::infinity();  ///< rad/s
  /// 2: boids move in the xy-plane (z stays 0; the grid is 2-D); 3: in space.
  int dimensions = 3;
  /// > 0: a periodic world, a square or cube this many metres wide from the origin — a boid
  /// leaving one side comes back at the other and sees mates across the seam (the classic
  /// demo's wrap-around, where groups that split meet again). 0: unbounded.
  double wrap_size = 0;
  int threads = 0;  ///< 0: all cores; the result does not depend on it
};

/// The classic demo's flock: radii 3 and 1 m, weights 1.5 / 1 / 0.6 (separation, alignment,
/// cohesion), speeds within [1.5, 3] m/s, in `dimensions`.
BoidSettings classic_boid_settings(int dimensions = 2);

/// The three rules for one boid, and their weighted sum (an acceleration, m/s²).
struct BoidSteering {
  Vec3 separation{0, 0, 0}, alignment{0, 0, 0}, cohesion{0, 0, 0}, total{0, 0, 0};
  std::size_t neighbours = 0;  ///< mates seen
};

class Flock {
 public:
  /// One position (m) and one velocity (m/s) per boid, finite (2-D: z = 0); in a periodic world
  /// the positions are wrapped into it. Throws kinema::Error
  /// for mismatched counts, non-finite values, a non-positive neighbour radius, a separation
  /// radius beyond it, negative weights, min_speed > max_speed, dimensions other than 2 and 3, a
  /// periodic world narrower than twice the neighbour radius.
  Flock(std::vector<Vec3> positions, std::vector<Vec3> velocities, BoidSettings settings);
  ~Flock();
  Flock(Flock&&) noexcept;
  Flock& operator=(Flock&&) noexcept;

  /// Boid i's steering from the current state, found by looking at every other boid (the
  /// definition; step() finds the same mates through the grid).
  BoidSteering steering(std::size_t i) const;

  /// Advances h seconds (h > 0 and finite) with the grid's neighbours.
  void step(double h);
  /// The same step looking at every pair (O(n²)): the reference step() is measured against.
  void step_all_pairs(double h);

  std::span<const Vec3> positions() const { return positions_; }
  std::span<const Vec3> velocities() const { return velocities_; }
  const BoidSettings& settings() const { return settings_; }
  std::size_t size() const { return positions_.size(); }

  /// How aligned the flock flies: |Σ v/|v|| / n, 1 when every boid heads the same way, near 0
  /// for random headings (boids at rest count as no heading).
  double alignment_order() const;
  /// The groups of boids linked through mates within the neighbour radius (1: one flock).
  std::size_t flock_count() const;

 private:
  struct Grid;
  struct Parallel;  ///< the oneTBB arena, made once (src/procedural/boids.cpp)
  Vec3 displacement(const Vec3& from, const Vec3& to) const;  ///< to − from, across the seam
  template <class ForEachMate>
  BoidSteering steer(std::size_t i, const ForEachMate& for_each_mate) const;
  Vec3 steered_velocity(std::size_t i, const Vec3& acceleration, double h) const;
  void advance(double h, bool use_grid);

  BoidSettings settings_;
  std::vector<Vec3> positions_, velocities_, next_velocities_;
  std::unique_ptr<Grid> grid_;
  std::unique_ptr<Parallel> parallel_;
};

}  // namespace kinema
