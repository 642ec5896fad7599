// `kinema ragdoll` (kinema/pipeline/ragdoll.h).
#include "kinema/pipeline/ragdoll.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "kinema/clip/clip.h"
#include "kinema/core/error.h"
#include "kinema/core/file.h"
#include "kinema/io/asset_file.h"
#include "kinema/io/gltf.h"
#include "kinema/match/pose_match.h"
#include "kinema/retarget/joint_limits_file.h"
#include "kinema/skeleton/skeleton.h"

namespace kinema::pipeline {

namespace {

// The clip's pose at time t (held past its end), or the rest pose without a clip.
void pose_at(const Asset& a, int clip, double t, std::vector<Transform>& local) {
  if (clip < 0) {
    local = a.skeleton.rest_pose();
    return;
  }
  const Clip& c = a.clips[size_t(clip)];
  sample_pose(c, a.skeleton, std::clamp(t, 0.0, c.duration), WrapMode::Clamp, local);
}

std::vector<Mat4> model_of(const Asset& a, const std::vector<Transform>& local) {
  std::vector<Mat4> model(local.size());
  local_to_model(a.skeleton.parents(), std::span<const Transform>(local), std::span<Mat4>(model));
  return model;
}

// The get-up: the candidate frame nearest the fallen pose, played on from there — its roots
// turned and moved onto where she lies — blended in from the fallen pose over `blend` seconds
// (smoothstep). Appends the frames after `t_end` to the keyed tracks.
struct GetUp {
  const Asset& a;
  const std::vector<int>& candidates;
  const std::vector<char>& keyed;

  void run(const std::vector<Transform>& fallen, double t_end, double blend, int fps, Clip& baked,
           RagdollResult& result) const {
    std::vector<Clip> clips;
    for (const int c : candidates) clips.push_back(a.clips[size_t(c)]);
    match::PoseMatchOptions options;
    if (a.humanoid && a.humanoid->find("hips") >= 0) options.root = a.humanoid->find("hips");
    options.fps = fps;
    const match::PoseMatcher matcher(a.skeleton, clips, options);
    const match::PoseMatch m = matcher.find(model_of(a, fallen));
    if (m.clip < 0) throw Error({}, "get-up", "the fallen pose is not finite");
    const Clip& clip = clips[size_t(m.clip)];
    result.get_up_clip = clip.name;
    result.get_up_from = m.time;
    result.get_up_cost = m.cost;
    const Transform move{m.offset, Quat::from_axis_angle({0, 1, 0}, m.yaw), {1, 1, 1}};
    const std::span<const int> parents = a.skeleton.parents();
    const size_t n = fallen.size();
    std::vector<Transform> pose(n);
    const int frames = int(std::ceil((clip.duration - m.time) * fps - 1e-9));
    for (int f = 1; f <= frames; ++f) {
      sample_pose(clip, a.skeleton, std::min(m.time + double(f) / fps, clip.duration),
                  WrapMode::Clamp, pose);
      const double x = std::min(1.0, double(f) / fps / std::max(blend, 1e-9));
      const double w = x * x * (3 - 2 * x);
      for (size_t j = 0; j < n; ++j) {
        if (parents[j] < 0) pose[j] = move * pose[j];
        pose[j].translation = lerp(fallen[j].translation, pose[j].translation, w);
        pose[j].rotation = slerp(fallen[j].rotation, pose[j].rotation, w);
        pose[j].scale = lerp(fallen[j].scale, pose[j].scale, w);
        if (keyed[j]) append_key(baked.tracks[j], t_end + double(f) / fps, pose[j]);
      }
    }
    result.frames += frames;
  }
};

}  // namespace

std::vector<RagdollJointLimit> ragdoll_limits_from_ik(std::span<const JointLimit> limits) {
  constexpr double kMostAngle = 3.1, kLeastCone = 0.01;  // rad
  auto low = [&](double a) { return std::clamp(a, -kMostAngle, 0.0); };
  auto high = [&](double a) { return std::clamp(a, 0.0, kMostAngle); };
  std::vector<RagdollJointLimit> out;
  for (size_t j = 0; j < limits.size(); ++j) {
    const JointLimit& l = limits[j];
    RagdollJointLimit r;
    r.joint = int(j);
    if (l.kind == JointLimit::Kind::kHinge) {
      r.kind = JointKind::Hinge;
      r.axis = l.hinge.axis;
      r.lower = low(l.hinge.min_angle);
      r.upper = high(l.hinge.max_angle);
    } else if (l.kind == JointLimit::Kind::kSwingTwist) {
      r.kind = JointKind::ConeTwist;
      r.axis = l.swing_twist.twist_axis;
      r.swing = std::clamp(std::max(l.swing_twist.swing_a, l.swing_twist.swing_b), kLeastCone,
                           kMostAngle);
      r.twist_lower = low(l.swing_twist.twist_min);
      r.twist_upper = high(l.swing_twist.twist_max);
    } else {
      continue;
    }
    out.push_back(r);
  }
  return out;
}

RagdollResult run_ragdoll(const RagdollRequest& request) {
  const std::string ext = extension_of(request.out);
  if (ext != "glb" && ext != "gltf" && ext != "vrm")
    throw UsageError("OUT must be .glb, .gltf or .vrm: " + request.out);
  if (same_file(request.character, request.out))
    throw UsageError("OUT is the character itself: " + request.out);
  if (request.fps < 1 || request.rate < request.fps || request.rate % request.fps != 0)
    throw UsageError("--rate must be a whole multiple of --fps (" + std::to_string(request.rate) +
                     " steps, " + std::to_string(request.fps) + " frames a second)");
  if (!is_finite(request.hit_impulse)) throw Error({}, "--hit", "the impulse is not finite");
  report(request.progress, "loading the character", 0, 1);
  Asset a = load_asset(request.character);
  const int clip = request.clip.empty() ? (a.clips.empty() ? -1 : 0)
                                        : find_clip(a, request.clip, request.character);
  std::vector<int> get_up;
  for (const std::string& name : request.get_up)
    get_up.push_back(find_clip(a, name, request.character));
  int bone = a.skeleton.find(request.hit_bone);
  if (bone < 0 && a.humanoid) bone = a.humanoid->find(request.hit_bone);
  if (bone < 0)
    throw Error(request.character, request.hit_bone,
                "the character has no joint or humanoid bone named \"" + request.hit_bone + "\"");

  const size_t n = size_t(a.skeleton.joint_count());
  const double h = 1.0 / request.rate, frame = 1.0 / request.fps;
  const int steps_per_frame = request.rate / request.fps;
  RagdollResult result;
  Clip baked;
  baked.name = (clip >= 0 ? a.clips[size_t(clip)].name : std::string("rest")) + "_ragdoll";
  baked.sample_rate = request.fps;
  baked.tracks.resize(n);
  result.clip_name = baked.name;

  std::vector<Transform> local(n), previous(n);
  const int hit_frame = int(std::floor(request.hit_time * request.fps + 1e-9));
  // The hit: the pose at its instant, moving as the animation moved into it.
  const double t0 = hit_frame * frame;
  pose_at(a, clip, t0, local);
  pose_at(a, clip, t0 - h, previous);
  RigidWorldSettings settings;
  settings.sleeping = false;
  RigidWorld world(settings);
  world.add_body(make_static_body({0, -0.5, 0}, Quat::identity()), box_shape({100, 0.5, 100}),
                 {0.8, 0}, "ground");
  RagdollOptions options = request.options;
  if (!request.limits_file.empty()) {
    const std::vector<RagdollJointLimit> from_file =
        ragdoll_limits_from_ik(load_joint_limits(request.limits_file, a));
    options.limits.insert(options.limits.end(), from_file.begin(), from_file.end());
  }
  Ragdoll doll(a, world, model_of(a, local), options);
  doll.match_pose(world, model_of(a, previous), model_of(a, local), h);
  // The nearest body at or above the bone takes the impulse.
  int struck = bone, body = doll.body_of_joint(bone);
  while (body < 0 && a.skeleton.parents()[size_t(struck)] >= 0) {
    struck = a.skeleton.parents()[size_t(struck)];
    body = doll.body_of_joint(struck);
  }
  if (body < 0)
    throw Error(request.character, request.hit_bone,
                "no ragdoll body holds this bone (it has too little skin of its own)");
  result.hit_body = a.skeleton.joint(struck).name;
  // The joints the baked clip keys: those the clip animates, those with a body, and their
  // ancestors (a root is placed under the bodies). Others — nodes of skinned meshes among them,
  // which glTF forbids animating — keep their transforms.
  std::vector<char> keyed(n, 0);
  if (clip >= 0)
    for (size_t j = 0; j < n && j < a.clips[size_t(clip)].tracks.size(); ++j)
      keyed[j] = !a.clips[size_t(clip)].tracks[j].empty();
  for (const int c : get_up)
    for (size_t j = 0; j < n && j < a.clips[size_t(c)].tracks.size(); ++j)
      keyed[j] = keyed[j] || !a.clips[size_t(c)].tracks[j].empty();
  for (const RagdollBody& b : doll.bodies())
    for (int j = b.joint; j >= 0 && !keyed[size_t(j)]; j = a.skeleton.parents()[size_t(j)])
      keyed[size_t(j)] = 1;
  result.bodies = doll.bodies().size();
  result.joints = world.joint_count();
  result.mass = doll.mass();
  RigidBody& target = world.body(doll.bodies()[size_t(body)].body);
  apply_impulse_at_point(target, request.hit_impulse, target.position);
  if (request.powered) doll.set_gain(body, request.limp);

  // The animation up to the hit, frame by frame.
  for (int f = 0; f < hit_frame; ++f) {
    pose_at(a, clip, f * frame, local);
    for (size_t j = 0; j < n; ++j)
      if (keyed[j]) append_key(baked.tracks[j], f * frame, local[j]);
  }

  const int frames_after = int(std::ceil(request.seconds_after * request.fps - 1e-9));
  const auto start = std::chrono::steady_clock::now();
  std::vector<Mat4> model;
  std::vector<Mat4> local_matrices(n);
  std::vector<Transform> fallen(n);  // the last pose recorded
  auto record = [&](double t) {
    pose_at(a, clip, t, local);
    doll.read_pose(world, local, model);
    model_to_local(a.skeleton.parents(), std::span<const Mat4>(model),
                   std::span<Mat4>(local_matrices));
    for (size_t j = 0; j < n; ++j) {
      fallen[j] = Transform::from_matrix(local_matrices[j]);
      if (keyed[j]) append_key(baked.tracks[j], t, fallen[j]);
    }
  };
  record(t0);
  for (int f = 1; f <= frames_after; ++f) {
    for (int s = 0; s < steps_per_frame; ++s) {
      const double t = t0 + (f - 1) * frame + (s + 1) * h;
      if (request.powered) {
        pose_at(a, clip, t, local);
        doll.drive(world, model_of(a, local));
        doll.recover(h, request.recovery);
      }
      world.step(h);
      ++result.steps;
      for (JointId j = 0; j < world.joint_count(); ++j)
        result.worst_joint_error = std::max(result.worst_joint_error, world.joint_error(j));
    }
    record(t0 + f * frame);
    report(request.progress, "simulating the ragdoll", f, frames_after);
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.final_height = -1e300;
  for (const RagdollBody& b : doll.bodies()) {
    const Vec3 p = world.body(b.body).position;
    if (!is_finite(p))
      throw Error(request.character, "ragdoll",
                  "the ragdoll blew up (a NaN pose); nothing was written");
    result.final_height = std::max(result.final_height, p.y);
  }
  result.frames = hit_frame + frames_after + 1;
  if (!get_up.empty()) {
    report(request.progress, "getting up", 0, 1);
    GetUp{a, get_up, keyed}.run(fallen, (result.frames - 1) * frame, request.get_up_blend,
                                request.fps, baked, result);
  }
  baked.duration = (result.frames - 1) * frame;
  a.clips.assign(1, std::move(baked));
  GltfWriteOptions write_options;
  write_options.spring_bones = false;  // the bake is what plays
  report(request.progress, "writing " + request.out, 0, 1);
  write_gltf(a, request.out, write_options);
  report(request.progress, "writing " + request.out, 1, 1);
  return result;
}

}  // namespace kinema::pipeline
