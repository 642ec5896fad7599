// src/graph/graph_loader.h — internal: the JSON reader behind AnimGraph::load / parse.
//
// Every read goes through a Json view that knows its JSON pointer, so each error names the
// graph file, the pointer of the offending field and the reason (kinema::Error).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kinema/core/error.h"
#include "kinema/graph/graph.h"

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

class GraphLoader {
 public:
  GraphLoader(AnimGraph& graph, const GraphLoadOptions& options) : g_(graph), opt_(options) {}
  void run(std::string_view text);

  // ---- helpers (also used by the node parsers) ----------------------------------------------
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

  /// Index of a parameter named by string `j`; `type_wanted` < 0 accepts any type.
  int parameter_ref(const Json& j, int type_wanted = -1) const;
  /// Index of a clip named by string `j`.
  int clip_ref(const Json& j) const;
  /// A weight: a number, or the name of a float parameter.
  GraphValue value_ref(const Json& j) const;

 private:
  // graph_load.cpp
  void parse_parameters(const Json& j);
  void parse_root_motion(const Json& j);
  void parse_compression(const Json& j);
  void parse_clips(const Json& j);
  void build_clips();
  const Asset& load_file(const std::string& path, const Json& where);
  std::vector<int> joint_map(const Asset& asset, const std::string& path, const Json& where) const;

  // graph_nodes.cpp
  void collect_named_nodes(const Json& j);
  int build_ref(const Json& j);
  int build_inline(const Json& j, const std::string& name);
  int add_node(GraphNode node);
  ClipNode parse_clip_node(const Json& j);
  Blend1DNode parse_blend1d(const Json& j);
  Blend2DNode parse_blend2d(const Json& j);
  AdditiveNode parse_additive(const Json& j);
  LayerNode parse_layer(const Json& j);
  StateMachineNode parse_machine(const Json& j);
  std::vector<SoaTransform> parse_reference(const Json& j) const;
  std::vector<float> parse_mask(const Json& j) const;
  GraphTransition parse_transition(const Json& j, const StateMachineNode& m) const;
  GraphCondition parse_condition(const Json& j) const;

  // graph_check.cpp
  void check_instant_cycles(const StateMachineNode& m) const;

  AnimGraph& g_;
  const GraphLoadOptions& opt_;
  std::string dir_;                     // folder of the graph file
  std::map<std::string, Asset> files_;  // loaded clip files by resolved path
  std::string skeleton_file_;           // the file whose skeleton is the graph's
  struct RawClip {
    Clip clip;  // on the graph's skeleton (tracks in its joint order)
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
