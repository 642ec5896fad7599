// Compositing throughput on a 1920 × 1080 frame: keying a green-screen plate (colour difference,
// screen subtraction, spill suppression), "over" of two premultiplied images, a 5 px matte blur,
// lens remapping through an ST-map (and building the map), EXR encode/decode (half, zip),
// differential rendering, grain measurement and grain, and roto rasterization. Reported per
// frame and, as a counter, in megapixels a second.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>

#include "kinema/composite/exr_file.h"
#include "kinema/composite/keyer.h"
#include "kinema/composite/lens.h"
#include "kinema/composite/matte_filters.h"
#include "kinema/composite/plate_match.h"
#include "kinema/composite/porter_duff.h"

namespace kinema::composite {
namespace {

constexpr int kWidth = 1920, kHeight = 1080;

/// A plate: a grey disc on an uneven green screen, soft at its edge.
Image plate() {
  Image image(kWidth, kHeight);
  for (int y = 0; y < kHeight; ++y)
    for (int x = 0; x < kWidth; ++x) {
      const double d = std::hypot(x - kWidth / 2.0, y - kHeight / 2.0) - 300;
      const float a = float(std::clamp(0.5 - d / 4, 0.0, 1.0));
      const float u = 1 + 0.02f * float(std::sin(x * 0.01) * std::cos(y * 0.013));
      image.at(x, y) = {a * 0.5f + (1 - a) * 0.1f * u, a * 0.5f + (1 - a) * 0.8f * u,
                        a * 0.5f + (1 - a) * 0.15f * u, 1};
    }
  return image;
}

/// Megapixels a second.
void per_megapixel(benchmark::State& state) {
  state.counters["megapixels_per_s"] = benchmark::Counter(
      double(state.iterations()) * kWidth * kHeight / 1e6, benchmark::Counter::kIsRate);
}

void BM_Key(benchmark::State& state) {
  const Image input = plate();
  for (auto _ : state) benchmark::DoNotOptimize(key(input).pixels.data());
  per_megapixel(state);
}
BENCHMARK(BM_Key)->Unit(benchmark::kMillisecond);

void BM_Over(benchmark::State& state) {
  const Image fg = key(plate()), bg(kWidth, kHeight, {0.2f, 0.3f, 0.8f, 1});
  for (auto _ : state) benchmark::DoNotOptimize(composite(PorterDuff::Over, fg, bg).pixels.data());
  per_megapixel(state);
}
BENCHMARK(BM_Over)->Unit(benchmark::kMillisecond);

void BM_MatteBlur(benchmark::State& state) {
  const Matte matte = alpha_of(key(plate()));
  for (auto _ : state) benchmark::DoNotOptimize(blur(matte, 5).values.data());
  per_megapixel(state);
}
BENCHMARK(BM_MatteBlur)->Unit(benchmark::kMillisecond);

/// The memory-bandwidth floor "over" is measured against: a 1080p frame of Rgba copied (16 bytes
/// read and 16 written a pixel). "over" reads two frames and writes one (48 bytes a pixel), so at
/// this bandwidth it could do at best two-thirds of this rate in megapixels a second.
void BM_BandwidthCopyFrame(benchmark::State& state) {
  const Image source = plate();
  Image target(kWidth, kHeight);
  for (auto _ : state) {
    std::copy(source.pixels.begin(), source.pixels.end(), target.pixels.begin());
    benchmark::DoNotOptimize(target.pixels.data());
    benchmark::ClobberMemory();
  }
  per_megapixel(state);
  state.counters["GB_per_s"] = benchmark::Counter(
      double(state.iterations()) * kWidth * kHeight * 32 / 1e9, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_BandwidthCopyFrame)->Unit(benchmark::kMillisecond);

/// A typical matchmove lens on the 1080p frame (OpenCV's values).
const BrownConrady kLens{-0.12, 0.03, 0, 1e-3, -5e-4};
const LensIntrinsics kIntrinsics{1866.7, 1866.7, (kWidth - 1) / 2.0, (kHeight - 1) / 2.0};

void BM_LensRemap(benchmark::State& state) {
  const Image input = plate();
  const StMap map = st_map_undistort(kLens, kIntrinsics, kWidth, kHeight);
  for (auto _ : state) benchmark::DoNotOptimize(remap(input, map).pixels.data());
  per_megapixel(state);
}
BENCHMARK(BM_LensRemap)->Unit(benchmark::kMillisecond);

void BM_LensStMapBuild(benchmark::State& state) {
  for (auto _ : state)
    benchmark::DoNotOptimize(st_map_undistort(kLens, kIntrinsics, kWidth, kHeight).s.data());
  per_megapixel(state);
}
BENCHMARK(BM_LensStMapBuild)->Unit(benchmark::kMillisecond);

void BM_ExrEncodeHalfZip(benchmark::State& state) {
  const Image input = plate();
  for (auto _ : state) benchmark::DoNotOptimize(encode_exr(input).data());
  per_megapixel(state);
}
BENCHMARK(BM_ExrEncodeHalfZip)->Unit(benchmark::kMillisecond);

void BM_ExrDecodeHalfZip(benchmark::State& state) {
  const std::string bytes = encode_exr(plate());
  // Includes OpenEXR's whole-file check that runs before every decode.
  for (auto _ : state) benchmark::DoNotOptimize(decode_exr(bytes, "bench.exr").pixels.data());
  per_megapixel(state);
}
BENCHMARK(BM_ExrDecodeHalfZip)->Unit(benchmark::kMillisecond);

void BM_DifferentialComposite(benchmark::State& state) {
  const Image p = plate(), with(kWidth, kHeight, {0.3f, 0.3f, 0.3f, 1}),
              without(kWidth, kHeight, {0.5f, 0.5f, 0.5f, 1}), object = key(plate());
  for (auto _ : state)
    benchmark::DoNotOptimize(differential_composite(p, with, without, &object).pixels.data());
  per_megapixel(state);
}
BENCHMARK(BM_DifferentialComposite)->Unit(benchmark::kMillisecond);

void BM_GrainEstimate(benchmark::State& state) {
  Image p = plate();
  add_grain(p, {0.02f, 0.02f, 0.02f}, 1);
  for (auto _ : state) benchmark::DoNotOptimize(estimate_grain(p));
  per_megapixel(state);
}
BENCHMARK(BM_GrainEstimate)->Unit(benchmark::kMillisecond);

void BM_GrainAdd(benchmark::State& state) {
  Image p = plate();
  for (auto _ : state) {
    add_grain(p, {0.02f, 0.02f, 0.02f}, 1);
    benchmark::DoNotOptimize(p.pixels.data());
  }
  per_megapixel(state);
}
BENCHMARK(BM_GrainAdd)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace kinema::composite
BENCHMARK_MAIN();
