// kinema/core/cpu_features.h — what the CPU this process runs on can execute, asked once.
//
// kinema is built for x86-64-v2 (SSE4.2) and carries wider kernels (AVX2 + FMA, AVX-512) that it
// chooses at run time. Every module asks here instead of querying the CPU itself, so the choice
// rests on one test. Each module still keeps its own cached choice and its own switch to force
// the narrower kernels (set_skin_simd_avx2, set_blend_avx2, force_baseline_search, …); the ones
// with an AVX2 and an AVX-512 kernel keep it in a KernelChoice.
#pragma once

#include <atomic>

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

/// A module's run-time choice among its kernels: 0 the build's baseline, 1 AVX2 + FMA, 2 its
/// AVX-512 build. `can_avx2` and `can_avx512` say whether this CPU runs each (from
/// cpu_features()); allow_avx2 / allow_avx512 narrow the choice for tests and side-by-side
/// benchmarks. Constant-initialized at namespace scope; kernel() is one relaxed load once chosen.
/// allow_* are not to be called while another thread runs the module's kernels.
class KernelChoice {
 public:
  constexpr KernelChoice(bool (*can_avx2)(), bool (*can_avx512)())
      : can_avx2_(can_avx2), can_avx512_(can_avx512) {}

  /// The kernel to run: 0, 1 or 2 (asked of the CPU on the first call).
  int kernel() {
    int k = kernel_.load(std::memory_order_relaxed);
    if (k < 0) {
      k = choose();
      kernel_.store(k, std::memory_order_relaxed);
    }
    return k;
  }
  /// Allows (the default) or forbids both wider kernels; returns whether one is now in use.
  bool allow_avx2(bool allowed) {
    allow_avx2_.store(allowed, std::memory_order_relaxed);
    kernel_.store(choose(), std::memory_order_relaxed);
    return kernel() > 0;
  }
  /// Allows (the default) or forbids the AVX-512 kernel; returns whether it is now in use.
  bool allow_avx512(bool allowed) {
    allow_avx512_.store(allowed, std::memory_order_relaxed);
    kernel_.store(choose(), std::memory_order_relaxed);
    return kernel() == 2;
  }

 private:
  int choose() const {
    if (!allow_avx2_.load(std::memory_order_relaxed) || !can_avx2_()) return 0;
    return allow_avx512_.load(std::memory_order_relaxed) && can_avx512_() ? 2 : 1;
  }

  bool (*can_avx2_)();
  bool (*can_avx512_)();
  std::atomic<bool> allow_avx2_{true}, allow_avx512_{true};
  std::atomic<int> kernel_{-1};  // -1: not chosen yet
};

}  // namespace kinema
