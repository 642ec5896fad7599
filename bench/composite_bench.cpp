// Compositing throughput on a 1920 × 1080 frame: keying a green-screen plate (colour difference,
// screen subtraction, spill suppression), "over" of two premultiplied images, and a 5 px matte
// blur. Reported per frame and, as a counter, in megapixels a second.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>

#include "kinema/composite/keyer.h"
#include "kinema/composite/matte_filters.h"
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

}  // namespace
}  // namespace kinema::composite
BENCHMARK_MAIN();
