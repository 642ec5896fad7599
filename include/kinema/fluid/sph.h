// kinema/fluid/sph.h — a smoothed-particle-hydrodynamics liquid: water in a tank, a dam that
// breaks, a splash around a character's capsules.
//
// Method (Müller, Charypar & Gross 2003, "Particle-Based Fluid Simulation for Interactive
// Applications", SCA 2003). Each particle carries mass m, position x, velocity v. Fields are
// sums over the neighbours within the smoothing radius h:
//   density   ρ_i = Σ_j m W_poly6(x_i − x_j)                    (summation, self included)
//   pressure  p_i = B·((ρ_i/ρ0)^γ − 1), clamped at 0           (Tait; B = ρ0 c²/γ, γ = 7)
//   pressure  a_i = −Σ_j m (p_i/ρ_i² + p_j/ρ_j²) ∇W_spiky      (Monaghan's symmetric form: it
//                                                               conserves momentum; Müller's
//                                                               (p_i + p_j)/2ρ_j only where
//                                                               ρ_i = ρ_j)
//   viscosity a_i = (μ/ρ_i) Σ_j m (v_j − v_i)/ρ_j ∇²W_visc     (Müller's Laplacian)
//   damping   a_i = −Σ_j m Π_ij ∇W_spiky, Π_ij = −α c h (v_ij·x_ij)/(ρ̄_ij (r² + 0.01h²)) for
//             approaching pairs (Monaghan 1992, "Smoothed particle hydrodynamics", Annu. Rev.
//             Astron. Astrophys. 30) — Müller's μ alone does not damp the sound waves of a
//             weakly compressible liquid at a useful μ; without it a resting tank rings and
//             then blows up
//   surface   a_i = −(σ/ρ_i) ∇²c n/|n|, c = Σ_j (m/ρ_j) W_poly6 (Müller's colour field; off;
//             applied where |n| > 0.2/h)
// The Tait equation of state keeps the liquid weakly compressible: with the artificial sound
// speed c = 10·sqrt(2|g|H) (H the expected fluid height, by default the domain's height; the
// fastest flow of a column of height H falling is about sqrt(2|g|H)) the Mach number stays
// ≤ 0.1 and the density within about 1 % of ρ0. Negative pressures are clamped to 0 so that the
// free surface does not clump (the tensile instability).
// Two discrete normalizations, both constant factors worked out once on the rest lattice of
// spacing Δx (so symmetry and momentum conservation are kept): the particle mass is
// m = ρ0 / Σ_lattice W_poly6 (≈ ρ0·Δx^d, within 1.5 %), so a block added at the spacing starts
// exactly at ρ0; and the spiky gradient used in the forces is divided by the lattice's SPH
// gradient of a unit linear field (0.89 in 2D, 0.96 in 3D at h = 2Δx, where the kernel is
// sampled coarsely), so a resting lattice feels the pressure gradient it has and hydrostatic
// pressure comes out as ρ0·g·depth.
//
// Solvers. WeaklyCompressible: the forces above, then symplectic Euler (v += Δt·a, x += Δt·v).
// PositionBased (Macklin & Müller 2013, "Position Based Fluids", SIGGRAPH 2013): gravity
// predicts x*, then `pbf_iterations` Jacobi passes move x* to satisfy C_i = ρ_i/ρ0 − 1 ≤ 0
// (λ_i = −C_i / (Σ_k |∇_k C_i|² + ε), Δx_i = (m/ρ0) Σ_j (λ_i + λ_j + s_corr) ∇W_spiky), then
// v = (x* − x)/Δt; XSPH and vorticity confinement optional. The constraint is one-sided (only
// compression is corrected), which with s_corr keeps the surface from clumping. As a guard no
// correction moves a particle more than Δx/2 an iteration (particles squeezed onto one point
// have no gradient between them). Jacobi iterations converge slowly through a deep column: a
// 30-particle-deep 2D tank settles about 5 % dense with 4 iterations, 2 % with 10 (the default).
//
// Time step. step(h) splits h into equal substeps: WeaklyCompressible Δt ≤ cfl·h_kernel/(c +
// v_max) (the CFL condition for sound waves) and Δt ≤ 0.25·sqrt(h_kernel/a_max) (Monaghan's force
// condition); PositionBased |g|Δt² ≤ 0.1·cfl·h_kernel (gravity moves a particle a small fraction
// of h a substep) and v_max·Δt ≤ h_kernel (no tunnelling). PBF gets no velocity Courant rule on
// purpose: it turns the constraint error left after its iterations into velocity ∝ 1/Δt, so a
// rule that shrinks Δt as v grows feeds its own jitter. last_substeps() says how many it took.
//
// Neighbours. A uniform grid of cells of size h over the domain: every substep the particles
// are counting-sorted by cell (a stable sort, so the order is deterministic) and stored in that
// order, so a particle's neighbours lie in at most 3×3(×3) runs of consecutive memory. The
// particle arrays are therefore permuted every substep; ids() gives each particle's number in
// the order it was added.
//
// Boundaries. (a) Boundary particles (Akinci, Ihmsen, Akinci, Solenthaler & Teschner 2012,
// "Versatile Rigid-Fluid Coupling for Incompressible SPH", SIGGRAPH 2012): a static particle b
// counts in a fluid particle's density as Ψ_b W with Ψ_b = ρ0·V_b, V_b = 1/Σ_k W_poly6(x_b − x_k)
// over the boundary particles k, so a wall sampled unevenly still weighs as one layer of fluid;
// V_b is capped at the fluid particles' volume m/ρ0, because the inner layer of a thick wall has
// a half-empty boundary neighbourhood (the fluid side) and would otherwise weigh ~1.4× the fluid
// it stands in for, a 5–15 % density excess at the wall. A boundary particle pushes with the
// pressure mirrored onto it (p_b = p_i, ρ_b = ρ_i). Walls are free-slip.
// sph_box_boundary() samples a tank (2 layers cover h = 2Δx). (b) Colliders: kinema's physics
// colliders (kinema/physics/collider.h: planes, spheres, oriented boxes, capsules — a character's
// limbs) as solids, applied after each substep: a particle inside is put back on the surface, its
// normal velocity v_n becomes −restitution·v_n and its tangential velocity loses
// friction·|Δv_n| (it stops, never reverses). The domain itself is a last container: particles
// never leave it.
//
// Kernels (r = |x|, zero for r ≥ h; 3D normalizations from Müller 2003, 2D ones derived so that
// each integrates to 1 over the plane — see sph.cpp):
//   poly6      3D 315/(64π h⁹) (h² − r²)³        2D 4/(π h⁸) (h² − r²)³
//   spiky      3D 15/(π h⁶) (h − r)³             2D 10/(π h⁵) (h − r)³
//   viscosity  3D 15/(2π h³) (−r³/2h³ + r²/h² + h/2r − 1), ∇²W = 45/(π h⁶) (h − r)
//              2D 10/(3π h²) (same bracket),           ∇²W = 40/(π h⁵) (h − r)
// Dimensions: 3, or 2 (particles in the x–y plane, z = 0, kernels normalized in 2D, mass per
// unit depth), which is what the fast validation tests use.
//
// Units: metres, seconds, kilograms; densities kg/m³ (kg/m² in 2D), pressures Pa (N/m in 2D).
// Parallel over blocks of particles (oneTBB); every particle's sums are accumulated by one thread
// in the sorted neighbour order, so a run is bit-identical whatever the thread count.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "kinema/math/vec3.h"
#include "kinema/physics/collider.h"

namespace kinema {

enum class SphSolver { WeaklyCompressible, PositionBased };

struct SphOptions {
  int dimensions = 3;            ///< 2 (x–y plane) or 3
  double spacing = 0.02;         ///< particle spacing Δx, m; add_block() fills at it
  double smoothing_ratio = 2.0;  ///< h = smoothing_ratio·spacing (default h = 2Δx)
  double rest_density = 1000;    ///< ρ0, kg/m³; particle mass m ≈ ρ0·Δx^d (particle_mass())
  double sound_speed = 0;        ///< c, m/s; 0: 10·sqrt(2|g|H), H = fluid_height
  double fluid_height = 0;       ///< H, m, for the automatic c; 0: the domain's height (y)
  double tait_gamma = 7;         ///< γ of the Tait equation of state
  double viscosity = 0.05;       ///< μ, Pa·s (Müller's viscosity Laplacian; physical)
  /// WeaklyCompressible: Monaghan's artificial viscosity α (approaching pairs only, scaled by
  /// c·h), which damps the sound waves of a weakly compressible liquid; 0: off.
  double artificial_viscosity = 0.05;
  double xsph = 0.0;           ///< XSPH velocity smoothing ε in [0, 1]: v += ε Σ (m/ρ_j) v_ji W
  double surface_tension = 0;  ///< σ, N/m (Müller's colour field); 0: off
  Vec3 gravity{0, -9.81, 0};   ///< m/s²
  Vec3 domain_min{-1, -1, -1};  ///< the neighbour grid's extent and the last container, m
  Vec3 domain_max{1, 1, 1};
  SphSolver solver = SphSolver::WeaklyCompressible;
  int pbf_iterations = 10;       ///< PositionBased: Jacobi passes a substep
  double pbf_relaxation = 1e-2;  ///< PositionBased: ε = pbf_relaxation·S₀, S₀ = Σ_k|∇_k C|² of
                                 ///< a particle in a full lattice (so it is scale-free)
  double pbf_scorr_k = 1e-3;  ///< PositionBased: s_corr = −k·(W(r)/W(Δq))^n / S₀; 0: off
  double pbf_scorr_n = 4;
  double pbf_scorr_dq = 0.2;  ///< Δq as a fraction of h
  double vorticity = 0;  ///< PositionBased: vorticity confinement ε, m/s (a = ε N×ω); 0 off
  double cfl = 0.4;      ///< Courant number of the substep rule (0, 1]
  int threads = 0;       ///< 0: all cores; the result does not depend on it
};

/// Boundary particles lining the inside walls of the axis-aligned tank [lo, hi]: `layers` layers
/// (≥ 1; 2–3 cover a kernel of h = 2Δx) at `spacing` just outside each wall, so that the walls'
/// fluid faces are the box's faces; the floor and the side walls (and in 3D the front and back),
/// with a lid too unless `open_top`. `dimensions` 2 samples the x–y rectangle (z = 0). Throws
/// kinema::Error for a non-positive or non-finite spacing, hi ≤ lo, layers < 1 or bad dimensions.
std::vector<Vec3> sph_box_boundary(const Vec3& lo, const Vec3& hi, double spacing, int layers,
                                   int dimensions, bool open_top = true);

class MeshSdf;  // kinema/fluid/mesh_sdf.h

/// Boundary particles for a solid given as a closed mesh (an obstacle, a tank of any shape's
/// walls), moved by `offset` metres: the points of a lattice of `spacing` over the mesh's bounding
/// box (cell centres from its min corner) that lie inside the mesh no deeper than `layers` ×
/// `spacing` (−layers·spacing < distance ≤ 0), or with `layers` 0 all of its inside, so that the
/// fluid's face is the mesh's surface. Fill an obstacle whole (0) unless it is large: through a
/// hollow shell of 2 layers a falling particle can squeeze into the hollow (a 2-D drop of 0.1 m at
/// Δx = 1 cm did, tests/fluid/mesh_sdf_test.cpp; 3 layers held). The Akinci volumes Ψ_b (see the
/// header comment) make the lattice's uneven cut along a slanted surface weigh as one layer of
/// fluid. Parts thinner than `spacing` may get no particle: make them thicker or the spacing finer.
/// `dimensions` 2 samples the plane z = 0 (all points have z = 0). Throws kinema::Error("sph",
/// "sph_mesh_boundary", …) for a non-positive or non-finite spacing, layers < 0, a non-finite
/// offset, bad dimensions, or a lattice of more than 64 million points.
std::vector<Vec3> sph_mesh_boundary(const MeshSdf& mesh, const Vec3& offset, double spacing,
                                    int layers, int dimensions);

/// The kernels (see the header comment), for radius h and `dimensions` 2 or 3; zero for r ≥ h.
double sph_poly6(double r, double h, int dimensions);
double sph_spiky(double r, double h, int dimensions);
double sph_viscosity(double r, double h, int dimensions);
/// ∇W_spiky at offset x (= x_i − x_j; |x| = r): dW/dr·x/r, pointing from x towards 0 (W falls
/// with r), so −∇W, the pressure force's direction on particle i, points away from j. Zero at
/// r = 0 and r ≥ h.
Vec3 sph_spiky_gradient(const Vec3& x, double h, int dimensions);
/// ∇²W_visc at r (Müller's (h − r) form, normalized as in the header comment).
double sph_viscosity_laplacian(double r, double h, int dimensions);

class SphFluid {
 public:
  /// Throws kinema::Error("sph", "options.<name>", reason) for non-finite or out-of-range
  /// options: dimensions other than 2 or 3, spacing, smoothing_ratio, rest_density ≤ 0,
  /// negative sound speed, height, viscosity, surface tension, tait_gamma < 1, xsph outside
  /// [0, 1], an empty domain, a domain of more than 2³¹ grid cells, pbf_iterations < 1, cfl
  /// outside (0, 1], negative threads.
  explicit SphFluid(SphOptions options);
  ~SphFluid();
  SphFluid(SphFluid&&) noexcept;
  SphFluid& operator=(SphFluid&&) noexcept;

  /// Fills the box [lo, hi] with particles on a lattice of `spacing` (the first at lo + Δx/2 on
  /// each axis), all with `velocity`. Returns how many were added. Throws kinema::Error
  /// ("sph", "add_block", …) for non-finite corners or a box outside the domain.
  size_t add_block(const Vec3& lo, const Vec3& hi, const Vec3& velocity = {0, 0, 0});

  /// Adds particles at `positions` with `velocities` (empty: at rest; else the same length).
  /// Throws kinema::Error("sph", "add_particles[i]", …) for a non-finite position or velocity or
  /// a position outside the domain; nothing is added then. In 2D z is set to 0.
  void add_particles(std::span<const Vec3> positions, std::span<const Vec3> velocities = {});

  /// Replaces the static boundary particles (sph_box_boundary() or any sampling of a solid's
  /// surface, a few layers thick, at about the fluid's spacing). Throws kinema::Error
  /// ("sph", "boundary[i]", …) for a non-finite position; ones outside the domain are allowed
  /// (they are clamped into the grid's border cells for the search).
  void set_boundary_particles(std::span<const Vec3> positions);

  /// Replaces the colliders (moving ones: a character's capsules posed for the next step). In 2D
  /// their points' z is set to 0 (the solid is cut by the x–y plane). Throws
  /// kinema::Error("sph", "colliders[i]", …) and keeps the old ones for what validate_collider
  /// refuses (non-finite numbers, negative radius, restitution or friction, a zero plane normal,
  /// a capsule with a = b) and a restitution above 1.
  void set_colliders(std::vector<Collider> colliders);

  /// Advances h seconds (> 0, finite; else kinema::Error("sph", "step", …)) in as many substeps
  /// as the time-step rule asks; returns that count. Zero particles is fine (time advances).
  /// Throws kinema::Error("sph", "step", …) rather than let a non-finite value appear.
  int step(double h);

  size_t count() const;
  /// Positions (m), velocities (m/s), structure-of-arrays, in the current (cell-sorted) order.
  std::span<const double> px() const;
  std::span<const double> py() const;
  std::span<const double> pz() const;
  std::span<const double> vx() const;
  std::span<const double> vy() const;
  std::span<const double> vz() const;
  /// Density and pressure of each particle from the last substep's density pass (at the
  /// positions that substep started from; PositionBased: its last iteration). Before any step:
  /// zero. Pressure is the Tait pressure of the density in both solvers.
  std::span<const double> densities() const;
  std::span<const double> pressures() const;
  /// Each particle's number in the order it was added.
  std::span<const std::uint32_t> ids() const;
  Vec3 position(size_t i) const;
  Vec3 velocity(size_t i) const;

  const SphOptions& options() const;
  double particle_mass() const;     ///< ρ0 / Σ_lattice W ≈ ρ0·Δx^d, kg (kg/m in 2D)
  double smoothing_radius() const;  ///< h, m
  double sound_speed() const;       ///< c, m/s (the automatic one when options asked 0)
  double time() const;              ///< s, simulated so far
  int last_substeps() const;        ///< substeps the last step() took
  long total_substeps() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> m_;
};

}  // namespace kinema
