// Loading an animation graph: the JSON document, parameters, clip files and the shared
// skeleton, root motion (see kinema/graph/graph.h and docs/graph.md). Nodes and state machines
// are parsed in graph_nodes.cpp, instant-transition cycles are checked in graph_check.cpp.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

#include "graph_loader.h"
#include "ground_motion.h"
#include "kinema/compress/compress.h"

namespace kinema {

namespace fs = std::filesystem;

// ---- Json views and typed reads ----------------------------------------------------------

namespace {

std::string escape_pointer_token(std::string_view key) {
  std::string s;
  for (char c : key) {
    if (c == '~')
      s += "~0";
    else if (c == '/')
      s += "~1";
    else
      s += c;
  }
  return s;
}

}  // namespace

Json Json::at(std::string_view key) const {
  return {v.at(std::string(key)), ptr + "/" + escape_pointer_token(key)};
}

Json Json::at(size_t i) const { return {v.at(i), ptr + "/" + std::to_string(i)}; }

const char* json_kind(const nlohmann::json& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::null:
      return "null";
    case nlohmann::json::value_t::object:
      return "an object";
    case nlohmann::json::value_t::array:
      return "an array";
    case nlohmann::json::value_t::string:
      return "a string";
    case nlohmann::json::value_t::boolean:
      return "a boolean";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
    case nlohmann::json::value_t::number_float:
      return "a number";
    default:
      return "an unsupported value";
  }
}

void GraphLoader::fail(const std::string& ptr, const std::string& reason) const {
  throw Error(g_.file_, ptr.empty() ? std::string("/") : ptr, reason);
}

void GraphLoader::expect_object(const Json& j) const {
  if (!j.v.is_object()) fail(j.ptr, std::string("expected an object, got ") + json_kind(j.v));
}

void GraphLoader::expect_array(const Json& j) const {
  if (!j.v.is_array()) fail(j.ptr, std::string("expected an array, got ") + json_kind(j.v));
}

void GraphLoader::check_members(const Json& j,
                                std::initializer_list<std::string_view> allowed) const {
  expect_object(j);
  for (auto it = j.v.begin(); it != j.v.end(); ++it) {
    const std::string& key = it.key();
    if (key == "comment") continue;
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    std::string list;
    for (std::string_view a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
    fail(j.at(key).ptr, "unknown member '" + key + "' (expected one of: " + list + ")");
  }
}

Json GraphLoader::require(const Json& j, std::string_view key) const {
  expect_object(j);
  if (!j.v.contains(key))
    fail(j.ptr + "/" + escape_pointer_token(key),
         "missing required member '" + std::string(key) + "'");
  return j.at(key);
}

std::string GraphLoader::get_string(const Json& j) const {
  if (!j.v.is_string()) fail(j.ptr, std::string("expected a string, got ") + json_kind(j.v));
  return j.v.get<std::string>();
}

std::string GraphLoader::get_name(const Json& j) const {
  std::string s = get_string(j);
  if (s.empty()) fail(j.ptr, "a name must not be empty");
  return s;
}

double GraphLoader::get_number(const Json& j) const {
  if (!j.v.is_number()) fail(j.ptr, std::string("expected a number, got ") + json_kind(j.v));
  const double d = j.v.get<double>();
  if (!std::isfinite(d)) fail(j.ptr, "not a finite number");
  return d;
}

float GraphLoader::get_float(const Json& j) const {
  const double d = get_number(j);
  if (std::abs(d) > static_cast<double>(std::numeric_limits<float>::max()))
    fail(j.ptr, "number out of range");
  return static_cast<float>(d);
}

bool GraphLoader::get_bool(const Json& j) const {
  if (!j.v.is_boolean()) fail(j.ptr, std::string("expected true or false, got ") + json_kind(j.v));
  return j.v.get<bool>();
}

int GraphLoader::get_int(const Json& j) const {
  const double d = get_number(j);
  if (d != std::floor(d) || std::abs(d) > 1e9) fail(j.ptr, "expected an integer");
  return static_cast<int>(d);
}

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

template <class Map>
std::string names_of(const Map& m) {
  std::string s;
  for (const auto& [name, ptr] : m) s += (s.empty() ? "" : ", ") + name;
  return s.empty() ? "none" : s;
}

}  // namespace

int GraphLoader::parameter_ref(const Json& j, int type_wanted) const {
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

int GraphLoader::clip_ref(const Json& j) const {
  const std::string name = get_name(j);
  for (size_t i = 0; i < g_.clips_.size(); ++i)
    if (g_.clips_[i].name == name) return static_cast<int>(i);
  fail(j.ptr, "unknown clip '" + name + "' (clips: " + names_of(clip_ptr_) + ")");
}

GraphValue GraphLoader::value_ref(const Json& j) const {
  GraphValue v;
  if (j.v.is_string()) {
    v.parameter = parameter_ref(j, static_cast<int>(ParamType::Float));
  } else if (j.v.is_number()) {
    v.constant = get_float(j);
    if (v.constant < 0) fail(j.ptr, "a weight must not be negative");
  } else {
    fail(j.ptr,
         std::string("expected a number or a float parameter's name, got ") + json_kind(j.v));
  }
  return v;
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

}  // namespace

void GraphLoader::run(std::string_view text) {
  dir_ = fs::path(g_.file_).parent_path().string();
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/true, /*ignore_comments=*/true);
  } catch (const nlohmann::json::parse_error& e) {
    std::string what = e.what();
    if (const size_t colon = what.find(": "); colon != std::string::npos)
      what = what.substr(colon + 2);  // drop "[json.exception.parse_error.101] parse error at …"
    throw Error(g_.file_, line_column(text, e.byte > 0 ? e.byte - 1 : 0),
                "not valid JSON: " + what);
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
    throw Error(g_.file_, place, "not valid JSON: " + what);
  }
  const Json top{doc, ""};
  check_members(top, {"version", "description", "parameters", "clips", "root_motion", "compression",
                      "nodes", "root"});
  if (top.has("version")) {
    const Json v = top.at("version");
    if (get_int(v) != 1) fail(v.ptr, "unsupported graph version (this kinema reads version 1)");
  }
  if (top.has("description")) get_string(top.at("description"));
  if (top.has("parameters")) parse_parameters(top.at("parameters"));
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

void GraphLoader::parse_parameters(const Json& j) {
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

// ---- clips, skeleton, root motion ----------------------------------------------------------

const Asset& GraphLoader::load_file(const std::string& path, const Json& where) {
  if (const auto it = files_.find(path); it != files_.end()) return it->second;
  Asset asset;
  try {
    if (!opt_.load_file)
      fail(where.ptr,
           "no clip loader given (GraphLoadOptions::load_file; load_anim_graph in "
           "kinema/io/graph_file.h reads clip files)");
    std::error_code ec;
    if (opt_.clips_are_files && !fs::is_regular_file(path, ec))
      fail(where.ptr, "clip file not found: " + path);
    asset = opt_.load_file(path);
  } catch (const Error& e) {
    if (e.file() == g_.file_) throw;
    fail(where.ptr, "cannot load '" + get_string(where) + "': " + e.what());
  }
  return files_.emplace(path, std::move(asset)).first->second;
}

std::vector<int> GraphLoader::joint_map(const Asset& asset, const std::string& path,
                                        const Json& where) const {
  const Skeleton& ref = g_.asset_.skeleton;
  const Skeleton& sk = asset.skeleton;
  const std::string differs =
      "the skeleton of " + path + " differs from that of " + skeleton_file_ + " (the graph's): ";
  std::vector<int> map(static_cast<size_t>(sk.joint_count()), -1);
  for (int j = 0; j < sk.joint_count(); ++j) {
    const std::string& name = sk.joint(j).name;
    const int r = ref.find(name);
    if (r < 0) fail(where.ptr, differs + "joint '" + name + "' is not in the graph's skeleton");
    const int p = sk.parent(j), rp = ref.parent(r);
    const std::string pn = p < 0 ? "(none)" : sk.joint(p).name;
    const std::string rpn = rp < 0 ? "(none)" : ref.joint(rp).name;
    if (pn != rpn)
      fail(where.ptr,
           differs + "joint '" + name + "' has parent " + pn + " here but " + rpn + " there");
    map[static_cast<size_t>(j)] = r;
  }
  if (sk.joint_count() != ref.joint_count()) {
    for (int r = 0; r < ref.joint_count(); ++r)
      if (sk.find(ref.joint(r).name) < 0)
        fail(where.ptr, differs + "joint '" + ref.joint(r).name + "' is missing");
  }
  return map;
}

void GraphLoader::parse_clips(const Json& j) {
  expect_array(j);
  if (j.v.empty()) fail(j.ptr, "a graph needs at least one clip (its file gives the skeleton)");
  for (size_t i = 0; i < j.v.size(); ++i) {
    const Json c = j.at(i);
    check_members(c, {"name", "file", "clip", "sample_rate"});
    GraphClip clip;
    const Json name = require(c, "name");
    clip.name = get_name(name);
    if (const auto it = clip_ptr_.find(clip.name); it != clip_ptr_.end())
      fail(name.ptr, "duplicate clip '" + clip.name + "' (first defined at " + it->second + ")");
    const Json file = require(c, "file");
    clip.file = get_name(file);
    const fs::path p(clip.file);
    clip.path =
        (p.is_absolute() || dir_.empty() ? p : fs::path(dir_) / p).lexically_normal().string();
    const Asset& asset = load_file(clip.path, file);
    if (i == 0) {
      skeleton_file_ = clip.path;
      g_.asset_ = asset;
      g_.asset_.clips.clear();
      if (g_.asset_.skeleton.empty()) fail(file.ptr, clip.path + " has no skeleton");
      g_.runtime_skeleton_ = RuntimeSkeleton::build(g_.asset_.skeleton);
    }
    // Which clip of the file: by name, else the only one.
    const Clip* source = nullptr;
    if (c.has("clip")) {
      const Json which = c.at("clip");
      clip.clip_name = get_name(which);
      for (const Clip& k : asset.clips)
        if (k.name == clip.clip_name) source = &k;
      if (!source) {
        std::string list;
        for (const Clip& k : asset.clips) list += (list.empty() ? "'" : ", '") + k.name + "'";
        fail(which.ptr, "no clip '" + clip.clip_name + "' in " + clip.file +
                            (list.empty() ? " (it has no animation)" : " (clips: " + list + ")"));
      }
    } else if (asset.clips.size() == 1) {
      source = &asset.clips[0];
      clip.clip_name = source->name;
    } else {
      fail(c.ptr + "/clip", clip.file + " has " + std::to_string(asset.clips.size()) +
                                " clips; name one with \"clip\"");
    }
    RawClip raw;
    raw.clip = *source;
    raw.clip.morph_tracks.clear();  // the graph plays skeletal motion only
    if (i > 0 && clip.path != skeleton_file_) {
      // Same joints by name, maybe in another order: move the tracks to the graph's order.
      const std::vector<int> map = joint_map(asset, clip.path, file);
      std::vector<JointTrack> tracks(static_cast<size_t>(g_.asset_.skeleton.joint_count()));
      for (size_t k = 0; k < raw.clip.tracks.size() && k < map.size(); ++k)
        tracks[static_cast<size_t>(map[k])] = std::move(raw.clip.tracks[k]);
      raw.clip.tracks = std::move(tracks);
    }
    if (c.has("sample_rate")) {
      const Json rate = c.at("sample_rate");
      raw.sample_rate = get_number(rate);
      if (!(raw.sample_rate > 0) || raw.sample_rate > 1000)
        fail(rate.ptr, "sample_rate must be in (0, 1000] frames per second");
    }
    raw.ptr = c.ptr;
    raw_.push_back(std::move(raw));
    clip_ptr_[clip.name] = c.ptr;
    g_.clips_.push_back(std::move(clip));
  }
}

void GraphLoader::build_clips() {
  const Skeleton& skeleton = g_.asset_.skeleton;
  for (size_t i = 0; i < g_.clips_.size(); ++i) {
    GraphClip& clip = g_.clips_[i];
    RawClip& raw = raw_[i];
    try {
      RuntimeClipOptions options;
      options.sample_rate = raw.sample_rate;
      if (g_.root_motion_.enabled) {
        RootMotionOptions motion;
        motion.joint = g_.root_motion_.joint;
        motion.sample_rate = raw.sample_rate;
        clip.root = RootMotion::extract(raw.clip, skeleton, motion);
        clip.has_root_motion = true;
        g_.root_motion_.joint = clip.root.joint();
        RootDelta cycle;
        if (g_.root_motion_.rotation) {
          raw.clip = make_in_place(raw.clip, skeleton, clip.root);
          clip.root.delta(0, clip.root.duration(), WrapMode::Clamp, cycle);
        } else {
          raw.clip = remove_ground_translation(raw.clip, skeleton, clip.root);
          ground_translation(clip.root, 0, clip.root.duration(), false, cycle);
        }
        if (clip.root.duration() > 0)
          clip.root_speed = static_cast<float>(length(cycle.translation) / clip.root.duration());
      }
      if (g_.compression_.enabled) {
        CompressOptions compress_options;
        compress_options.max_error = g_.compression_.max_error;
        compress_options.vertex_distance = g_.compression_.vertex_distance;
        compress_options.sample_rate = raw.sample_rate;
        clip.compressed = compress(raw.clip, skeleton, compress_options);
      } else {
        clip.runtime = RuntimeClip::build(raw.clip, skeleton, options);
      }
    } catch (const Error& e) {
      if (e.file() == g_.file_) throw;
      fail(raw.ptr, "clip '" + clip.clip_name + "' of " + clip.file + ": " + e.what());
    }
  }
  raw_.clear();
}

void GraphLoader::parse_root_motion(const Json& j) {
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
      options.joint = g_.asset_.skeleton.find(name);
      if (options.joint < 0)
        fail(joint.ptr, "no joint '" + name + "' in the skeleton of " + skeleton_file_);
    }
  }
  cfg.joint = options.joint;
}

void GraphLoader::parse_compression(const Json& j) {
  CompressionConfig& cfg = g_.compression_;
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

}  // namespace kinema
