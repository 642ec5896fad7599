#include "kinema/ik/jacobian.h"

#include <Eigen/Dense>
#include <Eigen/SVD>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>

namespace kinema {
namespace {

constexpr int kMaxDof = 3 * static_cast<int>(kMaxIkChainJoints);
constexpr int kMaxRows = 3 * static_cast<int>(kMaxIkTreeEffectors);  // ≥ 6 (position + orientation)
static_assert(kMaxRows >= 6);
// Fixed upper bounds keep Eigen's storage on the stack: per-frame solves never allocate.
using JMat =
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor, kMaxRows, kMaxDof>;
using EVec = Eigen::Matrix<double, Eigen::Dynamic, 1, Eigen::ColMajor, kMaxRows, 1>;
using TVec = Eigen::Matrix<double, Eigen::Dynamic, 1, Eigen::ColMajor, kMaxDof, 1>;
using SMat =
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor, kMaxRows, kMaxRows>;
using SVec = Eigen::Matrix<double, Eigen::Dynamic, 1, Eigen::ColMajor, kMaxRows, 1>;
using VMat =
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor, kMaxDof, kMaxRows>;

bool settings_valid(const JacobianSettings& s) {
  return s.settings.tolerance >= 0 && s.settings.max_iterations >= 0 && s.lambda >= 0 &&
         s.lambda_max >= 0 && s.singular_threshold >= 0 && s.max_error_step >= 0 &&
         s.max_joint_step > 0 && s.orientation_weight >= 0;
}

bool joints_valid(const IkChain& chain, std::span<const IkJoint> joints) {
  if (joints.size() != chain.offsets.size()) return false;
  for (const IkJoint& j : joints)
    if (j.type == IkJointType::kHinge && (!is_finite(j.axis) || !(length(j.axis) > 0)))
      return false;
  return true;
}

// Orientation error as a rotation vector taking `current` to `goal` (radians, model space).
Vec3 orientation_error(const Quat& current, const Quat& goal) {
  return to_rotation_vector(normalize(goal) * conjugate(current));
}

struct Pose {
  std::array<Quat, kMaxIkChainJoints> model;
  std::array<Vec3, kMaxIkChainJoints + 1> points;
};

// Δθ from the Jacobian J and the (clamped) task error e by the chosen method, then clamped
// to max_joint_step; false when it is not finite.
bool solve_dtheta(const JMat& J, const EVec& e, const JacobianSettings& s, TVec& dtheta) {
  const int rows = static_cast<int>(J.rows()), dof = static_cast<int>(J.cols());
  if (s.method == JacobianMethod::kTranspose) {
    const TVec g = J.transpose() * e;
    const EVec jjte = J * g;
    const double denom = jjte.squaredNorm();
    dtheta = denom > 0 ? TVec(g * (e.dot(jjte) / denom)) : TVec(TVec::Zero(dof));
  } else {
    // SVD J = U Σ Vᵀ. A JacobiSVD of the wide J itself would reserve a kMaxDof² V on the
    // stack (~74 KB), so with more DOF than rows J is first reduced by a QR of Jᵀ = Q R
    // (J = Rᵀ Qᵀ): the SVD of the small Rᵀ = U Σ Wᵀ gives V = Q W. Eigen does the same inside.
    SVec sv;
    SMat u;
    VMat v;
    if (dof <= rows) {
      const Eigen::JacobiSVD<SMat> svd(SMat(J), Eigen::ComputeThinU | Eigen::ComputeThinV);
      sv = svd.singularValues();
      u = svd.matrixU();
      v = svd.matrixV();
    } else {
      const Eigen::HouseholderQR<VMat> qr(VMat(J.transpose()));
      const SMat rt = SMat(qr.matrixQR().topRows(rows).triangularView<Eigen::Upper>()).transpose();
      const Eigen::JacobiSVD<SMat> svd(rt, Eigen::ComputeFullU | Eigen::ComputeFullV);
      VMat q = VMat::Identity(dof, rows);
      q.applyOnTheLeft(qr.householderQ());
      sv = svd.singularValues();
      u = svd.matrixU();
      v = q * svd.matrixV();
    }
    const double smax = sv.size() ? sv(0) : 0;
    double lambda2 = 0;
    if (s.method == JacobianMethod::kDampedLeastSquares) {
      lambda2 = s.lambda * s.lambda;
    } else if (s.method == JacobianMethod::kAdaptiveDampedLeastSquares) {
      // σ_min over the directions the chain can move in at all: an exactly zero σ (a planar
      // chain's normal) contributes nothing to Δθ and must not force full damping.
      double smin = smax;
      for (int k = 0; k < sv.size(); ++k)
        if (sv(k) > 1e-9 * smax) smin = sv(k);
      lambda2 = s.lambda * s.lambda;
      if (smin < s.singular_threshold && s.singular_threshold > 0) {
        const double f = smin / s.singular_threshold;
        lambda2 = std::max(lambda2, s.lambda_max * s.lambda_max * (1 - f * f));
      }
    }
    const EVec ue = u.transpose() * e;
    EVec scaled(sv.size());
    for (int k = 0; k < sv.size(); ++k) {
      const double sk = sv(k);
      if (s.method == JacobianMethod::kPseudoInverse)
        scaled(k) = sk > 1e-12 * smax && sk > 0 ? ue(k) / sk : 0.0;
      else
        scaled(k) = sk * sk + lambda2 > 0 ? ue(k) * sk / (sk * sk + lambda2) : 0.0;
    }
    dtheta = v * scaled;
  }
  const double biggest = dtheta.size() ? dtheta.cwiseAbs().maxCoeff() : 0.0;
  if (!std::isfinite(biggest)) return false;
  if (biggest > s.max_joint_step) dtheta *= s.max_joint_step / biggest;
  return true;
}

// Computes Δθ for the current pose; false when the step is not finite.
bool compute_step(std::span<const IkJoint> joints, const Pose& pose, const Vec3& target,
                  const Quat* goal, const JacobianSettings& s, double max_error, TVec& dtheta) {
  const std::size_t n = joints.size();
  const int rows = goal ? 6 : 3;
  const int dof = static_cast<int>(jacobian_dof(joints));
  const Vec3 end = pose.points[n];
  JMat J(rows, dof);
  J.setZero();
  int c = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const Vec3 r = end - pose.points[i];
    auto column = [&](const Vec3& axis) {
      const Vec3 v = cross(axis, r);
      J(0, c) = v.x;
      J(1, c) = v.y;
      J(2, c) = v.z;
      if (goal) {
        J(3, c) = axis.x * s.orientation_weight;
        J(4, c) = axis.y * s.orientation_weight;
        J(5, c) = axis.z * s.orientation_weight;
      }
      ++c;
    };
    if (joints[i].type == IkJointType::kHinge) {
      column(rotate(pose.model[i], normalize(joints[i].axis)));
    } else {
      column(Vec3::unit_x());
      column(Vec3::unit_y());
      column(Vec3::unit_z());
    }
  }
  Vec3 ep = target - end;
  const double len = length(ep);
  if (len > max_error) ep = ep * (max_error / len);
  EVec e(rows);
  e(0) = ep.x;
  e(1) = ep.y;
  e(2) = ep.z;
  if (goal) {
    const Vec3 eo = orientation_error(pose.model[n - 1], *goal) * s.orientation_weight;
    e(3) = eo.x;
    e(4) = eo.y;
    e(5) = eo.z;
  }

  return solve_dtheta(J, e, s, dtheta);
}

void apply_step(const IkChain& chain, std::span<const IkJoint> joints, const Pose& pose,
                std::span<Quat> local, const TVec& dtheta, IkLimitHook limits) {
  int c = 0;
  for (std::size_t i = 0; i < joints.size(); ++i) {
    if (joints[i].type == IkJointType::kHinge) {
      // The axis is fixed in the joint's frame, so the turn is applied on the right.
      local[i] = normalize(local[i] * Quat::from_axis_angle(joints[i].axis, dtheta(c++)));
    } else {
      const Vec3 w{dtheta(c), dtheta(c + 1), dtheta(c + 2)};
      c += 3;
      // A model-space turn w, conjugated into the parent's frame.
      const Quat parent = i == 0 ? normalize(chain.base_rotation) : pose.model[i - 1];
      local[i] = normalize(conjugate(parent) * from_rotation_vector(w) * parent * local[i]);
    }
    local[i] = limits(i, local[i]);
  }
}

bool inputs_valid(const IkChain& chain, std::span<const IkJoint> joints, std::span<Quat> local,
                  const Vec3& target, const JacobianSettings& s, const Quat* goal) {
  return ik_chain_valid(chain, local) && joints_valid(chain, joints) && is_finite(target) &&
         settings_valid(s) && (!goal || (is_finite(*goal) && length(*goal) > 0));
}

// The error clamp of one step (metres): max_error_step, or with kJacobianAutoErrorStep a
// fraction of the reach (no clamp for a chain of zero reach).
double error_clamp(const JacobianSettings& s, double reach) {
  if (s.max_error_step > 0) return s.max_error_step;
  return reach > 0 ? kJacobianAutoErrorFraction * reach : 1e300;
}

// Where a solve aims: the target itself when it lies within reach (or within the tolerance of
// it), else the point kJacobianReachMargin short of full extension on the line from `base`
// (the joint that does not move) towards it.
Vec3 aim_point(const Vec3& base, double reach, const Vec3& target, double tolerance) {
  const double d = distance(base, target);
  if (!(d > reach + tolerance)) return target;
  return base + (target - base) * ((1 - kJacobianReachMargin) * reach / d);
}

// A joint's local rotation turned so that the bone `v` (model space, from the joint) points as
// nearly as the joint allows along `d`: a ball joint by the shortest arc, a hinge about its axis.
// `parent` and `model` are the parent's and the joint's model rotations.
Quat turn_towards(const IkJoint& joint, const Quat& local, const Quat& parent, const Quat& model,
                  const Vec3& v, const Vec3& d) {
  constexpr double kTiny = 1e-12;
  if (joint.type == IkJointType::kBall) {
    if (!(length(v) > kTiny) || !(length(d) > kTiny)) return local;
    return normalize(conjugate(parent) * from_to(v, d) * parent * local);
  }
  const Vec3 a = rotate(model, normalize(joint.axis));
  const Vec3 vp = v - a * dot(a, v), dp = d - a * dot(a, d);
  if (!(length(vp) > kTiny) || !(length(dp) > kTiny)) return local;
  const double angle = std::atan2(dot(a, cross(vp, dp)), dot(vp, dp));
  return normalize(local * Quat::from_axis_angle(joint.axis, angle));
}

void fk(const IkChain& chain, std::span<const Quat> local, Pose& pose) {
  const std::size_t n = local.size();
  ik_chain_fk(chain, local, std::span<Quat>(pose.model.data(), n),
              std::span<Vec3>(pose.points.data(), n + 1));
}

}  // namespace

std::size_t jacobian_dof(std::span<const IkJoint> joints) {
  std::size_t d = 0;
  for (const IkJoint& j : joints) d += j.type == IkJointType::kHinge ? 1 : 3;
  return d;
}

bool jacobian_step(const IkChain& chain, std::span<const IkJoint> joints, std::span<Quat> local,
                   const Vec3& target, std::span<double> delta, const JacobianSettings& s,
                   IkLimitHook limits, const Quat* goal) {
  if (!inputs_valid(chain, joints, local, target, s, goal)) return false;
  if (delta.size() != jacobian_dof(joints)) return false;
  Pose pose;
  fk(chain, local, pose);
  TVec dtheta;
  if (!compute_step(joints, pose, target, goal, s, error_clamp(s, ik_chain_reach(chain)), dtheta))
    return false;
  for (std::size_t k = 0; k < delta.size(); ++k) delta[k] = dtheta(static_cast<int>(k));
  apply_step(chain, joints, pose, local, dtheta, limits);
  return true;
}

IkResult jacobian_solve(const IkChain& chain, std::span<const IkJoint> joints,
                        std::span<Quat> local, const Vec3& target, const JacobianSettings& s,
                        IkLimitHook limits, const Quat* goal) {
  IkResult result;
  result.error = std::nan("");
  if (!inputs_valid(chain, joints, local, target, s, goal)) return result;
  const std::size_t n = local.size();
  // Work on a copy so a failed step (non-finite) leaves the caller's pose as it was.
  std::array<Quat, kMaxIkChainJoints> work;
  for (std::size_t i = 0; i < n; ++i) work[i] = limits(i, normalize(local[i]));
  const std::span<Quat> w(work.data(), n);
  Pose pose;
  fk(chain, w, pose);
  const double reach = ik_chain_reach(chain);
  const double max_error = error_clamp(s, reach);
  const Vec3 aim = aim_point(chain.base_position, reach, target, s.settings.tolerance);
  // The error the iteration drives down: towards `aim`, and the orientation goal.
  auto aim_error = [&] {
    const double pos = distance(pose.points[n], aim);
    if (!goal) return pos;
    const double ang = length(orientation_error(pose.model[n - 1], *goal));
    return std::max(pos, ang * s.orientation_weight);
  };
  double err = aim_error();
  int it = 0;
  bool ok = true;
  while (err > s.settings.tolerance && it < s.settings.max_iterations) {
    TVec dtheta;
    if (!compute_step(joints, pose, aim, goal, s, max_error, dtheta)) {
      ok = false;
      break;
    }
    ++it;
    apply_step(chain, joints, pose, w, dtheta, limits);
    fk(chain, w, pose);
    err = aim_error();
  }
  if (!ok && it == 0) return result;
  if (!goal && !(aim == target) && it > 0) {
    // Unreachable: from the base out, turn each bone towards the target (a straight chain when
    // the joints allow it); kept only when it ends closer.
    const std::array<Quat, kMaxIkChainJoints> before = work;
    const double before_err = distance(pose.points[n], target);
    for (std::size_t i = 0; i < n; ++i) {
      const Quat parent = i == 0 ? normalize(chain.base_rotation) : pose.model[i - 1];
      w[i] = limits(i, turn_towards(joints[i], w[i], parent, pose.model[i],
                                    pose.points[i + 1] - pose.points[i], target - pose.points[i]));
      fk(chain, w, pose);
    }
    if (!(distance(pose.points[n], target) <= before_err)) {
      work = before;
      fk(chain, w, pose);
    }
  }
  for (std::size_t i = 0; i < n; ++i) local[i] = work[i];
  // Reported against the real target.
  const double pos_err = distance(pose.points[n], target);
  double total = pos_err;
  if (goal)
    total =
        std::max(total, length(orientation_error(pose.model[n - 1], *goal)) * s.orientation_weight);
  result.iterations = it;
  result.error = pos_err;
  result.status = ik_chain_status(chain, target, total, s.settings.tolerance);
  return result;
}

namespace {

struct TreePose {
  std::array<Quat, kMaxIkChainJoints> model;
  std::array<Vec3, kMaxIkChainJoints> points;
  std::array<Vec3, kMaxIkTreeEffectors> tips;
};

void tree_fk(const IkTree& tree, std::span<const Quat> local,
             std::span<const IkTreeEffector> effectors, TreePose& pose) {
  const Quat base = normalize(tree.base_rotation);
  for (std::size_t j = 0; j < local.size(); ++j) {
    const int p = tree.parents[j];
    const Quat pr = p < 0 ? base : pose.model[static_cast<std::size_t>(p)];
    const Vec3 pp = p < 0 ? tree.base_position : pose.points[static_cast<std::size_t>(p)];
    pose.points[j] = pp + rotate(pr, tree.offsets[j]);
    pose.model[j] = normalize(pr * local[j]);
  }
  for (std::size_t k = 0; k < effectors.size(); ++k)
    pose.tips[k] =
        pose.points[effectors[k].joint] + rotate(pose.model[effectors[k].joint], effectors[k].tip);
}

bool tree_valid(const IkTree& tree, std::span<const IkJoint> joints, std::span<const Quat> local,
                std::span<const IkTreeEffector> effectors, const JacobianSettings& s) {
  const std::size_t n = local.size();
  if (n == 0 || n > kMaxIkChainJoints || tree.parents.size() != n || tree.offsets.size() != n ||
      joints.size() != n || effectors.empty() || effectors.size() > kMaxIkTreeEffectors)
    return false;
  if (!is_finite(tree.base_position) || !is_finite(tree.base_rotation) ||
      !(length(tree.base_rotation) > 0) || !settings_valid(s))
    return false;
  for (std::size_t j = 0; j < n; ++j) {
    if (tree.parents[j] < -1 || tree.parents[j] >= static_cast<int>(j)) return false;
    if (!is_finite(tree.offsets[j]) || !is_finite(local[j]) || !(length(local[j]) > 0))
      return false;
    if (joints[j].type == IkJointType::kHinge &&
        (!is_finite(joints[j].axis) || !(length(joints[j].axis) > 0)))
      return false;
  }
  for (const IkTreeEffector& e : effectors)
    if (e.joint >= n || !is_finite(e.tip) || !is_finite(e.target)) return false;
  return true;
}

// moves[k][j]: joint j moves effector k (it lies on the path from the base to k's joint).
using EffectorPaths = std::array<std::array<bool, kMaxIkChainJoints>, kMaxIkTreeEffectors>;

EffectorPaths effector_paths(const IkTree& tree, std::span<const IkTreeEffector> effectors) {
  EffectorPaths moves{};
  for (std::size_t k = 0; k < effectors.size(); ++k)
    for (int j = static_cast<int>(effectors[k].joint); j >= 0;
         j = tree.parents[static_cast<std::size_t>(j)])
      moves[k][static_cast<std::size_t>(j)] = true;
  return moves;
}

// Per effector: the root of its path (a point no joint moves), the reach along the path (the
// tip plus every offset up to that root) and where the solve aims.
struct TreeAims {
  std::array<Vec3, kMaxIkTreeEffectors> root{}, aim{};
  std::array<double, kMaxIkTreeEffectors> reach{};
  double max_reach = 0;
};

TreeAims tree_aims(const IkTree& tree, std::span<const IkTreeEffector> effectors,
                   double tolerance) {
  TreeAims a;
  for (std::size_t k = 0; k < effectors.size(); ++k) {
    a.reach[k] = length(effectors[k].tip);
    std::size_t j = effectors[k].joint;
    while (tree.parents[j] >= 0) {
      a.reach[k] += length(tree.offsets[j]);
      j = static_cast<std::size_t>(tree.parents[j]);
    }
    a.root[k] = tree.base_position + rotate(normalize(tree.base_rotation), tree.offsets[j]);
    a.aim[k] = aim_point(a.root[k], a.reach[k], effectors[k].target, tolerance);
    a.max_reach = std::max(a.max_reach, a.reach[k]);
  }
  return a;
}

// The Jacobian J of the effectors' tips (three rows each, model space) over every DOF, and the
// task error e: each tip's error towards its aim, clamped to `max_error`.
void tree_jacobian(std::span<const IkJoint> joints, const TreePose& pose, std::size_t effectors,
                   const EffectorPaths& moves, const std::array<Vec3, kMaxIkTreeEffectors>& aim,
                   double max_error, JMat& J, EVec& e) {
  J.setZero();
  for (std::size_t k = 0; k < effectors; ++k) {
    Vec3 ek = aim[k] - pose.tips[k];
    const double len = length(ek);
    if (len > max_error) ek = ek * (max_error / len);
    e(3 * static_cast<int>(k)) = ek.x;
    e(3 * static_cast<int>(k) + 1) = ek.y;
    e(3 * static_cast<int>(k) + 2) = ek.z;
  }
  int c = 0;
  for (std::size_t i = 0; i < joints.size(); ++i) {
    auto column = [&](const Vec3& axis) {
      for (std::size_t k = 0; k < effectors; ++k) {
        if (!moves[k][i]) continue;
        const Vec3 v = cross(axis, pose.tips[k] - pose.points[i]);
        J(3 * static_cast<int>(k), c) = v.x;
        J(3 * static_cast<int>(k) + 1, c) = v.y;
        J(3 * static_cast<int>(k) + 2, c) = v.z;
      }
      ++c;
    };
    if (joints[i].type == IkJointType::kHinge) {
      column(rotate(pose.model[i], normalize(joints[i].axis)));
    } else {
      column(Vec3::unit_x());
      column(Vec3::unit_y());
      column(Vec3::unit_z());
    }
  }
}

// Turns the joints of `w` by Δθ in joint order, using the pose's parent rotations (taken before
// this step), each then limited.
void apply_tree_step(const IkTree& tree, std::span<const IkJoint> joints, const TreePose& pose,
                     const TVec& dtheta, IkLimitHook limits, std::span<Quat> w) {
  int c = 0;
  for (std::size_t i = 0; i < w.size(); ++i) {
    if (joints[i].type == IkJointType::kHinge) {
      w[i] = normalize(w[i] * Quat::from_axis_angle(joints[i].axis, dtheta(c++)));
    } else {
      const Vec3 rv{dtheta(c), dtheta(c + 1), dtheta(c + 2)};
      c += 3;
      const int p = tree.parents[i];
      const Quat parent =
          p < 0 ? normalize(tree.base_rotation) : pose.model[static_cast<std::size_t>(p)];
      w[i] = normalize(conjugate(parent) * from_rotation_vector(rv) * parent * w[i]);
    }
    w[i] = limits(i, w[i]);
  }
}

// Effector k's target is out of reach: turns the joints on its path that move no other
// effector, root first, each bone towards the target; kept only when the effector ends closer.
// `work` holds the joints' local rotations and `pose` their forward kinematics; both are updated.
void reach_towards(const IkTree& tree, std::span<const IkJoint> joints,
                   std::span<const IkTreeEffector> effectors, std::size_t k,
                   const EffectorPaths& moves, IkLimitHook limits,
                   std::array<Quat, kMaxIkChainJoints>& work, TreePose& pose) {
  const std::span<Quat> w(work.data(), joints.size());
  std::array<std::size_t, kMaxIkChainJoints> path{};
  std::size_t m = 0;
  for (int j = static_cast<int>(effectors[k].joint); j >= 0;
       j = tree.parents[static_cast<std::size_t>(j)])
    path[m++] = static_cast<std::size_t>(j);
  std::reverse(path.begin(), path.begin() + static_cast<std::ptrdiff_t>(m));
  const std::array<Quat, kMaxIkChainJoints> before = work;
  const double before_err = distance(pose.tips[k], effectors[k].target);
  for (std::size_t idx = 0; idx < m; ++idx) {
    const std::size_t j = path[idx];
    bool exclusive = true;
    for (std::size_t o = 0; o < effectors.size(); ++o)
      exclusive = exclusive && (o == k || !moves[o][j]);
    if (!exclusive) continue;
    const Vec3 next = idx + 1 < m ? pose.points[path[idx + 1]] : pose.tips[k];
    const int p = tree.parents[j];
    const Quat parent =
        p < 0 ? normalize(tree.base_rotation) : pose.model[static_cast<std::size_t>(p)];
    w[j] = limits(j, turn_towards(joints[j], w[j], parent, pose.model[j], next - pose.points[j],
                                  effectors[k].target - pose.points[j]));
    tree_fk(tree, w, effectors, pose);
  }
  if (!(distance(pose.tips[k], effectors[k].target) <= before_err)) {
    work = before;
    tree_fk(tree, w, effectors, pose);
  }
}

}  // namespace

IkResult jacobian_solve_tree(const IkTree& tree, std::span<const IkJoint> joints,
                             std::span<Quat> local, std::span<const IkTreeEffector> effectors,
                             const JacobianSettings& s, IkLimitHook limits) {
  IkResult result;
  result.error = std::nan("");
  if (!tree_valid(tree, joints, local, effectors, s)) return result;
  const std::size_t n = local.size(), ne = effectors.size();
  const int rows = static_cast<int>(3 * ne), dof = static_cast<int>(jacobian_dof(joints));
  const EffectorPaths moves = effector_paths(tree, effectors);
  const TreeAims aims = tree_aims(tree, effectors, s.settings.tolerance);
  const double max_error = error_clamp(s, aims.max_reach);
  std::array<Quat, kMaxIkChainJoints> work;
  for (std::size_t i = 0; i < n; ++i) work[i] = limits(i, normalize(local[i]));
  const std::span<Quat> w(work.data(), n);
  TreePose pose;
  tree_fk(tree, w, effectors, pose);
  auto max_error_to = [&](const std::array<Vec3, kMaxIkTreeEffectors>& goals) {
    double e = 0;
    for (std::size_t k = 0; k < ne; ++k) e = std::max(e, distance(pose.tips[k], goals[k]));
    return e;
  };
  double err = max_error_to(aims.aim);
  int it = 0;
  while (err > s.settings.tolerance && it < s.settings.max_iterations) {
    JMat J(rows, dof);
    EVec e(rows);
    tree_jacobian(joints, pose, ne, moves, aims.aim, max_error, J, e);
    TVec dtheta;
    if (!solve_dtheta(J, e, s, dtheta)) break;
    ++it;
    apply_tree_step(tree, joints, pose, dtheta, limits, w);
    tree_fk(tree, w, effectors, pose);
    err = max_error_to(aims.aim);
  }
  if (it == 0 && err > s.settings.tolerance && s.settings.max_iterations > 0) return result;
  for (std::size_t k = 0; k < ne; ++k)
    if (it > 0 && !(aims.aim[k] == effectors[k].target))
      reach_towards(tree, joints, effectors, k, moves, limits, work, pose);
  for (std::size_t i = 0; i < n; ++i) local[i] = work[i];
  std::array<Vec3, kMaxIkTreeEffectors> targets{};
  for (std::size_t k = 0; k < ne; ++k) targets[k] = effectors[k].target;
  err = max_error_to(targets);  // reported against the real targets
  result.iterations = it;
  result.error = err;
  if (err <= s.settings.tolerance) {
    result.status = IkStatus::kReached;
  } else {
    result.status = IkStatus::kMaxIterations;
    for (std::size_t k = 0; k < ne; ++k)
      if (distance(aims.root[k], effectors[k].target) > aims.reach[k])
        result.status = IkStatus::kUnreachable;
  }
  return result;
}

}  // namespace kinema
