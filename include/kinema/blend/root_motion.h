// kinema/blend/root_motion.h — root motion: extracting a clip's ground motion, applying it to a
// character, in-place clips, and a foot-sliding metric.
//
// Root motion takes the root's displacement out of the clip every frame and gives it to the
// character's movement code, so the feet stay planted as captured. Only the ground-plane part is
// taken: the x and z translation (Y is up) and the yaw (rotation about +Y). The vertical motion
// and the rest of the rotation (pitch, roll, the bob and sway of a walk) stay in the clip.
//
// Frames. The path is stored in the character's own frame at the clip's start (frame 0 at the
// origin, heading 0), so the motion between any two clip times is a delta in the character's
// frame at the first of them, and can be applied to a character facing any way:
//   world_translation += R_y(world_yaw)·delta.translation,  world_yaw += delta.yaw.
// E.g. a walk moving 1.8 m per 1.2 s cycle moves 0.025 m per frame at 60 fps along +Z; a
// character at 30° about +Y moves by R_y(30°)·(0, 0, 0.025) = (0.0125, 0, 0.0217) m.
//
// Heading. The yaw is read from the joint's forward axis projected on the ground plane:
// heading = atan2(f.x, f.z), so +Z (kinema's character forward, docs/conventions.md) is yaw 0
// and +X is +90°. By default the forward axis is the joint-local direction that points along
// +Z in the rest pose (the character faces +Z at rest), so the joint's own bone axes (which in
// FBX or BVH rigs rarely point forward) do not matter.
//
// Units follow the clip: metres after kinema's importers (a CMU BVH in ASF units is converted to
// metres on load; its SourceInfo records the original unit).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "kinema/clip/clip.h"
#include "kinema/math/transform.h"
#include "kinema/math/vec3.h"

namespace kinema {

class Skeleton;

/// A motion on the ground plane: a translation (x, 0, z) in metres and a turn of `yaw` radians
/// about +Y, expressed in the character's frame at the start of the motion.
struct RootDelta {
  Vec3 translation{0, 0, 0};
  double yaw = 0;
};

/// world_translation += R_y(world_yaw)·delta.translation; world_yaw += delta.yaw.
/// (The character's world transform is translation(world_translation)·R_y(world_yaw).)
void apply_root_motion(const RootDelta& delta, Vec3& world_translation, double& world_yaw);

/// Composition: the motion `first` followed by `second` (second is in the frame first ends in).
RootDelta compose(const RootDelta& first, const RootDelta& second);

/// The character transform of a ground placement: translation(p.translation)·R_y(p.yaw).
Transform ground_transform(const RootDelta& placement);

struct RootMotionOptions {
  /// Joint whose motion is extracted. -1: the first joint named "Hips", "hips", "Hip", "hip",
  /// "pelvis" or "Pelvis" (also with a "prefix:" as in "mixamorig:Hips"), else the skeleton's
  /// first root.
  int joint = -1;
  /// The joint-local axis that points where the character faces. Unset: the direction that is
  /// +Z in the rest pose, i.e. rest_model_rotation⁻¹·(0, 0, 1).
  std::optional<Vec3> forward_axis;
  /// Frames per second at which the motion is sampled; 0: the clip's sample_rate, or 30 when it
  /// has none. There are n = round(duration·rate) + 1 frames, evenly spaced at
  /// i·duration/(n − 1), so the last lands exactly on the duration (sample_rate() reports the
  /// rate actually used, (n − 1)/duration).
  double sample_rate = 0;
};

/// A clip's ground motion, sampled at a uniform rate. Built offline; queries never allocate.
class RootMotion {
 public:
  RootMotion() = default;

  /// Samples `clip` on `skeleton` and reads the chosen joint's model-space ground position and
  /// heading at every frame. When the forward axis is (nearly) vertical at a frame, the heading
  /// of the previous frame is kept. Headings are unwrapped, so a turning clip's yaw keeps growing
  /// past ±π. Throws kinema::Error when the clip does not validate against the skeleton, the
  /// skeleton is empty, the joint is out of range, the forward axis is zero or not finite, or the
  /// duration or rate is not finite and positive (a clip of duration 0 is refused too).
  static RootMotion extract(const Clip& clip, const Skeleton& skeleton,
                            const RootMotionOptions& options = {});

  int joint() const { return joint_; }
  double duration() const { return duration_; }  ///< seconds
  double sample_rate() const { return rate_; }   ///< frames per second, (n − 1)/duration
  int frame_count() const { return static_cast<int>(path_.size()); }
  double frame_time(int frame) const;  ///< seconds (the last is duration())
  /// The joint-local forward axis that was used (unit).
  const Vec3& forward_axis() const { return forward_; }

  /// Where the clip starts, in the clip's model space: the joint's ground position at frame 0
  /// (x, 0, z) and its heading. Placing a character at start() and applying the motion keeps
  /// the in-place clip (make_in_place) exactly where the original clip was.
  const RootDelta& start() const { return start_; }
  /// The path per frame, relative to start(): frame 0 is (0, 0, 0) with yaw 0.
  std::span<const RootDelta> path() const { return path_; }

  /// The path at clip time t (seconds, clamped to [0, duration]), interpolated linearly between
  /// frames (translation and yaw).
  RootDelta at(double t) const;

  /// Motion from clip time t0 to t1, in the character's frame at t0: translation
  /// R_y(−yaw(t0))·(p(t1) − p(t0)) and yaw(t1) − yaw(t0). WrapMode::Clamp clamps both times to
  /// [0, duration]; WrapMode::Loop treats the clip as a cycle repeated end to start (each lap
  /// adds the whole-cycle motion, so t1 − t0 may span any number of laps, either direction).
  /// Composes exactly (to rounding): delta(a, b) then delta(b, c) is delta(a, c). Returns false,
  /// writing nothing, when a time is not finite, the motion is empty, or the interval spans more
  /// than 4·10¹⁵ laps.
  bool delta(double t0, double t1, WrapMode mode, RootDelta& out) const;

 private:
  int joint_ = -1;
  double duration_ = 0, rate_ = 0;
  Vec3 forward_{0, 0, 1};
  RootDelta start_;
  std::vector<RootDelta> path_;
};

/// Removes the extracted motion from the clip: returns a copy whose motion joint has, at each of
/// motion's frames, translation and rotation keys (LINEAR) such that
///   ground_transform(start() ∘ path(t)) · FK_in_place(t) = FK_original(t)
/// for every joint at every frame time t. The joint's model-space ground position becomes 0 and
/// its heading 0 at every frame; its height and the non-yaw part of its rotation are kept.
/// When the joint has parents only its local keys change; the parents (an armature node, say)
/// then move with the character's placement, as a character's root should. Other tracks, the
/// joint's scale keys and the morph tracks are copied unchanged. Between frames the result is
/// interpolated, so it matches the original to within the interpolation of one frame step.
/// Throws kinema::Error as RootMotion::extract does, or when `motion` was not extracted for
/// this clip's duration or a joint of this skeleton.
Clip make_in_place(const Clip& clip, const Skeleton& skeleton, const RootMotion& motion);

// ---- foot sliding ----------------------------------------------------------------------------

/// Contact detection: a foot is in contact at a frame when its height is at most
/// `height_threshold` above the lowest height that foot reaches in the sequence (so ankle joints,
/// which never touch y = 0, work) and its horizontal speed is at most `speed_threshold`. The
/// speed default is high on purpose: a foot that slides at 0.5 m/s must still count as planted
/// for the slide to be measured. To compare two motions (say root motion against code-driven
/// movement), detect contacts on the reference and measure both with the same flags.
struct FootContactOptions {
  double height_threshold = 0.05;  ///< metres above the foot's lowest point
  double speed_threshold = 1.0;    ///< metres per second, horizontal (x, z)
};

/// Sliding of one foot (or of all feet together) over the frame-to-frame segments where the foot
/// is in contact at both ends.
struct FootSliding {
  int contact_segments = 0;   ///< segments counted
  double mean_speed = 0;      ///< m/s: drift_distance / (contact_segments·dt); 0 without contact
  double max_speed = 0;       ///< m/s: largest segment's horizontal speed
  double drift_distance = 0;  ///< metres of horizontal world movement while in contact
};

struct FootSlidingReport {
  std::vector<FootSliding> feet;  ///< one per foot, in the order given
  FootSliding total;              ///< all feet's contact segments together
};

/// Contact flags, frame-major (frame_count × foot_count), for world-space foot positions given
/// frame-major (`positions[frame·foot_count + foot]`) at a fixed step dt. Speeds are central
/// differences (one-sided at the ends). Throws kinema::Error when foot_count is not positive,
/// the size is not a multiple of it, dt or a threshold is not positive and finite, or a
/// position is not finite.
std::vector<uint8_t> detect_foot_contacts(std::span<const Vec3> positions, int foot_count,
                                          double dt, const FootContactOptions& options = {});

/// Horizontal drift of the feet while in contact. `contacts` as detect_foot_contacts returns
/// (e.g. detected on a reference motion and measured on another). Throws kinema::Error on sizes
/// that do not match, a non-positive or non-finite dt, or a non-finite position.
FootSlidingReport measure_foot_sliding(std::span<const Vec3> positions, int foot_count, double dt,
                                       std::span<const uint8_t> contacts);
/// detect_foot_contacts on the same positions, then measure_foot_sliding.
FootSlidingReport measure_foot_sliding(std::span<const Vec3> positions, int foot_count, double dt,
                                       const FootContactOptions& options = {});

/// World positions of the `feet` joints of `clip` played at `sample_rate` frames per second,
/// frame-major, at the frames RootMotion uses: n = sampled_frame_count(clip, rate) frames at
/// i·duration/(n − 1) (so dt = duration/(n − 1), the rate's own step when duration·rate is a
/// whole number). `character` holds the
/// character's world transform at each of those frames (placement·model); empty means identity
/// (the clip's own model space, i.e. with its root motion left in). Throws kinema::Error when
/// the clip does not validate, a foot index is out of range, the rate is not positive and
/// finite, or `character` is neither empty nor one per frame.
std::vector<Vec3> foot_world_positions(const Clip& clip, const Skeleton& skeleton,
                                       std::span<const int> feet, double sample_rate,
                                       std::span<const Transform> character = {});

/// Number of frames foot_world_positions samples: round(duration·rate) + 1 (at least 2).
/// Throws kinema::Error when the rate or the clip's duration is not finite and positive.
int sampled_frame_count(const Clip& clip, double sample_rate);

}  // namespace kinema
