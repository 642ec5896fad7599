// The three broad phases (kinema/physics/broad_phase.h) on the same moving boxes, to choose the
// default by measurement. N boxes of half extents 0.25–0.75 m fill a cube at a constant density
// (about 2.5 m of room per box along each axis, a few neighbours each) and fly at up to 3 m/s,
// bouncing off the cube's walls. Scenes: 0 — all of them fly; 1 — 10 % fly, the rest rest; 2 — as
// 1, with 2 % of the boxes 8 times larger and resting (walls, platforms). One iteration is one
// 60 Hz step: every box updated (update) and the overlapping pairs listed (pairs). Counters: pairs
// found, boxes per second. Kinds: 0 AABB tree, 1 sweep-and-prune, 2 uniform grid.
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>
#include <vector>

#include "kinema/physics/broad_phase.h"

namespace kinema {
namespace {

struct Scene {
  std::vector<Vec3> centre, half, velocity;
  double room = 0;

  // `moving`: the fraction of boxes in flight; the others rest (as most bodies of a settled scene).
  // `large`: the fraction of resting boxes made 8 times larger (walls, platforms, big props).
  Scene(int n, double moving, double large) {
    std::mt19937 rng(42);
    std::uniform_real_distribution<double> coin(0, 1);
    room = 2.5 * std::cbrt(double(n));
    std::uniform_real_distribution<double> pos(0, room), size(0.25, 0.75), speed(-3, 3);
    for (int i = 0; i < n; ++i) {
      centre.push_back({pos(rng), pos(rng), pos(rng)});
      const Vec3 h{size(rng), size(rng), size(rng)};
      const Vec3 v{speed(rng), speed(rng), speed(rng)};
      const bool flies = coin(rng) < moving;
      const bool big = !flies && coin(rng) < large / (1 - moving);
      half.push_back(big ? h * 8.0 : h);
      velocity.push_back(flies ? v : Vec3{0, 0, 0});
    }
  }
  Aabb box(int i) const { return {centre[i] - half[i], centre[i] + half[i]}; }
  void step(double h) {
    for (std::size_t i = 0; i < centre.size(); ++i) {
      centre[i] += velocity[i] * h;
      for (int k = 0; k < 3; ++k) {
        if ((centre[i][k] < 0 && velocity[i][k] < 0) || (centre[i][k] > room && velocity[i][k] > 0))
          velocity[i][k] = -velocity[i][k];
      }
    }
  }
};

void BM_BroadPhaseStep(benchmark::State& state) {
  const auto kind = static_cast<BroadPhaseKind>(state.range(0));
  const int n = int(state.range(1));
  const int kind_of_scene = int(state.range(2));
  Scene scene(n, kind_of_scene == 0 ? 1.0 : 0.1, kind_of_scene == 2 ? 0.02 : 0.0);
  auto bp = make_broad_phase({.kind = kind});
  for (int i = 0; i < n; ++i) bp->insert(ProxyId(i), scene.box(i));
  std::vector<ProxyPair> pairs;
  bp->pairs(pairs);  // first binning, axis choice, sort: not part of a step
  for (auto _ : state) {
    scene.step(1.0 / 60);
    for (int i = 0; i < n; ++i) bp->update(ProxyId(i), scene.box(i));
    bp->pairs(pairs);
    benchmark::DoNotOptimize(pairs.data());
  }
  state.SetLabel(broad_phase_kind_name(kind));
  state.counters["pairs"] = double(pairs.size());
  state.SetItemsProcessed(state.iterations() * n);  // boxes per second
}
BENCHMARK(BM_BroadPhaseStep)
    ->ArgsProduct({{int(BroadPhaseKind::AabbTree), int(BroadPhaseKind::SweepAndPrune),
                    int(BroadPhaseKind::UniformGrid)},
                   {1000, 10000},
                   {0, 1, 2}})
    ->ArgNames({"kind", "boxes", "scene"})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace kinema

BENCHMARK_MAIN();
