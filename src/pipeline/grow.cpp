// `kinema grow` (kinema/pipeline/grow.h): the spec's reader, the presets, and the job.
#include "kinema/pipeline/grow.h"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <string_view>

#include "kinema/core/error.h"
#include "kinema/core/file.h"
#include "kinema/io/asset_file.h"
#include "kinema/io/point_cache.h"
#include "kinema/math/scalar.h"
#include "morph_frames.h"
#include "sim_scene_reader.h"

namespace kinema::pipeline {

namespace {

using nlohmann::json;

struct Preset {
  const char* name;
  const char* spec;
};

// ABOP Fig. 1.24 a–f: axiom, rules, δ and n as published. One generation a second, each grown
// within 0.9 s, and `seconds` n + 0.9: the last frame is the figure's string fully grown. Steps
// and pipe radii make each 1–3 m tall with a trunk a few centimetres thick.
constexpr Preset kPresets[] = {
    {"abop-1.24a",
     R"({"axiom": "F", "rules": ["F -> F[+F]F[-F]F"], "angle": 25.7, "seconds": 5.9,
         "step": 0.008, "growth": {"length_maturity": 0.9, "angle_maturity": 0.9,
         "pipe_radius": 0.004}})"},
    {"abop-1.24b",
     R"({"axiom": "F", "rules": ["F -> F[+F]F[-F][F]"], "angle": 20, "seconds": 5.9,
         "step": 0.024, "growth": {"length_maturity": 0.9, "angle_maturity": 0.9,
         "pipe_radius": 0.004}})"},
    {"abop-1.24c",
     R"({"axiom": "F", "rules": ["F -> FF-[-F+F+F]+[+F-F-F]"], "angle": 22.5, "seconds": 4.9,
         "step": 0.03, "growth": {"length_maturity": 0.9, "angle_maturity": 0.9,
         "pipe_radius": 0.004}})"},
    {"abop-1.24d",
     R"({"axiom": "X", "rules": ["X -> F[+X]F[-X]+X", "F -> FF"], "angle": 20, "seconds": 7.9,
         "step": 0.008, "growth": {"length_maturity": 0.9, "angle_maturity": 0.9,
         "pipe_radius": 0.004}})"},
    {"abop-1.24e",
     R"({"axiom": "X", "rules": ["X -> F[+X][-X]FX", "F -> FF"], "angle": 25.7, "seconds": 7.9,
         "step": 0.008, "growth": {"length_maturity": 0.9, "angle_maturity": 0.9,
         "pipe_radius": 0.004}})"},
    {"abop-1.24f",
     R"({"axiom": "X", "rules": ["X -> F-[[X]+X]+F[+X]-X", "F -> FF"], "angle": 22.5,
         "seconds": 5.9, "step": 0.03, "growth": {"length_maturity": 0.9,
         "angle_maturity": 0.9, "pipe_radius": 0.004}})"},
    // ABOP Fig. 1.25's bush (n = 7) without its ! (thinner), ' (colour) and {…} leaf polygon:
    // the pipe model gives the thickness and L a diamond leaf.
    {"bush-3d",
     R"({"axiom": "A", "rules": ["A -> [&FLA]/////[&FLA]///////[&FLA]", "F -> S/////F",
         "S -> FL"], "angle": 22.5, "seconds": 7.9, "step": 0.08,
         "growth": {"length_maturity": 0.9, "angle_maturity": 0.9, "leaf_maturity": 0.9,
         "pipe_radius": 0.005}, "leaf": {"symbol": "L", "size": 0.12}})"},
    // ABOP §1.7: Fig. 1.24a's rule and two thinner variants, each about a third of the time.
    {"stochastic-weed",
     R"({"axiom": "F", "rules": ["F -> F[+F]F[-F]F : 0.33", "F -> F[+F]F : 0.33",
         "F -> F[-F]F : 0.34"], "angle": 25.7, "seconds": 5.9, "step": 0.024, "seed": 1,
         "growth": {"length_maturity": 0.9, "angle_maturity": 0.9, "pipe_radius": 0.004}})"},
};

/// One printable ASCII character, or "" for none.
char symbol_of(const SceneReader& r, const json& v, const std::string& pointer) {
  const std::string s = r.text(v, pointer);
  if (s.empty()) return 0;
  if (s.size() != 1 || s[0] < 33 || s[0] > 126)
    r.fail(pointer, "must be one printable ASCII symbol, or \"\" for none");
  return s[0];
}

}  // namespace

GrowSpec parse_grow_spec(const std::string& json_text, const std::string& file) {
  const SceneReader r{file};
  const json j = r.parse(json_text);
  r.only(j, "",
         {"name", "axiom", "rules", "angle", "step", "seconds", "terminal_age", "terminal_ages",
          "growth", "leaf", "seed", "ring", "max_modules"});
  GrowSpec spec;
  LSystem& s = spec.system;
  if (j.contains("name")) spec.name = r.text(j["name"], "/name");
  if (!j.contains("axiom")) r.fail("/axiom", "missing: the modules the plant starts from");
  // Rule and axiom errors carry their column: re-thrown with the file and the pointer.
  try {
    s.axiom = parse_modules(r.text(j["axiom"], "/axiom"), "/axiom");
    if (j.contains("rules")) {
      const json& rules = j["rules"];
      if (!rules.is_array()) r.fail("/rules", "must be an array of rules ('A -> F[+A]')");
      for (std::size_t i = 0; i < rules.size(); ++i) {
        const std::string p = "/rules/" + std::to_string(i);
        s.productions.push_back(parse_production(r.text(rules[i], p), p));
      }
    }
  } catch (const Error& e) {
    if (!e.file().empty()) throw;
    throw Error(file, e.place(), e.reason());
  }
  if (j.contains("angle")) s.angle = radians(r.number(j["angle"], "/angle"));
  if (j.contains("step")) s.step = r.at_least(j["step"], "/step", 0, false);
  if (j.contains("seconds")) spec.seconds = r.at_least(j["seconds"], "/seconds", 0, true);
  if (j.contains("terminal_age"))
    s.terminal_age = r.at_least(j["terminal_age"], "/terminal_age", 0, true);
  if (j.contains("terminal_ages")) {
    const json& ages = j["terminal_ages"];
    if (!ages.is_object()) r.fail("/terminal_ages", "must be an object: symbol → seconds");
    for (const auto& [key, value] : ages.items()) {
      const std::string p = "/terminal_ages/" + key;
      if (key.size() != 1) r.fail(p, "a key is one module symbol");
      s.terminal_ages[key[0]] = r.at_least(value, p, 0, true);
    }
  }
  if (j.contains("growth")) {
    const json& g = j["growth"];
    r.only(g, "/growth",
           {"curve", "length_maturity", "angle_maturity", "leaf_maturity", "pipe_radius"});
    if (g.contains("curve")) {
      const std::string curve = r.text(g["curve"], "/growth/curve");
      if (curve == "smoothstep")
        s.curve = GrowthCurve::Smoothstep;
      else if (curve == "logistic")
        s.curve = GrowthCurve::Logistic;
      else if (curve == "linear")
        s.curve = GrowthCurve::Linear;
      else
        r.fail("/growth/curve", "\"" + curve + "\": smoothstep, logistic or linear");
    }
    auto seconds = [&](const char* key, double& value) {
      if (g.contains(key)) value = r.at_least(g[key], std::string("/growth/") + key, 0, true);
    };
    seconds("length_maturity", s.length_maturity);
    seconds("angle_maturity", s.angle_maturity);
    seconds("leaf_maturity", s.leaf_maturity);
    if (g.contains("pipe_radius"))
      s.pipe_radius = r.at_least(g["pipe_radius"], "/growth/pipe_radius", 0, false);
  }
  if (j.contains("leaf")) {
    const json& l = j["leaf"];
    r.only(l, "/leaf", {"symbol", "size"});
    if (l.contains("symbol")) s.leaf_symbol = symbol_of(r, l["symbol"], "/leaf/symbol");
    if (l.contains("size")) s.leaf_size = r.at_least(l["size"], "/leaf/size", 0, false);
  }
  if (j.contains("seed")) s.seed = std::uint64_t(r.whole(j["seed"], "/seed", 0, 2147483647));
  if (j.contains("ring")) spec.ring = r.whole(j["ring"], "/ring", 3, 64);
  if (j.contains("max_modules"))
    s.max_modules = std::size_t(r.whole(j["max_modules"], "/max_modules", 1, 10'000'000));
  try {
    check_lsystem(s);
  } catch (const Error& e) {
    throw Error(file, e.place() == "leaf_symbol" ? "/leaf/symbol" : "/" + e.place(), e.reason());
  }
  return spec;
}

std::vector<std::string> grow_presets() {
  std::vector<std::string> names;
  for (const Preset& p : kPresets) names.emplace_back(p.name);
  return names;
}

std::string grow_preset_json(const std::string& name) {
  std::string names;
  for (const Preset& p : kPresets) {
    if (name == p.name) return p.spec;
    names += std::string(names.empty() ? "" : ", ") + p.name;
  }
  throw UsageError("grow: no preset '" + name + "' (the presets: " + names + ")");
}

GrowReport run_grow(const GrowRequest& request) {
  static constexpr std::string_view kExtensions[] = {"glb", "gltf", "pc2", "obj"};
  std::vector<NamedInput> inputs;
  if (!request.spec.empty()) inputs.push_back({"SPEC", request.spec});
  check_output_file(request.out, inputs, kExtensions, "grow writes .glb .gltf .pc2 .obj");
  const std::string extension = extension_of(request.out);
  // A cache's rest mesh goes beside it, as `kinema sim` writes cloth.
  const std::string rest_path =
      std::filesystem::path(request.out).replace_extension(".obj").string();
  if (extension == "pc2")
    check_output_file(rest_path, inputs, {}, "grow writes the cache's rest mesh beside it");
  if (request.spec.empty() == request.preset.empty())
    throw UsageError("grow: give a SPEC.json or --preset NAME (one of them)");
  if (request.fps < 1 || request.fps > 240) throw UsageError("grow: fps must be 1 … 240");
  const std::string source = request.spec.empty() ? "preset " + request.preset : request.spec;
  GrowSpec spec = request.spec.empty() ? parse_grow_spec(grow_preset_json(request.preset), source)
                                       : parse_grow_spec(read_file(request.spec), source);
  if (!request.preset.empty()) spec.name = request.preset;
  if (request.seconds) {
    if (!(*request.seconds > 0) || *request.seconds > 36000)
      throw UsageError("grow: seconds must be > 0 and at most 36000");
    spec.seconds = *request.seconds;
  }
  if (request.ring) spec.ring = *request.ring;
  if (spec.ring < 3 || spec.ring > 64) throw UsageError("grow: a ring has 3 … 64 vertices");
  if (request.seed) spec.system.seed = *request.seed;

  const bool animated = extension != "obj";
  // Rounded down, so that the growth never runs past a firing the spec stops short of.
  const double whole_frames = std::floor(spec.seconds * request.fps + 1e-9);
  if (animated && whole_frames < 1)
    throw UsageError("grow: " + SceneReader::format(spec.seconds) + " s is less than a frame");
  GrowReport report;
  report.name = spec.name;
  report.seconds = animated ? whole_frames / request.fps : spec.seconds;
  Derivation derivation;
  try {
    derivation = derive(spec.system, report.seconds);
  } catch (const Error& e) {
    throw Error(source, e.place(), e.reason());
  }
  // After the derivation: a spec's own seconds past its limits fail as bad data (exit 2) first.
  if (animated && whole_frames >= 100000) throw UsageError("grow: more than 100000 frames");
  report.frames = animated ? int(whole_frames) + 1 : 1;
  report.modules = derivation.modules.size();
  report.rewrites = derivation.rewrites;

  // Every frame with the final plant's topology: what is not yet born is collapsed.
  PlantMeshOptions options;
  options.ring = spec.ring;
  options.fixed_topology = animated;
  PointCache cache;
  cache.sample_rate = 1;
  PlantMesh mesh;
  const auto start = std::chrono::steady_clock::now();
  for (int f = 0; f < report.frames; ++f) {
    const double t = animated ? std::min(f / double(request.fps), report.seconds) : report.seconds;
    const PlantSkeleton plant = interpret(spec.system, derivation, t);
    mesh = build_plant_mesh(plant, options);
    if (f == 0) {
      if (mesh.positions.empty())
        throw Error(source, "/axiom",
                    "the plant has no segment and no leaf by " +
                        SceneReader::format(report.seconds) + " s: nothing to write");
      // glTF keeps a morph target a frame (positions and normals): kept to about 250 MB.
      const double limit = extension == "pc2" ? 1e8 : 1e7;
      if (double(mesh.positions.size()) * report.frames > limit)
        throw UsageError("grow: " + std::to_string(mesh.positions.size()) + " vertices × " +
                         std::to_string(report.frames) + " frames is more than " +
                         std::to_string(std::llround(limit)) +
                         " (fewer --fps or --seconds, a smaller --ring, or .pc2)");
      cache.points = int(mesh.positions.size());
      cache.positions.reserve(mesh.positions.size() * std::size_t(report.frames));
    }
    for (const Vec3& p : mesh.positions) cache.positions.push_back(Vec3f(p));
    if (f + 1 == report.frames) {
      report.segments = plant.segments.size();
      report.leaves = plant.leaves.size();
      report.height = plant.height();
      report.total_length = plant.total_length();
      report.base_radius = plant.segments.empty() ? 0 : plant.segments.front().start_radius;
    }
    pipeline::report(request.progress, "growing", f + 1, report.frames);
  }
  report.seconds_per_frame =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() /
      report.frames;
  report.vertices = mesh.positions.size();
  report.triangles = mesh.triangles.size();

  if (extension == "obj") {
    write_obj_mesh(request.out, mesh.positions, mesh.triangles);
  } else if (extension == "pc2") {
    write_obj_mesh(rest_path, mesh.positions, mesh.triangles);
    write_pc2(request.out, cache);
    report.written.push_back(rest_path);
  } else {
    const MeshFrames frames{report.name.empty() ? "plant" : report.name, mesh.positions,
                            mesh.triangles, &cache};
    save_asset(morph_frames_asset({frames}, request.fps, report.frames, "growth"), request.out);
  }
  report.written.insert(report.written.begin(), request.out);
  return report;
}

}  // namespace kinema::pipeline
