// Rigid bodies and joints in `kinema sim` scenes (src/pipeline/sim_rigid.h): read from the
// scene, stepped on its clock, written as a glTF whose nodes are keyed at every frame.
#include "sim_rigid.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <numbers>
#include <set>

#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/io/gltf.h"
#include "kinema/physics/fracture.h"

namespace kinema::pipeline {

namespace {

using nlohmann::json;

constexpr double kDegree = std::numbers::pi / 180;

// The rotation taking +y to unit `d` (capsules and cylinders run along their local y).
Quat y_to(const Vec3& d) { return from_to(Vec3{0, 1, 0}, d); }

RigidShape read_shape(const SceneReader& r, const json& j, const std::string& p,
                      const std::string& folder) {
  if (!j.contains("shape")) r.fail(p, "a rigid body needs a \"shape\"");
  const std::string kind = r.text(j["shape"], p + "/shape");
  auto need = [&](const char* key) -> const json& {
    if (!j.contains(key)) r.fail(p, "a " + kind + " needs \"" + key + "\"");
    return j[key];
  };
  auto positive = [&](const char* key) { return r.at_least(need(key), p + "/" + key, 0, true); };
  auto mesh_points = [&](ClothMesh& mesh) {
    std::filesystem::path path(r.text(need("mesh"), p + "/mesh"));
    if (path.is_relative()) path = std::filesystem::path(folder) / path;
    const std::string name =
        j.contains("mesh_name") ? r.text(j["mesh_name"], p + "/mesh_name") : "";
    mesh = read_mesh_file(r, path.string(), name, p + "/mesh");
  };
  try {
    if (kind == "box") return box_shape(r.vec3(need("half_extents"), p + "/half_extents"));
    if (kind == "sphere") return sphere_shape(positive("radius"));
    if (kind == "capsule")
      return capsule_shape(positive("radius"),
                           r.at_least(need("half_height"), p + "/half_height", 0, false));
    if (kind == "cylinder") return cylinder_shape(positive("radius"), positive("half_height"));
    if (kind == "convex_hull") {
      std::vector<Vec3> points;
      if (j.contains("points")) {
        const json& list = j["points"];
        if (!list.is_array()) r.fail(p + "/points", "must be an array of points");
        for (size_t i = 0; i < list.size(); ++i)
          points.push_back(r.vec3(list[i], p + "/points/" + std::to_string(i)));
      } else {
        ClothMesh mesh;
        mesh_points(mesh);
        points = mesh.positions;
      }
      return convex_hull_shape(points);
    }
    if (kind == "mesh") {
      ClothMesh mesh;
      mesh_points(mesh);
      std::vector<Triangle> triangles(mesh.triangles.begin(), mesh.triangles.end());
      return triangle_mesh_shape(mesh.positions, std::move(triangles));
    }
  } catch (const Error& e) {
    if (e.file() == r.file) throw;
    r.fail(p, e.reason());
  }
  r.fail(p + "/shape", "unknown rigid shape \"" + kind +
                           "\" (box, sphere, capsule, cylinder, convex_hull, mesh)");
}

SimSceneRigidBody read_body(const SceneReader& r, const json& j, const std::string& p,
                            const std::string& folder, size_t index) {
  r.only(j, p,
         {"name", "shape", "half_extents", "radius", "half_height", "points", "mesh", "mesh_name",
          "position", "rotation", "velocity", "angular_velocity", "static", "mass", "density",
          "friction", "restitution", "array", "fracture"});
  SimSceneRigidBody b;
  b.name = j.contains("name") ? r.text(j["name"], p + "/name") : "body_" + std::to_string(index);
  b.shape = read_shape(r, j, p, folder);
  if (j.contains("position")) b.position = r.vec3(j["position"], p + "/position");
  if (j.contains("rotation")) {
    const json& q = j["rotation"];
    if (!q.is_array() || q.size() != 4)
      r.fail(p + "/rotation", "must be a quaternion [x, y, z, w]");
    b.rotation = {r.number(q[0], p + "/rotation/0"), r.number(q[1], p + "/rotation/1"),
                  r.number(q[2], p + "/rotation/2"), r.number(q[3], p + "/rotation/3")};
    if (!(length(b.rotation) > 0)) r.fail(p + "/rotation", "must not be zero");
    b.rotation = normalize(b.rotation);
  }
  if (j.contains("velocity")) b.velocity = r.vec3(j["velocity"], p + "/velocity");
  if (j.contains("angular_velocity"))
    b.angular_velocity = r.vec3(j["angular_velocity"], p + "/angular_velocity");
  if (j.contains("static")) b.is_static = r.boolean(j["static"], p + "/static");
  if (j.contains("friction"))
    b.material.friction = r.at_least(j["friction"], p + "/friction", 0, false);
  if (j.contains("restitution")) {
    b.material.restitution = r.at_least(j["restitution"], p + "/restitution", 0, false);
    if (b.material.restitution > 1) r.fail(p + "/restitution", "must be within [0, 1]");
  }
  if (b.is_static) {
    if (j.contains("mass") || j.contains("density"))
      r.fail(p + (j.contains("mass") ? "/mass" : "/density"), "a static body has no mass");
    return b;
  }
  if (b.shape.kind == ShapeKind::TriangleMesh)
    r.fail(p + "/shape",
           "a triangle mesh can only be static (\"static\": true); a moving body needs a convex "
           "shape: use \"convex_hull\" with the same mesh");
  const double density =
      j.contains("density") ? r.at_least(j["density"], p + "/density", 0, true) : 1000;
  try {
    b.mass = mass_properties(b.shape, density, p);
  } catch (const Error& e) {
    r.fail(p + "/shape", e.reason());
  }
  if (j.contains("mass"))
    b.mass = scaled_to_mass(b.mass, r.at_least(j["mass"], p + "/mass", 0, true));
  return b;
}

// A scene collider as a static body (not drawn): a plane becomes a 1 km box below it.
SimSceneRigidBody collider_body(const Collider& c, size_t index) {
  SimSceneRigidBody b;
  b.name = "collider_" + std::to_string(index);
  b.is_static = true;
  b.drawn = false;
  b.material = {c.friction, std::min(c.restitution, 1.0)};
  switch (c.shape) {
    case ColliderShape::Plane: {
      const double half = 500;
      b.shape = box_shape({half, half, half});
      b.rotation = y_to(c.normal);
      b.position = c.a - normalize(c.normal) * half;
      break;
    }
    case ColliderShape::Sphere:
      b.shape = sphere_shape(c.radius);
      b.position = c.a;
      break;
    case ColliderShape::Capsule:
      b.shape = capsule_shape(c.radius, 0.5 * length(c.b - c.a));
      b.position = (c.a + c.b) * 0.5;
      b.rotation = y_to(c.b - c.a);
      break;
    case ColliderShape::Box:
      b.shape = box_shape(c.half_extents);
      b.position = c.a;
      b.rotation = c.rotation;
      break;
  }
  return b;
}

int body_index(const SceneReader& r, const json& v, const std::string& p,
               const std::vector<SimSceneRigidBody>& bodies) {
  const std::string name = r.text(v, p);
  for (size_t i = 0; i < bodies.size(); ++i)
    if (bodies[i].name == name) return int(i);
  r.fail(p, "no rigid body is named \"" + name + "\"");
}

SimSceneJoint read_joint(const SceneReader& r, const json& j, const std::string& p,
                         SimScene& scene) {
  r.only(
      j, p,
      {"type", "a", "b", "anchor", "anchor_b", "axis", "limits_degrees", "motor", "swing_degrees",
       "twist_degrees", "min_distance", "max_distance", "break_impulse", "collide_connected"});
  SimSceneJoint out;
  JointDesc& d = out.desc;
  const std::string type = j.contains("type") ? r.text(j["type"], p + "/type") : "ball";
  if (type == "ball")
    d.kind = JointKind::Ball;
  else if (type == "hinge")
    d.kind = JointKind::Hinge;
  else if (type == "cone_twist")
    d.kind = JointKind::ConeTwist;
  else if (type == "distance")
    d.kind = JointKind::Distance;
  else if (type == "fixed")
    d.kind = JointKind::Fixed;
  else
    r.fail(p + "/type",
           "unknown joint \"" + type + "\" (ball, hinge, cone_twist, distance, fixed)");
  if (!j.contains("b")) r.fail(p, "a joint needs \"b\", the body it holds");
  if (!j.contains("anchor")) r.fail(p, "a joint needs an \"anchor\" (world, m)");
  d.anchor = r.vec3(j["anchor"], p + "/anchor");
  d.anchor_b = j.contains("anchor_b") ? r.vec3(j["anchor_b"], p + "/anchor_b") : d.anchor;
  d.b = std::uint32_t(body_index(r, j["b"], p + "/b", scene.rigid_bodies));
  if (j.contains("a") && !(j["a"].is_string() && j["a"].get<std::string>() == "world")) {
    d.a = std::uint32_t(body_index(r, j["a"], p + "/a", scene.rigid_bodies));
  } else {  // held by the world: a small static body at the anchor, not drawn
    SimSceneRigidBody world;
    world.name = "world_anchor_" + std::to_string(scene.joints.size());
    world.shape = sphere_shape(1e-3);
    world.is_static = true;
    world.drawn = false;
    world.position = d.anchor;
    scene.rigid_bodies.push_back(world);
    d.a = std::uint32_t(scene.rigid_bodies.size() - 1);
  }
  if (j.contains("axis")) d.axis = r.vec3(j["axis"], p + "/axis");
  if (j.contains("limits_degrees")) {
    const json& l = j["limits_degrees"];
    if (!l.is_array() || l.size() != 2) r.fail(p + "/limits_degrees", "must be [lower, upper]");
    d.limit = true;
    d.lower = r.number(l[0], p + "/limits_degrees/0") * kDegree;
    d.upper = r.number(l[1], p + "/limits_degrees/1") * kDegree;
  }
  if (j.contains("motor")) {
    const json& m = j["motor"];
    r.only(m, p + "/motor", {"speed_degrees", "max_torque"});
    d.motor = true;
    if (m.contains("speed_degrees"))
      d.motor_speed = r.number(m["speed_degrees"], p + "/motor/speed_degrees") * kDegree;
    if (!m.contains("max_torque")) r.fail(p + "/motor", "a motor needs \"max_torque\" (N·m)");
    d.max_motor_torque = r.at_least(m["max_torque"], p + "/motor/max_torque", 0, false);
  }
  if (j.contains("swing_degrees"))
    d.swing_limit = r.at_least(j["swing_degrees"], p + "/swing_degrees", 0, true) * kDegree;
  if (j.contains("twist_degrees")) {
    const json& l = j["twist_degrees"];
    if (!l.is_array() || l.size() != 2) r.fail(p + "/twist_degrees", "must be [lower, upper]");
    d.twist_lower = r.number(l[0], p + "/twist_degrees/0") * kDegree;
    d.twist_upper = r.number(l[1], p + "/twist_degrees/1") * kDegree;
  }
  if (j.contains("min_distance"))
    d.min_distance = r.at_least(j["min_distance"], p + "/min_distance", 0, false);
  if (j.contains("max_distance"))
    d.max_distance = r.at_least(j["max_distance"], p + "/max_distance", 0, false);
  if (j.contains("break_impulse"))
    d.break_impulse = r.at_least(j["break_impulse"], p + "/break_impulse", 0, true);
  if (j.contains("collide_connected"))
    d.collide_connected = r.boolean(j["collide_connected"], p + "/collide_connected");
  return out;
}

// The scene body as a world body: placed, moving, static or with its mass.
RigidBody scene_body(const SimSceneRigidBody& b) {
  RigidBody body = b.is_static ? make_static_body(b.position, b.rotation)
                               : make_dynamic_body(b.mass, b.position, b.rotation, b.name);
  body.linear_velocity = b.velocity;
  body.angular_velocity = b.angular_velocity;
  return body;
}

void fill_world(RigidWorld& world, const SimScene& scene) {
  for (const SimSceneRigidBody& b : scene.rigid_bodies)
    world.add_body(scene_body(b), b.shape, b.material, b.name);
  for (const SimSceneJoint& j : scene.joints) world.add_joint(j.desc);
}

}  // namespace

void read_rigid(const SceneReader& r, const json& j, const std::string& folder, const Vec3& gravity,
                const std::vector<Collider>& colliders, SimScene& scene) {
  if (!j.contains("rigid_bodies")) {
    if (j.contains("joints")) r.fail("/joints", "joints need \"rigid_bodies\" to join");
    if (j.contains("rigid_solver"))
      r.fail("/rigid_solver", "there are no \"rigid_bodies\" to solve");
    return;
  }
  const json& list = j["rigid_bodies"];
  if (!list.is_array() || list.empty()) r.fail("/rigid_bodies", "must be a non-empty array");
  std::set<std::string> names;
  std::vector<SimSceneJoint> glue;  // between the pieces of fractured bodies
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string p = "/rigid_bodies/" + std::to_string(i);
    const SimSceneRigidBody body = read_body(r, list[i], p, folder, i);
    if (list[i].contains("fracture")) {
      // Pre-fractured: Voronoi pieces around the impact point, glued by breakable welds.
      const json& f = list[i]["fracture"];
      const std::string q = p + "/fracture";
      r.only(f, q, {"pieces", "impact", "spread", "strength", "seed", "debris"});
      std::optional<SimDebris> debris;
      if (f.contains("debris")) {
        const json& d = f["debris"];
        const std::string dq = q + "/debris";
        if (d.is_boolean()) {
          if (d.get<bool>()) debris = SimDebris{};
        } else {
          r.only(d, dq, {"count", "speed", "lifetime"});
          debris = SimDebris{};
          if (d.contains("count")) debris->count = r.whole(d["count"], dq + "/count", 1, 10000);
          if (d.contains("speed")) debris->speed = r.at_least(d["speed"], dq + "/speed", 0, false);
          if (d.contains("lifetime"))
            debris->lifetime = r.at_least(d["lifetime"], dq + "/lifetime", 0, true);
        }
      }
      if (body.is_static) r.fail(q, "a static body cannot break");
      if (list[i].contains("array")) r.fail(q, "a fractured body cannot also be an array");
      const int count = f.contains("pieces") ? r.whole(f["pieces"], q + "/pieces", 1, 1000) : 12;
      const Vec3 impact = f.contains("impact") ? r.vec3(f["impact"], q + "/impact") : Vec3{0, 0, 0};
      Vec3 lo, hi;
      shape_bounds(body.shape, lo, hi);
      const double spread = f.contains("spread") ? r.at_least(f["spread"], q + "/spread", 0, true)
                                                 : 0.25 * length(hi - lo);
      const double strength = f.contains("strength")
                                  ? r.at_least(f["strength"], q + "/strength", 0, true)
                                  : std::numeric_limits<double>::infinity();
      const std::uint32_t seed =
          f.contains("seed") ? std::uint32_t(r.whole(f["seed"], q + "/seed", 0, 1 << 30)) : 1;
      std::vector<FracturePiece> pieces;
      try {
        pieces =
            voronoi_fracture(body.shape, fracture_sites(body.shape, impact, count, spread, seed));
      } catch (const Error& e) {
        r.fail(q, e.reason());
      }
      const size_t first = scene.rigid_bodies.size();
      for (size_t k = 0; k < pieces.size(); ++k) {
        SimSceneRigidBody piece = body;
        piece.name = body.name + "_" + std::to_string(k);
        piece.shape = pieces[k].hull;
        // The body's mass shared by volume (its density, whichever way it was given).
        piece.mass =
            scaled_to_mass(mass_properties(piece.shape, 1, piece.name),
                           body.mass.mass * shape_volume(piece.shape) / shape_volume(body.shape));
        if (!names.insert(piece.name).second)
          r.fail(p + "/name", "another rigid body is already named \"" + piece.name + "\"");
        scene.rigid_bodies.push_back(std::move(piece));
      }
      for (const JointDesc& weld :
           fracture_welds(pieces, BodyId(first), body.position, body.rotation, strength))
        glue.push_back({weld, debris});
      continue;
    }
    // "array": copies of the body on a grid, named <name>_0, <name>_1, … x fastest.
    int count[3] = {1, 1, 1};
    Vec3 step{0, 0, 0};
    const bool array = list[i].contains("array");
    if (array) {
      const json& a = list[i]["array"];
      r.only(a, p + "/array", {"count", "step"});
      if (!a.contains("count") || !a["count"].is_array() || a["count"].size() != 3)
        r.fail(p + "/array/count", "must be [nx, ny, nz]");
      for (int k = 0; k < 3; ++k)
        count[k] = r.whole(a["count"][size_t(k)], p + "/array/count/" + std::to_string(k), 1, 1000);
      if (!a.contains("step")) r.fail(p + "/array", "needs \"step\" [dx, dy, dz] (m)");
      step = r.vec3(a["step"], p + "/array/step");
      if (double(count[0]) * count[1] * count[2] + double(scene.rigid_bodies.size()) > 100000)
        r.fail(p + "/array/count", "more than 100,000 rigid bodies");
    }
    int n = 0;
    for (int z = 0; z < count[2]; ++z)
      for (int y = 0; y < count[1]; ++y)
        for (int x = 0; x < count[0]; ++x, ++n) {
          SimSceneRigidBody copy = body;
          if (array) copy.name += "_" + std::to_string(n);
          copy.position = body.position + Vec3{step.x * x, step.y * y, step.z * z};
          if (!names.insert(copy.name).second)
            r.fail(p + "/name", "another rigid body is already named \"" + copy.name + "\"");
          scene.rigid_bodies.push_back(std::move(copy));
        }
  }
  for (size_t i = 0; i < colliders.size(); ++i)
    scene.rigid_bodies.push_back(collider_body(colliders[i], i));
  // Debris needs particles: a system of its own (gravity, the scene's colliders) when the scene
  // has none.
  const bool debris = std::any_of(glue.begin(), glue.end(),
                                  [](const SimSceneJoint& g) { return g.debris.has_value(); });
  if (debris && !scene.particles) {
    ParticleSystemOptions particles;
    particles.forces.push_back({ForceKind::Gravity, gravity});
    particles.colliders = colliders;
    scene.particles = std::move(particles);
  }
  scene.joints = std::move(glue);
  const size_t glue_count = scene.joints.size();
  if (j.contains("joints")) {
    const json& joints = j["joints"];
    if (!joints.is_array()) r.fail("/joints", "must be an array");
    for (size_t i = 0; i < joints.size(); ++i)
      scene.joints.push_back(read_joint(r, joints[i], "/joints/" + std::to_string(i), scene));
  }
  RigidWorldSettings& s = scene.rigid_solver;
  s.gravity = gravity;
  if (j.contains("rigid_solver")) {
    const json& o = j["rigid_solver"];
    const std::string p = "/rigid_solver";
    r.only(o, p, {"substeps", "iterations", "position_iterations", "sleeping", "continuous"});
    if (o.contains("substeps")) s.substeps = r.whole(o["substeps"], p + "/substeps", 1, 64);
    if (o.contains("iterations"))
      s.velocity_iterations = r.whole(o["iterations"], p + "/iterations", 1, 1000);
    if (o.contains("position_iterations"))
      s.position_iterations =
          r.whole(o["position_iterations"], p + "/position_iterations", 0, 1000);
    if (o.contains("sleeping")) s.sleeping = r.boolean(o["sleeping"], p + "/sleeping");
    if (o.contains("continuous")) s.continuous = r.boolean(o["continuous"], p + "/continuous");
  }
  // Every remaining check (joint limits, axes, bodies a joint cannot join) by building the world
  // once, each error named at its place in the scene.
  RigidWorld check(s);
  for (size_t i = 0; i < scene.rigid_bodies.size(); ++i) {
    const SimSceneRigidBody& b = scene.rigid_bodies[i];
    try {
      check.add_body(scene_body(b), b.shape, b.material, b.name);
    } catch (const Error& e) {
      r.fail("/rigid_bodies", b.name + ": " + e.reason());
    }
  }
  for (size_t i = 0; i < scene.joints.size(); ++i) {
    try {
      check.add_joint(scene.joints[i].desc);
    } catch (const Error& e) {
      r.fail(i < glue_count ? std::string("/rigid_bodies")
                            : "/joints/" + std::to_string(i - glue_count),
             e.reason());
    }
  }
}

Mesh rigid_shape_mesh(const RigidShape& shape, int segments) {
  Mesh m;
  auto vertex = [&](const Vec3& p, const Vec3& n) {
    m.positions.push_back(Vec3f(p));
    m.normals.push_back(Vec3f(normalize(n, Vec3{0, 1, 0})));
    return std::uint32_t(m.positions.size() - 1);
  };
  auto triangle = [&](std::uint32_t a, std::uint32_t b, std::uint32_t c) {
    m.indices.insert(m.indices.end(), {a, b, c});
  };
  auto flat = [&](const Vec3& a, const Vec3& b, const Vec3& c) {
    const Vec3 n = cross(b - a, c - a);
    triangle(vertex(a, n), vertex(b, n), vertex(c, n));
  };
  // A surface of revolution about y: rings from bottom to top, each (radius, y, normal's radial
  // and y parts).
  auto revolve = [&](const std::vector<std::array<double, 4>>& rings) {
    const std::uint32_t first = std::uint32_t(m.positions.size());
    for (const auto& [radius, y, nr, ny] : rings)
      for (int k = 0; k <= segments; ++k) {
        const double a = 2 * std::numbers::pi * k / segments;
        const double c = std::cos(a), s = -std::sin(a);
        vertex({radius * c, y, radius * s}, {nr * c, ny, nr * s});
      }
    const std::uint32_t row = std::uint32_t(segments + 1);
    for (std::uint32_t i = 0; i + 1 < rings.size(); ++i)
      for (std::uint32_t k = 0; k < std::uint32_t(segments); ++k) {
        const std::uint32_t a = first + i * row + k, b = a + 1, c = a + row, d = c + 1;
        triangle(a, b, d);
        triangle(a, d, c);
      }
  };
  const int half_rings = std::max(2, segments / 4);
  switch (shape.kind) {
    case ShapeKind::Box: {
      const Vec3 h = shape.half_extents;
      for (int axis = 0; axis < 3; ++axis)
        for (const double sign : {-1.0, 1.0}) {
          Vec3 n{0, 0, 0}, u{0, 0, 0}, v{0, 0, 0};
          n[axis] = sign;
          u[(axis + 1) % 3] = h[(axis + 1) % 3];
          v[(axis + 2) % 3] = h[(axis + 2) % 3];
          const Vec3 centre = n * h[axis];
          if (sign < 0) std::swap(u, v);  // keep the winding outward
          const std::uint32_t a = vertex(centre - u - v, n), b = vertex(centre + u - v, n),
                              c = vertex(centre + u + v, n), d = vertex(centre - u + v, n);
          triangle(a, b, c);
          triangle(a, c, d);
        }
      break;
    }
    case ShapeKind::Sphere:
    case ShapeKind::Capsule: {
      std::vector<std::array<double, 4>> rings;
      const double r = shape.radius, hh = shape.kind == ShapeKind::Capsule ? shape.half_height : 0;
      for (int i = 0; i <= 2 * half_rings; ++i) {
        const double theta = std::numbers::pi * (double(i) / (2 * half_rings) - 0.5);  // −π/2 … π/2
        const double y = r * std::sin(theta) + (i < half_rings ? -hh : i > half_rings ? hh : 0);
        if (i == half_rings && hh > 0) {  // the equator twice: the cylinder between the caps
          rings.push_back({r, -hh, 1, 0});
          rings.push_back({r, hh, 1, 0});
          continue;
        }
        rings.push_back({r * std::cos(theta), y, std::cos(theta), std::sin(theta)});
      }
      revolve(rings);
      break;
    }
    case ShapeKind::Cylinder: {
      const double r = shape.radius, hh = shape.half_height;
      revolve({{0, -hh, 0, -1}, {r, -hh, 0, -1}});
      revolve({{r, -hh, 1, 0}, {r, hh, 1, 0}});
      revolve({{r, hh, 0, 1}, {0, hh, 0, 1}});
      break;
    }
    case ShapeKind::ConvexHull:
    case ShapeKind::TriangleMesh:
      for (const Triangle& t : shape.triangles)
        flat(shape.points[t[0]], shape.points[t[1]], shape.points[t[2]]);
      break;
    case ShapeKind::HeightField:
      for (int z = 0; z + 1 < shape.rows; ++z)
        for (int x = 0; x + 1 < shape.columns; ++x) {
          auto at = [&](int i, int k) {
            return Vec3{i * shape.spacing_x,
                        shape.heights[size_t(k) * size_t(shape.columns) + size_t(i)],
                        k * shape.spacing_z};
          };
          flat(at(x, z), at(x, z + 1), at(x + 1, z + 1));
          flat(at(x, z), at(x + 1, z + 1), at(x + 1, z));
        }
      break;
  }
  return m;
}

namespace {

RigidWorldSettings with_threads(RigidWorldSettings settings, int threads) {
  settings.threads = threads;
  return settings;
}

}  // namespace

RigidRun::RigidRun(const SimScene& scene, std::string path, int frames, int threads)
    : scene_(scene), world_(with_threads(scene.rigid_solver, threads)) {
  fill_world(world_, scene);
  result_.path = std::move(path);
  result_.bodies = scene.rigid_bodies.size();
  for (const SimSceneRigidBody& b : scene.rigid_bodies)
    result_.dynamic_bodies += b.is_static ? 0 : 1;
  result_.joints = scene.joints.size();
  size_t drawn = 0;
  for (const SimSceneRigidBody& b : scene.rigid_bodies) drawn += b.drawn ? 1 : 0;
  frames_.assign(drawn, {});
  for (auto& f : frames_) f.reserve(size_t(frames));
  for (const SimSceneJoint& j : scene.joints) {
    const RigidBody& a = world_.body(j.desc.a);
    anchor_in_a_.push_back(rotate(conjugate(a.orientation), j.desc.anchor - a.position));
  }
  broken_.assign(scene.joints.size(), 0);
}

void RigidRun::step(double h, bool last_of_frame) {
  if (last_of_frame) {
    before_position_.resize(world_.body_count());
    before_rotation_.resize(world_.body_count());
    for (BodyId id = 0; id < world_.body_count(); ++id) {
      before_position_[id] = world_.body(id).position;
      before_rotation_[id] = world_.body(id).orientation;
    }
  }
  const auto start = std::chrono::steady_clock::now();
  world_.step(h);
  result_.seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ++result_.steps;
  result_.substeps += world_.last_substeps();
  result_.most_contacts = std::max(result_.most_contacts, world_.contacts().size());
  breaks_.clear();
  for (JointId j = 0; j < world_.joint_count(); ++j) {
    if (!world_.joint_broken(j)) {
      result_.worst_joint_error = std::max(result_.worst_joint_error, world_.joint_error(j));
      continue;
    }
    if (broken_[j]) continue;
    broken_[j] = 1;
    const SimSceneJoint& joint = scene_.joints[j];
    if (!joint.debris) continue;
    const RigidBody& a = world_.body(joint.desc.a);
    const RigidBody& b = world_.body(joint.desc.b);
    breaks_.push_back({a.position + rotate(a.orientation, anchor_in_a_[j]),
                       (a.linear_velocity + b.linear_velocity) * 0.5, *joint.debris, j});
    ++result_.debris_bursts;
  }
  for (BodyId id = 0; id < world_.body_count(); ++id)
    if (!is_finite(world_.body(id).position) || !is_finite(world_.body(id).orientation))
      result_.finite = false;
}

void RigidRun::add_colliders(std::vector<Collider>& out) const {
  for (BodyId id = 0; id < world_.body_count(); ++id) {
    const RigidShape& shape = world_.shape(id);
    if (!scene_.rigid_bodies[id].drawn || shape.kind == ShapeKind::TriangleMesh ||
        shape.kind == ShapeKind::HeightField)
      continue;
    const RigidBody& b = world_.body(id);
    const Vec3 origin = shape_origin(b);
    Collider c;
    c.restitution = scene_.rigid_bodies[id].material.restitution;
    c.friction = scene_.rigid_bodies[id].material.friction;
    c.rotation = b.orientation;
    switch (shape.kind) {
      case ShapeKind::Sphere:
        c.shape = ColliderShape::Sphere;
        c.a = origin;
        c.radius = shape.radius;
        break;
      case ShapeKind::Capsule: {
        const Vec3 axis = rotate(b.orientation, Vec3{0, shape.half_height, 0});
        c.shape = ColliderShape::Capsule;
        c.a = origin - axis;
        c.b = origin + axis;
        c.radius = shape.radius;
        break;
      }
      case ShapeKind::Box:
        c.shape = ColliderShape::Box;
        c.a = origin;
        c.half_extents = shape.half_extents;
        break;
      default: {  // hulls, cylinders: the box around them in their own frame
        Vec3 lo, hi;
        shape_bounds(shape, lo, hi);
        c.shape = ColliderShape::Box;
        c.a = origin + rotate(b.orientation, (lo + hi) * 0.5);
        c.half_extents = (hi - lo) * 0.5;
        break;
      }
    }
    out.push_back(c);
  }
}

void RigidRun::record(double alpha, bool stepped) {
  size_t k = 0;
  for (BodyId id = 0; id < world_.body_count(); ++id) {
    if (!scene_.rigid_bodies[id].drawn) continue;
    const RigidBody& b = world_.body(id);
    Vec3 centre = b.position;
    Quat q = b.orientation;
    if (stepped && !before_position_.empty()) {
      centre = lerp(before_position_[id], b.position, alpha);
      q = slerp(before_rotation_[id], b.orientation, alpha);
    }
    frames_[k++].push_back({centre - rotate(q, b.centre_of_mass_in_shape), q, {1, 1, 1}});
  }
  result_.joints_broken = 0;
  for (JointId j = 0; j < world_.joint_count(); ++j)
    result_.joints_broken += world_.joint_broken(j) ? 1 : 0;
}

void RigidRun::write(int fps) const {
  Asset asset;
  std::vector<Joint> joints;
  size_t k = 0;
  for (const SimSceneRigidBody& b : scene_.rigid_bodies) {
    if (!b.drawn) continue;
    joints.push_back(Joint{b.name, kNoParent, frames_[k++].front(), {}});
  }
  asset.skeleton = Skeleton::build(std::move(joints));
  Clip clip;
  clip.name = "simulation";
  clip.sample_rate = fps;
  clip.tracks.resize(frames_.size());
  k = 0;
  for (const SimSceneRigidBody& b : scene_.rigid_bodies) {
    if (!b.drawn) continue;
    Mesh mesh = rigid_shape_mesh(b.shape);
    mesh.name = b.name;
    mesh.node = int(k);
    asset.meshes.push_back(std::move(mesh));
    for (size_t f = 0; f < frames_[k].size(); ++f)
      append_key(clip.tracks[k], double(f) / fps, frames_[k][f]);
    ++k;
  }
  clip.duration = frames_.empty() ? 0 : double(frames_.front().size() - 1) / fps;
  asset.clips.push_back(std::move(clip));
  save_asset(asset, result_.path);
}

}  // namespace kinema::pipeline
