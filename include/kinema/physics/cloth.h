// kinema/physics/cloth.h — mass-spring and constraint cloth (also ropes and strands: a "cloth"
// may have edges without triangles).
//
// A cloth is particles at a mesh's vertices joined by three kinds of springs:
//   structural — the mesh's edges (on a grid: direct neighbours), resisting stretch;
//   shear      — across each edge shared by two triangles, the two opposite vertices (on a grid:
//                both diagonals of each square), resisting the squares' collapse into diamonds;
//   bend       — through each vertex along its straightest line, the neighbours on either side
//                (on a grid: every other particle), resisting folding. Weak bend springs make
//                silk, stiff ones leather.
// Three solvers move it, chosen per cloth:
//   SemiImplicit  — Hooke springs with dampers, semi-implicit Euler, split into as many substeps
//                   as the stability limit h < 2/ω needs (ω bounded from every particle's springs);
//   ImplicitEuler — Baraff & Witkin (1998): one linear solve per step, (M − h·∂f/∂v −
//                   h²·∂f/∂x)·Δv = h·(f + h·∂f/∂x·v), by preconditioned conjugate gradients;
//                   stable for any stiffness and step, and it damps;
//   Xpbd          — extended position-based dynamics (Macklin, Müller & Chentanez 2016) with small
//                   substeps (Macklin et al. 2019): springs become distance constraints of
//                   compliance 1/k (an infinite k: inextensible), optionally with long-range
//                   tethers to the pins (Kim, Chentanez & Müller 2012) so that a hanging cloth
//                   does not stretch.
// All three share the forces (gravity, air drag, wind on the triangles), pins and attachments to
// skinned vertices, colliders (planes, spheres, boxes, capsules) and self-collision through a
// spatial hash. Runs are deterministic and bit-identical whatever the thread count (oneTBB;
// constraints are coloured so that each colour's constraints share no particle). Units: metres,
// seconds, kilograms, newtons.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kinema/math/vec3.h"
#include "kinema/physics/collider.h"

namespace kinema {

namespace detail {
class ClothCgSolver;  ///< the implicit solver's conjugate gradients (src/physics/cloth_cg.h)
/// A symmetric 3 × 3 matrix (xx, yy, zz, xy, xz, yz): a spring's block in the implicit solve.
struct ClothSym3 {
  double xx = 0, yy = 0, zz = 0, xy = 0, xz = 0, yz = 0;
  Vec3 operator*(const Vec3& p) const {
    return {xx * p.x + xy * p.y + xz * p.z, xy * p.x + yy * p.y + yz * p.z,
            xz * p.x + yz * p.y + zz * p.z};
  }
};
}  // namespace detail

/// A cloth's rest shape. Triangles are counter-clockwise seen from the front. `edges` adds
/// structural springs outside any triangle (ropes, hair strands, a flag's cord). A mesh made by
/// make_grid_cloth records its grid so that its springs follow rows and columns.
struct ClothMesh {
  std::vector<Vec3> positions;                          ///< m
  std::vector<std::array<std::uint32_t, 3>> triangles;  ///< vertex indices
  std::vector<std::array<std::uint32_t, 2>> edges;      ///< extra structural springs
  int grid_columns = 0, grid_rows = 0;                  ///< > 0: vertex (c, r) is r·columns + c
};

/// A rectangle of columns × rows vertices (each ≥ 2) spanning `width` metres along the unit
/// vector `u_axis` and `height` along `v_axis` from `corner`: vertex (c, r) sits at
/// corner + u·width·c/(columns−1) + v·height·r/(rows−1). Each square is split into two triangles
/// along its (c, r)–(c+1, r+1) diagonal; the front faces u × v.
ClothMesh make_grid_cloth(int columns, int rows, double width, double height,
                          const Vec3& corner = {0, 0, 0}, const Vec3& u_axis = {1, 0, 0},
                          const Vec3& v_axis = {0, 0, 1});

/// Checks a cloth mesh: at least two vertices, finite positions, indices in range, no triangle
/// or edge that repeats a vertex, no degenerate triangle (area ≤ 1e-12 × its longest edge²), a
/// grid that matches the vertex count. Throws kinema::Error naming `name` and the element.
void validate_cloth_mesh(const ClothMesh& mesh, const std::string& name = "cloth mesh");

enum class ClothSpringKind : std::uint8_t { Structural, Shear, Bend };

struct ClothSpring {
  std::uint32_t a = 0, b = 0;
  double rest_length = 0;  ///< m, from the mesh's rest positions
  ClothSpringKind kind = ClothSpringKind::Structural;
};

/// The springs of a mesh, each pair once, structural first, then shear, then bend. A grid mesh:
/// neighbours, both diagonals, every other particle (4 × 4 particles: 24, 18, 16). Any other mesh:
/// its edges; across each edge shared by two triangles, the opposite vertices; through each vertex,
/// each neighbour with the neighbour most nearly opposite it (their angle at the vertex ≥ 150°).
/// A pair already joined by an earlier kind gets no second spring.
std::vector<ClothSpring> cloth_springs(const ClothMesh& mesh);

enum class ClothSolver : std::uint8_t { SemiImplicit, ImplicitEuler, Xpbd };

/// ImplicitEuler's preconditioner. The system's stiff in-plane part is like a grid Laplacian: on a
/// 64 × 64 flag of 10⁵ N/m springs in wind, block Jacobi still leaves a 0.6 % residual after 100
/// iterations, where one V-cycle of aggregation multigrid per iteration reaches 4 % in 5 and
/// 0.4 % in 10 (an iteration costs about four of Jacobi's: two more products with the system on
/// the vertices, and the coarser levels). Three multigrid iterations with slack_stiffness 3·10⁻⁴
/// hold that flag under 0.6 % stretch where twenty of block Jacobi leave 7 %. A solve that
/// converges also makes the projection onto colliders after the step bite harder: a cloth
/// dropped on a sphere stretches where it lands, and the converged solve then holds it draped at
/// about 4.5 % stretch (a flat sheet on that cap needs some 9 % of hoop compression at its rim,
/// which springs resisting compression as much as stretch split into both), where Jacobi's loose
/// solve never gets there; so block Jacobi stays the default.
enum class ClothPreconditioner : std::uint8_t {
  BlockJacobi,  ///< each vertex's 3 × 3 diagonal block, inverted
  Multigrid     ///< one V-cycle of unsmoothed aggregation multigrid (pairwise matching, Galerkin)
};

struct ClothMaterial {
  double mass_per_area = 0.15;  ///< kg/m² (cotton ≈ 0.15); a vertex gets ⅓ of its triangles' mass
  double vertex_mass = 0;       ///< kg; > 0: every vertex weighs this instead (needed for strands)
  double stretch_stiffness = 5000;  ///< N/m, structural springs (XPBD: infinity = inextensible)
  double shear_stiffness = 1000;    ///< N/m
  double bend_stiffness = 20;       ///< N/m; 0: no bend springs
  double spring_damping = 0.02;     ///< N·s/m along every spring (XPBD: constraint damping)
  double air_drag = 0.05;           ///< 1/s: each particle's velocity relative to the wind decays
  /// ½ρ·C_d (kg/m³): a triangle moving at v relative to the wind feels
  /// −coefficient·area·(v·n)|v·n|·n, split over its corners. 0.6 ≈ air on a flat plate.
  double aerodynamic_coefficient = 0.6;
};

/// A cloth vertex that follows a vertex of a skinned mesh (the body's skin under a cape): the
/// step's `skin_positions[skin_vertex]` plus `offset` (m, world).
struct ClothAttachment {
  std::uint32_t cloth_vertex = 0;
  std::uint32_t skin_vertex = 0;
  Vec3 offset{0, 0, 0};
};

struct ClothOptions {
  ClothSolver solver = ClothSolver::Xpbd;
  ClothMaterial material;
  Vec3 gravity{0, -9.8, 0};  ///< m/s²
  Vec3 wind{0, 0, 0};        ///< m/s
  /// Substeps per step. 0: automatic — SemiImplicit the fewest below the stability limit,
  /// ImplicitEuler 1, Xpbd 8.
  int substeps = 0;
  int iterations = 1;  ///< XPBD: constraint sweeps per substep
  /// XPBD, and every solver with a strain limit: each particle stays within its rest distance
  /// (along the structural springs) of its nearest pin or attachment; what keeps a hanging cloth
  /// from stretching.
  bool tethers = true;
  /// Strain limiting (Provot 1995), any solver: after each substep's solve and contacts, a
  /// structural spring longer than (1 + strain_limit)·rest is shortened to that length by moving
  /// its free ends (inversely to their masses), in `strain_limit_passes` sweeps over the springs
  /// that alternate direction and stop early once nothing moves; the tethers are applied first and
  /// the colliders once more after; the moved particles' velocities follow their moves. It trims
  /// what an unconverged implicit solve leaves (a pin's neighbours, a free edge whipping in the
  /// wind, cloth pushed out over a collider); sweeps carry a correction along the spring order,
  /// so a stretch spread over a long chain needs more passes. 0: off; e.g. 0.003 for 0.3 %.
  double strain_limit = 0;
  int strain_limit_passes = 8;
  /// The strain limit's over-relaxation ω, 0 < ω < 2: each over-long spring is shortened by ω
  /// times its excess (1: to its limit exactly). A stretch spread over a whole region is a smooth
  /// error, which plain sweeps remove slowly (each carries a correction a little further, as
  /// Gauss–Seidel does on a Poisson problem); over-relaxed sweeps carry it several times faster.
  /// On the 64 × 64 cloth dropped on a sphere (block Jacobi, 10 iterations, a 0.3 % limit),
  /// ω = 1.8 with 32 passes holds seven runs with the sphere moved up to 7.5 mm at 0.46–0.67 % at
  /// worst where ω = 1 with 8 passes leaves 1.1–1.7 % (and 128 passes 0.5 %); at 1.9 the sweeps
  /// overshoot (11 % in one run). Not for a cloth hanging from pins in wind: there the same
  /// setting let the flag's worst spring reach 43 % where plain sweeps leave 7 % (the overshoot
  /// against the pins and tethers feeds the flutter). Springs end at or under their limit.
  double strain_limit_relaxation = 1;
  int cg_max_iterations = 200;  ///< ImplicitEuler: conjugate-gradient iterations per step
  double cg_tolerance = 1e-8;   ///< ImplicitEuler: stop at |residual| ≤ tolerance·|right side|
  ClothPreconditioner preconditioner = ClothPreconditioner::BlockJacobi;  ///< ImplicitEuler
  /// ImplicitEuler: bend springs in the linear solve (true), or explicit forces only (false: a
  /// third fewer blocks in every conjugate-gradient iteration; stable while the bend stiffness
  /// stays far below the stretch and shear stiffness, which carry the in-plane motion it pulls).
  bool implicit_bend = true;
  /// ImplicitEuler: the fraction of each spring's stiffness that the linear system keeps across
  /// the spring when it is slack (0 to 1). Baraff–Witkin's linearization gives a spring at or
  /// under its rest length no stiffness across it (the negative part would make the system
  /// indefinite), so a vertex among slack springs moves sideways in the system with nothing but
  /// its mass: a mode so cheap in the energy conjugate gradients minimize that a stopped solve
  /// can leave a large error in it — on a flag in wind, a free corner jumping 1.6 cm in a step
  /// and its springs stretching 50–120 %. 10⁻⁴ ends that at four multigrid iterations (0.29 % at
  /// worst over seven runs of 600 steps, against 0.8–3.8 % with 0 as rounding changes); at three,
  /// 3·10⁻⁴ (0.51 % over seven runs of 2,400 steps, where 10⁻⁴ left 1.2 % in one). Only the
  /// system changes, not the forces: the cloth hangs where it hung, and the extra term resists only
  /// changes of its vertices' relative sideways velocities within a step (a swinging cloth slows
  /// about as an unconverged solve slows it).
  double slack_stiffness = 0;
  std::vector<std::uint32_t> pinned;         ///< vertices held where set_pin_target puts them
  std::vector<ClothAttachment> attachments;  ///< vertices that follow the skin (kinematic)
  std::vector<Collider> colliders;           ///< restitution ignored (cloth does not bounce)
  double thickness = 0.005;  ///< m: particles keep this far from colliders and from each other
  bool self_collision = false;
  int threads = 0;  ///< 0: all cores; the result does not depend on it
};

/// What one step did.
struct ClothStepStats {
  int substeps = 0;
  int cg_iterations = 0;   ///< ImplicitEuler: summed over substeps
  double cg_residual = 0;  ///< ImplicitEuler: the last solve's relative residual
  size_t collider_contacts = 0;
  size_t self_contacts = 0;
};

class Cloth {
 public:
  /// Throws kinema::Error for a bad mesh (validate_cloth_mesh), non-finite or negative numbers,
  /// a vertex without mass, pinned or attached vertices out of range, an infinite stiffness for a
  /// solver other than XPBD, a bad collider.
  Cloth(ClothMesh mesh, ClothOptions options);

  /// Advances h seconds. `skin_positions` are the skinned mesh's vertices at the end of the step
  /// (needed when there are attachments); attached and pinned vertices move in a straight line
  /// from where they were over the substeps.
  ClothStepStats step(double h, std::span<const Vec3> skin_positions = {});

  /// Replaces the state (a restart, or a start away from the rest shape): one position (m) and
  /// one velocity (m/s) per vertex, finite. Kinematic vertices take the positions too.
  void set_state(std::span<const Vec3> positions, std::span<const Vec3> velocities);

  /// Moves pinned vertex `vertex` to `position` over the next step (it must be pinned).
  void set_pin_target(std::uint32_t vertex, const Vec3& position);

  /// Replaces the colliders (moving ones: a character's capsules posed for the next step). Each is
  /// checked as the constructor checks them; throws kinema::Error and keeps the old ones on a bad
  /// one.
  void set_colliders(std::vector<Collider> colliders);

  /// The substeps a step of h seconds takes (SemiImplicit: from the stability limit).
  int substeps_for(double h) const;
  /// SemiImplicit's stability limit (s): 4/(γ + √(γ² + 4ω²)) with ω² and γ bounded by
  /// Gershgorin's theorem over each particle's springs (Σ k·(1/m_i + 1/√(m_i·m_j))); for one
  /// particle on one spring to a pin it is 2/ω = 2√(m/k).
  double stability_limit() const;

  std::span<const Vec3> positions() const { return x_; }
  std::span<const Vec3> velocities() const { return v_; }
  std::span<const double> masses() const { return mass_; }
  const std::vector<ClothSpring>& springs() const { return springs_; }
  const ClothMesh& mesh() const { return mesh_; }
  const ClothOptions& options() const { return o_; }
  double time() const { return time_; }

  /// The largest relative stretch (|d| − L0)/L0 over the springs of `kind` (0 when none stretch;
  /// a kind given no stiffness has no springs).
  double largest_stretch(ClothSpringKind kind = ClothSpringKind::Structural) const;
  double kinetic_energy() const;  ///< J
  /// J: the springs' ½k(|d| − L0)² (finite stiffness only) plus m·(−g)·x.
  double potential_energy() const;

 private:
  void substep_semi_implicit(double h);
  int substep_implicit(double h, double& residual);
  /// Whether the spring's block goes into the implicit solve (an explicit bend's does not).
  bool in_solve(size_t spring) const {
    return o_.implicit_bend || springs_[spring].kind != ClothSpringKind::Bend;
  }
  void number_free_vertices();
  void substep_xpbd(double h);
  void apply_tethers();
  void limit_strain();
  void forces(std::vector<Vec3>& f);
  /// Projects the free particles out of the colliders; with `friction`, Coulomb friction on
  /// their motion since `before`.
  size_t collide(std::span<const Vec3> before, bool friction = true);
  size_t self_collide();
  void build_self_candidates(double h);
  void move_kinematic(double fraction);

  struct Parallel;  ///< the oneTBB arena (src/physics/cloth.cpp)
  std::shared_ptr<Parallel> parallel_;
  ClothMesh mesh_;
  ClothOptions o_;
  std::vector<ClothSpring> springs_;
  std::vector<double> stiffness_;  ///< per spring, N/m
  std::vector<Vec3> x_, v_, previous_;
  std::vector<double> mass_, inverse_mass_;          ///< inverse 0: kinematic (pinned or attached)
  std::vector<Vec3> kinematic_from_, kinematic_to_;  ///< per vertex; used where inverse mass is 0
  std::vector<std::uint32_t> kinematic_;             ///< the kinematic vertices
  // Per-vertex adjacency (CSR): springs and triangles touching each vertex, in index order.
  std::vector<std::uint32_t> spring_start_, spring_of_, triangle_start_, triangle_of_;
  // XPBD: springs grouped by colour (no two in a colour share a vertex).
  std::vector<std::uint32_t> colour_start_, coloured_;
  struct XpbdSpring {
    std::uint32_t a, b;
    double rest_length, flexibility;  ///< m; 1/k (m/N)
  };
  std::vector<XpbdSpring> xpbd_springs_;  ///< in colour order
  // Tethers (CSR per vertex): its nearest kinematic vertices and rest distances along the cloth.
  std::vector<std::uint32_t> tether_start_, tether_anchor_;
  std::vector<double> tether_length_;
  // Self-collision: candidate pairs for this step, and each pair's rest distance.
  std::vector<std::array<std::uint32_t, 2>> self_pairs_;
  std::vector<double> self_rest_;
  double time_ = 0;
  // Buffers kept from step to step: allocated anew, the large ones would be mapped and
  // page-faulted in at every substep.
  std::vector<Vec3> force_, triangle_force_, on_a_, b_, before_;
  // ImplicitEuler: per free vertex, its own block and the system's diagonal block.
  std::vector<detail::ClothSym3> stiffness_block_, system_block_;
  // ImplicitEuler: the free vertices (and each vertex's index among them, kNone if kinematic),
  // and the solver.
  std::vector<std::uint32_t> free_vertex_, free_index_;
  std::shared_ptr<detail::ClothCgSolver> cg_;
  std::vector<std::array<double, 4>> spring_block_;  ///< per spring: (√α·n, β)
  /// Per free vertex (CSR): its springs, the top bit set where it is the spring's second vertex;
  /// and the (free vertex, spring) pairs whose other end is kinematic.
  std::vector<std::uint32_t> incidence_start_, incidence_;
  std::vector<std::array<std::uint32_t, 2>> kinematic_springs_;
  std::vector<double> lambda_;
  // Strain limiting: the structural springs with a free end; each end's share of a correction
  // (its inverse mass over the two), and the longest length allowed, squared.
  struct LimitedSpring {
    std::uint32_t a, b;
    double share_a, share_b, longest, longest_squared;  ///< m, m²
  };
  std::vector<LimitedSpring> limited_springs_;
};

}  // namespace kinema
