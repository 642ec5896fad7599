// The joints' equality rows by a sparse direct solve (src/physics/joint_direct_solver.h).
#include "joint_direct_solver.h"

#include <Eigen/SparseCholesky>
#include <Eigen/SparseCore>
#include <array>
#include <cmath>

namespace kinema::detail {

namespace {

// Relative compliance on A's diagonal: keeps the factor defined when rows are redundant (a body
// pinned to the world twice), far too small to soften anything.
constexpr double kRegularization = 1e-9;

using Row = std::array<double, 6>;  // one Jacobian row on one body: linear, then angular

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
void jacobian_rows(const JointState& j, std::vector<Row>& ja, std::vector<Row>& jb) {
  ja.clear();
  jb.clear();
  const Vec3 zero{0, 0, 0};
  if (j.desc.kind == JointKind::Distance) {
    const Vec3 d = j.rod_direction;
    jb.push_back(make_row(d, cross(j.rb, d), 1));
    ja.push_back(make_row(d, cross(j.ra, d), -1));
    return;
  }
  for (int k = 0; k < 3; ++k) {
    Vec3 e{0, 0, 0};
    e[k] = 1;
    jb.push_back(make_row(e, cross(j.rb, e), 1));
    ja.push_back(make_row(e, cross(j.ra, e), -1));
  }
  const int angular = equality_rows(j) - 3;  // a hinge's two perpendicular axes, a weld's three
  for (int k = 0; k < angular; ++k) {
    jb.push_back(make_row(zero, j.rows[k].axis, 1));
    ja.push_back(make_row(zero, j.rows[k].axis, -1));
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
  // One entry per direct joint.
  struct Entry {
    int joint = 0;
    int offset = 0;  // first row in A
    int rows = 0;
    std::vector<Row> ja, jb;  // empty side for a static body
    bool a_moves = false, b_moves = false;
  };
  std::vector<Entry> entries;
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> ldlt;
  std::vector<Eigen::Triplet<double>> triplets;
  Eigen::SparseMatrix<double> a;
  Eigen::VectorXd rhs, lambda;
  std::vector<int> pattern_key;  // the joints and rows A was analysed for
  int total = 0;                 // rows in A
  // Scratch kept between steps (no allocation once warm).
  std::vector<std::vector<std::pair<int, int>>> on_body;  // per body: (entry, side) acting on it
  std::vector<Row> weighted;                              // one entry's rows times M⁻¹
  std::vector<Mat3> current_inverse_inertia;              // at the poses after the step
  bool factored = false;

  // Builds A = J·M⁻¹·Jᵀ from the entries' rows and factors it; false (every joint handed back to
  // the iterations) when the factorization fails.
  bool assemble(const std::vector<RigidBody*>& bodies, const std::vector<Mat3>& inverse_inertia,
                std::vector<JointState>& joints, const std::vector<int>& key);

  // Δv = M⁻¹·Jᵀ·λ on every body, or positions moved by it.
  template <class Apply>
  void distribute(const std::vector<RigidBody*>& bodies, const std::vector<Mat3>& inverse_inertia,
                  const std::vector<JointState>& joints, Apply apply) {
    for (const Entry& e : entries) {
      const JointState& j = joints[e.joint];
      for (int side = 0; side < 2; ++side) {
        if (!(side == 0 ? e.a_moves : e.b_moves)) continue;
        const std::uint32_t id = side == 0 ? j.desc.a : j.desc.b;
        const std::vector<Row>& rows = side == 0 ? e.ja : e.jb;
        Row impulse{};
        for (int r = 0; r < e.rows; ++r)
          for (int k = 0; k < 6; ++k) impulse[k] += rows[r][k] * lambda[e.offset + r];
        apply(*bodies[id], apply_inverse_mass(*bodies[id], inverse_inertia[id], impulse));
      }
    }
  }
};

JointDirectSolver::JointDirectSolver() : impl_(std::make_unique<Impl>()) {}
JointDirectSolver::~JointDirectSolver() = default;
JointDirectSolver::JointDirectSolver(JointDirectSolver&&) noexcept = default;
JointDirectSolver& JointDirectSolver::operator=(JointDirectSolver&&) noexcept = default;

void JointDirectSolver::factor(const std::vector<RigidBody*>& bodies,
                               const std::vector<Mat3>& inverse_inertia,
                               std::vector<JointState>& joints,
                               const std::vector<char>& active_joint) {
  Impl& s = *impl_;
  s.entries.clear();
  s.factored = false;
  std::vector<int> key;
  int total = 0;
  for (std::size_t i = 0; i < joints.size(); ++i) {
    JointState& j = joints[i];
    j.direct = false;
    const int rows = equality_rows(j);
    if (!active_joint[i] || j.broken || rows == 0) continue;
    Impl::Entry e;
    e.joint = int(i);
    e.offset = total;
    e.rows = rows;
    jacobian_rows(j, e.ja, e.jb);
    e.a_moves = !is_static(*bodies[j.desc.a]);
    e.b_moves = !is_static(*bodies[j.desc.b]);
    total += rows;
    j.direct = true;
    key.push_back(int(i));
    key.push_back(rows);
    s.entries.push_back(std::move(e));
  }
  if (total == 0) return;
  s.total = total;
  s.assemble(bodies, inverse_inertia, joints, key);
}

bool JointDirectSolver::Impl::assemble(const std::vector<RigidBody*>& bodies,
                                       const std::vector<Mat3>& inverse_inertia,
                                       std::vector<JointState>& joints,
                                       const std::vector<int>& key) {
  Impl& s = *this;
  const int total = s.total;
  // A = J·M⁻¹·Jᵀ: a block per joint on the diagonal, and one per pair of joints sharing a body.
  std::vector<std::vector<std::pair<int, int>>>& on_body = s.on_body;  // (entry, side)
  on_body.resize(bodies.size());
  for (auto& list : on_body) list.clear();
  for (int n = 0; n < int(s.entries.size()); ++n) {
    const JointState& j = joints[s.entries[n].joint];
    if (s.entries[n].a_moves) on_body[j.desc.a].push_back({n, 0});
    if (s.entries[n].b_moves) on_body[j.desc.b].push_back({n, 1});
  }
  s.triplets.clear();
  std::vector<Row>& weighted = s.weighted;
  for (std::size_t body = 0; body < bodies.size(); ++body) {
    const auto& list = on_body[body];
    for (std::size_t p = 0; p < list.size(); ++p) {
      const Impl::Entry& ei = s.entries[list[p].first];
      const std::vector<Row>& ri = list[p].second == 0 ? ei.ja : ei.jb;
      weighted.clear();
      for (const Row& r : ri)
        weighted.push_back(apply_inverse_mass(*bodies[body], inverse_inertia[body], r));
      for (std::size_t q = 0; q <= p; ++q) {
        const Impl::Entry& ej = s.entries[list[q].first];
        const std::vector<Row>& rj = list[q].second == 0 ? ej.ja : ej.jb;
        for (int r = 0; r < ei.rows; ++r)
          for (int c = 0; c < (p == q ? r + 1 : ej.rows); ++c) {  // a diagonal block's lower half
            const double v = dot6(weighted[r], rj[c]);
            const int row = ei.offset + r, col = ej.offset + c;
            if (row >= col)
              s.triplets.emplace_back(row, col, v);  // lower triangle
            else
              s.triplets.emplace_back(col, row, v);
          }
      }
    }
  }
  s.a.resize(total, total);
  s.a.setFromTriplets(s.triplets.begin(), s.triplets.end());
  for (int k = 0; k < total; ++k) s.a.coeffRef(k, k) *= 1 + kRegularization;
  if (key != s.pattern_key) {
    s.ldlt.analyzePattern(s.a);
    s.pattern_key = key;
  }
  s.ldlt.factorize(s.a);
  if (s.ldlt.info() != Eigen::Success) {
    for (const Impl::Entry& e : s.entries) joints[e.joint].direct = false;  // back to iterations
    s.entries.clear();
    s.pattern_key.clear();
    return false;
  }
  s.rhs.resize(total);
  s.factored = true;
  return true;
}

void JointDirectSolver::solve_velocities(const std::vector<RigidBody*>& bodies,
                                         const std::vector<Mat3>& inverse_inertia,
                                         std::vector<JointState>& joints) {
  Impl& s = *impl_;
  if (!s.factored) return;
  for (const Impl::Entry& e : s.entries) {
    const JointState& j = joints[e.joint];
    const RigidBody& a = *bodies[j.desc.a];
    const RigidBody& b = *bodies[j.desc.b];
    const Row va = make_row(a.linear_velocity, a.angular_velocity, 1);
    const Row vb = make_row(b.linear_velocity, b.angular_velocity, 1);
    for (int r = 0; r < e.rows; ++r) s.rhs[e.offset + r] = -(dot6(e.ja[r], va) + dot6(e.jb[r], vb));
  }
  s.lambda = s.ldlt.solve(s.rhs);
  s.distribute(bodies, inverse_inertia, joints, [](RigidBody& body, const Row& dv) {
    body.linear_velocity += Vec3{dv[0], dv[1], dv[2]};
    body.angular_velocity += Vec3{dv[3], dv[4], dv[5]};
  });
  // The impulse on b: J_bᵀλ, whose linear part is λ for the point rows (or λ·d for a rod).
  for (const Impl::Entry& e : s.entries) {
    JointState& j = joints[e.joint];
    if (j.desc.kind == JointKind::Distance)
      j.rod_lambda += s.lambda[e.offset];
    else
      j.point_lambda += Vec3{s.lambda[e.offset], s.lambda[e.offset + 1], s.lambda[e.offset + 2]};
  }
}

void JointDirectSolver::stabilize_positions(const std::vector<RigidBody*>& bodies,
                                            const std::vector<Mat3>& inverse_inertia,
                                            std::vector<JointState>& joints) {
  Impl& s = *impl_;
  if (!s.factored) return;
  // The bodies have moved since the velocity solve: A at the current poses (arms, axes, inertias),
  // so that each pass is a Newton step on the position errors.
  std::vector<Mat3>& current_inverse_inertia = s.current_inverse_inertia;
  current_inverse_inertia.resize(inverse_inertia.size());
  for (std::size_t i = 0; i < bodies.size(); ++i)
    current_inverse_inertia[i] = world_inverse_inertia(*bodies[i]);
  for (Impl::Entry& e : s.entries) {
    JointState& j = joints[e.joint];
    const RigidBody& a = *bodies[j.desc.a];
    const RigidBody& b = *bodies[j.desc.b];
    j.ra = rotate(a.orientation, j.anchor_a);
    j.rb = rotate(b.orientation, j.anchor_b);
    if (j.desc.kind == JointKind::Hinge) {
      const Vec3 axis = rotate(a.orientation, j.axis_a);
      j.rows[0].axis = normalize(any_perpendicular(axis));
      j.rows[1].axis = cross(axis, j.rows[0].axis);
    } else if (j.desc.kind == JointKind::Distance) {
      const Vec3 between = (b.position + j.rb) - (a.position + j.ra);
      if (length(between) > 1e-12) j.rod_direction = normalize(between);
    }
    jacobian_rows(j, e.ja, e.jb);
  }
  if (!s.assemble(bodies, current_inverse_inertia, joints, s.pattern_key)) return;
  for (const Impl::Entry& e : s.entries) {
    const JointState& j = joints[e.joint];
    const RigidBody& a = *bodies[j.desc.a];
    const RigidBody& b = *bodies[j.desc.b];
    const Vec3 xa = a.position + rotate(a.orientation, j.anchor_a);
    const Vec3 xb = b.position + rotate(b.orientation, j.anchor_b);
    double* r = s.rhs.data() + e.offset;
    if (j.desc.kind == JointKind::Distance) {
      r[0] = -(distance(xa, xb) - j.desc.max_distance);
      continue;
    }
    const Vec3 gap = xa - xb;  // −C of the point rows
    r[0] = gap.x;
    r[1] = gap.y;
    r[2] = gap.z;
    if (j.desc.kind == JointKind::Hinge) {
      // The turn that brings b's axis back onto a's, on the two rows across the axis.
      const Vec3 e_turn = cross(rotate(b.orientation, j.axis_b), rotate(a.orientation, j.axis_a));
      r[3] = dot(j.rows[0].axis, e_turn);
      r[4] = dot(j.rows[1].axis, e_turn);
    } else if (j.desc.kind == JointKind::Fixed) {
      Quat error = a.orientation * j.rest * conjugate(b.orientation);
      if (error.w < 0) error = -error;
      for (int k = 0; k < 3; ++k) r[3 + k] = 2 * error.vec()[k];
    }
  }
  s.lambda = s.ldlt.solve(s.rhs);
  s.distribute(bodies, current_inverse_inertia, joints, [](RigidBody& body, const Row& dx) {
    body.position += Vec3{dx[0], dx[1], dx[2]};
    body.orientation = turned_by(body.orientation, {dx[3], dx[4], dx[5]});
  });
}

}  // namespace kinema::detail
