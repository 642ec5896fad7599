// Full-body IK: prioritized, weighted, adaptively damped least squares over every goal at once
// (Buss 2004; Wampler 1986; Nakamura & Hanafusa 1986). See kinema/ik/full_body.h. This file builds
// the solver and runs a solve: validation, the starting pose and the iteration loop; the stages it
// calls are listed in full_body_internal.h.
#include "kinema/ik/full_body.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "full_body_internal.h"
#include "kinema/core/error.h"

namespace kinema {
namespace {

using full_body_detail::kMaxRows;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool finite_nonzero(const Quat& q) { return is_finite(q) && length(q) > 0; }

bool settings_valid(const FullBodySettings& s) {
  auto ok = [](double v) { return std::isfinite(v) && v >= 0; };
  return s.max_iterations >= 0 && ok(s.lambda) && ok(s.lambda_max) && ok(s.singular_threshold) &&
         ok(s.max_error_step) && s.max_error_step > 0 && ok(s.max_joint_step) &&
         s.max_joint_step > 0;
}

}  // namespace

FullBodyGoal FullBodyGoal::position(int joint, const Vec3& target, const Vec3& local_point) {
  FullBodyGoal g;
  g.kind = FullBodyGoalKind::kPosition;
  g.joint = joint;
  g.target = target;
  g.local_point = local_point;
  return g;
}

FullBodyGoal FullBodyGoal::orientation(int joint, const Quat& target_rotation) {
  FullBodyGoal g;
  g.kind = FullBodyGoalKind::kOrientation;
  g.joint = joint;
  g.target_rotation = target_rotation;
  return g;
}

FullBodyGoal FullBodyGoal::aim(int joint, const Vec3& local_axis, const Vec3& target) {
  FullBodyGoal g;
  g.kind = FullBodyGoalKind::kAim;
  g.joint = joint;
  g.local_axis = local_axis;
  g.target = target;
  return g;
}

FullBodyGoal FullBodyGoal::center_of_mass(std::span<const Vec3> support_polygon, double margin) {
  FullBodyGoal g;
  g.kind = FullBodyGoalKind::kCenterOfMass;
  g.support_polygon = support_polygon;
  g.margin = margin;
  return g;
}

FullBodySolver::FullBodySolver(const FullBodyRig& rig) : impl_(std::make_unique<Impl>()) {
  constexpr const char* kPlace = "full-body solver";
  Impl& s = *impl_;
  s.n = rig.parents.size();
  if (s.n == 0) throw Error("", kPlace, "the skeleton has no joints");
  if (rig.rest.size() != s.n) throw Error("", kPlace, "rest pose size differs from parents");
  if (!rig.joints.empty() && rig.joints.size() != s.n)
    throw Error("", kPlace, "joint description count differs from parents");
  if (rig.translating_joint < -1 || rig.translating_joint >= static_cast<int>(s.n))
    throw Error("", kPlace, "translating joint out of range");
  s.parents.assign(rig.parents.begin(), rig.parents.end());
  s.joints.assign(s.n, FullBodyJoint{});
  if (!rig.joints.empty()) s.joints.assign(rig.joints.begin(), rig.joints.end());
  s.rest_rotation.resize(s.n);
  s.work.resize(s.n);
  s.pre_step.resize(s.n);
  s.blocked.resize(s.n);
  s.model.resize(s.n);
  s.mass_point.resize(s.n);
  s.subtree_moment.resize(s.n);
  s.subtree_mass.resize(s.n);
  s.goal_ancestor.resize(s.n);
  s.mass.resize(s.n);
  s.first_column.assign(s.n, -1);
  for (std::size_t j = 0; j < s.n; ++j) {
    const std::string where = "joint " + std::to_string(j);
    if (s.parents[j] < -1 || s.parents[j] >= static_cast<int>(j))
      throw Error("", kPlace, where + ": parents are not parents-first");
    const Transform& r = rig.rest[j];
    if (!is_finite(r) || !finite_nonzero(r.rotation) || r.scale.x == 0 || r.scale.y == 0 ||
        r.scale.z == 0)
      throw Error("", kPlace, where + ": rest transform is not finite or has a zero scale");
    s.rest_rotation[j] = normalize(r.rotation);
    FullBodyJoint& joint = s.joints[j];
    if (joint.kind == FullBodyJointKind::kHinge) {
      if (!is_finite(joint.hinge_axis) || !(length(joint.hinge_axis) > 1e-12))
        throw Error("", kPlace, where + ": hinge axis is zero or not finite");
      joint.hinge_axis = normalize(joint.hinge_axis);
    }
    if (!std::isfinite(joint.mass)) throw Error("", kPlace, where + ": mass is not finite");
  }
  // Default masses: the rest bone length (model-space, so scales count).
  s.forward_kinematics(rig.rest, s.model);
  s.total_mass = 0;
  for (std::size_t j = 0; j < s.n; ++j) {
    const int p = s.parents[j];
    double m = s.joints[j].mass;
    if (m < 0)
      m = p < 0
              ? 0.0
              : distance(s.model[j].translation, s.model[static_cast<std::size_t>(p)].translation);
    s.mass[j] = m;
    s.total_mass += m;
  }
  int column = 0;
  for (std::size_t j = 0; j < s.n; ++j) {
    switch (s.joints[j].kind) {
      case FullBodyJointKind::kLocked:
        break;
      case FullBodyJointKind::kHinge:
        s.first_column[j] = column;
        column += 1;
        break;
      case FullBodyJointKind::kBall:
        s.first_column[j] = column;
        column += 3;
        break;
    }
  }
  s.translating_joint = rig.translating_joint;
  if (s.translating_joint >= 0) {
    s.translation_column = column;
    column += 3;
  }
  s.dof = column;
  s.jacobian.resize(kMaxRows, std::max(1, s.dof));
  s.high_free.resize(kMaxRows, std::max(1, s.dof));
  s.basis.resize(kMaxRows, std::max(1, s.dof));
  s.dtheta.resize(std::max(1, s.dof));
  s.dtheta_high.resize(std::max(1, s.dof));
}

FullBodySolver::~FullBodySolver() = default;
FullBodySolver::FullBodySolver(FullBodySolver&&) noexcept = default;
FullBodySolver& FullBodySolver::operator=(FullBodySolver&&) noexcept = default;

std::size_t FullBodySolver::joint_count() const { return impl_->n; }

Vec3 FullBodySolver::center_of_mass(std::span<const Transform> local) const {
  const Impl& s = *impl_;
  if (local.size() != s.n || !(s.total_mass > 0)) return {};
  std::vector<Transform> model(s.n);
  s.forward_kinematics(local, model);
  Vec3 sum{};
  for (std::size_t j = 0; j < s.n; ++j) {
    const int p = s.parents[j];
    const Vec3 c =
        p < 0 ? model[j].translation
              : (model[static_cast<std::size_t>(p)].translation + model[j].translation) * 0.5;
    sum = sum + c * s.mass[j];
  }
  return sum / s.total_mass;
}

bool FullBodySolver::Impl::accepts(std::span<const Transform> local,
                                   std::span<const FullBodyGoal> goals,
                                   const FullBodySettings& settings) {
  if (local.size() != n || goals.empty() || goals.size() > kMaxFullBodyGoals ||
      !settings_valid(settings))
    return false;
  for (const Transform& t : local)
    if (!is_finite(t) || !finite_nonzero(t.rotation) || t.scale.x == 0 || t.scale.y == 0 ||
        t.scale.z == 0)
      return false;
  has_center_of_mass_goal = false;
  for (std::size_t g = 0; g < goals.size(); ++g) {
    const FullBodyGoal& goal = goals[g];
    if (!std::isfinite(goal.weight) || !(goal.weight > 0) || !std::isfinite(goal.tolerance) ||
        goal.tolerance < 0)
      return false;
    if (goal.kind == FullBodyGoalKind::kCenterOfMass) {
      if (!(total_mass > 0) ||
          !full_body_detail::make_support_polygon(goal.support_polygon, goal.margin, polygons[g]))
        return false;
      has_center_of_mass_goal = true;
      continue;
    }
    if (goal.joint < 0 || goal.joint >= static_cast<int>(n)) return false;
    switch (goal.kind) {
      case FullBodyGoalKind::kPosition:
        if (!is_finite(goal.local_point) || !is_finite(goal.target)) return false;
        break;
      case FullBodyGoalKind::kOrientation:
        if (!finite_nonzero(goal.target_rotation)) return false;
        break;
      case FullBodyGoalKind::kAim:
        if (!is_finite(goal.target) || !is_finite(goal.local_axis) ||
            !(length(goal.local_axis) > 1e-12))
          return false;
        break;
      case FullBodyGoalKind::kCenterOfMass:
        break;
    }
  }
  return true;
}

void FullBodySolver::Impl::start(std::span<const Transform> local,
                                 std::span<const FullBodyGoal> goals) {
  std::fill(goal_ancestor.begin(), goal_ancestor.end(), 0u);
  for (std::size_t g = 0; g < goals.size(); ++g) {
    if (goals[g].kind == FullBodyGoalKind::kCenterOfMass) continue;
    for (int j = goals[g].joint; j >= 0; j = parents[static_cast<std::size_t>(j)])
      goal_ancestor[static_cast<std::size_t>(j)] |= 1u << g;
  }
  for (std::size_t j = 0; j < n; ++j) {
    work[j] = local[j];
    if (joints[j].kind != FullBodyJointKind::kLocked)
      work[j].rotation = limited(j, work[j].rotation);
  }
}

FullBodyResult FullBodySolver::solve(std::span<Transform> local,
                                     std::span<const FullBodyGoal> goals,
                                     const FullBodySettings& settings) {
  Impl& s = *impl_;
  FullBodyResult result;
  result.goal_count = std::min(goals.size(), kMaxFullBodyGoals);
  for (std::size_t g = 0; g < result.goal_count; ++g) result.goals[g] = {false, kNaN};
  if (!s.accepts(local, goals, settings)) return result;  // nothing written

  s.start(local, goals);
  s.forward_kinematics(s.work, s.model);
  double cost = s.evaluate_goals(goals);
  int it = 0;
  for (;;) {
    for (std::size_t g = 0; g < goals.size(); ++g)
      result.goals[g] = {s.state[g].error <= goals[g].tolerance, s.state[g].error};
    if (cost == 0 || it >= settings.max_iterations || s.dof == 0) break;
    const Impl::TaskRows rows = s.stack_error_rows(goals, settings);
    if (rows.total() == 0) break;
    s.fill_jacobian(goals, rows);
    if (!s.limited_step(rows, settings)) break;  // not finite: the pose before the step stays
    ++it;
    s.forward_kinematics(s.work, s.model);
    cost = s.evaluate_goals(goals);
  }

  std::copy(s.work.begin(), s.work.end(), local.begin());
  result.iterations = it;
  result.status = cost == 0 ? IkStatus::kReached : IkStatus::kMaxIterations;
  return result;
}

}  // namespace kinema
