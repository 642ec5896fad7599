// Crowds: the crossing RVO2 is measured on (two groups of 5,000 swapping sides on a 1 m grid;
// bench/crowd_bench.h) — the mean wall time of a step over its first 20 s, and the deepest
// overlap seen, as a fraction of the radius, checked after every step outside the timing; crowd
// steps for 1,000 to 100,000 agents walking across a square at one agent every 2 m²; and A* on a
// 200 × 200 grid of random walls. With -DKINEMA_RVO2_ROOT=<checkout of snape/RVO2>,
// bench/peers/rvo2_peer.cpp adds RVO2 on the same crossing (BENCHMARKS.md has the commands).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <random>

#include "bench_paths.h"
#include "crowd_bench.h"
#include "kinema/crowd/crowd.h"
#include "kinema/crowd/crowd_animation.h"
#include "kinema/crowd/nav_grid.h"
#include "kinema/io/asset_file.h"
#include "kinema/pipeline/crowd_draw.h"
#include "kinema/render/renderer.h"

namespace kinema {
namespace {

constexpr int kCrossingSteps = 1200;  // the first 20 s at 60 Hz: approach, meeting, mixing

Crowd crossing_crowd(int threads, float margin) {
  const bench::CrossingSettings cs;
  CrowdSettings s;
  s.neighbour_distance = cs.neighbour_distance;
  s.max_neighbours = cs.max_neighbours;
  s.time_horizon = cs.time_horizon;
  s.radius = cs.radius;
  s.max_speed = cs.max_speed;
  s.avoidance_margin = margin;
  s.threads = threads;
  Crowd crowd(s);
  for (const bench::CrossingAgent& a : bench::crossing_scene(100, 50, 10.0f)) {
    crowd.add_agent({a.x, a.y}, {a.goal_x, a.goal_y});
  }
  return crowd;
}

// One iteration is one step; the crowd carries on from iteration to iteration, so the mean is
// over the crossing's first 20 s.
void BM_CrowdCrossing(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  const float margin = static_cast<float>(state.range(1)) * 1e-3f;
  Crowd crowd = crossing_crowd(threads, margin);
  const bench::CrossingSettings cs;
  std::vector<float> xy(2 * crowd.size());
  float worst = 0;
  for (auto _ : state) {
    crowd.step(cs.step);
    state.PauseTiming();
    for (std::size_t i = 0; i < crowd.size(); ++i) {
      xy[2 * i] = crowd.positions()[i].x;
      xy[2 * i + 1] = crowd.positions()[i].y;
    }
    worst = std::max(worst, bench::max_overlap(xy, cs.radius));
    state.ResumeTiming();
  }
  state.counters["overlap_pct"] = 100 * worst;
  state.counters["agents_per_s"] = benchmark::Counter(
      double(state.iterations()) * double(crowd.size()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_CrowdCrossing)
    ->Name("Crowd/Crossing10k/kinema")
    ->ArgNames({"threads", "margin_mm"})
    ->Args({1, 20})
    ->Args({1, 0})
    ->Args({2, 20})
    ->Iterations(kCrossingSteps)
    ->Unit(benchmark::kMillisecond);

// Agents scattered over a square, one every 2 m², each walking to a random point of it.
void BM_CrowdStep(benchmark::State& state) {
  const std::size_t n = static_cast<std::size_t>(state.range(0));
  CrowdSettings s;
  s.threads = static_cast<int>(state.range(1));
  Crowd crowd(s);
  const float side = std::sqrt(2.0f * static_cast<float>(n));
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(0, side);
  // Agents start on a jittered grid (no two overlapping), goals anywhere.
  const int per_row = static_cast<int>(std::ceil(std::sqrt(double(n))));
  const float spacing = side / static_cast<float>(per_row);
  for (std::size_t i = 0; i < n; ++i) {
    const float x = (static_cast<float>(i % per_row) + 0.5f) * spacing;
    const float y = (static_cast<float>(i / per_row) + 0.5f) * spacing;
    crowd.add_agent({x, y}, {u(rng), u(rng)});
  }
  for (int warm = 0; warm < 30; ++warm) crowd.step(1.0f / 60);
  for (auto _ : state) crowd.step(1.0f / 60);
  state.counters["agents_per_s"] =
      benchmark::Counter(double(state.iterations()) * double(n), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_CrowdStep)
    ->Name("Crowd/Step")
    ->ArgNames({"agents", "threads"})
    ->Args({1000, 1})
    ->Args({10000, 1})
    ->Args({100000, 1})
    ->Args({1000, 2})
    ->Args({10000, 2})
    ->Args({100000, 2})
    ->Unit(benchmark::kMillisecond);

// ---- the crowd's characters --------------------------------------------------------------

// ozz-animation's pab walk and run (76 joints; the mid tier keeps 24).
const CrowdGait& pab_gait() {
  static const CrowdGait gait = [] {
    const std::string data = bench::test_data_dir();
    const Asset walk = load_asset(data + "/fbx/ozz_pab/walk.fbx");
    const Asset run = load_asset(data + "/fbx/ozz_pab/run.fbx");
    CrowdGait g;
    g.skeleton = walk.skeleton;
    g.walk = walk.clips.at(0);
    g.run = run.clips.at(0);
    g.root_joint = walk.skeleton.find("Hips");
    for (const std::string side : {"Left", "Right"})  // foot locking in the near tier
      g.legs.push_back({walk.skeleton.find(side + "UpLeg"), walk.skeleton.find(side + "Leg"),
                        walk.skeleton.find(side + "Foot")});
    return g;
  }();
  return gait;
}

// n agents on a 2 m grid (returns the agents a row) walking at assorted speeds.
int walking_grid(std::size_t n, std::vector<Vec2f>& positions, std::vector<Vec2f>& velocities) {
  positions.resize(n);
  velocities.resize(n);
  const int per_row = static_cast<int>(std::ceil(std::sqrt(double(n))));
  for (std::size_t i = 0; i < n; ++i) {
    positions[i] = {2.0f * float(i % per_row), 2.0f * float(i / per_row)};
    velocities[i] = {0.3f * std::sin(float(i)), 0.8f + 0.5f * float(i % 7) / 7};
  }
  return per_row;
}

// Agents on a 2 m grid walking at assorted speeds; `tier` forces every one into that tier
// (0 near, 1 mid, 2 far: no skeleton) by where the tiers start; `locking` 0 turns the near tier's
// foot locking off (to see what it costs).
void BM_CrowdAnimate(benchmark::State& state) {
  const std::size_t n = static_cast<std::size_t>(state.range(0));
  const int tier = static_cast<int>(state.range(1));
  CrowdAnimationSettings settings;
  settings.threads = static_cast<int>(state.range(2));
  settings.foot_locking = state.range(3) != 0;
  settings.lod.fade_seconds = 0;
  for (int t = 1; t < kCrowdTierCount; ++t)
    settings.lod.tiers[t].min_distance = t <= tier ? 0 : 1e6f;
  CrowdAnimator animator(pab_gait(), settings, n);
  std::vector<Vec2f> positions, velocities;
  walking_grid(n, positions, velocities);
  const Vec3f camera{0, 1.7f, 0};
  for (auto _ : state) {
    animator.update(1.0f / 60, positions, velocities, {}, camera);
    benchmark::DoNotOptimize(animator.pose(0).data());
  }
  state.counters["agents_per_s"] =
      benchmark::Counter(double(state.iterations()) * double(n), benchmark::Counter::kIsRate);
  state.counters["joint_updates_per_frame"] = double(animator.lod().joint_updates_this_frame());
}
BENCHMARK(BM_CrowdAnimate)
    ->Name("Crowd/Animate")
    ->ArgNames({"agents", "tier", "threads", "locking"})
    ->Args({1000, 0, 1, 1})
    ->Args({1000, 0, 1, 0})
    ->Args({1000, 1, 1, 1})
    ->Args({1000, 2, 1, 1})
    ->Args({10000, 0, 1, 1})
    ->Args({10000, 0, 1, 0})
    ->Args({10000, 1, 1, 1})
    ->Args({10000, 2, 1, 1})
    ->Args({10000, 0, 2, 1})
    ->Args({10000, 1, 2, 1})
    ->Args({100000, 0, 1, 1})
    ->Args({100000, 1, 1, 1})
    ->Args({100000, 2, 1, 1})
    ->Args({100000, 0, 2, 1})
    ->Args({100000, 1, 2, 1})
    ->Args({100000, 2, 2, 1})
    ->Unit(benchmark::kMillisecond);

// The goal: 10,000 agents with avoidance and animation LOD in one frame (the crowd's step
// and its characters' update), the camera at the square's corner, default tiers.
void BM_CrowdFrame(benchmark::State& state) {
  const std::size_t n = 10000;
  CrowdSettings s;
  s.threads = static_cast<int>(state.range(0));
  Crowd crowd(s);
  const float side = std::sqrt(2.0f * float(n));
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(0, side);
  const int per_row = static_cast<int>(std::ceil(std::sqrt(double(n))));
  const float spacing = side / static_cast<float>(per_row);
  for (std::size_t i = 0; i < n; ++i) {
    crowd.add_agent({(float(i % per_row) + 0.5f) * spacing, (float(i / per_row) + 0.5f) * spacing},
                    {u(rng), u(rng)});
  }
  CrowdAnimationSettings settings;
  settings.threads = s.threads;
  CrowdAnimator animator(pab_gait(), settings, n);
  const Vec3f camera{0, 1.7f, 0};
  for (int warm = 0; warm < 30; ++warm) {
    crowd.step(1.0f / 60);
    animator.update(1.0f / 60, crowd.positions(), crowd.velocities(), {}, camera);
  }
  for (auto _ : state) {
    crowd.step(1.0f / 60);
    animator.update(1.0f / 60, crowd.positions(), crowd.velocities(), {}, camera);
  }
  const auto counts = animator.lod().counts();
  state.counters["near"] = double(counts[0]);
  state.counters["mid"] = double(counts[1]);
  state.counters["far"] = double(counts[2]);
  state.counters["farthest"] = double(counts[3]);
}
BENCHMARK(BM_CrowdFrame)
    ->Name("Crowd/Frame10k")
    ->ArgNames({"threads"})
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond);

// The frame time of 1,000 characters drawn by kinema's renderer (960×540, 4× MSAA; llvmpipe
// here, a GPU where there is one): every agent forced into one tier — 0 near (skinned from its
// pose), 1 mid (the reduced pose on the full skeleton), 2 far (VAT), 3 farthest (impostor) — or
// 4: the default tiers seen from the square's corner. The pab character as crowd capsules.
void BM_CrowdDraw(benchmark::State& state) {
  const std::size_t n = static_cast<std::size_t>(state.range(0));
  const int tier = static_cast<int>(state.range(1));
  CrowdAnimationSettings settings;
  settings.threads = 1;
  settings.lod.fade_seconds = 0;
  if (tier < kCrowdTierCount)
    for (int t = 1; t < kCrowdTierCount; ++t)
      settings.lod.tiers[t].min_distance = t <= tier ? 0 : 1e6f;
  static const Asset character = [] {
    Asset a = load_asset(bench::source_dir() + "/data/demo/pab_walk.glb");
    return a;
  }();
  CrowdAnimator animator(pab_gait(), settings, n);
  std::vector<Vec2f> positions, velocities;
  const int per_row = walking_grid(n, positions, velocities);
  Camera camera;
  camera.eye = {-8, 9, -8};
  camera.target = {0.8f * float(per_row), 0, 0.8f * float(per_row)};
  camera.fov_y_degrees = 50;
  RendererOptions target;
  target.width = 960;
  target.height = 540;
  Renderer renderer(target);
  pipeline::CrowdDrawer drawer(renderer, character, animator);
  DrawOptions options;
  options.ground_center_x = options.ground_center_z = float(per_row);
  options.ground_half_size = 3.0f * float(per_row);
  for (int warm = 0; warm < 3; ++warm) {
    animator.update(1.0f / 60, positions, velocities, {}, camera.eye);
    drawer.draw(positions, velocities, {}, camera, options);
  }
  for (auto _ : state) {
    state.PauseTiming();
    animator.update(1.0f / 60, positions, velocities, {}, camera.eye);
    state.ResumeTiming();
    const Image image = drawer.draw(positions, velocities, {}, camera, options);
    benchmark::DoNotOptimize(image.rgba.data());
  }
  const auto& counts = drawer.counts().instances;
  state.counters["near"] = double(counts[0]);
  state.counters["mid"] = double(counts[1]);
  state.counters["far"] = double(counts[2]);
  state.counters["farthest"] = double(counts[3]);
  state.SetLabel(renderer.gl_renderer());
}
BENCHMARK(BM_CrowdDraw)
    ->Name("Crowd/Draw")
    ->ArgNames({"agents", "tier"})
    ->Args({1000, 0})
    ->Args({1000, 1})
    ->Args({1000, 2})
    ->Args({1000, 3})
    ->Args({1000, 4})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_NavGridPath(benchmark::State& state) {
  NavGrid grid({0, 0}, 0.5, 200, 200);
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> u(5, 95);
  for (int wall = 0; wall < 60; ++wall) {
    const Vec2 at{u(rng), u(rng)};
    const bool along_x = wall % 2 == 0;
    grid.close_rectangle(at, at + (along_x ? Vec2{12, 0.5} : Vec2{0.5, 12}));
  }
  std::size_t found = 0;
  for (auto _ : state) {
    const auto path = grid.find_path({1, 1}, {99, 99});
    found += path.has_value();
    benchmark::DoNotOptimize(path);
  }
  state.counters["expanded"] = static_cast<double>(NavGrid::last_expanded_count());
  state.counters["found"] = static_cast<double>(found) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_NavGridPath)->Name("Crowd/AStar200x200")->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace kinema
BENCHMARK_MAIN();
