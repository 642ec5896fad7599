// Internal: SphFluid's state, shared by sph.cpp (set-up, accessors) and sph_step.cpp (the
// substeps).
#pragma once

#include <tbb/task_arena.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "kinema/fluid/sph.h"
#include "sph_neighbours.h"

namespace kinema {

namespace sph_detail {

/// The kernels with their constants worked out once for one h and dimension (see sph.h).
struct Kernels {
  int dim = 3;
  double h = 1, h2 = 1;
  double poly6 = 0;       ///< W = poly6·(h² − r²)³
  double spiky_grad = 0;  ///< ∇W = spiky_grad·(h − r)²/r · x   (negative)
  double visc_lap = 0;    ///< ∇²W = visc_lap·(h − r)
  explicit Kernels(double radius = 1, int dimensions = 3);
  double w(double r2) const {
    if (r2 >= h2) return 0;
    const double d = h2 - r2;
    return poly6 * d * d * d;
  }
  /// dW_spiky/dr divided by r (multiply by the offset to get the gradient); 0 at r = 0.
  double grad_over_r(double r) const {
    if (r >= h || r <= 0) return 0;
    return spiky_grad * (h - r) * (h - r) / r;
  }
  /// ∇W_poly6 = poly6_grad_coef(r²)·x.
  double poly6_grad(double r2) const {
    if (r2 >= h2) return 0;
    const double d = h2 - r2;
    return -6 * poly6 * d * d;
  }
  /// ∇²W_poly6 = −6K(h² − r²)(d(h² − r²) − 4r²)  (f'' + (d − 1)f'/r).
  double poly6_lap(double r2) const {
    if (r2 >= h2) return 0;
    const double d = h2 - r2;
    return -6 * poly6 * d * (dim * d - 4 * r2);
  }
};

}  // namespace sph_detail

struct SphFluid::Impl {
  SphOptions o;
  sph_detail::Kernels k;
  double mass = 0, c = 0, tait_b = 0;
  double pbf_s0 = 1;   ///< Σ_k |∇_k C|² of a lattice particle
  double scorr_w = 1;  ///< W(Δq)

  // Fluid particles, in cell-sorted order.
  std::vector<double> px, py, pz, vx, vy, vz, rho, p;
  std::vector<std::uint32_t> id;
  // Scratch per particle: accelerations or predicted positions, corrections, vorticity.
  std::vector<double> ax, ay, az, sx, sy, sz, lambda, wx, wy, wz, tmp;
  std::vector<std::uint32_t> order, key;
  sph_detail::SphGrid grid;
  sph_detail::SphNeighbours nb;  ///< fluid–fluid

  // Boundary particles (sorted once) and their Ψ = ρ0·V_b.
  std::vector<double> bx, by, bz, bpsi;
  sph_detail::SphGrid bgrid;
  sph_detail::SphNeighbours nbb;  ///< fluid–boundary

  std::vector<Collider> colliders;
  std::unique_ptr<tbb::task_arena> arena;
  double time = 0;
  int last_substeps = 0;
  long total_substeps = 0;

  int threads() const { return o.threads; }
  tbb::task_arena* arena_ptr() { return arena.get(); }

  // sph_step.cpp
  double substep_wcsph(double remaining);
  double substep_pbf(double remaining);
  void sort_particles(bool predicted);
  void find_all(const double* qx, const double* qy, const double* qz);
  void density_pass(const double* qx, const double* qy, const double* qz);
  void collide(std::size_t i, double* x, double* y, double* z, double* u, double* v,
               double* w) const;
  void xsph_pass();
};

}  // namespace kinema
