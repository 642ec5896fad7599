// full_body_internal.h — what the full-body solver's sources share: its state
// (FullBodySolver::Impl: the rig, the per-solve scratch and the stages of a solve) and the
// task-space matrix types. Private to the ik module. The stages live in
//   full_body.cpp             set-up, input validation and the iteration loop (solve)
//   full_body_goals.cpp       each goal's residual at the current pose, and the Jacobian
//   full_body_step.cpp        one iteration's prioritized step and its joint-limit clamping loop
//   full_body_task_solve.cpp  the damped task-space solve (adaptive damping, Cholesky, basis)
//   support_polygon.cpp       the centre-of-mass goal's support polygon
#pragma once

#include <Eigen/Dense>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "kinema/ik/full_body.h"
#include "support_polygon.h"

namespace kinema {
namespace full_body_detail {

inline constexpr int kMaxRows = 3 * static_cast<int>(kMaxFullBodyGoals);
// Task-space matrices have fixed upper bounds, so Eigen keeps them inline (no heap per solve).
using TaskMatrix =
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor, kMaxRows, kMaxRows>;
using TaskVector = Eigen::Matrix<double, Eigen::Dynamic, 1, Eigen::ColMajor, kMaxRows, 1>;
// The Jacobian is rows × DOF, row-major so a row (one goal coordinate) is contiguous.
using JacobianMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// One goal's state at the current pose.
struct GoalState {
  Vec3 residual{};  // what the goal still asks for (model space; COM uses x and z)
  double error = 0;
  bool active = false;  // contributes rows this iteration
  int rows = 0;
  int first_row = 0;
  // Aim: unit current direction, unit direction to the target, distance to it.
  Vec3 aim_direction{}, aim_to_target{};
  Vec3 com_direction{};  // COM: unit outward direction of the support polygon (y = 0)
  Vec3 point{};          // position: the goal's point in model space; aim: the joint
  double aim_distance = 0;
  double root_weight = 1;  // √weight
};

// The rows of one iteration's task: the active kHigh goals' rows first, then the kNormal ones.
struct TaskRows {
  int high = 0;
  int normal = 0;
  int total() const { return high + normal; }
};

}  // namespace full_body_detail

struct FullBodySolver::Impl {
  using GoalState = full_body_detail::GoalState;
  using JacobianMatrix = full_body_detail::JacobianMatrix;
  using TaskMatrix = full_body_detail::TaskMatrix;
  using TaskRows = full_body_detail::TaskRows;
  using TaskVector = full_body_detail::TaskVector;
  static constexpr int kMaxRows = full_body_detail::kMaxRows;

  std::size_t n = 0;
  std::vector<int> parents;
  std::vector<Quat> rest_rotation;
  std::vector<FullBodyJoint> joints;  // hinge axes normalized, masses resolved
  std::vector<double> mass;
  double total_mass = 0;
  int translating_joint = -1;
  std::vector<int> first_column;  // per joint, −1 when locked
  int translation_column = -1;
  int dof = 0;

  // Scratch, sized by the constructor.
  std::vector<Transform> work, model, pre_step;
  std::vector<std::uint8_t> blocked;         // per joint: clipped by its limit in this iteration
  std::vector<Vec3> mass_point;              // where each joint's mass sits
  std::vector<Vec3> subtree_moment;          // Σ m_k c_k over strict descendants
  std::vector<double> subtree_mass;          // Σ m_k over strict descendants
  std::vector<std::uint32_t> goal_ancestor;  // bit g: the joint moves goal g's joint
  JacobianMatrix jacobian, high_free;
  Eigen::VectorXd dtheta, dtheta_high;
  TaskVector error_rows, saved_rows, scratch_rows, solution;
  int rank_high = 0;
  JacobianMatrix basis;  // orthonormal rows spanning the free kHigh rows
  TaskMatrix gram, coupling;
  std::array<double, static_cast<std::size_t>(kMaxRows) * kMaxRows> factor{};  // Cholesky
  Eigen::SelfAdjointEigenSolver<TaskMatrix> eigen;
  Eigen::Tridiagonalization<TaskMatrix> tridiagonal;
  std::array<full_body_detail::Polygon, kMaxFullBodyGoals> polygons;
  std::array<GoalState, kMaxFullBodyGoals> state;
  bool has_center_of_mass_goal = false;

  void forward_kinematics(std::span<const Transform> local, std::vector<Transform>& out) const {
    for (std::size_t j = 0; j < n; ++j) {
      const int p = parents[j];
      out[j] = p < 0 ? local[j] : out[static_cast<std::size_t>(p)] * local[j];
    }
  }

  // The limit of joint j applied to a local rotation.
  Quat limited(std::size_t j, const Quat& q) const {
    const JointLimit& limit = joints[j].limit;
    if (limit.kind == JointLimit::Kind::kNone) return normalize(q);
    const Quat& rest = rest_rotation[j];
    return normalize(rest * project(limit, conjugate(rest) * q));
  }

  // ---- full_body.cpp: the start of a solve ----

  // True when solve() may run on this input (see FullBodySolver::solve for what is refused);
  // builds the centre-of-mass goals' shrunk polygons and sets has_center_of_mass_goal on the
  // way. Writes no pose.
  bool accepts(std::span<const Transform> local, std::span<const FullBodyGoal> goals,
               const FullBodySettings& settings);
  // The starting pose in `work` (`local` projected into the joint limits) and goal_ancestor.
  void start(std::span<const Transform> local, std::span<const FullBodyGoal> goals);

  // ---- full_body_goals.cpp: the goals at the current pose (`model` up to date) ----

  // Mass points and per-joint sums over strict descendants (for the COM rows); returns the COM.
  Vec3 mass_distribution();
  // Every goal's residual, error and rows into `state`; returns the cost, the weighted sum of
  // the squared errors beyond tolerance (0 when every goal is met).
  double evaluate_goals(std::span<const FullBodyGoal> goals);
  // The first rows.total() rows of `jacobian`: every active goal's rows (laid out by
  // stack_error_rows, scaled by √weight) for every DOF column.
  void fill_jacobian(std::span<const FullBodyGoal> goals, const TaskRows& rows);
  // One DOF column of every active goal's rows: `axis` is the model-space rotation axis of
  // `joint` (or a translation direction when `translation`).
  void fill_column(std::span<const FullBodyGoal> goals, int column, std::size_t joint,
                   const Vec3& axis, bool translation);

  // ---- full_body_step.cpp: one iteration's step ----

  // Lays the active goals' rows out (kHigh first, setting each state's first_row) and writes
  // their clamped, √weight-scaled errors into `error_rows`.
  TaskRows stack_error_rows(std::span<const FullBodyGoal> goals, const FullBodySettings& settings);
  // Takes one step from `work` within the joint limits (the clamping loop); false when the step
  // is not finite (`work` is then as it was).
  bool limited_step(const TaskRows& rows, const FullBodySettings& settings);
  // Takes the columns of the joints `blocked` marks out of the kNormal rows and of the free kHigh
  // rows; true when there was any.
  bool remove_blocked_columns(const TaskRows& rows);
  // dtheta_high: the damped step of the kHigh rows alone.
  void solve_high_rows(const TaskRows& rows, const FullBodySettings& settings);
  // Adds to `dtheta` the damped step of the kNormal rows in the null space of the free kHigh
  // rows (their basis recomputed when `new_basis`).
  void add_normal_rows(const TaskRows& rows, bool new_basis, const FullBodySettings& settings);
  // Applies `dtheta` to `work` in joint order (parents' model rotations from before the step),
  // each rotation projected into its joint's limit; true when a limit clipped a joint that was
  // not yet blocked (it is then marked in `blocked`).
  bool apply_step();

  // ---- full_body_task_solve.cpp: damped least squares in task space ----

  // The damping λ² for rows whose Gram matrix is gram(0:m, 0:m).
  double damping(int m, const FullBodySettings& s);
  // Cholesky factor of gram(0:m, 0:m) + shift·I into `factor`; false when not positive definite.
  bool cholesky(int m, double shift);
  // x = (gram(0:m, 0:m) + λ²I)⁻¹ x.
  void damped_solve(int m, const FullBodySettings& s, TaskVector& x);
  // basis(0:r) = an orthonormal basis of the row space of a(0:m); returns r.
  int orthonormal_rows(const JacobianMatrix& a, int m);
};

}  // namespace kinema
