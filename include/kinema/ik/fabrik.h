// kinema/ik/fabrik.h — FABRIK, forward and backward reaching IK (Aristidou & Lasenby,
// Graphical Models 2011), on joint positions, for one chain or a tree with several end effectors.
//
// FABRIK moves model-space joint positions, not angles: the backward pass puts each effector
// on its target and walks towards the root placing every joint on the line to its old
// position at bone length from its (already moved) child; the forward pass puts the roots back
// and walks outwards placing every joint at bone length from its (already moved) parent. On a
// tree, a joint shared by several branches (a sub-base) takes the average of the positions its
// branches propose. Bone lengths are those of the input pose and are kept exactly.
//
// Conventions: right-handed, +Y up, metres, radians, model space. Joints are parents-first
// (parents[j] < j, −1 for a root); roots never move. Read joint rotations back from the
// solved positions (e.g. θ₁ = atan2 of the first bone).
#pragma once

#include <cstddef>
#include <span>

#include "kinema/ik/chain.h"

namespace kinema {

/// Largest joint count fabrik_solve accepts (its scratch lives on the stack).
inline constexpr std::size_t kMaxFabrikJoints = 256;

/// Constraint on the bones leaving a joint, enforced inside the forward pass (so a solved pose
/// satisfies it) and, for hinges, in the backward pass too.
struct FabrikConstraint {
  enum class Kind {
    kNone,
    /// The bones leaving this joint stay in the plane through the joint with normal `axis`
    /// (model space) — a hinge's bending plane — and, for a joint that has a parent, turn
    /// from the joint's incoming bone direction by a signed angle about `axis` (right-handed)
    /// within [hinge_min, hinge_max] (radians; the default range is free).
    kHinge,
    /// The bones leaving this joint stay within `max_angle` (radians, [0, π]) of the joint's
    /// own incoming bone direction; for a root, of `axis` (model space) — a ball joint's cone.
    kCone,
  };
  Kind kind = Kind::kNone;
  Vec3 axis = Vec3::unit_z();
  double max_angle = 0;                      ///< kCone half-angle
  double hinge_min = -kPi, hinge_max = kPi;  ///< kHinge range, −π ≤ min ≤ max ≤ π
};

/// Knee/elbow pole (the half-plane mirror rule): after each forward pass, when joint `mid` lies
/// on the other side of the line from joint `root` to joint `end` than the point `pole` (model
/// space), the joints strictly between root and end are turned 180° about that line — in a
/// plane, the mirror image across it — which keeps every bone length and the effector.
/// `root` must be a proper ancestor of `mid`, and `mid` of `end`. Poles act after the
/// constraints and win over them. With `align` set, the joints are instead turned about the
/// line by whatever angle puts `mid` in the half-plane of the pole (the classic 3D pole vector:
/// the knee points at the pole, not merely to its side).
struct FabrikPole {
  std::size_t root = 0, mid = 0, end = 0;
  Vec3 pole{};
  bool align = false;
};

/// An end effector: joint `joint` should reach `target` (model space, metres).
struct FabrikEffector {
  std::size_t joint = 0;
  Vec3 target{};
};

/// FABRIK settings. `constraints` is empty or holds one entry per joint.
/// `settings.max_iterations` counts backward+forward iterations.
struct FabrikSettings {
  IkSettings settings{};
  std::span<const FabrikConstraint> constraints;
  std::span<const FabrikPole> poles;
};

/// Solves a tree in place. `positions` (model space) and `parents` have one entry per joint.
/// Joints that lead to no effector follow their parent rigidly. With one effector whose
/// target is beyond the reach of its path from the root (sum of bone lengths), the path is
/// stretched straight towards it and kUnreachable returned at once (the reachability test).
/// `result.error` is the largest effector distance. kInvalidInput (positions untouched) for
/// non-finite positions or targets, parents not parents-first, out-of-range indices, bad
/// constraints or poles, more than kMaxFabrikJoints joints. Never throws, never allocates.
IkResult fabrik_solve(std::span<Vec3> positions, std::span<const int> parents,
                      std::span<const FabrikEffector> effectors,
                      const FabrikSettings& settings = {});

/// A single chain: joint i's parent is i − 1, the last point is the effector.
IkResult fabrik_solve_chain(std::span<Vec3> positions, const Vec3& target,
                            const FabrikSettings& settings = {});

/// FABRIK on an IkChain's local rotations, so that rotational joint limits (a swing-twist cone,
/// a hinge range: kinema/ik/joint_limits.h through make_limit_hook) apply inside the passes,
/// as CCD and the Jacobian solvers apply them. Each iteration runs the backward pass on the
/// chain's points (effector on the target, each joint pulled to bone length from its child)
/// and then the forward pass in rotation space: from the base out, joint i turns by the
/// shortest arc that points its bone at the backward pass's position of joint i + 1, the new
/// local rotation goes through the limit hook, and joint i + 1 is placed from the (limited)
/// rotation. Without limits this is exactly positional FABRIK on a chain (same points after
/// every iteration) that also keeps each joint's twist; with limits a solved pose always
/// satisfies them. Iterations stop at the tolerance, at the cap, or when an iteration no
/// longer improves the error (a limited or unreachable optimum). Returns kReached /
/// kUnreachable (target beyond the reach; the chain points at it as far as the limits allow) /
/// kMaxIterations; kInvalidInput (local untouched) as ccd_solve. Never throws, never allocates.
IkResult fabrik_solve_chain(const IkChain& chain, std::span<Quat> local, const Vec3& target,
                            const IkSettings& settings = {}, IkLimitHook limits = {});

}  // namespace kinema
