// kinema/fluid/marching_cubes.h — iso-surfaces of a sampled scalar field (marching cubes), and
// the signed field that turns particle liquids into such a surface.
//
// Marching cubes (Lorensen & Cline, SIGGRAPH 1987): every cube of eight neighbouring samples whose
// corners lie on both sides of the iso value holds a piece of surface, whose vertices are the
// crossings of the iso value along the cube's edges (linear interpolation). One vertex per crossed
// grid edge, shared by the up to four cubes around that edge: the mesh is indexed, with no
// duplicates. The case table is generated in code at first use, not pasted: on each cube face the
// crossings are joined into segments, the segments chain into closed loops, and each loop is
// triangulated. A face whose diagonal corners are inside (two) and outside (two) is ambiguous; it
// is resolved by the asymptotic decider (Nielson & Hamann, "The asymptotic decider", Visualization
// 1991): the inside corners are joined across the face when the bilinear interpolant's saddle
// value is inside, i.e. when the product of the inside pair's (value − iso) exceeds the outside
// pair's (ties: separated). Both cubes that share a face compute this from the same four samples,
// so they draw the same segments there and the surface is closed (watertight) wherever it does
// not reach the grid's border. Loops are triangulated with the least total perimeter (measured
// on the unit cube) among triangulations whose diagonals all pass through the cube's interior;
// the few long loops that have none (8+ crossings, only on cubes with ambiguous faces) get one
// extra vertex at the mean of their crossings, private to that cube. The cube's interior
// ambiguity (a tunnel through the cube, Chernyaev's MC33) is not resolved: each loop is a disc.
//
// Inside / outside: a sample is inside when value < iso (inside_is_below, the convention of
// signed distances) or value > iso (densities); a sample equal to the iso value is outside.
// Crossings are interpolated linearly and clamped to [1/1000, 999/1000] of the edge, so two
// crossings never coincide at a shared corner and no triangle has zero area in exact arithmetic
// (at most a thousandth of a cell moved; no triangle is ever dropped, so the clamp cannot open
// the surface). Normals are the field's gradient, by central differences at the samples (one-
// sided on the border), interpolated along the edge, normalised, pointing out of the inside
// region; triangles are counter-clockwise seen from outside.
//
// Particle liquids (Zhu & Bridson, "Animating Sand as a Fluid", SIGGRAPH 2005, §3): around each
// grid point x, φ(x) = |x − x̄| − r̄, where x̄ and r̄ are the averages of the nearby particles'
// positions and radii weighted by k(|x − xᵢ| / R), k(s) = max(0, (1 − s²)³). φ < 0 is liquid:
// the surface is marching_cubes(field, 0). Unlike a union of spheres, the averaging smooths the
// bumps of individual particles and gives a flat pool a flat top. Where no particle lies within R
// φ = R (outside). The grid bounds the particles plus a margin of R and two cells, so the
// border is outside and the surface closed.
//
// Units: metres. Positions in double precision where given (particles), the sampled field and the
// mesh in single (runtime data). Parallel over z layers (oneTBB); every layer's output lands in
// its own place and the merge is in layer order, so the output is bit-identical whatever the
// thread count.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "kinema/math/vec3.h"

namespace kinema {

/// Samples of a scalar field on a regular grid: sample (i, j, k) sits at origin + spacing·(i, j, k)
/// and is values[i + nx·(j + ny·k)].
struct ScalarGrid {
  int nx = 0, ny = 0, nz = 0;  ///< sample counts along x, y, z (marching cubes needs ≥ 2 each)
  Vec3 origin{0, 0, 0};        ///< position of sample (0, 0, 0), m
  double spacing = 1;          ///< distance between neighbouring samples, m
  std::vector<float> values;   ///< nx·ny·nz samples, x fastest

  std::size_t index(int i, int j, int k) const {
    return std::size_t(i) + std::size_t(nx) * (std::size_t(j) + std::size_t(ny) * std::size_t(k));
  }
  Vec3 position(int i, int j, int k) const {
    return origin + Vec3{double(i), double(j), double(k)} * spacing;
  }
};

/// An indexed triangle mesh.
struct SurfaceMesh {
  std::vector<Vec3f> positions;          ///< m
  std::vector<Vec3f> normals;            ///< unit, one per position, out of the inside region
  std::vector<std::uint32_t> triangles;  ///< three position indices each, counter-clockwise
                                         ///< seen from outside
  std::size_t triangle_count() const { return triangles.size() / 3; }
};

/// The iso-surface value = iso of `grid`. Vertices are ordered by z layer, then y, x and the
/// edge's axis, each layer's edge vertices followed by the centre vertices of the cubes above it;
/// triangles by cube layer, then y, x. `threads`: 0 for all cores (grids under 2^15
/// samples run on the calling thread); the result does not depend on it. Throws kinema::Error (file
/// "marching cubes") for fewer than 2 samples on an axis, a values size that is not nx·ny·nz, a
/// spacing that is not finite and positive, a non-finite origin or iso, or a non-finite sample (the
/// place names its index and i, j, k).
SurfaceMesh marching_cubes(const ScalarGrid& grid, float iso, bool inside_is_below = true,
                           int threads = 0);

struct ParticleFieldOptions {
  /// R, the kernel's support, m; 0: 4·radius, twice the spacing of particles that touch
  /// (Zhu & Bridson use twice the average particle spacing). Must exceed radius.
  double kernel_radius = 0;
  int threads = 0;  ///< 0: all cores; the result does not depend on it
};

/// The Zhu–Bridson signed field of particles of radius `radius` (m) on a grid of `spacing` (m) that
/// covers them all plus R + 2·spacing on every side; the liquid is φ < 0 (iso 0, inside below).
/// Neighbours come from a uniform grid of R-sized cells; each sample sums its neighbours in
/// particle order, so the field is bit-identical whatever the thread count. Throws kinema::Error
/// (file "particle field") for no particles, a non-finite particle (named by index), a radius,
/// spacing or kernel radius that is not finite and positive, R ≤ radius, or a grid that would
/// exceed 2^28 samples.
ScalarGrid particle_field(std::span<const Vec3> particles, double radius, double spacing,
                          const ParticleFieldOptions& options = {});

/// True when every undirected edge of the mesh belongs to exactly two triangles, which traverse it
/// in opposite directions (a closed, consistently oriented surface), and no triangle repeats an
/// index or points past the positions. An empty mesh is watertight.
bool is_watertight(const SurfaceMesh& mesh);

}  // namespace kinema
