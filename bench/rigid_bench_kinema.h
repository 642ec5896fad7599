// The scenes of bench/rigid_bench.h built as kinema RigidWorlds: shared by kinema_rigid_bench
// and the stability tests (tests/physics/rigid_stability_test.cpp), so that the figures in
// BENCHMARKS.md and what the tests hold come from the same worlds.
#pragma once

#include <algorithm>
#include <numbers>

#include "kinema/physics/rigid_world.h"
#include "rigid_bench.h"

namespace kinema::rigid_bench {

inline RigidShape shape_of(const BodySpec& b) {
  switch (b.kind) {
    case Kind::Box:
      return box_shape({b.hx, b.hy, b.hz});
    case Kind::Sphere:
      return sphere_shape(b.radius);
    case Kind::Capsule:
      return capsule_shape(b.radius, b.half_height);
  }
  return sphere_shape(b.radius);
}

/// The scene as a RigidWorld with `substeps` substeps a step and `settings` otherwise (the
/// iterations split across the substeps, gravity and friction as for every engine).
inline RigidWorld build_kinema_world(const Scene& scene, int substeps,
                                     RigidWorldSettings settings = {}) {
  settings.gravity = {0, -kGravity, 0};
  // The same 10 solver passes a step as Bullet, split across the substeps.
  settings.substeps = substeps;
  settings.velocity_iterations = std::max(1, kIterations / substeps);
  RigidWorld world(settings);
  for (const BodySpec& b : scene.bodies) {
    const RigidShape shape = shape_of(b);
    // Capsules along x: kinema's capsules run along y, so turn them a quarter about z.
    const Quat q =
        b.along_x ? Quat::from_axis_angle({0, 0, 1}, std::numbers::pi / 2) : Quat::identity();
    const Vec3 at{b.x, b.y, b.z};
    RigidBody body =
        b.mass > 0 ? make_dynamic_body(scaled_to_mass(mass_properties(shape, 1), b.mass), at, q)
                   : make_static_body(at, q);
    body.linear_velocity = {b.vx, b.vy, b.vz};
    world.add_body(body, shape, {kFriction, 0});
  }
  for (const BallSpec& j : scene.joints) {
    JointDesc d;
    d.a = BodyId(j.a);
    d.b = BodyId(j.b);
    d.anchor = {j.x, j.y, j.z};
    world.add_joint(d);
  }
  return world;
}

inline double max_joint_error(const RigidWorld& world) {
  double worst = 0;
  for (JointId j = 0; j < world.joint_count(); ++j) worst = std::max(worst, world.joint_error(j));
  return worst;
}

}  // namespace kinema::rigid_bench
