#include "kinema/core/cpu_features.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#define KINEMA_CPUID 1
#endif

namespace kinema {
namespace {

#if KINEMA_CPUID
// XCR0, the register states the OS saves on a context switch; 0 when XGETBV is unavailable.
unsigned long long os_saved_state() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !(ecx & bit_OSXSAVE)) return 0;
  unsigned lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<unsigned long long>(hi) << 32) | lo;
}
#endif

CpuFeatures detect() {
  CpuFeatures f;
#if KINEMA_CPUID
  // GCC's and clang's __builtin_cpu_supports already check XCR0 for AVX and AVX-512; the explicit
  // test keeps that promise visible here and independent of the compiler's runtime.
  const unsigned long long xcr0 = os_saved_state();
  const bool ymm_saved = (xcr0 & 0x6u) == 0x6u;    // SSE and AVX state
  const bool zmm_saved = (xcr0 & 0xE6u) == 0xE6u;  // plus opmask and both zmm halves
  f.sse41 = __builtin_cpu_supports("sse4.1");
  f.avx2 = ymm_saved && __builtin_cpu_supports("avx2");
  f.fma = ymm_saved && __builtin_cpu_supports("fma");
  // F16C from CPUID leaf 1 (ECX bit 29): clang 14's __builtin_cpu_supports has no "f16c".
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  f.f16c = ymm_saved && __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C) != 0;
  f.avx512f = zmm_saved && __builtin_cpu_supports("avx512f");
  f.avx512vl = f.avx512f && __builtin_cpu_supports("avx512vl");
  f.avx512dq = f.avx512f && __builtin_cpu_supports("avx512dq");
  f.avx512bw = f.avx512f && __builtin_cpu_supports("avx512bw");
#endif
  return f;
}

}  // namespace

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = detect();
  return features;
}

}  // namespace kinema
