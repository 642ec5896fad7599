// Liquids in `kinema sim` scenes (sim_liquid.h): the `liquid` object read, the SPH run on the
// scene's clock, and its outputs — every particle a point of a PC2 cache (with a sidecar that
// draws it in the liquid's colour) and, when asked, a marching-cubes surface per frame.
#include "sim_liquid.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "kinema/clip/clip.h"
#include "kinema/core/error.h"
#include "kinema/fluid/mesh_sdf.h"
#include "kinema/io/asset_file.h"
#include "kinema/io/particle_sidecar.h"
#include "sim_smoke.h"

namespace kinema::pipeline {

using nlohmann::json;

namespace {

/// A box {"min": [x, y, z], "max": [x, y, z]} (plus `extra` keys the caller reads), min < max.
std::pair<Vec3, Vec3> read_box(const SceneReader& r, const json& j, const std::string& p,
                               std::initializer_list<const char*> keys) {
  r.only(j, p, keys);
  for (const char* key : {"min", "max"})
    if (!j.contains(key)) r.fail(p + "/" + key, std::string("missing: the box's ") + key);
  const Vec3 lo = r.vec3(j["min"], p + "/min"), hi = r.vec3(j["max"], p + "/max");
  if (!(lo.x < hi.x && lo.y < hi.y && lo.z < hi.z))
    r.fail(p + "/max", "must exceed \"min\" on every axis");
  return {lo, hi};
}

bool inside(const Vec3& lo, const Vec3& hi, const Vec3& domain_lo, const Vec3& domain_hi) {
  return lo.x >= domain_lo.x && lo.y >= domain_lo.y && lo.z >= domain_lo.z && hi.x <= domain_hi.x &&
         hi.y <= domain_hi.y && hi.z <= domain_hi.z;
}

/// The FLIP solids a collider makes inside lo…hi (sim.h's SimSceneLiquid::flip); false for a
/// tilted plane.
bool flip_solids(const Collider& c, const Vec3& lo, const Vec3& hi, double dx,
                 std::vector<FlipSolid>& out) {
  switch (c.shape) {
    case ColliderShape::Sphere:
      out.push_back(FlipSolid::sphere(c.a, c.radius));
      return true;
    case ColliderShape::Capsule: {  // spheres a quarter of the radius (or a cell) apart
      const double step = std::max(0.25 * c.radius, 0.5 * dx);
      const int n = std::max(1, int(std::ceil(length(c.b - c.a) / step)));
      for (int k = 0; k <= n; ++k)
        out.push_back(FlipSolid::sphere(lerp(c.a, c.b, double(k) / n), c.radius));
      return true;
    }
    case ColliderShape::Box: {
      Vec3 h{0, 0, 0};
      for (const Vec3& axis : {Vec3{c.half_extents.x, 0, 0}, Vec3{0, c.half_extents.y, 0},
                               Vec3{0, 0, c.half_extents.z}}) {
        const Vec3 d = rotate(c.rotation, axis);
        h = h + Vec3{std::abs(d.x), std::abs(d.y), std::abs(d.z)};
      }
      out.push_back(FlipSolid::box(c.a, h));
      return true;
    }
    case ColliderShape::Plane: {
      const Vec3 n = normalize(c.normal);
      int axis = -1;
      for (int k = 0; k < 3; ++k)
        if (std::abs(n[k]) > 1 - 1e-9) axis = k;
      if (axis < 0) return false;
      Vec3 blo = lo - Vec3{dx, dx, dx}, bhi = hi + Vec3{dx, dx, dx};
      if (n[axis] > 0)
        bhi[axis] = c.a[axis];
      else
        blo[axis] = c.a[axis];
      if (!(bhi[axis] > blo[axis])) return true;  // behind the domain: nothing to fill
      out.push_back(FlipSolid::box(0.5 * (blo + bhi), 0.5 * (bhi - blo)));
      return true;
    }
  }
  return false;
}

}  // namespace

SimSceneLiquid read_liquid(const SceneReader& r, const json& j, const std::string& p,
                           const Vec3& gravity, const std::vector<Collider>& colliders) {
  r.only(j, p,
         {"spacing", "solver", "viscosity", "xsph", "sound_speed", "rest_density", "pbf_iterations",
          "domain", "tank", "blocks", "surface", "surface_spacing", "colour", "cell_size",
          "flip_ratio", "obstacles"});
  SimSceneLiquid l;
  SphOptions& o = l.options;
  o.gravity = gravity;
  if (j.contains("spacing")) o.spacing = r.at_least(j["spacing"], p + "/spacing", 0, true);
  if (j.contains("solver")) {
    const std::string solver = r.text(j["solver"], p + "/solver");
    if (solver == "weakly_compressible")
      o.solver = SphSolver::WeaklyCompressible;
    else if (solver == "position_based")
      o.solver = SphSolver::PositionBased;
    else if (solver == "flip")
      l.flip = true;
    else
      r.fail(p + "/solver", "unknown solver \"" + solver +
                                "\" (known: weakly_compressible, position_based, flip)");
  }
  for (const char* key : {"viscosity", "xsph", "sound_speed", "rest_density", "pbf_iterations"})
    if (l.flip && j.contains(key))
      r.fail(p + "/" + key, std::string("\"") + key + "\" is for the SPH solvers, not \"flip\"");
  for (const char* key : {"cell_size", "flip_ratio"})
    if (!l.flip && j.contains(key))
      r.fail(p + "/" + key, std::string("\"") + key + "\" is for \"solver\": \"flip\"");
  FlipOptions& f = l.flip_options;
  f.gravity = gravity;
  f.dx = 2 * o.spacing;
  if (j.contains("cell_size")) f.dx = r.at_least(j["cell_size"], p + "/cell_size", 0, true);
  if (j.contains("flip_ratio")) {
    f.flip_ratio = r.at_least(j["flip_ratio"], p + "/flip_ratio", 0, false);
    if (f.flip_ratio > 1) r.fail(p + "/flip_ratio", "must be between 0 and 1");
  }
  if (j.contains("viscosity")) o.viscosity = r.at_least(j["viscosity"], p + "/viscosity", 0, false);
  if (j.contains("xsph")) {
    o.xsph = r.at_least(j["xsph"], p + "/xsph", 0, false);
    if (o.xsph > 1) r.fail(p + "/xsph", "must be between 0 and 1");
  }
  if (j.contains("sound_speed"))
    o.sound_speed = r.at_least(j["sound_speed"], p + "/sound_speed", 0, false);
  if (j.contains("rest_density"))
    o.rest_density = r.at_least(j["rest_density"], p + "/rest_density", 0, true);
  if (j.contains("pbf_iterations"))
    o.pbf_iterations = r.whole(j["pbf_iterations"], p + "/pbf_iterations", 1, 100);

  if (j.contains("tank")) {
    const json& t = j["tank"];
    std::tie(l.tank_min, l.tank_max) = read_box(r, t, p + "/tank", {"min", "max", "layers"});
    if (t.contains("layers")) l.tank_layers = r.whole(t["layers"], p + "/tank/layers", 1, 6);
    l.tank = true;
  }
  if (j.contains("domain")) {
    std::tie(o.domain_min, o.domain_max) = read_box(r, j["domain"], p + "/domain", {"min", "max"});
  } else if (l.tank && l.flip) {  // the grid's border is the tank's walls; room above
    o.domain_min = l.tank_min;
    o.domain_max = l.tank_max + Vec3{0, 0.5 * (l.tank_max.y - l.tank_min.y), 0};
  } else if (l.tank) {  // the tank, its walls, and room above for a splash
    const double wall = (l.tank_layers + 1) * o.spacing;
    o.domain_min = l.tank_min - Vec3{wall, wall, wall};
    o.domain_max = l.tank_max + Vec3{wall, wall + 0.5 * (l.tank_max.y - l.tank_min.y), wall};
  } else {
    r.fail(p + "/domain", "missing: a liquid needs a \"domain\" or a \"tank\"");
  }
  o.fluid_height = l.tank ? l.tank_max.y - l.tank_min.y : 0;

  if (!j.contains("blocks") || !j["blocks"].is_array() || j["blocks"].empty())
    r.fail(p + "/blocks", "a liquid needs a non-empty array \"blocks\" of boxes to fill");
  double particles = 0;
  for (size_t i = 0; i < j["blocks"].size(); ++i) {
    const std::string q = p + "/blocks/" + std::to_string(i);
    const json& b = j["blocks"][i];
    SimSceneLiquid::Block block;
    std::tie(block.min, block.max) = read_box(r, b, q, {"min", "max", "velocity"});
    if (b.contains("velocity")) block.velocity = r.vec3(b["velocity"], q + "/velocity");
    if (!inside(block.min, block.max, o.domain_min, o.domain_max))
      r.fail(q, "the block reaches outside the liquid's domain");
    const Vec3 size = (block.max - block.min) / (l.flip ? 0.5 * f.dx : o.spacing);
    particles += std::ceil(size.x) * std::ceil(size.y) * std::ceil(size.z);
    l.blocks.push_back(block);
  }
  if (particles > 2e6)
    r.fail(p + "/blocks", "about " + std::to_string(long(particles)) +
                              " particles: more than 2 million (raise \"spacing\")");
  if (l.tank && !inside(l.tank_min, l.tank_max, o.domain_min, o.domain_max))
    r.fail(p + "/tank", "the tank reaches outside the liquid's domain");
  if (j.contains("surface")) l.surface = r.boolean(j["surface"], p + "/surface");
  if (j.contains("surface_spacing"))
    l.surface_spacing = r.at_least(j["surface_spacing"], p + "/surface_spacing", 0, true);
  if (j.contains("colour")) {
    const Vec3 c = r.vec3(j["colour"], p + "/colour");
    if (c.x < 0 || c.y < 0 || c.z < 0) r.fail(p + "/colour", "must be linear RGB ≥ 0");
    l.colour = {float(c.x), float(c.y), float(c.z)};
  }
  l.colliders = colliders;
  if (j.contains("obstacles")) {
    if (l.flip) r.fail(p + "/obstacles", "mesh obstacles are for the SPH solvers, not \"flip\"");
    std::vector<FluidObstacle> obstacles;
    read_mesh_obstacles(r, j["obstacles"], p + "/obstacles", obstacles);
    for (FluidObstacle& ob : obstacles) l.obstacles.push_back(std::move(ob.region));
  }
  if (l.flip) {
    // Whole cells from the domain's min, covering it.
    const Vec3 size = o.domain_max - o.domain_min;
    const double cells[3] = {std::ceil(size.x / f.dx - 1e-9), std::ceil(size.y / f.dx - 1e-9),
                             std::ceil(size.z / f.dx - 1e-9)};
    if (std::max({cells[0], cells[1], cells[2]}) > 1024 ||
        cells[0] * cells[1] * cells[2] > 16777216)
      r.fail(p + (j.contains("cell_size") ? "/cell_size" : "/spacing"),
             "the FLIP grid would have " + SceneReader::format(cells[0]) + " × " +
                 SceneReader::format(cells[1]) + " × " + SceneReader::format(cells[2]) +
                 " cells: at most 1024 a side and 16.8 million in all");
    f.nx = int(cells[0]);
    f.ny = int(cells[1]);
    f.nz = int(cells[2]);
    f.origin = o.domain_min;
    const Vec3 top = f.origin + Vec3{cells[0], cells[1], cells[2]} * f.dx;
    for (const Collider& c : colliders)
      if (!flip_solids(c, f.origin, top, f.dx, f.solids)) ++l.planes_skipped;
    return l;
  }
  try {
    SphFluid check(o);  // every remaining check of the options, before anything runs
  } catch (const Error& e) {
    r.fail(p, e.reason());
  }
  return l;
}

LiquidRun::LiquidRun(const SimSceneLiquid& liquid, const std::string& cache_path,
                     const std::string& scene_file, int threads)
    : liquid_(liquid), scene_file_(scene_file) {
  if (liquid.flip) {
    try {
      FlipOptions o = liquid.flip_options;
      o.threads = threads;
      flip_.emplace(std::move(o));
      for (size_t i = 0; i < liquid.blocks.size(); ++i) {
        const SimSceneLiquid::Block& b = liquid.blocks[i];
        flip_->add_block(b.min, b.max, b.velocity);
      }
    } catch (const Error& e) {
      throw Error(scene_file, "/liquid", "FLIP: " + e.place() + " " + e.reason());
    }
  } else {
    SphOptions o = liquid.options;
    o.threads = threads;
    sph_.emplace(o);
    for (const SimSceneLiquid::Block& b : liquid.blocks) sph_->add_block(b.min, b.max, b.velocity);
    std::vector<Vec3> walls;
    if (liquid.tank)
      walls = sph_box_boundary(liquid.tank_min, liquid.tank_max, liquid.options.spacing,
                               liquid.tank_layers, 3, true);
    for (size_t i = 0; i < liquid.obstacles.size(); ++i) {
      const FluidRegion& g = liquid.obstacles[i];
      try {
        const std::vector<Vec3> shell =
            sph_mesh_boundary(*g.sdf, g.center, liquid.options.spacing, liquid.tank_layers, 3);
        walls.insert(walls.end(), shell.begin(), shell.end());
      } catch (const Error& e) {
        throw Error(scene_file, "/liquid/obstacles/" + std::to_string(i), e.reason());
      }
    }
    if (!walls.empty()) {
      sph_->set_boundary_particles(walls);
      result_.boundary_particles = walls.size();
    }
    sph_->set_colliders(liquid.colliders);
  }
  result_.cache_path = cache_path;
  const std::filesystem::path path(cache_path);
  result_.mesh_path = std::filesystem::path(path).replace_extension(".obj").string();
  result_.sidecar_path = particle_sidecar_path(cache_path);
  if (liquid.surface)
    result_.surface_path = (path.parent_path() / (path.stem().string() + "_surface.glb")).string();
  result_.particles = flip_ ? flip_->count() : sph_->count();
  cache_.points = int(result_.particles);
  cache_.start_frame = 0;
  cache_.sample_rate = 1;
  rest_ = positions_by_id();
  record(0, false);
}

std::vector<Vec3> LiquidRun::positions_by_id() const {
  if (flip_) {  // FLIP keeps its particles' order
    std::vector<Vec3> out(flip_->count());
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = Vec3{flip_->px()[i], flip_->py()[i], flip_->pz()[i]};
    return out;
  }
  std::vector<Vec3> out(sph_->count());
  const std::span<const std::uint32_t> ids = sph_->ids();
  for (size_t i = 0; i < out.size(); ++i) out[ids[i]] = sph_->position(i);
  return out;
}

void LiquidRun::step(double h, const std::vector<Collider>& moving, bool last_of_frame) {
  const auto start = std::chrono::steady_clock::now();
  if (last_of_frame) before_ = positions_by_id();
  if (flip_) {  // no moving solids in FLIP (sim.h)
    flip_->step(h);
    result_.substeps += flip_->last_substeps();
    if (flip_->last_substeps() >= liquid_.flip_options.max_substeps)
      ++result_.steps_at_max_substeps;
  } else {
    if (!moving.empty()) {
      std::vector<Collider> all = liquid_.colliders;
      all.insert(all.end(), moving.begin(), moving.end());
      sph_->set_colliders(std::move(all));
    }
    result_.substeps += sph_->step(h);
  }
  ++result_.steps;
  result_.seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void LiquidRun::record(double alpha, bool stepped) {
  std::vector<Vec3> now = positions_by_id();
  if (stepped)
    for (size_t i = 0; i < now.size(); ++i) now[i] = lerp(before_[i], now[i], alpha);
  const int frame = cache_.points > 0 ? int(cache_.positions.size() / size_t(cache_.points)) : 0;
  for (size_t i = 0; i < now.size(); ++i) {
    if (!std::isfinite(now[i].x) || !std::isfinite(now[i].y) || !std::isfinite(now[i].z))
      throw Error(scene_file_, "/liquid",
                  "the liquid blew up: particle " + std::to_string(i) + " is not finite at frame " +
                      std::to_string(frame) +
                      ": lower the step (\"rate\") or raise the spacing; nothing was written");
    cache_.positions.push_back(Vec3f(now[i]));
  }
  if (flip_) {
    result_.fastest = std::max(result_.fastest, flip_->max_speed());
  } else {
    for (size_t i = 0; i < sph_->count(); ++i)
      result_.fastest = std::max(result_.fastest, length(sph_->velocity(i)));
  }
  if (!liquid_.surface) return;
  const auto start = std::chrono::steady_clock::now();
  // FLIP's particles start 2 a cell and axis: half a cell apart.
  const double spacing = flip_ ? 0.5 * liquid_.flip_options.dx : liquid_.options.spacing;
  const double grid = liquid_.surface_spacing > 0 ? liquid_.surface_spacing : 0.5 * spacing;
  ParticleFieldOptions field;
  field.threads = liquid_.options.threads;
  // Particles of radius Δx/2 touch on their lattice; the field's kernel reaches 2Δx.
  SurfaceMesh mesh = now.empty() ? SurfaceMesh{}
                                 : marching_cubes(particle_field(now, 0.5 * spacing, grid, field),
                                                  0.0f, true, liquid_.options.threads);
  result_.surface_triangles += mesh.triangle_count();
  surfaces_.push_back(std::move(mesh));
  result_.surface_seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

SimLiquidResult LiquidRun::finish() {
  if (flip_) {
    result_.max_divergence = flip_->max_divergence();
    return result_;
  }
  const double rest = liquid_.options.rest_density;
  double sum = 0;
  size_t full = 0;
  for (const double rho : sph_->densities()) {
    if (rho < 0.9 * rest) continue;  // the free surface's particles miss neighbours
    sum += rho / rest - 1;
    ++full;
    result_.largest_compression = std::max(result_.largest_compression, rho / rest - 1);
  }
  result_.mean_compression = full > 0 ? sum / double(full) : 0;
  return result_;
}

void LiquidRun::write(int fps) const {
  write_pc2(result_.cache_path, cache_);
  write_obj_mesh(result_.mesh_path, rest_, {});
  const int frames = cache_.points > 0 ? int(cache_.positions.size() / size_t(cache_.points)) : 0;
  ParticleSidecar sidecar =
      everlasting_particle_sidecar(size_t(cache_.points), frames, 1.0 / double(fps));
  for (size_t c = 0; c < 3; ++c) sidecar.colour[c] = {{0.0f}, {liquid_.colour[c]}};
  write_particle_sidecar(result_.sidecar_path, sidecar);
  if (!liquid_.surface) return;
  // One node and mesh per frame, shown (scale 1) only at its own frame: the surface changes its
  // vertex count from frame to frame, so morph targets cannot carry it.
  Asset asset;
  std::vector<Joint> joints;
  Clip clip;
  clip.name = "simulation";
  clip.sample_rate = fps;
  clip.duration = double(surfaces_.size() - 1) / fps;
  for (size_t f = 0; f < surfaces_.size(); ++f) {
    char name[32];
    std::snprintf(name, sizeof name, "liquid_%04zu", f);
    Transform shown = Transform::identity();
    shown.scale = f == 0 ? Vec3{1, 1, 1} : Vec3{0, 0, 0};
    joints.push_back(Joint{name, kNoParent, shown, {}});
    Mesh mesh;
    mesh.name = name;
    mesh.node = int(f);
    mesh.positions = surfaces_[f].positions;
    mesh.normals = surfaces_[f].normals;
    mesh.indices = surfaces_[f].triangles;
    if (!mesh.indices.empty()) asset.meshes.push_back(std::move(mesh));  // an empty frame: no mesh
    JointTrack track;
    track.scale.interpolation = Interpolation::Step;
    auto key = [&](size_t frame, double s) {
      track.scale.times.push_back(double(frame) / fps);
      track.scale.values.push_back(Vec3{s, s, s});
    };
    if (f > 0) key(0, 0);
    key(f, 1);
    if (f + 1 < surfaces_.size()) key(f + 1, 0);
    clip.tracks.push_back(std::move(track));
  }
  asset.skeleton = Skeleton::build(std::move(joints));
  asset.clips.push_back(std::move(clip));
  save_asset(asset, result_.surface_path);
}

}  // namespace kinema::pipeline
