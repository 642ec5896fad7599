// kinema/retarget/ground.h — putting a retargeted humanoid clip's feet back on the floor without
// bending its knees to get there.
//
// A clip moved onto a character with other proportions lands its feet above or below the floor
// and slides them. Forcing a planted foot to the floor with leg IK alone is a trap: two equal
// bones whose hip sits at 99 % of their reach above the target must bend the knee by
// 2·acos(0.99) = 16.2°, a visible crouch and a pop where the plant starts. Grounding moves the
// hips instead, and uses leg IK only for what is left. Steps, at `rate` frames per second:
//
//  1. Contacts: detect_foot_plants (kinema/blend/foot_contact.h) on each foot's ankle and toe.
//  2. Plants are locked horizontally: the foot's slower point (heel or toe, so heel roll is kept)
//     is held at its mean position over the plant — the foot is translated by the opposite of
//     that point's horizontal drift. A plant is released early when the drift from its start
//     passes drift_limit or the foot's heading turns more than turn_limit. The lock fades in
//     over `ramp` seconds before the plant and out over `ramp` after it (smoothstep); airborne
//     frames (no foot planted nor ramping) keep the clip's legs.
//  3. Vertically, a planted foot's sole clearance (kinema/retarget/metrics.h: the lower of ankle
//     and toe against its stance height above the floor) is brought to 0, with the same ramps.
//  4. Hips: per frame, for each locked foot (ramps included), the hips offset at which the leg
//  reaches
//     that foot's target with the knee flexion the clip had there, found by bisection on the
//     offset (the leg re-solved at each step); with both feet planted the lower offset. A
//     near-straight knee thus stays as straight as it was. The offsets are carried linearly
//     across frames with no planted foot (held before the first and after the last), clamped to
//     ±max_hips_offset and smoothed by a Gaussian of σ = hips_smoothing seconds so they never pop.
//  5. Legs: each foot with a lock weight is solved with two-bone IK (kinema/ik/two_bone.h, pole
//     from the current knee, the foot's model rotation kept) to its target, so bone lengths are
//     kept exactly (only rotations change).
//
// The result holds LINEAR keys at every frame for the hips translation and the upper leg, lower
// leg and foot rotations; every other track is copied unchanged.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "kinema/blend/foot_contact.h"
#include "kinema/clip/clip.h"
#include "kinema/retarget/metrics.h"
#include "kinema/retarget/rig.h"
#include "kinema/skeleton/skeleton.h"

namespace kinema {

/// Settings of ground_feet; lengths in metres, times in seconds, angles in degrees.
struct GroundingOptions {
  FootPlantOptions contacts;  ///< contact detection (also what the metrics use)
  /// Floor height and stance heights (MotionMetricsOptions); empty: the rest pose's when it
  /// stands, else the clip's own (kinema/retarget/metrics.h).
  double floor_height = 0;
  std::vector<double> ankle_heights, toe_heights;
  double ramp = 0.15;            ///< s: lock fade-in before and fade-out after each plant (≥ 0)
  double drift_limit = 0.15;     ///< m: release a plant whose slower point drifted this far
  double turn_limit = 45;        ///< degrees: release a plant whose foot turned this much
  double hips_smoothing = 0.08;  ///< s: σ of the Gaussian smoothing of the hips offset (0: off)
  double max_hips_offset = 0.2;  ///< m: the hips move at most this far up or down
  int bisection_steps = 40;      ///< halvings of the hips-offset bracket (≥ 1)
  /// Called after each frame of the final pass with (frames done, frame count); may be empty.
  std::function<void(int, int)> progress;
};

/// What ground_feet found and did.
struct GroundingReport {
  int frames = 0;
  double rate = 0;
  std::vector<int> plants;          ///< per leg: plants locked
  std::vector<int> planted_frames;  ///< per leg: frames locked at full weight
  std::vector<int> early_releases;  ///< per leg: plants released by drift_limit or turn_limit
  double hips_offset_min = 0, hips_offset_max = 0;  ///< metres, after smoothing
  MotionMetrics before, after;  ///< measure_motion of the input and of the result
};

/// Grounds `clip` (already on `skeleton`) as described above. Throws kinema::Error when the clip
/// does not validate against the skeleton (or holds NaN keys), the legs are not chains of it, the
/// rate or the clip's duration is not finite and positive, or an option is out of range.
Clip ground_feet(const Skeleton& skeleton, const HumanoidLegs& legs, const Clip& clip, double rate,
                 const GroundingOptions& options = {}, GroundingReport* report = nullptr);
/// The same, reusing `clip`'s tracks for the result (no copy of a long clip's keys).
Clip ground_feet(const Skeleton& skeleton, const HumanoidLegs& legs, Clip&& clip, double rate,
                 const GroundingOptions& options = {}, GroundingReport* report = nullptr);

}  // namespace kinema
