// kinema/fluid/grid_fluid.h — smoke and fire on a staggered (MAC) grid after Stam's "Stable
// Fluids" (SIGGRAPH 1999).
//
// The grid has nx × ny × nz cubic cells of side dx (metres) starting at `origin`; cell (i, j, k)
// has its centre at origin + (i + ½, j + ½, k + ½)·dx and flat index i + nx·(j + ny·k). Velocity
// lives on the faces (the MAC layout of Harlow & Welch, as in Bridson's "Fluid Simulation for
// Computer Graphics"): u on the x faces ((nx + 1) × ny × nz, face (i, j, k) at x = i·dx, index
// i + (nx + 1)·(j + ny·k)), v on the y faces (nx × (ny + 1) × nz, index i + nx·(j + (ny + 1)·k)),
// w on the z faces (nx × ny × (nz + 1), index i + nx·(j + ny·k)). Scalars — smoke density,
// temperature, fuel — live at the cell centres. nz = 1 is a 2-D simulation in the x–y plane: the
// same code runs, the two z sides are walls, w stays zero and the pressure Laplacian has 5 points.
//
// One step of dt seconds is split into n equal substeps so that no substep moves the fluid more
// than max_cfl cells (n ≤ max_substeps; both schemes below stay bounded beyond that). A substep:
//   1. sources: inside each source's region, density, temperature and fuel are raised to at least
//      the source's values and the faces take the source's velocity (an inflow);
//   2. advection of velocity and scalars through the velocity of the substep's start: semi-
//      Lagrangian (Stam 1999: trace back, interpolate trilinearly) or MacCormack (Selle, Fedkiw,
//      Kim, Liu & Rossignac 2008: a forward and a backward semi-Lagrangian pass, half the error
//      added back, the result clamped to the min/max of the grid values the forward trace
//      interpolated, the up to 8 nodes of non-zero weight);
//   3. forces: buoyancy f = (−α·density + β·(T − T_ambient))·ŷ and vorticity confinement
//      f = ε·dx·(N × ω), N = ∇|ω| / |∇|ω|| (Fedkiw, Stam & Jensen 2001, "Visual Simulation of
//      Smoke");
//   4. diffusion, implicit (I − ν·h·∇²)·q' = q by Jacobi iterations (Stam 1999), when ν > 0;
//   5. projection: the pressure Poisson equation on the fluid cells, solved by conjugate gradients
//      preconditioned with MIC(0) (Bridson, ch. 4), and its gradient subtracted from the faces;
//      walls hold the normal velocity at 0, solids at the solid's velocity, open sides hold the
//      pressure at 0 (fluid leaves and enters freely);
//   6. fire (after Nguyen, Fedkiw & Jensen 2002, simplified): a fraction 1 − e^(−burn_rate·h) of
//      the fuel burns; each unit burnt adds heat_release to the temperature and smoke_per_fuel to
//      the density; the temperature relaxes to ambient as e^(−cooling_rate·h).
// Solid cells are those whose centre lies inside an obstacle (static ones from the options,
// moving ones set before each step, e.g. a character's capsules); every face touching a solid cell
// takes that solid's velocity, so a moving solid pushes the fluid and carries the smoke inside it.
//
// Units: metres, seconds; velocities m/s; density and fuel in any unit (kg/m³, say); temperature
// in any unit with the same zero as ambient_temperature (kelvin, say). Pressure is solved in the
// scaled form ψ = p·dt / (ρ·dx), so only velocities show. Everything runs in double precision, in
// parallel over rows of the grid (oneTBB); sums (the CG dot products, the mass) are added per
// fixed block of rows and then in block order, so a run is bit-identical whatever the thread
// count. The MIC(0) triangular solves are sequential along each grid row; they run as wavefronts
// of independent rows (j + k = const) in parallel, giving the bits of plain grid order.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "kinema/math/vec3.h"

namespace kinema {

enum class FluidBoundary { Wall, Open };
enum class FluidAdvection { SemiLagrangian, MacCormack };
enum class FluidShape { Box, Sphere, Capsule, Mesh };

class MeshSdf;  // kinema/fluid/mesh_sdf.h

/// A region of space, by its signed distance: an axis-aligned box, a sphere, a capsule (the
/// points within `radius` of the segment a–b), or the inside of a closed triangle mesh (a shared
/// MeshSdf moved by `center`: the points p with sdf->distance(p − center) < 0). In 2-D (nz = 1) a
/// region is cut by the plane z = centre.z (capsule: a.z; mesh: the plane of the mesh's own
/// z = 0), whatever z the grid's cells have.
struct FluidRegion {
  FluidShape shape = FluidShape::Sphere;
  Vec3 center{0, 0, 0};                ///< Box, Sphere; Mesh: the offset added to its vertices
  Vec3 half_extents{0, 0, 0};          ///< Box
  double radius = 0;                   ///< Sphere, Capsule
  Vec3 a{0, 0, 0}, b{0, 0, 0};         ///< Capsule: the segment's ends
  std::shared_ptr<const MeshSdf> sdf;  ///< Mesh (not null; GridFluid refuses a null one)

  static FluidRegion box(const Vec3& center, const Vec3& half_extents);
  static FluidRegion sphere(const Vec3& center, double radius);
  static FluidRegion capsule(const Vec3& a, const Vec3& b, double radius);
  /// The inside of `mesh` (closed: MeshSdf checked it) moved by `offset` metres. Building the
  /// MeshSdf is the costly part; regions share it (copies of a region are cheap).
  static FluidRegion mesh(std::shared_ptr<const MeshSdf> mesh, const Vec3& offset = {0, 0, 0});
  /// Signed distance of p to the surface (negative inside), metres.
  double distance(const Vec3& p) const;
};

/// A solid. Its velocity (m/s, a translation) is the boundary condition on the faces it touches
/// (rotation is not modelled: give a character's capsule the velocity of its centre).
struct FluidObstacle {
  FluidRegion region;
  Vec3 velocity{0, 0, 0};
};

/// An inflow, applied in every substep of the next step() only (add it again for each step).
struct FluidSource {
  FluidRegion region;
  double density = 0;            ///< cells inside are raised to at least this
  double temperature = 0;        ///< raised to at least this (≤ ambient: no heat)
  double fuel = 0;               ///< raised to at least this
  std::optional<Vec3> velocity;  ///< when set, faces inside take it, m/s
};

struct GridFluidOptions {
  int nx = 32, ny = 32, nz = 32;  ///< cells per side, 1…1024; nz = 1: 2-D
  double dx = 0.1;                ///< cell size, m
  Vec3 origin{0, 0, 0};           ///< the domain's minimum corner, m
  /// Per side, in the order −x, +x, −y, +y, −z, +z. In 2-D the z sides are walls whatever is set.
  std::array<FluidBoundary, 6> boundary{FluidBoundary::Wall, FluidBoundary::Wall,
                                        FluidBoundary::Wall, FluidBoundary::Wall,
                                        FluidBoundary::Wall, FluidBoundary::Wall};
  FluidAdvection advection = FluidAdvection::MacCormack;
  double max_cfl = 5;             ///< cells a substep may move the fluid (> 0)
  int max_substeps = 64;          ///< ≥ 1
  double viscosity = 0;           ///< kinematic, m²/s (≥ 0)
  double scalar_diffusion = 0;    ///< of density, temperature and fuel, m²/s (≥ 0)
  int diffusion_iterations = 20;  ///< Jacobi sweeps per implicit diffusion (≥ 1)
  /// CG stops when max |residual| ≤ tolerance · max |right-hand side| (> 0), or after
  /// pressure_max_iterations (≥ 1).
  double pressure_tolerance = 1e-6;
  int pressure_max_iterations = 500;
  /// CG also stops when the divergence it leaves, max |residual| / dx over the fluid cells, is at
  /// most this (1/s, ≥ 0; 0: off): a physical bound, the same at every resolution, where
  /// pressure_tolerance is relative to the step's own divergence.
  double pressure_max_divergence = 0;
  double buoyancy_alpha = 0;             ///< m/s² per unit density (smoke weighs), finite
  double buoyancy_beta = 0;              ///< m/s² per unit temperature above ambient, finite
  double ambient_temperature = 0;        ///< the temperature field starts here, finite
  double vorticity = 0;                  ///< confinement ε (≥ 0, dimensionless)
  double burn_rate = 0;                  ///< fuel burnt per second per unit fuel, 1/s (≥ 0)
  double heat_release = 0;               ///< temperature per unit fuel burnt (≥ 0)
  double smoke_per_fuel = 0;             ///< density per unit fuel burnt (≥ 0)
  double cooling_rate = 0;               ///< 1/s (≥ 0)
  std::vector<FluidObstacle> obstacles;  ///< static solids
  int threads = 0;                       ///< 0: all cores; the result does not depend on it
};

/// Wall-clock seconds the last step() spent in each stage (all substeps), for profiling; they do
/// not affect the result. advection includes sources and boundary conditions, forces the fire
/// reaction, pressure the matrix, MIC(0), CG and the gradient update.
struct GridFluidTimings {
  double advection = 0, forces = 0, diffusion = 0, pressure = 0, total = 0;
};

class GridFluid {
 public:
  /// Throws kinema::Error("grid fluid", field, reason) for a resolution outside 1…1024, a
  /// non-finite or non-positive dx, tolerance or max_cfl, negative coefficients, non-finite
  /// numbers, iteration counts below 1, or an obstacle with a negative size.
  explicit GridFluid(GridFluidOptions options);

  /// Queues an inflow for the next step(). Throws kinema::Error for non-finite numbers, negative
  /// density or fuel, a region with a negative size, or one that lies wholly outside the domain.
  void add_source(const FluidSource& source);

  /// Replaces the moving solids (posed for the next step; they keep that pose through its
  /// substeps). Checked as the static ones; on a bad one throws and keeps the old ones.
  void set_moving_obstacles(std::vector<FluidObstacle> obstacles);

  /// Advances dt seconds (> 0 and finite, else kinema::Error), in last_substeps() substeps.
  void step(double dt);

  /// Makes the current velocity divergence-free now (step 5 alone; walls and solids applied
  /// first). Useful after editing u(), v(), w() by hand.
  void project();

  int nx() const { return o_.nx; }
  int ny() const { return o_.ny; }
  int nz() const { return o_.nz; }
  double dx() const { return o_.dx; }
  const GridFluidOptions& options() const { return o_; }
  size_t cell_index(int i, int j, int k) const {
    return size_t(i) + size_t(o_.nx) * (size_t(j) + size_t(o_.ny) * size_t(k));
  }
  Vec3 cell_center(int i, int j, int k) const;

  /// Cell-centred fields, index i + nx·(j + ny·k). Writable for setting up a scene.
  std::span<const double> density() const { return density_; }
  std::span<const double> temperature() const { return temperature_; }
  std::span<const double> fuel() const { return fuel_; }
  std::span<double> density() { return density_; }
  std::span<double> temperature() { return temperature_; }
  std::span<double> fuel() { return fuel_; }
  /// Face velocities, m/s, in the layouts of the header comment. Writable.
  std::span<const double> u() const { return u_; }
  std::span<const double> v() const { return v_; }
  std::span<const double> w() const { return w_; }
  std::span<double> u() { return u_; }
  std::span<double> v() { return v_; }
  std::span<double> w() { return w_; }
  /// 1 for solid cells (after the last step's or projection's obstacles), else 0.
  std::span<const std::uint8_t> solid() const { return solid_; }

  /// The velocity at p (m/s), each component interpolated trilinearly on its own faces; points
  /// outside the domain take the nearest boundary value.
  Vec3 velocity_at(const Vec3& p) const;

  /// max |∇·u| over the fluid cells after the last projection, 1/s.
  double max_divergence() const { return max_divergence_; }
  /// CG iterations and final relative residual (max |r| / max |b|) of the last projection.
  int last_pressure_iterations() const { return pressure_iterations_; }
  double last_pressure_residual() const { return pressure_residual_; }
  /// Substeps the last step() took.
  int last_substeps() const { return substeps_; }
  const GridFluidTimings& last_timings() const { return timings_; }
  /// Σ density·dx³ over all cells.
  double smoke_mass() const;
  /// ∫|ω|² dV over the cells, ω the curl of the cell-centred velocity (central differences),
  /// 1/s²·m³.
  double enstrophy() const;
  double time() const { return time_; }
  long steps() const { return steps_; }

 private:
  void substep(double h);
  void apply_sources();
  void build_solids();
  void enforce_boundaries();
  void advect(double h);
  void add_forces(double h);
  void diffuse(double h);
  void react(double h);
  void project_now();
  /// ω = ∇ × (cell-centred velocity) at cell (i, j, k), central differences (one-sided at the
  /// edges).
  Vec3 curl_at(int i, int j, int k) const;
  const FluidObstacle& obstacle(int index) const;
  bool open(int side) const { return o_.boundary[size_t(side)] == FluidBoundary::Open; }

  GridFluidOptions o_;
  bool three_d_ = true;
  size_t ncell_ = 0;
  std::vector<double> u_, v_, w_, density_, temperature_, fuel_;
  std::vector<double> u_new_, v_new_, w_new_, u_tmp_, v_tmp_, w_tmp_;  ///< advection scratch
  std::array<std::vector<double>, 3> s_new_, s_tmp_;  ///< scalar scratch; also vorticity scratch
  std::vector<std::uint8_t> solid_;
  std::vector<std::int32_t> owner_;  ///< per cell: the obstacle it lies in, or −1
  std::vector<FluidObstacle> moving_;
  std::vector<FluidSource> sources_;
  // Pressure: ψ (kept as the next solve's first guess), the matrix, MIC(0), CG vectors.
  std::vector<double> psi_, rhs_, cg_r_, cg_z_, cg_s_, cg_q_;
  std::vector<float> adiag_, ax_, ay_, az_, precon_, pbx_, pby_, pbz_;
  double max_divergence_ = 0, pressure_residual_ = 0;
  int pressure_iterations_ = 0, substeps_ = 0;
  GridFluidTimings timings_;
  double time_ = 0;
  long steps_ = 0;
};

}  // namespace kinema
