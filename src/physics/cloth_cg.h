// Internal: the implicit cloth step's linear system A·Δv = b solved by conjugate gradients in
// short vectors, preconditioned with block Jacobi (ClothPreconditioner::BlockJacobi) or one
// V-cycle of aggregation multigrid (ClothPreconditioner::Multigrid). The V-cycle's finest level
// runs here, on the four-number spring blocks below; its coarser levels, from the first
// aggregates of up to four vertices down, are a ClothMultigrid (cloth_multigrid.h) whose blocks
// are summed in doubles and cycled here in the solver's precision, down to a direct solve.
//
// Every spring's block has the form S = α·nnᵀ + β·I (n its direction, α = h·c + h²·k·(1 − t),
// β = h²·k·t, t = max(0, 1 − L0/l)), so it is kept as four numbers m = (√α·n, β) and applied as
// S·d = m·(m·d) + β·d: 16 bytes and 7 multiply-adds where a full symmetric block takes 48 bytes
// and 9. The system is
//   (A·x)_i = own_i·x_i + Σ_{e ∋ i} S_e·(x_i − x_other(e)),
// own_i being the vertex's mass (with drag) plus its springs to kinematic vertices. The edges
// are ordered by a greedy colouring inside windows of 64 vertices: within a colour no two edges
// share a vertex, so the multiplication's scattered adds do not wait on each other, and the
// window keeps what they touch in the first-level cache.
//
// Precision: single (4 floats a vector) when the requested relative residual is at least 10⁻³
// — a game's budget of iterations rarely gets below that, float rounding stays far under it, and
// the positions and velocities the result is added to stay double — else double. Sums run in a
// fixed order on one thread: the same bits whatever the cloth's thread count.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "kinema/physics/cloth.h"

namespace kinema::detail {

/// Whether a solve to this relative residual runs in single precision.
bool cloth_cg_single(double tolerance);

class ClothCgSolver {
 public:
  struct Edge {
    std::uint32_t a = 0, b = 0;  ///< free-vertex indices
    std::uint32_t spring = 0;    ///< the spring whose block joins them
  };

  /// `free_count` unknowns, `springs` blocks (indexed by spring), the springs between two free
  /// vertices as `edges` (reordered here), `single` for float arithmetic. `multigrid_weight` (per
  /// spring, its stiffness), if given: preconditioned by a multigrid V-cycle instead of block
  /// Jacobi, its aggregates matched along the heaviest springs.
  ClothCgSolver(std::size_t free_count, std::size_t springs, std::vector<Edge> edges, bool single,
                const std::vector<double>* multigrid_weight = nullptr);
  ~ClothCgSolver();
  ClothCgSolver(const ClothCgSolver& other);
  ClothCgSolver& operator=(const ClothCgSolver&) = delete;

  /// Every spring's block this step, S = α·nnᵀ + β·I given as (√α·n, β) (α, β ≥ 0, n a unit
  /// vector), indexed by spring. Before set_vertices, which completes the coarse levels.
  void set_springs(const std::vector<std::array<double, 4>>& blocks);
  /// Each free vertex's own block (mass, drag, springs to kinematic vertices) and the diagonal
  /// block of A (own plus every spring at it), which Jacobi inverts.
  void set_vertices(const std::vector<ClothSym3>& own, const std::vector<ClothSym3>& diagonal);

  /// Solves from Δv = 0 until |r| ≤ tolerance·|b| or max_iterations; returns the iterations and
  /// sets the final relative residual. The solution is dv(i).
  int solve(const std::vector<Vec3>& b, int max_iterations, double tolerance, double& residual);
  Vec3 dv(std::size_t i) const;

 private:
  struct Impl;
  struct Coarsening;
  template <class T>
  struct Typed;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kinema::detail
