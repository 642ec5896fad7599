// kinema/physics/collider.h — solids that particles, cloth and hair cannot enter: a plane's
// half-space, a sphere, an oriented box, a capsule. Units: metres.
#pragma once

#include <string>

#include "kinema/math/quat.h"
#include "kinema/math/vec3.h"

namespace kinema {

enum class ColliderShape { Plane, Sphere, Box, Capsule };

/// A solid. Plane: the half-space below the plane through `a` with normal `normal` (unit).
/// Sphere: centre `a`, `radius`. Box: centre `a`, `half_extents`, turned by `rotation`. Capsule:
/// the segment a–b swept by `radius`. On contact a particle is put back on the surface, its normal
/// velocity v_n becomes −restitution·v_n and its tangential velocity loses friction·|Δv_n|
/// (Coulomb; it stops, never reverses).
struct Collider {
  ColliderShape shape = ColliderShape::Plane;
  Vec3 a{0, 0, 0}, b{0, 0, 0};
  Vec3 normal{0, 1, 0};
  double radius = 0;
  Vec3 half_extents{0, 0, 0};
  Quat rotation{0, 0, 0, 1};
  double restitution = 0.5;
  double friction = 0.2;
};

/// Checks collider `c` (throws kinema::Error with `place` and `what` for non-finite numbers,
/// negative radii, restitution or friction, a zero plane normal, a capsule with a = b, a box
/// rotation that is not a rotation) and normalizes its plane normal and box rotation.
void validate_collider(Collider& c, const std::string& place, const std::string& what);

/// Where point x is inside collider c grown by `margin` (m, ≥ 0): the nearest point on the grown
/// surface (`surface`) and the outward unit normal there (`normal`); false when x is outside.
/// A box grows by its face planes (its corners stay sharp).
bool collider_contact(const Collider& c, const Vec3& x, double margin, Vec3& surface, Vec3& normal);

}  // namespace kinema
