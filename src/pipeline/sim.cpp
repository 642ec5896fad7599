// `kinema sim` as a library call (kinema/pipeline/sim.h).
#include "kinema/pipeline/sim.h"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "kinema/core/error.h"
#include "kinema/core/file.h"
#include "kinema/io/asset_file.h"
#include "kinema/io/gltf.h"
#include "kinema/io/point_cache.h"
#include "kinema/io/terrain.h"
#include "kinema/physics/character_colliders.h"
#include "kinema/physics/spring_bones.h"
#include "kinema/sim/fixed_step_clock.h"
#include "kinema/skin/skin_mesh.h"

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
    r.only(j, p, {"shape", "point", "normal", "friction", "restitution"});
    c.shape = ColliderShape::Plane;
    if (j.contains("point")) c.a = r.vec3(j["point"], p + "/point");
    if (j.contains("normal")) c.normal = r.vec3(j["normal"], p + "/normal");
    if (!(length(c.normal) > 0)) r.fail(p + "/normal", "must not be zero");
  } else if (shape == "sphere") {
    r.only(j, p, {"shape", "centre", "radius", "friction", "restitution"});
    c.shape = ColliderShape::Sphere;
    c.a = r.vec3(j.value("centre", json::array({0, 0, 0})), p + "/centre");
    if (!j.contains("radius")) r.fail(p, "a sphere needs a \"radius\"");
    c.radius = r.at_least(j["radius"], p + "/radius", 0, true);
  } else if (shape == "capsule") {
    r.only(j, p, {"shape", "a", "b", "radius", "friction", "restitution"});
    c.shape = ColliderShape::Capsule;
    if (!j.contains("a") || !j.contains("b") || !j.contains("radius"))
      r.fail(p, "a capsule needs \"a\", \"b\" and \"radius\"");
    c.a = r.vec3(j["a"], p + "/a");
    c.b = r.vec3(j["b"], p + "/b");
    if (!(length(c.b - c.a) > 0)) r.fail(p + "/b", "must differ from \"a\"");
    c.radius = r.at_least(j["radius"], p + "/radius", 0, true);
  } else if (shape == "box") {
    r.only(j, p, {"shape", "centre", "half_extents", "friction", "restitution"});
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
  if (j.contains("restitution"))
    c.restitution = r.at_least(j["restitution"], p + "/restitution", 0, false);
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
  r.only(j, p,
         {"name", "grid", "mesh", "mesh_name", "solver", "substeps", "iterations", "tethers",
          "pinned", "material", "thickness", "self_collision", "cg_max_iterations", "cg_tolerance",
          "attach_to_skin", "attach_joint"});
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
  if (j.contains("attach_to_skin")) {
    const json& list = j["attach_to_skin"];
    if (!list.is_array()) r.fail(p + "/attach_to_skin", "must be an array of vertex indices");
    std::set<int> seen(o.pinned.begin(), o.pinned.end());
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string q = p + "/attach_to_skin/" + std::to_string(i);
      const int v = r.whole(list[i], q, 0, int(c.mesh.positions.size()) - 1);
      if (!seen.insert(v).second)
        r.fail(q, "vertex " + std::to_string(v) + " is already pinned or attached");
      c.attach_to_skin.push_back(std::uint32_t(v));
    }
  }
  if (j.contains("attach_joint")) {
    if (!j.contains("attach_to_skin")) r.fail(p + "/attach_joint", "goes with \"attach_to_skin\"");
    c.attach_joint_name = r.text(j["attach_joint"], p + "/attach_joint");
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

AgeCurve read_curve(const SceneReader& r, const json& j, const std::string& p) {
  r.only(j, p, {"u", "value"});
  AgeCurve c;
  if (!j.contains("u") || !j.contains("value") || !j["u"].is_array() || !j["value"].is_array() ||
      j["u"].size() != j["value"].size())
    r.fail(p, "a curve needs arrays \"u\" and \"value\" of the same length");
  for (size_t i = 0; i < j["u"].size(); ++i) {
    c.u.push_back(float(r.number(j["u"][i], p + "/u/" + std::to_string(i))));
    c.value.push_back(float(r.number(j["value"][i], p + "/value/" + std::to_string(i))));
    if (i > 0 && !(c.u[i] > c.u[i - 1]))
      r.fail(p + "/u/" + std::to_string(i), "keys must be ascending");
  }
  return c;
}

Emitter read_emitter(const SceneReader& r, const json& j, const std::string& p,
                     const std::string& folder) {
  r.only(j, p,
         {"shape", "position", "line_end", "radius", "half_extents", "mesh", "mesh_name", "rate",
          "stop_time", "burst", "velocity", "spread", "speed_jitter", "lifetime", "lifetime_jitter",
          "seed"});
  Emitter e;
  const std::string shape = j.contains("shape") ? r.text(j["shape"], p + "/shape") : "point";
  if (shape == "point")
    e.shape = EmitterShape::Point;
  else if (shape == "line")
    e.shape = EmitterShape::Line;
  else if (shape == "sphere")
    e.shape = EmitterShape::Sphere;
  else if (shape == "box")
    e.shape = EmitterShape::Box;
  else if (shape == "mesh")
    e.shape = EmitterShape::MeshSurface;
  else
    r.fail(p + "/shape", "unknown emitter \"" + shape + "\" (point, line, sphere, box, mesh)");
  if (j.contains("position")) e.position = r.vec3(j["position"], p + "/position");
  if (j.contains("line_end")) e.line_end = r.vec3(j["line_end"], p + "/line_end");
  if (j.contains("radius")) e.radius = r.at_least(j["radius"], p + "/radius", 0, false);
  if (j.contains("half_extents")) e.half_extents = r.vec3(j["half_extents"], p + "/half_extents");
  if (e.shape == EmitterShape::MeshSurface) {
    if (!j.contains("mesh")) r.fail(p + "/mesh", "a mesh emitter needs a \"mesh\" file");
    std::filesystem::path path(r.text(j["mesh"], p + "/mesh"));
    if (path.is_relative()) path = std::filesystem::path(folder) / path;
    const std::string name =
        j.contains("mesh_name") ? r.text(j["mesh_name"], p + "/mesh_name") : "";
    const ClothMesh mesh = read_mesh_file(r, path.string(), name, p + "/mesh");
    e.mesh_vertices = mesh.positions;
    for (const auto& t : mesh.triangles)
      e.mesh_triangles.insert(e.mesh_triangles.end(), t.begin(), t.end());
  }
  if (j.contains("rate")) e.rate = r.at_least(j["rate"], p + "/rate", 0, false);
  if (j.contains("stop_time")) e.stop_time = r.at_least(j["stop_time"], p + "/stop_time", 0, false);
  if (j.contains("burst"))
    e.burst = std::uint64_t(r.whole(j["burst"], p + "/burst", 0, 10'000'000));
  if (j.contains("velocity")) e.velocity = r.vec3(j["velocity"], p + "/velocity");
  if (j.contains("spread")) e.spread = r.at_least(j["spread"], p + "/spread", 0, false);
  if (j.contains("speed_jitter"))
    e.speed_jitter = r.at_least(j["speed_jitter"], p + "/speed_jitter", 0, false);
  if (j.contains("lifetime")) e.lifetime = r.at_least(j["lifetime"], p + "/lifetime", 0, true);
  if (j.contains("lifetime_jitter"))
    e.lifetime_jitter = r.at_least(j["lifetime_jitter"], p + "/lifetime_jitter", 0, false);
  if (j.contains("seed")) e.seed = std::uint64_t(r.whole(j["seed"], p + "/seed", 0, 1 << 30));
  return e;
}

ForceField read_force(const SceneReader& r, const json& j, const std::string& p) {
  r.only(j, p, {"kind", "vector", "position", "strength", "radius", "scale", "speed"});
  if (!j.contains("kind")) r.fail(p, "a force needs a \"kind\"");
  const std::string kind = r.text(j["kind"], p + "/kind");
  ForceField f;
  static const std::pair<const char*, ForceKind> kinds[] = {
      {"gravity", ForceKind::Gravity}, {"drag", ForceKind::Drag},
      {"wind", ForceKind::Wind},       {"attractor", ForceKind::Attractor},
      {"vortex", ForceKind::Vortex},   {"curl_noise", ForceKind::CurlNoise}};
  bool known = false;
  for (const auto& [name, k] : kinds)
    if (kind == name) f.kind = k, known = true;
  if (!known)
    r.fail(p + "/kind",
           "unknown force \"" + kind + "\" (gravity, drag, wind, attractor, vortex, curl_noise)");
  if (j.contains("vector")) f.vector = r.vec3(j["vector"], p + "/vector");
  if (j.contains("position")) f.position = r.vec3(j["position"], p + "/position");
  if (j.contains("strength")) f.strength = r.number(j["strength"], p + "/strength");
  if (j.contains("radius")) f.radius = r.number(j["radius"], p + "/radius");
  if (j.contains("scale")) f.scale = r.at_least(j["scale"], p + "/scale", 0, true);
  if (j.contains("speed")) f.speed = r.number(j["speed"], p + "/speed");
  return f;
}

ParticleSystemOptions read_particles(const SceneReader& r, const json& j, const std::string& p,
                                     const std::string& folder, const Vec3& gravity,
                                     const std::vector<Collider>& colliders) {
  r.only(j, p, {"emitters", "forces", "size", "colour", "opacity", "max_particles"});
  ParticleSystemOptions o;
  if (!j.contains("emitters") || !j["emitters"].is_array() || j["emitters"].empty())
    r.fail(p + "/emitters", "particles need a non-empty array \"emitters\"");
  for (size_t i = 0; i < j["emitters"].size(); ++i)
    o.emitters.push_back(
        read_emitter(r, j["emitters"][i], p + "/emitters/" + std::to_string(i), folder));
  if (j.contains("forces")) {
    if (!j["forces"].is_array()) r.fail(p + "/forces", "must be an array");
    for (size_t i = 0; i < j["forces"].size(); ++i)
      o.forces.push_back(read_force(r, j["forces"][i], p + "/forces/" + std::to_string(i)));
  }
  // The scene's gravity, unless the particles name their own.
  if (std::none_of(o.forces.begin(), o.forces.end(),
                   [](const ForceField& f) { return f.kind == ForceKind::Gravity; })) {
    ForceField g;
    g.kind = ForceKind::Gravity;
    g.vector = gravity;
    o.forces.insert(o.forces.begin(), g);
  }
  if (j.contains("size")) o.attributes.size = read_curve(r, j["size"], p + "/size");
  if (j.contains("opacity")) o.attributes.opacity = read_curve(r, j["opacity"], p + "/opacity");
  if (j.contains("colour")) {
    if (!j["colour"].is_array() || j["colour"].size() != 3)
      r.fail(p + "/colour", "must be three curves: red, green, blue");
    for (size_t c = 0; c < 3; ++c)
      o.attributes.colour[c] = read_curve(r, j["colour"][c], p + "/colour/" + std::to_string(c));
  }
  if (j.contains("max_particles"))
    o.max_particles = size_t(r.whole(j["max_particles"], p + "/max_particles", 1, 10'000'000));
  o.colliders = colliders;
  try {
    ParticleSystem check(o);  // every remaining check, before anything runs
  } catch (const Error& e) {
    r.fail(p, e.reason());
  }
  return o;
}

}  // namespace

SimScene parse_sim_scene(const std::string& json_text, const std::string& file,
                         const std::string& character_file) {
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
  r.only(j, "",
         {"duration", "fps", "rate", "gravity", "wind", "colliders", "cloth", "character",
          "particles"});
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
  const std::string folder = std::filesystem::path(file).parent_path().string();
  if (j.contains("particles"))
    scene.particles = read_particles(r, j["particles"], "/particles", folder, gravity, colliders);
  if (j.contains("cloth") && !j["cloth"].is_array()) r.fail("/cloth", "must be an array");
  if ((!j.contains("cloth") || j["cloth"].empty()) && !scene.particles)
    r.fail("/cloth", "a scene needs a non-empty array \"cloth\" or \"particles\"");
  if (j.contains("character")) {
    const json& c = j["character"];
    r.only(c, "/character",
           {"file", "clip", "colliders", "collider_joints", "collider_percentile", "spring_bones"});
    if (!c.contains("file")) r.fail("/character/file", "missing: the character's file");
    SimSceneCharacter ch;
    std::filesystem::path path(r.text(c["file"], "/character/file"));
    if (!character_file.empty())
      path = character_file;
    else if (path.is_relative())
      path = std::filesystem::path(folder) / path;
    ch.file = path.string();
    ch.asset = std::make_shared<const Asset>(load_asset(ch.file));
    if (c.contains("clip")) {
      const std::string name = r.text(c["clip"], "/character/clip");
      for (size_t k = 0; k < ch.asset->clips.size() && ch.clip < 0; ++k)
        if (ch.asset->clips[k].name == name || std::to_string(k) == name) ch.clip = int(k);
      if (ch.clip < 0) r.fail("/character/clip", ch.file + " has no clip \"" + name + "\"");
    } else if (!ch.asset->clips.empty()) {
      ch.clip = 0;
    }
    if (c.contains("colliders")) ch.colliders = r.boolean(c["colliders"], "/character/colliders");
    if (c.contains("spring_bones"))
      ch.spring_bones = r.boolean(c["spring_bones"], "/character/spring_bones");
    if (c.contains("collider_percentile"))
      ch.collider_percentile = r.number(c["collider_percentile"], "/character/collider_percentile");
    if (!(ch.collider_percentile > 0 && ch.collider_percentile <= 1))
      r.fail("/character/collider_percentile", "must be in (0, 1]");
    if (c.contains("collider_joints")) {
      const json& list = c["collider_joints"];
      if (!list.is_array()) r.fail("/character/collider_joints", "must be an array of joint names");
      for (size_t i = 0; i < list.size(); ++i) {
        const std::string q = "/character/collider_joints/" + std::to_string(i);
        const int joint = ch.asset->skeleton.find(r.text(list[i], q));
        if (joint < 0) r.fail(q, ch.file + " has no joint \"" + list[i].get<std::string>() + "\"");
        ch.collider_joints.push_back(joint);
      }
    }
    scene.character = std::move(ch);
  }
  std::set<std::string> names;
  const json no_cloth = json::array();
  const json& cloth_list = j.contains("cloth") ? j["cloth"] : no_cloth;
  for (size_t i = 0; i < cloth_list.size(); ++i) {
    const std::string p = "/cloth/" + std::to_string(i);
    scene.cloths.push_back(read_cloth(r, cloth_list[i], p, folder, gravity, wind, colliders, i));
    if (!names.insert(scene.cloths.back().name).second)
      r.fail(p + "/name", "another cloth is already named \"" + scene.cloths.back().name + "\"");
    SimSceneCloth& cloth = scene.cloths.back();
    if (!cloth.attach_to_skin.empty() && !scene.character)
      r.fail(p + "/attach_to_skin", "needs a \"character\" whose skin the cloth follows");
    if (!cloth.attach_joint_name.empty()) {
      cloth.attach_joint = scene.character->asset->skeleton.find(cloth.attach_joint_name);
      if (cloth.attach_joint < 0)
        r.fail(p + "/attach_joint",
               scene.character->file + " has no joint \"" + cloth.attach_joint_name + "\"");
    }
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

namespace {

/// A scene's character over time: the clip's pose at each step with its spring bones simulated,
/// the colliders its skin gives at that pose, and its skinned vertices (for attachments and for
/// putting a cloth authored around the bind pose on it).
class SceneCharacter {
 public:
  explicit SceneCharacter(const SimSceneCharacter& c) : c_(c), a_(*c.asset) {
    const size_t n = size_t(a_.skeleton.joint_count());
    pose_.resize(n);
    model_.resize(n);
    if (c.spring_bones && !a_.spring_bones.empty()) springs_.emplace(a_.skeleton, a_.spring_bones);
    if (c.colliders) {
      CharacterColliderOptions options;
      options.percentile = c.collider_percentile;
      for (const CharacterCollider& shape : character_colliders(a_, options))
        if (c.collider_joints.empty() ||
            std::find(c.collider_joints.begin(), c.collider_joints.end(), shape.joint) !=
                c.collider_joints.end())
          shapes_.push_back(shape);
    }
    if (c.clip >= 0) {
      baked_.name = a_.clips[size_t(c.clip)].name;
      const Clip& source = a_.clips[size_t(c.clip)];
      for (size_t j = 0; j < n; ++j)
        keyed_.push_back(j < source.tracks.size() && !source.tracks[j].empty());
    } else {
      baked_.name = "rest";
      keyed_.assign(n, false);
    }
    if (springs_)
      for (int j : springs_->simulated_joints()) keyed_[size_t(j)] = true;
    baked_.tracks.resize(n);
    for (const Mat4& m : rest_model_matrices(a_.skeleton)) {
      Mat4 inv;
      rest_inverse_.push_back(inverse(m, inv) ? inv : Mat4::identity());
    }
  }

  /// Moves the character to time t; `h` the step just taken (0 at the start).
  void move_to(double t, double h) {
    previous_ = pose_;
    if (c_.clip >= 0) {
      const Clip& clip = a_.clips[size_t(c_.clip)];
      sample_pose(clip, a_.skeleton, std::min(t, clip.duration), WrapMode::Clamp, pose_);
    } else {
      pose_ = a_.skeleton.rest_pose();
    }
    if (springs_) springs_->step(pose_, h);
    local_to_model(a_.skeleton.parents(), pose_, model_);
    if (!shapes_.empty()) pose_character_colliders(shapes_, model_, colliders_);
    skin();
  }

  /// Keys into the baked clip at time t the pose α of the way from before the last move to
  /// after it: the frame the cloths are drawn at (FixedStepClock's α).
  void record(double t, double alpha) {
    baked_.duration = t;
    if (previous_.empty()) previous_ = pose_;
    for (size_t j = 0; j < pose_.size(); ++j) {
      if (!keyed_[j]) continue;
      JointTrack& track = baked_.tracks[j];
      track.translation.times.push_back(t);
      track.rotation.times.push_back(t);
      track.scale.times.push_back(t);
      track.translation.values.push_back(
          lerp(previous_[j].translation, pose_[j].translation, alpha));
      track.rotation.values.push_back(slerp(previous_[j].rotation, pose_[j].rotation, alpha));
      track.scale.values.push_back(lerp(previous_[j].scale, pose_[j].scale, alpha));
    }
  }

  /// Point `p`, given in the character's bind pose near skinned vertex `k`, carried to the
  /// current pose by that vertex's blended skinning matrix (how a cloth authored around the
  /// character's rest pose is put on it at the first frame).
  Vec3 carry(size_t k, const Vec3& p) const {
    for (size_t m = 0; m < skinned_.size(); ++m) {
      const Mesh& mesh = a_.meshes[skinned_[m]];
      if (k >= mesh.positions.size()) {
        k -= mesh.positions.size();
        continue;
      }
      Vec3 out{0, 0, 0};
      for (int i = 0; i < mesh.influences; ++i) {
        const size_t at = k * size_t(mesh.influences) + size_t(i);
        const float w = mesh.weights[at];
        if (w > 0) out += to_mat4(palettes_[m][mesh.joints[at]]).transform_point(p) * double(w);
      }
      return out;
    }
    return p;
  }

  /// Joint j's motion from the bind (rest) pose to the current pose, in model space.
  Mat4 from_rest(int j) const { return model_[size_t(j)] * rest_inverse_[size_t(j)]; }

  const std::vector<Collider>& colliders() const { return colliders_; }
  size_t collider_count() const { return shapes_.size(); }
  std::span<const Vec3> skin_positions() const { return skin_; }
  Clip take_clip(int fps) {
    baked_.sample_rate = fps;
    return std::move(baked_);
  }

 private:
  void skin() {
    skin_.clear();
    skinned_.clear();
    palettes_.resize(a_.meshes.size());
    for (size_t m = 0; m < a_.meshes.size(); ++m) {
      const Mesh& mesh = a_.meshes[m];
      if (mesh.skin < 0 || mesh.influences == 0) continue;
      const SkinMeshView view = skin_mesh_view(mesh, c_.file);
      std::vector<Affine3x4f>& palette = palettes_[skinned_.size()];
      palette.resize(a_.skins[size_t(mesh.skin)].joints.size());
      asset_skin_palette(a_, mesh.skin, model_, palette);
      positions_.resize(mesh.positions.size());
      skin_lbs(view, palette, SkinOutputs{positions_, {}, {}});
      for (const Vec3f& p : positions_) skin_.push_back(Vec3(p));
      skinned_.push_back(m);
    }
  }

  const SimSceneCharacter& c_;
  const Asset& a_;
  std::optional<SpringBoneSim> springs_;
  std::vector<CharacterCollider> shapes_;
  std::vector<Transform> pose_, previous_;  // now, and before the last move
  std::vector<Mat4> model_;
  std::vector<Mat4> rest_inverse_;
  std::vector<Collider> colliders_;
  std::vector<size_t> skinned_;                    // meshes whose vertices skin_ holds, in order
  std::vector<std::vector<Affine3x4f>> palettes_;  // one per skinned mesh
  std::vector<Vec3f> positions_;
  std::vector<Vec3> skin_;
  std::vector<char> keyed_;
  Clip baked_;
};

/// The skinned vertex nearest to p (brute force: run once per attached vertex at the start).
size_t nearest_vertex(std::span<const Vec3> skin, const Vec3& p) {
  size_t best = 0;
  for (size_t k = 1; k < skin.size(); ++k)
    if (length_squared(skin[k] - p) < length_squared(skin[best] - p)) best = k;
  return best;
}

}  // namespace

std::string sim_particle_cache_path(const std::string& out, bool with_cloth) {
  if (!with_cloth) return out;
  std::filesystem::path p(out);
  return (p.parent_path() / (p.stem().string() + "_particles.pc2")).string();
}

std::string sim_character_path(const std::string& out) {
  std::filesystem::path p(out);
  return (p.parent_path() / (p.stem().string() + "_character.glb")).string();
}

SimResult run_sim_file(const SimRequest& request) {
  static constexpr std::string_view kOutputs[] = {"pc2", "glb", "gltf"};
  const NamedInput inputs[] = {{"SCENE", request.scene}};
  check_output_file(request.out, inputs, kOutputs, "sim");
  const bool gltf = writes_gltf(request.out);
  SimResult result;
  result.scene = parse_sim_scene(read_file(request.scene), request.scene, request.character_file);
  const SimScene& scene = result.scene;
  if (!gltf)
    for (const SimSceneCloth& c : scene.cloths)
      for (const std::string& path : {sim_cache_path(request.out, c.name, scene.cloths.size()),
                                      sim_mesh_path(request.out, c.name, scene.cloths.size())})
        if (same_file(path, request.scene))
          throw UsageError("the output " + path + " is the same file as SCENE");
  if (scene.character) {
    result.character_path = sim_character_path(request.out);
    for (const std::string& input : {request.scene, scene.character->file})
      if (same_file(result.character_path, input))
        throw UsageError("the output " + result.character_path + " is the same file as " + input);
  }

  if (scene.particles) {
    if (scene.cloths.empty() && gltf)
      throw UsageError("a scene of particles alone is written as a point cache: -o OUT.pc2");
    result.particle_cache_path = sim_particle_cache_path(request.out, !scene.cloths.empty());
    result.particle_mesh_path =
        std::filesystem::path(result.particle_cache_path).replace_extension(".obj").string();
    for (const std::string& path : {result.particle_cache_path, result.particle_mesh_path})
      if (same_file(path, request.scene))
        throw UsageError("the output " + path + " is the same file as SCENE");
  }

  result.frames = int(std::floor(scene.duration * scene.fps + 1e-9)) + 1;
  const double h = 1.0 / scene.rate;
  std::optional<ParticleSystem> particles;
  // Each frame's living particles: (serial, position), drawn α of the way between steps.
  std::vector<std::vector<std::pair<std::uint64_t, Vec3f>>> particle_frames;
  std::map<std::uint64_t, Vec3> particle_before;  // positions before the last step
  if (scene.particles) {
    ParticleSystemOptions options = *scene.particles;
    options.threads = request.threads;
    particles.emplace(std::move(options));
    particle_frames.emplace_back();  // frame 0: nothing emitted yet
  }
  // The character first: at the first frame's pose it decides where attached vertices hold on.
  std::optional<SceneCharacter> character;
  std::vector<Vec3> bind_skin;
  if (scene.character) {
    character.emplace(*scene.character);
    // Cloths are authored around the bind pose (the skin's vertices as stored).
    for (const Mesh& mesh : scene.character->asset->meshes)
      if (mesh.skin >= 0 && mesh.influences > 0)
        for (const Vec3f& p : mesh.positions) bind_skin.push_back(Vec3(p));
    character->move_to(0, 0);
    character->record(0, 1);
    result.character_colliders = character->collider_count();
  }
  std::vector<Cloth> cloths;
  std::vector<PointCache> caches(scene.cloths.size());
  std::vector<std::vector<Vec3>> previous(scene.cloths.size());
  for (size_t i = 0; i < scene.cloths.size(); ++i) {
    const SimSceneCloth& c = scene.cloths[i];
    ClothOptions options = c.options;
    options.threads = request.threads;
    // With a character the cloth is authored around its bind pose: every vertex is carried to
    // the first frame rigidly by the attach joint (or the first root). With an attach joint the
    // attached vertices follow it rigidly (pins moved each step); without one each follows its
    // nearest skinned vertex, keeping its offset.
    std::vector<Vec3> start(c.mesh.positions.begin(), c.mesh.positions.end());
    if (character) {
      const Mat4 carry = character->from_rest(c.attach_joint >= 0 ? c.attach_joint : 0);
      for (Vec3& p : start) p = carry.transform_point(p);
      if (c.attach_joint >= 0) {
        for (std::uint32_t v : c.attach_to_skin) options.pinned.push_back(v);
      } else if (!c.attach_to_skin.empty()) {
        const std::span<const Vec3> skin = character->skin_positions();
        if (skin.empty())
          throw Error(request.scene, "/cloth/" + std::to_string(i) + "/attach_to_skin",
                      scene.character->file + " has no skinned mesh to attach to");
        for (std::uint32_t v : c.attach_to_skin) {
          const size_t k = nearest_vertex(bind_skin, c.mesh.positions[v]);
          options.attachments.push_back({v, std::uint32_t(k), start[v] - skin[k]});
        }
      }
    }
    if (character)
      for (const Collider& k : character->colliders()) options.colliders.push_back(k);
    cloths.emplace_back(c.mesh, options);
    size_t attached_inside = 0;
    if (character) {
      cloths.back().set_state(start, std::vector<Vec3>(start.size(), Vec3{0, 0, 0}));
      std::vector<std::uint32_t> held = options.pinned;
      for (const ClothAttachment& a : options.attachments) held.push_back(a.cloth_vertex);
      for (std::uint32_t v : held)
        for (const Collider& k : character->colliders()) {
          Vec3 surface, normal;
          if (collider_contact(k, start[v], options.thickness, surface, normal)) {
            ++attached_inside;
            break;
          }
        }
    }
    SimClothResult out;
    out.name = c.name;
    out.vertices = c.mesh.positions.size();
    out.springs = cloths.back().springs().size();
    out.attached_inside = attached_inside;
    out.cache_path = gltf ? request.out : sim_cache_path(request.out, c.name, scene.cloths.size());
    out.mesh_path = gltf ? request.out : sim_mesh_path(request.out, c.name, scene.cloths.size());
    result.cloths.push_back(out);
    caches[i].points = int(out.vertices);
    caches[i].start_frame = 0;
    caches[i].sample_rate = 1;
    caches[i].positions.reserve(out.vertices * size_t(result.frames));
  }
  auto record = [&](size_t i, std::span<const Vec3> before, double alpha) {
    const Cloth& cloth = cloths[i];
    for (size_t v = 0; v < cloth.positions().size(); ++v)
      caches[i].positions.push_back(Vec3f(lerp(before[v], cloth.positions()[v], alpha)));
    result.cloths[i].worst_stretch =
        std::max(result.cloths[i].worst_stretch, cloth.largest_stretch());
  };
  for (size_t i = 0; i < cloths.size(); ++i) record(i, cloths[i].positions(), 0);
  // The clock turns each 1/fps frame into whole 1/rate steps; a frame is drawn α of the way
  // from the state before the last step to the state after it.
  FixedStepClock clock(Seconds::fraction(1, scene.rate),
                       scene.rate / scene.fps + 2);  // offline: never drops time
  for (int frame = 1; frame < result.frames; ++frame) {
    const FrameSteps steps = clock.advance(Seconds::fraction(1, scene.fps));
    for (int s = 0; s < steps.steps; ++s) {
      ++result.steps;
      // The character first: the cloths and particles collide with it where it is at the end
      // of the step.
      if (character) {
        character->move_to(double(result.steps) * h, h);
        for (size_t i = 0; i < cloths.size(); ++i) {
          const SimSceneCloth& c = scene.cloths[i];
          std::vector<Collider> colliders = c.options.colliders;
          for (const Collider& k : character->colliders()) colliders.push_back(k);
          cloths[i].set_colliders(std::move(colliders));
          if (c.attach_joint >= 0) {
            const Mat4 follow = character->from_rest(c.attach_joint);
            for (std::uint32_t v : c.attach_to_skin)
              cloths[i].set_pin_target(v, follow.transform_point(c.mesh.positions[v]));
          }
        }
      }
      if (particles) {
        const auto start = std::chrono::steady_clock::now();
        const Particles& now = particles->particles();
        if (s + 1 == steps.steps) {
          particle_before.clear();
          for (size_t k = 0; k < now.count(); ++k) particle_before[now.serial[k]] = now.position(k);
        }
        if (character) {
          std::vector<Collider> colliders = scene.particles->colliders;
          for (const Collider& k : character->colliders()) colliders.push_back(k);
          particles->set_colliders(std::move(colliders));
        }
        particles->step(h);
        result.particle_seconds +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      }
      for (size_t i = 0; i < cloths.size(); ++i) {
        const auto start = std::chrono::steady_clock::now();
        previous[i].assign(cloths[i].positions().begin(), cloths[i].positions().end());
        const ClothStepStats stats =
            cloths[i].step(h, character ? character->skin_positions() : std::span<const Vec3>{});
        result.cloths[i].collider_contacts += stats.collider_contacts;
        result.cloths[i].self_contacts += stats.self_contacts;
        result.cloths[i].seconds +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      }
    }
    for (size_t i = 0; i < cloths.size(); ++i)
      record(i, steps.steps > 0 ? std::span<const Vec3>(previous[i]) : cloths[i].positions(),
             steps.alpha);
    if (character) character->record(double(frame) / scene.fps, steps.steps > 0 ? steps.alpha : 1);
    if (particles) {
      const Particles& now = particles->particles();
      result.particles_most_alive = std::max(result.particles_most_alive, now.count());
      auto& out = particle_frames.emplace_back();
      if (steps.steps > 0 && steps.alpha == 0) {
        // The state before the clock's last step, exactly (the particles that died in it too).
        for (const auto& [serial, p] : particle_before) out.emplace_back(serial, Vec3f(p));
      } else {
        for (size_t k = 0; k < now.count(); ++k) {
          const auto before = particle_before.find(now.serial[k]);
          const Vec3 p = steps.steps > 0 && before != particle_before.end()
                             ? lerp(before->second, now.position(k), steps.alpha)
                             : now.position(k);
          out.emplace_back(now.serial[k], Vec3f(p));
        }
      }
    }
    report(request.progress, "simulating", frame, result.frames - 1);
  }
  result.steps *= long(cloths.size());
  for (size_t i = 0; i < cloths.size(); ++i)
    result.cloths[i].largest_stretch = cloths[i].largest_stretch();
  // Particles as a point cache: every particle ever emitted is a vertex, held where it was first
  // drawn before that and where it was last drawn after.
  PointCache particle_cache;
  std::vector<Vec3> particle_rest;
  if (particles) {
    std::map<std::uint64_t, size_t> slot;
    for (const auto& frame : particle_frames)
      for (const auto& [serial, p] : frame) slot.emplace(serial, 0);
    size_t next = 0;
    for (auto& [serial, index] : slot) index = next++;
    for (std::uint64_t n : particles->emitted()) result.particles_emitted += n;
    if (double(slot.size()) * double(particle_frames.size()) > 50e6)
      throw Error(request.scene, "/particles",
                  std::to_string(slot.size()) + " particles over " +
                      std::to_string(particle_frames.size()) +
                      " frames are too many for a point cache (50 million points at most): lower "
                      "the rate, the lifetime or the duration");
    particle_cache.points = int(slot.size());
    particle_cache.start_frame = 0;
    particle_cache.sample_rate = 1;
    std::vector<Vec3f> last(slot.size());
    std::vector<char> seen(slot.size(), 0);
    // The first position of each, for the frames before it exists.
    for (const auto& frame : particle_frames)
      for (const auto& [serial, p] : frame)
        if (const size_t k = slot[serial]; !seen[k]) last[k] = p, seen[k] = 1;
    for (const Vec3f& p : last) particle_rest.push_back(Vec3(p));
    for (const auto& frame : particle_frames) {
      for (const auto& [serial, p] : frame) last[slot[serial]] = p;
      particle_cache.positions.insert(particle_cache.positions.end(), last.begin(), last.end());
    }
  }

  // Everything ran: now write (each file atomically).
  if (particles) {
    write_pc2(result.particle_cache_path, particle_cache);
    write_obj_mesh(result.particle_mesh_path, particle_rest, {});
  }
  if (character) {
    Asset avatar = *scene.character->asset;
    avatar.clips.assign(1, character->take_clip(scene.fps));
    GltfWriteOptions options;
    options.spring_bones = false;
    write_gltf(avatar, result.character_path, options);
  }
  if (gltf && !scene.cloths.empty()) {
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
