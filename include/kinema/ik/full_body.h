// kinema/ik/full_body.h — full-body IK: several goals at once (hands, feet,
// head aim, centre of mass over the support polygon) on a whole skeleton, solved together by
// weighted, damped least squares with joint limits, in up to two strict priority levels.
//
// Each iteration stacks the rows of every active goal into one Jacobian J (model space) and
// takes one damped-least-squares step Δθ = J̃ᵀ(J̃J̃ᵀ + λ²I)⁻¹ẽ, where the rows of J and the
// errors e are scaled by √weight (so the step minimizes Σ weight·|J_g Δθ − e_g|² + λ²|Δθ|²).
// The system is solved in task space (a few dozen rows at most) whatever the joint count.
// λ adapts: it is `lambda` while the smallest singular value of J̃ is above
// `singular_threshold`, and grows towards `lambda_max` as it falls to zero (near a singularity,
// e.g. a straight knee). Goals marked kHigh are solved first; kNormal goals then act only in
// what is left of the joint space (the null space of the kHigh rows), so a kNormal goal
// that cannot be reached does not drag a kHigh goal off (Baerlocher and Boulic's prioritized IK).
// Joint limits are applied after every step; a joint its limit clips leaves the kNormal step,
// which is then solved again (a clamping loop), so that step never relies on a motion the limit
// removes. Weights balance conflicting goals exactly while their errors are below
// max_error_step; goals of one priority compromise, so make the goals that must hold kHigh.
//
// Conventions: right-handed, +Y up, metres, radians; quaternions (x, y, z, w). The pose is a
// span of local transforms (parents-first, model = parent_model · local, roots relative to the
// model origin); the solver changes only local rotations, and the local translation of at most
// one joint (the pelvis, when `translating_joint` is set). So bone lengths never change.
//
// A FullBodySolver owns all its scratch (allocated by the constructor); solve() never throws,
// never allocates, validates its input (kInvalidInput leaves the pose untouched) and never
// writes NaN. The same input gives a bit-identical output. solve() uses the solver's scratch,
// so one solver serves one thread at a time (build one per thread; they are independent).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "kinema/ik/chain.h"
#include "kinema/ik/joint_limits.h"
#include "kinema/math/transform.h"

namespace kinema {

/// Most goals one solve accepts (3 rows each at most).
inline constexpr std::size_t kMaxFullBodyGoals = 16;
/// The centre-of-mass goal also holds the COM (one row, zero error, along the nearest edge's
/// normal) while it is inside the shrunk polygon but closer than this to its edge (metres), so
/// other goals cannot push it out and the set of active rows does not flip between iterations.
inline constexpr double kFullBodyCenterOfMassBand = 0.01;
/// Most vertices of a support polygon.
inline constexpr std::size_t kMaxSupportPolygonVertices = 16;

/// What a joint may do during a full-body solve.
enum class FullBodyJointKind : std::uint8_t {
  kLocked,  ///< never changed by the solver
  kHinge,   ///< one angle about `hinge_axis`: local' = local · rotation(hinge_axis, θ)
  kBall,    ///< any rotation (three angles about the model X, Y, Z axes per step)
};

/// One joint's degrees of freedom, limit and mass.
struct FullBodyJoint {
  FullBodyJointKind kind = FullBodyJointKind::kBall;
  /// Hinge axis in the joint's own frame (the frame its local rotation maps from); non-zero.
  Vec3 hinge_axis{1, 0, 0};
  /// Limit on the rotation relative to the rest local rotation, q_rel = conjugate(rest) · local
  /// (see joint_limits.h); applied after every step, so a solved pose always satisfies it.
  JointLimit limit{};
  /// Mass of the bone that ends at this joint (from its parent), placed at the bone's midpoint;
  /// a root's mass sits at the joint. Any unit (only ratios matter), ≥ 0. Negative: the default,
  /// the bone's rest length in metres (0 for a root).
  double mass = -1;
};

/// The skeleton a FullBodySolver works on.
struct FullBodyRig {
  std::span<const int> parents;           ///< parents-first, −1 for a root (Skeleton::parents())
  std::span<const Transform> rest;        ///< rest local transforms (reference of the joint limits)
  std::span<const FullBodyJoint> joints;  ///< one per joint, or empty: every joint kBall, free
  /// Joint whose local translation the solver may move (three model-space DOF, e.g. the pelvis
  /// so the body can crouch and shift), or −1 for none.
  int translating_joint = -1;
};

/// What a goal asks for.
enum class FullBodyGoalKind : std::uint8_t {
  kPosition,     ///< `local_point` of `joint` (in its frame, metres) reaches `target`
  kOrientation,  ///< `joint`'s model rotation becomes `target_rotation`
  kAim,          ///< `joint`'s `local_axis` (in its frame) points from the joint at `target`
  /// The centre of mass, projected on the ground (XZ), lies inside `support_polygon` shrunk by
  /// `margin`: an inequality, active only while it is outside (then pulled back along the
  /// outward direction by its distance) or within kFullBodyCenterOfMassBand of the edge.
  kCenterOfMass,
};

/// Goal priority: kHigh goals are solved first, kNormal ones in their null space.
enum class FullBodyPriority : std::uint8_t { kHigh, kNormal };

/// One goal. Errors (and `tolerance`) are in metres for kPosition and kCenterOfMass (distance to
/// the target / to the shrunk polygon) and radians for kOrientation and kAim (angle left).
struct FullBodyGoal {
  FullBodyGoalKind kind = FullBodyGoalKind::kPosition;
  int joint = -1;            ///< the goal's joint (unused by kCenterOfMass)
  Vec3 local_point{};        ///< kPosition: the point in the joint's frame
  Vec3 local_axis{0, 0, 1};  ///< kAim: the joint's forward axis in its frame, non-zero
  Vec3 target{};             ///< kPosition, kAim: model-space point
  Quat target_rotation = Quat::identity();  ///< kOrientation
  /// kCenterOfMass: convex polygon, model space, either winding, y ignored (e.g. around the
  /// feet); the caller keeps it alive during solve().
  std::span<const Vec3> support_polygon;
  double margin = 0;  ///< kCenterOfMass: inset of the polygon (metres), ≥ 0
  double weight = 1;  ///< > 0; relative importance among goals of the same priority
  double tolerance = 1e-3;
  FullBodyPriority priority = FullBodyPriority::kNormal;

  static FullBodyGoal position(int joint, const Vec3& target, const Vec3& local_point = {});
  static FullBodyGoal orientation(int joint, const Quat& target_rotation);
  static FullBodyGoal aim(int joint, const Vec3& local_axis, const Vec3& target);
  static FullBodyGoal center_of_mass(std::span<const Vec3> support_polygon, double margin = 0);
};

/// Solver settings. The defaults suit a human body (about 1.8 m tall).
struct FullBodySettings {
  int max_iterations = 64;
  double lambda = 0.01;             ///< damping floor (metres)
  double lambda_max = 0.2;          ///< damping when the smallest singular value reaches 0
  double singular_threshold = 0.1;  ///< singular value below which the damping grows
  double max_error_step = 0.1;      ///< per goal and iteration: error clamp (metres or radians)
  double max_joint_step = 0.2;      ///< per iteration: largest angle (radians) or pelvis move (m)
};

/// How one goal ended.
struct FullBodyGoalReport {
  bool met = false;  ///< error ≤ tolerance
  double error = 0;  ///< metres or radians (see FullBodyGoal)
};

/// Outcome of a solve: kReached when every goal is met, kMaxIterations when the cap stopped it
/// (the last pose is written, and the reports say which goals it meets), kInvalidInput (pose
/// untouched, goal reports all unmet with NaN errors).
struct FullBodyResult {
  IkStatus status = IkStatus::kInvalidInput;
  int iterations = 0;
  std::array<FullBodyGoalReport, kMaxFullBodyGoals> goals{};  ///< the first goal_count are used
  std::size_t goal_count = 0;

  bool all_met() const {
    for (std::size_t g = 0; g < goal_count; ++g)
      if (!goals[g].met) return false;
    return goal_count > 0;
  }
};

/// Full-body IK on one skeleton (see the file comment). Build once, solve every frame.
class FullBodySolver {
 public:
  /// Copies the rig and allocates all scratch. Throws kinema::Error when the parents are not
  /// parents-first, sizes differ, a rest transform is not finite or has a zero scale, a hinge
  /// axis is zero, a mass is not finite, or translating_joint is out of range.
  explicit FullBodySolver(const FullBodyRig& rig);
  ~FullBodySolver();
  FullBodySolver(FullBodySolver&&) noexcept;
  FullBodySolver& operator=(FullBodySolver&&) noexcept;
  FullBodySolver(const FullBodySolver&) = delete;
  FullBodySolver& operator=(const FullBodySolver&) = delete;

  /// Number of joints.
  std::size_t joint_count() const;

  /// Solves the goals starting from `local` (one transform per joint) and writes the result back.
  /// The starting pose is first projected into the joint limits. kInvalidInput (nothing written)
  /// for a wrong pose size, a non-finite pose or zero rotation, 0 or more than kMaxFullBodyGoals
  /// goals, a goal joint out of range, a non-finite target, a zero aim axis or target rotation, a
  /// weight ≤ 0, a negative tolerance, a support polygon that is not convex (≥ 3 vertices, at most
  /// kMaxSupportPolygonVertices, no zero area) or vanishes when shrunk by the margin, a centre of
  /// mass goal on a body without mass, and settings that are negative, NaN or zero (max steps).
  FullBodyResult solve(std::span<Transform> local, std::span<const FullBodyGoal> goals,
                       const FullBodySettings& settings = {});

  /// Centre of mass of a pose (model space, metres), with the masses the solver uses; the
  /// origin when the body has no mass or the pose has the wrong size.
  Vec3 center_of_mass(std::span<const Transform> local) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kinema
