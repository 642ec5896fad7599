// kinema/physics/soft_body.h — soft bodies: a volume filled with tetrahedra whose edges and
// volumes are XPBD constraints (Macklin, Müller & Chentanez 2016; the tetrahedral volume
// constraint of Müller et al., "Position Based Dynamics", 2007), solved in small substeps.
//
// Each substep: velocities take gravity and air drag, positions move, then every edge is pulled
// toward its rest length (compliance = 1/stiffness, N/m) and every tetrahedron toward its rest
// volume (compliance in m³/N: 0 keeps the volume exactly, like a water balloon; larger lets it
// squash like a cushion), then colliders push vertices out; velocities are the substep's
// displacement over its time. Jelly, fat, muscle, cushions. Units: metres, seconds, kilograms.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kinema/math/vec3.h"
#include "kinema/physics/collider.h"

namespace kinema {

/// A tetrahedral mesh. A tetrahedron (a, b, c, d) is positively oriented:
/// ((b − a) × (c − a))·(d − a) > 0 (six times its volume).
struct TetMesh {
  std::vector<Vec3> positions;                     ///< m
  std::vector<std::array<std::uint32_t, 4>> tets;  ///< vertex indices
};

/// The signed volume of tetrahedron (a, b, c, d): ((b − a) × (c − a))·(d − a)/6, m³.
double tet_volume(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d);

/// A box of nx × ny × nz cubes (each ≥ 1) of total `size` from `corner`, each cube cut into five
/// tetrahedra (the middle one and four corners), alternately mirrored so that neighbouring cubes'
/// faces match; (nx + 1)(ny + 1)(nz + 1) vertices, x fastest.
TetMesh make_box_tets(int nx, int ny, int nz, const Vec3& size, const Vec3& corner = {0, 0, 0});

/// Checks a tetrahedral mesh: vertices finite, indices in range, no repeated vertex in a
/// tetrahedron, every tetrahedron positively oriented with a volume above 1e-12 × its longest
/// edge³ (an inverted or flat one is refused, naming it). Throws kinema::Error.
void validate_tet_mesh(const TetMesh& mesh, const std::string& name = "tet mesh");

/// The triangles on the surface of a tetrahedral mesh (faces of exactly one tetrahedron),
/// counter-clockwise seen from outside: what to draw or export.
std::vector<std::array<std::uint32_t, 3>> tet_surface(const TetMesh& mesh);

struct SoftBodyOptions {
  double density = 1000;           ///< kg/m³: each vertex gets a quarter of its tetrahedra's mass
  double edge_compliance = 1e-4;   ///< m/N (1/stiffness); 0: edges keep their length
  double volume_compliance = 0;    ///< m³/N; 0: every tetrahedron keeps its volume
  bool volume_constraints = true;  ///< false: edges only (a body that can collapse)
  double air_drag = 0.1;           ///< 1/s
  Vec3 gravity{0, -9.8, 0};        ///< m/s²
  int substeps = 10;
  std::vector<std::uint32_t> pinned;  ///< vertices that stay where they are
  std::vector<Collider> colliders;    ///< restitution ignored; friction used
};

class SoftBody {
 public:
  /// Throws kinema::Error for a bad mesh (validate_tet_mesh), negative or non-finite numbers,
  /// substeps < 1, pinned vertices out of range, a bad collider.
  SoftBody(TetMesh mesh, SoftBodyOptions options);

  /// Advances by h seconds; returns the vertex–collider contacts summed over the substeps.
  size_t step(double h);

  /// Where pinned vertex v is to be at the end of the next step: it moves there in a straight
  /// line over the step's substeps (a pin carried by a character's joint). Throws kinema::Error
  /// for a vertex that is not pinned or a non-finite target.
  void set_pin_target(std::uint32_t v, const Vec3& target);

  /// Replaces the colliders (a character's, posed for the next step). Throws kinema::Error for a
  /// bad one.
  void set_colliders(std::vector<Collider> colliders);

  /// Replaces positions and velocities (one each per vertex, finite); pins stay at their new
  /// positions.
  void set_state(std::span<const Vec3> positions, std::span<const Vec3> velocities);

  std::span<const Vec3> positions() const { return x_; }
  std::span<const Vec3> velocities() const { return v_; }
  const TetMesh& mesh() const { return mesh_; }
  double rest_volume() const { return rest_volume_; }
  double volume() const;           ///< m³, the sum of the signed tetrahedron volumes now
  double kinetic_energy() const;   ///< J
  double largest_stretch() const;  ///< the worst (|d| − L0)/L0 over the edges

 private:
  TetMesh mesh_;
  SoftBodyOptions o_;
  std::vector<Vec3> x_, v_, previous_, step_start_, pin_target_;
  std::vector<double> mass_, inverse_mass_;
  std::vector<std::array<std::uint32_t, 2>> edges_;
  std::vector<double> edge_rest_, tet_rest_, edge_lambda_, tet_lambda_;
  double rest_volume_ = 0;
};

}  // namespace kinema
