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

}  // namespace

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
  Ragdoll doll(a, world, model_of(a, local), request.options);
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
  auto record = [&](double t) {
    pose_at(a, clip, t, local);
    doll.read_pose(world, local, model);
    model_to_local(a.skeleton.parents(), std::span<const Mat4>(model),
                   std::span<Mat4>(local_matrices));
    for (size_t j = 0; j < n; ++j)
      if (keyed[j]) append_key(baked.tracks[j], t, Transform::from_matrix(local_matrices[j]));
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
  baked.duration = (result.frames - 1) * frame;
  a.clips.assign(1, std::move(baked));
  GltfWriteOptions options;
  options.spring_bones = false;  // the bake is what plays
  report(request.progress, "writing " + request.out, 0, 1);
  write_gltf(a, request.out, options);
  report(request.progress, "writing " + request.out, 1, 1);
  return result;
}

}  // namespace kinema::pipeline
