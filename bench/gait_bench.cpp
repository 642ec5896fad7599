// Procedural gaits: one update (footstep planning, swing arcs with their ground rays, the body's
// springs and plane fit, two-bone legs) of each built-in creature walking at its own pace on the
// flat (no ground: the plane y = 0) and up the demo stairs (an OBJ ground, a BVH of 46 triangles:
// every swing casts rays along its path). Counter: creatures updated a second on one core.
#include <benchmark/benchmark.h>

#include <cmath>
#include <string>
#include <vector>

#include "bench_paths.h"
#include "kinema/io/terrain.h"
#include "kinema/procedural/gait.h"

namespace kinema {
namespace {

void BM_GaitUpdate(benchmark::State& state) {
  const auto creature = static_cast<GaitCreature>(state.range(0));
  const bool stairs = state.range(1) != 0;
  const GaitRig rig = make_gait_creature(creature);
  const GroundFile ground =
      stairs ? load_ground(bench::source_dir() + "/data/demo/stairs.obj") : GroundFile{};
  Gait gait(rig.skeleton, rig.body, rig.legs, rig.settings, ground.ground.get());
  const double speed = 0.7 * gait.settings().max_stride / gait.settings().cycle_duration;
  const double dt = 1.0 / 60;
  std::vector<Transform> local(static_cast<size_t>(rig.skeleton.joint_count()));
  // Walks 4 m up the stairs (or on the flat), then starts again at the bottom.
  const int frames = static_cast<int>(4 / speed / dt);
  int frame = 0;
  for (auto _ : state) {
    if (frame == 0) gait.reset(Vec3{0, 0, -2.5}, 0);
    gait.update(dt, Vec3{0, 0, speed}, 0, {}, local);
    benchmark::DoNotOptimize(local.data());
    frame = (frame + 1) % frames;
  }
  state.counters["legs"] = double(rig.legs.size());
  state.counters["creatures_per_s"] =
      benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
  state.SetLabel(std::string(stairs ? "stairs" : "flat"));
}
BENCHMARK(BM_GaitUpdate)
    ->ArgNames({"creature", "stairs"})
    ->ArgsProduct({{0, 1, 2, 3}, {0, 1}})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace kinema

BENCHMARK_MAIN();
