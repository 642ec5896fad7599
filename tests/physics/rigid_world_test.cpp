// The rigid-body world: the bouncing ball's 0.64 m in a simulation, a box coming to rest and
// sleeping, momentum and energy in free elastic collisions, friction on a slope, the bullet that
// must not pass the wall, stacks that stay put, determinism, and errors.
#include "kinema/physics/rigid_world.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <numbers>

#include "kinema/core/error.h"

namespace kinema {
namespace {

// A static ground box whose top face is the plane y = 0.
BodyId add_ground(RigidWorld& world, const RigidMaterial& material = {}) {
  return world.add_body(make_static_body({0, -0.5, 0}, Quat::identity()), box_shape({50, 0.5, 50}),
                        material, "ground");
}

BodyId add_sphere(RigidWorld& world, const Vec3& centre, double radius,
                  const RigidMaterial& m = {}) {
  const RigidShape s = sphere_shape(radius);
  return world.add_body(make_dynamic_body(mass_properties(s, 1000), centre, Quat::identity()), s,
                        m);
}

BodyId add_box(RigidWorld& world, const Vec3& centre, const Vec3& half,
               const Quat& q = Quat::identity(), const RigidMaterial& m = {}) {
  const RigidShape s = box_shape(half);
  return world.add_body(make_dynamic_body(mass_properties(s, 500), centre, q), s, m);
}

TEST(RigidWorldWorked, BallDroppedFromOneMetreWithRestitutionPointEightRisesToPointSixFour) {
  RigidWorldSettings settings;
  settings.sleeping = false;
  RigidWorld world(settings);
  add_ground(world);
  const double r = 0.05;
  const BodyId ball = add_sphere(world, {0, 1 + r, 0}, r, {0.5, 0.8});
  const double h = 1.0 / 2000;
  bool bounced = false;
  double apex = 0;
  for (int i = 0; i < 2 * 2000; ++i) {
    world.step(h);
    const RigidBody& b = world.body(ball);
    if (!bounced && b.linear_velocity.y > 0) bounced = true;
    if (bounced) {
      apex = std::max(apex, b.position.y - r);
      if (b.linear_velocity.y < 0) break;  // past the apex
    }
  }
  ASSERT_TRUE(bounced);
  EXPECT_NEAR(apex, 0.64, 0.01);
}

TEST(RigidWorld, BoxDroppedOnTheGroundComesToRestAndSleeps) {
  RigidWorld world;
  add_ground(world);
  const BodyId box =
      add_box(world, {0, 0.5, 0}, {0.2, 0.1, 0.3}, Quat::from_axis_angle({1, 0.3, 0.2}, 0.4));
  for (int i = 0; i < 300; ++i) world.step(1.0 / 60);
  const RigidBody& b = world.body(box);
  EXPECT_FALSE(b.awake);
  EXPECT_NEAR(b.position.y, 0.1, 0.01);  // resting on its largest face, within the slop
  EXPECT_EQ(world.awake_island_count(), 0u);
  EXPECT_NEAR(world.kinetic_energy(), 0, 1e-12);
}

TEST(RigidWorld, RestingBoxStaysPutForTenSeconds) {
  RigidWorldSettings settings;
  settings.sleeping = false;
  RigidWorld world(settings);
  add_ground(world);
  const BodyId box = add_box(world, {0, 0.25, 0}, {0.25, 0.25, 0.25});
  for (int i = 0; i < 600; ++i) world.step(1.0 / 60);
  const RigidBody& b = world.body(box);
  EXPECT_LT(std::abs(b.position.x) + std::abs(b.position.z), 1e-3);
  EXPECT_NEAR(b.position.y, 0.25, settings.penetration_slop);
  EXPECT_LT(length(b.angular_velocity), 1e-3);
}

TEST(RigidWorld, FreeElasticCollisionsKeepMomentumAndEnergy) {
  RigidWorldSettings settings;
  settings.gravity = {0, 0, 0};
  settings.sleeping = false;
  RigidWorld world(settings);
  const RigidMaterial elastic{0, 1};
  const BodyId a = add_sphere(world, {-1, 0.05, 0}, 0.2, elastic);
  const BodyId b = add_sphere(world, {1, -0.05, 0.02}, 0.3, elastic);
  world.body(a).linear_velocity = {3, 0, 0};
  world.body(b).linear_velocity = {-1, 0, 0};
  auto momentum = [&] {
    return world.body(a).linear_velocity / world.body(a).inverse_mass +
           world.body(b).linear_velocity / world.body(b).inverse_mass;
  };
  const Vec3 p0 = momentum();
  const double e0 = world.kinetic_energy();
  bool touched = false;
  for (int i = 0; i < 120; ++i) {
    world.step(1.0 / 120);
    touched = touched || !world.contacts().empty();
  }
  ASSERT_TRUE(touched);
  EXPECT_NEAR(distance(momentum(), p0), 0, 1e-9 * length(p0));
  EXPECT_NEAR(world.kinetic_energy() / e0, 1, 1e-6);
}

TEST(RigidWorld, FrictionHoldsABoxOnAGentleSlopeAndLetsItSlideOnASteepOne) {
  for (const double degrees : {15.0, 40.0}) {
    RigidWorldSettings settings;
    settings.sleeping = false;
    const double angle = degrees * std::numbers::pi / 180;
    settings.gravity = {9.81 * std::sin(angle), -9.81 * std::cos(angle),
                        0};  // tilt gravity, not the ground
    RigidWorld world(settings);
    add_ground(world, {0.5, 0});
    const BodyId box = add_box(world, {0, 0.1, 0}, {0.1, 0.1, 0.1}, Quat::identity(), {0.5, 0});
    for (int i = 0; i < 60; ++i) world.step(1.0 / 60);
    const double settled = world.body(box).position.x;
    for (int i = 0; i < 60; ++i) world.step(1.0 / 60);
    const double x = world.body(box).position.x;
    if (std::tan(angle) < 0.5) {
      // μ = 0.5 holds it below 26.6°: after the first contact's few millimetres, no creep at all.
      EXPECT_LT(std::abs(settled), 5e-3) << degrees;
      EXPECT_LT(std::abs(x - settled), 1e-5) << degrees;
    } else {
      // Sliding: a = g(sin θ − μ cos θ) for 2 s gives x = a·t²/2.
      const double a = 9.81 * (std::sin(angle) - 0.5 * std::cos(angle));
      EXPECT_NEAR(x, 0.5 * a * 4, 0.05 * 0.5 * a * 4) << degrees;
    }
  }
}

TEST(RigidWorldWorked, BulletBallDoesNotPassTheThinWall) {
  // r = 0.1 m at 30 m/s moves 0.5 m a 60 Hz step; the wall is 0.2 m thick.
  for (const bool continuous : {false, true}) {
    RigidWorldSettings settings;
    settings.gravity = {0, 0, 0};
    settings.continuous = continuous;
    RigidWorld world(settings);
    world.add_body(make_static_body({1.0, 0, 0}, Quat::identity()), box_shape({0.1, 2, 2}), {},
                   "wall");
    // After one step its front is at 0.85 m, short of the wall's face at 0.9 m; after two its back
    // is at 1.15 m, past the far face at 1.1 m.
    const BodyId ball = add_sphere(world, {0.25, 0, 0}, 0.1);
    world.body(ball).linear_velocity = {30, 0, 0};
    for (int i = 0; i < 10; ++i) world.step(1.0 / 60);
    if (continuous)
      EXPECT_LT(world.body(ball).position.x, 0.9) << "the swept test stops it at the wall";
    else
      EXPECT_GT(world.body(ball).position.x, 1.1) << "discrete steps skip over the wall";
  }
}

TEST(RigidWorld, StackOfFiveBoxesStandsForTenSeconds) {
  RigidWorldSettings settings;
  settings.sleeping = false;
  RigidWorld world(settings);
  add_ground(world);
  std::vector<BodyId> boxes;
  for (int i = 0; i < 5; ++i)
    boxes.push_back(add_box(world, {0, 0.25 + 0.5 * i, 0}, {0.25, 0.25, 0.25}));
  for (int i = 0; i < 600; ++i) world.step(1.0 / 60);
  for (int i = 0; i < 5; ++i) {
    const Vec3 p = world.body(boxes[i]).position;
    EXPECT_LT(std::hypot(p.x, p.z), 0.01) << i;
    EXPECT_NEAR(p.y, 0.25 + 0.5 * i, 0.02) << i;
  }
}

TEST(RigidWorld, ConvexHullRestsOnATriangleMeshAndACapsuleOnAHeightField) {
  RigidWorldSettings settings;
  settings.sleeping = false;
  RigidWorld world(settings);
  // A 20 m square floor of two triangles at y = 0, and a height field sloping gently in x beside
  // it.
  world.add_body(make_static_body({0, 0, 0}, Quat::identity()),
                 triangle_mesh_shape({{-10, 0, -10}, {10, 0, -10}, {10, 0, 10}, {-10, 0, 10}},
                                     {{0, 2, 1}, {0, 3, 2}}),
                 {}, "floor");
  std::vector<double> heights;
  for (int j = 0; j < 5; ++j)
    for (int i = 0; i < 5; ++i) heights.push_back(0.02 * i);
  world.add_body(make_static_body({20, 0, -2}, Quat::identity()),
                 height_field_shape(heights, 5, 5, 1.0, 1.0), {}, "terrain");
  std::vector<Vec3> points;
  for (int i = 0; i < 8; ++i)
    points.push_back({i & 1 ? 0.3 : -0.3, i & 2 ? 0.2 : -0.2, i & 4 ? 0.25 : -0.25});
  points.push_back({0, 0.35, 0});  // a roof
  const RigidShape hull = convex_hull_shape(points);
  const BodyId rock = world.add_body(
      make_dynamic_body(mass_properties(hull, 800), {0, 1, 0}, Quat::identity()), hull);
  const RigidShape capsule = capsule_shape(0.1, 0.3);
  const BodyId log = world.add_body(make_dynamic_body(mass_properties(capsule, 600), {22, 1, 0},
                                                      Quat::from_axis_angle({0, 0, 1}, 1.5707963)),
                                    capsule);
  for (int i = 0; i < 240; ++i) world.step(1.0 / 60);
  EXPECT_NEAR(world.body(rock).position.y - world.body(rock).centre_of_mass_in_shape.y, 0.2, 0.01);
  EXPECT_LT(length(world.body(rock).linear_velocity), 0.01);
  // The log lies across the slope (its axis along x, rolling downhill is slow): on the surface.
  const double ground = 0.02 * world.body(log).position.x - 0.02 * 20;
  EXPECT_NEAR(world.body(log).position.y, ground + 0.1, 0.02);
}

TEST(RigidWorld, SameSceneGivesTheSameBits) {
  auto run = [] {
    RigidWorld world;
    add_ground(world);
    for (int i = 0; i < 20; ++i)
      add_box(world, {0.3 * (i % 4), 0.3 + 0.45 * i, 0.2 * (i % 3)}, {0.15, 0.1, 0.12},
              Quat::from_axis_angle({1, 1, 0}, 0.1 * i));
    for (int i = 0; i < 240; ++i) world.step(1.0 / 60);
    std::vector<double> state;
    for (BodyId id = 0; id < world.body_count(); ++id) {
      const RigidBody& b = world.body(id);
      state.insert(state.end(), {b.position.x, b.position.y, b.position.z, b.orientation.x,
                                 b.orientation.y, b.orientation.z, b.orientation.w});
    }
    return state;
  };
  const std::vector<double> first = run(), second = run();
  ASSERT_EQ(first.size(), second.size());
  EXPECT_EQ(std::memcmp(first.data(), second.data(), first.size() * sizeof(double)), 0);
}

TEST(RigidWorld, SameBitsWhateverTheThreadCount) {
  // 300 boxes, balls, capsules and hulls poured into a pile: hundreds of pairs and points, so
  // that the narrow phase, the points' set-up and the bodies' integration split into many blocks
  // and the sleepers are woken by what lands on them.
  std::vector<Vec3> hull_points;
  for (int i = 0; i < 8; ++i)
    hull_points.push_back({i & 1 ? 0.12 : -0.12, i & 2 ? 0.1 : -0.1, i & 4 ? 0.09 : -0.09});
  hull_points.push_back({0, 0.16, 0});
  const RigidShape hull = convex_hull_shape(hull_points);
  auto run = [&](int threads) {
    RigidWorldSettings settings;
    settings.threads = threads;
    RigidWorld world(settings);
    add_ground(world);
    for (int i = 0; i < 300; ++i) {
      const Vec3 at{0.25 * (i % 6) - 0.6, 0.2 + 0.12 * i, 0.25 * ((i / 6) % 5) - 0.5};
      const Quat q = Quat::from_axis_angle(normalize(Vec3{1, 0.5 * (i % 3), 0.2}), 0.37 * i);
      switch (i % 4) {
        case 0:
          add_box(world, at, {0.1, 0.08, 0.12}, q);
          break;
        case 1:
          add_sphere(world, at, 0.09);
          break;
        case 2: {
          const RigidShape c = capsule_shape(0.06, 0.1);
          world.add_body(make_dynamic_body(mass_properties(c, 700), at, q), c);
          break;
        }
        default:
          world.add_body(make_dynamic_body(mass_properties(hull, 600), at, q), hull);
      }
    }
    for (int i = 0; i < 150; ++i) world.step(1.0 / 60);
    std::vector<double> state;
    for (BodyId id = 0; id < world.body_count(); ++id) {
      const RigidBody& b = world.body(id);
      state.insert(state.end(),
                   {b.position.x, b.position.y, b.position.z, b.orientation.x, b.orientation.y,
                    b.orientation.z, b.orientation.w, b.linear_velocity.x, b.angular_velocity.y});
    }
    return std::pair{state, world.contacts().size()};
  };
  const auto [serial, serial_contacts] = run(1);
  EXPECT_GT(serial_contacts, 300u);  // a pile, not a rain
  for (const int threads : {2, 3, 0}) {
    const auto [parallel, contacts] = run(threads);
    ASSERT_EQ(parallel.size(), serial.size());
    EXPECT_EQ(contacts, serial_contacts) << threads;
    EXPECT_EQ(std::memcmp(parallel.data(), serial.data(), serial.size() * sizeof(double)), 0)
        << threads << " threads";
  }
}

TEST(RigidWorld, BadBodiesAreRefusedNamingThem) {
  RigidWorld world;
  const RigidShape mesh = triangle_mesh_shape({{0, 0, 0}, {1, 0, 0}, {0, 0, 1}}, {{0, 2, 1}});
  MassProperties unit;
  unit.mass = 1;
  unit.inertia = Mat3::identity();
  try {
    world.add_body(make_dynamic_body(unit, {}, Quat::identity()), mesh, {}, "terrain");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.place(), "terrain");
  }
  EXPECT_THROW(world.add_body(make_static_body({}, Quat::identity()), sphere_shape(1), {0.5, 1.5}),
               Error);
  EXPECT_NO_THROW(world.add_body(make_static_body({}, Quat::identity()), mesh));
  EXPECT_EQ(world.body_count(), 1u);
}

}  // namespace
}  // namespace kinema
