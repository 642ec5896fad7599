// Soft bodies and hair in a `kinema sim` run (sim_bodies.h): stepped on the scene's clock with the
// character's colliders, drawn at each frame α of the way between steps, written as point caches.
#include "sim_bodies.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>

#include "kinema/core/error.h"
#include "kinema/core/file.h"
#include "kinema/math/mat4.h"

namespace kinema::pipeline {

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// The scene's colliders of a body followed by the character's.
std::vector<Collider> with_character(const std::vector<Collider>& own,
                                     const CharacterNow* character) {
  std::vector<Collider> all = own;
  if (character) all.insert(all.end(), character->colliders.begin(), character->colliders.end());
  return all;
}

PointCache empty_cache(size_t points, int frames) {
  PointCache cache;
  cache.points = int(points);
  cache.start_frame = 0;
  cache.sample_rate = 1;
  cache.positions.reserve(points * size_t(frames));
  return cache;
}

}  // namespace

SoftBodyRuns::SoftBodyRuns(const SimScene& scene, const std::string& out, bool gltf, size_t outputs,
                           const CharacterNow* character, int frames)
    : scene_(scene) {
  for (const SimSceneSoftBody& s : scene.soft_bodies) {
    SoftBodyOptions options = s.options;
    options.colliders = with_character(s.options.colliders, character);
    bodies_.emplace_back(s.mesh, options);
    if (character && s.attach_joint >= 0) {  // authored around the bind pose: carried to frame 0
      const Mat4 carry = character->from_rest(s.attach_joint);
      std::vector<Vec3> start = s.mesh.positions;
      for (Vec3& p : start) p = carry.transform_point(p);
      bodies_.back().set_state(start, std::vector<Vec3>(start.size(), Vec3{0, 0, 0}));
    }
    // The surface's vertices, in tet-vertex order, and its triangles renumbered to them.
    std::vector<std::array<std::uint32_t, 3>> triangles = tet_surface(s.mesh);
    std::vector<std::int64_t> index_of(s.mesh.positions.size(), -1);
    for (const auto& t : triangles)
      for (std::uint32_t v : t) index_of[v] = 0;
    std::vector<std::uint32_t> surface;
    for (size_t v = 0; v < index_of.size(); ++v)
      if (index_of[v] == 0)
        index_of[v] = std::int64_t(surface.size()), surface.push_back(std::uint32_t(v));
    for (auto& t : triangles)
      for (std::uint32_t& v : t) v = std::uint32_t(index_of[v]);
    MeshFrames mesh{s.name, {}, std::move(triangles), nullptr};
    for (std::uint32_t v : surface) mesh.rest.push_back(s.mesh.positions[v]);
    SimSoftBodyResult result;
    result.name = s.name;
    result.vertices = s.mesh.positions.size();
    result.tets = s.mesh.tets.size();
    result.surface_vertices = surface.size();
    result.surface_triangles = mesh.triangles.size();
    result.cache_path = gltf ? out : sim_cache_path(out, s.name, outputs);
    result.mesh_path = gltf ? out : sim_mesh_path(out, s.name, outputs);
    results_.push_back(result);
    caches_.push_back(empty_cache(surface.size(), frames));
    surface_.push_back(std::move(surface));
    meshes_.push_back(std::move(mesh));
  }
  before_.resize(bodies_.size());
  for (size_t i = 0; i < meshes_.size(); ++i) meshes_[i].frames = &caches_[i];
}

void SoftBodyRuns::step(double h, const CharacterNow* character, bool last_of_frame) {
  for (size_t i = 0; i < bodies_.size(); ++i) {
    const auto start = std::chrono::steady_clock::now();
    const SimSceneSoftBody& s = scene_.soft_bodies[i];
    SoftBody& body = bodies_[i];
    if (character) {
      body.set_colliders(with_character(s.options.colliders, character));
      if (s.attach_joint >= 0) {
        const Mat4 follow = character->from_rest(s.attach_joint);
        for (std::uint32_t v : s.options.pinned)
          body.set_pin_target(v, follow.transform_point(s.mesh.positions[v]));
      }
    }
    if (last_of_frame) before_[i].assign(body.positions().begin(), body.positions().end());
    results_[i].collider_contacts += body.step(h);
    ++results_[i].steps;
    results_[i].seconds += seconds_since(start);
  }
}

void SoftBodyRuns::record(double alpha, bool stepped) {
  for (size_t i = 0; i < bodies_.size(); ++i) {
    const SoftBody& body = bodies_[i];
    const std::span<const Vec3> now = body.positions();
    const std::span<const Vec3> before = stepped ? std::span<const Vec3>(before_[i]) : now;
    for (std::uint32_t v : surface_[i])
      caches_[i].positions.push_back(Vec3f(lerp(before[v], now[v], alpha)));
    SimSoftBodyResult& r = results_[i];
    r.worst_volume_error = std::max(
        r.worst_volume_error, std::abs(body.volume() - body.rest_volume()) / body.rest_volume());
    r.worst_stretch = std::max(r.worst_stretch, body.largest_stretch());
  }
}

std::vector<SimSoftBodyResult> SoftBodyRuns::finish() {
  for (size_t i = 0; i < bodies_.size(); ++i) {
    results_[i].volume_error =
        (bodies_[i].volume() - bodies_[i].rest_volume()) / bodies_[i].rest_volume();
    results_[i].largest_stretch = bodies_[i].largest_stretch();
  }
  return results_;
}

void SoftBodyRuns::write_caches() const {
  for (size_t i = 0; i < bodies_.size(); ++i) {
    write_pc2(results_[i].cache_path, caches_[i]);
    write_obj_mesh(results_[i].mesh_path, meshes_[i].rest, meshes_[i].triangles);
  }
}

namespace {

/// The hair's guides and child roots carried by `carry` (the joint's motion from the bind pose to
/// the first frame), so that the roots start where the joint holds them.
SimSceneHair carried_hair(const SimSceneHair& hair, const Mat4& carry) {
  SimSceneHair out = hair;
  for (auto& strand : out.guides)
    for (Vec3& p : strand) p = carry.transform_point(p);
  for (Vec3& p : out.child_roots) p = carry.transform_point(p);
  return out;
}

HairSystem make_hair(const SimSceneHair& hair, const CharacterNow* character) {
  HairOptions o = hair.options;
  o.colliders = with_character(hair.options.colliders, character);
  return HairSystem(hair.guides, o);
}

}  // namespace

HairRun::HairRun(const SimSceneHair& hair, const std::string& cache_path,
                 const CharacterNow* character, int frames)
    : hair_(character && hair.joint >= 0 ? carried_hair(hair, character->from_rest(hair.joint))
                                         : hair),
      system_(make_hair(hair_, character)),
      children_(make_hair_children(system_, hair_.child_roots, hair_.child_points)) {
  if (character && hair.joint >= 0 && !inverse(character->from_rest(hair.joint), start_inverse_))
    start_inverse_ = Mat4::identity();
  rest_ = strands_now();
  size_t at = 0;
  for (const auto& strand : hair_.guides) {
    polylines_.emplace_back();
    for (size_t k = 0; k < strand.size(); ++k) polylines_.back().push_back(std::uint32_t(at++));
  }
  for (size_t c = 0; c < hair_.child_roots.size(); ++c) {
    polylines_.emplace_back();
    for (int k = 0; k < hair_.child_points; ++k) polylines_.back().push_back(std::uint32_t(at++));
  }
  result_.cache_path = cache_path;
  result_.mesh_path = std::filesystem::path(cache_path).replace_extension(".obj").string();
  result_.guides = hair_.guides.size();
  result_.children = hair_.child_roots.size();
  result_.points = rest_.size();
  cache_ = empty_cache(rest_.size(), frames);
}

std::vector<Vec3> HairRun::strands_now() const {
  std::vector<Vec3> points;
  points.reserve(rest_.size());
  for (size_t g = 0; g < system_.guide_count(); ++g)
    points.insert(points.end(), system_.guide(g).begin(), system_.guide(g).end());
  const std::vector<Vec3> children = interpolate_hair(system_, children_);
  points.insert(points.end(), children.begin(), children.end());
  return points;
}

void HairRun::step(double h, const CharacterNow* character, bool last_of_frame) {
  const auto start = std::chrono::steady_clock::now();
  if (character) {
    system_.set_colliders(with_character(hair_.options.colliders, character));
    if (hair_.joint >= 0) {  // the joint's motion since the first frame: rigid
      const Mat4 head = character->from_rest(hair_.joint) * start_inverse_;
      system_.set_head(rotation_of(head), head.translation_part());
    }
  }
  if (last_of_frame) before_ = strands_now();
  result_.collider_contacts += system_.step(h);
  ++result_.steps;
  result_.seconds += seconds_since(start);
}

void HairRun::record(double alpha, bool stepped) {
  const auto start = std::chrono::steady_clock::now();
  const std::vector<Vec3> now = strands_now();
  for (size_t k = 0; k < now.size(); ++k)
    cache_.positions.push_back(Vec3f(stepped ? lerp(before_[k], now[k], alpha) : now[k]));
  for (size_t g = 0; g < system_.guide_count(); ++g) {
    const std::span<const Vec3> strand = system_.guide(g);
    for (size_t s = 0; s + 1 < strand.size(); ++s) {
      const double rest = system_.rest_length(g, s);
      result_.worst_stretch = std::max(result_.worst_stretch,
                                       std::abs(length(strand[s + 1] - strand[s]) - rest) / rest);
    }
  }
  result_.seconds += seconds_since(start);
}

void HairRun::write_cache() const {
  write_pc2(result_.cache_path, cache_);
  write_obj_polylines(result_.mesh_path, rest_, polylines_);
}

std::string check_body_outputs(const SimRequest& request, const SimScene& scene, bool gltf) {
  const size_t mesh_outputs = scene.cloths.size() + scene.soft_bodies.size();
  std::vector<std::string> paths;
  if (!gltf)
    for (const SimSceneSoftBody& b : scene.soft_bodies) {
      paths.push_back(sim_cache_path(request.out, b.name, mesh_outputs));
      paths.push_back(sim_mesh_path(request.out, b.name, mesh_outputs));
    }
  std::string hair_path;
  if (scene.hair) {
    if (gltf && mesh_outputs == 0)
      throw UsageError("a scene of hair alone is written as a point cache: -o OUT.pc2");
    const bool alone = mesh_outputs == 0 && !scene.particles;
    hair_path = sim_hair_cache_path(request.out, alone);
    paths.push_back(hair_path);
    paths.push_back(std::filesystem::path(hair_path).replace_extension(".obj").string());
    if (!gltf && mesh_outputs > 1) {
      auto named_hair = [](const auto& body) { return body.name == "hair"; };
      if (std::any_of(scene.cloths.begin(), scene.cloths.end(), named_hair) ||
          std::any_of(scene.soft_bodies.begin(), scene.soft_bodies.end(), named_hair))
        throw Error(request.scene, "/hair",
                    "a cloth or soft body named \"hair\" would share the hair's cache " +
                        hair_path + ": rename it");
    }
  }
  for (const std::string& path : paths)
    if (same_file(path, request.scene))
      throw UsageError("the output " + path + " is the same file as SCENE");
  return hair_path;
}

void step_bodies(SoftBodyRuns& soft_bodies, std::optional<HairRun>& hair, double h,
                 const std::optional<CharacterNow>& character, bool last_of_frame) {
  const CharacterNow* now = character ? &*character : nullptr;
  soft_bodies.step(h, now, last_of_frame);
  if (hair) hair->step(h, now, last_of_frame);
}

void record_bodies(SoftBodyRuns& soft_bodies, std::optional<HairRun>& hair, double alpha,
                   bool stepped) {
  soft_bodies.record(alpha, stepped);
  if (hair) hair->record(alpha, stepped);
}

}  // namespace kinema::pipeline
