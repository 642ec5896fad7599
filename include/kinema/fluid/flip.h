// kinema/fluid/flip.h — liquids by FLIP/PIC: particles carry the liquid, a staggered (MAC) grid
// makes it incompressible (Zhu & Bridson, "Animating Sand as a Fluid", SIGGRAPH 2005; Bridson,
// "Fluid Simulation for Computer Graphics", 2nd ed., 2015, chs. 2–5 and 7).
//
// The grid has nx × ny × nz cubic cells of side dx (metres) starting at `origin`; cell (i, j, k)
// spans origin + [i, i + 1)·dx × … and has flat index i + nx·(j + ny·k). Velocity lives on the
// faces as in kinema/fluid/grid_fluid.h: u on the x faces ((nx + 1) × ny × nz, index
// i + (nx + 1)·(j + ny·k)), v on the y faces (nx × (ny + 1) × nz), w on the z faces
// (nx × ny × (nz + 1)). nz = 1 is a 2-D simulation in the x–y plane: the same code runs, particles
// keep z at the middle of the slab, w stays zero and the pressure Laplacian has 5 points.
//
// A step of dt seconds is split into substeps h so that (max particle speed + √(|g|·cfl·dx))·h ≤
// cfl·dx — the particles, gravity's gain in the substep included, move at most cfl cells. A
// substep:
//   1. particles → grid: every face takes the average of the velocities of the particles around
//      it, weighted by the trilinear (tent) kernel centred on the face; faces with no particle
//      in reach are unknown. The particles are sorted by cell and scattered slab by slab of cells
//      (planes of constant k; rows in 2-D): a slab reaches only its own and its neighbours' faces,
//      so slabs three apart run in parallel and every face adds its terms in a fixed order;
//   2. cells are marked: solid (centre inside an obstacle), fluid (holds a particle), else air;
//   3. the known velocities are extrapolated a few layers into the unknown faces (each pass sets
//      an unknown face with known neighbours to their mean), walls and solids set their faces'
//      normal velocity to 0, and this grid velocity is kept as u*;
//   4. gravity is added on the faces touching fluid (not walls, not solids);
//   5. projection: the pressure Poisson equation on the fluid cells, air cells held at p = 0
//      (Dirichlet, the simple free surface of Bridson ch. 5 without the ghost-fluid fraction) and
//      solids and walls as Neumann, solved by MIC(0)-preconditioned conjugate gradients; the
//      pressure gradient is subtracted from the faces touching fluid;
//   6. the new velocities are extrapolated as in 3;
//   7. grid → particles: v_p ← r·(v_p + Δv) + (1 − r)·v with v the grid velocity at the particle,
//      Δv = v − u* there, r = flip_ratio (0: PIC, stable but viscous; 1: FLIP, lively but noisy);
//   8. advection: the particles move through the grid velocity by the midpoint rule (RK2), then
//      are pushed out of obstacles (along the distance gradient) and kept inside the domain (its
//      border is a solid wall), losing the velocity component that points into the solid.
// No particles are created or removed after add_block(); there is no reseeding.
//
// Units: metres, seconds; velocities m/s; gravity m/s². Pressure is solved in the scaled form
// ψ = p·h / (ρ·dx), so density does not appear. Everything runs in double precision, in parallel
// over grid rows and particle blocks (oneTBB); every parallel loop writes disjoint outputs and sums
// are added per fixed block, so a run is bit-identical whatever the thread count. The particle
// sort's counting pass and the MIC(0) triangular solves run on one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "kinema/math/vec3.h"

namespace kinema {

enum class FlipSolidShape { Box, Sphere };

/// A static obstacle by its signed distance: an axis-aligned box or a sphere. In 2-D (nz = 1)
/// what counts is its cut by the particles' plane (z at the middle of the slab).
struct FlipSolid {
  FlipSolidShape shape = FlipSolidShape::Box;
  Vec3 center{0, 0, 0};        ///< m
  Vec3 half_extents{0, 0, 0};  ///< Box, m
  double radius = 0;           ///< Sphere, m

  static FlipSolid box(const Vec3& center, const Vec3& half_extents);
  static FlipSolid sphere(const Vec3& center, double radius);
  /// Signed distance of p to the surface (negative inside), m.
  double distance(const Vec3& p) const;
};

struct FlipOptions {
  int nx = 32, ny = 32, nz = 32;  ///< cells per side, 1…1024; nz = 1: 2-D
  double dx = 0.1;                ///< cell size, m (> 0)
  Vec3 origin{0, 0, 0};           ///< the domain's minimum corner, m
  Vec3 gravity{0, -9.81, 0};      ///< m/s², finite
  double flip_ratio = 0.95;       ///< in [0, 1]: 0 pure PIC, 1 pure FLIP
  int particles_per_axis = 2;     ///< per cell and axis when filling, 1…4 (2: 4 in 2-D, 8 in 3-D)
  double jitter = 0.5;            ///< in [0, 1]: random shift of a particle, × sub-cell size
  std::uint64_t seed = 1;         ///< of the jitter
  double cfl = 1;                 ///< cells a particle may move in a substep (> 0)
  int max_substeps = 64;          ///< ≥ 1; the last takes what is left of dt
  /// CG stops when max |residual| ≤ tolerance · max |right-hand side| (> 0), or after
  /// pressure_max_iterations (≥ 1).
  double pressure_tolerance = 1e-6;
  int pressure_max_iterations = 500;
  std::vector<FlipSolid> solids;  ///< static obstacles
  int threads = 0;                ///< 0: all cores; the result does not depend on it
};

class FlipLiquid {
 public:
  /// Throws kinema::Error("flip", field, reason) for a resolution outside 1…1024, a non-finite or
  /// non-positive dx, tolerance or cfl, a flip_ratio outside [0, 1], non-finite numbers, counts
  /// below 1, or a solid with a negative size.
  explicit FlipLiquid(FlipOptions options);

  /// Fills the box [lo, hi) with particles moving at `velocity` (m/s): particles_per_axis per
  /// cell and axis on a regular sub-grid, each shifted by up to ±jitter/2 of a sub-cell (a hash of
  /// seed, cell and sub-cell, so the same call gives the same particles), those inside solids
  /// left out. In 2-D lo.z and hi.z are ignored. Returns how many were added. Throws
  /// kinema::Error for non-finite numbers, an empty box, one that is not inside the domain, or
  /// 2³² particles or more in all.
  size_t add_block(const Vec3& lo, const Vec3& hi, const Vec3& velocity);

  /// Advances dt seconds (> 0 and finite, else kinema::Error), in last_substeps() substeps.
  void step(double dt);

  int nx() const { return o_.nx; }
  int ny() const { return o_.ny; }
  int nz() const { return o_.nz; }
  double dx() const { return o_.dx; }
  const FlipOptions& options() const { return o_; }

  /// Particles, structure-of-arrays (entry i of each is particle i; the order never changes).
  size_t count() const { return px_.size(); }
  std::span<const double> px() const { return px_; }
  std::span<const double> py() const { return py_; }
  std::span<const double> pz() const { return pz_; }
  std::span<const double> vx() const { return vx_; }
  std::span<const double> vy() const { return vy_; }
  std::span<const double> vz() const { return vz_; }

  /// Face velocities of the last substep after projection and extrapolation, m/s (layouts of the
  /// header comment).
  std::span<const double> u() const { return u_; }
  std::span<const double> v() const { return v_; }
  std::span<const double> w() const { return w_; }

  /// Cells that hold at least one particle now (not solid cells): the liquid's volume in cells.
  size_t occupied_cells() const;
  /// max |v_p| over the particles, m/s.
  double max_speed() const;

  /// max |∇·u| over the fluid cells after the last projection, 1/s.
  double max_divergence() const { return max_divergence_; }
  /// CG iterations and final relative residual (max |r| / max |b|) of the last projection.
  int last_pressure_iterations() const { return pressure_iterations_; }
  double last_pressure_residual() const { return pressure_residual_; }
  /// Substeps the last step() took.
  int last_substeps() const { return substeps_; }
  double time() const { return time_; }

 private:
  void substep(double h);
  void sort_particles();
  void particles_to_grid();
  void mark_cells();
  void extrapolate();
  void enforce_solid_faces();
  void add_gravity(double h);
  void project();
  /// Grid → particles (step 7) and advection (step 8), in one pass over the particles.
  void update_particles(double h);
  /// Moves p out of the solids and into the domain; zeroes the velocity's component into them.
  void push_out(Vec3& p, Vec3& vel) const;
  Vec3 grid_velocity(const Vec3& cell_coords) const;

  FlipOptions o_;
  bool three_d_ = true;
  size_t ncell_ = 0;
  std::vector<double> px_, py_, pz_, vx_, vy_, vz_;
  // Particles sorted by cell: cell c owns slots [cell_start_[c], cell_start_[c + 1]); the sorted
  // copies hold cell coordinates ((p − origin)/dx) and velocities.
  std::vector<std::uint32_t> cell_start_, particle_cell_;
  std::vector<double> sx_, sy_, sz_, svx_, svy_, svz_;
  // Faces: velocity, the velocity u* kept for the FLIP update (then Δv), known flags.
  std::vector<double> u_, v_, w_, u_star_, v_star_, w_star_;
  std::vector<std::uint8_t> u_known_, v_known_, w_known_, known_tmp_;
  std::vector<std::uint8_t> cell_;   ///< 0 air, 1 fluid, 2 solid
  std::vector<std::uint8_t> solid_;  ///< 1 for cells whose centre lies inside a solid
  // Pressure: ψ (kept as the next solve's first guess), right-hand side, CG vectors, the matrix
  // and its MIC(0) factor (grid_fluid_internal.h).
  std::vector<double> psi_, rhs_, cg_r_, cg_z_, cg_s_, cg_q_;
  std::vector<float> adiag_, ax_, ay_, az_, precon_, pbx_, pby_, pbz_;
  double max_divergence_ = 0, pressure_residual_ = 0;
  int pressure_iterations_ = 0, substeps_ = 0;
  double time_ = 0;
};

}  // namespace kinema
