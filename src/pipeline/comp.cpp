// `kinema comp` (kinema/pipeline/comp.h): the script checked whole before any file is read, then
// evaluated node by node for each frame, every output staged and renamed at the end.
#include "kinema/pipeline/comp.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <variant>

#include "kinema/composite/image_file.h"
#include "kinema/composite/image_sequence.h"
#include "kinema/composite/keyer.h"
#include "kinema/composite/matte_filters.h"
#include "kinema/composite/plate_match.h"
#include "kinema/composite/porter_duff.h"
#include "kinema/composite/roto.h"
#include "kinema/core/file.h"
#include "lens_reader.h"
#include "sim_scene_reader.h"
#include "staged_outputs.h"

namespace kinema::pipeline {

namespace {

namespace fs = std::filesystem;
using composite::Image;
using composite::Matte;
using nlohmann::json;

/// A node's value: an image or a matte.
using Value = std::variant<Image, Matte>;

struct Node {
  std::string id, op, pointer;  ///< pointer: "/nodes/3"
  json spec;
};

struct Script {
  std::vector<Node> nodes;
  int first = 0, last = 0;
  double fps = 24;
  bool sequence = false;
};

const std::map<std::string, composite::PorterDuff>& porter_duff_ops() {
  static const std::map<std::string, composite::PorterDuff> ops = {
      {"over", composite::PorterDuff::Over}, {"in", composite::PorterDuff::In},
      {"out", composite::PorterDuff::Out},   {"atop", composite::PorterDuff::Atop},
      {"xor", composite::PorterDuff::Xor},   {"plus", composite::PorterDuff::Plus}};
  return ops;
}

/// The keys each op takes besides "id" and "op"; and which of them name input nodes.
struct OpShape {
  std::vector<const char*> keys;
  std::vector<const char*> inputs;  ///< required node references
  std::vector<const char*> optional_inputs;
};

const std::map<std::string, OpShape>& op_shapes() {
  static const std::map<std::string, OpShape> shapes = [] {
    std::map<std::string, OpShape> s;
    s["read"] = {{"path", "linear", "matte", "channel"}, {}, {}};
    s["constant"] = {{"width", "height", "color"}, {}, {}};
    s["key"] = {{"input", "screen", "subtract", "spill", "garbage"}, {"input"}, {"garbage"}};
    for (const auto& [name, op] : porter_duff_ops()) s[name] = {{"a", "b"}, {"a", "b"}, {}};
    s["matte"] = {{"input", "matte", "invert"}, {"input", "matte"}, {}};
    s["alpha"] = {{"input"}, {"input"}, {}};
    s["erode"] = {{"input", "radius"}, {"input"}, {}};
    s["dilate"] = {{"input", "radius"}, {"input"}, {}};
    s["blur"] = {{"input", "sigma"}, {"input"}, {}};
    s["differential"] = {
        {"plate", "with", "without", "object"}, {"plate", "with", "without"}, {"object"}};
    s["grain"] = {{"input", "like", "sigma", "seed"}, {"input"}, {"like"}};
    s["motion_blur"] = {{"input", "motion", "vectors", "samples"}, {"input"}, {}};
    s["roto"] = {{"width", "height", "shapes"}, {}, {}};
    s["undistort"] = {{"input", "lens"}, {"input"}, {}};
    s["distort"] = {{"input", "lens"}, {"input"}, {}};
    s["write"] = {{"input", "path", "bits", "linear", "pixel_type"}, {"input"}, {}};
    return s;
  }();
  return shapes;
}

std::string known_ops() {
  std::string list;
  for (const auto& [name, shape] : op_shapes()) list += (list.empty() ? "" : ", ") + name;
  return list;
}

Script parse_script(const std::string& text, const std::string& file) {
  const SceneReader r{file};
  const json doc = r.parse(text);
  r.only(doc, "", {"kinema_comp", "frames", "nodes"});
  if (!doc.contains("kinema_comp") || r.whole(doc["kinema_comp"], "/kinema_comp", 1, 1000) != 1)
    r.fail("/kinema_comp", "must be 1 (this kinema reads version 1 scripts)");
  Script script;
  if (doc.contains("frames")) {
    const json& f = doc["frames"];
    r.only(f, "/frames", {"first", "last", "fps"});
    if (!f.contains("first") || !f.contains("last")) r.fail("/frames", "needs first and last");
    script.first = r.whole(f["first"], "/frames/first", -1000000, 10000000);
    script.last = r.whole(f["last"], "/frames/last", -1000000, 10000000);
    if (script.last < script.first) r.fail("/frames/last", "must be ≥ first");
    if (f.contains("fps")) script.fps = r.at_least(f["fps"], "/frames/fps", 0, true);
    script.sequence = true;
  }
  if (!doc.contains("nodes") || !doc["nodes"].is_array() || doc["nodes"].empty())
    r.fail("/nodes", "must be a non-empty array of nodes");
  std::set<std::string> ids;
  bool writes = false;
  for (std::size_t i = 0; i < doc["nodes"].size(); ++i) {
    const json& j = doc["nodes"][i];
    Node node{"", "", "/nodes/" + std::to_string(i), j};
    if (!j.is_object()) r.fail(node.pointer, "must be an object");
    if (!j.contains("op")) r.fail(node.pointer, "has no \"op\" (one of " + known_ops() + ")");
    node.op = r.text(j["op"], node.pointer + "/op");
    const auto shape = op_shapes().find(node.op);
    if (shape == op_shapes().end())
      r.fail(node.pointer + "/op", "unknown op \"" + node.op + "\" (known: " + known_ops() + ")");
    // Each op's own keys, plus id and op.
    for (const auto& [key, value] : j.items()) {
      if (key == "id" || key == "op") continue;
      bool ok = false;
      for (const char* k : shape->second.keys) ok = ok || key == k;
      if (!ok) {
        std::string list;
        for (const char* k : shape->second.keys) list += std::string(list.empty() ? "" : ", ") + k;
        r.fail(node.pointer + "/" + key,
               "unknown key \"" + key + "\" for op " + node.op + " (known: " + list + ")");
      }
    }
    if (node.op == "write") {
      writes = true;
    } else {
      if (!j.contains("id")) r.fail(node.pointer, "needs an \"id\" for later nodes to name it");
      node.id = r.text(j["id"], node.pointer + "/id");
      if (node.id.empty()) r.fail(node.pointer + "/id", "must not be empty");
      if (ids.count(node.id)) r.fail(node.pointer + "/id", "\"" + node.id + "\" is already used");
    }
    auto check_reference = [&](const char* key, bool required) {
      if (!j.contains(key)) {
        if (required) r.fail(node.pointer, std::string("op ") + node.op + " needs \"" + key + "\"");
        return;
      }
      const std::string ref = r.text(j[key], node.pointer + "/" + key);
      if (!ids.count(ref))
        r.fail(node.pointer + "/" + key,
               "\"" + ref + "\" is not the id of an earlier node (nodes run top to bottom)");
    };
    for (const char* key : shape->second.inputs) check_reference(key, true);
    for (const char* key : shape->second.optional_inputs) check_reference(key, false);
    if (node.op == "read" || node.op == "write") {
      if (!j.contains("path")) r.fail(node.pointer, "op " + node.op + " needs \"path\"");
      if (r.text(j["path"], node.pointer + "/path").empty())
        r.fail(node.pointer + "/path", "must not be empty");
    }
    if (node.op == "constant")
      for (const char* key : {"width", "height", "color"})
        if (!j.contains(key))
          r.fail(node.pointer, std::string("op constant needs \"") + key + "\"");
    if (!node.id.empty()) ids.insert(node.id);
    script.nodes.push_back(std::move(node));
  }
  if (!writes) r.fail("/nodes", "no write node: the script would produce nothing");
  return script;
}

/// The script's folder joined to a relative path.
std::string resolve(const std::string& script, const std::string& path) {
  const fs::path p(path);
  if (p.is_absolute()) return path;
  return (fs::path(script).parent_path() / p).lexically_normal().string();
}

std::string frame_path(const std::string& path, int frame) {
  return composite::is_sequence_pattern(path)
             ? composite::sequence_frame_path(composite::parse_sequence_pattern(path), frame)
             : path;
}

Vec2 read_vec2(const SceneReader& r, const json& j, const std::string& p) {
  if (!j.is_array() || j.size() != 2) r.fail(p, "must be [x, y] in px");
  return {r.number(j[0], p + "/0"), r.number(j[1], p + "/1")};
}

/// Roto shapes: [{"name", "interpolation": "linear"|"catmull_rom", "blend":
/// "add"|"subtract"|"multiply", "invert", "opacity", "keys": [{"time": s, "vertices":
/// [{"position": [x, y], "in": [dx, dy], "out": [dx, dy], "feather": px}, …]}, …]}, …]
std::vector<composite::RotoShape> read_roto_shapes(const SceneReader& r, const json& j,
                                                   const std::string& p) {
  if (!j.is_array() || j.empty()) r.fail(p, "must be a non-empty array of shapes");
  std::vector<composite::RotoShape> shapes;
  for (std::size_t i = 0; i < j.size(); ++i) {
    const std::string sp = p + "/" + std::to_string(i);
    const json& s = j[i];
    r.only(s, sp, {"name", "interpolation", "blend", "invert", "opacity", "keys"});
    composite::RotoShape shape;
    shape.name =
        s.contains("name") ? r.text(s["name"], sp + "/name") : "shape " + std::to_string(i);
    if (s.contains("interpolation")) {
      const std::string v = r.text(s["interpolation"], sp + "/interpolation");
      if (v == "catmull_rom")
        shape.interpolation = composite::RotoInterpolation::CatmullRom;
      else if (v != "linear")
        r.fail(sp + "/interpolation", "must be linear or catmull_rom");
    }
    if (s.contains("blend")) {
      const std::string v = r.text(s["blend"], sp + "/blend");
      if (v == "subtract")
        shape.blend = composite::RotoBlend::Subtract;
      else if (v == "multiply")
        shape.blend = composite::RotoBlend::Multiply;
      else if (v != "add")
        r.fail(sp + "/blend", "must be add, subtract or multiply");
    }
    if (s.contains("invert")) shape.invert = r.boolean(s["invert"], sp + "/invert");
    if (s.contains("opacity")) {
      shape.opacity = r.number(s["opacity"], sp + "/opacity");
      if (shape.opacity < 0 || shape.opacity > 1) r.fail(sp + "/opacity", "must be in [0, 1]");
    }
    if (!s.contains("keys") || !s["keys"].is_array() || s["keys"].empty())
      r.fail(sp + "/keys", "must be a non-empty array of keys");
    for (std::size_t k = 0; k < s["keys"].size(); ++k) {
      const std::string kp = sp + "/keys/" + std::to_string(k);
      const json& key = s["keys"][k];
      r.only(key, kp, {"time", "vertices"});
      composite::RotoKey rk;
      rk.time = key.contains("time") ? r.number(key["time"], kp + "/time") : 0.0;
      if (!key.contains("vertices") || !key["vertices"].is_array())
        r.fail(kp + "/vertices", "must be an array of vertices");
      for (std::size_t v = 0; v < key["vertices"].size(); ++v) {
        const std::string vp = kp + "/vertices/" + std::to_string(v);
        const json& vertex = key["vertices"][v];
        r.only(vertex, vp, {"position", "in", "out", "feather"});
        if (!vertex.contains("position")) r.fail(vp, "needs a position [x, y] in px");
        composite::RotoVertex rv;
        rv.position = read_vec2(r, vertex["position"], vp + "/position");
        if (vertex.contains("in")) rv.in_tangent = read_vec2(r, vertex["in"], vp + "/in");
        if (vertex.contains("out")) rv.out_tangent = read_vec2(r, vertex["out"], vp + "/out");
        if (vertex.contains("feather")) rv.feather = r.number(vertex["feather"], vp + "/feather");
        rk.vertices.push_back(rv);
      }
      shape.keys.push_back(std::move(rk));
    }
    try {
      composite::validate(shape);
    } catch (const Error& e) {
      r.fail(sp, e.place().empty() ? e.reason() : e.place() + ": " + e.reason());
    }
    shapes.push_back(std::move(shape));
  }
  return shapes;
}

/// Evaluates one frame of the script.
class Evaluator {
 public:
  /// `maps` keeps each lens node's ST-map from frame to frame (built once: it costs ~13 remaps).
  Evaluator(const Script& script, const std::string& file, int frame,
            std::map<std::string, composite::StMap>& maps)
      : script_(script), r_{file}, frame_(frame), maps_(maps) {}

  /// Runs every node; returns (path, bytes) of each write node's output for this frame.
  std::vector<std::pair<std::string, std::string>> run(double& compute_seconds, int& width,
                                                       int& height) {
    std::vector<std::pair<std::string, std::string>> outputs;
    for (const Node& node : script_.nodes) {
      if (node.op == "read") {
        values_[node.id] = read(node);
        continue;
      }
      if (node.op == "write") {
        outputs.push_back(write(node, width, height));
        continue;
      }
      const auto start = std::chrono::steady_clock::now();
      try {
        values_[node.id] = evaluate(node);
      } catch (const Error& e) {
        if (!e.file().empty()) throw;
        r_.fail(node.pointer, e.place().empty() ? e.reason() : e.place() + ": " + e.reason());
      }
      compute_seconds +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    return outputs;
  }

 private:
  const Value& input(const Node& node, const char* key) const {
    return values_.at(node.spec[key].get<std::string>());
  }
  const Image& image(const Node& node, const char* key) const {
    const Value& v = input(node, key);
    if (!std::holds_alternative<Image>(v))
      r_.fail(node.pointer + "/" + key, "must name an image, not a matte");
    return std::get<Image>(v);
  }
  /// A matte input: a matte node, or an image's alpha.
  Matte matte(const Node& node, const char* key) const {
    const Value& v = input(node, key);
    if (const Matte* m = std::get_if<Matte>(&v)) return *m;
    return composite::alpha_of(std::get<Image>(v));
  }
  bool flag(const Node& node, const char* key, bool fallback) const {
    return node.spec.contains(key) ? r_.boolean(node.spec[key], node.pointer + "/" + key)
                                   : fallback;
  }

  Value read(const Node& node) const {
    const std::string path =
        frame_path(resolve(r_.file, r_.text(node.spec["path"], node.pointer + "/path")), frame_);
    if (!fs::exists(path))
      r_.fail(node.pointer + "/path",
              "frame " + std::to_string(frame_) + ": " + path + " does not exist");
    if (flag(node, "matte", false)) {
      if (node.spec.contains("channel")) {
        const std::string channel = r_.text(node.spec["channel"], node.pointer + "/channel");
        return composite::read_exr_matte(path, channel);
      }
      return composite::read_matte(path);
    }
    return composite::read_image(path, flag(node, "linear", false));
  }

  std::pair<std::string, std::string> write(const Node& node, int& width, int& height) const {
    const std::string path =
        frame_path(resolve(r_.file, r_.text(node.spec["path"], node.pointer + "/path")), frame_);
    composite::ImageWriteOptions options;
    if (node.spec.contains("bits")) {
      options.png.bits = r_.whole(node.spec["bits"], node.pointer + "/bits", 8, 16);
      if (options.png.bits != 8 && options.png.bits != 16)
        r_.fail(node.pointer + "/bits", "must be 8 or 16");
    }
    options.png.linear = flag(node, "linear", false);
    if (node.spec.contains("pixel_type")) {
      const std::string t = r_.text(node.spec["pixel_type"], node.pointer + "/pixel_type");
      if (t != "half" && t != "float")
        r_.fail(node.pointer + "/pixel_type", "must be half or float");
      options.exr.pixel_type =
          t == "float" ? composite::ExrPixelType::float32 : composite::ExrPixelType::half;
    }
    const composite::ImageFormat format = composite::image_format_for_path(path);
    const Value& v = input(node, "input");
    try {
      if (const Matte* m = std::get_if<Matte>(&v)) {
        width = m->width, height = m->height;
        return {path, composite::encode_matte(format, *m, options)};
      }
      const Image& im = std::get<Image>(v);
      width = im.width, height = im.height;
      return {path, composite::encode_image(format, im, options)};
    } catch (const Error& e) {
      r_.fail(node.pointer, e.reason());
    }
  }

  Value evaluate(const Node& node) const {
    const json& j = node.spec;
    const std::string& p = node.pointer;
    const std::string& op = node.op;
    if (const auto pd = porter_duff_ops().find(op); pd != porter_duff_ops().end())
      return composite::composite(pd->second, image(node, "a"), image(node, "b"));
    if (op == "constant") {
      const int w = r_.whole(j["width"], p + "/width", 1, 16384);
      const int h = r_.whole(j["height"], p + "/height", 1, 16384);
      const json& c = j["color"];
      if (!c.is_array() || (c.size() != 3 && c.size() != 4))
        r_.fail(p + "/color", "must be [r, g, b] or [r, g, b, a] (linear, straight)");
      float v[4] = {0, 0, 0, 1};
      for (std::size_t i = 0; i < c.size(); ++i)
        v[i] = float(r_.number(c[i], p + "/color/" + std::to_string(i)));
      return Image(w, h, composite::premultiply(v[0], v[1], v[2], v[3]));
    }
    if (op == "key") {
      composite::KeyerOptions keyer;
      if (j.contains("screen")) {
        const json& s = j["screen"];
        if (s == "green") {
          std::copy_n(composite::kGreenScreen, 3, keyer.screen);
        } else if (s == "blue") {
          std::copy_n(composite::kBlueScreen, 3, keyer.screen);
        } else {
          if (!s.is_array() || s.size() != 3)
            r_.fail(p + "/screen", "must be \"green\", \"blue\" or linear [r, g, b]");
          for (std::size_t i = 0; i < 3; ++i)
            keyer.screen[i] = float(r_.number(s[i], p + "/screen/" + std::to_string(i)));
        }
      }
      keyer.subtract_screen = flag(node, "subtract", true);
      keyer.suppress_spill = flag(node, "spill", true);
      composite::validate(keyer);
      std::optional<Matte> garbage;
      if (j.contains("garbage")) garbage = matte(node, "garbage");
      return composite::key(image(node, "input"), keyer, garbage);
    }
    if (op == "matte")
      return composite::apply_matte(image(node, "input"), matte(node, "matte"),
                                    flag(node, "invert", false));
    if (op == "alpha") return matte(node, "input");
    if (op == "erode" || op == "dilate") {
      const int radius = r_.whole(j.value("radius", json(1)), p + "/radius", 0, 1000);
      const Matte m = matte(node, "input");
      return op == "erode" ? composite::erode(m, radius) : composite::dilate(m, radius);
    }
    if (op == "blur") {
      const double sigma = r_.at_least(j.value("sigma", json(1.0)), p + "/sigma", 0, false);
      const Value& v = input(node, "input");
      if (const Matte* m = std::get_if<Matte>(&v)) return composite::blur(*m, sigma);
      return blur_image(std::get<Image>(v), sigma);
    }
    if (op == "differential") {
      std::optional<Image> object;
      if (j.contains("object")) object = image(node, "object");
      return composite::differential_composite(image(node, "plate"), image(node, "with"),
                                               image(node, "without"), object ? &*object : nullptr);
    }
    if (op == "grain") {
      composite::Grain grain;
      if (j.contains("like")) {
        grain = composite::estimate_grain(image(node, "like"));
      } else if (j.contains("sigma")) {
        const float s = float(r_.at_least(j["sigma"], p + "/sigma", 0, false));
        grain = {s, s, s};
      } else {
        r_.fail(p, "op grain needs \"like\" (a plate to measure) or \"sigma\"");
      }
      const auto seed = std::uint64_t(
          r_.whole(j.value("seed", json(1)), p + "/seed", 0, std::numeric_limits<int>::max()));
      Image out = image(node, "input");
      // A new grain each frame, as film's: the seed and the frame number together.
      composite::add_grain(out, grain, seed * 1000003u + std::uint64_t(std::int64_t(frame_)));
      return out;
    }
    if (op == "motion_blur") {
      const int samples = r_.whole(j.value("samples", json(16)), p + "/samples", 1, 1024);
      if (!j.contains("motion")) r_.fail(p, "op motion_blur needs \"motion\": [dx, dy] in px");
      const json& m = j["motion"];
      if (!m.is_array() || m.size() != 2) r_.fail(p + "/motion", "must be [dx, dy] in px");
      return composite::motion_blur(
          image(node, "input"),
          Vec2(r_.number(m[0], p + "/motion/0"), r_.number(m[1], p + "/motion/1")), samples);
    }
    if (op == "roto") {
      for (const char* key : {"width", "height", "shapes"})
        if (!j.contains(key)) r_.fail(p, std::string("op roto needs \"") + key + "\"");
      const int w = r_.whole(j["width"], p + "/width", 1, 16384);
      const int h = r_.whole(j["height"], p + "/height", 1, 16384);
      // The shapes are keyed in seconds; frame n of the script is at n / fps.
      return composite::rasterize_roto(read_roto_shapes(r_, j["shapes"], p + "/shapes"),
                                       double(frame_) / script_.fps, w, h);
    }
    if (op == "undistort" || op == "distort") {
      const Value& v = input(node, "input");
      if (const Matte* m = std::get_if<Matte>(&v))
        return composite::remap(*m, lens_map(node, m->width, m->height));
      const Image& im = std::get<Image>(v);
      return composite::remap(im, lens_map(node, im.width, im.height));
    }
    r_.fail(p + "/op", "op \"" + op + "\" cannot be evaluated");
  }

  static Image blur_image(const Image& image, double sigma) {
    Matte channel[4];
    for (auto& c : channel) c = Matte(image.width, image.height);
    for (std::size_t i = 0; i < image.pixels.size(); ++i) {
      const composite::Rgba& px = image.pixels[i];
      channel[0].values[i] = px.r, channel[1].values[i] = px.g;
      channel[2].values[i] = px.b, channel[3].values[i] = px.a;
    }
    for (auto& c : channel) c = composite::blur(c, sigma);
    Image out(image.width, image.height);
    for (std::size_t i = 0; i < out.pixels.size(); ++i)
      out.pixels[i] = {channel[0].values[i], channel[1].values[i], channel[2].values[i],
                       channel[3].values[i]};
    return out;
  }

  /// The lens node's map for this input size, built on first use.
  const composite::StMap& lens_map(const Node& node, int width, int height) const {
    const std::string key =
        node.pointer + "@" + std::to_string(width) + "x" + std::to_string(height);
    if (auto it = maps_.find(key); it != maps_.end()) return it->second;
    const std::string p = node.pointer + "/lens";
    if (!node.spec.contains("lens"))
      r_.fail(node.pointer, "op " + node.op + " needs \"lens\": an object or a .json file");
    const nlohmann::json& j = node.spec["lens"];
    const LensSpec spec = j.is_string() ? read_lens_file(resolve(r_.file, j.get<std::string>()))
                                        : read_lens(r_, j, p);
    const composite::LensIntrinsics intrinsics = spec.intrinsics(width, height);
    composite::StMap map = node.op == "distort"
                               ? composite::st_map_distort(spec.lens, intrinsics, width, height)
                               : composite::st_map_undistort(spec.lens, intrinsics, width, height);
    return maps_.emplace(key, std::move(map)).first->second;
  }

  const Script& script_;
  const SceneReader r_;
  int frame_;
  std::map<std::string, composite::StMap>& maps_;
  std::map<std::string, Value> values_;
};

}  // namespace

CompReport run_comp(const CompRequest& request) {
  const std::string& file = request.script;
  const Script script = parse_script(read_file(file), file);
  int first = script.first, last = script.last;
  if (request.last_frame >= request.first_frame)
    first = request.first_frame, last = request.last_frame;
  // Every frame's inputs and outputs, checked before anything is read: no output is an input or
  // another output, and every output is .png or .exr.
  std::vector<NamedInput> inputs{{"the script", file}};
  std::vector<std::string> outputs;
  for (int frame = first; frame <= last; ++frame)
    for (const Node& node : script.nodes) {
      if (node.op != "read" && node.op != "write") continue;
      const std::string path =
          frame_path(resolve(file, node.spec["path"].get<std::string>()), frame);
      if (node.op == "read")
        inputs.push_back({"input " + node.pointer + "/path", path});
      else
        outputs.push_back(path);
    }
  static constexpr std::array<std::string_view, 2> kImages{"png", "exr"};
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    check_output_file(outputs[i], inputs, kImages, "comp writes .png or .exr");
    for (std::size_t k = 0; k < i; ++k)
      if (same_file(outputs[i], outputs[k]))
        throw UsageError("two writes would make the same file: " + outputs[i] +
                         " (a sequence needs #### in its output path)");
  }
  CompReport result;
  result.nodes = int(script.nodes.size());
  StagedOutputs staged;
  std::map<std::string, composite::StMap> maps;
  const long total = long(last) - first + 1;
  for (int frame = first; frame <= last; ++frame) {
    Evaluator evaluator(script, file, frame, maps);
    for (const auto& [path, bytes] : evaluator.run(result.seconds, result.width, result.height))
      staged.add(path, bytes);
    ++result.frames;
    report(request.progress, "compositing", long(frame) - first + 1, total);
  }
  result.written = staged.commit();
  return result;
}

}  // namespace kinema::pipeline
