// Rigid bodies: kinema's RigidWorld on the scenes of bench/rigid_bench.h — a pyramid of 105
// boxes at rest, a 50-link chain released horizontally, 1,000 mixed bodies poured into a bin, a
// truck into 100 crates — one benchmark iteration a whole run of the scene, reported per step,
// with each scene's stability measure as a counter. Bullet runs the same scenes in the same
// program when it is installed (bench/peers/bullet_rigid_peer.cpp).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numbers>

#include "kinema/physics/rigid_world.h"
#include "rigid_bench_kinema.h"

namespace {

using namespace kinema;
using namespace kinema::rigid_bench;

enum class Measure { Drift, JointSeparation, Escaped, EnergyRatio };

// Runs the scene once per iteration (building it untimed) and reports the time per step and the
// scene's stability measure from the last run.
void run_scene(benchmark::State& state, const Scene& scene, int substeps, Measure what) {
  double measure = 0, slowest_step = 0;
  std::int64_t steps = 0;
  for (auto _ : state) {
    state.PauseTiming();
    RigidWorld world = build_kinema_world(scene, substeps);
    std::vector<Vec3> start;
    for (BodyId id = 0; id < world.body_count(); ++id) start.push_back(world.body(id).position);
    const double energy0 = world.kinetic_energy();
    double worst_joint = 0, highest_energy = 0;
    state.ResumeTiming();
    for (int i = 0; i < scene.steps; ++i) {
      // The slowest single step: a frame's spike, which a capped clock must stay under.
      const auto before = std::chrono::steady_clock::now();
      world.step(kStep);
      slowest_step = std::max(
          slowest_step,
          std::chrono::duration<double>(std::chrono::steady_clock::now() - before).count());
      if (what == Measure::JointSeparation || what == Measure::EnergyRatio) {
        state.PauseTiming();
        worst_joint = std::max(worst_joint, max_joint_error(world));
        highest_energy = std::max(highest_energy, world.kinetic_energy());
        state.ResumeTiming();
      }
    }
    steps += scene.steps;
    state.PauseTiming();
    bool finite = true;
    for (BodyId id = 0; id < world.body_count(); ++id)
      finite = finite && is_finite(world.body(id).position);
    switch (what) {
      case Measure::Drift:
        measure = 0;
        for (BodyId id = 0; id < world.body_count(); ++id)
          measure = std::max(measure, distance(world.body(id).position, start[id]));
        break;
      case Measure::JointSeparation:
        measure = worst_joint;
        break;
      case Measure::Escaped:  // bodies outside the 6 m bin or through its floor
        measure = 0;
        for (BodyId id = 0; id < world.body_count(); ++id) {
          const Vec3 p = world.body(id).position;
          if (!is_finite(p) || std::abs(p.x) > 3.1 || std::abs(p.z) > 3.1 || p.y < 0) ++measure;
        }
        break;
      case Measure::EnergyRatio:
        measure = highest_energy / energy0;
        break;
    }
    if (!finite) measure = -1;
    state.ResumeTiming();
  }
  state.counters["us_per_step"] = benchmark::Counter(
      double(steps) * 1e-6, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["measure"] = measure;
  state.counters["slowest_step_ms"] = 1000 * slowest_step;
}

// Pyramid: measure = the largest distance any box moved in 10 s (m).
void BM_Kinema_Pyramid(benchmark::State& state) {
  run_scene(state, pyramid(), int(state.range(0)), Measure::Drift);
}
// Chain: measure = the largest joint separation over the run (m); 1 and 4 substeps.
void BM_Kinema_Chain(benchmark::State& state) {
  run_scene(state, chain(), int(state.range(0)), Measure::JointSeparation);
}
// Pour: measure = how many bodies ended outside the bin or below its floor (−1 for a NaN).
void BM_Kinema_Pour(benchmark::State& state) {
  run_scene(state, pour(), int(state.range(0)), Measure::Escaped);
}
// Crates: measure = the largest kinetic energy ÷ the truck's at the start (−1 for a NaN).
void BM_Kinema_Crates(benchmark::State& state) {
  run_scene(state, crates(), int(state.range(0)), Measure::EnergyRatio);
}

// The argument is the number of substeps (the solver's 10 passes a step are split across them).
BENCHMARK(BM_Kinema_Pyramid)->Arg(1)->Arg(2)->Arg(4)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Kinema_Chain)->Arg(1)->Arg(2)->Arg(4)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Kinema_Pour)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_Kinema_Crates)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
