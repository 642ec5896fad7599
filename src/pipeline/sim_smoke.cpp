// Smoke and fire in `kinema sim` scenes (sim_smoke.h): the `smoke` object read, the grid fluid run
// on the scene's clock with the scene's colliders as static obstacles and the character's capsules
// (and the rigid bodies) as moving ones, and every frame written as an OpenVDB file.
#include "sim_smoke.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <memory>
#include <system_error>

#include "kinema/core/error.h"
#include "kinema/fluid/mesh_sdf.h"
#include "sim_rigid.h"

namespace kinema::pipeline {

using nlohmann::json;

namespace {

constexpr const char* kSides[6] = {"-x", "+x", "-y", "+y", "-z", "+z"};

FluidBoundary read_side(const SceneReader& r, const json& j, const std::string& p) {
  const std::string s = r.text(j, p);
  if (s == "wall") return FluidBoundary::Wall;
  if (s == "open") return FluidBoundary::Open;
  r.fail(p, "unknown boundary \"" + s + "\" (wall, open)");
}

/// The axis-aligned box around a region.
void region_bounds(const FluidRegion& g, Vec3& lo, Vec3& hi) {
  switch (g.shape) {
    case FluidShape::Box:
      lo = g.center - g.half_extents;
      hi = g.center + g.half_extents;
      return;
    case FluidShape::Sphere:
      lo = g.center - Vec3{g.radius, g.radius, g.radius};
      hi = g.center + Vec3{g.radius, g.radius, g.radius};
      return;
    case FluidShape::Capsule:
      lo = Vec3{std::min(g.a.x, g.b.x), std::min(g.a.y, g.b.y), std::min(g.a.z, g.b.z)} -
           Vec3{g.radius, g.radius, g.radius};
      hi = Vec3{std::max(g.a.x, g.b.x), std::max(g.a.y, g.b.y), std::max(g.a.z, g.b.z)} +
           Vec3{g.radius, g.radius, g.radius};
      return;
    case FluidShape::Mesh:
      lo = g.sdf->lower() + g.center;
      hi = g.sdf->upper() + g.center;
      return;
  }
}

Vec3 region_centre(const FluidRegion& g) {
  return g.shape == FluidShape::Capsule ? 0.5 * (g.a + g.b) : g.center;
}

/// How many cell centres of the grid lie inside `g`.
size_t cells_inside(const FluidRegion& g, const GridFluidOptions& o) {
  Vec3 lo, hi;
  region_bounds(g, lo, hi);
  auto range = [&](double a, double b, double origin, int n, int& i0, int& i1) {
    i0 = std::max(0, int(std::floor((a - origin) / o.dx - 0.5)));
    i1 = std::min(n - 1, int(std::ceil((b - origin) / o.dx - 0.5)));
  };
  int i0, i1, j0, j1, k0, k1;
  range(lo.x, hi.x, o.origin.x, o.nx, i0, i1);
  range(lo.y, hi.y, o.origin.y, o.ny, j0, j1);
  range(lo.z, hi.z, o.origin.z, o.nz, k0, k1);
  size_t n = 0;
  for (int k = k0; k <= k1; ++k)
    for (int j = j0; j <= j1; ++j)
      for (int i = i0; i <= i1; ++i)
        n += g.distance(o.origin + Vec3{i + 0.5, j + 0.5, k + 0.5} * o.dx) < 0;
  return n;
}

FluidRegion read_region(const SceneReader& r, const json& j, const std::string& p) {
  const std::string shape = j.contains("shape") ? r.text(j["shape"], p + "/shape") : "sphere";
  if (shape == "sphere") {
    if (!j.contains("radius")) r.fail(p, "a sphere needs a \"radius\"");
    const Vec3 c = j.contains("centre") ? r.vec3(j["centre"], p + "/centre") : Vec3{0, 0, 0};
    return FluidRegion::sphere(c, r.at_least(j["radius"], p + "/radius", 0, true));
  }
  if (shape == "box") {
    if (!j.contains("half_extents")) r.fail(p, "a box needs \"half_extents\"");
    const Vec3 c = j.contains("centre") ? r.vec3(j["centre"], p + "/centre") : Vec3{0, 0, 0};
    const Vec3 h = r.vec3(j["half_extents"], p + "/half_extents");
    if (!(h.x > 0 && h.y > 0 && h.z > 0)) r.fail(p + "/half_extents", "must be positive");
    return FluidRegion::box(c, h);
  }
  if (shape == "capsule") {
    if (!j.contains("a") || !j.contains("b") || !j.contains("radius"))
      r.fail(p, "a capsule needs \"a\", \"b\" and \"radius\"");
    return FluidRegion::capsule(r.vec3(j["a"], p + "/a"), r.vec3(j["b"], p + "/b"),
                                r.at_least(j["radius"], p + "/radius", 0, true));
  }
  r.fail(p + "/shape", "unknown source shape \"" + shape + "\" (sphere, box, capsule)");
}

double non_negative(const SceneReader& r, const json& j, const std::string& p, const char* key,
                    double fallback) {
  return j.contains(key) ? r.at_least(j[key], p + "/" + key, 0, false) : fallback;
}

}  // namespace

bool collider_region(const Collider& c, const Vec3& lo, const Vec3& hi, double margin,
                     FluidRegion& region) {
  switch (c.shape) {
    case ColliderShape::Sphere:
      region = FluidRegion::sphere(c.a, c.radius);
      return true;
    case ColliderShape::Capsule:
      region = FluidRegion::capsule(c.a, c.b, c.radius);
      return true;
    case ColliderShape::Box: {
      // The axis-aligned box around the turned one (the box itself when it is not turned).
      Vec3 h{0, 0, 0};
      for (const Vec3& axis : {Vec3{c.half_extents.x, 0, 0}, Vec3{0, c.half_extents.y, 0},
                               Vec3{0, 0, c.half_extents.z}}) {
        const Vec3 d = rotate(c.rotation, axis);
        h = h + Vec3{std::abs(d.x), std::abs(d.y), std::abs(d.z)};
      }
      region = FluidRegion::box(c.a, h);
      return true;
    }
    case ColliderShape::Plane: {
      const Vec3 n = normalize(c.normal);
      int axis = -1;
      for (int k = 0; k < 3; ++k)
        if (std::abs(n[k]) > 1 - 1e-9) axis = k;
      if (axis < 0) return false;
      // The domain behind the plane (grown by a margin so that its faces lie outside).
      Vec3 blo = lo - Vec3{margin, margin, margin}, bhi = hi + Vec3{margin, margin, margin};
      if (n[axis] > 0)
        bhi[axis] = c.a[axis];
      else
        blo[axis] = c.a[axis];
      if (!(bhi[axis] > blo[axis])) {  // wholly outside the domain: a sliver beyond it
        bhi[axis] = blo[axis] + margin;
      }
      region = FluidRegion::box(0.5 * (blo + bhi), 0.5 * (bhi - blo));
      return true;
    }
  }
  return false;
}

void read_mesh_obstacles(const SceneReader& r, const json& j, const std::string& p,
                         std::vector<FluidObstacle>& obstacles) {
  if (!j.is_array()) r.fail(p, "must be an array of {\"mesh\", \"offset\"}");
  const std::filesystem::path folder = std::filesystem::path(r.file).parent_path();
  for (size_t i = 0; i < j.size(); ++i) {
    const std::string q = p + "/" + std::to_string(i);
    const json& jo = j[i];
    r.only(jo, q, {"mesh", "offset"});
    if (!jo.contains("mesh")) r.fail(q + "/mesh", "missing: the obstacle's mesh file (OBJ)");
    std::filesystem::path path(r.text(jo["mesh"], q + "/mesh"));
    if (path.is_relative()) path = folder / path;
    const Vec3 offset = jo.contains("offset") ? r.vec3(jo["offset"], q + "/offset") : Vec3{0, 0, 0};
    const ClothMesh mesh = read_mesh_file(r, path.string(), "", q + "/mesh");
    std::vector<std::array<int, 3>> triangles;
    triangles.reserve(mesh.triangles.size());
    for (const auto& t : mesh.triangles) triangles.push_back({int(t[0]), int(t[1]), int(t[2])});
    std::shared_ptr<const MeshSdf> sdf;
    try {
      sdf = std::make_shared<const MeshSdf>(mesh.positions, std::move(triangles), path.string());
    } catch (const Error& e) {
      r.fail(q, path.string() + " " + e.reason());
    }
    obstacles.push_back({FluidRegion::mesh(std::move(sdf), offset), {0, 0, 0}});
  }
}

SimSceneSmoke read_smoke(const SceneReader& r, const json& j, const std::string& p,
                         const std::vector<Collider>& colliders) {
  r.only(j, p,
         {"domain", "resolution", "cell_size", "boundary", "advection", "buoyancy", "vorticity",
          "viscosity", "diffusion", "cooling_rate", "fire", "sources", "colliders",
          "character_obstacles", "obstacles", "max_cfl", "max_substeps", "vdb"});
  SimSceneSmoke s;
  GridFluidOptions& o = s.options;
  if (!j.contains("domain")) r.fail(p + "/domain", "missing: the smoke's box {\"min\", \"max\"}");
  const std::string dp = p + "/domain";
  r.only(j["domain"], dp, {"min", "max"});
  for (const char* key : {"min", "max"})
    if (!j["domain"].contains(key))
      r.fail(dp + "/" + key, std::string("missing: the box's ") + key);
  const Vec3 lo = r.vec3(j["domain"]["min"], dp + "/min");
  const Vec3 hi = r.vec3(j["domain"]["max"], dp + "/max");
  if (!(lo.x < hi.x && lo.y < hi.y && lo.z < hi.z))
    r.fail(dp + "/max", "must exceed \"min\" on every axis");
  const Vec3 size = hi - lo;
  if (j.contains("resolution") && j.contains("cell_size"))
    r.fail(p + "/cell_size", "give \"resolution\" or \"cell_size\", not both");
  if (j.contains("cell_size")) {
    o.dx = r.at_least(j["cell_size"], p + "/cell_size", 0, true);
  } else {
    const int n =
        j.contains("resolution") ? r.whole(j["resolution"], p + "/resolution", 2, 1024) : 32;
    o.dx = std::max({size.x, size.y, size.z}) / n;
  }
  // Whole cells from "min"; the domain's far corner moves to the nearest whole cell.
  const std::string size_place = j.contains("cell_size") ? p + "/cell_size" : p + "/resolution";
  const double cells[3] = {std::max(1.0, std::round(size.x / o.dx)),
                           std::max(1.0, std::round(size.y / o.dx)),
                           std::max(1.0, std::round(size.z / o.dx))};
  if (std::max({cells[0], cells[1], cells[2]}) > 1024 || cells[0] * cells[1] * cells[2] > 16777216)
    r.fail(size_place, "the domain would have " + SceneReader::format(cells[0]) + " × " +
                           SceneReader::format(cells[1]) + " × " + SceneReader::format(cells[2]) +
                           " cells: at most 1024 a side and 16.8 million (256³) in all");
  o.nx = int(cells[0]);
  o.ny = int(cells[1]);
  o.nz = int(cells[2]);
  o.origin = lo;
  const Vec3 top = lo + Vec3{double(o.nx), double(o.ny), double(o.nz)} * o.dx;

  // Open everywhere but the floor, unless told.
  o.boundary = {FluidBoundary::Open, FluidBoundary::Open, FluidBoundary::Wall,
                FluidBoundary::Open, FluidBoundary::Open, FluidBoundary::Open};
  if (j.contains("boundary")) {
    const json& b = j["boundary"];
    if (b.is_string()) {
      o.boundary.fill(read_side(r, b, p + "/boundary"));
    } else {
      r.only(b, p + "/boundary", {"-x", "+x", "-y", "+y", "-z", "+z"});
      for (size_t k = 0; k < 6; ++k)
        if (b.contains(kSides[k]))
          o.boundary[k] = read_side(r, b[kSides[k]], p + "/boundary/" + kSides[k]);
    }
  }
  if (j.contains("advection")) {
    const std::string a = r.text(j["advection"], p + "/advection");
    if (a == "maccormack")
      o.advection = FluidAdvection::MacCormack;
    else if (a == "semi_lagrangian")
      o.advection = FluidAdvection::SemiLagrangian;
    else
      r.fail(p + "/advection",
             "unknown advection \"" + a + "\" (known: maccormack, semi_lagrangian)");
  }
  o.buoyancy_alpha = 0.1;
  o.buoyancy_beta = 1;
  if (j.contains("buoyancy")) {
    const json& b = j["buoyancy"];
    const std::string bp = p + "/buoyancy";
    r.only(b, bp, {"density", "heat", "ambient_temperature"});
    if (b.contains("density")) o.buoyancy_alpha = r.number(b["density"], bp + "/density");
    if (b.contains("heat")) o.buoyancy_beta = r.number(b["heat"], bp + "/heat");
    if (b.contains("ambient_temperature"))
      o.ambient_temperature = r.number(b["ambient_temperature"], bp + "/ambient_temperature");
  }
  o.vorticity = non_negative(r, j, p, "vorticity", 0);
  o.viscosity = non_negative(r, j, p, "viscosity", 0);
  o.scalar_diffusion = non_negative(r, j, p, "diffusion", 0);
  o.cooling_rate = non_negative(r, j, p, "cooling_rate", 0.5);
  if (j.contains("max_cfl")) o.max_cfl = r.at_least(j["max_cfl"], p + "/max_cfl", 0, true);
  if (j.contains("max_substeps"))
    o.max_substeps = r.whole(j["max_substeps"], p + "/max_substeps", 1, 1000);
  if (j.contains("fire")) {
    const json& f = j["fire"];
    const std::string fp = p + "/fire";
    r.only(f, fp, {"burn_rate", "heat_release", "smoke_per_fuel"});
    s.fire = true;
    o.burn_rate = non_negative(r, f, fp, "burn_rate", 2);
    o.heat_release = non_negative(r, f, fp, "heat_release", 3);
    o.smoke_per_fuel = non_negative(r, f, fp, "smoke_per_fuel", 0.5);
  }
  if (j.contains("vdb")) {
    const json& v = j["vdb"];
    r.only(v, p + "/vdb", {"tolerance", "half"});
    s.tolerance = float(non_negative(r, v, p + "/vdb", "tolerance", 0));
    if (v.contains("half")) s.half = r.boolean(v["half"], p + "/vdb/half");
  }
  if (j.contains("character_obstacles"))
    s.character_obstacles = r.boolean(j["character_obstacles"], p + "/character_obstacles");

  if (!j.contains("sources") || !j["sources"].is_array() || j["sources"].empty())
    r.fail(p + "/sources", "smoke needs a non-empty array \"sources\"");
  for (size_t i = 0; i < j["sources"].size(); ++i) {
    const std::string q = p + "/sources/" + std::to_string(i);
    const json& js = j["sources"][i];
    r.only(js, q,
           {"shape", "centre", "radius", "half_extents", "a", "b", "density", "temperature", "fuel",
            "velocity", "start", "end"});
    SimSceneSmoke::Source src;
    src.source.region = read_region(r, js, q);
    src.source.density = non_negative(r, js, q, "density", 1);
    src.source.temperature = js.contains("temperature")
                                 ? r.number(js["temperature"], q + "/temperature")
                                 : o.ambient_temperature + 1;
    src.source.fuel = non_negative(r, js, q, "fuel", 0);
    if (js.contains("velocity")) src.source.velocity = r.vec3(js["velocity"], q + "/velocity");
    src.start = non_negative(r, js, q, "start", 0);
    if (js.contains("end")) {
      src.end = r.number(js["end"], q + "/end");
      if (!(src.end > src.start)) r.fail(q + "/end", "must come after \"start\"");
    }
    if (src.source.fuel > 0 && !s.fire)
      r.fail(q + "/fuel", "fuel needs a \"fire\" object (its burn rate and heat) in the smoke");
    Vec3 slo, shi;
    region_bounds(src.source.region, slo, shi);
    if (shi.x <= lo.x || slo.x >= top.x || shi.y <= lo.y || slo.y >= top.y || shi.z <= lo.z ||
        slo.z >= top.z)
      r.fail(q, "the source lies wholly outside the smoke's domain");
    if (cells_inside(src.source.region, o) == 0)
      r.fail(q, "the source holds no cell's centre (cells are " + SceneReader::format(o.dx) +
                    " m): make it larger or the grid finer");
    s.sources.push_back(src);
  }

  const bool use_colliders =
      j.contains("colliders") ? r.boolean(j["colliders"], p + "/colliders") : true;
  if (use_colliders)
    for (const Collider& c : colliders) {
      FluidObstacle obstacle;
      if (collider_region(c, lo, top, o.dx, obstacle.region))
        o.obstacles.push_back(obstacle);
      else
        ++s.planes_skipped;
    }
  if (j.contains("obstacles"))
    read_mesh_obstacles(r, j["obstacles"], p + "/obstacles", o.obstacles);
  return s;
}

SmokeRun::SmokeRun(const SimSceneSmoke& smoke, const std::string& pattern,
                   const std::string& scene_file, int threads)
    : smoke_(smoke), scene_file_(scene_file), fluid_([&] {
        GridFluidOptions o = smoke.options;
        o.threads = threads;
        try {
          return GridFluid(o);
        } catch (const Error& e) {
          throw Error(scene_file, "/smoke", e.reason());
        }
      }()) {
  result_.pattern = pattern;
  result_.nx = fluid_.nx();
  result_.ny = fluid_.ny();
  result_.nz = fluid_.nz();
  result_.cell_size = fluid_.dx();
  result_.obstacles = smoke.options.obstacles.size();
  result_.fire = smoke.fire;
  double most_fuel = 0;
  for (const SimSceneSmoke::Source& s : smoke.sources)
    most_fuel = std::max(most_fuel, s.source.fuel);
  fuel_scale_ = most_fuel > 0 ? 1 / most_fuel : 1;
  record(0, 0, 0, false);
}

void SmokeRun::start_moving(const std::vector<Collider>& moving) {
  const GridFluidOptions& o = smoke_.options;
  const Vec3 top = o.origin + Vec3{double(o.nx), double(o.ny), double(o.nz)} * o.dx;
  last_moving_.clear();
  for (const Collider& c : moving) {
    FluidRegion region;
    if (collider_region(c, o.origin, top, o.dx, region))
      last_moving_.emplace_back(region_centre(region), int(region.shape));
  }
}

void SmokeRun::step(double t, double h, const std::vector<Collider>& moving, bool last_of_frame) {
  const auto start = std::chrono::steady_clock::now();
  if (smoke_.character_obstacles && (!moving.empty() || !last_moving_.empty())) {
    const GridFluidOptions& o = smoke_.options;
    const Vec3 top = o.origin + Vec3{double(o.nx), double(o.ny), double(o.nz)} * o.dx;
    std::vector<FluidObstacle> obstacles;
    std::vector<std::pair<Vec3, int>> now;
    for (const Collider& c : moving) {
      FluidObstacle ob;
      if (!collider_region(c, o.origin, top, o.dx, ob.region)) continue;
      const Vec3 centre = region_centre(ob.region);
      // Its velocity: its centre's motion over the step, when the same shape was there before.
      const size_t k = now.size();
      if (k < last_moving_.size() && last_moving_[k].second == int(ob.region.shape))
        ob.velocity = (centre - last_moving_[k].first) / h;
      now.emplace_back(centre, int(ob.region.shape));
      obstacles.push_back(ob);
    }
    result_.moving_obstacles = std::max(result_.moving_obstacles, obstacles.size());
    last_moving_ = std::move(now);
    fluid_.set_moving_obstacles(std::move(obstacles));
  }
  for (const SimSceneSmoke::Source& s : smoke_.sources)
    if (t + 1e-9 >= s.start && t + 1e-9 < s.end) fluid_.add_source(s.source);
  if (last_of_frame) {
    density_before_.assign(fluid_.density().begin(), fluid_.density().end());
    temperature_before_.assign(fluid_.temperature().begin(), fluid_.temperature().end());
    fuel_before_.assign(fluid_.fuel().begin(), fluid_.fuel().end());
  }
  fluid_.step(h);
  ++result_.steps;
  result_.substeps += fluid_.last_substeps();
  if (fluid_.last_substeps() > 1) ++result_.steps_split;
  if (fluid_.last_substeps() >= smoke_.options.max_substeps) ++result_.steps_at_max_substeps;
  result_.max_divergence = std::max(result_.max_divergence, fluid_.max_divergence());
  if (!std::isfinite(fluid_.max_divergence()))
    throw Error(scene_file_, "/smoke",
                "the smoke blew up at t = " + SceneReader::format(t + h) +
                    " s (its velocity became infinite or NaN): lower the step (\"rate\") or "
                    "raise \"max_substeps\"; nothing was written");
  result_.seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void SmokeRun::record(int frame, double time, double alpha, bool stepped) {
  const auto start = std::chrono::steady_clock::now();
  const GridFluidOptions& o = smoke_.options;
  auto grid = [&](const char* name) {
    VolumeGrid g;
    g.name = name;
    g.nx = o.nx;
    g.ny = o.ny;
    g.nz = o.nz;
    g.origin = o.origin + Vec3{0.5, 0.5, 0.5} * o.dx;
    g.voxel_size = o.dx;
    g.values.resize(size_t(o.nx) * size_t(o.ny) * size_t(o.nz));
    return g;
  };
  const bool lerp_fields = stepped && !density_before_.empty();
  // α of the way from the state before the frame's last step to the state after it.
  auto fill = [&](VolumeGrid& g, std::span<const double> now, const std::vector<double>& before,
                  double offset, double scale) {
    for (size_t c = 0; c < g.values.size(); ++c) {
      const double v = lerp_fields ? before[c] + alpha * (now[c] - before[c]) : now[c];
      const double out = (v - offset) * scale;
      if (!std::isfinite(out) || std::abs(out) > 3e38)
        throw Error(scene_file_, "/smoke",
                    std::string("the smoke blew up: its ") + g.name + " is not finite at frame " +
                        std::to_string(frame) + " (t = " + SceneReader::format(time) +
                        " s): lower the step (\"rate\") or raise \"max_substeps\"; nothing was "
                        "written");
      g.values[c] = float(out);
    }
  };
  std::vector<VolumeGrid> grids;
  grids.push_back(grid("density"));
  fill(grids.back(), fluid_.density(), density_before_, 0, 1);
  grids.push_back(grid("temperature"));  // above ambient, 0 in still air
  fill(grids.back(), fluid_.temperature(), temperature_before_, o.ambient_temperature, 1);
  for (float v : grids.back().values) result_.hottest = std::max(result_.hottest, double(v));
  if (smoke_.fire) {
    grids.push_back(grid("flame"));  // the fuel burning, 0…1 of the sources' fuel
    fill(grids.back(), fluid_.fuel(), fuel_before_, 0, fuel_scale_);
    grids.push_back(grid("fuel"));
    fill(grids.back(), fluid_.fuel(), fuel_before_, 0, 1);
  }
  const std::string target = vdb_frame_path(result_.pattern, frame);
  VdbWriteOptions options;
  options.tolerance = smoke_.tolerance;
  options.save_float_as_half = smoke_.half;
  options.frame = frame;
  options.time = time;
  write_vdb(staged_.stage(target), grids, options);
  result_.paths.push_back(target);
  result_.smoke_mass = fluid_.smoke_mass();
  ++result_.frames;
  result_.write_seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace kinema::pipeline
