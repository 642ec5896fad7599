// The folder the benchmarks read real files from (motion capture, characters, ozz's sample mesh):
// $KINEMA_SHARED_DATA, else ../shared/data beside the checkout (BENCHMARKS.md). A benchmark whose
// file is missing says so and skips that row.
#pragma once

#include <cstdlib>
#include <string>

#include "bench_paths.h"

namespace kinema::bench {

inline std::string shared_data() {
  if (const char* env = std::getenv("KINEMA_SHARED_DATA"); env && *env) return env;
  return source_dir() + "/../shared/data";
}

}  // namespace kinema::bench
