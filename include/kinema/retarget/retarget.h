// kinema/retarget/retarget.h — retargeting a clip between two humanoids of different proportions
// and rest poses.
//
// The two skeletons are matched through their humanoid maps (VRM 1.0 bone names). Nothing
// assumes the two rest poses are the same pose: each mapped bone is aligned by its rest
// *direction* (the world direction from the bone to its humanoid child: upper arm → lower arm,
// foot → toes, hand → middle finger…), so an A-pose source drives a T-pose target and the other
// way round. Per frame and per mapped bone, with S the source bone's world rotation, S₀ its rest
// world rotation, T₀ the target's and Y the facing turn:
//
//     Δ = Y · S · S₀⁻¹ · Y⁻¹            (the source bone's world motion since rest, turned)
//     A = shortest arc taking the target's rest direction onto Y · the source's rest direction
//     T = Δ · A · T₀                    (the target bone's world rotation)
//
// so the target bone points where the source bone points, with the source's twist. A bone with
// no humanoid child on both sides (head, a hand without fingers) takes its parent bone's A.
// Target joints that are not mapped keep their rest rotation relative to their parent, except
// those on the spine (hips → neck): the spine is treated as one chain parameterized by rest arc
// length, and each target spine joint takes the source chain's rotation interpolated at its own
// arc length, so 1–4 source spine bones drive 1–4 target spine bones with the bend spread.
//
// Only rotations change: every target joint keeps its rest local translation, so the target's
// bone lengths are kept exactly. The hips translation is the source's, scaled: horizontally as a
// displacement from each rig's rest hips position, by the ratio of leg lengths (thigh + shin at
// rest: stride length goes with leg length); vertically as a height above the floor, by the
// ratio of standing hips heights above the ankles (rigs differ in where the hip joints sit
// relative to the hips joint): the rest poses' — or, for a source whose rest pose does not have
// its legs hanging down (some BVH exports' zero pose), the 90th percentile over the clip of its
// hips' height above the lower ankle. The target stands on y = 0. So does the
// source when its rest pose does (its lower rest ankle no lower than 2 % and no higher than 50 %
// of its leg length above y = 0, as glTF, VRM and FBX characters stand); a source whose rest pose
// hangs from the origin (BVH mocap) says nothing about its floor, and then the lowest its ankles
// get over the clip is taken to stand on the floor (at the target's rest ankle height) — unless
// the target hangs from the origin too, when heights are simply scaled. Foot
// grounding (kinema/retarget/ground.h) plants the feet frame by frame afterwards. Facing comes from
// the rest poses (forward = left hip → right hip × up), so a VRM 0.x avatar facing −Z and a
// rig facing +X are turned to match. Hence retargeting onto the same skeleton is the identity
// and onto a uniformly scaled copy scales every position exactly (tests/retarget).
//
// Two modes:
//  * Rotation (default): the transfer above.
//  * Direction: after the transfer, each bone with a humanoid child is turned (shortest arc, so
//    its twist stays) to point along the source's *current* segment (source child position −
//    source bone position) — each segment's world direction times the target's own length.
//    This follows the source's joint positions rather than its rotations, which matters when
//    the source's segments pass through unmapped joints (twist bones, extra spine bones) or
//    carry translation keys, as pose-estimation output does.
#pragma once

#include <functional>
#include <string>

#include "kinema/character/asset.h"

namespace kinema {

enum class RetargetMode {
  Rotation,   ///< world rotation deltas with rest-direction alignment
  Direction,  ///< as Rotation, then each segment turned onto the source segment's direction
};

struct RetargetOptions {
  RetargetMode mode = RetargetMode::Rotation;
  /// Frames per second of the result; 0 = the source clip's sample_rate (kDefaultSampleRate
  /// when it has none). The result is keyed at i / rate for i = 0… and at the clip's end.
  double sample_rate = 0;
  /// Fraction in [0, 1] of the hand's twist about the forearm axis moved into the lower arm
  /// (0 = off). A forearm's skin twists along its length; a rig without twist bones candy-wraps
  /// at the wrist when the hand alone turns, and 0.5 spreads the turn over the forearm instead.
  /// The hand's world rotation and every joint position are unchanged.
  double forearm_twist = 0;
  /// Drive the fingers when both humanoids map them (else they keep the target's rest pose).
  bool fingers = true;
  /// Called with (frames done, frame count) every 256 frames and at the end; may be empty.
  std::function<void(long, long)> progress;
};

/// Retargets `clip` of `source` (humanoid map `source_map`) onto `target` (`target_map`), as
/// described above. The result has LINEAR keys: a rotation track on each driven target joint and
/// a translation track on the target hips; its name is the source clip's. `source_file` and
/// `target_file` name the two sides in errors. Throws kinema::Error when either map lacks the hips
/// or both legs (upper leg, lower leg, foot), names a joint out of range, a mapped bone has zero
/// length at rest (its humanoid child sits on it), or a source key is not finite (naming the joint
/// and time); the options are checked too (a rate that is not positive and finite, a twist fraction
/// outside [0, 1]).
Clip retarget_clip(const Skeleton& source, const Humanoid& source_map, const Clip& clip,
                   const Skeleton& target, const Humanoid& target_map,
                   const RetargetOptions& options = {}, const std::string& source_file = {},
                   const std::string& target_file = {});

/// Retargets clip `clip` of `source` onto `target`'s skeleton with each asset's humanoid map (its
/// own, or one recognized from its joint names). Throws kinema::Error when a map cannot be found
/// or the clip index is out of range, and as retarget_clip.
Clip retarget_humanoid(const Asset& source, int clip, const Asset& target,
                       const RetargetOptions& options = {});

}  // namespace kinema
