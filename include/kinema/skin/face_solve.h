// kinema/skin/face_solve.h — blendshape weights from tracked face points: bounded, optionally
// sparse, least squares (see Lewis et al., "Practice and Theory of Blendshape Facial Models").
//
// Tracked points' displacements from the neutral face are stacked into d (m values: x, y, z of
// each point, or any m measurements); column k of the basis B holds shape k's displacement at
// the same points. The solver finds
//
//     w* = argmin  ½‖B·w − d‖² + ½·ε‖w‖² + λ·Σₖ wₖ     subject to 0 ≤ wₖ ≤ 1,
//
// λ ≥ 0 is the sparsity penalty (an L1 norm, which is Σ w because w ≥ 0) and ε a tiny ridge,
// ε = ridge · max diag(BᵀB) (default ridge 1e-9), that makes the problem strictly convex when two
// shapes are (nearly) dependent — a face rig's "blink" is often blinkL + blinkR — without moving
// the solution measurably otherwise. Without the bounds, the ridge and λ this is the normal
// equations BᵀB·w = Bᵀd (w = (0.702, 0.598) for the smile/jaw example of
// docs/worked_examples.md).
//
// Method: a primal active-set method on the box-constrained quadratic program with H = BᵀB + εI
// (formed once at setup, in double precision) and g = Bᵀd − λ. Each variable is free, at 0 or at
// 1; the free ones solve H_FF·w_F = g_F − H_FB·w_B by Cholesky; a step that would leave the box
// stops at the first bound it meets and pins that variable; at a feasible minimizer of the free
// set the bound variable whose gradient most violates the KKT conditions is freed. It ends when
// the KKT conditions hold: with r = H·w − g, rₖ ≥ −τ where wₖ = 0, rₖ ≤ τ where wₖ = 1 and
// |rₖ| ≤ τ where 0 < wₖ < 1, τ = tolerance · max(1, max diag H, ‖g‖∞) (default tolerance 1e-10).
// The active set changes finitely often, so this is the exact solution up to rounding (not an
// iterative approximation); the iteration cap (default 4·n + 20 active-set changes) is a guard.
//
// The solver is set up once per basis (allocates, validates, throws kinema::Error) and then
// solves frame after frame without allocating or throwing. It warm-starts from the previous
// frame's active set by default (consecutive capture frames are close).
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

namespace kinema {

struct BlendshapeSolveOptions {
  double sparsity = 0.0;     ///< λ ≥ 0, in the units of ½‖Bw − d‖² per unit weight
  double ridge = 1e-9;       ///< ε relative to the largest diagonal of BᵀB, ≥ 0
  double tolerance = 1e-10;  ///< KKT tolerance, relative (see τ above)
  int max_iterations = 0;    ///< active-set changes per solve; 0: 4·n + 20
  bool warm_start = true;    ///< start each frame from the previous frame's active set
};

/// What one solve did.
struct BlendshapeSolveReport {
  int iterations = 0;      ///< active-set changes (0: the starting set was already optimal)
  bool converged = false;  ///< the KKT conditions hold within τ
  double residual = 0;     ///< ‖B·w − d‖ (Euclidean, in d's units)
  int at_lower = 0;        ///< weights at 0
  int at_upper = 0;        ///< weights at 1
};

class BlendshapeSolver {
 public:
  /// `basis` is column-major: rows × cols values, column k = shape k's displacements (rows =
  /// measurements, cols = shapes). Throws kinema::Error when the sizes do not agree, rows or cols
  /// is 0, a value is not finite, a column is all zeros (that shape moves none of the points) or
  /// an option is out of range (negative sparsity/ridge, tolerance ≤ 0, max_iterations < 0).
  BlendshapeSolver(std::span<const float> basis, size_t rows, size_t cols,
                   const BlendshapeSolveOptions& options = {});
  ~BlendshapeSolver();
  BlendshapeSolver(BlendshapeSolver&&) noexcept;
  BlendshapeSolver& operator=(BlendshapeSolver&&) noexcept;
  BlendshapeSolver(const BlendshapeSolver&) = delete;
  BlendshapeSolver& operator=(const BlendshapeSolver&) = delete;

  size_t rows() const;
  size_t cols() const;
  /// BᵀB (without the ridge), cols × cols, row-major.
  std::span<const double> gram() const;
  /// Runtime: Bᵀd into `out` (cols values). False on a size mismatch.
  bool project(std::span<const float> d, std::span<double> out) const;

  /// Runtime: solves for `w` (cols values in [0, 1]) given `d` (rows values). Returns false,
  /// writing nothing, when a size does not match or d holds a NaN/infinity. Never allocates or
  /// throws. Not thread-safe on one solver (it keeps scratch space and the warm-start state).
  bool solve(std::span<const float> d, std::span<float> w, BlendshapeSolveReport* report = nullptr);

  /// Forgets the warm-start state (the next solve starts with every weight at 0).
  void reset();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Offline convenience: one solve. Throws kinema::Error on bad input (everything the constructor
/// rejects, plus d of the wrong size or not finite).
std::vector<float> solve_blendshape_weights(std::span<const float> basis, size_t rows, size_t cols,
                                            std::span<const float> d,
                                            const BlendshapeSolveOptions& options = {},
                                            BlendshapeSolveReport* report = nullptr);

}  // namespace kinema
