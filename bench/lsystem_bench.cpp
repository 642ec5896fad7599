// L-system growth: the timed derivation, the turtle at a time and the plant mesh of `kinema grow`'s
// "bush-3d" preset (ABOP Fig. 1.25's bush, 3-D, with leaves) at 7.9 s (n = 7: 43,686 modules,
// 3,891 segments and leaves) and 8.9 s (n = 8: 131,739 modules); segments per second as a counter.
#include <benchmark/benchmark.h>

#include "kinema/pipeline/grow.h"
#include "kinema/procedural/lsystem.h"

namespace kinema {
namespace {

LSystem bush() {
  return pipeline::parse_grow_spec(pipeline::grow_preset_json("bush-3d"), "bush-3d").system;
}

double seconds_of(const benchmark::State& state) { return double(state.range(0)) + 0.9; }

void BM_LSystemDerive(benchmark::State& state) {
  const LSystem system = bush();
  std::size_t modules = 0;
  for (auto _ : state) modules = derive(system, seconds_of(state)).modules.size();
  state.counters["modules"] = double(modules);
  state.counters["modules_per_s"] =
      benchmark::Counter(double(state.iterations()) * double(modules), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_LSystemDerive)->ArgName("n")->Arg(7)->Arg(8)->Unit(benchmark::kMillisecond);

/// One frame of a growth: the turtle halfway through the last generation, then the mesh.
void BM_LSystemFrame(benchmark::State& state) {
  const LSystem system = bush();
  const Derivation d = derive(system, seconds_of(state));
  const double t = d.time - 0.5;
  std::size_t segments = 0, vertices = 0;
  for (auto _ : state) {
    const PlantSkeleton plant = interpret(system, d, t);
    const PlantMesh mesh = build_plant_mesh(plant);
    segments = plant.segments.size();
    vertices = mesh.positions.size();
    benchmark::DoNotOptimize(mesh.positions.data());
  }
  state.counters["vertices"] = double(vertices);
  state.counters["segments_per_s"] = benchmark::Counter(
      double(state.iterations()) * double(segments), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_LSystemFrame)->ArgName("n")->Arg(7)->Arg(8)->Unit(benchmark::kMillisecond);

void BM_LSystemTurtle(benchmark::State& state) {
  const LSystem system = bush();
  const Derivation d = derive(system, seconds_of(state));
  for (auto _ : state) benchmark::DoNotOptimize(interpret(system, d, d.time - 0.5).segments.data());
}
BENCHMARK(BM_LSystemTurtle)->ArgName("n")->Arg(7)->Arg(8)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace kinema
BENCHMARK_MAIN();
