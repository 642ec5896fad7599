// Ray-marching smoke on the CPU (kinema/render/volume.h): one 640×480 frame of a smoke plume on a
// 64³ and a 128³ grid (the light's transmittance swept, the camera rays marched, every thread of
// the machine), and the light sweep alone. The plume is procedural: a column rising from the
// ground, widening and thinning with height, its edge broken up by a few sine waves, hot at its
// foot (a second run adds the fire's blackbody emission).
#include <benchmark/benchmark.h>

#include <cmath>

#include "kinema/render/volume.h"

namespace {

/// A plume on n³ voxels filling a 1.6 m box over the ground.
kinema::DenseVolume plume(int n, bool fire) {
  kinema::DenseVolume v;
  v.nx = v.ny = v.nz = n;
  v.voxel_size = 1.6f / float(n);
  v.origin = kinema::Vec3f{-0.8f, 0.0f, -0.8f} + kinema::Vec3f{0.5f, 0.5f, 0.5f} * v.voxel_size;
  v.density.assign(v.voxels(), 0.0f);
  if (fire) v.temperature.assign(v.voxels(), 300.0f);
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        const kinema::Vec3f p =
            v.origin + kinema::Vec3f{float(i), float(j), float(k)} * v.voxel_size;
        const float height = p.y / 1.6f;  // 0 at the ground, 1 at the top
        const float radius = 0.15f + 0.45f * height;
        const float wobble = 0.06f * std::sin(9 * p.y + 5 * p.x) * std::cos(7 * p.z - 4 * p.y) +
                             0.03f * std::sin(23 * p.x + 17 * p.z + 11 * p.y);
        const float r = std::hypot(p.x, p.z) + wobble;
        if (r >= radius) continue;
        const size_t at = size_t(i) + size_t(n) * (size_t(j) + size_t(n) * size_t(k));
        v.density[at] = 3 * (1 - r / radius) * (1.2f - height);
        if (fire)
          v.temperature[at] = 300 + 1700 * (1 - r / radius) * std::max(0.0f, 1 - 3 * height);
      }
  return v;
}

kinema::Camera view() {
  kinema::Camera c;
  c.eye = {1.2f, 1.1f, 2.2f};
  c.target = {0, 0.8f, 0};
  c.fov_y_degrees = 35;
  return c;
}

void BM_RayMarchFrame(benchmark::State& state) {
  const bool fire = state.range(1) != 0;
  const kinema::DenseVolume v = plume(int(state.range(0)), fire);
  kinema::VolumeShading s;
  if (fire) s.emission.mode = kinema::VolumeEmission::Mode::Blackbody;
  const kinema::Camera camera = view();
  double covered = 0;
  for (auto _ : state) {
    const kinema::VolumeImage image = kinema::render_volume(v, s, camera, 640, 480);
    benchmark::DoNotOptimize(image.rgba.data());
    covered = 0;
    for (size_t i = 3; i < image.rgba.size(); i += 4) covered += image.rgba[i] > 0.01f;
  }
  state.counters["covered_pixels"] = covered;
  state.SetLabel(fire ? "smoke and fire, 640x480" : "smoke, 640x480");
}
BENCHMARK(BM_RayMarchFrame)
    ->Args({64, 0})
    ->Args({128, 0})
    ->Args({128, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_LightTransmittance(benchmark::State& state) {
  const kinema::DenseVolume v = plume(int(state.range(0)), false);
  const kinema::VolumeShading s;
  for (auto _ : state) benchmark::DoNotOptimize(kinema::light_transmittance(v, s).data());
  state.SetItemsProcessed(int64_t(state.iterations()) * int64_t(v.voxels()));
}
BENCHMARK(BM_LightTransmittance)->Arg(64)->Arg(128)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
