// tools/kinema/build_paths.h — the folders the CLI looks in that the build decides: the source
// tree's demo data and viewer, the installed demo data, and the Python package the build
// assembles.
//
// They are absolute paths, written by CMake into one generated file (build_paths.cpp.in →
// <build>/tools/kinema/build_paths.cpp, compiled outside the unity batches) rather than into the
// CLI's compile definitions: every other object of the CLI then carries no path, and a clone at
// another folder finds it in ccache (CMakeLists.txt, CCACHE_BASEDIR).
#pragma once

namespace kinema::cli::build_paths {

/// data/demo in the source tree (`kinema demo`'s inputs when run from a build tree).
const char* demo_data();
/// The installed copy of data/demo (<prefix>/share/kinema/demo).
const char* installed_demo_data();
/// The web viewer's page in the source tree (`kinema view`'s default --viewer-dir).
const char* viewer();
/// Where the build assembles the Python package (python/CMakeLists.txt): `kinema batch` puts it
/// first on PYTHONPATH when it is there.
const char* python_build();

}  // namespace kinema::cli::build_paths
