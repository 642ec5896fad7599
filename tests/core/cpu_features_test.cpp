// The run-time CPU test every module's kernel choice rests on (kinema/core/cpu_features.h).
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "kinema/core/cpu_features.h"

namespace kinema {
namespace {

// The flags Linux reports for the first CPU; empty where /proc/cpuinfo is missing. The kernel
// clears flags whose register state it does not save, so they are what a process may use.
std::set<std::string> linux_cpu_flags() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    std::set<std::string> flags;
    for (std::string w; words >> w;) flags.insert(w);
    return flags;
  }
  return {};
}

TEST(CpuFeatures, AskedOnceAndCached) { EXPECT_EQ(&cpu_features(), &cpu_features()); }

TEST(CpuFeatures, CombinationsImplyTheirParts) {
  const CpuFeatures& f = cpu_features();
  if (f.avx2_fma()) {
    EXPECT_TRUE(f.avx2 && f.fma);
  }
  if (f.avx512_fvldqbw()) {
    EXPECT_TRUE(f.avx2_fma());
    EXPECT_TRUE(f.avx512f && f.avx512vl && f.avx512dq && f.avx512bw);
  }
  if (f.avx512vl || f.avx512dq || f.avx512bw) {
    EXPECT_TRUE(f.avx512f);
  }
}

TEST(CpuFeatures, TheBuildsBaselineIsPresent) {
#if defined(__SSE4_1__) && defined(__x86_64__)
  EXPECT_TRUE(cpu_features().sse41) << "built for SSE4.1 and running, so the CPU has it";
#else
  GTEST_SKIP() << "not an SSE4.1 x86-64 build";
#endif
}

TEST(CpuFeatures, AgreesWithTheFlagsLinuxReports) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  const std::set<std::string> flags = linux_cpu_flags();
  if (flags.empty()) GTEST_SKIP() << "no /proc/cpuinfo flags here";
  const CpuFeatures& f = cpu_features();
  auto has = [&](const char* name) { return flags.count(name) == 1; };
  EXPECT_EQ(f.sse41, has("sse4_1"));
  EXPECT_EQ(f.avx2, has("avx2"));
  EXPECT_EQ(f.fma, has("fma"));
  EXPECT_EQ(f.f16c, has("f16c"));
  EXPECT_EQ(f.avx512f, has("avx512f"));
  EXPECT_EQ(f.avx512vl, has("avx512vl"));
  EXPECT_EQ(f.avx512dq, has("avx512dq"));
  EXPECT_EQ(f.avx512bw, has("avx512bw"));
#else
  EXPECT_FALSE(cpu_features().avx2);
  EXPECT_FALSE(cpu_features().avx512f);
#endif
}

}  // namespace
}  // namespace kinema
