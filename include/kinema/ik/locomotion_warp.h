// kinema/ik/locomotion_warp.h — stride and orientation warping of a locomotion pose.
//
// A walk or run clip moves its character at one speed in one direction. When the game moves the
// character faster or slower than that, or sideways, playing the clip unchanged makes the feet
// slide. Two corrections change the pose instead of the playback:
//
// - Stride warping scales the stride: every ankle's offset from the pelvis *along the movement
//   direction* is multiplied by the stride scale (the requested speed over the clip's speed); the
//   sideways and vertical offsets stay. A foot planted while the pelvis passes over it then moves
//   backwards, relative to the pelvis, at scale × the clip's speed: exactly as fast as the
//   character moves forwards, so it stays put. Longer strides need longer legs: the pelvis is
//   lowered by the least amount that lets every ankle reach its target at `max_extension` of the
//   leg's length, and each leg is re-solved as a two-bone chain with its knee pole forward.
//   Scaling the offsets also scales whatever the capture's planted feet slid (by the stride
//   scale); a leg the caller marks as planted is therefore held where its plant began: its
//   support point (the ankle, or the toe while the heel rolls off) keeps its horizontal place,
//   the heights and the foot's rotation follow the animation. When the foot lifts off, its
//   target rejoins the warped stride through a critically damped spring.
// - Orientation warping turns the lower body towards the movement direction (a forward walk made
//   to go 40° to the left): the pelvis turns about the vertical by the angle between the
//   character's facing and its movement (clamped), so the legs step along the movement, and the
//   spine counter-rotates joint by joint so that the chest and everything above it keep facing
//   where they did.
//
// Orientation warping comes first, then stride warping along the movement direction. Everything
// is in the model space of the pose, metres and radians, +Y up. The solve functions never throw,
// never allocate and never return NaN; bad input is reported in the status and leaves the pose
// alone.
#pragma once

#include <array>
#include <span>

#include "kinema/ik/foot_placement.h"
#include "kinema/ik/two_bone.h"
#include "kinema/math/transform.h"
#include "kinema/math/vec3.h"

namespace kinema {

/// Most legs one stride warp handles (bipeds use 2, quadrupeds 4).
inline constexpr int kMaxStrideWarpLegs = 4;

/// One leg of the animated pose: model-space joint positions from forward kinematics.
struct StrideWarpLeg {
  Vec3 hip;    ///< chain root, metres
  Vec3 knee;   ///< chain mid
  Vec3 ankle;  ///< chain end
  /// The ankle's model rotation, kept when StrideWarpSettings::keep_foot_rotation is set.
  Quat ankle_rotation = Quat::identity();
  /// The foot is on the ground this frame (from the clip's or database's contact labels, or
  /// detect_foot_plants): its support point is held where the plant began. Positions must then
  /// be in a space where the ground stays still (world space: the character's motion applied).
  bool planted = false;
  /// The toe, not the ankle, bears the planted foot (the heel is rolling off:
  /// FootPlants::toe_support); it is then the toe that stays put. Needs `toe` and
  /// keep_foot_rotation (the foot keeps its animated ankle-to-toe offset).
  bool on_toe = false;
  Vec3 toe{};  ///< the toe joint's position, when on_toe is used
};

/// What to warp and how.
struct StrideWarpSettings {
  /// Requested speed over the clip's own speed (> 0): 1 leaves the stride as it is, 1.4 makes
  /// it 40 % longer, 0.7 30 % shorter.
  double stride_scale = 1;
  /// Movement direction in model space; only its horizontal part counts (it must have one).
  Vec3 direction{0, 0, 1};
  /// The pelvis position from forward kinematics: ankle offsets are measured from its
  /// vertical line, metres.
  Vec3 pelvis;
  /// The knee pole direction (pole = knee + forward), usually the character's facing.
  Vec3 forward{0, 0, 1};
  /// Largest hip-to-ankle distance as a fraction of the leg's length (thigh + shin) before the
  /// pelvis is lowered, in (0, 1]. Below 1 it keeps the knee from locking straight.
  double max_extension = 0.98;
  /// Largest pelvis drop, metres (≥ 0). A stride that needs more leaves the leg straight,
  /// pointing at its target (TwoBoneStatus::kUnreachable).
  double max_pelvis_drop = 0.25;
  /// Keep each foot's model rotation (StrideWarpLeg::ankle_rotation), so that a planted foot
  /// stays flat and its toes move with its ankle; otherwise the foot turns with the shin.
  bool keep_foot_rotation = true;
  /// Half-life (seconds, see critically_damped_spring) in which a lifted foot's target rejoins
  /// the warped stride; 0 snaps.
  double release_half_life = 0.05;
};

/// What stride warping carries from frame to frame: each leg's plant. Value-initialised = no
/// plants; reset() when the legs change (another character, a teleport). Leg i of every call
/// uses slot i.
struct StrideWarpState {
  std::array<bool, kMaxStrideWarpLegs> planted{};  ///< the leg was planted last frame
  std::array<bool, kMaxStrideWarpLegs> on_toe{};   ///< … and on its toe
  std::array<Vec3, kMaxStrideWarpLegs> anchor{};   ///< where its plant holds the support (x, z)
  /// After lift-off: the target's offset from the warped stride, decaying to zero (metres), and
  /// its rate (m/s).
  std::array<Vec3, kMaxStrideWarpLegs> release{}, release_velocity{};
  void reset() noexcept { *this = StrideWarpState{}; }
};

/// What happened.
enum class StrideWarpStatus {
  kOk,            ///< every leg was solved (each leg's TwoBoneResult says whether it reached)
  kInvalidInput,  ///< non-finite input, a scale ≤ 0, no horizontal direction, an extension
                  ///< outside (0, 1], a negative drop, too many legs or mismatched spans
};

/// Per-leg output.
struct StrideWarpLegResult {
  Vec3 target;       ///< where the ankle was sent (the warped ankle), metres
  TwoBoneResult ik;  ///< the leg's solve from the lowered hip (positions include the drop)
};

/// Output of solve_stride_warp.
struct StrideWarpResult {
  StrideWarpStatus status = StrideWarpStatus::kInvalidInput;
  /// The pelvis offset along +Y (≤ 0: a drop), metres; 0 when every leg reaches without one.
  double pelvis_offset = 0;
};

/// Warps one frame, `dt` seconds after the last. `legs` and `out` have the same size, at most
/// kMaxStrideWarpLegs. Each ankle's warped target is ankle + d·(scale − 1)·((ankle − pelvis)·d)
/// with d the unit horizontal movement direction; a planted leg's target instead keeps its
/// support point on its anchor in x and z (the anchor is set where the support is on the plant's
/// first frame, and moved on when the support passes from ankle to toe, so that the target never
/// jumps), with the warped target's height; a leg that lifted off adds its decaying release
/// offset. The pelvis drop is the least
/// h ≥ 0 (at most max_pelvis_drop) with |target − (hip − h·Y)| ≤ max_extension·(thigh + shin)
/// for every leg, a continuous function of the pose; each leg is then solved from its lowered
/// joints. Never throws or allocates; with kInvalidInput the outputs are empty and the state is
/// left as it was.
StrideWarpResult solve_stride_warp(std::span<const StrideWarpLeg> legs,
                                   const StrideWarpSettings& settings, double dt,
                                   StrideWarpState& state,
                                   std::span<StrideWarpLegResult> out) noexcept;

/// Joint indices of one leg in a skeleton (parents-first): hip < knee < ankle on one branch.
using StrideWarpJoints = FootPlacementJoints;

/// Applies a stride warp to local transforms (`parents` from Skeleton::parents()): the pelvis
/// joint's translation moves by pelvis_offset·Y in model space (its parent's model scale must be
/// uniform), then each leg gets apply_two_bone. Returns false and changes nothing when the
/// status is not kOk or an index or span is wrong; degenerate legs are left as animated.
bool apply_stride_warp(const StrideWarpResult& result, std::span<const StrideWarpLegResult> legs,
                       std::span<const StrideWarpJoints> joints, int pelvis,
                       std::span<const int> parents, std::span<Transform> local) noexcept;

/// The signed angle (radians, counter-clockwise seen from above, i.e. about +Y) that turns the
/// horizontal part of `facing` onto the horizontal part of `movement`, clamped to
/// [−max_angle, max_angle]. 0 when either has no horizontal part or an input is not finite.
double orientation_warp_angle(const Vec3& facing, const Vec3& movement,
                              double max_angle = 1.5707963267948966) noexcept;

/// Turns the lower body by `angle` about +Y and lets the spine take it back: the pelvis's model
/// rotation becomes R(angle)·old, so its other children (the legs) turn with it; spine joint k
/// of n (`spine`, from the pelvis's child upwards, each the parent of the next) gets the model
/// delta R(angle·(1 − k/n)), so the last one — the chest, and everything above it — keeps its
/// model rotation. Only local rotations change; local translations and scales (bone lengths)
/// stay. Ancestors' model scales must be uniform. Returns false and changes nothing when the
/// angle is not finite, an index is out of range or the spine is not a chain from the pelvis.
bool apply_orientation_warp(double angle, int pelvis, std::span<const int> spine,
                            std::span<const int> parents, std::span<Transform> local) noexcept;

}  // namespace kinema
