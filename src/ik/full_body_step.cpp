// One iteration of the full-body solver: the active goals' rows stacked by priority, the
// prioritized damped least-squares step (kNormal rows in the null space of the kHigh ones) and
// the joint-limit clamping loop that applies it. See full_body_internal.h.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "full_body_internal.h"

namespace kinema {
namespace {

constexpr int kLimitPasses = 4;

Vec3 clamp_length(const Vec3& v, double max_length) {
  const double len = length(v);
  return len > max_length ? v * (max_length / len) : v;
}

}  // namespace

FullBodySolver::Impl::TaskRows FullBodySolver::Impl::stack_error_rows(
    std::span<const FullBodyGoal> goals, const FullBodySettings& settings) {
  int rows = 0, high_rows = 0;
  error_rows.resize(kMaxRows);
  for (const FullBodyPriority level : {FullBodyPriority::kHigh, FullBodyPriority::kNormal}) {
    for (std::size_t g = 0; g < goals.size(); ++g) {
      GoalState& st = state[g];
      if (!st.active || goals[g].priority != level) continue;
      st.first_row = rows;
      const Vec3 e =
          clamp_length(st.residual, settings.max_error_step) * std::sqrt(goals[g].weight);
      error_rows(rows) = e.x;
      if (st.rows == 3) {
        error_rows(rows + 1) = e.y;
        error_rows(rows + 2) = e.z;
      }
      rows += st.rows;
    }
    if (level == FullBodyPriority::kHigh) high_rows = rows;
  }
  return {high_rows, rows - high_rows};
}

// Joints the limits clip are taken out of the step and the step is solved again (at most
// kLimitPasses times), so the prioritized step never relies on a motion that a limit then
// removes: that would drag the kHigh goals off (Baerlocher and Boulic's clamping loop).
bool FullBodySolver::Impl::limited_step(const TaskRows& rows, const FullBodySettings& settings) {
  std::fill(blocked.begin(), blocked.end(), std::uint8_t{0});
  std::copy(work.begin(), work.end(), pre_step.begin());
  bool any_blocked = false;
  saved_rows = error_rows;
  if (rows.high > 0 && rows.normal > 0) high_free.topRows(rows.high) = jacobian.topRows(rows.high);
  rank_high = 0;
  for (int pass = 0; pass < kLimitPasses; ++pass) {
    error_rows = saved_rows;
    if (pass > 0) {
      std::copy(pre_step.begin(), pre_step.end(), work.begin());
      if (remove_blocked_columns(rows)) any_blocked = true;
    }
    if (pass == 0) solve_high_rows(rows, settings);  // the kHigh step does not change
    dtheta = dtheta_high;
    if (rows.normal > 0) add_normal_rows(rows, pass == 0 || any_blocked, settings);
    const double biggest = dtheta.cwiseAbs().maxCoeff();
    if (!std::isfinite(biggest)) return false;
    if (biggest > settings.max_joint_step) dtheta *= settings.max_joint_step / biggest;
    const bool clipped = apply_step();
    if (!clipped || rows.normal == 0) break;
  }
  return true;
}

bool FullBodySolver::Impl::remove_blocked_columns(const TaskRows& rows) {
  bool any = false;
  for (std::size_t j = 0; j < n; ++j) {
    const int c0 = first_column[j];
    if (c0 < 0 || !blocked[j]) continue;
    const int width = joints[j].kind == FullBodyJointKind::kHinge ? 1 : 3;
    // Only the kNormal rows lose the column (kHigh may still move the joint back in); the
    // null-space projector is then taken over the free columns alone.
    jacobian.block(rows.high, c0, rows.normal, width).setZero();
    high_free.block(0, c0, rows.high, width).setZero();
    any = true;
  }
  return any;
}

void FullBodySolver::Impl::solve_high_rows(const TaskRows& rows, const FullBodySettings& settings) {
  dtheta_high.setZero();
  if (rows.high == 0) return;
  const auto jh = jacobian.topRows(rows.high);
  gram.resize(rows.high, rows.high);
  gram.noalias() = jh.lazyProduct(jh.transpose());
  solution = error_rows.head(rows.high);
  damped_solve(rows.high, settings, solution);
  dtheta_high.noalias() = jh.transpose().lazyProduct(solution.head(rows.high));
}

void FullBodySolver::Impl::add_normal_rows(const TaskRows& rows, bool new_basis,
                                           const FullBodySettings& settings) {
  const int normal_rows = rows.normal;
  const auto jn = jacobian.middleRows(rows.high, normal_rows);
  auto en = error_rows.segment(rows.high, normal_rows);
  gram.resize(normal_rows, normal_rows);
  for (int i = 0; i < normal_rows; ++i)
    for (int k = 0; k <= i; ++k) gram(i, k) = gram(k, i) = jn.row(i).dot(jn.row(k));
  int rank = 0;
  if (rows.high > 0) {
    // Normal rows act in the null space of the high ones, J_n P with P = I − QᵀQ and Q an
    // orthonormal basis of the free J_h rows (so QᵀQ = J_hᵀ (J_h J_hᵀ)⁺ J_h), aiming at
    // what the high step leaves. P is applied implicitly: with C = J_n Qᵀ the task matrix
    // is J_n P J_nᵀ = J_n J_nᵀ − C Cᵀ and the step P J_nᵀ y = J_nᵀ y − Qᵀ Cᵀ y. The
    // projector is undamped: a damped one would let an unreachable normal goal leak into
    // (and drag off) the high goals near a singularity, where damping is largest.
    en.noalias() -= jn.lazyProduct(dtheta);
    if (new_basis) rank_high = orthonormal_rows(high_free, rows.high);
    rank = rank_high;
    coupling.resize(normal_rows, std::max(1, rank));
    for (int i = 0; i < normal_rows; ++i)
      for (int k = 0; k < rank; ++k) coupling(i, k) = jn.row(i).dot(basis.row(k));
    for (int i = 0; i < normal_rows; ++i)
      for (int k = 0; k <= i; ++k) {
        double c = 0;
        for (int l = 0; l < rank; ++l) c += coupling(i, l) * coupling(k, l);
        gram(i, k) -= c;
        if (k != i) gram(k, i) = gram(i, k);
      }
  }
  solution = en;
  damped_solve(normal_rows, settings, solution);
  const auto y = solution.head(normal_rows);
  dtheta.noalias() += jn.transpose().lazyProduct(y);
  for (int k = 0; k < rank; ++k)
    dtheta -= coupling.col(k).head(normal_rows).dot(y) * basis.row(k).transpose();
}

bool FullBodySolver::Impl::apply_step() {
  bool clipped = false;
  for (std::size_t j = 0; j < n; ++j) {
    const int c0 = first_column[j];
    if (c0 < 0) continue;
    Quat& q = work[j].rotation;
    if (joints[j].kind == FullBodyJointKind::kHinge) {
      q = q * Quat::from_axis_angle(joints[j].hinge_axis, dtheta(c0));
    } else {
      const int p = parents[j];
      const Quat parent = p < 0 ? Quat::identity() : model[static_cast<std::size_t>(p)].rotation;
      const Vec3 turn{dtheta(c0), dtheta(c0 + 1), dtheta(c0 + 2)};
      q = conjugate(parent) * from_rotation_vector(turn) * parent * q;
    }
    const Quat free = normalize(q);
    q = limited(j, free);
    // Clipped by its limit: the step assumed a motion that did not happen.
    if (!blocked[j] && !(q == free) && angle_between(q, free) > 1e-9) {
      blocked[j] = 1;
      clipped = true;
    }
  }
  if (translation_column >= 0) {
    const auto t = static_cast<std::size_t>(translating_joint);
    const int c0 = translation_column;
    Vec3 move{dtheta(c0), dtheta(c0 + 1), dtheta(c0 + 2)};
    const int p = parents[t];
    if (p >= 0) {
      const Transform& parent = model[static_cast<std::size_t>(p)];
      move = rotate(conjugate(parent.rotation), move);
      move = Vec3{move.x / parent.scale.x, move.y / parent.scale.y, move.z / parent.scale.z};
    }
    work[t].translation = work[t].translation + move;
  }
  return clipped;
}

}  // namespace kinema
