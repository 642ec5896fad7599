// `kinema sim` scenes: the JSON parsed into a SimScene, every error at its JSON pointer
// (kinema/pipeline/sim.h, docs/physics.md).
#include "kinema/pipeline/sim.h"

#include <cmath>
#include <filesystem>
#include <limits>
#include <set>

#include <nlohmann/json.hpp>

#include "kinema/core/error.h"
#include "kinema/core/file.h"
#include "kinema/io/asset_file.h"
#include "kinema/io/terrain.h"
#include "sim_bodies.h"
#include "sim_liquid.h"
#include "sim_rigid.h"
#include "sim_scene_reader.h"
#include "sim_smoke.h"

namespace kinema::pipeline {

namespace {

using nlohmann::json;

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

}  // namespace

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

namespace {

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
         {"name",
          "grid",
          "mesh",
          "mesh_name",
          "solver",
          "substeps",
          "iterations",
          "tethers",
          "pinned",
          "material",
          "thickness",
          "self_collision",
          "cg_max_iterations",
          "cg_tolerance",
          "preconditioner",
          "implicit_bend",
          "slack_stiffness",
          "strain_limit",
          "strain_limit_passes",
          "strain_limit_relaxation",
          "attach_to_skin",
          "attach_joint"});
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
  if (j.contains("preconditioner")) {
    const std::string s = r.text(j["preconditioner"], p + "/preconditioner");
    if (s == "jacobi")
      o.preconditioner = ClothPreconditioner::BlockJacobi;
    else if (s == "multigrid")
      o.preconditioner = ClothPreconditioner::Multigrid;
    else
      r.fail(p + "/preconditioner", "unknown preconditioner \"" + s + "\" (jacobi, multigrid)");
  }
  if (j.contains("implicit_bend"))
    o.implicit_bend = r.boolean(j["implicit_bend"], p + "/implicit_bend");
  if (j.contains("slack_stiffness")) {
    o.slack_stiffness = r.at_least(j["slack_stiffness"], p + "/slack_stiffness", 0, false);
    if (o.slack_stiffness > 1)
      r.fail(p + "/slack_stiffness", "must be at most 1 (a fraction of each spring's stiffness)");
  }
  if (j.contains("strain_limit"))
    o.strain_limit = r.at_least(j["strain_limit"], p + "/strain_limit", 0, false);
  if (j.contains("strain_limit_passes"))
    o.strain_limit_passes = r.whole(j["strain_limit_passes"], p + "/strain_limit_passes", 1, 10000);
  if (j.contains("strain_limit_relaxation")) {
    o.strain_limit_relaxation =
        r.at_least(j["strain_limit_relaxation"], p + "/strain_limit_relaxation", 0, true);
    if (!(o.strain_limit_relaxation < 2))
      r.fail(p + "/strain_limit_relaxation", "must be < 2 (over-relaxation past 2 diverges)");
  }
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

/// The scene's soft bodies (named apart from the cloths: they share the outputs' names) and hair.
void read_bodies(const SceneReader& r, const json& j, const Vec3& gravity,
                 const std::vector<Collider>& colliders, std::set<std::string>& names,
                 SimScene& scene) {
  const SimSceneCharacter* character = scene.character ? &*scene.character : nullptr;
  if (j.contains("soft_bodies"))
    for (size_t i = 0; i < j["soft_bodies"].size(); ++i) {
      const std::string p = "/soft_bodies/" + std::to_string(i);
      scene.soft_bodies.push_back(
          read_soft_body(r, j["soft_bodies"][i], p, gravity, colliders, character, i));
      if (!names.insert(scene.soft_bodies.back().name).second)
        r.fail(p + "/name",
               "a cloth or soft body is already named \"" + scene.soft_bodies.back().name + "\"");
    }
  if (j.contains("hair"))
    scene.hair = read_hair(r, j["hair"], "/hair", gravity, colliders, character);
}

}  // namespace

SimScene parse_sim_scene(const std::string& json_text, const std::string& file,
                         const std::string& character_file) {
  const SceneReader r{file};
  json j = r.parse(json_text);
  r.only(
      j, "",
      {"duration", "fps", "rate", "gravity", "wind", "colliders", "cloth", "character", "particles",
       "soft_bodies", "hair", "rigid_bodies", "joints", "rigid_solver", "liquid", "smoke"});
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
  if (j.contains("soft_bodies") && !j["soft_bodies"].is_array())
    r.fail("/soft_bodies", "must be an array");
  if (j.contains("liquid"))
    scene.liquid = read_liquid(r, j["liquid"], "/liquid", gravity, colliders);
  if (j.contains("smoke")) scene.smoke = read_smoke(r, j["smoke"], "/smoke", colliders);
  if ((!j.contains("cloth") || j["cloth"].empty()) && !scene.particles &&
      (!j.contains("soft_bodies") || j["soft_bodies"].empty()) && !j.contains("hair") &&
      !j.contains("rigid_bodies") && !scene.liquid && !scene.smoke)
    r.fail("/cloth",
           "a scene needs a non-empty array \"cloth\", \"soft_bodies\" or \"rigid_bodies\", "
           "\"hair\", \"particles\", \"liquid\" or \"smoke\"");
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
  read_bodies(r, j, gravity, colliders, names, scene);
  read_rigid(r, j, folder, gravity, colliders, scene);
  return scene;
}

}  // namespace kinema::pipeline
