// Where the test programs find what lies outside them: the test data (tests/data), the source
// tree, the built `kinema` CLI and the module graph the build wrote.
//
// The paths are absolute, fixed when the build is generated, and live in one generated file
// (tests/test_paths.cpp.in → <build>/tests/test_paths_<config>.cpp, compiled into
// kinema_test_main, which every test program links) rather than in each test file's compile
// definitions: the test files' objects then carry no path, and a clone at another folder finds
// them in ccache (CMakeLists.txt, CCACHE_BASEDIR). Each function returns a string made on first
// call, so namespace-scope constants may be initialized from them.
//
// The namespace is not kinema::testing: inside namespace kinema that name would hide GoogleTest's
// ::testing from an unqualified `testing::TempDir()`.
#pragma once

#include <string>

namespace kinema::test_paths {

/// tests/data in the source tree (no trailing slash). ctest also sets $KINEMA_TEST_DATA_DIR to it
/// for the processes a test starts.
const std::string& data_dir();
/// The source tree's root (data/demo, docs/, the sources the architecture tests read).
const std::string& source_dir();
/// The built `kinema` CLI; empty when the build has none (KINEMA_BUILD_CLI=OFF, as in the focused
/// sanitizer pass).
const std::string& cli_path();
/// The module graph the build wrote (<build>/kinema_modules.txt), which the architecture tests
/// hold against docs/architecture.md.
const std::string& module_graph();

}  // namespace kinema::test_paths
