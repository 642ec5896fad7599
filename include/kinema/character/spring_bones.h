// kinema/character/spring_bones.h — a character's spring bones as its file defines them.
//
// VRM avatars ship their secondary motion (hair, skirts, ears, accessories) as spring bones:
// VRMC_springBone 1.0 and, in VRM 0.x files, `VRM.secondaryAnimation`. Both are read into this one
// form (kinema/io reads them, kinema/physics/spring_bones.h simulates them). Joint and node
// indices are skeleton joints; lengths are metres in the file's own frame; every vector is in the
// frame the VRM version defines (see each field).
#pragma once

#include <string>
#include <vector>

#include "kinema/math/vec3.h"

namespace kinema {

enum class SpringColliderShape { Sphere, Capsule, Plane };

/// A solid that spring-bone tails cannot enter, fixed to a joint. Sphere: centre `offset`,
/// `radius`. Capsule: the segment offset–tail swept by `radius`. Plane (extended colliders only):
/// the half-space behind the plane through `offset` with normal `normal`. `offset`, `tail` and
/// `normal` are in the joint's local frame. `inside` (extended colliders) keeps tails inside a
/// sphere or capsule instead of outside it.
struct SpringCollider {
  int joint = -1;
  SpringColliderShape shape = SpringColliderShape::Sphere;
  Vec3 offset{0, 0, 0};
  Vec3 tail{0, 0, 0};
  Vec3 normal{0, 0, 1};
  double radius = 0;
  bool inside = false;
};

/// One simulated bone: `joint` swings so that its tail follows a damped point. The tail is the
/// joint `child` at rest; with no child (`child` = -1, VRM 0.x leaves) it is a virtual point
/// 7 cm from the joint along the joint's own rest offset from its parent, as in UniVRM.
struct SpringJoint {
  int joint = -1;
  int child = -1;
  double hit_radius = 0;       ///< m, the tail's radius against colliders
  double stiffness = 1;        ///< pull back towards the rest direction, per second
  double gravity_power = 0;    ///< m/s added along gravity_dir each step (scaled by dt)
  Vec3 gravity_dir{0, -1, 0};  ///< world space, used as written (not normalized)
  double drag_force = 0.5;     ///< 0–1, the share of the tail's velocity lost each step
};

/// A chain of joints with the colliders it sees and the space its inertia lives in.
struct Spring {
  std::string name;
  std::vector<SpringJoint> joints;   ///< parents first
  std::vector<int> collider_groups;  ///< indices into SpringBones::collider_groups
  int center = -1;  ///< joint whose frame the tails' inertia is kept in, or -1 for world space
};

/// Everything a character's spring bones need.
struct SpringBones {
  std::vector<SpringCollider> colliders;
  std::vector<std::vector<int>> collider_groups;  ///< each a list of collider indices
  std::vector<Spring> springs;
  bool empty() const { return springs.empty(); }
  /// Number of simulated joints over all springs.
  size_t joint_count() const {
    size_t n = 0;
    for (const auto& s : springs) n += s.joints.size();
    return n;
  }
};

}  // namespace kinema
