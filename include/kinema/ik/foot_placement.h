// kinema/ik/foot_placement.h — foot placement on uneven ground.
//
// Animation is captured on a flat floor. Per frame and per leg: (1) a ray is cast down from above
// the animated foot to find the ground height and normal; the leg's ground offset is the ground
// height minus the animation's floor height; (2) the pelvis is lowered by the largest downward
// offset (never raised above the animation), so that a foot that must go down can reach; (3) each
// leg is solved as a two-bone chain (solve_two_bone) from the lowered hip to the animated ankle
// moved by its offset, with the knee pole forward (pole = knee + forward); (4) the foot is turned
// from up to the ground normal (optionally clamped to a maximum tilt). All offsets and normals are
// smoothed over time with critically damped springs so that steps do not pop.
//
// Everything is in one space (model or world), metres, seconds, radians, +Y up. Per frame the
// functions never throw, never allocate and never return NaN; bad input is reported in the
// status. FootPlacementState holds the springs between frames.
#pragma once

#include <array>
#include <span>

#include "kinema/ik/ground.h"
#include "kinema/ik/two_bone.h"
#include "kinema/math/quat.h"
#include "kinema/math/transform.h"
#include "kinema/math/vec3.h"

namespace kinema {

/// Most legs one FootPlacementState smooths (bipeds use 2, quadrupeds 4).
inline constexpr int kMaxFootPlacementLegs = 4;

/// Critically damped spring (x'' = −2ω·x' − ω²·(x − goal)) advanced exactly by dt seconds.
/// The half-life h (seconds) is the time in which a spring starting at rest covers half of a
/// step: the remaining fraction is (1 + ωt)·e^(−ωt), which is 1/2 at ωt = 1.678346990016661, so
/// ω = 1.678346990016661 / h. h ≤ 0 (or not finite) snaps to the goal with zero velocity; dt ≤ 0
/// or non-finite leaves the spring unchanged. From rest the spring approaches the goal
/// monotonically and never overshoots it.
void critically_damped_spring(double& x, double& velocity, double goal, double half_life,
                              double dt) noexcept;

/// One leg of the animated pose, positions from forward kinematics (same space as the ground).
struct FootPlacementLeg {
  Vec3 hip;    ///< hip joint (chain root), metres
  Vec3 knee;   ///< knee joint (chain mid)
  Vec3 ankle;  ///< ankle joint (chain end)
  /// Height of the ankle above the sole, metres (≥ 0). The ray starts above the sole point
  /// ankle − ankle_height·Y; the ankle keeps this height above the ground it is placed on.
  double ankle_height = 0;
};

/// Tuning. Defaults suit a human in metres.
struct FootPlacementSettings {
  /// Height of the animation's floor (the y the animated soles stand on), metres.
  double floor_height = 0;
  /// Character forward direction (need not be unit); the knee pole is knee + forward.
  Vec3 forward{0, 0, 1};
  /// The ray starts this far above max(sole.y, floor_height), metres: the highest step found.
  double ray_up = 0.5;
  /// The ray reaches this far below floor_height, metres: the deepest hole found. Where no
  /// ground is hit the leg's offset is 0 and its normal is up (GroundHit not found).
  double ray_down = 0.5;
  /// Largest foot tilt from up towards the ground normal, radians; a negative value means no
  /// clamp.
  double max_tilt = 0.6981317007977318;  // 40°
  /// Spring half-lives in seconds (see critically_damped_spring); 0 disables the smoothing.
  double pelvis_half_life = 0.08;
  double foot_half_life = 0.05;  ///< for each foot's offset and ground normal
  /// Two-bone soft-IK distance (TwoBoneInput::soft_distance), metres; 0 = off.
  double soft_distance = 0;
};

/// Spring state carried from frame to frame. Value-initialised = not started: the first update
/// (and every update after reset()) snaps to the targets. Leg i of every update uses slot i:
/// reset() when the legs change (another character, a teleport).
struct FootPlacementState {
  bool started = false;
  double pelvis_offset = 0, pelvis_velocity = 0;              ///< metres, m/s
  std::array<double, kMaxFootPlacementLegs> foot_offset{};    ///< metres
  std::array<double, kMaxFootPlacementLegs> foot_velocity{};  ///< m/s
  std::array<Vec3, kMaxFootPlacementLegs> normal{};           ///< smoothed normal (not unit)
  std::array<Vec3, kMaxFootPlacementLegs> normal_velocity{};  ///< per second
  void reset() noexcept { *this = FootPlacementState{}; }
};

/// What happened to the whole update.
enum class FootPlacementStatus {
  kOk,            ///< every leg was solved (see the legs' TwoBoneStatus for reach)
  kInvalidInput,  ///< non-finite input, too many legs or mismatched spans: identity output,
                  ///< state untouched
};

/// Per-leg output.
struct FootPlacementLegResult {
  bool ground_found = false;  ///< the ray hit the ground
  GroundHit ground;           ///< the hit (point under the sole, normal), when found
  double target_offset = 0;   ///< this frame's unsmoothed offset: ground y − floor_height
  double offset = 0;          ///< smoothed offset applied to the ankle (along +Y), metres
  Vec3 target;                ///< where the ankle was sent: animated ankle + offset·Y
  /// Two-bone solution of the leg after the pelvis offset (positions include it). Deltas are
  /// model-space rotations: new model rotation = delta · old model rotation.
  TwoBoneResult ik;
  /// Foot alignment: a model-space rotation applied after the IK, so the ankle's new model
  /// rotation is foot_rotation · ik.end_delta · old. It turns up to the smoothed ground normal,
  /// clamped to max_tilt.
  Quat foot_rotation;
};

/// Output of update_foot_placement.
struct FootPlacementResult {
  FootPlacementStatus status = FootPlacementStatus::kInvalidInput;
  double target_pelvis_offset = 0;  ///< min(0, min over legs of target_offset), metres
  double pelvis_offset = 0;  ///< smoothed pelvis offset along +Y (≤ 0 once settled), metres
};

/// One frame. `legs` and `out` have the same size, at most kMaxFootPlacementLegs; `dt` is the
/// time since the last update in seconds. Hip, knee and ankle of every leg are moved by the
/// pelvis offset before the IK (they hang below the pelvis). Never throws or allocates; with
/// kInvalidInput the outputs are identity (offsets 0) and the state is left as it was.
FootPlacementResult update_foot_placement(std::span<const FootPlacementLeg> legs,
                                          const Ground& ground,
                                          const FootPlacementSettings& settings, double dt,
                                          FootPlacementState& state,
                                          std::span<FootPlacementLegResult> out) noexcept;

/// Joint indices of one leg in a skeleton (parents-first): hip < knee < ankle on one branch.
struct FootPlacementJoints {
  int hip = -1, knee = -1, ankle = -1;
};

/// Applies a result to local transforms (`parents` from Skeleton::parents()): the pelvis joint's
/// local translation moves by pelvis_offset·Y expressed in its parent's space (its parent's model
/// scale must be uniform), then each leg gets apply_two_bone and the ankle's model rotation is
/// pre-multiplied by foot_rotation. Returns false and changes nothing when the status is not kOk,
/// a span size or index is wrong; legs whose IK is degenerate are left as animated.
bool apply_foot_placement(const FootPlacementResult& result,
                          std::span<const FootPlacementLegResult> legs,
                          std::span<const FootPlacementJoints> joints, int pelvis,
                          std::span<const int> parents, std::span<Transform> local) noexcept;

}  // namespace kinema
