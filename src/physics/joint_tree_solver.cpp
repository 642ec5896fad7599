// The joints' equality system on a forest, factored without fill (src/physics/joint_tree_solver.h).
#include "joint_tree_solver.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <type_traits>

namespace kinema::detail {

namespace {

// A body's joints are all coupled through it: d of them make d²/2 blocks and O(d³) work. Past
// this, the general factorization (which stores only the rows' own numbers) takes the system.
constexpr int kMostJointsOnABody = 16;

double dot6(const JacobianRow& a, const JacobianRow& b) {
  double s = 0;
  for (int k = 0; k < 6; ++k) s += a[k] * b[k];
  return s;
}

// dot6(w, row) when w = row_r·M⁻¹ and both rows are point or angular rows (point_rows): the
// linear part is ±1/m on the diagonal of the point rows and zero elsewhere, so only the angular
// half is multiplied. The terms are added in dot6's order, so the sum has dot6's bits (its
// linear products are exact: ±1/m times ±1, or zeros).
double dot_point_rows(const JacobianRow& w, const JacobianRow& row, int r, int c,
                      double signed_inverse_mass) {
  double s = r == c && r < 3 ? signed_inverse_mass : 0.0;
  for (int k = 3; k < 6; ++k) s += w[k] * row[k];
  return s;
}

int other_body(const DirectJointRows& j, int body) {
  return j.body[0] == body ? j.body[1] : j.body[0];
}

}  // namespace

bool JointTreeSolver::analyse(const std::vector<DirectJointRows>& joints, std::size_t body_count) {
  const int n = int(joints.size());
  const int bodies = int(body_count);
  // A loop among the moving bodies (a second path between two of them) has fill: refused.
  parent_.resize(body_count);
  std::iota(parent_.begin(), parent_.end(), 0);
  auto find = [&](int x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  };
  for (const DirectJointRows& j : joints) {
    if (j.body[0] < 0 || j.body[1] < 0) continue;
    const int ra = find(j.body[0]), rb = find(j.body[1]);
    if (ra == rb) return false;
    parent_[std::max(ra, rb)] = std::min(ra, rb);
  }
  // Each moving body's joints (by joint index; body_nodes_ is refilled by node below).
  body_start_.assign(body_count + 1, 0);
  for (const DirectJointRows& j : joints)
    for (const int q : j.body)
      if (q >= 0) ++body_start_[q + 1];
  for (std::size_t q = 0; q < body_count; ++q)
    if (body_start_[q + 1] > kMostJointsOnABody) return false;
  std::partial_sum(body_start_.begin(), body_start_.end(), body_start_.begin());
  body_nodes_.resize(std::size_t(body_start_[bodies]));
  stack_.assign(body_start_.begin(), body_start_.end() - 1);  // fill positions
  for (int i = 0; i < n; ++i)
    for (const int q : joints[i].body)
      if (q >= 0) body_nodes_[stack_[q]++] = i;
  // Breadth first from each component's lowest body: every body's joint toward the root.
  constexpr int kUnvisited = -2;
  parent_joint_.assign(body_count, kUnvisited);
  component_of_body_.assign(body_count, -1);
  order_.clear();
  int components = 0;
  for (int root = 0; root < bodies; ++root) {
    if (parent_joint_[root] != kUnvisited || body_start_[root] == body_start_[root + 1]) continue;
    parent_joint_[root] = -1;
    order_.push_back(root);
    for (std::size_t head = order_.size() - 1; head < order_.size(); ++head) {
      const int c = order_[head];
      component_of_body_[c] = components;
      for (int k = body_start_[c]; k < body_start_[c + 1]; ++k) {
        const int j = body_nodes_[k];
        const int other = other_body(joints[j], c);
        if (j == parent_joint_[c] || other < 0) continue;
        parent_joint_[other] = j;
        order_.push_back(other);
      }
    }
    ++components;
  }
  // Leaves first: a body's joints to static bodies, then its joint toward the root, after
  // everything beyond it. A joint's neighbours still to come then all share the body it hangs
  // from (`body`), so eliminating it couples nothing new.
  nodes_.clear();
  for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
    const int c = *it;
    for (int k = body_start_[c]; k < body_start_[c + 1]; ++k) {
      const int j = body_nodes_[k];
      if (other_body(joints[j], c) >= 0) continue;
      Node node;
      node.joint = j;
      node.body = c;
      nodes_.push_back(node);
    }
    if (parent_joint_[c] >= 0) {
      Node node;
      node.joint = parent_joint_[c];
      node.body = other_body(joints[node.joint], c);
      nodes_.push_back(node);
    }
  }
  if (int(nodes_.size()) != n) return false;  // not reached: every joint has a moving body
  // Each component's nodes are consecutive (its bodies were, in order_): number the components
  // as their nodes come.
  std::vector<int>& renumbered = stack_;
  renumbered.assign(std::size_t(components), -1);
  component_count_ = 0;
  component_of_joint_.assign(std::size_t(n), 0);
  for (int i = 0; i < n; ++i) {
    int& c = renumbered[std::size_t(component_of_body_[nodes_[i].body])];
    if (c < 0) {
      c = component_count_++;
    }
    component_of_joint_[std::size_t(nodes_[i].joint)] = c;
  }
  for (int& c : component_of_body_)
    if (c >= 0) c = renumbered[std::size_t(c)];
  // Each body's joints again, now by node, ascending; their blocks of A per body.
  stack_.assign(body_start_.begin(), body_start_.end() - 1);
  clique_base_.assign(body_count, 0);
  int blocks = 0;
  for (int q = 0; q < bodies; ++q) {
    const int d = body_start_[q + 1] - body_start_[q];
    clique_base_[q] = blocks;
    blocks += d * (d - 1) / 2;
  }
  for (int i = 0; i < n; ++i) {
    Node& node = nodes_[i];
    const DirectJointRows& j = joints[node.joint];
    node.offset = j.offset;
    node.rows = j.rows;
    for (const int q : j.body) {
      if (q < 0) continue;
      if (q == node.body) node.local = stack_[q] - body_start_[q];
      body_nodes_[stack_[q]++] = i;
    }
  }
  diagonal_.resize(std::size_t(n));
  couplings_.resize(std::size_t(blocks));
  weighted_.resize(2 * std::size_t(n));
  return true;
}

// Calls f with the joint's row count as a compile-time constant, so that the block loops over
// it unroll (3 rows for a ball joint, 5 for a hinge, 6 for a weld, 1 for a rod).
template <class F>
void with_rows(int rows, F&& f) {
  switch (rows) {
    case 1:
      return f(std::integral_constant<int, 1>{});
    case 2:
      return f(std::integral_constant<int, 2>{});
    case 3:
      return f(std::integral_constant<int, 3>{});
    case 4:
      return f(std::integral_constant<int, 4>{});
    case 5:
      return f(std::integral_constant<int, 5>{});
    default:
      return f(std::integral_constant<int, 6>{});
  }
}

bool JointTreeSolver::factor(const std::vector<DirectJointRows>& joints,
                             const std::vector<RigidBody*>& bodies,
                             const std::vector<Mat3>& inverse_inertia, double regularization,
                             const std::vector<char>* active) {
  const int n = int(nodes_.size());
  // A's diagonal blocks, Σ over the joint's moving bodies of J·M⁻¹·Jᵀ (lower halves). Sums are
  // kept in locals: the compiler cannot tell the blocks from the rows they are made of.
  for (int i = 0; i < n; ++i) {
    if (left_out(i, active)) continue;
    const Node& node = nodes_[i];
    with_rows(node.rows, [&](auto rows) {
      constexpr int m = rows;
      const DirectJointRows& j = joints[node.joint];
      double sum[m][m] = {};
      for (int s = 0; s < 2; ++s) {
        const int q = j.body[s];
        if (q < 0) continue;
        std::array<JacobianRow, 6>& w = weighted_[2 * i + s];
        const double inverse_mass = bodies[q]->inverse_mass;
        const Mat3& ii = inverse_inertia[q];
        for (int r = 0; r < m; ++r) {
          const JacobianRow& row = j.jacobian[s][r];
          JacobianRow wr;
          for (int k = 0; k < 3; ++k) wr[k] = row[k] * inverse_mass;
          for (int k = 0; k < 3; ++k)
            wr[3 + k] = ii.m[k][0] * row[3] + ii.m[k][1] * row[4] + ii.m[k][2] * row[5];
          if (j.point_rows)  // the signs of both rows are the side's: their product is +1
            for (int c = 0; c <= r; ++c)
              sum[r][c] += dot_point_rows(wr, j.jacobian[s][c], r, c, inverse_mass);
          else
            for (int c = 0; c <= r; ++c) sum[r][c] += dot6(wr, j.jacobian[s][c]);
          w[r] = wr;
        }
      }
      Block& d = diagonal_[i];
      for (int r = 0; r < m; ++r) {
        for (int c = 0; c < r; ++c) d[r * 6 + c] = sum[r][c];
        d[r * 6 + r] = sum[r][r] * (1 + regularization);
      }
    });
  }
  // The blocks between joints sharing a body: J_k·M⁻¹·J_lᵀ on that body.
  for (std::size_t q = 0; q + 1 < body_start_.size(); ++q) {
    const int first = body_start_[q], d = body_start_[q + 1] - first;
    if (d > 1 && active && !(*active)[std::size_t(component_of_body_[q])]) continue;
    for (int k = 1; k < d; ++k) {
      const int nk = body_nodes_[first + k];
      const DirectJointRows& jk = joints[nodes_[nk].joint];
      const int sk = jk.body[0] == int(q) ? 0 : 1;
      const std::array<JacobianRow, 6>& w = weighted_[2 * nk + sk];
      for (int l = 0; l < k; ++l) {
        const Node& node_l = nodes_[body_nodes_[first + l]];
        const DirectJointRows& jl = joints[node_l.joint];
        const int sl = jl.body[0] == int(q) ? 0 : 1;
        const std::array<JacobianRow, 6>& rows_l = jl.jacobian[sl];
        Block& b = coupling(int(q), k, l);
        // Side a's point rows carry −e_r, side b's +e_r: the linear product's sign.
        const double signed_inverse_mass =
            sk == sl ? bodies[q]->inverse_mass : -bodies[q]->inverse_mass;
        const bool points = jk.point_rows && jl.point_rows;
        with_rows(nodes_[nk].rows, [&](auto rows) {
          with_rows(node_l.rows, [&](auto columns) {
            if (points)
              for (int r = 0; r < rows; ++r)
                for (int c = 0; c < columns; ++c)
                  b[r * 6 + c] = dot_point_rows(w[r], rows_l[c], r, c, signed_inverse_mass);
            else
              for (int r = 0; r < rows; ++r)
                for (int c = 0; c < columns; ++c) b[r * 6 + c] = dot6(w[r], rows_l[c]);
          });
        });
      }
    }
  }
  // Block Cholesky, leaves first: L_jj, then L_kj = A_kj·L_jj⁻ᵀ for the joints k still to come
  // (all on the body the joint hangs from), then A_kl −= L_kj·L_ljᵀ among them. L's diagonal is
  // kept as its reciprocals, for the solves to multiply.
  bool positive = true;
  for (int i = 0; i < n && positive; ++i) {
    if (left_out(i, active)) continue;
    const Node& node = nodes_[i];
    with_rows(node.rows, [&](auto rows) {
      constexpr int m = rows;
      double l[m][m];
      for (int r = 0; r < m; ++r)
        for (int c = 0; c <= r; ++c) l[r][c] = diagonal_[i][r * 6 + c];
      for (int c = 0; c < m; ++c) {
        double s = l[c][c];
        for (int t = 0; t < c; ++t) s -= l[c][t] * l[c][t];
        if (!(s > 0) || !std::isfinite(s)) {
          positive = false;
          return;
        }
        const double inverse_pivot = 1 / std::sqrt(s);
        l[c][c] = inverse_pivot;
        for (int r = c + 1; r < m; ++r) {
          double v = l[r][c];
          for (int t = 0; t < c; ++t) v -= l[r][t] * l[c][t];
          l[r][c] = v * inverse_pivot;
        }
      }
      for (int r = 0; r < m; ++r)
        for (int c = 0; c <= r; ++c) diagonal_[i][r * 6 + c] = l[r][c];
      const int q = node.body, first = body_start_[q], d = body_start_[q + 1] - first;
      for (int k = node.local + 1; k < d; ++k) {
        Block& x = coupling(q, k, node.local);
        const int nk = body_nodes_[first + k];
        with_rows(nodes_[nk].rows, [&](auto rows_k) {
          constexpr int mk = rows_k;
          double xk[mk][m];
          for (int r = 0; r < mk; ++r)
            for (int c = 0; c < m; ++c) {
              double v = x[r * 6 + c];
              for (int t = 0; t < c; ++t) v -= xk[r][t] * l[c][t];
              xk[r][c] = v * l[c][c];
            }
          for (int r = 0; r < mk; ++r)
            for (int c = 0; c < m; ++c) x[r * 6 + c] = xk[r][c];
          Block& dk = diagonal_[nk];
          for (int r = 0; r < mk; ++r)
            for (int c = 0; c <= r; ++c) {
              double v = 0;
              for (int t = 0; t < m; ++t) v += xk[r][t] * xk[c][t];
              dk[r * 6 + c] -= v;
            }
          for (int kl = node.local + 1; kl < k; ++kl) {  // L_lj is final: l < k
            const Block& xl = coupling(q, kl, node.local);
            const int ml = nodes_[body_nodes_[first + kl]].rows;
            Block& b = coupling(q, k, kl);
            for (int r = 0; r < mk; ++r)
              for (int c = 0; c < ml; ++c) {
                double v = 0;
                for (int t = 0; t < m; ++t) v += xk[r][t] * xl[c * 6 + t];
                b[r * 6 + c] -= v;
              }
          }
        });
      }
    });
  }
  return positive;
}

void JointTreeSolver::solve(double* x, const std::vector<char>* active) const {
  const int n = int(nodes_.size());
  // L·y = x, leaves first.
  for (int i = 0; i < n; ++i) {
    if (left_out(i, active)) continue;
    const Node& node = nodes_[i];
    with_rows(node.rows, [&](auto rows) {
      constexpr int m = rows;
      const Block& l = diagonal_[i];
      double* xi = x + node.offset;
      for (int c = 0; c < m; ++c) {
        double v = xi[c];
        for (int t = 0; t < c; ++t) v -= l[c * 6 + t] * xi[t];
        xi[c] = v * l[c * 6 + c];
      }
      const int q = node.body, first = body_start_[q], d = body_start_[q + 1] - first;
      for (int k = node.local + 1; k < d; ++k) {
        const Node& later = nodes_[body_nodes_[first + k]];
        const Block& b = coupling(q, k, node.local);
        double* xk = x + later.offset;
        for (int r = 0; r < later.rows; ++r) {
          double v = 0;
          for (int t = 0; t < m; ++t) v += b[r * 6 + t] * xi[t];
          xk[r] -= v;
        }
      }
    });
  }
  // Lᵀ·x = y, root first.
  for (int i = n - 1; i >= 0; --i) {
    if (left_out(i, active)) continue;
    const Node& node = nodes_[i];
    with_rows(node.rows, [&](auto rows) {
      constexpr int m = rows;
      const Block& l = diagonal_[i];
      double* xi = x + node.offset;
      const int q = node.body, first = body_start_[q], d = body_start_[q + 1] - first;
      for (int k = node.local + 1; k < d; ++k) {
        const Node& later = nodes_[body_nodes_[first + k]];
        const Block& b = coupling(q, k, node.local);
        const double* xk = x + later.offset;
        for (int r = 0; r < later.rows; ++r)
          for (int t = 0; t < m; ++t) xi[t] -= b[r * 6 + t] * xk[r];
      }
      for (int c = m - 1; c >= 0; --c) {
        double v = xi[c];
        for (int t = c + 1; t < m; ++t) v -= l[t * 6 + c] * xi[t];
        xi[c] = v * l[c * 6 + c];
      }
    });
  }
}

}  // namespace kinema::detail
