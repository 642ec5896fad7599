// kinema/pipeline/spring_bones.h — `kinema sim springbones AVATAR -o OUT` as a library call:
// an avatar's VRM spring bones (kinema/physics/spring_bones.h) simulated over one of its clips
// and baked into it, so that engines without a spring-bone runtime play the secondary motion.
#pragma once

#include <functional>
#include <span>
#include <string>

#include "kinema/character/asset.h"
#include "kinema/pipeline/job.h"

namespace kinema::pipeline {

/// Called after each simulated frame with the frame's index, its time (s) and every joint's
/// world matrix.
using SpringFrameCallback = std::function<void(int frame, double time, std::span<const Mat4>)>;

/// Simulates `avatar`'s spring bones for `frames` frames, one step of `step` seconds each, with
/// the character playing clip `clip` (held at its last pose past its end; -1: the rest pose) and
/// returns a clip of `frames` keys `step` apart: the source clip's animated joints and every
/// simulated joint's rotation. Frame k is the pose at time k·step after k steps from the rest
/// state (frame 0 takes the first pose in without moving, as three-vrm's update(0)). Throws
/// kinema::Error for spring settings the simulation refuses (kinema/physics/spring_bones.h).
Clip bake_spring_bones(const Asset& avatar, int clip, double step, int frames,
                       const SpringFrameCallback& on_frame = {}, const Progress& progress = {});

struct SpringBakeRequest {
  std::string avatar;  ///< a .vrm / .glb / .gltf with spring bones
  std::string out;     ///< .glb, .gltf or .vrm
  std::string clip;    ///< a clip's name or index; empty: the first clip, or the rest pose
  int fps = 60;        ///< simulation steps and output frames per second
  /// How long to simulate (rounded up to whole frames); < 0: the clip's duration (2 s at rest).
  double seconds = -1;
  Progress progress;
};

struct SpringBakeResult {
  std::string clip_name;  ///< the played clip, or "" for the rest pose
  int frames = 0, springs = 0, joints = 0, colliders = 0;
  double largest_swing_deg = 0;  ///< the largest angle a simulated joint turned from its rest
  double seconds = 0;            ///< wall time simulating
};

/// Loads the avatar, bakes its spring bones over the clip and writes OUT atomically with that one
/// clip (named after the source clip + "_springs", or "springs") and without the spring-bone
/// definitions, which a viewer would otherwise simulate again. Throws UsageError for an avatar
/// without spring bones, an unknown clip, fps outside 1–1000 or OUT not .glb/.gltf/.vrm or the
/// avatar itself; kinema::Error for a bad file. A failure writes nothing.
SpringBakeResult run_spring_bake(const SpringBakeRequest& request);

}  // namespace kinema::pipeline
