// Matchmove's cost on the plate the tests use (tests/matchmove/test_scene.h): a textured room on a
// dolly-and-pan path, 640 × 360, 40 frames, through a k1 = −0.1 lens with sensor noise. Tracking
// all 40 frames (corner detection, pyramidal Lucas–Kanade forward and backward), and the camera
// solve from those tracks (initial pair, PnP for the rest, bundle adjustment with outlier
// rejection). The plate is rendered once, outside the timing.
#include <benchmark/benchmark.h>

#include "../tests/matchmove/test_scene.h"
#include "kinema/matchmove/camera_solve.h"

namespace kinema::matchmove {
namespace {

const std::vector<composite::Image>& frames() {
  static const std::vector<composite::Image> f = test::Scene().render();
  return f;
}

void BM_TrackFeatures(benchmark::State& state) {
  const auto& plate = frames();
  std::size_t tracks = 0;
  for (auto _ : state) tracks = track_features(plate).tracks.size();
  state.counters["tracks"] = double(tracks);
  state.counters["frames_per_s"] = benchmark::Counter(
      double(state.iterations()) * double(plate.size()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_TrackFeatures)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_SolveCamera(benchmark::State& state) {
  const TrackSet tracks = track_features(frames());
  double error = 0;
  for (auto _ : state) error = solve_camera(tracks).mean_error;
  state.counters["mean_error_px"] = error;
}
BENCHMARK(BM_SolveCamera)->Unit(benchmark::kMillisecond)->Iterations(2);

}  // namespace
}  // namespace kinema::matchmove
BENCHMARK_MAIN();
