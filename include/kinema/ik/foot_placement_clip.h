// kinema/ik/foot_placement_clip.h — foot placement over a whole clip, and how well feet meet the
// ground (what `kinema ik feet` runs and prints).
//
// place_feet_on_ground() plays a clip frame by frame at a fixed rate — sample the pose, forward
// kinematics, build each leg (hip, knee, ankle in the clip's model space), update_foot_placement
// with the springs carried from frame to frame, apply_foot_placement — and returns a copy of the
// clip whose pelvis translation and leg rotations are keyed at every frame (LINEAR); every other
// track is copied unchanged. The ground is in the clip's model space (metres, +Y up), so a clip
// with its root motion left in walks across it.
//
// The sole. A foot's sole point is its ankle minus ankle_height along +Y (the point foot
// placement casts its ray from). By default the animation's floor is the lowest height any foot
// joint (ankle or toe) reaches in the clip, and each ankle_height is that ankle's lowest height
// above the floor, so at its lowest each sole touches the floor.
//
// Metrics (ClipFootPlacementReport), per leg and overall, with the ground straight below the sole
// point (frames where no ground is under the foot are not counted):
//   - penetration: how far the sole is below the ground, max over all frames and mean over the
//     planted frames (0 where it is above);
//   - float: how far the sole hovers above the ground on the planted frames, max and mean;
//   - knee jump: the largest frame-to-frame change of the knee bend (the angle between thigh and
//     shin), degrees;
//   - reach failures: frames where the leg could not reach its target (after placement only).
// Planted frames are those where the animated foot stands on its floor: sole at most
// contact_height above the floor and the ankle's horizontal speed at most contact_speed. They are
// found once on the input animation and used for every measurement, so before and after count
// the same frames.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "kinema/clip/clip.h"
#include "kinema/ik/foot_placement.h"
#include "kinema/skeleton/skeleton.h"

namespace kinema {

/// The joints foot placement moves: the pelvis (translated) and each leg with an optional toe
/// joint (used only to find the floor).
struct FootPlacementRig {
  int pelvis = -1;
  std::vector<FootPlacementJoints> legs;  ///< at most kMaxFootPlacementLegs
  std::vector<int> toes;                  ///< empty or one per leg; -1 for none
};

struct ClipFootPlacementOptions {
  /// floor_height is replaced by `floor_height` below when that is set, else by the floor found
  /// in the clip; forward is replaced per frame by the pelvis heading (the direction that is +Z
  /// in the rest pose, turned with the pelvis and flattened onto the ground).
  FootPlacementSettings settings;
  double fps = 30;                     ///< frames per second at which the clip is played (> 0)
  std::optional<double> floor_height;  ///< unset: the lowest foot joint over the clip
  std::vector<double> ankle_heights;   ///< empty: each ankle's lowest height above the floor
  double contact_height = 0.03;        ///< metres above the floor for a planted frame
  double contact_speed = 0.5;          ///< m/s, horizontal, for a planted frame
  /// Carry the whole character up and down with the ground under the pelvis (what a game's
  /// character controller does on stairs and slopes), smoothed by a spring of
  /// `follow_half_life` seconds; foot placement then works relative to that height. Off: the
  /// character stays at the clip's height and the pelvis is only ever lowered, so ground well
  /// above the floor is reached by bending the knees (or not at all).
  bool follow_ground = false;
  double follow_half_life = 0.15;
  /// Called after each frame with (frames done, frame count); may be empty.
  std::function<void(int, int)> progress;
};

/// One leg's (or all legs') contact metrics; lengths in metres, angles in degrees.
struct FootContactMetrics {
  double penetration_max = 0;
  double penetration_mean = 0;  ///< over planted frames
  double float_max = 0;         ///< over planted frames
  double float_mean = 0;        ///< over planted frames
  double knee_jump_max = 0;     ///< degrees
  int reach_failures = 0;
  int planted_frames = 0;  ///< planted frames with ground below the foot
  int frames = 0;          ///< frames with ground below the foot
};

struct FootContactReport {
  std::vector<FootContactMetrics> legs;
  FootContactMetrics overall;  ///< maxima over legs; means over all legs' planted frames
};

/// What place_feet_on_ground found and did.
struct ClipFootPlacementReport {
  int frames = 0;
  double fps = 0;
  double floor_height = 0;
  std::vector<double> ankle_heights;
  FootContactReport on_floor;    ///< the input on its own flat floor (the capture's contact)
  FootContactReport before;      ///< the input on the ground, unchanged
  FootContactReport after;       ///< the result on the ground
  double pelvis_offset_min = 0;  ///< lowest pelvis offset foot placement applied, metres (≤ 0)
  /// Range of the follow_ground height, metres (0 and 0 when off).
  double follow_min = 0, follow_max = 0;
};

/// Runs foot placement over `clip` (see above). Throws kinema::Error when the clip does not
/// validate against the skeleton, the rig's joints are out of range or not hip → knee → ankle
/// chains under the pelvis, there are no legs or too many, ankle_heights has the wrong size or a
/// negative or non-finite value, fps or a threshold is not finite and positive, or the settings
/// are invalid. `report` (optional) receives the metrics.
Clip place_feet_on_ground(const Clip& clip, const Skeleton& skeleton, const FootPlacementRig& rig,
                          const Ground& ground, const ClipFootPlacementOptions& options,
                          ClipFootPlacementReport* report = nullptr);

}  // namespace kinema
