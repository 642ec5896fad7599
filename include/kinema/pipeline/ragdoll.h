// kinema/pipeline/ragdoll.h — `kinema ragdoll CHARACTER --clip NAME --hit TIME,BONE,IMPULSE -o OUT`
// as a library call: the character plays its clip until the hit, becomes a ragdoll at that
// instant (kinema/physics/ragdoll.h) with the animation's velocities, takes the impulse on the
// bone's body and falls onto the ground (y = 0) — passive, or powered: its joints keep tracking
// the clip through PD motors while the struck limb goes limp and recovers. The result is baked
// into one clip: the animation up to the hit, the ragdoll after it.
#pragma once

#include <string>

#include "kinema/math/vec3.h"
#include "kinema/physics/ragdoll.h"
#include "kinema/pipeline/job.h"

namespace kinema::pipeline {

struct RagdollRequest {
  std::string character;  ///< a skinned .vrm / .glb / .gltf
  std::string out;        ///< .glb, .gltf or .vrm
  std::string clip;       ///< by name or index; empty: the first clip (the rest pose without one)
  double hit_time = 0;    ///< s into the clip (past its end: the last pose, held)
  std::string hit_bone;   ///< a joint name, or a VRM humanoid bone name ("head", "leftUpperArm")
  Vec3 hit_impulse{0, 0, 0};  ///< N·s, world axes
  bool powered = false;
  double seconds_after = 3;  ///< how long the ragdoll runs after the hit (s)
  int fps = 30;              ///< output frames a second
  int rate = 120;            ///< simulation steps a second (a multiple of fps)
  double limp = 0.1;         ///< powered: the struck body's gain right after the hit
  double recovery = 0.5;     ///< powered: gain regained per second
  RagdollOptions options;
  Progress progress;
};

struct RagdollResult {
  std::string clip_name;  ///< the baked clip: "<clip>_ragdoll"
  size_t bodies = 0, joints = 0;
  double mass = 0;       ///< kg
  std::string hit_body;  ///< the joint whose body took the impulse
  int frames = 0;
  long steps = 0;
  double worst_joint_error = 0;  ///< m, over the run
  double final_height = 0;       ///< the highest body's centre at the end (m): has she fallen?
  double seconds = 0;            ///< wall time of the simulation
};

/// Loads the character, runs the hit and writes OUT (atomically) with the baked clip as its only
/// clip. Throws UsageError for OUT not .glb/.gltf/.vrm or the character itself, an unknown clip,
/// rate not a multiple of fps; kinema::Error (place: the bone) for a bone the character does not
/// have or one without a body, a character without skin, a non-finite impulse. Writes nothing on
/// failure.
RagdollResult run_ragdoll(const RagdollRequest& request);

}  // namespace kinema::pipeline
