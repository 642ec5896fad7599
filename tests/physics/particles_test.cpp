// Particle systems: the spark's apex and death, 300 alive at 200 a second, emitter regions and
// spread, collisions with restitution and friction, curves over age, compaction, determinism
// whatever the thread count, curl noise without divergence, bad input refused.
#include "kinema/physics/particles.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numbers>

#include "kinema/core/error.h"

namespace kinema {
namespace {

/// One particle at `at` with `velocity`, emitted in the first step.
Emitter one_particle(const Vec3& at, const Vec3& velocity, double lifetime) {
  Emitter e;
  e.position = at;
  e.velocity = velocity;
  e.lifetime = lifetime;
  e.rate = 0;
  e.burst = 1;
  return e;
}

TEST(Particles, SparkPeaksAt0816sAt245By427AndDiesAt45By1975) {
  // Emitted at (0, 1) m with (3, 8) m/s, lifetime 1.5 s, gravity only. Exact: x = 3t,
  // y = 1 + 8t − 4.9t²; the apex at t = 8/9.8 = 0.816 s, (2.45, 4.27); at 1.5 s (4.5, 1.975),
  // still in the air (it would land at 1.75 s). Semi-implicit Euler at h = 0.1 ms is within
  // ½·g·h·t = 0.7 mm of that.
  const double h = 1e-4;
  ParticleSystemOptions o;
  o.emitters = {one_particle({0, 1, 0}, {3, 8, 0}, 1.5)};
  o.forces = {ForceField{}};
  ParticleSystem system(o);
  double apex_t = 0, apex_x = 0, apex_y = -1, last_x = 0, last_y = 0, last_t = 0;
  while (true) {
    system.step(h);
    if (system.particles().count() == 0) break;
    const Vec3 p = system.particles().position(0);
    if (p.y > apex_y) apex_t = system.time(), apex_x = p.x, apex_y = p.y;
    last_x = p.x, last_y = p.y, last_t = system.time();
  }
  EXPECT_NEAR(8 / 9.8, 0.816, 0.0005);
  EXPECT_NEAR(apex_t, 0.816, 0.0005);
  EXPECT_NEAR(apex_x, 3 * 8 / 9.8, 0.001);
  EXPECT_NEAR(apex_y, 1 + 64 / 19.6, 0.001);
  // The printed figures are the exact apex (2.449, 4.2653) to two places; the simulated one is
  // 0.4 mm lower (semi-implicit Euler's ½·g·h·t).
  EXPECT_EQ(std::round(3 * 8 / 9.8 * 100) / 100, 2.45);
  EXPECT_EQ(std::round((1 + 64 / 19.6) * 100) / 100, 4.27);
  EXPECT_NEAR(last_t, 1.5, 1e-9);  // its last step ends at exactly its lifetime
  EXPECT_NEAR(last_x, 4.5, 1e-6);
  EXPECT_NEAR(last_y, 1.975, 0.001);
  EXPECT_GT(last_y, 0);  // still in the air
}

TEST(Particles, TwoHundredASecondLivingOneAndAHalfSecondsKeep300Alive) {
  for (double h : {1 / 100.0, 1 / 60.0, 1 / 200.0}) {
    ParticleSystemOptions o;
    Emitter e;
    e.rate = 200;
    e.lifetime = 1.5;
    o.emitters = {e};
    ParticleSystem system(o);
    for (int i = 0; i < int(std::lround(3 / h)); ++i) system.step(h);
    EXPECT_EQ(system.particles().count(), 300u) << "h = " << h;
    EXPECT_EQ(system.emitted()[0], 600u) << "h = " << h;
  }
}

TEST(Particles, EmittersFillTheirRegionsAndTurnWithinTheSpread) {
  ParticleSystemOptions o;
  Emitter line, sphere, box, mesh;
  line.shape = EmitterShape::Line;
  line.position = {0, 0, 0};
  line.line_end = {2, 0, 0};
  sphere.shape = EmitterShape::Sphere;
  sphere.position = {5, 0, 0};
  sphere.radius = 0.5;
  box.shape = EmitterShape::Box;
  box.position = {-5, 0, 0};
  box.half_extents = {1, 2, 3};
  mesh.shape = EmitterShape::MeshSurface;
  mesh.mesh_vertices = {{0, 10, 0}, {1, 10, 0}, {0, 10, 1}, {0, 10, 0}, {0, 10, 0}};
  mesh.mesh_triangles = {0, 1, 2, 3, 4, 0};  // the second triangle has no area
  for (Emitter* e : {&line, &sphere, &box, &mesh}) {
    e->rate = 1000;
    e->velocity = {0, 0, 1};
    e->spread = 0.3;
    e->lifetime = 10;
  }
  o.emitters = {line, sphere, box, mesh};
  ParticleSystem system(o);
  system.step(1.0);  // 1,000 of each, moved 1 m along their velocity
  const Particles& p = system.particles();
  ASSERT_EQ(p.count(), 4000u);
  for (size_t i = 0; i < p.count(); ++i) {
    const int emitter = int(p.serial[i] >> 48);
    const Vec3 v = p.velocity(i), x = p.position(i) - v;  // where it was emitted
    EXPECT_NEAR(length(v), 1, 1e-12);
    EXPECT_LE(std::acos(std::min(1.0, v.z)), 0.3 + 1e-9);
    switch (emitter) {
      case 0:
        EXPECT_TRUE(x.x >= -1e-12 && x.x <= 2 + 1e-12 && std::abs(x.y) < 1e-12) << i;
        break;
      case 1:
        EXPECT_LE(length(x - Vec3{5, 0, 0}), 0.5 + 1e-12) << i;
        break;
      case 2:
        EXPECT_TRUE(std::abs(x.x + 5) <= 1 && std::abs(x.y) <= 2 && std::abs(x.z) <= 3) << i;
        break;
      default:
        EXPECT_NEAR(x.y, 10, 1e-12);
        EXPECT_TRUE(x.x >= -1e-12 && x.z >= -1e-12 && x.x + x.z <= 1 + 1e-12) << i;
    }
  }
}

TEST(Particles, APlaneBouncesWithRestitutionAndFrictionSlowsButNeverReverses) {
  ParticleSystemOptions o;
  Collider floor;
  floor.restitution = 0.5;
  floor.friction = 0.1;
  o.colliders = {floor};
  o.emitters = {one_particle({0, 0.05, 0}, {2, -10, 0}, 10)};
  ParticleSystem system(o);
  system.step(0.01);  // moves to y = −0.05: back on the plane, bounced
  const Vec3 v = system.particles().velocity(0);
  EXPECT_NEAR(system.particles().position(0).y, 0, 1e-12);
  EXPECT_NEAR(v.y, 5, 1e-12);             // −0.5 · −10
  EXPECT_NEAR(v.x, 2 - 0.1 * 15, 1e-12);  // friction · |Δv_n| = 0.1 · 15
  // High friction stops the sliding, it does not turn it round.
  o.colliders[0].friction = 10;
  ParticleSystem sticky(o);
  sticky.step(0.01);
  EXPECT_EQ(sticky.particles().velocity(0).x, 0);
}

TEST(Particles, NothingEndsInsideASphereABoxOrACapsule) {
  ParticleSystemOptions o;
  Collider sphere, box, capsule;
  sphere.shape = ColliderShape::Sphere;
  sphere.a = {0, 0, 0};
  sphere.radius = 0.5;
  box.shape = ColliderShape::Box;
  box.a = {2, 0, 0};
  box.half_extents = {0.3, 0.4, 0.5};
  box.rotation = normalize(Quat{0.2, 0.3, 0.1, 0.9});
  capsule.shape = ColliderShape::Capsule;
  capsule.a = {-2, -0.5, 0};
  capsule.b = {-2, 0.5, 0.2};
  capsule.radius = 0.3;
  o.colliders = {sphere, box, capsule};
  Emitter rain;
  rain.shape = EmitterShape::Box;
  rain.position = {0, 2, 0};
  rain.half_extents = {3, 0.5, 1};
  rain.rate = 2000;
  rain.lifetime = 3;
  o.emitters = {rain};
  o.forces = {ForceField{}};
  ParticleSystem system(o);
  for (int s = 0; s < 60; ++s) {
    system.step(1 / 60.0);
    const Particles& p = system.particles();
    for (size_t i = 0; i < p.count(); ++i) {
      const Vec3 x = p.position(i);
      EXPECT_GE(length(x - sphere.a), 0.5 - 1e-9);
      const Vec3 local = rotate(conjugate(box.rotation), x - box.a);
      EXPECT_FALSE(std::abs(local.x) < 0.3 - 1e-9 && std::abs(local.y) < 0.4 - 1e-9 &&
                   std::abs(local.z) < 0.5 - 1e-9);
      const Vec3 axis = capsule.b - capsule.a;
      const double t = std::clamp(dot(x - capsule.a, axis) / dot(axis, axis), 0.0, 1.0);
      EXPECT_GE(length(x - (capsule.a + axis * t)), 0.3 - 1e-9);
    }
  }
}

TEST(Particles, AttributesFollowTheirCurvesOverAge) {
  ParticleSystemOptions o;
  o.emitters = {one_particle({0, 0, 0}, {0, 0, 0}, 2)};
  o.attributes.size = {{0, 1}, {1, 0.2f}};       // shrinks
  o.attributes.colour[0] = {{0, 1}, {1, 0.5f}};  // white → dark red
  o.attributes.colour[1] = {{0, 1}, {1, 0}};
  o.attributes.opacity = {{0, 1}, {0.5f, 1, 1}};  // mismatched: refused
  EXPECT_THROW(ParticleSystem{o}, Error);
  o.attributes.opacity = {{0.5f, 1}, {1, 0}};
  ParticleSystem system(o);
  system.step(0.5);  // u = 0.25
  const Particles& p = system.particles();
  EXPECT_NEAR(p.size[0], 0.8f, 1e-6);
  EXPECT_NEAR(p.r[0], 0.875f, 1e-6);
  EXPECT_NEAR(p.g[0], 0.75f, 1e-6);
  EXPECT_NEAR(p.b[0], 1.0f, 1e-6);        // no curve: 1
  EXPECT_NEAR(p.opacity[0], 1.0f, 1e-6);  // before its first key
  system.step(1.0);                       // u = 0.75
  EXPECT_NEAR(p.size[0], 0.4f, 1e-6);
  EXPECT_NEAR(p.opacity[0], 0.5f, 1e-6);
}

TEST(Particles, TheDeadAreRemovedAndTheLivingKeepTheirOrder) {
  ParticleSystemOptions o;
  Emitter e;
  e.rate = 100;
  e.lifetime = 0.5;
  e.lifetime_jitter = 0.9;  // 0.05 – 0.95 s
  e.seed = 42;
  o.emitters = {e};
  ParticleSystem system(o);
  for (int s = 0; s < 100; ++s) {
    system.step(0.01);
    const Particles& p = system.particles();
    for (size_t i = 1; i < p.count(); ++i) EXPECT_LT(p.serial[i - 1], p.serial[i]);
    for (size_t i = 0; i < p.count(); ++i) EXPECT_LE(p.age[i], p.lifetime[i] + 1e-9);
  }
}

TEST(Particles, BitIdenticalWhateverTheThreadCount) {
  auto run = [](int threads) {
    ParticleSystemOptions o;
    Emitter e;
    e.shape = EmitterShape::Sphere;
    e.radius = 1;
    e.rate = 60000;
    e.velocity = {0, 3, 0};
    e.spread = 1;
    e.speed_jitter = 0.5;
    e.lifetime = 2;
    e.lifetime_jitter = 0.5;
    o.emitters = {e};
    ForceField curl;
    curl.kind = ForceKind::CurlNoise;
    curl.strength = 4;
    curl.speed = 0.3;
    ForceField vortex;
    vortex.kind = ForceKind::Vortex;
    vortex.vector = {0, 1, 0};
    vortex.strength = 2;
    o.forces = {ForceField{}, curl, vortex};
    Collider floor;
    floor.a = {0, -1, 0};
    o.colliders = {floor};
    o.threads = threads;
    ParticleSystem system(o);
    for (int s = 0; s < 20; ++s) system.step(1 / 60.0);
    return system.particles();
  };
  const Particles one = run(1), two = run(2);
  ASSERT_GT(one.count(), 10000u);
  EXPECT_EQ(one.px, two.px);
  EXPECT_EQ(one.vy, two.vy);
  EXPECT_EQ(one.serial, two.serial);
}

TEST(Particles, ForcesPointWhereTheyShould) {
  auto accel_of = [](ForceField f, const Vec3& x, const Vec3& v) {
    ParticleSystemOptions o;
    o.emitters = {one_particle(x, v, 10)};
    o.forces = {f};
    ParticleSystem s(o);
    s.step(1e-6);
    return (s.particles().velocity(0) - v) / 1e-6;
  };
  ForceField drag{ForceKind::Drag, {}, {}, 0.5};
  EXPECT_NEAR(accel_of(drag, {0, 0, 0}, {2, 0, 0}).x, -1, 1e-9);
  ForceField wind{ForceKind::Wind, {4, 0, 0}, {}, 0.5};
  EXPECT_NEAR(accel_of(wind, {0, 0, 0}, {2, 0, 0}).x, 1, 1e-9);
  ForceField attractor{ForceKind::Attractor, {}, {0, 0, 0}, 3, 1};
  const Vec3 pull = accel_of(attractor, {0.5, 0, 0}, {0, 0, 0});
  EXPECT_NEAR(pull.x, -3, 1e-6);
  EXPECT_NEAR(length(accel_of(attractor, {2, 0, 0}, {0, 0, 0})), 0, 1e-9);  // beyond its radius
  ForceField vortex{ForceKind::Vortex, {0, 1, 0}, {0, 0, 0}, 2};
  const Vec3 swirl = accel_of(vortex, {1, 0, 0}, {0, 0, 0});
  EXPECT_NEAR(swirl.z, -2, 1e-6);  // (0, 1, 0) × (1, 0, 0) = (0, 0, −1)
}

TEST(Particles, CurlNoiseHasNoDivergence) {
  double largest = 0, typical = 0;
  for (int i = 0; i < 200; ++i) {
    const Vec3 p{0.37 * i, 0.11 * i + 0.5, -0.23 * i};
    const double e = 1e-3;
    const double div = (curl_noise(p + Vec3{e, 0, 0}).x - curl_noise(p - Vec3{e, 0, 0}).x +
                        curl_noise(p + Vec3{0, e, 0}).y - curl_noise(p - Vec3{0, e, 0}).y +
                        curl_noise(p + Vec3{0, 0, e}).z - curl_noise(p - Vec3{0, 0, e}).z) /
                       (2 * e);
    largest = std::max(largest, std::abs(div));
    typical += length(curl_noise(p)) / 200;
  }
  EXPECT_GT(typical, 0.3);                                // it moves things
  EXPECT_LT(largest, 1e-3 * typical);                     // but neither gathers nor spreads them
  EXPECT_LE(std::abs(gradient_noise({0, 0, 0})), 1e-12);  // 0 on the lattice
}

TEST(Particles, BadInputIsRefusedNamingWhat) {
  auto message = [](const ParticleSystemOptions& o) {
    try {
      ParticleSystem s(o);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  ParticleSystemOptions o;
  Emitter e;
  e.velocity = {std::numeric_limits<double>::quiet_NaN(), 0, 0};
  o.emitters = {e};
  EXPECT_NE(message(o).find("emitter 0 velocity"), std::string::npos) << message(o);
  e.velocity = {0, 0, 0};
  e.lifetime = 0;
  o.emitters = {e};
  EXPECT_NE(message(o).find("lifetime"), std::string::npos);
  e.lifetime = 1;
  e.shape = EmitterShape::MeshSurface;
  e.mesh_vertices = {{0, 0, 0}, {1, 0, 0}};
  e.mesh_triangles = {0, 1, 2};
  o.emitters = {e};
  EXPECT_NE(message(o).find("indexes past"), std::string::npos) << message(o);
  e.mesh_vertices.push_back({2, 0, 0});  // collinear: no area
  o.emitters = {e};
  EXPECT_NE(message(o).find("no area"), std::string::npos) << message(o);
  o.emitters = {};
  Collider capsule;
  capsule.shape = ColliderShape::Capsule;
  o.colliders = {capsule};
  EXPECT_NE(message(o).find("collider 0"), std::string::npos) << message(o);
  o.colliders = {};
  ForceField vortex{ForceKind::Vortex, {0, 0, 0}};
  o.forces = {vortex};
  EXPECT_NE(message(o).find("force 0"), std::string::npos) << message(o);
  ParticleSystem empty(ParticleSystemOptions{});
  EXPECT_THROW(empty.step(0), Error);
  EXPECT_THROW(empty.step(std::numeric_limits<double>::infinity()), Error);
}

TEST(Particles, AnEmitterAddedLaterBurstsOnceInTheNextStep) {
  ParticleSystemOptions o;
  o.forces.push_back({ForceKind::Gravity, {0, -9.81, 0}});
  o.threads = 1;
  ParticleSystem system(o);
  for (int i = 0; i < 10; ++i) system.step(0.01);
  Emitter e;
  e.position = {1, 2, 3};
  e.rate = 0;
  e.burst = 50;
  e.velocity = {0, 5, 0};
  e.spread = 1;
  e.lifetime = 1;
  EXPECT_EQ(system.add_emitter(e), 0u);
  system.step(0.01);
  const Particles& p = system.particles();
  ASSERT_EQ(p.count(), 50u);
  for (size_t k = 0; k < p.count(); ++k) {
    EXPECT_EQ(p.serial[k] >> 48, 0u);
    EXPECT_LT(distance(p.position(k), Vec3{1, 2, 3}), 0.06);  // one step of at most 5 m/s
  }
  for (int i = 0; i < 20; ++i) system.step(0.01);
  EXPECT_EQ(system.particles().count(), 50u);  // no second burst
  EXPECT_EQ(system.emitted()[0], 50u);
  Emitter bad = e;
  bad.lifetime = 0;
  EXPECT_THROW(system.add_emitter(bad), Error);
  EXPECT_EQ(system.emitted().size(), 1u);  // nothing added
}

}  // namespace
}  // namespace kinema
