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
// at every step, in doubles. The cycle runs in the CG solver's precision (cloth_cg.cpp), on one
// thread, in a fixed order.
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

/// A spring's block α·nnᵀ + β·I from its four numbers (√α·n, β).
inline ClothSym3 spring_block(const std::array<double, 4>& m) {
  return {m[0] * m[0] + m[3], m[1] * m[1] + m[3], m[2] * m[2] + m[3],
          m[0] * m[1],        m[0] * m[2],        m[1] * m[2]};
}

constexpr std::uint32_t kInside = 0xFFFFFFFFu;  ///< an edge inside one aggregate

/// Pairs the nodes of a weighted graph: each unmatched node, in order, with its unmatched
/// neighbour of largest total weight (the first such on a tie); a node without one stays alone.
/// Returns each node's pair index and the pair count.
std::size_t match_pairs(std::size_t nodes, const std::vector<std::array<std::uint32_t, 2>>& edges,
                        const std::vector<double>& weight, std::vector<std::uint32_t>& pair_of);

/// The graph of `groups` nodes that `group_of` maps a graph onto: an edge per pair of groups
/// joined by any edge, weights summed; `edge_map[e]` is the new edge of edge e (kInside: none).
void coarsen_graph(const std::vector<std::array<std::uint32_t, 2>>& edges,
                   const std::vector<double>& weight, const std::vector<std::uint32_t>& group_of,
                   std::vector<std::array<std::uint32_t, 2>>& coarse_edges,
                   std::vector<double>& coarse_weight, std::vector<std::uint32_t>& edge_map);

/// One coarsening step: two rounds of match_pairs, so each aggregate is up to four nodes joined
/// by their stiffest springs. Sets each node's aggregate; returns the aggregate count.
std::size_t aggregate_in_fours(std::size_t nodes,
                               const std::vector<std::array<std::uint32_t, 2>>& edges,
                               const std::vector<double>& weight,
                               std::vector<std::uint32_t>& group_of);

/// The damping of the multigrid's block-Jacobi smoother: ω < 2/λ_max(D⁻¹A) with λ_max ≤ 2 for a
/// spring network keeps the V-cycle positive definite; 2/3 damps the high frequencies best.
constexpr double kSmootherDamping = 2.0 / 3;

/// A symmetric block system in spring-network form, and its node and edge lists.
struct BlockNetwork {
  std::size_t nodes = 0;
  std::vector<std::array<std::uint32_t, 2>> edges;
  std::vector<ClothSym3> own, edge_block;   ///< per node; per edge
  std::vector<ClothSym3> diagonal_inverse;  ///< (own_i + Σ_{e∋i} S_e)⁻¹, for the smoother
};

/// The levels of an aggregation multigrid over a spring network, in doubles: their aggregates,
/// their blocks summed up from the finest, the smoother's inverted diagonals and the coarsest
/// level's factorization. The V-cycle itself runs in the CG solver's precision (cloth_cg.cpp).
class ClothMultigrid {
 public:
  /// Builds the levels for a fine network of `nodes` nodes and these edges; `weight` per edge
  /// picks the matching (the spring's stiffness). Coarsens down to 64 nodes or until matching
  /// stops shrinking the graph by a fifth.
  ClothMultigrid(std::size_t nodes, std::vector<std::array<std::uint32_t, 2>> edges,
                 const std::vector<double>& weight);

  /// The fine network: fill own and edge_block, then call update().
  BlockNetwork& fine() { return levels_[0]; }
  std::size_t levels() const { return levels_.size(); }
  const BlockNetwork& level(std::size_t l) const { return levels_[l]; }
  /// The node of level l + 1 that each node of level l belongs to.
  const std::vector<std::uint32_t>& aggregate(std::size_t l) const { return aggregate_[l]; }
  /// The edges of level l between two aggregates, in order.
  const std::vector<std::uint32_t>& cross_edges(std::size_t l) const { return cross_edges_[l]; }

  /// Sums the fine blocks up the levels, inverts the smoother's diagonals, factors the coarsest.
  void update();

  /// x = A⁻¹·r on the coarsest level (a dense Cholesky solve).
  void solve_coarsest(const std::vector<Vec3>& r, std::vector<Vec3>& x);

 private:
  std::vector<BlockNetwork> levels_;
  std::vector<std::vector<std::uint32_t>> aggregate_;
  /// coarse_edge_[l][e]: the edge of level l + 1 that edge e of level l adds to (kInside: none).
  std::vector<std::vector<std::uint32_t>> coarse_edge_;
  std::vector<std::vector<std::uint32_t>> cross_edges_;
  Eigen::MatrixXd coarsest_matrix_;
  Eigen::LLT<Eigen::MatrixXd> coarsest_;
  Eigen::VectorXd coarsest_rhs_;
  std::vector<ClothSym3> diagonal_;  ///< update()'s scratch, kept from step to step
};

}  // namespace kinema::detail
