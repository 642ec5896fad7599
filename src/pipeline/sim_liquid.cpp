// Liquids in `kinema sim` scenes (sim_liquid.h): the `liquid` object read, the SPH run on the
// scene's clock, and its outputs — every particle a point of a PC2 cache (with a sidecar that
// draws it in the liquid's colour) and, when asked, a marching-cubes surface per frame.
#include "sim_liquid.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "kinema/clip/clip.h"
#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/io/particle_sidecar.h"

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

}  // namespace

SimSceneLiquid read_liquid(const SceneReader& r, const json& j, const std::string& p,
                           const Vec3& gravity, const std::vector<Collider>& colliders) {
  r.only(j, p,
         {"spacing", "solver", "viscosity", "xsph", "sound_speed", "rest_density", "pbf_iterations",
          "domain", "tank", "blocks", "surface", "surface_spacing", "colour"});
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
    else
      r.fail(p + "/solver",
             "unknown solver \"" + solver + "\" (known: weakly_compressible, position_based)");
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
    const Vec3 size = (block.max - block.min) / o.spacing;
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
  try {
    SphFluid check(o);  // every remaining check of the options, before anything runs
  } catch (const Error& e) {
    r.fail(p, e.reason());
  }
  return l;
}

LiquidRun::LiquidRun(const SimSceneLiquid& liquid, const std::string& cache_path, int threads)
    : liquid_(liquid), fluid_([&] {
        SphOptions o = liquid.options;
        o.threads = threads;
        return o;
      }()) {
  for (const SimSceneLiquid::Block& b : liquid.blocks) fluid_.add_block(b.min, b.max, b.velocity);
  if (liquid.tank) {
    const std::vector<Vec3> walls = sph_box_boundary(
        liquid.tank_min, liquid.tank_max, liquid.options.spacing, liquid.tank_layers, 3, true);
    fluid_.set_boundary_particles(walls);
    result_.boundary_particles = walls.size();
  }
  fluid_.set_colliders(liquid.colliders);
  result_.cache_path = cache_path;
  const std::filesystem::path path(cache_path);
  result_.mesh_path = std::filesystem::path(path).replace_extension(".obj").string();
  result_.sidecar_path = particle_sidecar_path(cache_path);
  if (liquid.surface)
    result_.surface_path = (path.parent_path() / (path.stem().string() + "_surface.glb")).string();
  result_.particles = fluid_.count();
  cache_.points = int(fluid_.count());
  cache_.start_frame = 0;
  cache_.sample_rate = 1;
  rest_ = positions_by_id();
  record(0, false);
}

std::vector<Vec3> LiquidRun::positions_by_id() const {
  std::vector<Vec3> out(fluid_.count());
  const std::span<const std::uint32_t> ids = fluid_.ids();
  for (size_t i = 0; i < out.size(); ++i) out[ids[i]] = fluid_.position(i);
  return out;
}

void LiquidRun::step(double h, const std::vector<Collider>& moving, bool last_of_frame) {
  const auto start = std::chrono::steady_clock::now();
  if (!moving.empty()) {
    std::vector<Collider> all = liquid_.colliders;
    all.insert(all.end(), moving.begin(), moving.end());
    fluid_.set_colliders(std::move(all));
  }
  if (last_of_frame) before_ = positions_by_id();
  result_.substeps += fluid_.step(h);
  ++result_.steps;
  result_.seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void LiquidRun::record(double alpha, bool stepped) {
  std::vector<Vec3> now = positions_by_id();
  if (stepped)
    for (size_t i = 0; i < now.size(); ++i) now[i] = lerp(before_[i], now[i], alpha);
  for (const Vec3& p : now) cache_.positions.push_back(Vec3f(p));
  for (size_t i = 0; i < fluid_.count(); ++i)
    result_.fastest = std::max(result_.fastest, length(fluid_.velocity(i)));
  if (!liquid_.surface) return;
  const auto start = std::chrono::steady_clock::now();
  const double spacing = liquid_.options.spacing;
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
  const double rest = liquid_.options.rest_density;
  double sum = 0;
  size_t full = 0;
  for (const double rho : fluid_.densities()) {
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
