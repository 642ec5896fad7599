// `kinema sim` as a library call (kinema/pipeline/sim.h).
#include "kinema/pipeline/sim.h"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "kinema/core/error.h"
#include "kinema/core/file.h"
#include "kinema/io/asset_file.h"
#include "kinema/io/point_cache.h"
#include "kinema/io/terrain.h"
#include "kinema/sim/fixed_step_clock.h"

namespace kinema::pipeline {

namespace {

using nlohmann::json;

/// Reads values out of the scene, naming each by its JSON pointer in errors.
struct SceneReader {
  const std::string& file;

  [[noreturn]] void fail(const std::string& pointer, const std::string& reason) const {
    throw Error(file, pointer.empty() ? "/" : pointer, reason);
  }
  /// Refuses keys of `object` not in `known` (a typo would otherwise be silently ignored).
  void only(const json& object, const std::string& pointer,
            std::initializer_list<const char*> known) const {
    if (!object.is_object()) fail(pointer, "must be an object");
    for (const auto& [key, value] : object.items()) {
      bool ok = false;
      for (const char* k : known) ok = ok || key == k;
      if (!ok) {
        std::string list;
        for (const char* k : known) list += std::string(list.empty() ? "" : ", ") + k;
        fail(pointer + "/" + key, "unknown key \"" + key + "\" (known: " + list + ")");
      }
    }
  }
  double number(const json& v, const std::string& pointer) const {
    if (!v.is_number()) fail(pointer, "must be a number");
    const double d = v.get<double>();
    if (!std::isfinite(d)) fail(pointer, "must be finite");
    return d;
  }
  double at_least(const json& v, const std::string& pointer, double low, bool strict) const {
    const double d = number(v, pointer);
    if (strict ? !(d > low) : !(d >= low))
      fail(pointer, std::string("must be ") + (strict ? "> " : "≥ ") + format(low));
    return d;
  }
  int whole(const json& v, const std::string& pointer, int low, int high) const {
    if (!v.is_number_integer() && !v.is_number_unsigned()) fail(pointer, "must be a whole number");
    const long long i = v.get<long long>();
    if (i < low || i > high)
      fail(pointer, "must be between " + std::to_string(low) + " and " + std::to_string(high));
    return int(i);
  }
  bool boolean(const json& v, const std::string& pointer) const {
    if (!v.is_boolean()) fail(pointer, "must be true or false");
    return v.get<bool>();
  }
  Vec3 vec3(const json& v, const std::string& pointer) const {
    if (!v.is_array() || v.size() != 3) fail(pointer, "must be an array of 3 numbers");
    return {number(v[0], pointer + "/0"), number(v[1], pointer + "/1"),
            number(v[2], pointer + "/2")};
  }
  std::string text(const json& v, const std::string& pointer) const {
    if (!v.is_string()) fail(pointer, "must be a string");
    return v.get<std::string>();
  }
  static std::string format(double d) {
    std::string s = std::to_string(d);
    while (s.size() > 1 && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  }
};

Collider read_collider(const SceneReader& r, const json& j, const std::string& p) {
  if (!j.is_object() || !j.contains("shape")) r.fail(p, "a collider needs a \"shape\"");
  const std::string shape = r.text(j["shape"], p + "/shape");
  Collider c;
  if (shape == "plane") {
    r.only(j, p, {"shape", "point", "normal", "friction"});
    c.shape = ColliderShape::Plane;
    if (j.contains("point")) c.a = r.vec3(j["point"], p + "/point");
    if (j.contains("normal")) c.normal = r.vec3(j["normal"], p + "/normal");
    if (!(length(c.normal) > 0)) r.fail(p + "/normal", "must not be zero");
  } else if (shape == "sphere") {
    r.only(j, p, {"shape", "centre", "radius", "friction"});
    c.shape = ColliderShape::Sphere;
    c.a = r.vec3(j.value("centre", json::array({0, 0, 0})), p + "/centre");
    if (!j.contains("radius")) r.fail(p, "a sphere needs a \"radius\"");
    c.radius = r.at_least(j["radius"], p + "/radius", 0, true);
  } else if (shape == "capsule") {
    r.only(j, p, {"shape", "a", "b", "radius", "friction"});
    c.shape = ColliderShape::Capsule;
    if (!j.contains("a") || !j.contains("b") || !j.contains("radius"))
      r.fail(p, "a capsule needs \"a\", \"b\" and \"radius\"");
    c.a = r.vec3(j["a"], p + "/a");
    c.b = r.vec3(j["b"], p + "/b");
    if (!(length(c.b - c.a) > 0)) r.fail(p + "/b", "must differ from \"a\"");
    c.radius = r.at_least(j["radius"], p + "/radius", 0, true);
  } else if (shape == "box") {
    r.only(j, p, {"shape", "centre", "half_extents", "friction"});
    c.shape = ColliderShape::Box;
    c.a = r.vec3(j.value("centre", json::array({0, 0, 0})), p + "/centre");
    if (!j.contains("half_extents")) r.fail(p, "a box needs \"half_extents\"");
    c.half_extents = r.vec3(j["half_extents"], p + "/half_extents");
    if (!(c.half_extents.x > 0 && c.half_extents.y > 0 && c.half_extents.z > 0))
      r.fail(p + "/half_extents", "must be positive");
  } else {
    r.fail(p + "/shape", "unknown collider \"" + shape + "\" (plane, sphere, capsule, box)");
  }
  if (j.contains("friction")) c.friction = r.at_least(j["friction"], p + "/friction", 0, false);
  return c;
}

/// The first mesh of a file kinema reads (or the one named; OBJ through its own reader), its
/// vertices welded where they coincide (files split vertices at UV seams; a cloth must not tear
/// there).
ClothMesh read_mesh_file(const SceneReader& r, const std::string& path, const std::string& name,
                         const std::string& p) {
  std::vector<Vec3> positions;
  std::vector<std::uint32_t> indices;
  const std::string ext = extension_of(path);
  try {
    if (ext == "obj") {
      const ObjTriangles obj = parse_obj_triangles(read_file(path), path);
      if (obj.dropped_degenerate > 0)
        r.fail(p, path + " has " + std::to_string(obj.dropped_degenerate) +
                      " degenerate triangles (no area)");
      positions = obj.vertices;
      for (int i : obj.indices) indices.push_back(std::uint32_t(i));
    } else {
      const Asset asset = load_asset(path);
      const Mesh* chosen = nullptr;
      for (const Mesh& m : asset.meshes)
        if ((name.empty() && !m.indices.empty()) || (!name.empty() && m.name == name)) {
          chosen = &m;
          break;
        }
      if (!chosen)
        r.fail(p, name.empty() ? path + " has no triangle mesh"
                               : path + " has no mesh named \"" + name + "\"");
      for (const Vec3f& q : chosen->positions) positions.push_back(Vec3(q));
      indices = chosen->indices;
    }
  } catch (const Error& e) {
    if (e.file() == r.file) throw;  // already ours
    r.fail(p, "cannot read the mesh " + path + ": " + e.what());
  }
  ClothMesh mesh;
  std::map<std::array<double, 3>, std::uint32_t> welded;
  std::vector<std::uint32_t> index_of(positions.size());
  for (size_t v = 0; v < positions.size(); ++v) {
    const Vec3 q = positions[v];
    const auto [it, added] =
        welded.emplace(std::array<double, 3>{q.x, q.y, q.z}, std::uint32_t(mesh.positions.size()));
    if (added) mesh.positions.push_back(q);
    index_of[v] = it->second;
  }
  for (size_t t = 0; t + 2 < indices.size(); t += 3)
    mesh.triangles.push_back(
        {index_of[indices[t]], index_of[indices[t + 1]], index_of[indices[t + 2]]});
  return mesh;
}

ClothMesh read_inline_mesh(const SceneReader& r, const json& j, const std::string& p) {
  r.only(j, p, {"positions", "triangles"});
  if (!j.contains("positions") || !j["positions"].is_array())
    r.fail(p + "/positions", "must be an array of [x, y, z]");
  if (!j.contains("triangles") || !j["triangles"].is_array())
    r.fail(p + "/triangles", "must be an array of [a, b, c]");
  ClothMesh mesh;
  for (size_t i = 0; i < j["positions"].size(); ++i)
    mesh.positions.push_back(r.vec3(j["positions"][i], p + "/positions/" + std::to_string(i)));
  for (size_t t = 0; t < j["triangles"].size(); ++t) {
    const std::string q = p + "/triangles/" + std::to_string(t);
    const json& tri = j["triangles"][t];
    if (!tri.is_array() || tri.size() != 3) r.fail(q, "must be an array of 3 vertex indices");
    std::array<std::uint32_t, 3> ids{};
    for (int k = 0; k < 3; ++k)
      ids[size_t(k)] = std::uint32_t(
          r.whole(tri[size_t(k)], q + "/" + std::to_string(k), 0, std::numeric_limits<int>::max()));
    mesh.triangles.push_back(ids);
  }
  return mesh;
}

ClothMaterial read_material(const SceneReader& r, const json& j, const std::string& p) {
  r.only(j, p,
         {"mass_per_area", "vertex_mass", "stretch_stiffness", "shear_stiffness", "bend_stiffness",
          "spring_damping", "air_drag", "aerodynamic_coefficient"});
  ClothMaterial m;
  auto stiffness = [&](const char* key, double& out) {
    if (!j.contains(key)) return;
    const std::string q = p + "/" + key;
    if (j[key].is_string() && j[key].get<std::string>() == "inextensible")
      out = std::numeric_limits<double>::infinity();
    else if (j[key].is_number())
      out = r.at_least(j[key], q, 0, false);
    else
      r.fail(q, "must be a number ≥ 0 (N/m) or \"inextensible\"");
  };
  stiffness("stretch_stiffness", m.stretch_stiffness);
  stiffness("shear_stiffness", m.shear_stiffness);
  stiffness("bend_stiffness", m.bend_stiffness);
  auto non_negative = [&](const char* key, double& out) {
    if (j.contains(key)) out = r.at_least(j[key], p + "/" + key, 0, false);
  };
  non_negative("mass_per_area", m.mass_per_area);
  non_negative("vertex_mass", m.vertex_mass);
  non_negative("spring_damping", m.spring_damping);
  non_negative("air_drag", m.air_drag);
  non_negative("aerodynamic_coefficient", m.aerodynamic_coefficient);
  return m;
}

SimSceneCloth read_cloth(const SceneReader& r, const json& j, const std::string& p,
                         const std::string& folder, const Vec3& gravity, const Vec3& wind,
                         const std::vector<Collider>& colliders, size_t index) {
  r.only(
      j, p,
      {"name", "grid", "mesh", "mesh_name", "solver", "substeps", "iterations", "tethers", "pinned",
       "material", "thickness", "self_collision", "cg_max_iterations", "cg_tolerance"});
  SimSceneCloth c;
  c.name = j.contains("name") ? r.text(j["name"], p + "/name") : "cloth" + std::to_string(index);
  if (c.name.empty() || c.name.find_first_of("/\\:") != std::string::npos)
    r.fail(p + "/name", "must be a plain, non-empty name (it goes into file names)");
  if (j.contains("grid") == j.contains("mesh")) r.fail(p, "give either \"grid\" or \"mesh\"");
  if (j.contains("grid")) {
    const json& g = j["grid"];
    const std::string q = p + "/grid";
    r.only(g, q, {"columns", "rows", "width", "height", "corner", "u", "v"});
    if (!g.contains("columns") || !g.contains("rows") || !g.contains("width") ||
        !g.contains("height"))
      r.fail(q, "a grid needs \"columns\", \"rows\", \"width\" and \"height\"");
    const int columns = r.whole(g["columns"], q + "/columns", 2, 4096);
    const int rows = r.whole(g["rows"], q + "/rows", 2, 4096);
    const double width = r.at_least(g["width"], q + "/width", 0, true);
    const double height = r.at_least(g["height"], q + "/height", 0, true);
    const Vec3 corner = g.contains("corner") ? r.vec3(g["corner"], q + "/corner") : Vec3{0, 0, 0};
    const Vec3 u = g.contains("u") ? r.vec3(g["u"], q + "/u") : Vec3{1, 0, 0};
    const Vec3 v = g.contains("v") ? r.vec3(g["v"], q + "/v") : Vec3{0, 0, 1};
    if (!(length(u) > 0) || !(length(v) > 0) ||
        !(length(cross(u, v)) > 1e-9 * length(u) * length(v)))
      r.fail(q, "\"u\" and \"v\" must be non-zero and not parallel");
    c.mesh = make_grid_cloth(columns, rows, width, height, corner, normalize(u), normalize(v));
  } else if (j["mesh"].is_string()) {
    std::filesystem::path path(r.text(j["mesh"], p + "/mesh"));
    if (path.is_relative()) path = std::filesystem::path(folder) / path;
    const std::string name =
        j.contains("mesh_name") ? r.text(j["mesh_name"], p + "/mesh_name") : "";
    c.mesh = read_mesh_file(r, path.string(), name, p + "/mesh");
  } else {
    c.mesh = read_inline_mesh(r, j["mesh"], p + "/mesh");
  }
  try {
    validate_cloth_mesh(c.mesh, p + "/mesh");
  } catch (const Error& e) {
    r.fail(e.place(), e.reason());
  }
  ClothOptions& o = c.options;
  o.gravity = gravity;
  o.wind = wind;
  o.colliders = colliders;
  if (j.contains("solver")) {
    const std::string s = r.text(j["solver"], p + "/solver");
    if (s == "xpbd")
      o.solver = ClothSolver::Xpbd;
    else if (s == "implicit")
      o.solver = ClothSolver::ImplicitEuler;
    else if (s == "semi-implicit")
      o.solver = ClothSolver::SemiImplicit;
    else
      r.fail(p + "/solver", "unknown solver \"" + s + "\" (xpbd, implicit, semi-implicit)");
  }
  if (j.contains("material")) o.material = read_material(r, j["material"], p + "/material");
  if (j.contains("substeps")) o.substeps = r.whole(j["substeps"], p + "/substeps", 0, 10000);
  if (j.contains("iterations")) o.iterations = r.whole(j["iterations"], p + "/iterations", 1, 1000);
  if (j.contains("tethers")) o.tethers = r.boolean(j["tethers"], p + "/tethers");
  if (j.contains("self_collision"))
    o.self_collision = r.boolean(j["self_collision"], p + "/self_collision");
  if (j.contains("thickness")) o.thickness = r.at_least(j["thickness"], p + "/thickness", 0, false);
  if (j.contains("cg_max_iterations"))
    o.cg_max_iterations = r.whole(j["cg_max_iterations"], p + "/cg_max_iterations", 1, 100000);
  if (j.contains("cg_tolerance"))
    o.cg_tolerance = r.at_least(j["cg_tolerance"], p + "/cg_tolerance", 0, false);
  if (j.contains("pinned")) {
    const json& pins = j["pinned"];
    if (!pins.is_array()) r.fail(p + "/pinned", "must be an array of vertex indices");
    std::set<int> seen;
    for (size_t i = 0; i < pins.size(); ++i) {
      const std::string q = p + "/pinned/" + std::to_string(i);
      const int v = r.whole(pins[i], q, 0, int(c.mesh.positions.size()) - 1);
      if (!seen.insert(v).second) r.fail(q, "vertex " + std::to_string(v) + " is pinned twice");
      o.pinned.push_back(std::uint32_t(v));
    }
  }
  if (o.solver != ClothSolver::Xpbd &&
      (std::isinf(o.material.stretch_stiffness) || std::isinf(o.material.shear_stiffness) ||
       std::isinf(o.material.bend_stiffness)))
    r.fail(p + "/material", "\"inextensible\" needs \"solver\": \"xpbd\"");
  try {
    Cloth check(c.mesh, o);  // every remaining check of the options, before anything runs
  } catch (const Error& e) {
    r.fail(p, e.reason());
  }
  return c;
}

}  // namespace

SimScene parse_sim_scene(const std::string& json_text, const std::string& file) {
  const SceneReader r{file};
  json j;
  try {
    j = json::parse(json_text);
  } catch (const json::parse_error& e) {
    // Line and column of the byte where parsing stopped.
    size_t line = 1, column = 1;
    for (size_t i = 0; i + 1 < e.byte && i < json_text.size(); ++i) {
      if (json_text[i] == '\n')
        ++line, column = 1;
      else
        ++column;
    }
    throw Error(file, "line " + std::to_string(line) + ", column " + std::to_string(column),
                std::string("malformed JSON: ") + e.what());
  }
  r.only(j, "", {"duration", "fps", "rate", "gravity", "wind", "colliders", "cloth"});
  SimScene scene;
  if (j.contains("duration")) scene.duration = r.at_least(j["duration"], "/duration", 0, true);
  if (j.contains("fps")) scene.fps = r.whole(j["fps"], "/fps", 1, 1000);
  if (j.contains("rate")) scene.rate = r.whole(j["rate"], "/rate", 1, 100000);
  if (scene.duration * scene.fps > 1e6) r.fail("/duration", "more than a million frames");
  const Vec3 gravity = j.contains("gravity") ? r.vec3(j["gravity"], "/gravity") : Vec3{0, -9.8, 0};
  const Vec3 wind = j.contains("wind") ? r.vec3(j["wind"], "/wind") : Vec3{0, 0, 0};
  std::vector<Collider> colliders;
  if (j.contains("colliders")) {
    if (!j["colliders"].is_array()) r.fail("/colliders", "must be an array");
    for (size_t i = 0; i < j["colliders"].size(); ++i)
      colliders.push_back(read_collider(r, j["colliders"][i], "/colliders/" + std::to_string(i)));
  }
  if (!j.contains("cloth") || !j["cloth"].is_array() || j["cloth"].empty())
    r.fail("/cloth", "a scene needs a non-empty array \"cloth\"");
  const std::string folder = std::filesystem::path(file).parent_path().string();
  std::set<std::string> names;
  for (size_t i = 0; i < j["cloth"].size(); ++i) {
    const std::string p = "/cloth/" + std::to_string(i);
    scene.cloths.push_back(read_cloth(r, j["cloth"][i], p, folder, gravity, wind, colliders, i));
    if (!names.insert(scene.cloths.back().name).second)
      r.fail(p + "/name", "another cloth is already named \"" + scene.cloths.back().name + "\"");
  }
  return scene;
}

std::string sim_cache_path(const std::string& out, const std::string& name, size_t cloth_count) {
  if (cloth_count == 1) return out;
  std::filesystem::path p(out);
  return (p.parent_path() / (p.stem().string() + "_" + name + ".pc2")).string();
}

std::string sim_mesh_path(const std::string& out, const std::string& name, size_t cloth_count) {
  return std::filesystem::path(sim_cache_path(out, name, cloth_count))
      .replace_extension(".obj")
      .string();
}

namespace {

/// True when OUT is a glTF file (.glb or .gltf, any case).
bool writes_gltf(const std::string& out) {
  const std::string ext = extension_of(out);
  return ext == "glb" || ext == "gltf";
}

/// The cloths as one glTF asset: each a mesh on its own node with one morph target per frame
/// (the frame's positions minus the rest positions) and one clip whose weights go one-hot from
/// frame to frame, linearly: between frames k and k + 1 a viewer shows the straight blend of the
/// two, as the point cache would.
Asset sim_asset(const SimScene& scene, const std::vector<PointCache>& caches, int frames) {
  Asset asset;
  std::vector<Joint> joints;
  for (const SimSceneCloth& c : scene.cloths) joints.push_back(Joint{c.name, kNoParent, {}, {}});
  asset.skeleton = Skeleton::build(std::move(joints));
  Clip clip;
  clip.name = "simulation";
  clip.duration = double(frames - 1) / scene.fps;
  clip.sample_rate = scene.fps;
  for (size_t i = 0; i < scene.cloths.size(); ++i) {
    const ClothMesh& cloth = scene.cloths[i].mesh;
    Mesh mesh;
    mesh.name = scene.cloths[i].name;
    mesh.node = int(i);
    for (const Vec3& p : cloth.positions) mesh.positions.push_back(Vec3f(p));
    for (const auto& t : cloth.triangles)
      mesh.indices.insert(mesh.indices.end(), t.begin(), t.end());
    // Area-weighted vertex normals of each frame, so that folds shade (the morph targets carry
    // their change from the rest normals).
    auto normals_of = [&](auto&& position) {
      std::vector<Vec3> sum(mesh.positions.size(), Vec3{0, 0, 0});
      for (const auto& t : cloth.triangles) {
        const Vec3 a = position(t[0]), n = cross(position(t[1]) - a, position(t[2]) - a);
        for (std::uint32_t v : t) sum[v] += n;
      }
      std::vector<Vec3f> out;
      for (const Vec3& n : sum) out.push_back(Vec3f(length(n) > 0 ? normalize(n) : Vec3{0, 1, 0}));
      return out;
    };
    mesh.normals = normals_of([&](std::uint32_t v) { return cloth.positions[v]; });
    MorphTrack track;
    track.mesh = int(i);
    track.target_count = frames;
    for (int f = 0; f < frames; ++f) {
      MorphTarget target;
      target.name = "frame_" + std::to_string(f);
      target.position_deltas.resize(mesh.positions.size());
      for (size_t v = 0; v < mesh.positions.size(); ++v)
        target.position_deltas[v] = caches[i].at(f, int(v)) - mesh.positions[v];
      target.normal_deltas =
          normals_of([&](std::uint32_t v) { return Vec3(caches[i].at(f, int(v))); });
      for (size_t v = 0; v < mesh.positions.size(); ++v)
        target.normal_deltas[v] = target.normal_deltas[v] - mesh.normals[v];
      mesh.morph_targets.push_back(std::move(target));
      track.times.push_back(double(f) / scene.fps);
      for (int k = 0; k < frames; ++k) track.values.push_back(k == f ? 1.0 : 0.0);
    }
    mesh.default_weights.assign(size_t(frames), 0.0);
    mesh.default_weights[0] = 1;
    asset.meshes.push_back(std::move(mesh));
    clip.morph_tracks.push_back(std::move(track));
  }
  clip.tracks.resize(scene.cloths.size());
  asset.clips.push_back(std::move(clip));
  return asset;
}

}  // namespace

SimResult run_sim_file(const SimRequest& request) {
  static constexpr std::string_view kOutputs[] = {"pc2", "glb", "gltf"};
  const NamedInput inputs[] = {{"SCENE", request.scene}};
  check_output_file(request.out, inputs, kOutputs, "sim");
  const bool gltf = writes_gltf(request.out);
  SimResult result;
  result.scene = parse_sim_scene(read_file(request.scene), request.scene);
  const SimScene& scene = result.scene;
  if (!gltf)
    for (const SimSceneCloth& c : scene.cloths)
      for (const std::string& path : {sim_cache_path(request.out, c.name, scene.cloths.size()),
                                      sim_mesh_path(request.out, c.name, scene.cloths.size())})
        if (same_file(path, request.scene))
          throw UsageError("the output " + path + " is the same file as SCENE");

  result.frames = int(std::floor(scene.duration * scene.fps + 1e-9)) + 1;
  const double h = 1.0 / scene.rate;
  std::vector<PointCache> caches;
  for (const SimSceneCloth& c : scene.cloths) {
    ClothOptions options = c.options;
    options.threads = request.threads;
    Cloth cloth(c.mesh, options);
    SimClothResult out;
    out.name = c.name;
    out.vertices = c.mesh.positions.size();
    out.springs = cloth.springs().size();
    PointCache cache;
    cache.points = int(out.vertices);
    cache.start_frame = 0;
    cache.sample_rate = 1;
    cache.positions.reserve(out.vertices * size_t(result.frames));
    auto record = [&](std::span<const Vec3> previous, std::span<const Vec3> current, double alpha) {
      for (size_t i = 0; i < current.size(); ++i)
        cache.positions.push_back(Vec3f(lerp(previous[i], current[i], alpha)));
      out.worst_stretch = std::max(out.worst_stretch, cloth.largest_stretch());
    };
    record(cloth.positions(), cloth.positions(), 0);
    // The clock turns each 1/fps frame into whole 1/rate steps; a frame is drawn α of the way
    // from the state before the last step to the state after it.
    FixedStepClock clock(Seconds::fraction(1, scene.rate),
                         scene.rate / scene.fps + 2);  // offline: never drops time
    std::vector<Vec3> previous(cloth.positions().begin(), cloth.positions().end());
    const auto start = std::chrono::steady_clock::now();
    for (int frame = 1; frame < result.frames; ++frame) {
      const FrameSteps steps = clock.advance(Seconds::fraction(1, scene.fps));
      for (int s = 0; s < steps.steps; ++s) {
        previous.assign(cloth.positions().begin(), cloth.positions().end());
        const ClothStepStats stats = cloth.step(h);
        out.collider_contacts += stats.collider_contacts;
        out.self_contacts += stats.self_contacts;
        ++result.steps;
      }
      record(previous, cloth.positions(), steps.alpha);
      report(request.progress, "simulating " + c.name, frame, result.frames - 1);
    }
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    out.largest_stretch = cloth.largest_stretch();
    out.cache_path = gltf ? request.out : sim_cache_path(request.out, c.name, scene.cloths.size());
    out.mesh_path = gltf ? request.out : sim_mesh_path(request.out, c.name, scene.cloths.size());
    caches.push_back(std::move(cache));
    result.cloths.push_back(out);
  }
  // Everything ran: now write (each file atomically).
  if (gltf) {
    save_asset(sim_asset(scene, caches, result.frames), request.out);
    return result;
  }
  for (size_t i = 0; i < scene.cloths.size(); ++i) {
    write_pc2(result.cloths[i].cache_path, caches[i]);
    write_obj_mesh(result.cloths[i].mesh_path, scene.cloths[i].mesh.positions,
                   scene.cloths[i].mesh.triangles);
  }
  return result;
}

}  // namespace kinema::pipeline
