// kinema/pipeline/ragdoll.h — `kinema ragdoll CHARACTER --clip NAME --hit TIME,BONE,IMPULSE -o OUT`
// as a library call: the character plays its clip until the hit, becomes a ragdoll at that
// instant (kinema/physics/ragdoll.h) with the animation's velocities, takes the impulse on the
// bone's body and falls onto the ground (y = 0) — passive, or powered: its joints keep tracking
// the clip through PD motors while the struck limb goes limp and recovers — and, given get-up
// clips, gets back up: kinema's motion-matching search (kinema/match/pose_match.h) finds the frame
// of the candidates whose pose is nearest the fallen one, whatever way she lies, and the clip
// plays on from there, turned and moved to where she lies, blended in from the ragdoll's pose. The
// result is baked into one clip: the animation up to the hit, the ragdoll after it, the get-up.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "kinema/ik/joint_limits.h"
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
  /// A joint limits file (kinema/retarget/joint_limits_file.h): its limits replace the humanoid
  /// defaults of the joints it names. Empty: the defaults.
  std::string limits_file;
  double seconds_after = 3;  ///< how long the ragdoll runs after the hit (s)
  /// Clips of the character (names or indices) to get up with; empty: she stays down.
  std::vector<std::string> get_up;
  double get_up_blend = 0.4;  ///< s from the ragdoll's pose into the get-up clip
  int fps = 30;               ///< output frames a second
  int rate = 120;             ///< simulation steps a second (a multiple of fps)
  double limp = 0.1;          ///< powered: the struck body's gain right after the hit
  double recovery = 0.5;      ///< powered: gain regained per second
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
  std::string get_up_clip;       ///< the get-up clip chosen (empty: none asked for)
  double get_up_from = 0;        ///< s into it where the fallen pose matched
  double get_up_cost = 0;        ///< the match's normalized squared distance
};

/// Ragdoll joint limits from IK limits, one per skeleton joint (kNone entries are skipped): a
/// hinge stays a hinge, its range widened to hold the rest angle (a ragdoll starts from rest); a
/// swing–twist limit becomes a cone–twist whose circular cone holds the limit's (the larger
/// half-angle), twist range likewise widened to hold 0. Angles kept within ±3.1 rad and cones
/// at least 0.01 rad, as the rigid-body joints need.
std::vector<RagdollJointLimit> ragdoll_limits_from_ik(std::span<const JointLimit> limits);

/// Loads the character, runs the hit and writes OUT (atomically) with the baked clip as its only
/// clip. Throws UsageError for OUT not .glb/.gltf/.vrm or the character itself, an unknown clip
/// (get-up clips included),
/// rate not a multiple of fps; kinema::Error (place: the bone) for a bone the character does not
/// have or one without a body, a character without skin, a non-finite impulse, a malformed limits
/// file (named with its place). Writes nothing on failure.
RagdollResult run_ragdoll(const RagdollRequest& request);

}  // namespace kinema::pipeline
