// Soft bodies and hair in `kinema sim` scenes: their JSON read into the scene, every error at its
// JSON pointer (sim_bodies.h, docs/physics.md).
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "kinema/skeleton/skeleton.h"
#include "sim_bodies.h"

namespace kinema::pipeline {

namespace {

using nlohmann::json;

/// The joint a scene names at pointer `p`, which needs the character.
int read_joint(const SceneReader& r, const json& v, const std::string& p,
               const SimSceneCharacter* character, std::string& name) {
  name = r.text(v, p);
  if (!character) r.fail(p, "needs a \"character\" whose joint it follows");
  const int joint = character->asset->skeleton.find(name);
  if (joint < 0) r.fail(p, character->file + " has no joint \"" + name + "\"");
  return joint;
}

TetMesh read_box(const SceneReader& r, const json& j, const std::string& p) {
  r.only(j, p, {"size", "cells", "corner"});
  if (!j.contains("size")) r.fail(p, "a box needs a \"size\"");
  const Vec3 size = r.vec3(j["size"], p + "/size");
  if (!(size.x > 0 && size.y > 0 && size.z > 0)) r.fail(p + "/size", "must be positive");
  std::array<int, 3> cells{4, 4, 4};
  if (j.contains("cells")) {
    if (!j["cells"].is_array() || j["cells"].size() != 3)
      r.fail(p + "/cells", "must be an array of 3 whole numbers");
    for (size_t k = 0; k < 3; ++k)
      cells[k] = r.whole(j["cells"][k], p + "/cells/" + std::to_string(k), 1, 100);
  }
  if (double(cells[0] + 1) * (cells[1] + 1) * (cells[2] + 1) > 200'000)
    r.fail(p + "/cells", "more than 200,000 vertices");
  const Vec3 corner = j.contains("corner") ? r.vec3(j["corner"], p + "/corner") : Vec3{0, 0, 0};
  return make_box_tets(cells[0], cells[1], cells[2], size, corner);
}

TetMesh read_inline_tets(const SceneReader& r, const json& j, const std::string& p) {
  r.only(j, p, {"positions", "tets"});
  if (!j.contains("positions") || !j["positions"].is_array())
    r.fail(p + "/positions", "must be an array of [x, y, z]");
  if (!j.contains("tets") || !j["tets"].is_array())
    r.fail(p + "/tets", "must be an array of [a, b, c, d]");
  TetMesh mesh;
  for (size_t i = 0; i < j["positions"].size(); ++i)
    mesh.positions.push_back(r.vec3(j["positions"][i], p + "/positions/" + std::to_string(i)));
  for (size_t t = 0; t < j["tets"].size(); ++t) {
    const std::string q = p + "/tets/" + std::to_string(t);
    const json& tet = j["tets"][t];
    if (!tet.is_array() || tet.size() != 4) r.fail(q, "must be an array of 4 vertex indices");
    std::array<std::uint32_t, 4> ids{};
    for (size_t k = 0; k < 4; ++k)
      ids[k] = std::uint32_t(
          r.whole(tet[k], q + "/" + std::to_string(k), 0, std::numeric_limits<int>::max()));
    mesh.tets.push_back(ids);
  }
  return mesh;
}

/// `pinned` (indices) and `pin_region` ({"min", "max"}: every vertex inside) of a soft body.
std::vector<std::uint32_t> read_pins(const SceneReader& r, const json& j, const std::string& p,
                                     const TetMesh& mesh) {
  std::set<std::uint32_t> pins;
  if (j.contains("pinned")) {
    const json& list = j["pinned"];
    if (!list.is_array()) r.fail(p + "/pinned", "must be an array of vertex indices");
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string q = p + "/pinned/" + std::to_string(i);
      const int v = r.whole(list[i], q, 0, int(mesh.positions.size()) - 1);
      if (!pins.insert(std::uint32_t(v)).second)
        r.fail(q, "vertex " + std::to_string(v) + " is pinned twice");
    }
  }
  if (j.contains("pin_region")) {
    const std::string q = p + "/pin_region";
    const json& region = j["pin_region"];
    r.only(region, q, {"min", "max"});
    if (!region.contains("min") || !region.contains("max"))
      r.fail(q, "a region needs \"min\" and \"max\"");
    const Vec3 low = r.vec3(region["min"], q + "/min"), high = r.vec3(region["max"], q + "/max");
    if (!(low.x <= high.x && low.y <= high.y && low.z <= high.z))
      r.fail(q, "\"min\" must not exceed \"max\"");
    size_t inside = 0;
    for (size_t v = 0; v < mesh.positions.size(); ++v) {
      const Vec3& x = mesh.positions[v];
      if (x.x >= low.x && x.x <= high.x && x.y >= low.y && x.y <= high.y && x.z >= low.z &&
          x.z <= high.z)
        pins.insert(std::uint32_t(v)), ++inside;
    }
    if (inside == 0) r.fail(q, "holds no vertex");
  }
  return {pins.begin(), pins.end()};
}

}  // namespace

SimSceneSoftBody read_soft_body(const SceneReader& r, const json& j, const std::string& p,
                                const Vec3& gravity, const std::vector<Collider>& colliders,
                                const SimSceneCharacter* character, size_t index) {
  if (j.is_object() && j.contains("mesh"))
    r.fail(p + "/mesh",
           "a triangle mesh cannot be filled with tetrahedra (kinema has no tetrahedralizer): "
           "give a \"box\" or inline \"tets\"");
  r.only(j, p,
         {"name", "box", "tets", "density", "mass", "edge_compliance", "volume_compliance",
          "volume_constraints", "air_drag", "substeps", "pinned", "pin_region", "attach_joint"});
  SimSceneSoftBody b;
  b.name = j.contains("name") ? r.text(j["name"], p + "/name") : "soft" + std::to_string(index);
  if (b.name.empty() || b.name.find_first_of("/\\:") != std::string::npos)
    r.fail(p + "/name", "must be a plain, non-empty name (it goes into file names)");
  if (j.contains("box") == j.contains("tets")) r.fail(p, "give either \"box\" or \"tets\"");
  b.mesh = j.contains("box") ? read_box(r, j["box"], p + "/box")
                             : read_inline_tets(r, j["tets"], p + "/tets");
  const std::string mesh_pointer = p + (j.contains("box") ? "/box" : "/tets");
  try {
    validate_tet_mesh(b.mesh, mesh_pointer);
  } catch (const Error& e) {
    r.fail(e.place(), e.reason());
  }
  SoftBodyOptions& o = b.options;
  o.gravity = gravity;
  o.colliders = colliders;
  auto non_negative = [&](const char* key, double& out) {
    if (j.contains(key)) out = r.at_least(j[key], p + "/" + key, 0, false);
  };
  non_negative("edge_compliance", o.edge_compliance);
  non_negative("volume_compliance", o.volume_compliance);
  non_negative("air_drag", o.air_drag);
  if (j.contains("density") && j.contains("mass"))
    r.fail(p, "give \"density\" or \"mass\", not both");
  if (j.contains("density")) o.density = r.at_least(j["density"], p + "/density", 0, true);
  if (j.contains("mass")) {
    double volume = 0;
    for (const auto& t : b.mesh.tets)
      volume += tet_volume(b.mesh.positions[t[0]], b.mesh.positions[t[1]], b.mesh.positions[t[2]],
                           b.mesh.positions[t[3]]);
    o.density = r.at_least(j["mass"], p + "/mass", 0, true) / volume;
    if (!(o.density > 0) || !std::isfinite(o.density))
      r.fail(p + "/mass", "gives no finite, positive density");
  }
  if (j.contains("volume_constraints"))
    o.volume_constraints = r.boolean(j["volume_constraints"], p + "/volume_constraints");
  if (j.contains("substeps")) o.substeps = r.whole(j["substeps"], p + "/substeps", 1, 1000);
  o.pinned = read_pins(r, j, p, b.mesh);
  if (j.contains("attach_joint")) {
    b.attach_joint =
        read_joint(r, j["attach_joint"], p + "/attach_joint", character, b.attach_joint_name);
    if (o.pinned.empty())
      r.fail(p + "/attach_joint", "goes with \"pinned\" or \"pin_region\" (what follows it)");
  }
  try {
    SoftBody check(b.mesh, o);  // every remaining check of the options, before anything runs
  } catch (const Error& e) {
    r.fail(p, e.reason());
  }
  return b;
}

namespace {

/// Roots and directions from the skin of `joint`: every skinned vertex whose largest weight is
/// that joint's (≥ 0.5), at the rest pose, along its normal; at most `most`, evenly spaced in
/// vertex order.
void roots_from_skin(const SceneReader& r, const std::string& p, const SimSceneCharacter& c,
                     int joint, int most, std::vector<Vec3>& roots, std::vector<Vec3>& directions) {
  const Asset& a = *c.asset;
  const std::vector<Mat4> rest = rest_model_matrices(a.skeleton);
  std::vector<Vec3> all_roots, all_directions;
  for (const Mesh& mesh : a.meshes) {
    if (mesh.skin < 0 || mesh.influences == 0 || mesh.normals.size() != mesh.positions.size())
      continue;
    const Skin& skin = a.skins[size_t(mesh.skin)];
    for (size_t v = 0; v < mesh.positions.size(); ++v) {
      Vec3 x{0, 0, 0}, n{0, 0, 0};
      int best = -1;
      double best_weight = 0;
      for (int k = 0; k < mesh.influences; ++k) {
        const size_t at = v * size_t(mesh.influences) + size_t(k);
        const double w = mesh.weights[at];
        if (w == 0) continue;
        const int jk = skin.joints[mesh.joints[at]];
        const Mat4 m = rest[size_t(jk)] * skin.inverse_bind[mesh.joints[at]];
        x += m.transform_point(Vec3(mesh.positions[v])) * w;
        n += m.transform_vector(Vec3(mesh.normals[v])) * w;
        if (w > best_weight) best = jk, best_weight = w;
      }
      if (best != joint || best_weight < 0.5 || !(length(n) > 0)) continue;
      all_roots.push_back(x);
      all_directions.push_back(normalize(n));
    }
  }
  if (all_roots.empty())
    r.fail(p + "/joint", c.file + " has no skinned vertex with normals on joint \"" +
                             a.skeleton.joint(joint).name + "\"");
  const size_t stride = (all_roots.size() + size_t(most) - 1) / size_t(most);
  for (size_t v = 0; v < all_roots.size(); v += stride) {
    roots.push_back(all_roots[v]);
    directions.push_back(all_directions[v]);
  }
}

/// Explicit `roots` with one `direction` for all or `directions` one each.
void explicit_roots(const SceneReader& r, const json& j, const std::string& p,
                    std::vector<Vec3>& roots, std::vector<Vec3>& directions) {
  const json& list = j["roots"];
  if (!list.is_array() || list.empty())
    r.fail(p + "/roots", "must be a non-empty array of [x, y, z]");
  if (list.size() > 100'000) r.fail(p + "/roots", "more than 100,000 guides");
  for (size_t i = 0; i < list.size(); ++i)
    roots.push_back(r.vec3(list[i], p + "/roots/" + std::to_string(i)));
  if (j.contains("directions") && j.contains("direction"))
    r.fail(p, "give \"direction\" or \"directions\", not both");
  if (j.contains("directions")) {
    const json& d = j["directions"];
    if (!d.is_array() || d.size() != list.size())
      r.fail(p + "/directions", "must be an array of [x, y, z], one per root");
    for (size_t i = 0; i < d.size(); ++i)
      directions.push_back(r.vec3(d[i], p + "/directions/" + std::to_string(i)));
  } else {
    const Vec3 d =
        j.contains("direction") ? r.vec3(j["direction"], p + "/direction") : Vec3{0, -1, 0};
    directions.assign(roots.size(), d);
  }
  for (size_t i = 0; i < directions.size(); ++i) {
    if (!(length(directions[i]) > 0))
      r.fail(p + (j.contains("directions") ? "/directions/" + std::to_string(i) : "/direction"),
             "must not be zero");
    directions[i] = normalize(directions[i]);
  }
}

/// `count` child roots around each guide's root, in the plane across its root direction: on a
/// sunflower spiral of radius `spread` (deterministic, evenly spread).
std::vector<Vec3> child_roots(const std::vector<Vec3>& roots, const std::vector<Vec3>& directions,
                              int count, double spread) {
  std::vector<Vec3> out;
  const double golden = 2.39996322972865332;  // π(3 − √5)
  for (size_t g = 0; g < roots.size(); ++g) {
    const Vec3 d = directions[g];
    const Vec3 helper = std::abs(d.y) < 0.9 ? Vec3{0, 1, 0} : Vec3{1, 0, 0};
    const Vec3 u = normalize(cross(d, helper)), v = cross(d, u);
    for (int k = 0; k < count; ++k) {
      const double radius = spread * std::sqrt((k + 0.5) / count), angle = golden * k;
      out.push_back(roots[g] + u * (radius * std::cos(angle)) + v * (radius * std::sin(angle)));
    }
  }
  return out;
}

void read_hair_options(const SceneReader& r, const json& j, const std::string& p, HairOptions& o) {
  auto unit = [&](const char* key, double& out) {
    if (!j.contains(key)) return;
    out = r.at_least(j[key], p + "/" + key, 0, false);
    if (out > 1) r.fail(p + "/" + key, "must be between 0 and 1");
  };
  unit("bend_stiffness", o.bend_stiffness);
  unit("twist_stiffness", o.twist_stiffness);
  if (j.contains("mass_per_length"))
    o.mass_per_length = r.at_least(j["mass_per_length"], p + "/mass_per_length", 0, true);
  if (j.contains("air_drag")) o.air_drag = r.at_least(j["air_drag"], p + "/air_drag", 0, false);
  if (j.contains("thickness")) o.thickness = r.at_least(j["thickness"], p + "/thickness", 0, false);
  if (j.contains("substeps")) o.substeps = r.whole(j["substeps"], p + "/substeps", 1, 1000);
  if (j.contains("iterations")) o.iterations = r.whole(j["iterations"], p + "/iterations", 1, 100);
}

}  // namespace

SimSceneHair read_hair(const SceneReader& r, const json& j, const std::string& p,
                       const Vec3& gravity, const std::vector<Collider>& colliders,
                       const SimSceneCharacter* character) {
  r.only(j, p,
         {"joint", "roots", "direction", "directions", "from_skin", "max_guides", "length",
          "segments", "mass_per_length", "bend_stiffness", "twist_stiffness", "air_drag",
          "substeps", "iterations", "thickness", "children", "child_spread", "child_points"});
  SimSceneHair h;
  if (j.contains("joint"))
    h.joint = read_joint(r, j["joint"], p + "/joint", character, h.joint_name);
  const bool from_skin = j.contains("from_skin") && r.boolean(j["from_skin"], p + "/from_skin");
  if (from_skin == j.contains("roots"))
    r.fail(p, "give either \"roots\" or \"from_skin\": true (with a \"joint\")");
  std::vector<Vec3> roots, directions;
  if (from_skin) {
    if (h.joint < 0) r.fail(p + "/from_skin", "needs the \"joint\" whose skin grows the hair");
    if (j.contains("direction") || j.contains("directions"))
      r.fail(p + (j.contains("direction") ? "/direction" : "/directions"),
             "hair from the skin grows along its normals");
    const int most =
        j.contains("max_guides") ? r.whole(j["max_guides"], p + "/max_guides", 1, 100'000) : 64;
    roots_from_skin(r, p, *character, h.joint, most, roots, directions);
  } else {
    if (j.contains("max_guides")) r.fail(p + "/max_guides", "goes with \"from_skin\"");
    explicit_roots(r, j, p, roots, directions);
  }
  const double length =
      j.contains("length") ? r.at_least(j["length"], p + "/length", 0, true) : 0.2;
  const int segments = j.contains("segments") ? r.whole(j["segments"], p + "/segments", 1, 256) : 8;
  for (size_t g = 0; g < roots.size(); ++g) {
    std::vector<Vec3> strand;
    for (int i = 0; i <= segments; ++i)
      strand.push_back(roots[g] + directions[g] * (length * i / segments));
    h.guides.push_back(std::move(strand));
  }
  h.options.gravity = gravity;
  h.options.colliders = colliders;
  read_hair_options(r, j, p, h.options);
  const int children =
      j.contains("children") ? r.whole(j["children"], p + "/children", 0, 1000) : 0;
  const double spread = j.contains("child_spread")
                            ? r.at_least(j["child_spread"], p + "/child_spread", 0, false)
                            : 0.01;
  h.child_points = j.contains("child_points")
                       ? r.whole(j["child_points"], p + "/child_points", 2, 256)
                       : segments + 1;
  if (double(roots.size()) * (1 + children) * std::max(h.child_points, segments + 1) > 10e6)
    r.fail(p + "/children", "more than 10 million points");
  h.child_roots = child_roots(roots, directions, children, spread);
  try {
    HairSystem check(h.guides, h.options);  // every remaining check, before anything runs
  } catch (const Error& e) {
    r.fail(p, e.reason());
  }
  return h;
}

}  // namespace kinema::pipeline
