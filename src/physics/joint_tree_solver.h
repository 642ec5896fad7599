// Internal: the joints' equality system A·λ = b, A = J·M⁻¹·Jᵀ, factored in linear time when the
// joints form a forest over the moving bodies (chains, ragdolls, trees of links).
//
// Baraff 1996, "Linear-Time Dynamics using Lagrange Multipliers", factors the system of a tree of
// bodies and joints without fill by eliminating it leaves first. This is the same idea on the
// reduced system A, one block per joint (its 1 to 6 rows): two joints are coupled when they share
// a moving body, so a body's joints form a clique, and when the bodies and joints form a forest,
// eliminating each joint after the joints beyond it (away from its component's root body) couples
// only joints that already share a body — a block Cholesky factor with no fill, O(joints) for
// chains and ragdolls. Static bodies have infinite mass and couple nothing: a joint to one is a
// leaf of its moving body. Loops (two paths between the same bodies) and hubs (a body with more
// than 16 joints, whose joints' blocks are all coupled) are refused, and the caller falls back to
// a general sparse factorization.
#pragma once

#include <array>
#include <cstddef>
#include <vector>

#include "kinema/math/mat3.h"
#include "kinema/physics/rigid_body.h"

namespace kinema::detail {

/// One Jacobian row on one body: linear, then angular.
using JacobianRow = std::array<double, 6>;

/// One joint's equality rows as the direct solvers see them.
struct DirectJointRows {
  int body[2] = {-1, -1};  ///< a and b; −1 for a static body (it takes no impulse)
  int offset = 0;          ///< the joint's first row in A
  int rows = 0;            ///< 1 to 6
  std::array<JacobianRow, 6> jacobian[2];  ///< the rows on a and on b
  /// Rows 0–2 are the anchor point's (linear parts −e_r on a and +e_r on b) and any further
  /// rows angular only (no linear part): the factorization then knows the linear products.
  bool point_rows = false;
};

class JointTreeSolver {
 public:
  /// Whether the joints form a forest over the moving bodies (ids below body_count); if so,
  /// chooses the elimination order, which holds until the next analyse.
  bool analyse(const std::vector<DirectJointRows>& joints, std::size_t body_count);

  /// Builds A at the bodies' current inertias, its diagonal scaled by 1 + regularization, and
  /// factors it; false when A is not positive definite. With `active` (one flag per component,
  /// see component_of), only the flagged components' blocks are built and factored; the others
  /// keep their last factor.
  bool factor(const std::vector<DirectJointRows>& joints, const std::vector<RigidBody*>& bodies,
              const std::vector<Mat3>& inverse_inertia, double regularization,
              const std::vector<char>* active = nullptr);

  /// x ← A⁻¹·x, x indexed by the joints' rows; with `active`, only the flagged components' rows
  /// (the others are left as they are).
  void solve(double* x, const std::vector<char>* active = nullptr) const;

  /// The components (trees of joints joined through moving bodies) found by analyse: how many,
  /// and which one joint j belongs to. A's blocks couple no two components.
  int component_count() const { return component_count_; }
  int component_of(int joint) const { return component_of_joint_[std::size_t(joint)]; }

 private:
  using Block = std::array<double, 36>;  // up to 6 × 6, row-major with stride 6

  struct Node {      // one joint, in elimination order
    int joint = 0;   // index into the joints
    int offset = 0;  // its first row in A
    int rows = 0;    // its size
    int body = 0;    // the body its later neighbours share (toward the root)
    int local = 0;   // its index among that body's joints
  };

  // The block of A (then of the factor L) coupling joints local k > l of body q.
  Block& coupling(int q, int k, int l) {
    return couplings_[std::size_t(clique_base_[q] + k * (k - 1) / 2 + l)];
  }
  const Block& coupling(int q, int k, int l) const {
    return couplings_[std::size_t(clique_base_[q] + k * (k - 1) / 2 + l)];
  }

  std::vector<Node> nodes_;       // the joints in elimination order
  std::vector<int> body_start_;   // per body: its first entry in body_nodes_
  std::vector<int> body_nodes_;   // per body, its joints' node indices, ascending
  std::vector<int> clique_base_;  // per body: its first block in couplings_
  std::vector<Block> diagonal_;   // per node: A's diagonal block, then its Cholesky L
  std::vector<Block> couplings_;  // A's blocks between joints sharing a body, then L's
  std::vector<std::array<JacobianRow, 6>> weighted_;  // per node and side: J·M⁻¹
  int component_count_ = 0;
  std::vector<int> component_of_joint_;  // per joint
  std::vector<int> component_of_body_;   // per body; −1 for a body no joint moves
  // Whether node i's component is left out of a factor or solve restricted to `active`.
  bool left_out(int i, const std::vector<char>* active) const {
    return active && !(*active)[std::size_t(component_of_joint_[std::size_t(nodes_[i].joint)])];
  }
  // Scratch for analyse.
  std::vector<int> parent_, order_, parent_joint_, stack_;
};

}  // namespace kinema::detail
