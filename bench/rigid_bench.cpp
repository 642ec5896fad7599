// Rigid bodies: kinema's RigidWorld on the scenes of bench/rigid_bench.h — a pyramid of 105
// boxes at rest, a 50-link chain released horizontally, 1,000 mixed bodies poured into a bin, a
// truck into 100 crates, and two of Jolt's PerformanceTest scenes (its 1,240-box pyramid, 160
// powered ragdolls dropped in piles) — one benchmark iteration a whole run of the scene, reported
// per step, with each scene's stability measure as a counter. kinema steps on one thread. Bullet
// runs the same scenes in the same program when it is installed
// (bench/peers/bullet_rigid_peer.cpp), Jolt when given (bench/peers/jolt_rigid_peer.cpp).
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

enum class Measure { Drift, JointSeparation, Escaped, EnergyRatio, Pile };

// Runs the scene once per iteration (building it untimed) and reports the time per step and the
// scene's stability measure from the last run.
void run_scene(benchmark::State& state, const Scene& scene, int substeps, Measure what,
               const RigidWorldSettings& settings = {}) {
  double measure = 0, slowest_step = 0, stepping = 0, floor_mm = 0, creep = 0, awake = 0;
  std::int64_t steps = 0, substeps_taken = 0;
  const bool per_step =
      what == Measure::JointSeparation || what == Measure::EnergyRatio || what == Measure::Pile;
  for (auto _ : state) {
    state.PauseTiming();
    RigidWorld world = build_kinema_world(scene, substeps, settings);
    const KinemaMotors motors(scene, world);
    std::vector<Vec3> start;
    for (BodyId id = 0; id < world.body_count(); ++id) start.push_back(world.body(id).position);
    if (!scene.rest.empty())  // drift from where each body should come to rest instead
      for (BodyId id = 0; id < world.body_count(); ++id)
        start[id] = Vec3{scene.rest[id][0], scene.rest[id][1], scene.rest[id][2]} +
                    rotate(world.body(id).orientation, world.body(id).centre_of_mass_in_shape);
    const double energy0 = world.kinetic_energy();
    double worst_joint = 0, highest_energy = 0;
    std::vector<Vec3> settled;
    state.ResumeTiming();
    for (int i = 0; i < scene.steps; ++i) {
      if (i == scene.settle_steps && !scene.rest.empty()) {
        state.PauseTiming();
        for (BodyId id = 0; id < world.body_count(); ++id)
          settled.push_back(world.body(id).position);
        state.ResumeTiming();
      }
      // The slowest single step: a frame's spike, which a capped clock must stay under.
      const auto before = std::chrono::steady_clock::now();
      motors.drive(world);
      world.step(kStep);
      const double step_seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - before).count();
      slowest_step = std::max(slowest_step, step_seconds);
      stepping += step_seconds;
      if (per_step) {
        state.PauseTiming();
        substeps_taken += world.last_substeps();
        worst_joint = std::max(worst_joint, max_joint_error(world));
        if (what == Measure::EnergyRatio)
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
        measure = creep = 0;
        for (BodyId id = 0; id < world.body_count(); ++id) {
          measure = std::max(measure, distance(world.body(id).position, start[id]));
          if (!settled.empty())
            creep = std::max(creep, distance(world.body(id).position, settled[id]));
        }
        break;
      case Measure::JointSeparation:
      case Measure::Pile:
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
    if (what == Measure::Pile) {  // how deep the lowest body reaches into the floor (y = 0)
      double lowest = 0;
      for (BodyId id = 1; id < world.body_count(); ++id) {
        const RigidBody& b = world.body(id);
        const Vec3 o = shape_origin_of(b);
        const Quat& q = b.orientation;
        lowest = std::min(lowest, lowest_point(scene.bodies[id], o.y, q.x, q.y, q.z, q.w));
      }
      floor_mm = -1000 * lowest;
      awake = 0;
      for (BodyId id = 1; id < world.body_count(); ++id) awake += world.body(id).awake ? 1 : 0;
    }
    if (!finite) measure = -1;
    state.ResumeTiming();
  }
  // The steps' own time, read around each step: pausing the benchmark's timer for the per-step
  // measures costs microseconds a step on this machine, which would weigh on the fastest scenes.
  state.counters["us_per_step"] = 1e6 * stepping / double(std::max<std::int64_t>(steps, 1));
  state.counters["measure"] = measure;
  state.counters["slowest_step_ms"] = 1000 * slowest_step;
  state.counters["threads"] = settings.threads;
  if (!scene.rest.empty()) state.counters["creep_mm"] = 1000 * creep;
  if (what == Measure::Pile) {
    state.counters["floor_mm"] = floor_mm;
    state.counters["awake"] = awake;
    state.counters["substeps"] = double(substeps_taken) / double(std::max<std::int64_t>(steps, 1));
  }
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

// Jolt's PerformanceTest pyramid (1,240 boxes of 8 t dropped 0.5 m onto each other, 500 steps):
// measure = the largest distance any box ends from where it should stand (m); creep_mm = the
// farthest any box moved after it settled (from 2.5 s to the end).
// Third argument: position passes a step, 2 as Jolt's default (the scene's), 0 for kinema's own
// default (RigidWorldSettings::position_iterations, 4).
void BM_Kinema_JoltPyramid(benchmark::State& state) {
  RigidWorldSettings settings;
  settings.threads = int(state.range(1));
  Scene scene = jolt_pyramid();
  scene.position_iterations = int(state.range(2));
  run_scene(state, scene, int(state.range(0)), Measure::Drift, settings);
}
// Jolt's PerformanceTest ragdolls (160 powered 23-body ragdolls in 16 piles on a flat floor, 500
// steps): measure = the largest joint separation over the run (m, −1 for a NaN); floor_mm = how
// deep the lowest body ends in the floor; awake = bodies still awake at the end; substeps = the
// mean substeps a step. Second argument 1: kinema's default extra substeps while a jointed body
// spins fast (RigidWorldSettings::max_joint_turn_per_substep); 0: never more than the first.
// Third: the threads (RigidWorldSettings::threads: the narrow phase and the points' set-up in
// parallel; the iterations and joints on the calling thread).
void BM_Kinema_RagdollPile(benchmark::State& state) {
  RigidWorldSettings settings;
  if (state.range(1) == 0) settings.max_joint_turn_per_substep = 0;
  settings.threads = int(state.range(2));
  run_scene(state, ragdoll_pile(), int(state.range(0)), Measure::Pile, settings);
}

// The argument is the number of substeps (the solver's 10 passes a step are split across them).
BENCHMARK(BM_Kinema_Pyramid)->Arg(1)->Arg(2)->Arg(4)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Kinema_Chain)->Arg(1)->Arg(2)->Arg(4)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Kinema_Pour)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_Kinema_Crates)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Kinema_JoltPyramid)
    ->ArgNames({"substeps", "threads", "position"})
    ->Args({1, 1, 2})
    ->Args({1, 2, 2})
    ->Args({1, 1, 0})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
BENCHMARK(BM_Kinema_RagdollPile)
    ->ArgNames({"substeps", "adaptive", "threads"})
    ->Args({1, 1, 1})
    ->Args({1, 1, 2})
    ->Args({1, 0, 1})
    ->Args({1, 0, 2})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
