// Bullet's soft bodies (btSoftBody) on kinema_cloth_bench's scenes: a patch of the same
// resolution, size and mass made by btSoftBodyHelpers::CreatePatch with its diagonal links,
// Bullet's default material, 10 position iterations, the two-sided aerodynamic model in the same
// wind; the sphere a static rigid body. Only Bullet's public API.
#include <BulletSoftBody/btSoftBodyHelpers.h>
#include <BulletSoftBody/btSoftBodyRigidBodyCollisionConfiguration.h>
#include <BulletSoftBody/btSoftRigidDynamicsWorld.h>
#include <benchmark/benchmark.h>
#include <btBulletDynamicsCommon.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "cloth_bench.h"

namespace {

using namespace kinema::cloth_bench;

struct BulletScene {
  btSoftBodyRigidBodyCollisionConfiguration configuration;
  btCollisionDispatcher dispatcher{&configuration};
  btDbvtBroadphase broadphase;
  btSequentialImpulseConstraintSolver solver;
  btSoftRigidDynamicsWorld world{&dispatcher, &broadphase, &solver, &configuration};
  std::unique_ptr<btSphereShape> sphere_shape;
  std::unique_ptr<btRigidBody> sphere;
  btSoftBody* cloth = nullptr;

  // `perturbation`: −1, 0 or +1 times the wind's or the sphere's perturbation (cloth_bench.h).
  explicit BulletScene(int scene, double perturbation = 0) {
    const btVector3 gravity(0, btScalar(-9.8), 0);
    world.setGravity(gravity);
    btSoftBodyWorldInfo& info = world.getWorldInfo();
    info.m_gravity = gravity;
    info.air_density = btScalar(1.2);
    info.m_sparsesdf.Initialize();
    const btScalar s = btScalar(kSize);
    if (scene == 0) {  // a flag hanging in the xy-plane from y = 1, pinned at its top corners
      cloth = btSoftBodyHelpers::CreatePatch(info, btVector3(0, s, 0), btVector3(s, s, 0),
                                             btVector3(0, 0, 0), btVector3(s, 0, 0), kResolution,
                                             kResolution, 1 + 2, true);
      cloth->m_cfg.aeromodel = btSoftBody::eAeroModel::V_TwoSided;
      cloth->setWindVelocity(btVector3(0, 0, btScalar(kWind + perturbation * kWindPerturbation)));
    } else {  // a horizontal cloth over a sphere
      const btScalar y = btScalar(kDropHeight);
      cloth = btSoftBodyHelpers::CreatePatch(info, btVector3(0, y, 0), btVector3(s, y, 0),
                                             btVector3(0, y, s), btVector3(s, y, s), kResolution,
                                             kResolution, 0, true);
      sphere_shape = std::make_unique<btSphereShape>(btScalar(kSphereRadius));
      btRigidBody::btRigidBodyConstructionInfo body(0, nullptr, sphere_shape.get());
      body.m_startWorldTransform.setOrigin(
          btVector3(s / 2 + btScalar(perturbation * kSpherePerturbation), 0, s / 2));
      sphere = std::make_unique<btRigidBody>(body);
      world.addRigidBody(sphere.get());
    }
    cloth->m_cfg.piterations = 10;
    cloth->setTotalMass(btScalar(kMass));
    world.addSoftBody(cloth);
  }
  ~BulletScene() {
    world.removeSoftBody(cloth);
    delete cloth;
    if (sphere) world.removeRigidBody(sphere.get());
  }
  void step() { world.stepSimulation(btScalar(kStep), 0); }

  /// The largest relative stretch of the grid-neighbour links (rest length = the spacing).
  double largest_stretch() const {
    const double spacing = kSize / (kResolution - 1);
    double worst = 0;
    for (int i = 0; i < cloth->m_links.size(); ++i) {
      const btSoftBody::Link& l = cloth->m_links[i];
      if (std::abs(l.m_rl - spacing) > 0.01 * spacing) continue;
      const double len = (l.m_n[1]->m_x - l.m_n[0]->m_x).length();
      worst = std::max(worst, (len - l.m_rl) / l.m_rl);
    }
    return worst;
  }
};

void BM_BulletCloth(benchmark::State& state) {
  BulletScene scene(int(state.range(0)));
  for (int i = 0; i < kSettleSteps; ++i) scene.step();
  for (auto _ : state) scene.step();
  state.counters["stretch_pct"] = 100 * scene.largest_stretch();
  const StretchOverRun run =
      stretch_over_run([&] { scene.step(); }, [&] { return scene.largest_stretch(); });
  state.counters["stretch_median_pct"] = run.median_pct;
  state.counters["stretch_max_pct"] = run.largest_pct;
  state.counters["stretch_max_of_3_pct"] = largest_over_perturbed_runs(
      run.largest_pct,
      [&](double sign) { return std::make_unique<BulletScene>(int(state.range(0)), sign); },
      [](BulletScene& s) { s.step(); }, [](const BulletScene& s) { return s.largest_stretch(); });
}
BENCHMARK(BM_BulletCloth)->ArgNames({"scene"})->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace
