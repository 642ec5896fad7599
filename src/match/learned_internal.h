// src/match/learned_internal.h — the MLP kernels' instruction-set choice, for tests and the
// benchmark. Internal header.
#pragma once

#include <span>

#include "kinema/match/learned.h"

// The matrix–vector kernel has an AVX2 + FMA copy (learned_model.cpp, [[gnu::target]]), chosen at
// run time, where GCC or clang compile for x86-64. Elsewhere only the baseline copy exists.
#if defined(__GNUC__) && defined(__x86_64__)
#define KINEMA_MATCH_MLP_AVX2 1
#endif

namespace kinema::match::learned_detail {

/// The instruction set of Mlp::evaluate's matrix–vector products. The baseline (SSE, x86-64-v2)
/// multiplies then adds; AVX2 fuses them (FMA), so the two differ in the last bits (a relative
/// difference of about 1e-6 on networks of Holden's sizes; the tests hold them to 1e-5). Each one
/// alone gives the same bits every call, whatever the thread count or an output's position.
enum class MlpIsa { kBase, kAvx2 };

/// The one Mlp::evaluate uses: AVX2 + FMA when compiled in and the CPU has both, unless
/// force_baseline_mlp(true) is in effect.
MlpIsa mlp_isa();
/// For tests and benchmarks: every evaluate from now on takes the baseline kernel (true), or the
/// CPU's best again (false). Not for use while other threads evaluate.
void force_baseline_mlp(bool on);
/// Whether the AVX2 + FMA kernel can run here (compiled in and the CPU has it).
bool mlp_avx2_available();

/// Mlp::evaluate with the given kernel (kAvx2 where unavailable falls back to kBase).
void evaluate_with(MlpIsa isa, const Mlp& mlp, std::span<const float> in, std::span<float> out,
                   std::span<float> scratch);

}  // namespace kinema::match::learned_detail
