// Boids: one 60 Hz step of a 3-D flock at a fixed density (about 15 mates in the 3 m neighbour
// radius), with the uniform grid and with every pair (the O(n²) loop the grid replaces), for
// 1,000 to 100,000 boids; boids per second as a counter. Threads: 1 unless the argument says.
#include <benchmark/benchmark.h>

#include <cmath>
#include <numbers>
#include <random>

#include "kinema/procedural/boids.h"

namespace kinema {
namespace {

Flock make_flock(std::size_t n, int threads) {
  // The side that puts ~15 mates in a sphere of radius 3 (volume 113 m³): 7.5 boids per 100 m³.
  const double side = std::cbrt(double(n) / 0.133);
  std::mt19937 rng(42);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<Vec3> p(n), v(n);
  for (std::size_t i = 0; i < n; ++i) {
    p[i] = {side * u(rng), side * u(rng), side * u(rng)};
    const double heading = 2 * std::numbers::pi * u(rng);
    v[i] = {2 * std::cos(heading), 2 * std::sin(heading), u(rng) - 0.5};
  }
  BoidSettings s = classic_boid_settings(3);
  s.threads = threads;
  return Flock(std::move(p), std::move(v), s);
}

void BM_BoidsGrid(benchmark::State& state) {
  Flock flock = make_flock(std::size_t(state.range(0)), int(state.range(1)));
  for (auto _ : state) flock.step(1.0 / 60);
  state.counters["boids_per_s"] = benchmark::Counter(
      double(state.iterations()) * double(flock.size()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_BoidsGrid)
    ->ArgNames({"boids", "threads"})
    ->Args({1000, 1})
    ->Args({10000, 1})
    ->Args({100000, 1})
    ->Args({100000, 2})
    ->Unit(benchmark::kMillisecond);

void BM_BoidsAllPairs(benchmark::State& state) {
  Flock flock = make_flock(std::size_t(state.range(0)), 1);
  for (auto _ : state) flock.step_all_pairs(1.0 / 60);
  state.counters["boids_per_s"] = benchmark::Counter(
      double(state.iterations()) * double(flock.size()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_BoidsAllPairs)
    ->ArgNames({"boids"})
    ->Arg(1000)
    ->Arg(10000)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace kinema
BENCHMARK_MAIN();
