// kinema/core/cpu_features.h — what the CPU this process runs on can execute, asked once.
//
// kinema is built for x86-64-v2 (SSE4.2) and carries wider kernels (AVX2 + FMA, AVX-512) that it
// chooses at run time. Every module asks here instead of querying the CPU itself, so the choice
// rests on one test. Each module still keeps its own cached choice and its own switch to force
// the narrower kernels (set_skin_simd_avx2, set_blend_avx2, force_baseline_search, …).
#pragma once

namespace kinema {

/// Instruction-set extensions usable by this process. An extension counts only when the CPU has
/// it *and* the operating system saves the registers it uses (XCR0: the ymm state for AVX and
/// AVX2, the opmask and zmm state for AVX-512). All false on other architectures and compilers.
struct CpuFeatures {
  bool sse41 = false;     ///< SSE4.1
  bool avx2 = false;      ///< AVX2 (with AVX), ymm state saved by the OS
  bool fma = false;       ///< FMA3
  bool f16c = false;      ///< half-float conversions
  bool avx512f = false;   ///< AVX-512 Foundation, zmm and opmask state saved by the OS
  bool avx512vl = false;  ///< AVX-512 on 128/256-bit registers
  bool avx512dq = false;  ///< AVX-512 doubleword/quadword instructions
  bool avx512bw = false;  ///< AVX-512 byte/word instructions

  /// AVX2 and FMA together: what every "avx2" kernel of kinema is compiled for.
  bool avx2_fma() const { return avx2 && fma; }
  /// AVX2 + FMA plus AVX-512 F, VL, DQ and BW: what kinema's AVX-512 kernels are compiled for.
  bool avx512_fvldqbw() const { return avx2_fma() && avx512f && avx512vl && avx512dq && avx512bw; }
};

/// The features of this CPU, detected on the first call (thread-safe) and cached.
const CpuFeatures& cpu_features();

}  // namespace kinema
