// Full-body IK: prioritized, weighted, adaptively damped least squares over every goal at once
// (Buss 2004; Wampler 1986; Nakamura & Hanafusa 1986). See kinema/ik/full_body.h.
#include "kinema/ik/full_body.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kinema/core/error.h"

namespace kinema {
namespace {

constexpr int kMaxRows = 3 * static_cast<int>(kMaxFullBodyGoals);
// Task-space matrices have fixed upper bounds, so Eigen keeps them inline (no heap per solve).
using TaskMatrix =
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor, kMaxRows, kMaxRows>;
using TaskVector = Eigen::Matrix<double, Eigen::Dynamic, 1, Eigen::ColMajor, kMaxRows, 1>;
// The Jacobian is rows × DOF, row-major so a row (one goal coordinate) is contiguous.
using JacobianMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

constexpr double kCenterOfMassBand = kFullBodyCenterOfMassBand;
constexpr int kLimitPasses = 4;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A support polygon in the ground plane, counter-clockwise in (x, z), already shrunk by the
// margin.
struct Polygon {
  // Clipping by a half-plane adds at most one vertex: room for every step.
  std::array<double, 2 * kMaxSupportPolygonVertices + 2> x{}, z{};
  std::size_t count = 0;
};

double cross2(double ax, double az, double bx, double bz) { return ax * bz - az * bx; }

// Counter-clockwise copy of `vertices` shrunk by `margin`; false when the polygon is not
// strictly convex, has no area, or vanishes (an edge flips) when shrunk.
bool make_support_polygon(std::span<const Vec3> vertices, double margin, Polygon& out) {
  const std::size_t n = vertices.size();
  if (n < 3 || n > kMaxSupportPolygonVertices || !std::isfinite(margin) || margin < 0) return false;
  for (const Vec3& v : vertices)
    if (!is_finite(v)) return false;
  double area2 = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const Vec3& a = vertices[k];
    const Vec3& b = vertices[(k + 1) % n];
    area2 += cross2(a.x, a.z, b.x, b.z);
  }
  if (!(std::abs(area2) > 1e-12)) return false;
  Polygon ccw;
  ccw.count = n;
  for (std::size_t k = 0; k < n; ++k) {
    const Vec3& v = vertices[area2 > 0 ? k : n - 1 - k];
    ccw.x[k] = v.x;
    ccw.z[k] = v.z;
  }
  // Unit edge directions and strict convexity (every turn to the left).
  std::array<double, kMaxSupportPolygonVertices> dx{}, dz{};
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t k1 = (k + 1) % n;
    const double ex = ccw.x[k1] - ccw.x[k], ez = ccw.z[k1] - ccw.z[k];
    const double len = std::hypot(ex, ez);
    if (!(len > 1e-12)) return false;
    dx[k] = ex / len;
    dz[k] = ez / len;
  }
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t k1 = (k + 1) % n;
    if (!(cross2(dx[k], dz[k], dx[k1], dz[k1]) > 1e-12)) return false;
  }
  // The shrunk polygon is the intersection of the edges' half-planes moved inwards by the
  // margin: clip the polygon by each in turn (Sutherland–Hodgman), so short edges that the
  // margin swallows simply disappear.
  Polygon buffer;
  Polygon* cur = &out;
  Polygon* next = &buffer;
  *cur = ccw;
  for (std::size_t k = 0; k < n && cur->count > 0; ++k) {
    const double nx = -dz[k], nz = dx[k];  // inward normal
    const double offset = nx * ccw.x[k] + nz * ccw.z[k] + margin;
    next->count = 0;
    for (std::size_t i = 0; i < cur->count; ++i) {
      const std::size_t i1 = (i + 1) % cur->count;
      const double si = nx * cur->x[i] + nz * cur->z[i] - offset;
      const double si1 = nx * cur->x[i1] + nz * cur->z[i1] - offset;
      auto emit = [&](double x, double z) {
        if (next->count > 0 &&
            std::hypot(x - next->x[next->count - 1], z - next->z[next->count - 1]) <= 1e-12)
          return;  // a repeated vertex would make a zero-length edge
        next->x[next->count] = x;
        next->z[next->count] = z;
        ++next->count;
      };
      if (si >= 0) emit(cur->x[i], cur->z[i]);
      if ((si >= 0) != (si1 >= 0)) {
        const double t = si / (si - si1);
        emit(cur->x[i] + (cur->x[i1] - cur->x[i]) * t, cur->z[i] + (cur->z[i1] - cur->z[i]) * t);
      }
    }
    while (next->count > 1 && std::hypot(next->x[0] - next->x[next->count - 1],
                                         next->z[0] - next->z[next->count - 1]) <= 1e-12)
      --next->count;
    std::swap(cur, next);
  }
  if (cur != &out) out = *cur;
  if (out.count < 3) return false;
  double shrunk_area2 = 0;
  for (std::size_t k = 0; k < out.count; ++k) {
    const std::size_t k1 = (k + 1) % out.count;
    shrunk_area2 += cross2(out.x[k], out.z[k], out.x[k1], out.z[k1]);
  }
  if (!(shrunk_area2 > 1e-12)) return false;  // nothing (or only a sliver) left
  return true;
}

// Where (px, pz) stands against the (counter-clockwise, convex) polygon: `outside` is the
// distance to it (0 inside), `inside` the distance to the nearest edge when inside (0 outside),
// and (nx, nz) the unit direction pointing out of the polygon there (from the nearest point
// towards the point when outside, the nearest edge's outward normal when inside).
struct PolygonQuery {
  double outside = 0, inside = 0, nx = 1, nz = 0;
};

PolygonQuery query_polygon(const Polygon& poly, double px, double pz) {
  PolygonQuery q;
  double nearest_inside = std::numeric_limits<double>::infinity();
  bool is_inside = true;
  for (std::size_t k = 0; k < poly.count; ++k) {
    const std::size_t k1 = (k + 1) % poly.count;
    const double ex = poly.x[k1] - poly.x[k], ez = poly.z[k1] - poly.z[k];
    const double len = std::hypot(ex, ez);
    const double side = cross2(ex, ez, px - poly.x[k], pz - poly.z[k]) / len;  // > 0: inside
    if (side < 0) is_inside = false;
    if (side < nearest_inside) {
      nearest_inside = side;
      q.nx = ez / len;  // right of the edge: outwards for a counter-clockwise polygon
      q.nz = -ex / len;
    }
  }
  if (is_inside) {
    q.inside = nearest_inside;
    return q;
  }
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k < poly.count; ++k) {
    const std::size_t k1 = (k + 1) % poly.count;
    const double ex = poly.x[k1] - poly.x[k], ez = poly.z[k1] - poly.z[k];
    const double t =
        std::clamp(((px - poly.x[k]) * ex + (pz - poly.z[k]) * ez) / (ex * ex + ez * ez), 0.0, 1.0);
    const double cx = poly.x[k] + ex * t, cz = poly.z[k] + ez * t;
    const double d = std::hypot(px - cx, pz - cz);
    if (d < best) {
      best = d;
      if (d > 0) {
        q.nx = (px - cx) / d;
        q.nz = (pz - cz) / d;
      }
    }
  }
  q.outside = best;
  return q;
}

bool finite_nonzero(const Quat& q) { return is_finite(q) && length(q) > 0; }

bool settings_valid(const FullBodySettings& s) {
  auto ok = [](double v) { return std::isfinite(v) && v >= 0; };
  return s.max_iterations >= 0 && ok(s.lambda) && ok(s.lambda_max) && ok(s.singular_threshold) &&
         ok(s.max_error_step) && s.max_error_step > 0 && ok(s.max_joint_step) &&
         s.max_joint_step > 0;
}

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

}  // namespace

struct FullBodySolver::Impl {
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
  std::array<Polygon, kMaxFullBodyGoals> polygons;
  std::array<GoalState, kMaxFullBodyGoals> state;

  void forward_kinematics(std::span<const Transform> local, std::vector<Transform>& out) const {
    for (std::size_t j = 0; j < n; ++j) {
      const int p = parents[j];
      out[j] = p < 0 ? local[j] : out[static_cast<std::size_t>(p)] * local[j];
    }
  }

  // Mass points and per-joint sums over strict descendants (for the COM rows); returns the COM.
  Vec3 mass_distribution() {
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

  // The limit of joint j applied to a local rotation.
  Quat limited(std::size_t j, const Quat& q) const {
    const JointLimit& limit = joints[j].limit;
    if (limit.kind == JointLimit::Kind::kNone) return normalize(q);
    const Quat& rest = rest_rotation[j];
    return normalize(rest * project(limit, conjugate(rest) * q));
  }

  // The damping λ² for rows whose Gram matrix is gram(0:m, 0:m): `lambda` while the smallest
  // non-zero singular value σ of the rows is at least the threshold, growing towards
  // `lambda_max` as σ falls to zero (eigenvalues below 1e-12 of the largest count as zero).
  double damping(int m, const FullBodySettings& s) {
    const double floor2 = s.lambda * s.lambda;
    const double threshold2 = s.singular_threshold * s.singular_threshold;
    if (!(s.singular_threshold > 0) || !(s.lambda_max > s.lambda)) return floor2;
    // Every eigenvalue above the threshold (G − threshold²·I is positive definite): no growth,
    // and no eigenvalues to compute.
    if (cholesky(m, -threshold2)) return floor2;
    // Otherwise the smallest eigenvalue above the floor, by bisection on Sturm counts of the
    // tridiagonal form (the damping is linear in it: 2⁻³² of threshold² is plenty).
    tridiagonal.compute(gram.topLeftCorner(m, m));
    std::array<double, kMaxRows> d{}, e2{};
    double upper = 0, largest_e2 = 0;  // Gershgorin bound of the largest eigenvalue
    for (int i = 0; i < m; ++i) {
      d[static_cast<std::size_t>(i)] = tridiagonal.diagonal()(i);
      const double left = i > 0 ? std::abs(tridiagonal.subDiagonal()(i - 1)) : 0.0;
      const double right = i + 1 < m ? std::abs(tridiagonal.subDiagonal()(i)) : 0.0;
      if (i + 1 < m) {
        e2[static_cast<std::size_t>(i)] = right * right;
        largest_e2 = std::max(largest_e2, right * right);
      }
      upper = std::max(upper, d[static_cast<std::size_t>(i)] + left + right);
    }
    const double pivot_min = std::numeric_limits<double>::min() * std::max(1.0, largest_e2);
    auto count_below = [&](double x) {  // eigenvalues below x
      int count = 0;
      double q = 1;
      for (std::size_t i = 0; i < static_cast<std::size_t>(m); ++i) {
        q = d[i] - x - (i > 0 ? e2[i - 1] / q : 0.0);
        if (std::abs(q) < pivot_min) q = -pivot_min;
        if (q < 0) ++count;
      }
      return count;
    };
    const double mu_floor = 1e-12 * upper;
    const int zero = count_below(mu_floor);
    const double grown2 = s.lambda_max * s.lambda_max;
    if (!(upper > 0) || zero >= m) return std::max(floor2, grown2);  // no rows: σ = 0
    if (count_below(threshold2) <= zero) return floor2;
    double lo = mu_floor, hi = threshold2;
    for (int k = 0; k < 32; ++k) {
      const double mid = 0.5 * (lo + hi);
      (count_below(mid) > zero ? hi : lo) = mid;
    }
    const double mu = 0.5 * (lo + hi);  // σ_min²
    return std::max(floor2, grown2 * (1 - mu / threshold2));
  }

  // Cholesky factor L (lower, row-major in `factor`) of gram(0:m, 0:m) + shift·I; false when
  // that matrix is not numerically positive definite.
  bool cholesky(int m, double shift) {
    for (int j = 0; j < m; ++j) {
      double* lj = &factor[static_cast<std::size_t>(j) * kMaxRows];
      double d = gram(j, j) + shift;
      for (int k = 0; k < j; ++k) d -= lj[k] * lj[k];
      if (!(d > 0)) return false;
      const double ljj = std::sqrt(d);
      lj[j] = ljj;
      for (int i = j + 1; i < m; ++i) {
        double* li = &factor[static_cast<std::size_t>(i) * kMaxRows];
        double v = gram(i, j);
        for (int k = 0; k < j; ++k) v -= li[k] * lj[k];
        li[j] = v / ljj;
      }
    }
    return true;
  }

  // x = (gram(0:m, 0:m) + λ²I)⁻¹ x, by Cholesky; the damping λ² comes from damping().
  void damped_solve(int m, const FullBodySettings& s, TaskVector& x) {
    const double lambda2 = damping(m, s);
    if (lambda2 > 0 && cholesky(m, lambda2)) {
      for (int i = 0; i < m; ++i) {  // L y = x
        const double* li = &factor[static_cast<std::size_t>(i) * kMaxRows];
        double v = x(i);
        for (int k = 0; k < i; ++k) v -= li[k] * x(k);
        x(i) = v / li[i];
      }
      for (int i = m; i-- > 0;) {  // Lᵀ x = y
        double v = x(i);
        for (int k = i + 1; k < m; ++k)
          v -= factor[static_cast<std::size_t>(k) * kMaxRows + i] * x(k);
        x(i) = v / factor[static_cast<std::size_t>(i) * kMaxRows + i];
      }
      return;
    }
    // No damping and a singular matrix: the eigen decomposition, zero eigenvalues dropped.
    eigen.compute(gram.topLeftCorner(m, m));
    const auto& mu = eigen.eigenvalues();
    const auto& v = eigen.eigenvectors();
    scratch_rows.resize(m);
    scratch_rows.noalias() = v.transpose().lazyProduct(x.head(m));
    for (int k = 0; k < m; ++k) {
      const double d = std::max(0.0, mu(k)) + lambda2;
      scratch_rows(k) *= d > 0 ? 1.0 / d : 0.0;
    }
    x.head(m).noalias() = v.lazyProduct(scratch_rows);
  }

  // basis(0:r) = an orthonormal basis of the row space of a(0:m) (Gram–Schmidt, a row whose
  // part left outside the others' span has a squared norm below 1e-12 of the largest row's
  // counting as dependent); returns r.
  int orthonormal_rows(const JacobianMatrix& a, int m) {
    double scale = 0;
    for (int i = 0; i < m; ++i) scale = std::max(scale, a.row(i).squaredNorm());
    const double floor = 1e-12 * scale;
    int r = 0;
    for (int i = 0; i < m; ++i) {
      auto v = basis.row(r);
      v = a.row(i);
      double before = v.squaredNorm();
      double after = before;
      // Twice is enough: orthogonalize again when most of the row cancelled.
      for (int pass = 0; pass < 2 && r > 0; ++pass) {
        for (int k = 0; k < r; ++k) v -= v.dot(basis.row(k)) * basis.row(k);
        after = v.squaredNorm();
        if (after > 0.25 * before) break;
        before = after;
      }
      if (!(after > floor)) continue;
      v /= std::sqrt(after);
      ++r;
    }
    return r;
  }
};

namespace {

Vec3 clamp_length(const Vec3& v, double max_length) {
  const double len = length(v);
  return len > max_length ? v * (max_length / len) : v;
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

FullBodyResult FullBodySolver::solve(std::span<Transform> local,
                                     std::span<const FullBodyGoal> goals,
                                     const FullBodySettings& settings) {
  Impl& s = *impl_;
  FullBodyResult result;
  result.goal_count = std::min(goals.size(), kMaxFullBodyGoals);
  for (std::size_t g = 0; g < result.goal_count; ++g) result.goals[g] = {false, kNaN};

  // ---- validation (nothing is written on failure) ----
  if (local.size() != s.n || goals.empty() || goals.size() > kMaxFullBodyGoals ||
      !settings_valid(settings))
    return result;
  for (const Transform& t : local)
    if (!is_finite(t) || !finite_nonzero(t.rotation) || t.scale.x == 0 || t.scale.y == 0 ||
        t.scale.z == 0)
      return result;
  bool has_com = false;
  for (std::size_t g = 0; g < goals.size(); ++g) {
    const FullBodyGoal& goal = goals[g];
    if (!std::isfinite(goal.weight) || !(goal.weight > 0) || !std::isfinite(goal.tolerance) ||
        goal.tolerance < 0)
      return result;
    if (goal.kind == FullBodyGoalKind::kCenterOfMass) {
      if (!(s.total_mass > 0) ||
          !make_support_polygon(goal.support_polygon, goal.margin, s.polygons[g]))
        return result;
      has_com = true;
      continue;
    }
    if (goal.joint < 0 || goal.joint >= static_cast<int>(s.n)) return result;
    switch (goal.kind) {
      case FullBodyGoalKind::kPosition:
        if (!is_finite(goal.local_point) || !is_finite(goal.target)) return result;
        break;
      case FullBodyGoalKind::kOrientation:
        if (!finite_nonzero(goal.target_rotation)) return result;
        break;
      case FullBodyGoalKind::kAim:
        if (!is_finite(goal.target) || !is_finite(goal.local_axis) ||
            !(length(goal.local_axis) > 1e-12))
          return result;
        break;
      case FullBodyGoalKind::kCenterOfMass:
        break;
    }
  }

  // ---- set-up ----
  std::fill(s.goal_ancestor.begin(), s.goal_ancestor.end(), 0u);
  for (std::size_t g = 0; g < goals.size(); ++g) {
    if (goals[g].kind == FullBodyGoalKind::kCenterOfMass) continue;
    for (int j = goals[g].joint; j >= 0; j = s.parents[static_cast<std::size_t>(j)])
      s.goal_ancestor[static_cast<std::size_t>(j)] |= 1u << g;
  }
  for (std::size_t j = 0; j < s.n; ++j) {
    s.work[j] = local[j];
    if (s.joints[j].kind != FullBodyJointKind::kLocked)
      s.work[j].rotation = s.limited(j, s.work[j].rotation);
  }

  // Evaluates every goal at the current pose (s.model up to date); returns the cost.
  auto evaluate = [&]() {
    Vec3 com{};
    if (has_com) com = s.mass_distribution();
    double cost = 0;
    for (std::size_t g = 0; g < goals.size(); ++g) {
      const FullBodyGoal& goal = goals[g];
      GoalState& st = s.state[g];
      st.active = true;
      st.root_weight = std::sqrt(goal.weight);
      const Transform* m = goal.kind == FullBodyGoalKind::kCenterOfMass
                               ? nullptr
                               : &s.model[static_cast<std::size_t>(goal.joint)];
      switch (goal.kind) {
        case FullBodyGoalKind::kPosition:
          st.point = m->transform_point(goal.local_point);
          st.residual = goal.target - st.point;
          st.error = length(st.residual);
          st.rows = 3;
          break;
        case FullBodyGoalKind::kOrientation:
          st.residual =
              to_rotation_vector(normalize(goal.target_rotation) * conjugate(m->rotation));
          st.error = length(st.residual);
          st.rows = 3;
          break;
        case FullBodyGoalKind::kAim: {
          const Vec3 d = normalize(rotate(m->rotation, goal.local_axis));
          st.point = m->translation;
          const Vec3 v = goal.target - m->translation;
          const double dist = length(v);
          st.rows = 3;
          if (!(dist > 1e-9)) {  // target on the joint: any direction aims at it
            st.error = 0;
            st.residual = Vec3{};
            st.active = false;
            break;
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
          break;
        }
        case FullBodyGoalKind::kCenterOfMass: {
          // One row, the COM's motion along the outward direction: pulled back by the distance
          // when outside; held (zero error) while inside but within the band, so other goals
          // cannot push it out and the row set does not flip every iteration.
          const PolygonQuery q = query_polygon(s.polygons[g], com.x, com.z);
          st.error = q.outside;
          st.residual = Vec3{-q.outside, 0, 0};
          st.com_direction = Vec3{q.nx, 0, q.nz};
          st.rows = 1;
          st.active = q.outside > 0 || q.inside < kCenterOfMassBand;
          break;
        }
      }
      const double excess = std::max(0.0, st.error - goal.tolerance);
      cost += goal.weight * excess * excess;
    }
    return cost;
  };

  // Fills the Jacobian row block of goal g for one DOF column: `axis` is the model-space
  // rotation axis of joint `joint` (or a translation direction when `translation`).
  auto fill_column = [&](int column, std::size_t joint, const Vec3& axis, bool translation) {
    const Vec3 pj = s.model[joint].translation;
    for (std::size_t g = 0; g < goals.size(); ++g) {
      const GoalState& st = s.state[g];
      if (!st.active) continue;
      const FullBodyGoal& goal = goals[g];
      const double w = st.root_weight;
      Vec3 c{};
      if (goal.kind == FullBodyGoalKind::kCenterOfMass) {
        if (translation) {
          const double moved =
              s.subtree_mass[joint] + (s.parents[joint] < 0 ? s.mass[joint] : 0.5 * s.mass[joint]);
          c = axis * (moved / s.total_mass);
        } else {
          c = cross(axis, s.subtree_moment[joint] - pj * s.subtree_mass[joint]) / s.total_mass;
        }
        s.jacobian(st.first_row, column) = w * dot(c, st.com_direction);
        continue;
      }
      if (!(s.goal_ancestor[joint] & (1u << g))) continue;
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
      s.jacobian(st.first_row, column) = w * c.x;
      s.jacobian(st.first_row + 1, column) = w * c.y;
      s.jacobian(st.first_row + 2, column) = w * c.z;
    }
  };

  s.forward_kinematics(s.work, s.model);
  double cost = evaluate();
  int it = 0;
  for (;;) {
    for (std::size_t g = 0; g < goals.size(); ++g)
      result.goals[g] = {s.state[g].error <= goals[g].tolerance, s.state[g].error};
    if (cost == 0 || it >= settings.max_iterations || s.dof == 0) break;

    // Rows: kHigh goals first, then kNormal.
    int rows = 0, high_rows = 0;
    s.error_rows.resize(kMaxRows);
    for (const FullBodyPriority level : {FullBodyPriority::kHigh, FullBodyPriority::kNormal}) {
      for (std::size_t g = 0; g < goals.size(); ++g) {
        GoalState& st = s.state[g];
        if (!st.active || goals[g].priority != level) continue;
        st.first_row = rows;
        const Vec3 e =
            clamp_length(st.residual, settings.max_error_step) * std::sqrt(goals[g].weight);
        s.error_rows(rows) = e.x;
        if (st.rows == 3) {
          s.error_rows(rows + 1) = e.y;
          s.error_rows(rows + 2) = e.z;
        }
        rows += st.rows;
      }
      if (level == FullBodyPriority::kHigh) high_rows = rows;
    }
    if (rows == 0) break;
    const int normal_rows = rows - high_rows;
    s.jacobian.topRows(rows).setZero();
    for (std::size_t j = 0; j < s.n; ++j) {
      const int c0 = s.first_column[j];
      if (c0 < 0) continue;
      if (s.joints[j].kind == FullBodyJointKind::kHinge) {
        fill_column(c0, j, rotate(s.model[j].rotation, s.joints[j].hinge_axis), false);
      } else {
        fill_column(c0, j, Vec3::unit_x(), false);
        fill_column(c0 + 1, j, Vec3::unit_y(), false);
        fill_column(c0 + 2, j, Vec3::unit_z(), false);
      }
    }
    if (s.translation_column >= 0) {
      const auto t = static_cast<std::size_t>(s.translating_joint);
      fill_column(s.translation_column, t, Vec3::unit_x(), true);
      fill_column(s.translation_column + 1, t, Vec3::unit_y(), true);
      fill_column(s.translation_column + 2, t, Vec3::unit_z(), true);
    }

    // Joints the limits clip are taken out of the step and the step is solved again (at most
    // kLimitPasses times), so the prioritized step never relies on a motion that a limit
    // then removes: that would drag the kHigh goals off (Baerlocher and Boulic's clamping loop).
    std::fill(s.blocked.begin(), s.blocked.end(), std::uint8_t{0});
    std::copy(s.work.begin(), s.work.end(), s.pre_step.begin());
    bool finite = true, any_blocked = false;
    s.saved_rows = s.error_rows;
    if (high_rows > 0 && normal_rows > 0)
      s.high_free.topRows(high_rows) = s.jacobian.topRows(high_rows);
    s.rank_high = 0;
    for (int pass = 0; pass < kLimitPasses; ++pass) {
      s.error_rows = s.saved_rows;
      if (pass > 0) {
        std::copy(s.pre_step.begin(), s.pre_step.end(), s.work.begin());
        for (std::size_t j = 0; j < s.n; ++j) {
          const int c0 = s.first_column[j];
          if (c0 < 0 || !s.blocked[j]) continue;
          const int width = s.joints[j].kind == FullBodyJointKind::kHinge ? 1 : 3;
          // Only the kNormal rows lose the column (kHigh may still move the joint back in);
          // the null-space projector is then taken over the free columns alone.
          s.jacobian.block(high_rows, c0, normal_rows, width).setZero();
          s.high_free.block(0, c0, high_rows, width).setZero();
          any_blocked = true;
        }
      }
      bool clipped = false;
      // ---- the prioritized damped least-squares step ----
      const auto jh = s.jacobian.topRows(high_rows);
      const auto jn = s.jacobian.middleRows(high_rows, normal_rows);
      if (pass == 0) {  // the kHigh step does not change between passes
        s.dtheta_high.setZero();
        if (high_rows > 0) {
          s.gram.resize(high_rows, high_rows);
          s.gram.noalias() = jh.lazyProduct(jh.transpose());
          s.solution = s.error_rows.head(high_rows);
          s.damped_solve(high_rows, settings, s.solution);
          s.dtheta_high.noalias() = jh.transpose().lazyProduct(s.solution.head(high_rows));
        }
      }
      s.dtheta = s.dtheta_high;
      if (normal_rows > 0) {
        auto en = s.error_rows.segment(high_rows, normal_rows);
        s.gram.resize(normal_rows, normal_rows);
        for (int i = 0; i < normal_rows; ++i)
          for (int k = 0; k <= i; ++k) s.gram(i, k) = s.gram(k, i) = jn.row(i).dot(jn.row(k));
        int rank = 0;
        if (high_rows > 0) {
          // Normal rows act in the null space of the high ones, J_n P with P = I − QᵀQ and Q an
          // orthonormal basis of the free J_h rows (so QᵀQ = J_hᵀ (J_h J_hᵀ)⁺ J_h), aiming at
          // what the high step leaves. P is applied implicitly: with C = J_n Qᵀ the task matrix
          // is J_n P J_nᵀ = J_n J_nᵀ − C Cᵀ and the step P J_nᵀ y = J_nᵀ y − Qᵀ Cᵀ y. The
          // projector is undamped: a damped one would let an unreachable normal goal leak into
          // (and drag off) the high goals near a singularity, where damping is largest.
          en.noalias() -= jn.lazyProduct(s.dtheta);
          if (pass == 0 || any_blocked) s.rank_high = s.orthonormal_rows(s.high_free, high_rows);
          rank = s.rank_high;
          s.coupling.resize(normal_rows, std::max(1, rank));
          for (int i = 0; i < normal_rows; ++i)
            for (int k = 0; k < rank; ++k) s.coupling(i, k) = jn.row(i).dot(s.basis.row(k));
          for (int i = 0; i < normal_rows; ++i)
            for (int k = 0; k <= i; ++k) {
              double c = 0;
              for (int l = 0; l < rank; ++l) c += s.coupling(i, l) * s.coupling(k, l);
              s.gram(i, k) -= c;
              if (k != i) s.gram(k, i) = s.gram(i, k);
            }
        }
        s.solution = en;
        s.damped_solve(normal_rows, settings, s.solution);
        const auto y = s.solution.head(normal_rows);
        s.dtheta.noalias() += jn.transpose().lazyProduct(y);
        for (int k = 0; k < rank; ++k)
          s.dtheta -= s.coupling.col(k).head(normal_rows).dot(y) * s.basis.row(k).transpose();
      }
      const double biggest = s.dtheta.cwiseAbs().maxCoeff();
      if (!std::isfinite(biggest)) {
        finite = false;
        break;
      }
      if (biggest > settings.max_joint_step) s.dtheta *= settings.max_joint_step / biggest;

      // ---- apply in joint order, with the parents' model rotations from before the step ----
      for (std::size_t j = 0; j < s.n; ++j) {
        const int c0 = s.first_column[j];
        if (c0 < 0) continue;
        Quat& q = s.work[j].rotation;
        if (s.joints[j].kind == FullBodyJointKind::kHinge) {
          q = q * Quat::from_axis_angle(s.joints[j].hinge_axis, s.dtheta(c0));
        } else {
          const int p = s.parents[j];
          const Quat parent =
              p < 0 ? Quat::identity() : s.model[static_cast<std::size_t>(p)].rotation;
          const Vec3 turn{s.dtheta(c0), s.dtheta(c0 + 1), s.dtheta(c0 + 2)};
          q = conjugate(parent) * from_rotation_vector(turn) * parent * q;
        }
        const Quat free = normalize(q);
        q = s.limited(j, free);
        // Clipped by its limit: the step assumed a motion that did not happen.
        if (!s.blocked[j] && !(q == free) && angle_between(q, free) > 1e-9) {
          s.blocked[j] = 1;
          clipped = true;
        }
      }
      if (s.translation_column >= 0) {
        const auto t = static_cast<std::size_t>(s.translating_joint);
        const int c0 = s.translation_column;
        Vec3 move{s.dtheta(c0), s.dtheta(c0 + 1), s.dtheta(c0 + 2)};
        const int p = s.parents[t];
        if (p >= 0) {
          const Transform& parent = s.model[static_cast<std::size_t>(p)];
          move = rotate(conjugate(parent.rotation), move);
          move = Vec3{move.x / parent.scale.x, move.y / parent.scale.y, move.z / parent.scale.z};
        }
        s.work[t].translation = s.work[t].translation + move;
      }
      if (!finite || !clipped || normal_rows == 0) break;
    }
    if (!finite) break;
    ++it;
    s.forward_kinematics(s.work, s.model);
    cost = evaluate();
  }

  std::copy(s.work.begin(), s.work.end(), local.begin());
  result.iterations = it;
  result.status = cost == 0 ? IkStatus::kReached : IkStatus::kMaxIterations;
  return result;
}

}  // namespace kinema
