// Where the build put the learn plugin and where installing puts it (src/pipeline/learn_plugin.cpp
// looks in both after the program's and the library's own folders).
//
// Absolute paths, written by CMake into one generated file (learn_plugin_paths.cpp.in →
// <build>/src/pipeline/learn_plugin_paths_<config>.cpp, compiled alone) rather than into the
// module's compile definitions: the module's other objects then carry no path, and a clone at
// another folder finds them in ccache (CMakeLists.txt, CCACHE_BASEDIR).
#pragma once

namespace kinema::pipeline {

/// The plugin in this build tree ($<TARGET_FILE:kinema_learn_plugin>).
const char* learn_plugin_build_path();
/// The plugin in the install prefix's library folder.
const char* learn_plugin_install_path();

}  // namespace kinema::pipeline
