// kinema/retarget/metrics.h — how good a humanoid clip's contact with the floor is, measured the
// same way for every report (retargeting, grounding, `kinema play`, `match run`, `ik feet`).
//
// The clip is played at a fixed rate: n = round(duration·rate) + 1 frames at i·duration/(n − 1)
// (sampled_frame_count, kinema/blend/root_motion.h), in the clip's model space (metres, +Y up).
//
// The floor is the plane y = floor_height (0 by default: every importer puts a character's
// floor there). Each foot has two *stance heights*, those of its ankle and of its toe above the
// floor when the foot stands flat: given in the options, else those of the rest pose when it is a
// standing pose (rest_foot_heights), else the clip's own (each point's floor_percentile height
// over the clip, less floor_height: some BVH exports' zero-rotation pose is not a standing one).
// At a frame, the foot's *sole clearance* is
//     c = min(ankle.y − floor − ankle_height, toe.y − floor − toe_height)
// (the ankle term alone without a toe joint): 0 when the lower of the two points, relative to
// where it sits on a flat-standing foot, touches the floor; c < 0 means it is c below the floor.
//   - penetration: max(0, −c), in cm, its maximum over all frames (a swinging foot through the
//     floor counts too) and its mean over the planted frames;
//   - float: max(0, c) on the planted frames, in cm, maximum and mean;
//   - foot skate: kinema/blend/foot_contact.h on the ankle and toe tracks, cm/s;
//   - knee jump: the largest frame-to-frame change of knee flexion (the angle between the thigh
//     hip→knee and the shin knee→ankle: 0° straight), degrees;
//   - bone-length error: max over frames and over every joint with a parent of
//     | |joint − parent| − the same distance in the rest pose |, metres, leaving out joints whose
//     translation the clip animates (the hips move away from their parent by design) and
//     joints whose parent's scale it animates;
//   - pose error (only against a reference clip on the same skeleton): over frames and joints, the
//     mean squared joint-position error divided by the character's height squared (the
//     normalization of Aberman et al., "Skeleton-Aware Networks for Deep Motion Retargeting",
//     2020), and the plain mean joint-position error in metres. Height: the rest pose's extent
//     along Y over all joints.
#pragma once

#include <optional>
#include <vector>

#include "kinema/blend/foot_contact.h"
#include "kinema/character/asset.h"
#include "kinema/clip/clip.h"
#include "kinema/retarget/rig.h"
#include "kinema/skeleton/skeleton.h"

namespace kinema {

/// Where a clip's stance heights came from.
enum class StanceHeightSource { Options, RestPose, Clip };

/// Each leg's ankle and toe heights above the floor when the foot stands flat, metres (toe =
/// ankle's where a leg has no toe joint).
struct StanceHeights {
  std::vector<double> ankle, toe;  ///< one per leg of HumanoidLegs::rig
  StanceHeightSource source = StanceHeightSource::RestPose;
};

/// The rest pose's stance heights, measured from its floor min(0, the lowest rest-pose ankle or
/// toe): a character modelled standing on the origin plane (VRM, glTF) from y = 0, one whose rest
/// pose hangs below its hips at the origin (BVH) from its lowest foot joint. Throws
/// kinema::Error when the legs are not chains of the skeleton.
StanceHeights rest_foot_heights(const Skeleton& skeleton, const HumanoidLegs& legs);

/// True when the rest pose is a standing pose: every leg's ankle at least 90 % of the leg's
/// length (upper plus lower leg) below its hip. Throws as rest_foot_heights.
bool rest_pose_stands(const Skeleton& skeleton, const HumanoidLegs& legs);

struct MotionMetricsOptions {
  FootPlantOptions contacts;  ///< how planted frames are found (skate, penetration, float)
  double floor_height = 0;    ///< metres, model-space y of the floor
  /// Stance heights above the floor, metres, one per leg; empty: see the top of this file.
  std::vector<double> ankle_heights, toe_heights;
};

/// One leg's metrics. Lengths in cm, speeds in cm/s, angles in degrees.
struct LegMetrics {
  FootSkate skate;
  int planted_frames = 0;       ///< planted frames (detect_foot_plants)
  double penetration_max = 0;   ///< cm, over all frames
  double penetration_mean = 0;  ///< cm, over the planted frames (0 without any)
  double float_max = 0;         ///< cm, over the planted frames
  double float_mean = 0;        ///< cm, over the planted frames
  double knee_jump_max = 0;     ///< degrees
  double knee_flexion_max = 0;  ///< degrees, the most the knee bends in the clip
};

/// Joint-position error against a reference clip on the same skeleton.
struct PoseError {
  double mse_over_height_squared = 0;  ///< mean over frames and joints of |Δp|² / height²
  double mean_joint_error = 0;         ///< mean over frames and joints of |Δp|, metres
  double height = 0;                   ///< metres, the rest pose's Y extent
};

struct MotionMetrics {
  int frames = 0;
  double rate = 0;                      ///< frames per second played at
  std::vector<LegMetrics> legs;         ///< in the order of HumanoidLegs::rig.legs
  FootSkate skate;                      ///< all feet's planted frames together
  double penetration_max = 0;           ///< cm, the legs' largest
  double float_max = 0;                 ///< cm, the legs' largest
  double knee_jump_max = 0;             ///< degrees, the legs' largest
  double bone_length_error_max = 0;     ///< metres
  std::optional<PoseError> pose_error;  ///< set when a reference clip was given
  StanceHeights stance;                 ///< the stance heights the clearances used
};

/// All the metrics above for `clip` on `skeleton` played at `rate` frames per second, and the
/// pose error against `reference` (same skeleton; played at the same times) when it is given.
/// Throws kinema::Error when a clip does not validate against the skeleton, the rate or the
/// duration is not finite and positive, the legs are not hip → knee → ankle chains of this
/// skeleton, the stance heights have the wrong count, or a sampled position is not finite (NaN
/// keys).
MotionMetrics measure_motion(const Skeleton& skeleton, const HumanoidLegs& legs, const Clip& clip,
                             double rate, const MotionMetricsOptions& options = {},
                             const Clip* reference = nullptr);

/// Foot skate of any humanoid clip, for reports that have no legs at hand (`kinema play`,
/// `match run`): the ankles of the humanoid map (leftFoot, rightFoot) with its toes (leftToes,
/// rightToes) where both are mapped, else the ankles alone.
struct HumanoidFootSkate {
  FootSkate skate;         ///< both feet together
  bool with_toes = false;  ///< false: ankles alone (the map has no toes), heel roll counts
};

/// The skate of `clip` on `character`'s skeleton at `rate`, or nullopt when the character has no
/// humanoid map with both feet, or the clip no duration. Throws kinema::Error as measure_motion.
std::optional<HumanoidFootSkate> humanoid_foot_skate(const Asset& character, const Clip& clip,
                                                     double rate,
                                                     const FootPlantOptions& options = {});

}  // namespace kinema
