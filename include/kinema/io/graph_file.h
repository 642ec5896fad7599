// kinema/io/graph_file.h — animation graphs (kinema/graph/graph_builder.h) whose clips are files
// that load_asset reads.
#pragma once

#include <string>

#include "kinema/graph/graph_builder.h"
#include "kinema/io/asset_file.h"

namespace kinema {

/// Reads a graph file and builds it (build_graph_file) with its clip files read by load_asset
/// and `load` (e.g. the BVH position-channel reading); `options.load_file` and
/// `options.clips_are_files` are set here. A missing clip file is reported at its JSON pointer.
/// Returns the runtime graph with its character and clip sources. Throws kinema::Error(file,
/// JSON pointer, reason).
BuiltGraph load_anim_graph(const std::string& path, const LoadOptions& load = {},
                           GraphBuildOptions options = {});

}  // namespace kinema
