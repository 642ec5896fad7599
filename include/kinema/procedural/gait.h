// kinema/procedural/gait.h — procedural gaits for any number of legs: a body driven by a velocity
// walks by itself, with no clip.
//
// One cycle phase φ ∈ [0, 1) runs for the whole body. Leg i lifts off at φ = phase_offset_i and
// swings for (1 − duty_factor) of the cycle, then stays planted for duty_factor of it (walks have a
// duty factor above 1/2, so some feet are always down). A planted foot does not move at all. A
// swinging foot is sent to a landing point planned from the body's velocity and turn rate: the body
// frame predicted at touchdown, the foot's neutral spot under its hip in that frame, plus half a
// stance of travel (so that the foot passes under its hip at mid-stance — Raibert's placement), put
// on the ground by a ray cast down (kinema/ik/ground.h). The swing is an arc from the lift-off
// point to the landing point: the foot rises first, travels along the ground, then comes down
// (three overlapping smoothsteps), its top step_height over the highest ground on the way, so stair
// treads and edges are cleared, not clipped; the landing is replanned until the foot starts down.
// Each leg is then a two-bone chain (hip → knee → foot, solve_two_bone) bent towards its knee
// direction.
//
// The body's height follows the feet: the mean ground height under the feet plus the body's rest
// height, smoothed by a critically damped spring, lowered when a foot would be out of reach, and
// bobbing bob_per_cycle times a cycle (twice for a walk: highest at each mid-stance). Its pitch and
// roll follow the plane fitted through the feet (ridge regression, so that feet in a line — a
// biped's — give no tilt across that line). Its yaw turns towards the commanded heading at a
// bounded rate.
//
// Conventions: metres, seconds, radians; world space is right-handed with +Y up; heading 0 faces +Z
// and a positive heading turns towards +X (yaw about +Y). Every joint not in a leg keeps the base
// pose (the rest pose unless one is given). update never throws and never allocates.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "kinema/ik/ground.h"
#include "kinema/math/quat.h"
#include "kinema/math/transform.h"
#include "kinema/math/vec3.h"
#include "kinema/skeleton/skeleton.h"

namespace kinema {

/// One leg: a two-bone chain of joints in the skeleton (hip < knee < foot, each below the last).
struct GaitLeg {
  int hip = -1, knee = -1, foot = -1;
  /// Cycle fraction in [0, 1) at which this foot lifts off (a biped: 0 and 0.5).
  double phase_offset = 0;
  /// Height of the foot joint above the sole, metres (≥ 0): the foot joint is placed this far
  /// above the ground. Negative: measured from the rest pose (the foot joint's height above the
  /// lowest joint of the skeleton, as if the rest pose stood on the floor).
  double ankle_height = -1;
};

struct GaitSettings {
  double cycle_duration = 1.0;      ///< s for one cycle at walking speed (every foot steps once)
  double min_cycle_duration = 0.4;  ///< s: the fastest stepping when strides would be too long
  /// Longest step a foot takes, metres (speed · cycle · duty is the ground a stance covers); the
  /// cycle is shortened (down to min_cycle_duration) to keep strides within it. 0: 0.8 · the
  /// shortest leg's length.
  double max_stride = 0;
  double duty_factor = 0.6;   ///< fraction of the cycle a foot is planted, (0, 1)
  double step_height = 0.08;  ///< m the swing rises above the highest ground between its ends
  /// m the body rides below its rest height over the feet (a rest pose with straight legs has no
  /// room left for a stride).
  double crouch = 0;
  double bob_amplitude = 0.015;  ///< m: body height ± this over the cycle
  double bob_per_cycle = 2;      ///< body bobs per cycle (2 for a walk: once per footfall pair)
  double body_half_life = 0.1;   ///< s, spring on the body's height (critically damped)
  double tilt_weight = 1;        ///< 0: body stays level; 1: follows the plane of the feet
  double max_tilt = 0.5;         ///< rad, largest pitch or roll
  double tilt_half_life = 0.15;  ///< s, springs on pitch and roll
  /// Ridge term of the feet's plane fit, m²: feet spread less than about √ridge in a direction
  /// give (almost) no tilt about it.
  double tilt_ridge = 0.01;
  double turn_rate = 3;    ///< rad/s, fastest turn of the body's heading
  double reach = 0.98;     ///< a hip never gets farther from its foot than this fraction of the leg
  bool align_feet = true;  ///< turn planted feet to the ground's normal (else they stay level)
  double ray_up = 1.5;     ///< m above the body's height a ground ray starts
  double ray_down = 4;     ///< m the ray reaches below that start
};

/// The creatures kinema can build for a gait without a file.
enum class GaitCreature { kBiped, kQuadruped, kHexapod, kSpider };

/// A skeleton with its legs and settings, ready for Gait.
struct GaitRig {
  Skeleton skeleton;
  int body = -1;
  std::vector<GaitLeg> legs;
  GaitSettings settings;
  std::vector<std::string> leg_names;  ///< "left", "right", "left front", … one per leg
};

/// Builds a creature standing at the origin facing +Z: a body joint ("body") and two-bone legs
/// ("<leg>_hip", "<leg>_knee", "<leg>_foot" with the foot joint on the sole) bent at the knee —
/// forward for a biped, up and out for the others — with phase offsets for its usual gait:
/// a biped walks (0, ½), a quadruped does a lateral-sequence walk (hind left 0, fore left ¼, hind
/// right ½, fore right ¾), six and eight legs walk in alternating tripods / tetrapods (½ apart).
GaitRig make_gait_creature(GaitCreature creature);
/// "biped", "quadruped", "hexapod", "spider": true and sets `creature` when the name is one.
bool gait_creature_from_name(const std::string& name, GaitCreature& creature);

/// Live state of one foot.
struct GaitFoot {
  bool swinging = false;
  Vec3 sole;                      ///< where the sole is now (world, metres)
  Vec3 planted;                   ///< stance: where it stands; swing: where it lifted off
  Vec3 landing;                   ///< swing: where it will land (replanned every update)
  Vec3 normal{0, 1, 0};           ///< ground normal where it stands (swing: where it lifted off)
  Vec3 landing_normal{0, 1, 0};   ///< ground normal at the landing point
  double swing_top = 0;           ///< swing: the arc's highest sole height, metres
  bool on_ground = true;          ///< a ray found ground under the planted point
  bool landing_on_ground = true;  ///< a ray found ground under the landing point
  bool swinging_planned = false;  ///< swing: the landing has been planned at least once
};

/// A procedural walker. Construct once, reset at a place, then call update every frame.
class Gait {
 public:
  /// `body` is the joint whose model transform the gait drives (its ancestors keep their base
  /// pose); legs hang below it. The ground may be null (then the plane y = 0); it and the
  /// skeleton must outlive the Gait. Throws kinema::Error for an out-of-range or misordered leg
  /// joint, a leg outside the body, no legs, a zero-length bone, settings out of range (named in
  /// the message).
  Gait(const Skeleton& skeleton, int body, std::vector<GaitLeg> legs, GaitSettings settings,
       const Ground* ground);

  /// Stands still at (x, z) of `position` facing `heading`: feet on the ground at their neutral
  /// spots, body at its height over them, phase 0. The ground is the highest surface under (x, z)
  /// below position.y + 1 km.
  void reset(const Vec3& position, double heading) noexcept;

  /// Advances dt seconds (> 0) with the body's horizontal velocity `velocity` (world, m/s; y is
  /// ignored) and turns towards `heading` (radians) at turn_rate. Writes the pose into `local`
  /// (one transform per joint): `base` (one per joint, or empty for the rest pose) with the
  /// body's ancestors kept, the body moved and every leg solved. A non-finite input or a span of
  /// the wrong size leaves the state and `local` untouched and returns false.
  bool update(double dt, const Vec3& velocity, double heading, std::span<const Transform> base,
              std::span<Transform> local) noexcept;

  /// The pose of the current state without advancing time (after reset: the standing pose).
  bool pose(std::span<const Transform> base, std::span<Transform> local) noexcept;

  const Vec3& position() const noexcept { return position_; }  ///< body's ground point (x, z)
  double heading() const noexcept { return heading_; }
  double phase() const noexcept { return phase_; }         ///< cycle phase in [0, 1)
  double body_height() const noexcept { return body_y_; }  ///< world y of the body joint
  double pitch() const noexcept { return pitch_; }         ///< rad, nose up positive
  double roll() const noexcept { return roll_; }           ///< rad, right side down positive
  /// Cycle length at a speed: cycle_duration, shortened so that strides stay within max_stride.
  double cycle_at(double speed) const noexcept;
  /// The settings in use (max_stride resolved from the legs when it was 0).
  const GaitSettings& settings() const noexcept { return settings_; }
  std::size_t leg_count() const noexcept { return legs_.size(); }
  const GaitFoot& foot(std::size_t leg) const noexcept { return feet_[leg]; }
  const GaitLeg& leg(std::size_t i) const noexcept { return legs_[i]; }
  double leg_length(std::size_t leg) const noexcept { return lengths_[leg]; }
  /// Model transform of the body joint after the last update or pose (world space).
  const Transform& body_transform() const noexcept { return body_world_; }

 private:
  struct LegRest {
    Vec3 neutral;    // the sole relative to the body at rest, y = 0 (the yaw frame at heading 0)
    Vec3 knee_dir;   // unit direction the knee bends towards at rest (heading 0, level)
    Quat foot_rest;  // the foot's model rotation at rest
  };
  bool ground_at(double x, double z, double from_y, GroundHit& hit) const noexcept;
  /// Where leg `leg` lands when it touches down in time_to_touchdown seconds and then stands for
  /// stance_time, on the ground (normal and whether a ray found it returned too).
  Vec3 landing_point(std::size_t leg, double time_to_touchdown, double stance_time, Vec3& normal,
                     bool& on_ground) const noexcept;
  double highest_ground(const Vec3& from, const Vec3& to) const noexcept;
  void settle_body(double dt) noexcept;
  bool write_pose(std::span<const Transform> base, std::span<Transform> local) noexcept;

  const Skeleton* skeleton_;
  int body_;
  std::vector<GaitLeg> legs_;
  GaitSettings settings_;
  const Ground* ground_;
  std::vector<LegRest> rest_;
  std::vector<double> lengths_;
  double body_rest_height_ = 0;  // body joint above the soles at rest
  Quat body_rest_rotation_;      // the body's model rotation at rest (heading 0)
  std::vector<GaitFoot> feet_;
  std::vector<char> window_;      // per leg: the last update was inside its swing window
  std::vector<Transform> model_;  // scratch: model transforms
  Vec3 position_{0, 0, 0}, velocity_{0, 0, 0};
  double heading_ = 0, yaw_rate_ = 0, phase_ = 0, cycle_ = 1;
  double body_y_ = 0, body_y_velocity_ = 0, pitch_ = 0, pitch_velocity_ = 0, roll_ = 0,
         roll_velocity_ = 0;
  Transform body_world_;
};

}  // namespace kinema
