// The joints' equality rows by a sparse direct solve (src/physics/joint_direct_solver.h).
#include "joint_direct_solver.h"

#include <Eigen/SparseCholesky>
#include <Eigen/SparseCore>
#include <algorithm>
#include <array>
#include <cmath>

#include "joint_tree_solver.h"

namespace kinema::detail {

namespace {

// Relative compliance on A's diagonal: keeps the factor defined when rows are redundant (a body
// pinned to the world twice), far too small to soften anything.
constexpr double kRegularization = 1e-9;

using Row = JacobianRow;

// How many equality rows a joint brings (0: none, it stays with the iterations).
int equality_rows(const JointState& j) {
  switch (j.desc.kind) {
    case JointKind::Ball:
    case JointKind::ConeTwist:
      return 3;
    case JointKind::Hinge:
      return 5;
    case JointKind::Fixed:
      return 6;
    case JointKind::Distance:
      return j.desc.max_distance - j.desc.min_distance < 1e-12 ? 1 : 0;
  }
  return 0;
}

Row make_row(const Vec3& linear, const Vec3& angular, double sign) {
  return {sign * linear.x,  sign * linear.y,  sign * linear.z,
          sign * angular.x, sign * angular.y, sign * angular.z};
}

// The joint's rows on body a and body b.
void jacobian_rows(const JointState& j, DirectJointRows& e) {
  std::array<Row, 6>& ja = e.jacobian[0];
  std::array<Row, 6>& jb = e.jacobian[1];
  const Vec3 zero{0, 0, 0};
  e.point_rows = j.desc.kind != JointKind::Distance;
  if (j.desc.kind == JointKind::Distance) {
    const Vec3 d = j.rod_direction;
    jb[0] = make_row(d, cross(j.rb, d), 1);
    ja[0] = make_row(d, cross(j.ra, d), -1);
    return;
  }
  for (int k = 0; k < 3; ++k) {
    Vec3 e{0, 0, 0};
    e[k] = 1;
    jb[k] = make_row(e, cross(j.rb, e), 1);
    ja[k] = make_row(e, cross(j.ra, e), -1);
  }
  for (int k = 3; k < e.rows; ++k) {  // a hinge's two perpendicular axes, a weld's three
    jb[k] = make_row(zero, j.rows[k - 3].axis, 1);
    ja[k] = make_row(zero, j.rows[k - 3].axis, -1);
  }
}

// M⁻¹ applied to a row: (row_lin / m, I⁻¹ row_ang).
Row apply_inverse_mass(const RigidBody& b, const Mat3& inverse_inertia, const Row& r) {
  const Vec3 w = inverse_inertia * Vec3{r[3], r[4], r[5]};
  return {r[0] * b.inverse_mass, r[1] * b.inverse_mass, r[2] * b.inverse_mass, w.x, w.y, w.z};
}

double dot6(const Row& a, const Row& b) {
  double s = 0;
  for (int k = 0; k < 6; ++k) s += a[k] * b[k];
  return s;
}

}  // namespace

struct JointDirectSolver::Impl {
  // One entry per direct joint (its body ids −1 on a static side), and that joint's index.
  std::vector<DirectJointRows> entries;
  std::vector<int> entry_joint;
  // A forest of joints is factored leaves first without fill (joint_tree_solver.h); anything
  // else by Eigen's sparse LDLᵀ with a fill-reducing ordering.
  JointTreeSolver tree;
  bool tree_allowed = true;
  bool use_tree = false;
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> ldlt;
  std::vector<Eigen::Triplet<double>> triplets;
  Eigen::SparseMatrix<double> a;
  Eigen::VectorXd rhs, lambda;
  std::vector<int> pattern_key, key;  // the joints and rows A was analysed for; this step's
  bool eigen_analysed = false;
  int total = 0;  // rows in A
  // Scratch kept between steps (no allocation once warm).
  std::vector<std::vector<std::pair<int, int>>> on_body;  // per body: (entry, side) acting on it
  std::array<Row, 6> weighted;                            // one entry's rows times M⁻¹
  std::vector<int> moving;                                // the bodies the entries move
  std::vector<Row> impulse;                               // per body: Jᵀ·λ
  std::vector<Mat3> stabilization_inverse_inertia;        // the position passes' metric
  std::vector<char> unsettled;          // per component: still outside the tolerance this step
  std::vector<double> component_error;  // per component: its largest row error this pass
  bool metric_ready = false;            // stabilization_inverse_inertia is this step's
  bool factored = false;

  // Builds A = J·M⁻¹·Jᵀ from the entries' rows and factors it; false (every joint handed back to
  // the iterations) when the factorization fails.
  bool assemble(const std::vector<RigidBody*>& bodies, const std::vector<Mat3>& inverse_inertia,
                std::vector<JointState>& joints);
  bool factor_eigen(const std::vector<RigidBody*>& bodies,
                    const std::vector<Mat3>& inverse_inertia);

  // λ = A⁻¹·rhs.
  void solve() {
    if (use_tree) {
      lambda = rhs;
      tree.solve(lambda.data());
    } else {
      lambda = ldlt.solve(rhs);
    }
  }

  // Δv = M⁻¹·Jᵀ·λ on every body, each body's impulses summed over its joints first.
  void distribute(const std::vector<RigidBody*>& bodies, const std::vector<Mat3>& inverse_inertia) {
    for (const int id : moving) impulse[id] = Row{};
    for (const DirectJointRows& e : entries)
      for (int side = 0; side < 2; ++side) {
        const int id = e.body[side];
        if (id < 0) continue;
        Row& sum = impulse[id];
        for (int r = 0; r < e.rows; ++r)
          for (int k = 0; k < 6; ++k) sum[k] += e.jacobian[side][r][k] * lambda[e.offset + r];
      }
    for (const int id : moving) {
      const Row dv = apply_inverse_mass(*bodies[id], inverse_inertia[id], impulse[id]);
      bodies[id]->linear_velocity += Vec3{dv[0], dv[1], dv[2]};
      bodies[id]->angular_velocity += Vec3{dv[3], dv[4], dv[5]};
    }
  }
};

JointDirectSolver::JointDirectSolver() : impl_(std::make_unique<Impl>()) {}
JointDirectSolver::~JointDirectSolver() = default;
JointDirectSolver::JointDirectSolver(JointDirectSolver&&) noexcept = default;
JointDirectSolver& JointDirectSolver::operator=(JointDirectSolver&&) noexcept = default;

void JointDirectSolver::allow_tree_solver(bool allowed) {
  impl_->tree_allowed = allowed;
  impl_->pattern_key.clear();  // analyse again
}

bool JointDirectSolver::using_tree_solver() const { return impl_->factored && impl_->use_tree; }

void JointDirectSolver::factor(const std::vector<RigidBody*>& bodies,
                               const std::vector<Mat3>& inverse_inertia,
                               std::vector<JointState>& joints,
                               const std::vector<char>& active_joint) {
  Impl& s = *impl_;
  s.entry_joint.clear();
  s.key.clear();
  s.factored = false;
  int total = 0;
  std::size_t count = 0;  // entries are reused in place: each holds 72 numbers of rows
  for (std::size_t i = 0; i < joints.size(); ++i) {
    JointState& j = joints[i];
    j.direct = false;
    const int rows = equality_rows(j);
    if (!active_joint[i] || j.broken || rows == 0) continue;
    if (count == s.entries.size()) s.entries.emplace_back();
    DirectJointRows& e = s.entries[count++];
    e.offset = total;
    e.rows = rows;
    e.body[0] = is_static(*bodies[j.desc.a]) ? -1 : int(j.desc.a);
    e.body[1] = is_static(*bodies[j.desc.b]) ? -1 : int(j.desc.b);
    jacobian_rows(j, e);
    s.entry_joint.push_back(int(i));
    total += rows;
    j.direct = true;
    s.key.push_back(int(i));
    s.key.push_back(rows * 4 + (e.body[0] >= 0 ? 2 : 0) + (e.body[1] >= 0 ? 1 : 0));
  }
  s.entries.resize(count);
  if (total == 0) return;
  s.total = total;
  if (s.key != s.pattern_key) {
    s.impulse.resize(bodies.size());
    s.moving.clear();
    for (const DirectJointRows& e : s.entries)
      for (const int id : e.body)
        if (id >= 0) s.moving.push_back(id);
    std::sort(s.moving.begin(), s.moving.end());
    s.moving.erase(std::unique(s.moving.begin(), s.moving.end()), s.moving.end());
    s.use_tree = s.tree_allowed && s.tree.analyse(s.entries, bodies.size());
    s.eigen_analysed = false;
    s.pattern_key = s.key;
  }
  s.assemble(bodies, inverse_inertia, joints);
  s.unsettled.assign(s.use_tree ? std::size_t(s.tree.component_count()) : 1, 1);
  s.metric_ready = false;
}

bool JointDirectSolver::Impl::assemble(const std::vector<RigidBody*>& bodies,
                                       const std::vector<Mat3>& inverse_inertia,
                                       std::vector<JointState>& joints) {
  rhs.resize(total);
  if (use_tree && tree.factor(entries, bodies, inverse_inertia, kRegularization)) {
    factored = true;
    return true;
  }
  // Not positive definite to the tree's Cholesky (redundant rows): Eigen's LDLᵀ from now on.
  use_tree = false;
  if (factor_eigen(bodies, inverse_inertia)) {
    factored = true;
    return true;
  }
  for (const int j : entry_joint) {  // back to the iterations, which need the point's mass
    JointState& joint = joints[j];
    joint.direct = false;
    prepare_point_mass(joint, *bodies[joint.desc.a], *bodies[joint.desc.b],
                       inverse_inertia[joint.desc.a], inverse_inertia[joint.desc.b]);
  }
  entries.clear();
  entry_joint.clear();
  pattern_key.clear();
  factored = false;
  return false;
}

bool JointDirectSolver::Impl::factor_eigen(const std::vector<RigidBody*>& bodies,
                                           const std::vector<Mat3>& inverse_inertia) {
  // A = J·M⁻¹·Jᵀ: a block per joint on the diagonal, and one per pair of joints sharing a body.
  on_body.resize(bodies.size());
  for (auto& list : on_body) list.clear();
  for (int n = 0; n < int(entries.size()); ++n)
    for (int side = 0; side < 2; ++side)
      if (entries[n].body[side] >= 0) on_body[entries[n].body[side]].push_back({n, side});
  triplets.clear();
  for (std::size_t body = 0; body < bodies.size(); ++body) {
    const auto& list = on_body[body];
    for (std::size_t p = 0; p < list.size(); ++p) {
      const DirectJointRows& ei = entries[list[p].first];
      const std::array<Row, 6>& ri = ei.jacobian[list[p].second];
      for (int r = 0; r < ei.rows; ++r)
        weighted[r] = apply_inverse_mass(*bodies[body], inverse_inertia[body], ri[r]);
      for (std::size_t q = 0; q <= p; ++q) {
        const DirectJointRows& ej = entries[list[q].first];
        const std::array<Row, 6>& rj = ej.jacobian[list[q].second];
        for (int r = 0; r < ei.rows; ++r)
          for (int c = 0; c < (p == q ? r + 1 : ej.rows); ++c) {  // a diagonal block's lower half
            const double v = dot6(weighted[r], rj[c]);
            const int row = ei.offset + r, col = ej.offset + c;
            if (row >= col)
              triplets.emplace_back(row, col, v);  // lower triangle
            else
              triplets.emplace_back(col, row, v);
          }
      }
    }
  }
  a.resize(total, total);
  a.setFromTriplets(triplets.begin(), triplets.end());
  for (int k = 0; k < total; ++k) a.coeffRef(k, k) *= 1 + kRegularization;
  if (!eigen_analysed) {
    ldlt.analyzePattern(a);
    eigen_analysed = true;
  }
  ldlt.factorize(a);
  return ldlt.info() == Eigen::Success;
}

void JointDirectSolver::solve_velocities(const std::vector<RigidBody*>& bodies,
                                         const std::vector<Mat3>& inverse_inertia,
                                         std::vector<JointState>& joints) {
  Impl& s = *impl_;
  if (!s.factored) return;
  for (std::size_t n = 0; n < s.entries.size(); ++n) {
    const DirectJointRows& e = s.entries[n];
    const JointState& j = joints[s.entry_joint[n]];
    const RigidBody& a = *bodies[j.desc.a];
    const RigidBody& b = *bodies[j.desc.b];
    const Row va = make_row(a.linear_velocity, a.angular_velocity, 1);
    const Row vb = make_row(b.linear_velocity, b.angular_velocity, 1);
    for (int r = 0; r < e.rows; ++r)
      s.rhs[e.offset + r] = -(dot6(e.jacobian[0][r], va) + dot6(e.jacobian[1][r], vb));
  }
  s.solve();
  s.distribute(bodies, inverse_inertia);
  // The impulse on b: J_bᵀλ, whose linear part is λ for the point rows (or λ·d for a rod).
  for (std::size_t n = 0; n < s.entries.size(); ++n) {
    JointState& j = joints[s.entry_joint[n]];
    const int offset = s.entries[n].offset;
    if (j.desc.kind == JointKind::Distance)
      j.rod_lambda += s.lambda[offset];
    else
      j.point_lambda += Vec3{s.lambda[offset], s.lambda[offset + 1], s.lambda[offset + 2]};
  }
}

bool JointDirectSolver::stabilize_positions(const std::vector<RigidBody*>& bodies,
                                            const std::vector<Mat3>& inverse_inertia,
                                            std::vector<JointState>& joints, double tolerance,
                                            double inertia_scale,
                                            const std::vector<char>* unscaled) {
  Impl& s = *impl_;
  if (!s.factored) return false;
  // Components (independent trees of joints) are settled one by one: once a component's joints
  // are all within the tolerance, its bodies stay where they are for the rest of the step, and
  // the later passes neither evaluate nor factor it — in a pile of ragdolls most are settled
  // after one pass while a few tumbling ones take more.
  std::vector<char>& live = s.unsettled;
  auto component = [&](std::size_t n) { return s.use_tree ? s.tree.component_of(int(n)) : 0; };
  s.rhs.resize(s.total);
  // The bodies have moved since the velocity solve: the arms and axes at the current poses, the
  // errors there, and (unless they are all within the tolerance) A there too, so that each pass
  // is a Newton step on the position errors.
  auto evaluate = [&](std::size_t n) {
    JointState& j = joints[s.entry_joint[n]];
    const RigidBody& a = *bodies[j.desc.a];
    const RigidBody& b = *bodies[j.desc.b];
    j.ra = rotate(a.orientation, j.anchor_a);
    j.rb = rotate(b.orientation, j.anchor_b);
    const Vec3 xa = a.position + j.ra;
    const Vec3 xb = b.position + j.rb;
    double* r = s.rhs.data() + s.entries[n].offset;
    if (j.desc.kind == JointKind::Distance) {
      const Vec3 between = xb - xa;
      if (length(between) > 1e-12) j.rod_direction = normalize(between);
      r[0] = -(distance(xa, xb) - j.desc.max_distance);
      return;
    }
    const Vec3 gap = xa - xb;  // −C of the point rows
    r[0] = gap.x;
    r[1] = gap.y;
    r[2] = gap.z;
    if (j.desc.kind == JointKind::Hinge) {
      const Vec3 axis = rotate(a.orientation, j.axis_a);
      j.rows[0].axis = normalize(any_perpendicular(axis));
      j.rows[1].axis = cross(axis, j.rows[0].axis);
      // The turn that brings b's axis back onto a's, on the two rows across the axis.
      const Vec3 e_turn = cross(rotate(b.orientation, j.axis_b), axis);
      r[3] = dot(j.rows[0].axis, e_turn);
      r[4] = dot(j.rows[1].axis, e_turn);
    } else if (j.desc.kind == JointKind::Fixed) {
      Quat error = a.orientation * j.rest * conjugate(b.orientation);
      if (error.w < 0) error = -error;
      for (int k = 0; k < 3; ++k) r[3 + k] = 2 * error.vec()[k];
    }
  };
  std::vector<double>& error = s.component_error;
  error.assign(live.size(), 0.0);
  for (std::size_t n = 0; n < s.entries.size(); ++n) {
    const DirectJointRows& e = s.entries[n];
    double* r = s.rhs.data() + e.offset;
    const int c = component(n);
    if (!live[std::size_t(c)]) {
      std::fill(r, r + e.rows, 0.0);
      continue;
    }
    evaluate(n);
    for (int k = 0; k < e.rows; ++k)
      error[std::size_t(c)] = std::max(error[std::size_t(c)], std::abs(r[k]));
  }
  // Converged: nothing worth a factorization or a move.
  bool any = false;
  for (std::size_t c = 0; c < live.size(); ++c) {
    live[c] = live[c] && error[c] > tolerance;
    any = any || live[c];
  }
  if (!any) return false;
  // The metric of the correction: the step's inertias (still accurate enough: it only chooses
  // which of the configurations that close the joints the pass heads for, and any fixed one
  // keeps Newton's convergence) made `inertia_scale` times heavier, so that the pass turns the
  // bodies less and moves them more. Its linearization is exact in moves and only first order
  // in turns: at 4× the whipping 50-link chain takes 2.4 passes a step instead of 4.1, with the
  // same energy (measured over its 5 s swing).
  std::vector<Mat3>& metric = s.stabilization_inverse_inertia;
  if (!s.metric_ready) {  // the same for every pass of the step
    metric.resize(inverse_inertia.size());
    for (const int id : s.moving)
      metric[id] = unscaled && (*unscaled)[std::size_t(id)]
                       ? inverse_inertia[id]
                       : inverse_inertia[id] * (1 / inertia_scale);
    s.metric_ready = true;
  }
  for (std::size_t n = 0; n < s.entries.size(); ++n)
    if (live[std::size_t(component(n))]) jacobian_rows(joints[s.entry_joint[n]], s.entries[n]);
  if (s.use_tree && s.tree.factor(s.entries, bodies, metric, kRegularization, &live)) {
    s.lambda = s.rhs;
    s.tree.solve(s.lambda.data(), &live);
  } else {
    // Not positive definite to the tree's Cholesky: every joint again, by the general solve.
    for (std::size_t n = 0; n < s.entries.size(); ++n) {
      evaluate(n);
      jacobian_rows(joints[s.entry_joint[n]], s.entries[n]);
    }
    s.use_tree = false;
    live.assign(1, 1);
    if (!s.assemble(bodies, metric, joints)) return false;
    s.solve();
  }
  // Moved joint by joint: a body's turns compose. (One summed move a body is 4 % faster on the
  // chain but changes chaotic falls, such as the ragdoll tests', enough to flip their comparison.)
  for (std::size_t n = 0; n < s.entries.size(); ++n) {
    if (!live[std::size_t(component(n))]) continue;
    const DirectJointRows& e = s.entries[n];
    for (int side = 0; side < 2; ++side) {
      const int id = e.body[side];
      if (id < 0) continue;
      Row impulse{};
      for (int r = 0; r < e.rows; ++r)
        for (int k = 0; k < 6; ++k) impulse[k] += e.jacobian[side][r][k] * s.lambda[e.offset + r];
      const Row dx = apply_inverse_mass(*bodies[id], metric[id], impulse);
      RigidBody& body = *bodies[id];
      body.position += Vec3{dx[0], dx[1], dx[2]};
      body.orientation = turned_by(body.orientation, {dx[3], dx[4], dx[5]});
    }
  }
  return true;
}

}  // namespace kinema::detail
