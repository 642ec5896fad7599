// Boids: Reynolds' three rules on the worked flock (cohesion (1, 1), alignment (0, 0.5),
// separation (−1, 1), sum (0, 2.5), v′ = (1, 0.25), p′ = (0.1, 0.025)), the grid finding the
// same mates as every pair, the clamps, the same bits whatever the thread count, 48 scattered
// boids flying as one aligned flock by 16 s, and bad input refused.
#include "kinema/procedural/boids.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <random>

#include "kinema/core/error.h"

namespace kinema {
namespace {

Flock worked_flock() {
  // Boid 0 at the origin heading +x; 1–4 within the radius of 3, 3 within the separation radius
  // of 1, 5 outside.
  std::vector<Vec3> p{{0, 0, 0}, {2, 1, 0}, {1, 2, 0}, {0.5, -0.5, 0}, {0.5, 1.5, 0}, {4, 3, 0}};
  std::vector<Vec3> v{{1, 0, 0}, {1, 1, 0}, {0, 1, 0}, {1, -1, 0}, {2, 1, 0}, {0, -1, 0}};
  BoidSettings s;
  s.dimensions = 2;
  s.neighbour_radius = 3;
  s.separation_radius = 1;
  return Flock(p, v, s);
}

void expect_vec(const Vec3& a, const Vec3& b, double tolerance = 1e-15) {
  EXPECT_NEAR(a.x, b.x, tolerance);
  EXPECT_NEAR(a.y, b.y, tolerance);
  EXPECT_NEAR(a.z, b.z, tolerance);
}

TEST(Boids, WorkedStepOfBoidZero) {
  Flock flock = worked_flock();
  const BoidSteering s = flock.steering(0);
  EXPECT_EQ(s.neighbours, 4u);           // boid 5 at √25 = 5 is not a mate
  expect_vec(s.cohesion, {1, 1, 0});     // centre (1, 1) minus (0, 0)
  expect_vec(s.alignment, {0, 0.5, 0});  // mean velocity (1, 0.5) minus (1, 0)
  expect_vec(s.separation, {-1, 1, 0});  // (−0.5, 0.5) / 0.5 from boid 3 only
  expect_vec(s.total, {0, 2.5, 0});      // all weights 1: straight up
  flock.step(0.1);
  expect_vec(flock.velocities()[0], {1, 0.25, 0});    // v′ = v + h·a
  expect_vec(flock.positions()[0], {0.1, 0.025, 0});  // p′ = p + h·v′
  // A turn of atan(0.25) ≈ 14° to the left.
  EXPECT_NEAR(std::atan2(flock.velocities()[0].y, flock.velocities()[0].x) * 180 / std::numbers::pi,
              14.04, 0.01);
}

Flock random_flock(std::size_t n, double side, int dimensions, std::uint32_t seed,
                   BoidSettings s = {}) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<Vec3> p(n), v(n);
  for (std::size_t i = 0; i < n; ++i) {
    p[i] = {side * u(rng), side * u(rng), dimensions == 3 ? side * u(rng) : 0};
    const double heading = 2 * std::numbers::pi * u(rng);
    v[i] = {2 * std::cos(heading), 2 * std::sin(heading), dimensions == 3 ? u(rng) - 0.5 : 0};
  }
  s.dimensions = dimensions;
  return Flock(p, v, s);
}

TEST(Boids, GridFindsTheSameMatesAsEveryPair) {
  // 2,000 boids in 2-D and 3-D, 20 steps each way: the grid's sums run in another order, so the
  // two agree to rounding, and every mate count agrees exactly.
  for (int dimensions : {2, 3}) {
    const BoidSettings s = classic_boid_settings(dimensions);
    Flock grid = random_flock(2000, 30, dimensions, 11, s);
    Flock pairs = random_flock(2000, 30, dimensions, 11, s);
    for (std::size_t i = 0; i < 2000; i += 97) {
      const BoidSteering a = grid.steering(i);
      EXPECT_GT(a.neighbours, 0u);
    }
    for (int step = 0; step < 20; ++step) {
      grid.step(0.05);
      pairs.step_all_pairs(0.05);
    }
    double largest = 0;
    for (std::size_t i = 0; i < grid.size(); ++i)
      largest = std::max(largest, length(grid.positions()[i] - pairs.positions()[i]));
    EXPECT_LT(largest, 1e-9) << dimensions << "-D";
  }
}

TEST(Boids, ClampsHoldSpeedAndTurn) {
  // Speeds stay in [1.5, 3]; no boid turns more than 90°/s · h in a step.
  BoidSettings s;
  s.min_speed = 1.5;
  s.max_speed = 3;
  s.max_turn_rate = std::numbers::pi / 2;
  s.separation_weight = 5;
  Flock flock = random_flock(500, 10, 3, 5, s);
  for (int step = 0; step < 100; ++step) {
    const std::vector<Vec3> before(flock.velocities().begin(), flock.velocities().end());
    flock.step(0.05);
    for (std::size_t i = 0; i < flock.size(); ++i) {
      const Vec3 v = flock.velocities()[i];
      EXPECT_GE(length(v), 1.5 - 1e-12);
      EXPECT_LE(length(v), 3 + 1e-12);
      const double turn =
          std::acos(std::clamp(dot(v, before[i]) / (length(v) * length(before[i])), -1.0, 1.0));
      EXPECT_LE(turn, std::numbers::pi / 2 * 0.05 + 1e-9);
    }
  }
}

TEST(Boids, SameBitsWhateverTheThreadCount) {
  std::vector<std::vector<Vec3>> results;
  for (int threads : {1, 2, 4}) {
    BoidSettings s;
    s.threads = threads;
    Flock flock = random_flock(3000, 25, 3, 9, s);
    for (int step = 0; step < 10; ++step) flock.step(0.05);
    results.emplace_back(flock.positions().begin(), flock.positions().end());
  }
  EXPECT_EQ(results[0], results[1]);
  EXPECT_EQ(results[0], results[2]);
}

TEST(Boids, FortyEightScatteredBoidsFlyAsOneFlockBy16Seconds) {
  // 48 boids, radii 3 and 1, weights 1.5 / 1 / 0.6 (separation, alignment, cohesion), speeds
  // within [1.5, 3], h = 0.05 s, semi-implicit Euler, scattered with random headings over a
  // periodic 7 m square (the classic wrap-around world: in an unbounded one the groups that
  // split off at the start fly apart for good). For ten different scatters: no common heading at
  // first; by 16 s one flock, all heading one way, no two boids on top of each other.
  for (std::uint32_t seed = 1; seed <= 10; ++seed) {
    BoidSettings s = classic_boid_settings(2);
    EXPECT_EQ(s.separation_weight, 1.5);
    EXPECT_EQ(s.cohesion_weight, 0.6);
    s.wrap_size = 7;
    Flock flock = random_flock(48, 7, 2, seed, s);
    EXPECT_LT(flock.alignment_order(), 0.5) << "scatter " << seed;
    for (int step = 0; step < 320; ++step) flock.step(0.05);
    EXPECT_GT(flock.alignment_order(), 0.95) << "scatter " << seed;
    EXPECT_EQ(flock.flock_count(), 1u) << "scatter " << seed;
    double closest = 1e9;
    for (std::size_t i = 0; i < flock.size(); ++i)
      for (std::size_t j = i + 1; j < flock.size(); ++j)
        closest = std::min(closest, length(flock.positions()[i] - flock.positions()[j]));
    EXPECT_GT(closest, 0.1) << "scatter " << seed;
  }
}

TEST(Boids, PeriodicWorldSeesMatesAcrossTheSeam) {
  // Two boids 0.5 m apart across the seam of a 10 m world are mates, 0.5 m apart: separation
  // pushes each away from the other across it, and a step keeps both inside the world.
  BoidSettings s;
  s.dimensions = 2;
  s.wrap_size = 10;
  Flock flock({{9.8, 5, 0}, {0.3, 5, 0}}, {{1, 0, 0}, {1, 0, 0}}, s);
  const BoidSteering a = flock.steering(0);
  EXPECT_EQ(a.neighbours, 1u);
  expect_vec(a.separation, {-2, 0, 0}, 1e-12);  // (−0.5, 0) / 0.25
  expect_vec(a.cohesion, {0.5, 0, 0}, 1e-12);
  flock.step(0.5);
  for (const Vec3& p : flock.positions()) {
    EXPECT_GE(p.x, 0);
    EXPECT_LT(p.x, 10);
  }
}

TEST(Boids, RefusesBadInput) {
  BoidSettings s;
  EXPECT_THROW(Flock({{0, 0, 0}}, {}, s), Error);
  EXPECT_THROW(Flock({{0, 0, NAN}}, {{0, 0, 0}}, s), Error);
  s.dimensions = 2;
  EXPECT_THROW(Flock({{0, 0, 1}}, {{0, 0, 0}}, s), Error);
  s.dimensions = 4;
  EXPECT_THROW(Flock({{0, 0, 0}}, {{0, 0, 0}}, s), Error);
  s = {};
  s.separation_radius = 5;
  EXPECT_THROW(Flock({{0, 0, 0}}, {{0, 0, 0}}, s), Error);
  s = {};
  s.min_speed = 3;
  s.max_speed = 2;
  EXPECT_THROW(Flock({{0, 0, 0}}, {{0, 0, 0}}, s), Error);
  s = {};
  s.wrap_size = 5;  // narrower than twice the neighbour radius of 3
  EXPECT_THROW(Flock({{0, 0, 0}}, {{0, 0, 0}}, s), Error);
  Flock ok({{0, 0, 0}}, {{1, 0, 0}}, BoidSettings{});
  EXPECT_THROW(ok.step(0), Error);
  EXPECT_THROW(ok.steering(3), Error);
}

}  // namespace
}  // namespace kinema
