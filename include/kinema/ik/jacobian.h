// kinema/ik/jacobian.h — Jacobian IK on a chain (Buss 2004): transpose, pseudo-inverse
// (SVD) and damped least squares, with fixed or adaptive damping and step clamping.
//
// The Jacobian J maps small joint-angle changes to small end-effector motions, Δp ≈ J Δθ.
// Hinge joints contribute one column, (R_i a_i) × (p_end − p_i); ball joints three, one per
// model axis. With an orientation goal three angular rows are appended.
#pragma once

#include <cstddef>
#include <span>

#include "kinema/ik/chain.h"

namespace kinema {

/// A joint's degrees of freedom.
enum class IkJointType {
  kHinge,  ///< one angle about `axis`, fixed in the joint's own frame
  kBall,   ///< three angles about the model X, Y, Z axes (a spherical joint)
};

/// One joint of a Jacobian chain. `axis` (hinge only) need not be unit but must be non-zero.
struct IkJoint {
  IkJointType type = IkJointType::kBall;
  Vec3 axis = Vec3::unit_z();
};

/// How Δθ is computed from the error e (model space).
enum class JacobianMethod {
  kTranspose,      ///< Δθ = α Jᵀe, α = e·JJᵀe / ‖JJᵀe‖² (the best step along Jᵀe)
  kPseudoInverse,  ///< Δθ = J⁺e through the SVD (singular values below 1e-12·σ_max dropped)
  kDampedLeastSquares,  ///< Δθ = Jᵀ(JJᵀ + λ²I)⁻¹e with λ = `lambda`
  /// DLS whose λ grows as the smallest singular value σ_min (ignoring exact zeros, i.e.
  /// directions no joint can move the effector in) falls below `singular_threshold`:
  /// λ² = lambda_max² · (1 − (σ_min / singular_threshold)²), and λ = `lambda` above it.
  kAdaptiveDampedLeastSquares,
};

/// `max_error_step` value (the default) that clamps each step's error to
/// kJacobianAutoErrorFraction of the reach, computed per solve: the chain's reach
/// (ik_chain_reach) or, on a tree, the longest effector path.
inline constexpr double kJacobianAutoErrorStep = 0;
/// The automatic error clamp as a fraction of the reach. 0.2 (20 cm on a 1 m chain) keeps
/// adaptive DLS from overshooting on far targets (without any clamp it reached only 89 % of the
/// sweep's targets in 64 steps, see BENCHMARKS.md) and leaves the worked one-step numbers
/// (docs/worked_examples.md) as they are (errors of 0.72 and 0.3 on a 5-unit arm: below its
/// 1-unit clamp).
inline constexpr double kJacobianAutoErrorFraction = 0.2;
/// How far short of full extension jacobian_solve and jacobian_solve_tree aim on an unreachable
/// target, as a fraction of the reach (see jacobian_solve): far enough from the straight pose
/// for the damped methods to converge in a few steps (5 cm on a 1 m chain).
inline constexpr double kJacobianReachMargin = 5e-2;

/// Jacobian solver settings. Step clamping (Buss): the error handed to one step is clamped to
/// `max_error_step` metres (kJacobianAutoErrorStep, the default: a fraction of the reach; a
/// huge value such as 1e300 disables it), and the resulting Δθ is scaled so no entry exceeds
/// `max_joint_step` radians (1e300, the default, disables it). `orientation_weight` scales the
/// angular rows (metres per radian) when an orientation goal is given. The damping defaults
/// suit a human limb (about 1 m of reach); scale lambda, lambda_max and singular_threshold
/// with the chain's size (the worked examples use λ = 1 on a 5-unit arm).
struct JacobianSettings {
  IkSettings settings{};
  JacobianMethod method = JacobianMethod::kDampedLeastSquares;
  double lambda = 0.05;             ///< damping (metres) for DLS; the floor for adaptive DLS
  double lambda_max = 0.5;          ///< adaptive DLS: damping when σ_min reaches 0 (metres)
  double singular_threshold = 0.1;  ///< adaptive DLS: σ_min below which damping grows (metres)
  double max_error_step = kJacobianAutoErrorStep;  ///< metres; see above
  double max_joint_step = 1e300;
  double orientation_weight = 1.0;
};

/// Most end effectors jacobian_solve_tree accepts.
inline constexpr std::size_t kMaxIkTreeEffectors = 4;

/// A joint tree for the Jacobian solver (up to kMaxIkChainJoints joints), parents-first
/// (parents[j] < j, −1 for a root). Joint j sits at p_parent + R_parent · offsets[j] and turns
/// to R_j = R_parent · local[j]; a root's parent frame is the base (base_position,
/// base_rotation). Note the offset is in the *parent's* frame here (as in a Skeleton), unlike
/// IkChain, whose offsets lead to the next joint.
struct IkTree {
  Vec3 base_position{};
  Quat base_rotation = Quat::identity();
  std::span<const int> parents;
  std::span<const Vec3> offsets;
};

/// A tree end effector: the point `tip` (in joint `joint`'s frame, metres) should reach
/// `target` (model space, metres).
struct IkTreeEffector {
  std::size_t joint = 0;
  Vec3 tip{};
  Vec3 target{};
};

/// Number of joint angles (1 per hinge, 3 per ball).
std::size_t jacobian_dof(std::span<const IkJoint> joints);

/// One Jacobian step: computes Δθ for the current pose (written to `delta`, radians, one entry
/// per degree of freedom, in joint order) and applies it to `local` (then the limit hook).
/// The step is taken towards `target` as given, even beyond reach (no aim point, unlike
/// jacobian_solve); the error clamp applies (automatic: a fraction of ik_chain_reach).
/// `target_orientation`, when non-null, adds an orientation goal for the end joint's model
/// rotation. Returns false and writes nothing on invalid input (see jacobian_solve).
bool jacobian_step(const IkChain& chain, std::span<const IkJoint> joints, std::span<Quat> local,
                   const Vec3& target, std::span<double> delta, const JacobianSettings& settings,
                   IkLimitHook limits = {}, const Quat* target_orientation = nullptr);

/// Iterates jacobian_step until the position error (and, with an orientation goal, the
/// orientation error times orientation_weight) is within tolerance or the cap is reached.
/// `result.error` is the final position error (metres), always against `target`.
///
/// Unreachable targets: when `target` lies farther than reach + tolerance from the chain's base,
/// the iteration aims instead at the point (1 − kJacobianReachMargin) × reach from the base on
/// the line towards the target (stopping once within tolerance of it), rather than driving into
/// the straight, singular pose where the transpose and pseudo-inverse steps fling the chain away
/// and DLS crawls. Then, after at least one step and without an orientation goal, a final
/// straightening turns each joint from the base out so its bone points at the target (a ball
/// joint by the shortest arc, a hinge about its axis, then the limit hook), kept only if the end
/// ends closer. Without limits a ball-joint chain thus ends pointing straight at the target
/// (final distance d − reach, to rounding), and any chain within kJacobianReachMargin × reach +
/// tolerance of that once the aim point is reached. `result.error` is still the distance to
/// `target`; the status kUnreachable.
///
/// kInvalidInput (local untouched) for a non-finite target, an invalid chain, joints not matching
/// the chain, a zero hinge axis, negative / NaN settings. kUnreachable when the target lies beyond
/// the chain's reach. Never throws, never allocates.
IkResult jacobian_solve(const IkChain& chain, std::span<const IkJoint> joints,
                        std::span<Quat> local, const Vec3& target,
                        const JacobianSettings& settings = {}, IkLimitHook limits = {},
                        const Quat* target_orientation = nullptr);

/// Jacobian IK on a tree with several end effectors: one stacked Jacobian (3 rows per
/// effector, zero where a joint is not an ancestor of the effector), solved by the chosen
/// method, so shared joints (a spine under two hands) compromise in the least-squares sense.
/// `result.error` is the largest effector distance (metres, to the real targets). An effector
/// whose target lies farther than its path's reach + tolerance from the root of its path (the
/// bone lengths from the root joint to the tip) aims, as in jacobian_solve, at the point
/// (1 − kJacobianReachMargin) × that reach towards its target; the iteration stops when every
/// effector is within tolerance of its aim. Then the joints on such an effector's path that move
/// no other effector are straightened towards its target as in jacobian_solve (kept only when
/// that effector ends closer); joints shared with other effectors keep the compromise. kUnreachable
/// when some target is not reached and lies beyond the bone lengths on its path; kInvalidInput
/// (local untouched) for non-finite data, parents not parents-first, joints/offsets/local sizes
/// that differ, 0 or more than kMaxIkTreeEffectors effectors, out-of-range effector joints. Never
/// throws, never allocates.
IkResult jacobian_solve_tree(const IkTree& tree, std::span<const IkJoint> joints,
                             std::span<Quat> local, std::span<const IkTreeEffector> effectors,
                             const JacobianSettings& settings = {}, IkLimitHook limits = {});

}  // namespace kinema
