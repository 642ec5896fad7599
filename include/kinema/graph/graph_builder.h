// kinema/graph/graph_builder.h — building an animation graph offline: the JSON definition, the
// clip files and their shared skeleton, root-motion extraction and compression.
//
// As with RuntimeSkeleton::build and RuntimeClip::build, the graph is built once, offline, into
// its runtime form: build_graph reads the definition (the format is documented in
// docs/graph.md), loads every clip file it names through GraphBuildOptions::load_file (each
// distinct path once), moves every clip onto the first file's skeleton, extracts root motion,
// builds the runtime clips (or compresses them) and returns a BuiltGraph: the runtime AnimGraph
// (kinema/graph/graph.h) that GraphInstances play, the character the clips belong to (what a
// baked result is written onto, kinema/graph/graph_play.h) and where each clip came from.
//
// Building validates everything and throws kinema::Error(graph file, JSON pointer of the bad
// field, reason): unknown members, wrong types, non-finite numbers, negative durations, unknown
// or duplicate names (parameters, clips, nodes, states), missing files or clips, clips whose
// skeletons differ, references that loop, and cycles of zero-duration transitions whose
// conditions can all hold at once. Text that is not JSON is reported at "line L, column C".
//
// Clip files are read by the caller's loader so that this module needs no file formats:
// kinema/io/graph_file.h's load_anim_graph builds a graph file whose clips are read with
// load_asset.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "kinema/character/asset.h"
#include "kinema/graph/graph.h"

namespace kinema {

struct GraphBuildOptions {
  /// Loads a clip file given its resolved path (the graph's folder joined with the file as
  /// written); required. Each distinct path is loaded once. Errors it throws are reported at the
  /// clip's "file" pointer ("cannot load 'walk.glb': …"). load_anim_graph reads files with
  /// load_asset; tests serve in-memory assets.
  std::function<Asset(const std::string& path)> load_file;
  /// The clip paths name files on disk: a missing one is reported at its JSON pointer ("clip file
  /// not found: PATH") before load_file runs.
  bool clips_are_files = false;
  /// Most nodes a graph may expand to (named nodes are instanced once per reference).
  int max_nodes = 4096;
};

/// The graph's "compression" member: every clip compressed (kinema::compress) within this bound
/// on virtual vertices, and sampled from the compressed form at run time.
struct CompressionConfig {
  bool enabled = false;
  double max_error = 1e-4;        ///< metres ("max_error_cm" in the JSON)
  double vertex_distance = 0.03;  ///< metres ("vertex_distance_cm" in the JSON)
};

/// Where one of the graph's clips came from (the offline record of a GraphClip).
struct GraphClipSource {
  std::string name;       ///< the graph's name for it (AnimGraph::clips()[i].name)
  std::string file;       ///< as written in the graph (relative to the graph file, or absolute)
  std::string path;       ///< the resolved path that was loaded (lexically normalized)
  std::string clip_name;  ///< the clip's name inside the file
};

/// What building a graph gives: the runtime graph and the offline data it was built from.
struct BuiltGraph {
  /// The runtime graph: runtime skeleton, clips, parameters and nodes. GraphInstances keep a
  /// pointer to it, so it must outlive them and stay where it is.
  AnimGraph graph;
  /// The first clip file's asset without its clips (skeleton, meshes, skins, humanoid): the
  /// character every clip plays on, whose skeleton graph.runtime_skeleton() was built from, and
  /// what a baked result is written onto (play_graph).
  Asset character;
  /// One entry per graph.clips(), in the same order.
  std::vector<GraphClipSource> clips;
  /// How the clips were stored (the "compression" member; disabled by default).
  CompressionConfig compression;
};

/// Builds a graph from its JSON text. `file` names the graph in errors (and becomes
/// AnimGraph::file()); its folder resolves relative clip paths ("" or a bare name: the current
/// folder). Throws kinema::Error(file, JSON pointer or line and column, reason).
BuiltGraph build_graph(std::string_view json_text, const std::string& file,
                       const GraphBuildOptions& options = {});

/// Reads a graph file (kinema::read_file) and builds it (build_graph); clip paths are relative
/// to its folder. Throws kinema::Error for a file that cannot be read and as build_graph does.
BuiltGraph build_graph_file(const std::string& path, const GraphBuildOptions& options = {});

}  // namespace kinema
