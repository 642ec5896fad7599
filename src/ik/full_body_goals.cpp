// The full-body solver's goals at the current pose: what each goal still asks for (its residual
// and error) and how every degree of freedom moves it (its rows of the Jacobian). See
// full_body_internal.h.
#include <algorithm>
#include <cmath>

#include "full_body_internal.h"

namespace kinema {
namespace {

using full_body_detail::GoalState;

// The aim goal's state: the angle between the joint's axis `d` (model space, unit) and the
// direction from the joint at `joint_position` to `target`, and the rotation vector that closes
// it; inactive when the target is on the joint (any direction aims at it).
void aim_state(const Vec3& d, const Vec3& joint_position, const Vec3& target, GoalState& st) {
  st.point = joint_position;
  const Vec3 v = target - joint_position;
  const double dist = length(v);
  st.rows = 3;
  if (!(dist > 1e-9)) {
    st.error = 0;
    st.residual = Vec3{};
    st.active = false;
    return;
  }
  const Vec3 t = v / dist;
  const Vec3 axis = cross(d, t);
  const double sin_a = length(axis);
  st.error = std::atan2(sin_a, dot(d, t));
  if (sin_a > 1e-12) {
    st.residual = axis * (st.error / sin_a);
  } else if (st.error > 1.0) {  // pointing straight away: turn about any perpendicular
    const Vec3 helper = std::abs(d.x) < 0.9 ? Vec3::unit_x() : Vec3::unit_y();
    st.residual = normalize(cross(d, helper)) * st.error;
  } else {
    st.residual = Vec3{};
  }
  st.aim_direction = d;
  st.aim_to_target = t;
  st.aim_distance = dist;
}

// The centre-of-mass goal's state: one row, the COM's motion along the outward direction,
// pulled back by the distance when outside; held (zero error) while inside but within the band,
// so other goals cannot push it out and the row set does not flip every iteration.
void center_of_mass_state(const full_body_detail::Polygon& polygon, const Vec3& com,
                          GoalState& st) {
  const full_body_detail::PolygonQuery q = full_body_detail::query_polygon(polygon, com.x, com.z);
  st.error = q.outside;
  st.residual = Vec3{-q.outside, 0, 0};
  st.com_direction = Vec3{q.nx, 0, q.nz};
  st.rows = 1;
  st.active = q.outside > 0 || q.inside < kFullBodyCenterOfMassBand;
}

}  // namespace

Vec3 FullBodySolver::Impl::mass_distribution() {
  Vec3 sum{};
  for (std::size_t j = 0; j < n; ++j) {
    const int p = parents[j];
    const Vec3 pj = model[j].translation;
    mass_point[j] = p < 0 ? pj : (model[static_cast<std::size_t>(p)].translation + pj) * 0.5;
    subtree_moment[j] = Vec3{};
    subtree_mass[j] = 0;
  }
  for (std::size_t j = n; j-- > 0;) {
    const int p = parents[j];
    sum = sum + mass_point[j] * mass[j];
    if (p < 0) continue;
    const auto pi = static_cast<std::size_t>(p);
    subtree_moment[pi] = subtree_moment[pi] + subtree_moment[j] + mass_point[j] * mass[j];
    subtree_mass[pi] += subtree_mass[j] + mass[j];
  }
  return sum / total_mass;
}

double FullBodySolver::Impl::evaluate_goals(std::span<const FullBodyGoal> goals) {
  Vec3 com{};
  if (has_center_of_mass_goal) com = mass_distribution();
  double cost = 0;
  for (std::size_t g = 0; g < goals.size(); ++g) {
    const FullBodyGoal& goal = goals[g];
    GoalState& st = state[g];
    st.active = true;
    st.root_weight = std::sqrt(goal.weight);
    const Transform* m = goal.kind == FullBodyGoalKind::kCenterOfMass
                             ? nullptr
                             : &model[static_cast<std::size_t>(goal.joint)];
    switch (goal.kind) {
      case FullBodyGoalKind::kPosition:
        st.point = m->transform_point(goal.local_point);
        st.residual = goal.target - st.point;
        st.error = length(st.residual);
        st.rows = 3;
        break;
      case FullBodyGoalKind::kOrientation:
        st.residual = to_rotation_vector(normalize(goal.target_rotation) * conjugate(m->rotation));
        st.error = length(st.residual);
        st.rows = 3;
        break;
      case FullBodyGoalKind::kAim:
        aim_state(normalize(rotate(m->rotation, goal.local_axis)), m->translation, goal.target, st);
        break;
      case FullBodyGoalKind::kCenterOfMass:
        center_of_mass_state(polygons[g], com, st);
        break;
    }
    const double excess = std::max(0.0, st.error - goal.tolerance);
    cost += goal.weight * excess * excess;
  }
  return cost;
}

void FullBodySolver::Impl::fill_jacobian(std::span<const FullBodyGoal> goals,
                                         const TaskRows& rows) {
  jacobian.topRows(rows.total()).setZero();
  for (std::size_t j = 0; j < n; ++j) {
    const int c0 = first_column[j];
    if (c0 < 0) continue;
    if (joints[j].kind == FullBodyJointKind::kHinge) {
      fill_column(goals, c0, j, rotate(model[j].rotation, joints[j].hinge_axis), false);
    } else {
      fill_column(goals, c0, j, Vec3::unit_x(), false);
      fill_column(goals, c0 + 1, j, Vec3::unit_y(), false);
      fill_column(goals, c0 + 2, j, Vec3::unit_z(), false);
    }
  }
  if (translation_column >= 0) {
    const auto t = static_cast<std::size_t>(translating_joint);
    fill_column(goals, translation_column, t, Vec3::unit_x(), true);
    fill_column(goals, translation_column + 1, t, Vec3::unit_y(), true);
    fill_column(goals, translation_column + 2, t, Vec3::unit_z(), true);
  }
}

void FullBodySolver::Impl::fill_column(std::span<const FullBodyGoal> goals, int column,
                                       std::size_t joint, const Vec3& axis, bool translation) {
  const Vec3 pj = model[joint].translation;
  for (std::size_t g = 0; g < goals.size(); ++g) {
    const GoalState& st = state[g];
    if (!st.active) continue;
    const FullBodyGoal& goal = goals[g];
    const double w = st.root_weight;
    Vec3 c{};
    if (goal.kind == FullBodyGoalKind::kCenterOfMass) {
      if (translation) {
        const double moved =
            subtree_mass[joint] + (parents[joint] < 0 ? mass[joint] : 0.5 * mass[joint]);
        c = axis * (moved / total_mass);
      } else {
        c = cross(axis, subtree_moment[joint] - pj * subtree_mass[joint]) / total_mass;
      }
      jacobian(st.first_row, column) = w * dot(c, st.com_direction);
      continue;
    }
    if (!(goal_ancestor[joint] & (1u << g))) continue;
    switch (goal.kind) {
      case FullBodyGoalKind::kPosition:
        c = translation ? axis : cross(axis, st.point - pj);
        break;
      case FullBodyGoalKind::kOrientation:
        c = translation ? Vec3{} : axis;
        break;
      case FullBodyGoalKind::kAim: {
        // Current direction turns by the perpendicular part of the axis; the direction to
        // the target turns as the joint moves: t × Δp / distance.
        const Vec3 d = st.aim_direction, t = st.aim_to_target;
        const Vec3 moved = translation ? axis : cross(axis, st.point - pj);
        c = cross(t, moved) * (-1.0 / st.aim_distance);
        if (!translation) c = c + axis - d * dot(d, axis);
        break;
      }
      case FullBodyGoalKind::kCenterOfMass:
        break;
    }
    jacobian(st.first_row, column) = w * c.x;
    jacobian(st.first_row + 1, column) = w * c.y;
    jacobian(st.first_row + 2, column) = w * c.z;
  }
}

}  // namespace kinema
