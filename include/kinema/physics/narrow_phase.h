// kinema/physics/narrow_phase.h — contact points, normal and depth between two shapes, the
// distance between separated convex shapes, and the time of impact of a swept shape.
//
// Everything is in the world frame, metres. A shape (kinema/physics/rigid_shape.h) is placed by
// a Pose: its own origin at `position`, its axes turned by `orientation`. Conventions of every
// function here:
//
// - The contact normal is a unit vector pointing from A toward B: moving B along it by `depth`
//   (or A against it) separates the two.
// - A contact point's `position` lies midway between the two surfaces: A's deepest point into B
//   is position + normal·depth/2, B's deepest point into A is position − normal·depth/2. The
//   midpoint makes swapping A and B a matter of negating the normal.
// - Touching counts as contact (depth 0). Functions return false and set `count` to 0 when the
//   shapes are apart, or when an input is not finite or out of range; they never throw.
//
// Methods: closed forms for spheres and capsules; the separating-axis test with reference-face
// clipping (Gottschalk et al. 1996 for the 15 axes of two boxes; the clipping as in ODE's box–box
// and Box2D) for boxes; for any other convex pair the Gilbert–Johnson–Keerthi distance algorithm
// (GJK, 1988) on the shapes' cores (a sphere's centre, a capsule's segment), and when the cores
// overlap the expanding polytope algorithm (EPA, van den Bergen 2001) for depth and normal; then
// the two shapes' supporting faces are clipped against each other for up to four points.
#pragma once

#include <array>

#include "kinema/math/quat.h"
#include "kinema/math/vec3.h"
#include "kinema/physics/broad_phase.h"
#include "kinema/physics/rigid_shape.h"
#include "kinema/physics/triangle_bvh.h"

namespace kinema {

/// Where a shape is: its origin in the world (m) and the rotation from its axes to the world's.
struct Pose {
  Vec3 position{0, 0, 0};
  Quat orientation{0, 0, 0, 1};  ///< unit

  Vec3 to_world(const Vec3& local) const { return position + rotate(orientation, local); }
  Vec3 to_local(const Vec3& world) const {
    return rotate(conjugate(orientation), world - position);
  }
};

struct ContactPoint {
  Vec3 position{0, 0, 0};  ///< world, midway between the two surfaces (m)
  double depth = 0;        ///< penetration along the manifold's normal, ≥ 0 (m)
};

/// Up to four contact points sharing one normal (unit, world, from A toward B).
struct ContactManifold {
  Vec3 normal{0, 1, 0};
  int count = 0;
  std::array<ContactPoint, 4> points{};

  /// The largest depth of the points, 0 when there are none (m).
  double max_depth() const;
};

/// The world-frame box around `shape` at `pose`, for the broad phase (kinema/physics/
/// broad_phase.h): tight for the convex kinds (their extreme points along the world axes); for
/// a mesh or height field, the box around its own-frame bounds turned into the world. Grown by
/// `margin` (m) on every side. A bad pose or size gives the empty box at the pose's position.
Aabb world_bounds(const RigidShape& shape, const Pose& pose, double margin = 0);

// ---- closed forms and the separating-axis test (world-frame arguments) -----------------------

/// Spheres centred at `centre_a`, `centre_b` with radii `radius_a`, `radius_b` (m, ≥ 0): one point.
/// Concentric spheres get the normal +y.
bool collide_sphere_sphere(const Vec3& centre_a, double radius_a, const Vec3& centre_b,
                           double radius_b, ContactManifold& out);

/// Sphere A against box B (half extents `half_extents` along the box's axes, placed by
/// `box_pose`): one point. A centre inside the box is pushed out through the nearest face.
bool collide_sphere_box(const Vec3& centre, double radius, const Pose& box_pose,
                        const Vec3& half_extents, ContactManifold& out);

/// Sphere A against capsule B, the capsule being the segment `cap_0`–`cap_1` swept by
/// `cap_radius`: one point.
bool collide_sphere_capsule(const Vec3& centre, double radius, const Vec3& cap_0, const Vec3& cap_1,
                            double cap_radius, ContactManifold& out);

/// Capsule A (segment a0–a1, radius `radius_a`) against capsule B: one point, or two where the
/// segments are parallel and overlap along their length (the two ends of the overlap).
bool collide_capsule_capsule(const Vec3& a0, const Vec3& a1, double radius_a, const Vec3& b0,
                             const Vec3& b1, double radius_b, ContactManifold& out);

/// Capsule A (segment p0–p1, radius) against box B: one point, or two where the capsule lies
/// along a face (its segment clipped to the face).
bool collide_capsule_box(const Vec3& p0, const Vec3& p1, double radius, const Pose& box_pose,
                         const Vec3& half_extents, ContactManifold& out);

/// Box A against box B by the separating-axis test on 15 axes (3 face normals of each, 9 edge
/// cross products). Face contact: B's (or A's) incident face clipped by the reference face's side
/// planes, up to 4 points, each with its own depth below the reference face. Edge–edge contact:
/// one point between the two edges' closest points. Face axes win ties with edge axes (an edge
/// axis must separate by 5 % + 1 µm less), which keeps resting contacts on faces; between the
/// two boxes' faces the shallower wins, so swapping A and B only negates the normal.
bool collide_box_box(const Pose& pose_a, const Vec3& half_a, const Pose& pose_b, const Vec3& half_b,
                     ContactManifold& out);

// ---- general convex shapes: GJK and EPA --------------------------------------------------------

/// Whether `shape` is one of the convex kinds: sphere, box, capsule, cylinder, convex hull.
bool is_convex(const RigidShape& shape);

struct GjkResult {
  double distance = 0;       ///< between the surfaces (m); 0 when they touch or overlap
  Vec3 point_a{0, 0, 0};     ///< closest point on A (world); meaningless when overlapping
  Vec3 point_b{0, 0, 0};     ///< closest point on B (world)
  bool overlapping = false;  ///< the shapes touch or overlap
  int iterations = 0;        ///< GJK iterations used (a measure of cost)
};

/// Distance and closest points between two convex shapes (is_convex). Rounded shapes (sphere,
/// capsule) are handled as their core (a point, a segment) grown by their radius, which makes
/// their distances exact. Returns false (and a zero result) for a non-convex shape or a pose
/// that is not finite.
bool gjk_distance(const RigidShape& a, const Pose& pose_a, const RigidShape& b, const Pose& pose_b,
                  GjkResult& out);

/// Contact between two convex shapes by GJK, EPA when the cores overlap, and clipping of the
/// shapes' supporting faces (up to 4 points). Works for any pair of convex kinds; `collide`
/// prefers the closed forms above where there is one.
bool collide_convex(const RigidShape& a, const Pose& pose_a, const RigidShape& b,
                    const Pose& pose_b, ContactManifold& out);

/// The penetration of two overlapping convex shapes: the shortest translation of B (along unit
/// `normal`, A → B, by `depth` m) that leaves them touching, by GJK and EPA (for rounded shapes,
/// from their cores' closest points while the cores are apart). False, with depth 0, when they are
/// apart or an input is bad.
bool penetration(const RigidShape& a, const Pose& pose_a, const RigidShape& b, const Pose& pose_b,
                 Vec3& normal, double& depth);

// ---- non-convex: triangle meshes and height fields ---------------------------------------------

/// Convex shape A against a triangle mesh or height field B. Triangles are culled by their
/// bounds against A's: a mesh's through `bvh` when given (built from B: kinema/physics/
/// triangle_bvh.h; one built from another mesh is ignored), else by scanning all of them; a
/// height field visits only the cells under A. The result is the same with or without `bvh`. Each
/// touching triangle is a convex contact; the manifold takes the deepest one's normal and up to 4
/// points of all of them (depths measured along that normal). Triangles are one-sided: their
/// outward side (counter-clockwise; up for a height field) pushes A out, even when A's centre has
/// passed the triangle's plane.
bool collide_convex_triangles(const RigidShape& a, const Pose& pose_a, const RigidShape& b,
                              const Pose& pose_b, ContactManifold& out,
                              const TriangleBvh* bvh = nullptr);

/// Any pair of shapes: the closed forms for sphere, capsule and box pairs, GJK/EPA for the other
/// convex pairs, collide_convex_triangles against a mesh or height field (either side; `bvh`,
/// optional, is the mesh's). False for two non-convex shapes (mesh or height field against mesh
/// or height field: not supported).
bool collide(const RigidShape& a, const Pose& pose_a, const RigidShape& b, const Pose& pose_b,
             ContactManifold& out, const TriangleBvh* bvh = nullptr);

// ---- continuous collision detection ------------------------------------------------------------

/// Time of impact of two shapes translating (not turning) over one step: A from `pose_a` by
/// `motion_a` (m), B from `pose_b` by `motion_b`. On a hit, `fraction` ∈ [0, 1] is the part of
/// the step after which the surfaces are within `tolerance` (m) of each other and never past the
/// first contact: the shapes may be moved there and collided discretely. Conservative
/// advancement on GJK distances (Mirtich 1996): exact for translations since the distance is
/// convex in time. A may be any convex shape; B any convex shape, triangle mesh (`bvh`, optional,
/// built from it) or height field.
/// Returns false when they do not meet within the step (fraction set to 1), or for bad input.
/// Shapes already touching or overlapping at the start give fraction 0.
bool time_of_impact(const RigidShape& a, const Pose& pose_a, const Vec3& motion_a,
                    const RigidShape& b, const Pose& pose_b, const Vec3& motion_b, double& fraction,
                    double tolerance = 1e-4, const TriangleBvh* bvh = nullptr);

}  // namespace kinema
