// Bullet's rigid bodies on kinema_rigid_bench's scenes (bench/rigid_bench.h): the same bodies,
// masses, friction (0.5), no restitution, 1/60 s steps without substeps, 10 solver iterations;
// btDbvtBroadphase, btSequentialImpulseConstraintSolver, ball joints as btPoint2PointConstraint.
// Only Bullet's public API. Its default collision margin (0.04 m) is left on, as users run it.
#include <benchmark/benchmark.h>
#include <btBulletDynamicsCommon.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <vector>

#include "rigid_bench.h"

namespace {

using namespace kinema::rigid_bench;

struct BulletWorld {
  btDefaultCollisionConfiguration configuration;
  btCollisionDispatcher dispatcher{&configuration};
  btDbvtBroadphase broadphase;
  btSequentialImpulseConstraintSolver solver;
  btDiscreteDynamicsWorld world{&dispatcher, &broadphase, &solver, &configuration};
  std::vector<std::unique_ptr<btCollisionShape>> shapes;
  std::vector<std::unique_ptr<btDefaultMotionState>> states;
  std::vector<std::unique_ptr<btRigidBody>> bodies;
  std::vector<std::unique_ptr<btTypedConstraint>> joints;
  std::vector<btVector3> pivots_a, pivots_b;  // in the bodies' frames

  explicit BulletWorld(const Scene& scene) {
    world.setGravity(btVector3(0, btScalar(-kGravity), 0));
    world.getSolverInfo().m_numIterations = kIterations;
    for (const BodySpec& b : scene.bodies) {
      btCollisionShape* shape = nullptr;
      switch (b.kind) {
        case Kind::Box:
          shape = new btBoxShape(btVector3(btScalar(b.hx), btScalar(b.hy), btScalar(b.hz)));
          break;
        case Kind::Sphere:
          shape = new btSphereShape(btScalar(b.radius));
          break;
        case Kind::Capsule:
          shape = b.along_x ? static_cast<btCollisionShape*>(new btCapsuleShapeX(
                                  btScalar(b.radius), btScalar(2 * b.half_height)))
                            : new btCapsuleShape(btScalar(b.radius), btScalar(2 * b.half_height));
          break;
      }
      shapes.emplace_back(shape);
      btVector3 inertia(0, 0, 0);
      if (b.mass > 0) shape->calculateLocalInertia(btScalar(b.mass), inertia);
      btTransform t;
      t.setIdentity();
      t.setOrigin(btVector3(btScalar(b.x), btScalar(b.y), btScalar(b.z)));
      states.push_back(std::make_unique<btDefaultMotionState>(t));
      btRigidBody::btRigidBodyConstructionInfo info(btScalar(b.mass), states.back().get(), shape,
                                                    inertia);
      info.m_friction = btScalar(kFriction);
      info.m_restitution = 0;
      bodies.push_back(std::make_unique<btRigidBody>(info));
      bodies.back()->setLinearVelocity(btVector3(btScalar(b.vx), btScalar(b.vy), btScalar(b.vz)));
      world.addRigidBody(bodies.back().get());
    }
    for (const BallSpec& j : scene.joints) {
      btRigidBody& a = *bodies[j.a];
      btRigidBody& b = *bodies[j.b];
      const btVector3 at(btScalar(j.x), btScalar(j.y), btScalar(j.z));
      const btVector3 pa = a.getCenterOfMassTransform().inverse() * at;
      const btVector3 pb = b.getCenterOfMassTransform().inverse() * at;
      joints.push_back(std::make_unique<btPoint2PointConstraint>(a, b, pa, pb));
      world.addConstraint(joints.back().get(), true);  // no collision between the linked bodies
      pivots_a.push_back(pa);
      pivots_b.push_back(pb);
    }
  }
  ~BulletWorld() {
    for (auto& j : joints) world.removeConstraint(j.get());
    for (auto& b : bodies) world.removeRigidBody(b.get());
  }

  double max_joint_error(const Scene& scene) const {
    double worst = 0;
    for (std::size_t k = 0; k < scene.joints.size(); ++k) {
      const btVector3 xa = bodies[scene.joints[k].a]->getCenterOfMassTransform() * pivots_a[k];
      const btVector3 xb = bodies[scene.joints[k].b]->getCenterOfMassTransform() * pivots_b[k];
      worst = std::max(worst, double((xa - xb).length()));
    }
    return worst;
  }
  double kinetic_energy() const {
    double e = 0;
    for (const auto& b : bodies) {
      if (b->getInvMass() == 0) continue;
      const btVector3 v = b->getLinearVelocity(), w = b->getAngularVelocity();
      const btVector3 l = b->getInvInertiaTensorWorld().inverse() * w;
      e += 0.5 * double(v.length2()) / double(b->getInvMass()) + 0.5 * double(w.dot(l));
    }
    return e;
  }
};

enum class Measure { Drift, JointSeparation, Escaped, EnergyRatio };

void run_scene(benchmark::State& state, const Scene& scene, Measure what) {
  double measure = 0, slowest_step = 0, stepping = 0;
  std::int64_t steps = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto w = std::make_unique<BulletWorld>(scene);
    const double energy0 = w->kinetic_energy();
    double worst_joint = 0, highest_energy = 0;
    state.ResumeTiming();
    for (int i = 0; i < scene.steps; ++i) {
      const auto before = std::chrono::steady_clock::now();
      w->world.stepSimulation(btScalar(kStep), 0);  // exactly one step of kStep
      const double step_seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - before).count();
      slowest_step = std::max(slowest_step, step_seconds);
      stepping += step_seconds;
      if (what == Measure::JointSeparation || what == Measure::EnergyRatio) {
        state.PauseTiming();
        worst_joint = std::max(worst_joint, w->max_joint_error(scene));
        highest_energy = std::max(highest_energy, w->kinetic_energy());
        state.ResumeTiming();
      }
    }
    steps += scene.steps;
    state.PauseTiming();
    bool finite = true;
    measure = 0;
    for (std::size_t k = 0; k < w->bodies.size(); ++k) {
      const btVector3 p = w->bodies[k]->getCenterOfMassPosition();
      const BodySpec& b = scene.bodies[k];
      if (!std::isfinite(p.x()) || !std::isfinite(p.y()) || !std::isfinite(p.z())) finite = false;
      if (what == Measure::Drift)
        measure = std::max(measure, std::hypot(p.x() - b.x, p.y() - b.y, p.z() - b.z));
      if (what == Measure::Escaped && (std::abs(p.x()) > 3.1 || std::abs(p.z()) > 3.1 || p.y() < 0))
        ++measure;
    }
    if (what == Measure::JointSeparation) measure = worst_joint;
    if (what == Measure::EnergyRatio) measure = highest_energy / energy0;
    if (!finite) measure = -1;
    w.reset();
    state.ResumeTiming();
  }
  // The steps' own time, read around each step: pausing the benchmark's timer for the per-step
  // measures costs microseconds a step on this machine, which would weigh on the fastest scenes.
  state.counters["us_per_step"] = 1e6 * stepping / double(std::max<std::int64_t>(steps, 1));
  state.counters["measure"] = measure;
  state.counters["slowest_step_ms"] = 1000 * slowest_step;
}

void BM_Bullet_Pyramid(benchmark::State& state) { run_scene(state, pyramid(), Measure::Drift); }
void BM_Bullet_Chain(benchmark::State& state) {
  run_scene(state, chain(), Measure::JointSeparation);
}
void BM_Bullet_Pour(benchmark::State& state) { run_scene(state, pour(), Measure::Escaped); }
void BM_Bullet_Crates(benchmark::State& state) { run_scene(state, crates(), Measure::EnergyRatio); }

BENCHMARK(BM_Bullet_Pyramid)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Bullet_Chain)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Bullet_Pour)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_Bullet_Crates)->Unit(benchmark::kMillisecond);

}  // namespace
