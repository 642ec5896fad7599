// RVO2 (snape/RVO2, Apache-2.0) on the crossing kinema_crowd_bench measures kinema on: the same
// agents, settings and preferred velocity each step (bench/crowd_bench.h), one core (built
// without OpenMP). Only RVO2's public API; built when CMake is given -DKINEMA_RVO2_ROOT.
#include <RVO.h>
#include <benchmark/benchmark.h>

#include <algorithm>

#include "crowd_bench.h"

namespace {

// radius_margin_mm: RVO2 given discs that much wider than the 0.3 m the overlap is measured on —
// 20 mm is kinema's default avoidance margin, for a like-for-like look at what the margin buys.
void BM_Rvo2Crossing(benchmark::State& state) {
  const kinema::bench::CrossingSettings cs;
  const float margin = static_cast<float>(state.range(0)) * 1e-3f;
  RVO::RVOSimulator sim(cs.step, cs.neighbour_distance, static_cast<std::size_t>(cs.max_neighbours),
                        cs.time_horizon, cs.time_horizon, cs.radius + margin, cs.max_speed);
  const auto scene = kinema::bench::crossing_scene(100, 50, 10.0f);
  for (const auto& a : scene) sim.addAgent(RVO::Vector2(a.x, a.y));
  std::vector<float> xy(2 * scene.size());
  float worst = 0;
  for (auto _ : state) {
    for (std::size_t i = 0; i < scene.size(); ++i) {
      const RVO::Vector2& p = sim.getAgentPosition(i);
      float vx, vy;
      kinema::bench::preferred_velocity(p.x(), p.y(), scene[i].goal_x, scene[i].goal_y,
                                        cs.max_speed, cs.step, vx, vy);
      sim.setAgentPrefVelocity(i, RVO::Vector2(vx, vy));
    }
    sim.doStep();
    state.PauseTiming();
    for (std::size_t i = 0; i < scene.size(); ++i) {
      xy[2 * i] = sim.getAgentPosition(i).x();
      xy[2 * i + 1] = sim.getAgentPosition(i).y();
    }
    worst = std::max(worst, kinema::bench::max_overlap(xy, cs.radius));
    state.ResumeTiming();
  }
  state.counters["overlap_pct"] = 100 * worst;
  state.counters["agents_per_s"] = benchmark::Counter(
      double(state.iterations()) * double(scene.size()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Rvo2Crossing)
    ->Name("Crowd/Crossing10k/RVO2")
    ->ArgNames({"radius_margin_mm"})
    ->Arg(0)
    ->Arg(20)
    ->Iterations(1200)
    ->Unit(benchmark::kMillisecond);

}  // namespace
