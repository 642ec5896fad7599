// Internal: the implicit cloth solver's linear system and its multigrid preconditioner.
//
// The system of one implicit step, A·Δv = b, has the shape of a spring network: each free vertex
// i has its own block (mass, drag, springs to pinned vertices) and each spring e between free
// vertices a and b a symmetric 3 × 3 block S_e, so that
//   (A·x)_i = own_i·x_i + Σ_{e ∋ i} S_e·(x_i − x_other(e)).
// Its stiff in-plane part behaves like a grid Laplacian (condition number ~10⁶ at 10⁵ N/m), which
// block Jacobi alone leaves at 100+ conjugate-gradient iterations. The preconditioner here is one
// V-cycle of aggregation multigrid (Notay's double pairwise matching, unsmoothed, Galerkin coarse
// operators): vertices are matched in pairs along their stiffest springs twice per level, so each
// coarse node is up to four fine ones, and the coarse operator of a spring network with
// piecewise-constant interpolation is again a spring network — the springs inside an aggregate
// drop out and those across aggregates add up. Block Jacobi smooths on every level; the coarsest
// (≤ kCoarsest nodes) is solved exactly by a dense Cholesky factorization.
//
// The aggregates depend only on the mesh and are built once; the blocks are summed up the levels
// at every step. It runs on one thread, in a fixed order.
#pragma once

#include <Eigen/Dense>

#include <array>
#include <cstdint>
#include <vector>

#include "kinema/physics/cloth.h"

namespace kinema::detail {

/// The inverse of a symmetric positive definite block (cofactors over the determinant).
ClothSym3 inverse(const ClothSym3& a);

/// to += a.
inline void add(ClothSym3& to, const ClothSym3& a) {
  to.xx += a.xx, to.yy += a.yy, to.zz += a.zz, to.xy += a.xy, to.xz += a.xz, to.yz += a.yz;
}

/// A symmetric block system in spring-network form, and its node and edge lists.
struct BlockNetwork {
  std::size_t nodes = 0;
  std::vector<std::array<std::uint32_t, 2>> edges;
  std::vector<ClothSym3> own, edge_block;   ///< per node; per edge
  std::vector<ClothSym3> diagonal_inverse;  ///< (own_i + Σ_{e∋i} S_e)⁻¹, for the smoother
};

class ClothMultigrid {
 public:
  /// Builds the levels for a fine network of `nodes` free vertices and these edges; `weight` per
  /// edge picks the matching (the spring's stiffness). `coarsen` false: one level, and
  /// precondition() is block Jacobi.
  ClothMultigrid(std::size_t nodes, std::vector<std::array<std::uint32_t, 2>> edges,
                 const std::vector<double>& weight, bool coarsen);

  /// The fine network: fill own and edge_block, then call update().
  BlockNetwork& fine() { return levels_[0]; }
  const BlockNetwork& fine() const { return levels_[0]; }
  std::size_t levels() const { return levels_.size(); }

  /// Sums the fine blocks up the levels, inverts the smoother's diagonals, factors the coarsest.
  void update();

  /// y = A·x on level `level`.
  void multiply(std::size_t level, const std::vector<Vec3>& x, std::vector<Vec3>& y) const;

  /// z ≈ A⁻¹·r by one V-cycle, or block Jacobi without coarsening (either symmetric and positive
  /// definite: a valid CG preconditioner).
  void precondition(const std::vector<Vec3>& r, std::vector<Vec3>& z);

 private:
  void cycle(std::size_t level, const std::vector<Vec3>& r, std::vector<Vec3>& x);

  bool coarsen_ = true;
  std::vector<BlockNetwork> levels_;
  /// aggregate_[l][i]: the node of level l + 1 that node i of level l belongs to.
  std::vector<std::vector<std::uint32_t>> aggregate_;
  /// coarse_edge_[l][e]: the edge of level l + 1 that edge e of level l adds to (kInside: none).
  std::vector<std::vector<std::uint32_t>> coarse_edge_;
  Eigen::MatrixXd coarsest_matrix_;
  Eigen::LLT<Eigen::MatrixXd> coarsest_;
  Eigen::VectorXd coarsest_rhs_;
  std::vector<ClothSym3> diagonal_;  ///< update()'s scratch, kept from step to step
  // Per-level scratch: right sides, solutions and residuals.
  std::vector<std::vector<Vec3>> rhs_, solution_, residual_;
};

}  // namespace kinema::detail
