// src/graph/graph_builder_internal.h — internal: GraphBuilder, the offline reader behind
// build_graph (kinema/graph/graph_builder.h), and the Json view it reads through.
//
// Every read goes through a Json view that knows its JSON pointer, so each error names the
// graph file, the pointer of the offending field and the reason (kinema::Error). The builder's
// steps live in one file each:
//   graph_json.cpp            typed reads of Json values, each failing at its pointer
//   graph_builder.cpp         the document: its members in order, parameters, root-motion and
//                             compression settings, references to parameters and clips
//   graph_build_clips.cpp     clip files, the shared skeleton, root-motion extraction, runtime or
//                             compressed clips
//   graph_build_nodes.cpp     node references and named nodes, clip players, blend spaces,
//                             additive and layer blends
//   graph_build_machines.cpp  state machines, transitions, conditions
//   graph_instant_cycles.cpp  the check for cycles of instant transitions
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kinema/core/error.h"
#include "kinema/graph/graph_builder.h"

namespace kinema {

/// A JSON value and its pointer in the graph file.
struct Json {
  const nlohmann::json& v;
  std::string ptr;

  /// The member `key` (pointer extended, with ~ and / escaped). Caller checks it exists.
  Json at(std::string_view key) const;
  /// Element i of an array.
  Json at(size_t i) const;
  bool has(std::string_view key) const { return v.is_object() && v.contains(key); }
};

/// "a string", "a number", … for messages.
const char* json_kind(const nlohmann::json& v);

/// The keys of a map by name, comma-separated, for messages ("none" when empty).
template <class Map>
std::string names_of(const Map& m) {
  std::string s;
  for (const auto& entry : m) s += (s.empty() ? "" : ", ") + entry.first;
  return s.empty() ? "none" : s;
}

/// Builds one graph into a BuiltGraph (AnimGraph's friend: it fills the graph's members).
/// Single use: construct, run(), then read the result.
class GraphBuilder {
 public:
  GraphBuilder(BuiltGraph& out, const std::string& file, const GraphBuildOptions& options);
  /// Reads the JSON text and builds everything; throws kinema::Error at the first problem.
  void run(std::string_view text);

 private:
  // ---- typed reads (graph_json.cpp): each checks the value and fails at its pointer --------
  [[noreturn]] void fail(const std::string& ptr, const std::string& reason) const;
  void expect_object(const Json& j) const;
  void expect_array(const Json& j) const;
  /// Rejects members other than `allowed` ("comment" is always allowed).
  void check_members(const Json& j, std::initializer_list<std::string_view> allowed) const;
  Json require(const Json& j, std::string_view key) const;
  std::string get_string(const Json& j) const;
  std::string get_name(const Json& j) const;  ///< non-empty string
  double get_number(const Json& j) const;     ///< finite
  float get_float(const Json& j) const;       ///< finite, fits a float
  bool get_bool(const Json& j) const;
  int get_int(const Json& j) const;

  // ---- references by name (graph_builder.cpp) ------------------------------------------------
  /// Index of a parameter named by string `j`; `type_wanted` < 0 accepts any type.
  int parameter_ref(const Json& j, int type_wanted = -1) const;
  /// Index of a clip named by string `j`.
  int clip_ref(const Json& j) const;
  /// A weight: a number, or the name of a float parameter.
  /// A float parameter's name or a number (not negative unless `signed_value`).
  GraphValue value_ref(const Json& j, bool signed_value = false) const;

  // ---- the steps ----------------------------------------------------------------------------
  // graph_builder.cpp
  void parse_parameters(const Json& j);
  void parse_drivers(const Json& j);
  void parse_root_motion(const Json& j);
  void parse_compression(const Json& j);

  // graph_build_clips.cpp
  void parse_clips(const Json& j);
  /// The clip of `asset` that clip entry `c` names ("clip", else the file's only clip).
  const Clip& select_clip(const Json& c, const Asset& asset, GraphClipSource& source) const;
  void build_clips();
  const Asset& load_file(const std::string& path, const Json& where);
  std::vector<int> joint_map(const Asset& asset, const std::string& path, const Json& where) const;

  // graph_build_nodes.cpp
  void collect_named_nodes(const Json& j);
  int build_ref(const Json& j);
  int build_inline(const Json& j, const std::string& name);
  int add_node(GraphNode node);
  ClipNode parse_clip_node(const Json& j);
  Blend1DNode parse_blend1d(const Json& j);
  Blend2DNode parse_blend2d(const Json& j);
  AdditiveNode parse_additive(const Json& j);
  LayerNode parse_layer(const Json& j);
  LocomotionWarpNode parse_locomotion_warp(const Json& j);
  int joint_ref(const Json& j) const;
  std::vector<SyncMarker> parse_markers(const Json& j) const;
  std::vector<SoaTransform> parse_reference(const Json& j) const;
  std::vector<float> parse_mask(const Json& j) const;

  // graph_build_machines.cpp
  StateMachineNode parse_machine(const Json& j);
  GraphTransition parse_transition(const Json& j, const StateMachineNode& m) const;
  GraphCondition parse_condition(const Json& j) const;

  // graph_instant_cycles.cpp
  void check_instant_cycles(const StateMachineNode& m) const;

  BuiltGraph& out_;
  AnimGraph& g_;  // out_.graph
  const GraphBuildOptions& opt_;
  std::string dir_;                     // folder of the graph file
  std::map<std::string, Asset> files_;  // loaded clip files by resolved path
  std::string skeleton_file_;           // the file whose skeleton is the graph's
  struct RawClip {
    Clip clip;  // on the graph's skeleton (tracks in its joint order), without morph tracks
    double sample_rate = 0;
    std::string ptr;
  };
  std::vector<RawClip> raw_;
  std::map<std::string, std::string> param_ptr_;  // name → pointer of its definition
  std::map<std::string, std::string> clip_ptr_;
  struct NamedNode {
    const nlohmann::json* v;
    std::string ptr;
  };
  std::map<std::string, NamedNode> named_;
  std::vector<std::string> expanding_;  // named nodes being built (reference cycle check)
};

}  // namespace kinema
