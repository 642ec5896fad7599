// `kinema sim springbones` (see kinema/pipeline/spring_bones.h).
#include "kinema/pipeline/spring_bones.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numbers>
#include <vector>

#include "kinema/core/error.h"
#include "kinema/core/file.h"
#include "kinema/io/asset_file.h"
#include "kinema/io/gltf.h"
#include "kinema/physics/spring_bones.h"

namespace kinema::pipeline {

Clip bake_spring_bones(const Asset& avatar, int clip, double step, int frames,
                       const SpringFrameCallback& on_frame, const Progress& progress) {
  const Skeleton& skeleton = avatar.skeleton;
  const size_t n = static_cast<size_t>(skeleton.joint_count());
  const Clip* source = clip >= 0 ? &avatar.clips.at(static_cast<size_t>(clip)) : nullptr;
  SpringBoneSim sim(skeleton, avatar.spring_bones);

  // Which joints the baked clip keys: those the source animates, and the simulated ones.
  std::vector<char> animated(n, 0);
  if (source)
    for (size_t j = 0; j < source->tracks.size() && j < n; ++j)
      animated[j] = !source->tracks[j].empty();
  for (int j : sim.simulated_joints()) animated[static_cast<size_t>(j)] = 1;

  Clip out;
  out.name = source ? source->name + "_springs" : "springs";
  out.duration = step * (frames - 1);
  out.sample_rate = 1.0 / step;
  out.tracks.resize(n);
  std::vector<Transform> pose(n);
  const std::vector<Transform> rest = skeleton.rest_pose();
  for (int k = 0; k < frames; ++k) {
    const double t = step * k;
    if (source)
      sample_pose(*source, skeleton, std::min(t, source->duration), WrapMode::Clamp, pose);
    else
      pose = rest;
    sim.step(pose, k == 0 ? 0.0 : step);
    for (size_t j = 0; j < n; ++j)
      if (animated[j]) append_key(out.tracks[j], t, pose[j]);
    if (on_frame) on_frame(k, t, sim.world());
    if (k % 30 == 0 || k + 1 == frames) report(progress, "simulating spring bones", k + 1, frames);
  }
  return out;
}

SpringBakeResult run_spring_bake(const SpringBakeRequest& request) {
  const std::string ext = extension_of(request.out);
  if (ext != "glb" && ext != "gltf" && ext != "vrm")
    throw UsageError("OUT must be .glb, .gltf or .vrm: " + request.out);
  if (request.fps < 1 || request.fps > 1000)
    throw UsageError("--fps must be 1–1000, not " + std::to_string(request.fps));
  if (same_file(request.avatar, request.out))
    throw UsageError("OUT is the avatar itself: " + request.out);
  report(request.progress, "loading the avatar", 0, 1);
  Asset avatar = load_asset(request.avatar);
  if (avatar.spring_bones.empty())
    throw UsageError(request.avatar +
                     " has no spring bones (VRMC_springBone or VRM 0.x "
                     "secondaryAnimation)");
  const int clip = request.clip.empty() ? (avatar.clips.empty() ? -1 : 0)
                                        : find_clip(avatar, request.clip, request.avatar);
  const double step = 1.0 / request.fps;
  const double seconds = request.seconds >= 0
                             ? request.seconds
                             : (clip >= 0 ? avatar.clips[static_cast<size_t>(clip)].duration : 2.0);
  const int frames = static_cast<int>(std::ceil(seconds * request.fps - 1e-9)) + 1;

  SpringBakeResult result;
  result.clip_name = clip >= 0 ? avatar.clips[static_cast<size_t>(clip)].name : "";
  result.frames = frames;
  result.springs = static_cast<int>(avatar.spring_bones.springs.size());
  result.joints = static_cast<int>(avatar.spring_bones.joint_count());
  result.colliders = static_cast<int>(avatar.spring_bones.colliders.size());
  const auto start = std::chrono::steady_clock::now();
  Clip baked;
  try {
    baked = bake_spring_bones(avatar, clip, step, frames, {}, request.progress);
  } catch (const Error& e) {  // the simulation's refusal, said of the file it came from
    throw Error(request.avatar, "spring bones: " + e.place(), e.reason());
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::vector<Transform> rest = avatar.skeleton.rest_pose();
  for (const auto& spring : avatar.spring_bones.springs)
    for (const auto& joint : spring.joints)
      for (const Quat& q : baked.tracks[static_cast<size_t>(joint.joint)].rotation.values)
        result.largest_swing_deg =
            std::max(result.largest_swing_deg,
                     angle_between(q, rest[static_cast<size_t>(joint.joint)].rotation) * 180 /
                         std::numbers::pi);

  avatar.clips.assign(1, std::move(baked));
  GltfWriteOptions options;
  options.spring_bones = false;
  report(request.progress, "writing " + request.out, 0, 1);
  write_gltf(avatar, request.out, options);
  report(request.progress, "writing " + request.out, 1, 1);
  return result;
}

}  // namespace kinema::pipeline
