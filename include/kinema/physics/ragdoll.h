// kinema/physics/ragdoll.h — a character's skeleton as rigid bodies joined by joints in a
// RigidWorld, driven by the animation (powered) or not (passive), read back as a pose.
//
// The bodies are the character's colliders (kinema/physics/character_colliders.h): a capsule along
// each skinned bone (joint → main child) and a sphere on skinned leaves, radii measured from the
// skin; masses from their volume at `density`. Each body hangs from the nearest ancestor joint
// that has a body by a cone–twist joint at its own joint's position, the twist axis along its
// bone. The joints are made at the character's rest (bind) pose, so their limits are measured from
// it, as kinema's IK limits are (kinema/ik/joint_limits.h), whatever pose the ragdoll starts in.
// Limits: the caller's (RagdollOptions::limits), else for a humanoid (VRM) anatomical defaults —
// knees and elbows hinges that bend one way only, narrow cones along the spine, wide ones at the
// shoulders and hips (humanoid_ragdoll_limits) — else one cone–twist for all. The pose maps through
// each body's fixed offset from its joint (body = model_j · offset_j); joints without a body keep
// their local transforms from the pose the caller passes to read_pose.
//
// Powered ragdoll (an "active ragdoll"): every joint gets a PD motor driving the child body's
// rotation relative to its parent toward the animation's, τ = kp·θ − kd·(ω_child − ω_parent)
// with θ the rotation vector from the current relative rotation to the target's. The gains come
// from one natural frequency ω_n (rad/s): kp = ω_n²·I, kd = 2·ω_n·I = 2·√(kp·I), critical damping
// (kinema/physics/rigid_joint.h, critical_damping_gain), with I the pair's reduced inertia
// tensor (Ic⁻¹ + Ip⁻¹)⁻¹ in world axes, so that every joint rings at ω_n about every axis however
// unequal or thin the bodies are. A hit lowers one body's gains (a limb goes limp) and lets them
// recover. Units: metres, kilograms, seconds, radians.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "kinema/character/asset.h"
#include "kinema/math/mat4.h"
#include "kinema/physics/character_colliders.h"
#include "kinema/physics/rigid_world.h"

namespace kinema {

/// How far one joint of a ragdoll may turn: the body of skeleton joint `joint` relative to the
/// body it hangs from, measured from the rest (bind) pose.
struct RagdollJointLimit {
  int joint = -1;                         ///< skeleton joint index
  JointKind kind = JointKind::ConeTwist;  ///< ConeTwist or Hinge
  /// Hinge axis, or the cone–twist's twist axis, in the joint's own frame at rest (the frame its
  /// local rotation maps from, as IK limits give axes). Zero: along the bone (cone–twist only).
  Vec3 axis{0, 0, 0};
  double lower = 0, upper = 0;  ///< Hinge angle range (rad, right-hand rule; lower ≤ 0 ≤ upper)
  double swing = 0.8;           ///< ConeTwist cone half-angle (rad, in (0, π))
  double twist_lower = -0.5, twist_upper = 0.5;  ///< ConeTwist twist range (rad)
};

struct RagdollOptions {
  CharacterColliderOptions colliders;  ///< how the bodies are measured from the skin
  double density = 1000;               ///< kg/m³ (water, close to a body's)
  /// Per-joint limits (e.g. from IK limits); joints not listed get the humanoid defaults (when
  /// `humanoid_limits` and the character has a humanoid map) or swing_limit / twist_limit.
  std::vector<RagdollJointLimit> limits;
  bool humanoid_limits = true;
  double swing_limit = 0.8;  ///< cone half-angle of a joint without a limit (rad, ≈ 46°)
  double twist_limit = 0.5;  ///< twist within ±this (rad, ≈ 29°)
  double friction = 0.6;
  /// Powered: the motors' natural frequency (rad/s). Explicit torques, so keep ω_n·h ≤ ~0.5.
  double natural_frequency = 25;
  /// The joints that get bodies. Empty: with a humanoid map (VRM), its torso, head, arm and leg
  /// bones (hips, spine, chest, upperChest, neck, head, shoulders, upper and lower arms, hands,
  /// upper and lower legs, feet) — not fingers, toes, hair or accessories; without one, every
  /// joint with enough skin.
  std::vector<int> joints;
  double min_mass = 0.05;  ///< lighter bodies are left out (a fingertip would make the solve stiff)
};

/// One body of a ragdoll: which skeleton joint it moves and where it sits relative to it.
struct RagdollBody {
  int joint = -1;
  BodyId body = 0;
  int parent = -1;      ///< index into Ragdoll::bodies() of the body it hangs from, -1 for the root
  JointId link = 0;     ///< the joint to its parent (when parent ≥ 0)
  Mat4 offset;          ///< the body's shape frame in its joint's model frame (rigid)
  Mat4 offset_inverse;  ///< its inverse: the joint's frame from the body's
  double gain = 1;      ///< multiplier of the motor gains (a hit lowers it)
};

/// Anatomical limits for a humanoid's ragdoll joints (VRM bone names), in the character's rest
/// pose: lower arms and legs are hinges about the axis across the bone and the facing direction
/// (bending 0…143°, the forearm forward, the shin back), the spine, chest and neck cones of
/// 20–29°, the head 29°, shoulders 17°, upper arms 95° (an arm straight out at rest may hang down)
/// twisting ±69°, upper legs 69° twisting ±29°, hands 52°, feet 34°. The facing is across the
/// line from the right to the left upper leg, +Y up. Empty without a humanoid map or legs.
std::vector<RagdollJointLimit> humanoid_ragdoll_limits(const Asset& character);

class Ragdoll {
 public:
  /// Builds the bodies and joints of `character` in `world` (the joints at the rest pose), then
  /// places the bodies at `model_pose` (one rigid model-space matrix per skeleton joint) with zero
  /// velocity. Throws kinema::Error when the character has no skinned mesh or no joint has enough
  /// skin for a body, the pose has the wrong size, or a limit is malformed (named by its joint).
  Ragdoll(const Asset& character, RigidWorld& world, std::span<const Mat4> model_pose,
          const RagdollOptions& options = {});

  const std::vector<RagdollBody>& bodies() const { return bodies_; }
  /// The body index (into bodies()) of skeleton joint `joint`, or -1.
  int body_of_joint(int joint) const;
  /// Total mass (kg).
  double mass() const { return mass_; }

  /// Places every body at `model_pose` with the velocities that carry it from `previous_pose`
  /// over `h` seconds (finite differences): the hand-over from animation to ragdoll keeps the
  /// motion. Wakes the bodies.
  void match_pose(RigidWorld& world, std::span<const Mat4> previous_pose,
                  std::span<const Mat4> model_pose, double h);

  /// Adds the PD motors' torques toward `target_pose` (model space, one per skeleton joint) to
  /// the bodies, for the next world step. `strength` scales every gain (0: passive).
  void drive(RigidWorld& world, std::span<const Mat4> target_pose, double strength = 1);

  /// Multiplies body b's gains by `factor` (a struck limb: 0.1), and lets every lowered gain
  /// recover toward 1 at `rate` per second over the following steps (recover()).
  void set_gain(int body, double factor);
  void recover(double h, double rate = 1.0);

  /// The character's model pose from the bodies: joints with a body follow it, the others their
  /// parents through their local transforms in `animation_local` (e.g. the clip's pose, or the
  /// rest pose); a root without a body is placed so that the first body below it fits, and a
  /// root with no body below it keeps its animation transform. `out` gets one matrix per joint.
  void read_pose(const RigidWorld& world, std::span<const Transform> animation_local,
                 std::vector<Mat4>& out) const;

 private:
  const Asset& character_;
  RagdollOptions options_;
  std::vector<RagdollBody> bodies_;
  std::vector<int> body_of_joint_;
  std::vector<Quat> target_rotation_;  // drive's scratch: each body's target rotation
  double mass_ = 0;
};

}  // namespace kinema
