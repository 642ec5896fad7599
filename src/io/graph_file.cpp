// Animation graphs whose clips are files (kinema/io/graph_file.h).
#include "kinema/io/graph_file.h"

namespace kinema {

BuiltGraph load_anim_graph(const std::string& path, const LoadOptions& load,
                           GraphBuildOptions options) {
  options.load_file = [load](const std::string& clip_path) { return load_asset(clip_path, load); };
  options.clips_are_files = true;
  return build_graph_file(path, options);
}

}  // namespace kinema
