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
#include "random_mlp.h"

namespace {

using kinema::match::Activation;
using kinema::match::DenseLayer;
using kinema::match::Mlp;
using kinema::match::learned_detail::MlpIsa;

const Mlp& network(int which) {
  static const Mlp decompressor = kinema::bench::random_mlp({59, 512, 203}, Activation::elu, 1);
  static const Mlp stepper = kinema::bench::random_mlp({59, 512, 512, 59}, Activation::relu, 2);
  static const Mlp projector =
      kinema::bench::random_mlp({27, 512, 512, 512, 512, 59}, Activation::relu, 3);
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
