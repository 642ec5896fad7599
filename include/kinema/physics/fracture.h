// kinema/physics/fracture.h — breaking a solid into pieces before the simulation: a Voronoi
// diagram of sites scattered around an impact point, each cell clipped to the solid, the pieces
// glued by breakable joints (kinema/physics/rigid_joint.h) so that the solid holds until an
// impulse above the glue's strength arrives. Units: metres, N·s.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kinema/physics/rigid_world.h"

namespace kinema {

/// `count` sites inside convex `shape` (box or convex hull; shape frame), scattered around
/// `impact` with a spread of `spread` metres (a normal distribution, so pieces are small near the
/// impact and large far from it), from `seed`. Sites that fall outside are drawn again; the same
/// arguments give the same sites.
std::vector<Vec3> fracture_sites(const RigidShape& shape, const Vec3& impact, int count,
                                 double spread, std::uint32_t seed);

/// One piece of a fractured solid: its convex hull in the solid's shape frame and which other
/// pieces it touches (they share a face of the Voronoi diagram).
struct FracturePiece {
  RigidShape hull;
  std::vector<int> neighbours;
};

/// The Voronoi cells of `sites` clipped to convex `shape` (box or convex hull): every point of
/// the solid belongs to the piece of its nearest site, so the pieces tile the solid exactly
/// (their volumes sum to its volume). Sites outside the solid or too close together to make a
/// cell with volume are dropped. Throws kinema::Error for a shape that is not a box or convex
/// hull, or no site inside it.
std::vector<FracturePiece> voronoi_fracture(const RigidShape& shape, std::span<const Vec3> sites);

/// The glue of a fractured solid placed at `origin` turned by `rotation` whose piece k is body
/// `first_body` + k: a fixed joint between every pair of neighbouring pieces, anchored midway
/// between their centres of mass, breaking above `strength` (N·s in one step).
std::vector<JointDesc> fracture_welds(std::span<const FracturePiece> pieces, BodyId first_body,
                                      const Vec3& origin, const Quat& rotation, double strength);

/// The pieces as dynamic bodies of `world` at the solid's pose (its shape origin `origin`,
/// turned by `rotation`), each of `density`, moving at `velocity`, glued to every neighbour by a
/// fixed joint that breaks above `strength` (N·s in one step). Returns the bodies' ids, in the
/// pieces' order.
std::vector<BodyId> add_fractured_body(RigidWorld& world, std::span<const FracturePiece> pieces,
                                       const Vec3& origin, const Quat& rotation, double density,
                                       double strength, const RigidMaterial& material = {},
                                       const Vec3& velocity = {0, 0, 0});

}  // namespace kinema
