// kinema/io/graph_file.h — animation graphs (kinema/graph/graph.h) whose clips are files that
// load_asset reads.
#pragma once

#include <string>

#include "kinema/graph/graph.h"
#include "kinema/io/asset_file.h"

namespace kinema {

/// Reads and validates a graph file (AnimGraph::load) and the clip files it names, with
/// load_asset and `load` (e.g. the BVH position-channel reading). A missing clip file is reported
/// at its JSON pointer. Throws kinema::Error(file, JSON pointer, reason).
AnimGraph load_anim_graph(const std::string& path, const LoadOptions& load = {},
                          GraphLoadOptions options = {});

}  // namespace kinema
