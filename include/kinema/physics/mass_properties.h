// kinema/physics/mass_properties.h — mass, centre of mass and inertia tensor of a rigid shape.
//
// Exact for every shape kind that has a volume: closed forms for spheres, boxes, capsules and
// cylinders (axis +y), and the divergence theorem over the triangles for convex hulls and closed
// triangle meshes (Mirtich 1996, "Fast and Accurate Computation of Polyhedral Mass Properties", in
// Eberly's form, "Polyhedral Mass Properties (Revisited)", 2002). Units: kg, m, kg·m².
// The inertia tensor is about the centre of mass, in the shape's axes; for a solid sphere of mass m
// and radius r it is (2/5)·m·r² times the identity, for a thin rod of length L along x it is
// m·L²/12 about y and z.
#pragma once

#include <string>

#include "kinema/math/mat3.h"
#include "kinema/physics/rigid_shape.h"

namespace kinema {

struct MassProperties {
  double mass = 0;               ///< kg
  Vec3 centre_of_mass{0, 0, 0};  ///< in the shape's frame (m)
  Mat3 inertia = Mat3::zero();   ///< about the centre of mass, shape axes (kg·m²)
};

/// The mass properties of `shape` filled with uniform `density` (kg/m³, > 0). Throws
/// kinema::Error (place `place`) for a height field (no volume), a triangle mesh that is not a
/// closed, consistently wound surface (naming an edge that is open or doubled), a mesh wound inward
/// (negative volume), or a density that is not positive and finite.
MassProperties mass_properties(const RigidShape& shape, double density,
                               const std::string& place = "shape");

/// The same body with total mass `mass` (kg, > 0): the inertia scales with it.
MassProperties scaled_to_mass(const MassProperties& properties, double mass);

/// The volume of `shape` (m³), by the same formulas; throws as mass_properties does.
double shape_volume(const RigidShape& shape, const std::string& place = "shape");

/// The inertia tensor about `point` (shape frame) instead of the centre of mass: the parallel-axis
/// theorem, I + m·(|d|²·E − d·dᵀ) with d = point − centre of mass.
Mat3 inertia_about(const MassProperties& properties, const Vec3& point);

}  // namespace kinema
