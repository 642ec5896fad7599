// The frame-independent part of a retarget (kinema/retarget/retarget.h): which source motion
// drives each target joint, and the rest alignments, computed once from the two rest poses.
#pragma once

#include <string>
#include <vector>

#include "kinema/character/asset.h"
#include "kinema/retarget/retarget.h"

namespace kinema::retarget_detail {

/// One side of a retarget: a skeleton, its humanoid map and its rest pose in model space.
struct RestSide {
  const Skeleton& skeleton;
  const Humanoid& humanoid;
  std::vector<Mat4> rest;      ///< model-space rest matrices
  std::vector<Quat> rest_q;    ///< their rotations
  std::vector<Vec3> rest_pos;  ///< their translations

  RestSide(const Skeleton& s, const Humanoid& h);
  /// The joint of humanoid bone `bone`, or -1 when it is not mapped (or out of range).
  int joint(const std::string& bone) const;
};

/// What drives a target joint's world rotation.
enum class Drive {
  Rest,   ///< nothing: its rest local rotation under its parent
  Bone,   ///< the source joint of the same humanoid bone
  Chain,  ///< the source spine chain, interpolated at the joint's rest arc length
  Copy,   ///< not mapped, but the source has a joint of the same name: its local rotation
};

struct JointPlan {
  Drive drive = Drive::Rest;
  int source = -1;                ///< Bone: the source joint
  double chain_s = 0;             ///< Chain: the joint's arc-length parameter on the spine
  double chain_next_s = 0;        ///< Chain: its successor's parameter (direction mode)
  Quat align = Quat::identity();  ///< A: target rest direction → turned source rest direction
  Vec3 rest_direction{0, 0, 0};   ///< world rest direction to its child (0: none)
  int source_child = -1;          ///< Bone: the source joint of the humanoid child (-1: none)
};

/// The spine of one side as a polyline from the hips (s = 0) to the neck (s = 1).
struct SpineChain {
  std::vector<int> joints;  ///< hips … neck, every joint on the path
  std::vector<double> s;    ///< arc-length parameter of each, by rest lengths
};

struct RetargetPlan {
  Quat yaw = Quat::identity();  ///< turns the source's facing into the target's
  double scale = 1;             ///< target leg length / source leg length (horizontal)
  /// Target / source rest height of the hips above the lower ankle (vertical): rigs differ in
  /// where the hip joints sit relative to the hips joint, so the leg ratio alone would leave a
  /// standing target's feet off the floor.
  double vertical_scale = 1;
  /// The target's rest hips height above its lower rest ankle, metres.
  double target_stand_height = 0;
  /// Whether the source's rest pose has its legs hanging down (hips at least 80 % of the leg
  /// length above the lower ankle), so that its rest hips height is its standing height.
  bool source_rest_stands = true;
  int source_hips = -1, target_hips = -1;
  Vec3 source_hips_rest, target_hips_rest;         ///< model space
  Mat4 target_hips_parent_inv = Mat4::identity();  ///< model → hips' parent space, at rest
  /// Whether the source's floor is y = 0: its rest pose stands there (its lower rest ankle
  /// within [−2 %, 50 %] of its leg length above it), or the target's does not either. When
  /// false (a BVH whose rest pose hangs from the origin, onto a standing avatar), the floor is
  /// taken from the clip: see retarget.h.
  bool source_rest_on_floor = true;
  int source_ankles[2] = {-1, -1};
  double target_ankle_height = 0;  ///< the target's lower rest ankle height above y = 0
  SpineChain source_spine, target_spine;
  std::vector<JointPlan> joints;  ///< one per target joint
  /// (lower arm, hand) target joints of each arm mapped on both sides, for forearm twist.
  std::vector<std::pair<int, int>> forearms;
};

/// Builds the plan. Throws kinema::Error (naming `source_file` or `target_file`) as
/// retarget_clip documents for maps and rest poses.
RetargetPlan plan_retarget(const RestSide& source, const RestSide& target,
                           const RetargetOptions& options, const std::string& source_file,
                           const std::string& target_file);

/// Index i of the segment [s_i, s_{i+1}] of `chain` holding s, and the fraction along it
/// (exactly 0 at a joint's own parameter, so identical chains map joint to joint; of joints at
/// the same parameter, the last).
std::pair<size_t, double> chain_segment(const SpineChain& chain, double s);

}  // namespace kinema::retarget_detail
