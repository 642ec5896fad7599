// Building an animation graph (kinema/graph/graph_builder.h): the entry points, the document's
// members in order, parameters, the root-motion and compression settings, and references to
// parameters and clips by name. The other steps are listed in graph_builder_internal.h.
#include <cmath>
#include <filesystem>

#include "graph_builder_internal.h"
#include "kinema/core/file.h"

namespace kinema {

namespace fs = std::filesystem;

BuiltGraph build_graph(std::string_view json_text, const std::string& file,
                       const GraphBuildOptions& options) {
  BuiltGraph built;
  GraphBuilder(built, file, options).run(json_text);
  return built;
}

BuiltGraph build_graph_file(const std::string& path, const GraphBuildOptions& options) {
  const std::string text = read_file(path);
  return build_graph(text, path, options);
}

GraphBuilder::GraphBuilder(BuiltGraph& out, const std::string& file,
                           const GraphBuildOptions& options)
    : out_(out), g_(out.graph), opt_(options), dir_(fs::path(file).parent_path().string()) {
  g_.file_ = file;
}

// ---- the document --------------------------------------------------------------------------

namespace {

/// "line 3, column 14" for a byte offset into text.
std::string line_column(std::string_view text, size_t byte) {
  long line = 1, column = 1;
  for (size_t i = 0; i < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

/// The JSON document (comments allowed); text that is not JSON throws kinema::Error(file,
/// "line L, column C", reason).
nlohmann::json read_json(std::string_view text, const std::string& file) {
  try {
    return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/true,
                                 /*ignore_comments=*/true);
  } catch (const nlohmann::json::parse_error& e) {
    std::string what = e.what();
    if (const size_t colon = what.find(": "); colon != std::string::npos)
      what = what.substr(colon + 2);  // drop "[json.exception.parse_error.101] parse error at …"
    throw Error(file, line_column(text, e.byte > 0 ? e.byte - 1 : 0), "not valid JSON: " + what);
  } catch (const nlohmann::json::exception& e) {
    // E.g. "number overflow parsing '1e999'": no position is given, so find the token.
    std::string what = e.what();
    if (const size_t close = what.find("] "); close != std::string::npos)
      what = what.substr(close + 2);
    std::string place;
    const size_t q0 = what.find('\''), q1 = what.rfind('\'');
    if (q0 != std::string::npos && q1 > q0) {
      const size_t at = text.find(what.substr(q0 + 1, q1 - q0 - 1));
      if (at != std::string_view::npos) place = line_column(text, at);
    }
    throw Error(file, place, "not valid JSON: " + what);
  }
}

}  // namespace

void GraphBuilder::run(std::string_view text) {
  const nlohmann::json doc = read_json(text, g_.file_);
  const Json top{doc, ""};
  check_members(top, {"version", "description", "parameters", "drivers", "clips", "root_motion",
                      "compression", "nodes", "root"});
  if (top.has("version")) {
    const Json v = top.at("version");
    if (get_int(v) != 1) fail(v.ptr, "unsupported graph version (this kinema reads version 1)");
  }
  if (top.has("description")) get_string(top.at("description"));
  if (top.has("parameters")) parse_parameters(top.at("parameters"));
  if (top.has("drivers")) parse_drivers(top.at("drivers"));
  parse_clips(require(top, "clips"));
  // Clips are built once root motion is known (it decides how they are built).
  if (top.has("root_motion")) parse_root_motion(top.at("root_motion"));
  if (top.has("compression")) parse_compression(top.at("compression"));
  build_clips();
  if (top.has("nodes")) collect_named_nodes(top.at("nodes"));
  g_.root_ = build_ref(require(top, "root"));
  for (size_t i = 0; i < g_.nodes_.size(); ++i)
    if (g_.nodes_[i].type == NodeType::StateMachine) g_.machines_.push_back(static_cast<int>(i));
}

void GraphBuilder::parse_parameters(const Json& j) {
  expect_array(j);
  for (size_t i = 0; i < j.v.size(); ++i) {
    const Json p = j.at(i);
    check_members(p, {"name", "type", "default"});
    GraphParameter param;
    const Json name = require(p, "name");
    param.name = get_name(name);
    if (const auto it = param_ptr_.find(param.name); it != param_ptr_.end())
      fail(name.ptr,
           "duplicate parameter '" + param.name + "' (first defined at " + it->second + ")");
    const Json type = require(p, "type");
    const std::string t = get_string(type);
    if (t == "float")
      param.type = ParamType::Float;
    else if (t == "bool")
      param.type = ParamType::Bool;
    else if (t == "trigger")
      param.type = ParamType::Trigger;
    else
      fail(type.ptr, "unknown parameter type '" + t + "' (expected float, bool or trigger)");
    if (p.has("default")) {
      const Json d = p.at("default");
      if (param.type == ParamType::Float)
        param.default_value = get_float(d);
      else if (param.type == ParamType::Bool)
        param.default_value = get_bool(d) ? 1.0f : 0.0f;
      else
        fail(d.ptr, "a trigger has no default (it starts cleared)");
    }
    param_ptr_[param.name] = p.ptr;
    g_.parameters_.push_back(std::move(param));
  }
}

// "drivers": [{"parameter": NAME, "expression": TEXT}, …]: the text is checked where it is
// compiled (kinema/procedural/graph_drivers.h); here the parameter it sets.
void GraphBuilder::parse_drivers(const Json& j) {
  expect_array(j);
  std::vector<std::string> driven(g_.parameters_.size());
  for (size_t i = 0; i < j.v.size(); ++i) {
    const Json d = j.at(i);
    check_members(d, {"parameter", "expression"});
    const Json name = require(d, "parameter");
    GraphDriver driver;
    driver.parameter = parameter_ref(name);
    const GraphParameter& param = g_.parameters_[static_cast<size_t>(driver.parameter)];
    if (param.type == ParamType::Trigger)
      fail(name.ptr, "'" + param.name + "' is a trigger; a driver sets a float or a bool");
    std::string& first = driven[static_cast<size_t>(driver.parameter)];
    if (!first.empty()) fail(name.ptr, "'" + param.name + "' is already driven (at " + first + ")");
    first = name.ptr;
    const Json expression = require(d, "expression");
    driver.expression = get_name(expression);
    driver.pointer = expression.ptr;
    g_.drivers_.push_back(std::move(driver));
  }
}

// ---- settings ------------------------------------------------------------------------------

void GraphBuilder::parse_root_motion(const Json& j) {
  RootMotionConfig& cfg = g_.root_motion_;
  struct {
    int joint = -1;
  } options;
  if (j.v.is_boolean()) {
    cfg.enabled = j.v.get<bool>();
  } else {
    check_members(j, {"joint", "rotation"});
    cfg.enabled = true;
    if (j.has("rotation")) cfg.rotation = get_bool(j.at("rotation"));
    if (j.has("joint")) {
      const Json joint = j.at("joint");
      const std::string name = get_name(joint);
      options.joint = out_.character.skeleton.find(name);
      if (options.joint < 0)
        fail(joint.ptr, "no joint '" + name + "' in the skeleton of " + skeleton_file_);
    }
  }
  cfg.joint = options.joint;
}

void GraphBuilder::parse_compression(const Json& j) {
  CompressionConfig& cfg = out_.compression;
  if (j.v.is_boolean()) {
    cfg.enabled = j.v.get<bool>();
    return;
  }
  check_members(j, {"max_error_cm", "vertex_distance_cm"});
  cfg.enabled = true;
  const auto length_cm = [&](const char* name, double& metres) {
    if (!j.has(name)) return;
    const Json v = j.at(name);
    const double cm = get_number(v);
    if (!(cm > 0) || !std::isfinite(cm)) fail(v.ptr, std::string(name) + " must be positive");
    metres = cm / 100;
  };
  length_cm("max_error_cm", cfg.max_error);
  length_cm("vertex_distance_cm", cfg.vertex_distance);
}

// ---- references by name --------------------------------------------------------------------

namespace {

const char* type_name(ParamType t) {
  switch (t) {
    case ParamType::Float:
      return "float";
    case ParamType::Bool:
      return "bool";
    case ParamType::Trigger:
      return "trigger";
  }
  return "?";
}

}  // namespace

int GraphBuilder::parameter_ref(const Json& j, int type_wanted) const {
  const std::string name = get_name(j);
  const int index = g_.find_parameter(name);
  if (index < 0)
    fail(j.ptr, "unknown parameter '" + name + "' (parameters: " + names_of(param_ptr_) + ")");
  const ParamType t = g_.parameters_[static_cast<size_t>(index)].type;
  if (type_wanted >= 0 && static_cast<int>(t) != type_wanted)
    fail(j.ptr, "parameter '" + name + "' is a " + type_name(t) + ", expected a " +
                    type_name(static_cast<ParamType>(type_wanted)));
  return index;
}

int GraphBuilder::clip_ref(const Json& j) const {
  const std::string name = get_name(j);
  for (size_t i = 0; i < g_.clips_.size(); ++i)
    if (g_.clips_[i].name == name) return static_cast<int>(i);
  fail(j.ptr, "unknown clip '" + name + "' (clips: " + names_of(clip_ptr_) + ")");
}

GraphValue GraphBuilder::value_ref(const Json& j, bool signed_value) const {
  GraphValue v;
  if (j.v.is_string()) {
    v.parameter = parameter_ref(j, static_cast<int>(ParamType::Float));
  } else if (j.v.is_number()) {
    v.constant = get_float(j);
    if (!signed_value && v.constant < 0) fail(j.ptr, "a weight must not be negative");
  } else {
    fail(j.ptr,
         std::string("expected a number or a float parameter's name, got ") + json_kind(j.v));
  }
  return v;
}

}  // namespace kinema
