// Learned motion matching's networks at run time (kinema/match/learned.h): Mlp::evaluate at the
// sizes of Holden et al. 2020 (27 features, latent 32, 22 joints), random weights, one call per
// iteration, the baseline kernel (SSE, x86-64-v2) against the AVX2 + FMA one.
//   decompressor  59 → 512 → 203           (ELU)
//   stepper       59 → 512 → 512 → 59      (ReLU)
//   projector     27 → 512 ×4 → 59         (ReLU)
//
//   taskset -c 1 build/release/bench/kinema_learned_bench --benchmark_repetitions=9
//     --benchmark_report_aggregates_only=true --benchmark_enable_random_interleaving=true
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>
#include <vector>

#include "../src/match/learned_internal.h"
#include "kinema/match/learned.h"

namespace {

using kinema::match::Activation;
using kinema::match::DenseLayer;
using kinema::match::Mlp;
using kinema::match::learned_detail::MlpIsa;

Mlp holden_mlp(const std::vector<uint32_t>& sizes, Activation hidden, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  Mlp m;
  for (size_t k = 0; k + 1 < sizes.size(); ++k) {
    DenseLayer l;
    l.inputs = sizes[k];
    l.outputs = sizes[k + 1];
    l.activation = k + 2 == sizes.size() ? Activation::none : hidden;
    const float gain = std::sqrt(3.0f / float(l.inputs));
    l.weights.resize(size_t(l.inputs) * l.outputs);
    for (float& w : l.weights) w = u(rng) * gain;
    l.bias.resize(l.outputs);
    for (float& b : l.bias) b = 0.1f * u(rng);
    m.layers.push_back(std::move(l));
  }
  m.input_mean.assign(m.inputs(), 0.1f);
  m.input_scale.assign(m.inputs(), 1.5f);
  m.output_mean.assign(m.outputs(), -0.2f);
  m.output_scale.assign(m.outputs(), 0.5f);
  return m;
}

const Mlp& network(int which) {
  static const Mlp decompressor = holden_mlp({59, 512, 203}, Activation::elu, 1);
  static const Mlp stepper = holden_mlp({59, 512, 512, 59}, Activation::relu, 2);
  static const Mlp projector = holden_mlp({27, 512, 512, 512, 512, 59}, Activation::relu, 3);
  return which == 0 ? decompressor : which == 1 ? stepper : projector;
}

void BM_MlpEvaluate(benchmark::State& state, int which, MlpIsa isa) {
  if (isa == MlpIsa::kAvx2 && !kinema::match::learned_detail::mlp_avx2_available()) {
    state.SkipWithError("no AVX2 + FMA on this CPU");
    return;
  }
  const Mlp& m = network(which);
  std::vector<float> in(m.inputs()), out(m.outputs()), scratch(m.scratch_floats());
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> u(-2, 2);
  for (float& v : in) v = u(rng);
  for (auto _ : state) {
    kinema::match::learned_detail::evaluate_with(isa, m, in, out, scratch);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  size_t weights = 0;
  for (const DenseLayer& l : m.layers) weights += l.weights.size();
  state.counters["params"] = double(m.parameter_count());
  state.counters["FLOP/s"] = benchmark::Counter(2.0 * double(weights) * double(state.iterations()),
                                                benchmark::Counter::kIsRate);
}

BENCHMARK_CAPTURE(BM_MlpEvaluate, decompressor_base, 0, MlpIsa::kBase);
BENCHMARK_CAPTURE(BM_MlpEvaluate, decompressor_avx2, 0, MlpIsa::kAvx2);
BENCHMARK_CAPTURE(BM_MlpEvaluate, stepper_base, 1, MlpIsa::kBase);
BENCHMARK_CAPTURE(BM_MlpEvaluate, stepper_avx2, 1, MlpIsa::kAvx2);
BENCHMARK_CAPTURE(BM_MlpEvaluate, projector_base, 2, MlpIsa::kBase);
BENCHMARK_CAPTURE(BM_MlpEvaluate, projector_avx2, 2, MlpIsa::kAvx2);

}  // namespace

BENCHMARK_MAIN();
