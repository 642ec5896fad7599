// Where the benchmark programs find the files they read: the test data (tests/data) and the
// source tree (data/demo, and ../shared/data beside it: shared_data.h).
//
// The paths are absolute, fixed when the build is configured, and live in one generated file
// (bench/bench_paths.cpp.in → <build>/bench/bench_paths.cpp, the library kinema_bench_paths that
// every benchmark program links) rather than in each program's compile definitions: the
// benchmarks' objects then carry no path, and a clone at another folder finds them in ccache
// (CMakeLists.txt, CCACHE_BASEDIR). Each function returns a string made on first call, so
// namespace-scope constants may be initialized from them.
#pragma once

#include <string>

namespace kinema::bench {

/// tests/data in the source tree (no trailing slash).
const std::string& test_data_dir();
/// The source tree's root.
const std::string& source_dir();

}  // namespace kinema::bench
