// kinema/physics/spring_bones.h — VRM spring bones: the secondary motion of hair, skirts and
// accessories that every VRM avatar ships with (kinema/character/spring_bones.h holds the
// settings, kinema/io reads them from VRMC_springBone 1.0 and VRM 0.x files).
//
// Each simulated joint keeps one point, its tail, moving by Verlet integration in world space
// (or in a `center` joint's frame, so that a character walking does not drag its hair behind):
//
//   next = tail + (tail − previous)·(1 − drag)                 inertia, in centre space
//        + rest_direction·stiffness·dt                         pull back towards the rest pose
//        + gravity_dir·gravity_power·dt                        world space
//
// then put back at the bone's length from the joint, pushed out of each collider (sphere,
// capsule, extended plane; the tail is a sphere of hit_radius) and put back at the bone's length
// again. The joint then turns by the shortest arc that takes its rest tail direction to the new
// tail. Joints are updated parents (and the joints their colliders hang from) first, and each
// joint's world matrix is updated before its children read it.
//
// This follows the VRMC_springBone 1.0 specification's algorithm as its reference implementation
// (three-vrm 3.5) computes it, including where that differs from a plain reading:
//   * The bone length is measured every step from the joint's current position to where its
//     child was at the end of the previous step (three-vrm reads the child's world matrix before
//     updating it), so a quickly moving chain stretches slightly for one step.
//   * gravity_dir is applied in world space as written (not normalized, not turned by `center`).
// kinema's results equal three-vrm's joint positions within 1 mm on Godette (VRM 0.x and the
// VRM 1.0 kinema migrates it to) walking at 60 Hz; see docs/physics.md.
//
// Units: metres, seconds. Poses are local joint transforms (kinema/skeleton/skeleton.h).
#pragma once

#include <span>
#include <vector>

#include "kinema/character/spring_bones.h"
#include "kinema/math/mat4.h"
#include "kinema/math/transform.h"
#include "kinema/skeleton/skeleton.h"

namespace kinema {

class SpringBoneSim {
 public:
  /// Prepares `setup` on `skeleton` with every tail at rest (the skeleton's rest pose). Throws
  /// kinema::Error (place "spring_bones/…") for a joint, child, collider joint, collider group or
  /// centre that does not exist, a child whose parent is not its joint, a joint simulated twice
  /// and non-finite or negative settings.
  SpringBoneSim(const Skeleton& skeleton, const SpringBones& setup);

  /// Puts every simulated joint back at its rest rotation and every tail where that pose puts
  /// it, with no velocity (three-vrm's reset()). `local_pose`: one transform per joint.
  void reset(std::span<Transform> local_pose);

  /// Advances the simulation by `dt` seconds with the character in `local_pose` (its animated
  /// local transforms, one per joint) and writes the simulated joints' rotations into it.
  /// dt ≤ 0 moves nothing but takes the pose in (the world matrices, and where children are),
  /// as three-vrm's update(0) does; call it once with the first frame's pose before stepping.
  void step(std::span<Transform> local_pose, double dt);

  /// World (model-space) matrix of every joint after the last step or reset.
  std::span<const Mat4> world() const { return world_; }
  /// Skeleton joints that are simulated, in update order.
  std::span<const int> simulated_joints() const { return order_joint_; }

 private:
  struct JointState {
    int joint = -1, child = -1, parent = -1, center = -1;
    double hit_radius = 0, stiffness = 1, gravity_power = 0, drag = 0.5;
    Vec3 gravity_dir{0, -1, 0};
    std::vector<int> colliders;  // collider indices
    Mat4 initial_local;          // the joint's rest local matrix
    Quat initial_rotation;
    Vec3 child_local{0, 0, 0};  // the tail in the joint's frame at rest
    Vec3 bone_axis{0, 0, 0};    // child_local normalized (zero: the joint cannot swing)
    Vec3 rest_axis{0, 0, 0};    // bone_axis at rest, in the parent's frame
    Vec3 tail{0, 0, 0}, prev_tail{0, 0, 0};  // centre space
    Vec3 child_world{0, 0, 0};               // where the child was at the end of the last step
    Quat rotation;                           // the simulated local rotation
    std::vector<int> refresh;  // unsimulated descendants whose world matrix follows this joint
  };

  void world_pass(std::span<const Transform> local_pose);
  void refresh_after(const JointState& s, std::span<const Transform> local_pose);
  void remember_children();
  Mat4 parent_world(int joint) const;
  Vec3 collide(const JointState& s, const Vec3& joint_position, double length, Vec3 tail) const;

  std::vector<int> parents_;
  std::vector<SpringCollider> colliders_;
  std::vector<JointState> joints_;  // in update order
  std::vector<int> order_joint_;    // joints_[k].joint
  std::vector<int> simulated_;      // per skeleton joint: index into joints_, or -1
  std::vector<Mat4> world_;
};

}  // namespace kinema
