// kinema's own formats as the JSON the viewer's page draws (view_convert.h,
// kinema/pipeline/view.h).
#include "view_convert.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <nlohmann/json.hpp>

#include "kinema/core/error.h"
#include "kinema/core/file.h"
#include "kinema/io/asset_file.h"
#include "kinema/io/terrain.h"
#include "kinema/match/controller.h"
#include "kinema/match/database.h"
#include "kinema/match/inputs.h"
#include "kinema/pipeline/render.h"
#include "kinema/retarget/rig.h"
#include "kinema/skeleton/skeleton.h"

namespace kinema::pipeline {

namespace {

using Json = nlohmann::ordered_json;

/// Millimetre precision: the page draws, it does not measure; it keeps the JSON small.
double mm(double v) { return std::isfinite(v) ? std::round(v * 1000.0) / 1000.0 : v; }

void push3(Json& list, const Vec3& p) {
  list.push_back(mm(p.x));
  list.push_back(mm(p.y));
  list.push_back(mm(p.z));
}

Json joints_json(const Skeleton& skeleton) {
  Json joints = Json::array();
  for (int j = 0; j < skeleton.joint_count(); ++j)
    joints.push_back({{"name", skeleton.joint(j).name}, {"parent", skeleton.parent(j)}});
  return joints;
}

}  // namespace

std::string point_cache_json(const std::string& pc2) {
  const ParticleCacheFile f = read_particle_cache(pc2);
  const PointCache& cache = f.cache;
  Json j;
  j["kind"] = "points";
  j["points"] = cache.points;
  j["samples"] = cache.samples();
  j["fps"] = f.samples_per_second();
  Json positions = Json::array();
  for (const Vec3f& p : cache.positions) push3(positions, Vec3(p));
  j["positions"] = std::move(positions);
  Vec3f colour = kDefaultParticleColour;
  if (f.sidecar) {
    // One colour a point (its mid-life colour), and the frames it is alive at.
    const ParticleSidecar& s = *f.sidecar;
    colour = {s.colour[0].at(0.5f, 1), s.colour[1].at(0.5f, 1), s.colour[2].at(0.5f, 1)};
    Json alive = Json::array();
    for (const ParticleLife& life : s.points) {
      alive.push_back(life.first_frame);
      alive.push_back(life.last_frame);
    }
    j["alive"] = std::move(alive);
  }
  if (f.strands()) {
    colour = {0.35f, 0.22f, 0.12f};  // hair
    Json segments = Json::array();
    for (const auto& s : f.segments) {
      segments.push_back(s[0]);
      segments.push_back(s[1]);
    }
    j["segments"] = std::move(segments);
  }
  j["colour"] = {colour.x, colour.y, colour.z};
  return j.dump();
}

namespace {

/// The heights of `ground` on a grid over its bounds (null where nothing is below).
Json ground_grid(const GroundFile& g) {
  const double cell = 0.05;
  const auto count = [&](double extent) {
    return std::clamp(int(std::ceil(extent / cell)) + 1, 2, 161);
  };
  const int nx = count(g.hi.x - g.lo.x), nz = count(g.hi.z - g.lo.z);
  const double top = g.hi.y + 1.0, reach = g.hi.y - g.lo.y + 2.0;
  Json heights = Json::array();
  for (int iz = 0; iz < nz; ++iz)
    for (int ix = 0; ix < nx; ++ix) {
      const double x = g.lo.x + (g.hi.x - g.lo.x) * ix / (nx - 1);
      const double z = g.lo.z + (g.hi.z - g.lo.z) * iz / (nz - 1);
      GroundHit hit;
      if (g.ground->ray_down({x, top, z}, reach, hit))
        heights.push_back(mm(hit.point.y));
      else
        heights.push_back(nullptr);
    }
  Json j;
  j["lo"] = {mm(g.lo.x), mm(g.lo.y), mm(g.lo.z)};
  j["hi"] = {mm(g.hi.x), mm(g.hi.y), mm(g.hi.z)};
  j["nx"] = nx;
  j["nz"] = nz;
  j["heights"] = std::move(heights);
  return j;
}

/// Each humanoid ankle per frame of the first clip, the ground under it and whether it is planted
/// (within foot placement's contact height of its planted height above the ground, and slow).
Json feet_goals(const GroundFile& g, const std::string& clip_file, const ViewOptions& options) {
  Json j;
  j["file"] = clip_file;
  const Asset asset = load_asset(clip_file, options.load);
  if (asset.clips.empty()) {
    j["note"] = "no clip in " + clip_file;
    return j;
  }
  HumanoidLegs legs;
  try {
    legs = humanoid_legs(asset, clip_file);
  } catch (const Error& e) {
    j["note"] = e.what();  // a ground is still worth seeing without goals
    return j;
  }
  const Clip& clip = asset.clips.front();
  const double fps = clip.sample_rate > 0 ? clip.sample_rate : 30.0;
  const int frames =
      std::min(int(std::floor(clip.duration * fps + 1e-9)) + 1, std::max(options.max_frames, 1));
  const size_t n = legs.rig.legs.size();
  std::vector<Vec3> ankle(size_t(frames) * n);
  std::vector<double> below(ankle.size(), std::numeric_limits<double>::quiet_NaN());
  std::vector<std::vector<double>> heights_of(n);  // ankle above the ground, per leg
  const double top = g.hi.y + 10.0;
  for (int f = 0; f < frames; ++f) {
    const std::vector<Mat4> model = sample_model_pose(clip, asset.skeleton, f / fps);
    for (size_t l = 0; l < n; ++l) {
      const Vec3 p = model[size_t(legs.rig.legs[l].ankle)].translation_part();
      ankle[size_t(f) * n + l] = p;
      GroundHit hit;
      if (g.ground->ray_down({p.x, top, p.z}, top - g.lo.y + 1.0, hit)) {
        below[size_t(f) * n + l] = hit.point.y;
        heights_of[l].push_back(p.y - hit.point.y);
      }
    }
  }
  // Each ankle's height when planted: a low percentile of its height above the ground, not the
  // lowest, which a frame with the foot over a step's edge (the ground under it already the next
  // step) pulls below the real one.
  std::vector<double> lowest(n, 0.0);
  for (size_t l = 0; l < n; ++l) {
    std::vector<double>& h = heights_of[l];
    if (h.empty()) continue;
    const auto k = h.begin() + std::ptrdiff_t(h.size() / 10);
    std::nth_element(h.begin(), k, h.end());
    lowest[l] = *k;
  }
  const ClipFootPlacementOptions defaults;
  Json ankles = Json::array(), ground_y = Json::array(), planted = Json::array();
  for (int f = 0; f < frames; ++f)
    for (size_t l = 0; l < n; ++l) {
      const size_t k = size_t(f) * n + l;
      const Vec3& p = ankle[k];
      const Vec3& q = ankle[f > 0 ? k - n : k];
      const double speed = std::hypot(p.x - q.x, p.z - q.z) * fps;
      const bool on = std::isfinite(below[k]) &&
                      p.y - below[k] - lowest[l] < defaults.contact_height &&
                      speed < defaults.contact_speed;
      push3(ankles, p);
      ground_y.push_back(mm(below[k]));
      planted.push_back(on ? 1 : 0);
    }
  j["clip"] = clip.name;
  j["fps"] = fps;
  j["frames"] = frames;
  j["legs"] = legs.names;
  Json heights = Json::array();
  for (const double h : lowest) heights.push_back(mm(h));
  j["ankle_heights"] = std::move(heights);
  j["ankles"] = std::move(ankles);
  j["ground_y"] = std::move(ground_y);
  j["planted"] = std::move(planted);
  return j;
}

}  // namespace

std::string ground_json(const std::string& ground, const std::string& clip_file,
                        const ViewOptions& options) {
  const GroundFile g = load_ground(ground);
  Json j;
  j["kind"] = "ground";
  j["description"] = g.description;
  j["grid"] = ground_grid(g);
  if (!clip_file.empty()) j["goals"] = feet_goals(g, clip_file, options);
  return j.dump();
}

std::string match_debug_json(const std::string& kmm, const std::string& stick_path,
                             const ViewOptions& options) {
  const match::Database db = match::deserialize_database(read_file(kmm), kmm);
  if (!db.has_poses())
    throw Error(kmm, "", "holds no poses (built with --features-only): nothing to show");
  const match::StickPath path = match::read_stick_path(stick_path);
  match::Controller controller(db);
  const double dt = 1.0 / db.fps;
  const int frames =
      std::min(int(std::floor(path.duration * db.fps + 1e-9)) + 1, std::max(options.max_frames, 1));
  const int joints = db.skeleton.joint_count();
  std::vector<Transform> local(static_cast<size_t>(joints));
  std::vector<Mat4> model(static_cast<size_t>(joints));
  Json positions = Json::array(), root = Json::array(), simulation = Json::array();
  Json predicted = Json::array(), chosen = Json::array(), clip = Json::array();
  Json source_time = Json::array(), transitions = Json::array();
  size_t transitions_before = 0;
  for (int f = 0; f < frames; ++f) {
    if (f == 0) controller.reset(0);
    controller.update(path.at(f * dt));
    const std::span<const Transformf> pose = controller.pose();
    for (int k = 0; k < joints; ++k) local[size_t(k)] = Transform(pose[size_t(k)]);
    local_to_model(db.skeleton.parents(), std::span<const Transform>(local),
                   std::span<Mat4>(model));
    for (const Mat4& m : model) push3(positions, m.translation_part());
    push3(root, controller.root_position());
    push3(simulation, controller.simulation_position());
    Json future = Json::array();
    for (const Vec3& p : controller.predicted_positions()) push3(future, p);
    predicted.push_back(std::move(future));
    const uint32_t frame = controller.frame();
    chosen.push_back(frame);
    clip.push_back(uint32_t(&db.clip_of(frame) - db.clips.data()));
    source_time.push_back(mm(db.source_time(frame)));
    if (controller.transitions() != transitions_before) transitions.push_back(f);
    transitions_before = controller.transitions();
  }
  Json j;
  j["kind"] = "match";
  j["fps"] = db.fps;
  j["frames"] = frames;
  j["joints"] = joints_json(db.skeleton);
  Json variants = Json::array();
  for (const match::DatabaseClip& c : db.clips) variants.push_back(c.name);
  j["clips"] = std::move(variants);
  j["trajectory_times"] = db.trajectory_times;
  j["positions"] = std::move(positions);
  j["root"] = std::move(root);
  j["simulation"] = std::move(simulation);
  j["predicted"] = std::move(predicted);
  j["chosen_frame"] = std::move(chosen);
  j["chosen_clip"] = std::move(clip);
  j["source_time"] = std::move(source_time);
  j["transitions"] = std::move(transitions);
  j["searches"] = controller.searches();
  return j.dump();
}

}  // namespace kinema::pipeline
