// `kinema gait` as a library call (kinema/pipeline/gait.h).
#include "kinema/pipeline/gait.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <memory>

#include "kinema/core/error.h"
#include "kinema/retarget/rig.h"

namespace kinema::pipeline {

namespace fs = std::filesystem;

namespace {

constexpr int kStepsPerFrame = 4;  ///< gait updates per written frame

std::string point_text(const Vec2& p) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "(%g, %g)", p.x, p.y);
  return buffer;
}

/// Model transforms of a local pose (parents-first).
void model_pose(const Skeleton& skeleton, std::span<const Transform> local,
                std::vector<Transform>& model) {
  model.resize(local.size());
  for (int j = 0; j < skeleton.joint_count(); ++j) {
    const int p = skeleton.parent(j);
    model[static_cast<size_t>(j)] =
        p < 0 ? local[static_cast<size_t>(j)]
              : model[static_cast<size_t>(p)] * local[static_cast<size_t>(j)];
  }
}

}  // namespace

GaitReport run_gait(const GaitRequest& request) {
  GaitCreature creature{};
  const bool built_in = gait_creature_from_name(request.creature, creature);
  static constexpr std::string_view kWritable[] = {"glb", "gltf", "vrm", "bvh"};
  std::vector<NamedInput> inputs;
  if (!built_in) inputs.push_back({"CREATURE", request.creature});
  if (!request.ground.empty()) inputs.push_back({"the ground file", request.ground});
  check_output_file(request.out, inputs, kWritable, "gait");
  if (built_in && extension_of(request.out) == "vrm")
    throw UsageError("gait: a built-in " + request.creature +
                     " has no humanoid map for a .vrm; write .glb, .gltf or .bvh");
  if (!(std::isfinite(request.speed) && request.speed >= 0))
    throw UsageError("gait: --speed must be a finite number ≥ 0 (0: the creature's own pace)");
  if (!(std::isfinite(request.fps) && request.fps > 0 && request.fps <= 1000))
    throw UsageError("gait: --fps must lie in (0, 1000]");
  if (!(std::isfinite(request.settle) && request.settle >= 0 && request.settle <= 3600))
    throw UsageError("gait: --settle must lie in [0, 3600] seconds");
  std::vector<Vec2> path = request.path;
  if (path.empty()) path = {Vec2{0, -2.5}, Vec2{0, 1.5}};
  for (std::size_t k = 0; k < path.size(); ++k)
    if (!std::isfinite(path[k].x) || !std::isfinite(path[k].y))
      throw UsageError("gait: path point " + std::to_string(k) + " is not finite");
  if (!built_in && !request.ground.empty()) {
    std::error_code ec;
    if (fs::is_directory(request.ground, ec))
      throw Error(request.ground, "", "is a folder; give a .png height map or an .obj mesh");
  }
  if (!request.ground.empty()) {
    const std::string ext = extension_of(request.ground);
    if (ext != "png" && ext != "obj")
      throw UsageError("--ground " + request.ground + ": give a .png height map or an .obj mesh");
  }

  GaitReport result;
  GroundFile ground;
  if (!request.ground.empty()) {
    ground = load_ground(request.ground, request.ground_options);
    result.ground = ground.description;
    // Every waypoint must stand on something.
    for (std::size_t k = 0; k < path.size(); ++k) {
      GroundHit hit;
      const double top = ground.hi.y + 10;
      if (!ground.ground->ray_down(Vec3{path[k].x, top, path[k].y}, top - ground.lo.y + 10, hit))
        throw Error(request.ground, "path point " + std::to_string(k) + " " + point_text(path[k]),
                    "has no ground under it (the ground covers x " + std::to_string(ground.lo.x) +
                        " … " + std::to_string(ground.hi.x) + ", z " + std::to_string(ground.lo.z) +
                        " … " + std::to_string(ground.hi.z) + ")");
    }
  } else {
    result.ground = "the plane y = 0";
  }

  Asset asset;
  GaitRig rig;
  if (built_in) {
    rig = make_gait_creature(creature);
    asset.skeleton = rig.skeleton;
    result.creature = request.creature + " (" + std::to_string(rig.legs.size()) + " legs)";
  } else {
    asset = load_asset(request.creature, request.load);
    const HumanoidLegs legs = humanoid_legs(asset, request.creature);
    rig = make_gait_creature(GaitCreature::kBiped);  // a biped's settings
    rig.skeleton = asset.skeleton;
    rig.body = legs.rig.pelvis;
    rig.legs.clear();
    for (std::size_t i = 0; i < legs.rig.legs.size(); ++i) {
      GaitLeg leg;
      leg.hip = legs.rig.legs[i].hip;
      leg.knee = legs.rig.legs[i].knee;
      leg.foot = legs.rig.legs[i].ankle;
      leg.phase_offset = 0.5 * static_cast<double>(i);
      rig.legs.push_back(leg);
    }
    rig.leg_names = legs.names;
    result.creature = fs::path(request.creature).filename().string() + " (" +
                      std::to_string(rig.legs.size()) + " legs)";
  }
  result.legs = rig.leg_names;
  const Ground* floor = ground.ground.get();
  Gait gait(rig.skeleton, rig.body, rig.legs, rig.settings, floor);
  const GaitSettings& settings = gait.settings();
  const double speed =
      request.speed > 0 ? request.speed : 0.7 * settings.max_stride / settings.cycle_duration;
  double path_length = 0;
  for (std::size_t k = 1; k < path.size(); ++k) path_length += length(path[k] - path[k - 1]);
  result.speed = speed;
  result.distance = path_length;

  const auto heading_of = [](const Vec2& d) { return std::atan2(d.x, d.y); };
  double heading = path.size() > 1 ? heading_of(path[1] - path[0]) : 0;
  gait.reset(Vec3{path[0].x, 0, path[0].y}, heading);

  const double duration = path_length / speed + request.settle;
  if (!(duration <= 3600))  // also catches an overflowing path
    throw UsageError("gait: the walk would last " + std::to_string(duration) +
                     " s (the path's length over the speed, and the settle); at most 3600 s");
  const int frames = static_cast<int>(std::ceil(duration * request.fps - 1e-9)) + 1;
  const double dt = 1 / (request.fps * kStepsPerFrame);
  const std::size_t joints = static_cast<std::size_t>(rig.skeleton.joint_count());
  std::vector<Transform> local(joints), model;
  std::vector<Vec3> last_foot(rig.legs.size());
  std::vector<char> was_planted(rig.legs.size(), 0), was_swinging(rig.legs.size(), 0);
  Clip clip;
  clip.name = "gait";
  clip.sample_rate = request.fps;
  clip.tracks.resize(joints);
  result.lowest_clearance = std::numeric_limits<double>::infinity();
  result.body_low = std::numeric_limits<double>::infinity();
  result.body_high = -std::numeric_limits<double>::infinity();
  // Only the joints the gait moves get keys: the rest keep their rest pose (and a skinned mesh's
  // node, a joint in kinema's skeleton, is never animated: glTF ignores its transform).
  std::vector<char> keyed(joints, 0);
  keyed[static_cast<std::size_t>(rig.body)] = 1;
  for (const GaitLeg& leg : rig.legs)
    for (const int j : {leg.hip, leg.knee, leg.foot}) keyed[static_cast<std::size_t>(j)] = 1;
  std::size_t target = 1;
  for (int frame = 0; frame < frames; ++frame) {
    if (frame == 0) {
      gait.pose({}, local);
    } else {
      for (int sub = 0; sub < kStepsPerFrame; ++sub) {
        Vec3 velocity{0, 0, 0};
        // Head for the next waypoint; pass it when this step would reach it.
        const Vec2 at{gait.position().x, gait.position().z};
        while (target < path.size() && length(path[target] - at) <= speed * dt) ++target;
        if (target < path.size()) {
          const Vec2 to = path[target] - at;
          const Vec2 dir = to * (1 / length(to));
          velocity = Vec3{dir.x, 0, dir.y} * speed;
          heading = heading_of(dir);
        }
        gait.update(dt, velocity, heading, {}, local);
        for (std::size_t i = 0; i < rig.legs.size(); ++i) {
          const bool swinging = gait.foot(i).swinging;
          if (was_swinging[i] && !swinging) ++result.steps;
          was_swinging[i] = swinging;
        }
      }
    }
    const double t = frame / request.fps;
    for (std::size_t j = 0; j < joints; ++j)
      if (keyed[j]) append_key(clip.tracks[j], t, local[j]);

    // What the walk did: planted feet stay put, soles stay on or above the ground.
    model_pose(rig.skeleton, local, model);
    double mean_sole = 0;
    for (std::size_t i = 0; i < rig.legs.size(); ++i) {
      const GaitFoot& f = gait.foot(i);
      const Vec3 foot = model[static_cast<size_t>(rig.legs[i].foot)].translation;
      if (!f.swinging && was_planted[i])
        result.planted_slide = std::max(result.planted_slide, distance(foot, last_foot[i]));
      was_planted[i] = f.swinging ? 0 : 1;
      last_foot[i] = foot;
      GroundHit hit;
      double under = 0;
      if (!floor || floor->ray_down(f.sole + Vec3{0, 2, 0}, 50, hit))
        under = floor ? hit.point.y : 0;
      result.lowest_clearance = std::min(result.lowest_clearance, f.sole.y - under);
      mean_sole += f.sole.y;
    }
    mean_sole /= static_cast<double>(rig.legs.size());
    const double above = gait.body_transform().translation.y - mean_sole;
    result.body_low = std::min(result.body_low, above);
    result.body_high = std::max(result.body_high, above);
    report(request.progress, "walking", frame + 1, frames);
  }
  clip.duration = (frames - 1) / request.fps;
  result.frames = frames;
  result.duration = clip.duration;

  asset.clips.clear();
  asset.clips.push_back(std::move(clip));
  save_asset(asset, request.out);
  result.out = request.out;
  return result;
}

}  // namespace kinema::pipeline
