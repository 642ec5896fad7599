// Jolt Physics's rigid bodies on kinema_rigid_bench's scenes (bench/rigid_bench.h): the same
// bodies, shapes, masses, materials, damping, steps and solver passes (Jolt's PhysicsSettings:
// 10 velocity passes, and the scene's position passes or Jolt's default 2), one collision step a
// 1/60 s step, discrete collision (Jolt's PerformanceTest default). Bodies linked by a joint, or
// named in the scene's no_collision pairs, never collide, through a GroupFilterTable per set of
// linked bodies (as Jolt's ragdolls do). Cone–twist joints are SwingTwistConstraints whose motors
// (EMotorState::Position) hold the start pose, as Jolt's Ragdoll::DriveToPoseUsingMotors does.
// Each scene runs on 1 and 2 threads of a JobSystemThreadPool (1: all on the calling thread).
// Only Jolt's public API; built when KINEMA_JOLT_ROOT names a Jolt build tree
// (bench/CMakeLists.txt):
//   git clone https://github.com/jrouwe/JoltPhysics /tmp/JoltPhysics
//   git -C /tmp/JoltPhysics checkout v5.5.0   # 23dadd0e603f1b321142d4c74df07fce85064989
//   cmake -S /tmp/JoltPhysics/Build -B /tmp/jolt-build -G Ninja -DCMAKE_BUILD_TYPE=Release (one
//   line:)
//     -DUSE_AVX=OFF -DUSE_AVX2=OFF -DUSE_AVX512=OFF -DUSE_LZCNT=OFF -DUSE_TZCNT=OFF
//     -DUSE_F16C=OFF -DUSE_FMADD=OFF -DINTERPROCEDURAL_OPTIMIZATION=OFF
//     -DGENERATE_DEBUG_SYMBOLS=OFF -DPROFILER_IN_DEBUG_AND_RELEASE=OFF
//     -DDEBUG_RENDERER_IN_DEBUG_AND_RELEASE=OFF -DFLOATING_POINT_EXCEPTIONS_ENABLED=OFF
//     -DTARGET_UNIT_TESTS=OFF -DTARGET_HELLO_WORLD=OFF -DTARGET_PERFORMANCE_TEST=OFF
//     -DTARGET_SAMPLES=OFF -DTARGET_VIEWER=OFF
//   cmake --build /tmp/jolt-build --target Jolt
//   cmake -S . -B build/jolt -G Ninja -DCMAKE_BUILD_TYPE=Release -DKINEMA_JOLT_ROOT=/tmp/jolt-build
// (SSE4.2 without AVX, as kinema's x86-64-v2; Jolt's own -O3; no profiler, debug renderer or
// floating-point-exception checks, as in its Distribution builds.)
#include <Jolt/Jolt.h>
// Jolt.h first: it defines what the other headers need.
#include <Jolt/Core/Factory.h>
#include <Jolt/Core/JobSystemThreadPool.h>
#include <Jolt/Core/TempAllocator.h>
#include <Jolt/Physics/Body/BodyCreationSettings.h>
#include <Jolt/Physics/Collision/GroupFilterTable.h>
#include <Jolt/Physics/Collision/Shape/BoxShape.h>
#include <Jolt/Physics/Collision/Shape/CapsuleShape.h>
#include <Jolt/Physics/Collision/Shape/OffsetCenterOfMassShape.h>
#include <Jolt/Physics/Collision/Shape/SphereShape.h>
#include <Jolt/Physics/Constraints/PointConstraint.h>
#include <Jolt/Physics/Constraints/SwingTwistConstraint.h>
#include <Jolt/Physics/PhysicsSettings.h>
#include <Jolt/Physics/PhysicsSystem.h>
#include <Jolt/RegisterTypes.h>
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <numeric>
#include <vector>

#include "rigid_bench.h"

namespace {

using namespace kinema::rigid_bench;

// Two object layers, as Jolt's samples and PerformanceTest use: static bodies only meet moving
// ones, each layer its own broad-phase tree.
constexpr JPH::ObjectLayer kStatic = 0, kMoving = 1;

class BroadPhaseLayers final : public JPH::BroadPhaseLayerInterface {
 public:
  JPH::uint GetNumBroadPhaseLayers() const override { return 2; }
  JPH::BroadPhaseLayer GetBroadPhaseLayer(JPH::ObjectLayer layer) const override {
    return JPH::BroadPhaseLayer(JPH::BroadPhaseLayer::Type(layer));
  }
#if defined(JPH_EXTERNAL_PROFILE) || defined(JPH_PROFILE_ENABLED)
  const char* GetBroadPhaseLayerName(JPH::BroadPhaseLayer layer) const override {
    return layer.GetValue() == kStatic ? "static" : "moving";
  }
#endif
};

class ObjectVsBroadPhase final : public JPH::ObjectVsBroadPhaseLayerFilter {
 public:
  bool ShouldCollide(JPH::ObjectLayer layer, JPH::BroadPhaseLayer other) const override {
    return layer == kMoving || other.GetValue() == kMoving;
  }
};

class ObjectPairs final : public JPH::ObjectLayerPairFilter {
 public:
  bool ShouldCollide(JPH::ObjectLayer a, JPH::ObjectLayer b) const override {
    return a == kMoving || b == kMoving;
  }
};

// Jolt's allocator, factory and types, once per program; refuses a library built with other
// JPH_* defines than this file (Jolt's own version and feature check).
void init_jolt() {
  static const bool done = [] {
    JPH::RegisterDefaultAllocator();
    if (!JPH::VerifyJoltVersionID()) {
      std::fprintf(stderr,
                   "jolt_rigid_peer: the Jolt library was built with other JPH_* defines (or "
                   "another version) than kinema_rigid_bench: rebuild it, or configure kinema "
                   "again against its build tree (KINEMA_JOLT_ROOT)\n");
      std::abort();
    }
    JPH::Factory::sInstance = new JPH::Factory();
    JPH::RegisterTypes();
    return true;
  }();
  (void)done;
}

JPH::Vec3 vec(const std::array<double, 3>& v) {
  return JPH::Vec3(float(v[0]), float(v[1]), float(v[2]));
}

JPH::RefConst<JPH::Shape> shape_of(const BodySpec& b) {
  JPH::RefConst<JPH::Shape> shape;
  switch (b.kind) {
    case Kind::Box: {
      const float smallest = float(std::min({b.hx, b.hy, b.hz}));
      shape = new JPH::BoxShape(JPH::Vec3(float(b.hx), float(b.hy), float(b.hz)),
                                std::min(float(b.jolt_convex_radius), smallest));
      break;
    }
    case Kind::Sphere:
      shape = new JPH::SphereShape(float(b.radius));
      break;
    case Kind::Capsule:
      shape = new JPH::CapsuleShape(float(b.half_height), float(b.radius));
      break;
  }
  // A centre of mass off the shape's centre (the ragdoll's tapered parts): shift it, so that the
  // body's frame stays the shape's.
  if (b.explicit_inertia && (b.cx != 0 || b.cy != 0 || b.cz != 0))
    shape = JPH::OffsetCenterOfMassShapeSettings(JPH::Vec3(float(b.cx), float(b.cy), float(b.cz)),
                                                 shape.GetPtr())
                .Create()
                .Get();
  return shape;
}

// The sets of bodies linked by joints or no_collision pairs (union–find), each with a
// GroupFilterTable that keeps those pairs apart: ragdolls get one group each, as in Jolt.
void set_collision_groups(const Scene& scene, std::vector<JPH::BodyCreationSettings>& settings) {
  std::vector<std::pair<int, int>> pairs = scene.no_collision;
  for (const BallSpec& j : scene.joints) pairs.push_back({j.a, j.b});
  for (const ConeTwistSpec& j : scene.cone_twists) pairs.push_back({j.a, j.b});
  if (pairs.empty()) return;
  const std::size_t n = scene.bodies.size();
  std::vector<std::size_t> root(n);
  std::iota(root.begin(), root.end(), std::size_t(0));
  auto find = [&](std::size_t i) {
    while (root[i] != i) i = root[i] = root[root[i]];
    return i;
  };
  for (const auto& [a, b] : pairs) root[find(std::size_t(a))] = find(std::size_t(b));
  // Each set's members in order are its subgroups 0, 1, 2, …
  std::vector<JPH::uint> subgroup(n, 0), size(n, 0);
  for (std::size_t i = 0; i < n; ++i) subgroup[i] = size[find(i)]++;
  std::vector<JPH::Ref<JPH::GroupFilterTable>> tables(n);
  for (const auto& [a, b] : pairs) {
    const std::size_t r = find(std::size_t(a));
    if (!tables[r]) tables[r] = new JPH::GroupFilterTable(size[r]);
    tables[r]->DisableCollision(subgroup[std::size_t(a)], subgroup[std::size_t(b)]);
  }
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t r = find(i);
    if (tables[r])
      settings[i].mCollisionGroup =
          JPH::CollisionGroup(tables[r], JPH::CollisionGroup::GroupID(r), subgroup[i]);
  }
}

struct JoltWorld {
  BroadPhaseLayers broad_phase_layers;
  ObjectVsBroadPhase object_vs_broad_phase;
  ObjectPairs object_pairs;
  JPH::PhysicsSystem system;
  std::vector<JPH::BodyID> ids;
  std::vector<JPH::Vec3> pivots_a, pivots_b;  // every joint's anchors in its bodies' frames
  std::vector<std::pair<int, int>> linked;    // every joint's bodies

  explicit JoltWorld(const Scene& scene) {
    // PerformanceTest's capacities (10,240 bodies, 65,536 pairs, 20,480 contact constraints).
    system.Init(10240, 0, 65536, 20480, broad_phase_layers, object_vs_broad_phase, object_pairs);
    system.SetGravity(JPH::Vec3(0, float(-kGravity), 0));
    JPH::PhysicsSettings physics = system.GetPhysicsSettings();
    physics.mNumVelocitySteps = JPH::uint(scene.velocity_iterations);
    if (scene.position_iterations > 0)
      physics.mNumPositionSteps = JPH::uint(scene.position_iterations);
    physics.mAllowSleeping = scene.sleeping;
    system.SetPhysicsSettings(physics);

    std::vector<JPH::BodyCreationSettings> settings;
    for (const BodySpec& b : scene.bodies) {
      // Capsules along x: Jolt's run along y, so turn them a quarter about z, as kinema does.
      JPH::Quat q = JPH::Quat(float(b.qx), float(b.qy), float(b.qz), float(b.qw)).Normalized();
      if (b.along_x) q = q * JPH::Quat::sRotation(JPH::Vec3::sAxisZ(), 0.5f * JPH::JPH_PI);
      const bool dynamic = b.mass > 0;
      JPH::BodyCreationSettings s(shape_of(b), JPH::RVec3(b.x, b.y, b.z), q,
                                  dynamic ? JPH::EMotionType::Dynamic : JPH::EMotionType::Static,
                                  dynamic ? kMoving : kStatic);
      if (dynamic) {
        if (b.explicit_inertia) {
          s.mOverrideMassProperties = JPH::EOverrideMassProperties::MassAndInertiaProvided;
          s.mMassPropertiesOverride.mMass = float(b.mass);
          const auto& i = b.inertia;  // xx, yy, zz, xy, xz, yz
          JPH::Mat44 inertia = JPH::Mat44::sIdentity();
          inertia.SetColumn3(0, JPH::Vec3(float(i[0]), float(i[3]), float(i[4])));
          inertia.SetColumn3(1, JPH::Vec3(float(i[3]), float(i[1]), float(i[5])));
          inertia.SetColumn3(2, JPH::Vec3(float(i[4]), float(i[5]), float(i[2])));
          s.mMassPropertiesOverride.mInertia = inertia;
        } else {  // the shape's inertia at uniform density, scaled to the mass
          s.mOverrideMassProperties = JPH::EOverrideMassProperties::CalculateInertia;
          s.mMassPropertiesOverride.mMass = float(b.mass);
        }
      }
      s.mLinearVelocity = JPH::Vec3(float(b.vx), float(b.vy), float(b.vz));
      s.mFriction = float(b.friction);
      s.mRestitution = float(b.restitution);
      s.mLinearDamping = float(b.linear_damping);
      s.mAngularDamping = float(b.angular_damping);
      s.mAllowSleeping = scene.sleeping;
      s.mMotionQuality = JPH::EMotionQuality::Discrete;
      settings.push_back(s);
    }
    set_collision_groups(scene, settings);
    JPH::BodyInterface& bodies = system.GetBodyInterface();
    for (const JPH::BodyCreationSettings& s : settings)
      ids.push_back(bodies.CreateAndAddBody(s, s.mMotionType == JPH::EMotionType::Static
                                                   ? JPH::EActivation::DontActivate
                                                   : JPH::EActivation::Activate));

    for (const BallSpec& j : scene.joints) {
      JPH::PointConstraintSettings c;
      c.mSpace = JPH::EConstraintSpace::WorldSpace;
      c.mPoint1 = c.mPoint2 = JPH::RVec3(j.x, j.y, j.z);
      system.AddConstraint(
          bodies.CreateConstraint(&c, ids[std::size_t(j.a)], ids[std::size_t(j.b)]));
      const JPH::RVec3 at(j.x, j.y, j.z);
      pivots_a.push_back(
          JPH::Vec3(bodies.GetWorldTransform(ids[std::size_t(j.a)]).Inversed() * at));
      pivots_b.push_back(
          JPH::Vec3(bodies.GetWorldTransform(ids[std::size_t(j.b)]).Inversed() * at));
      linked.push_back({j.a, j.b});
    }
    for (const ConeTwistSpec& j : scene.cone_twists) {
      // Frames in the bodies' shape frames, which Jolt wants about their centres of mass.
      const BodySpec& a = scene.bodies[std::size_t(j.a)];
      const BodySpec& b = scene.bodies[std::size_t(j.b)];
      const JPH::Vec3 com_a = a.explicit_inertia ? JPH::Vec3(float(a.cx), float(a.cy), float(a.cz))
                                                 : JPH::Vec3::sZero();
      const JPH::Vec3 com_b = b.explicit_inertia ? JPH::Vec3(float(b.cx), float(b.cy), float(b.cz))
                                                 : JPH::Vec3::sZero();
      JPH::SwingTwistConstraintSettings c;
      c.mSpace = JPH::EConstraintSpace::LocalToBodyCOM;
      c.mPosition1 = JPH::RVec3(vec(j.anchor_a) - com_a);
      c.mPosition2 = JPH::RVec3(vec(j.anchor_b) - com_b);
      c.mTwistAxis1 = vec(j.twist_a).Normalized();
      c.mPlaneAxis1 = vec(j.plane_a).Normalized();
      c.mTwistAxis2 = vec(j.twist_b).Normalized();
      c.mPlaneAxis2 = vec(j.plane_b).Normalized();
      c.mNormalHalfConeAngle = float(j.normal_half_cone);
      c.mPlaneHalfConeAngle = float(j.plane_half_cone);
      c.mTwistMinAngle = float(j.twist_min);
      c.mTwistMaxAngle = float(j.twist_max);
      c.mMaxFrictionTorque = float(j.friction_torque);
      for (JPH::MotorSettings* m : {&c.mSwingMotorSettings, &c.mTwistMotorSettings}) {
        m->mSpringSettings = JPH::SpringSettings(JPH::ESpringMode::FrequencyAndDamping,
                                                 float(j.motor_frequency), float(j.motor_damping));
        m->SetTorqueLimit(float(j.motor_torque));
      }
      auto* constraint = static_cast<JPH::SwingTwistConstraint*>(
          bodies.CreateConstraint(&c, ids[std::size_t(j.a)], ids[std::size_t(j.b)]));
      if (j.motor) {  // hold the start pose: b's rotation relative to a's (R2 = R1 · target)
        constraint->SetSwingMotorState(JPH::EMotorState::Position);
        constraint->SetTwistMotorState(JPH::EMotorState::Position);
        constraint->SetTargetOrientationBS(bodies.GetRotation(ids[std::size_t(j.a)]).Conjugated() *
                                           bodies.GetRotation(ids[std::size_t(j.b)]));
      }
      system.AddConstraint(constraint);
      pivots_a.push_back(vec(j.anchor_a));
      pivots_b.push_back(vec(j.anchor_b));
      linked.push_back({j.a, j.b});
    }
    // As the PerformanceTest does before stepping: no expensive first step.
    system.OptimizeBroadPhase();
  }

  double max_joint_error() const {
    const JPH::BodyInterface& bodies = system.GetBodyInterfaceNoLock();
    double worst = 0;
    for (std::size_t k = 0; k < linked.size(); ++k) {
      const JPH::RVec3 xa =
          bodies.GetWorldTransform(ids[std::size_t(linked[k].first)]) * pivots_a[k];
      const JPH::RVec3 xb =
          bodies.GetWorldTransform(ids[std::size_t(linked[k].second)]) * pivots_b[k];
      worst = std::max(worst, double((xa - xb).Length()));
    }
    return worst;
  }

  double kinetic_energy() const {
    const JPH::BodyInterface& bodies = system.GetBodyInterfaceNoLock();
    const JPH::BodyLockInterface& locks = system.GetBodyLockInterfaceNoLock();
    double e = 0;
    for (JPH::BodyID id : ids) {
      JPH::BodyLockRead lock(locks, id);
      const JPH::Body& body = lock.GetBody();
      if (!body.IsDynamic()) continue;
      const JPH::Vec3 v = bodies.GetLinearVelocity(id), w = bodies.GetAngularVelocity(id);
      const float inverse_mass = body.GetMotionProperties()->GetInverseMass();
      const JPH::Vec3 l = body.GetInverseInertia().Inversed3x3().Multiply3x3(w);
      e += 0.5 * double(v.LengthSq()) / double(inverse_mass) + 0.5 * double(w.Dot(l));
    }
    return e;
  }
};

enum class Measure { Drift, JointSeparation, Escaped, EnergyRatio, Pile };

void run_scene(benchmark::State& state, const Scene& scene, Measure what) {
  init_jolt();
  const int threads = int(state.range(0));
  // PerformanceTest's temp allocator is 32 MB; twice that, so that no scene runs out.
  JPH::TempAllocatorImpl temp(64 * 1024 * 1024);
  // threads − 1 workers: the calling thread works too.
  JPH::JobSystemThreadPool jobs(JPH::cMaxPhysicsJobs, JPH::cMaxPhysicsBarriers, threads - 1);
  double measure = 0, slowest_step = 0, stepping = 0, floor_mm = 0, creep = 0, awake = 0;
  std::int64_t steps = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto w = std::make_unique<JoltWorld>(scene);
    const double energy0 = w->kinetic_energy();
    double worst_joint = 0, highest_energy = 0;
    std::vector<JPH::RVec3> settled;
    state.ResumeTiming();
    for (int i = 0; i < scene.steps; ++i) {
      if (i == scene.settle_steps && !scene.rest.empty()) {
        state.PauseTiming();
        for (JPH::BodyID id : w->ids)
          settled.push_back(w->system.GetBodyInterfaceNoLock().GetPosition(id));
        state.ResumeTiming();
      }
      const auto before = std::chrono::steady_clock::now();
      const JPH::EPhysicsUpdateError error = w->system.Update(float(kStep), 1, &temp, &jobs);
      const double step_seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - before).count();
      slowest_step = std::max(slowest_step, step_seconds);
      stepping += step_seconds;
      if (error != JPH::EPhysicsUpdateError::None) {
        state.SkipWithError("Jolt ran out of room for contacts or pairs (PhysicsSystem::Init)");
        return;
      }
      if (what == Measure::JointSeparation || what == Measure::EnergyRatio ||
          what == Measure::Pile) {
        state.PauseTiming();
        worst_joint = std::max(worst_joint, w->max_joint_error());
        if (what == Measure::EnergyRatio)
          highest_energy = std::max(highest_energy, w->kinetic_energy());
        state.ResumeTiming();
      }
    }
    steps += scene.steps;
    state.PauseTiming();
    bool finite = true;
    double lowest = 0;
    measure = creep = awake = 0;
    const JPH::BodyInterface& bodies = w->system.GetBodyInterfaceNoLock();
    for (std::size_t k = 0; k < w->ids.size(); ++k) {
      const BodySpec& b = scene.bodies[k];
      const JPH::RVec3 p = bodies.GetPosition(w->ids[k]);  // the shape's frame
      const JPH::Quat q = bodies.GetRotation(w->ids[k]);
      const double x = p.GetX(), y = p.GetY(), z = p.GetZ();
      if (!std::isfinite(x) || !std::isfinite(y) || !std::isfinite(z)) finite = false;
      if (what == Measure::Drift) {
        const std::array<double, 3> from =
            scene.rest.empty() ? std::array<double, 3>{b.x, b.y, b.z} : scene.rest[k];
        measure = std::max(measure, std::hypot(x - from[0], y - from[1], z - from[2]));
        if (!settled.empty()) creep = std::max(creep, double((p - settled[k]).Length()));
      }
      if (what == Measure::Escaped && (std::abs(x) > 3.1 || std::abs(z) > 3.1 || y < 0)) ++measure;
      if (what == Measure::Pile && b.mass > 0) {
        lowest = std::min(lowest, lowest_point(b, y, q.GetX(), q.GetY(), q.GetZ(), q.GetW()));
        awake += bodies.IsActive(w->ids[k]) ? 1 : 0;
      }
    }
    if (what == Measure::JointSeparation || what == Measure::Pile) measure = worst_joint;
    if (what == Measure::EnergyRatio) measure = highest_energy / energy0;
    floor_mm = -1000 * lowest;
    if (!finite) measure = -1;
    w.reset();
    state.ResumeTiming();
  }
  // The steps' own time, read around each step: pausing the benchmark's timer for the per-step
  // measures costs microseconds a step on this machine, which would weigh on the fastest scenes.
  state.counters["us_per_step"] = 1e6 * stepping / double(std::max<std::int64_t>(steps, 1));
  state.counters["measure"] = measure;
  state.counters["slowest_step_ms"] = 1000 * slowest_step;
  state.counters["threads"] = threads;
  if (!scene.rest.empty()) state.counters["creep_mm"] = 1000 * creep;
  if (what == Measure::Pile) {
    state.counters["floor_mm"] = floor_mm;
    state.counters["awake"] = awake;
  }
}

void BM_Jolt_Pyramid(benchmark::State& state) { run_scene(state, pyramid(), Measure::Drift); }
void BM_Jolt_Chain(benchmark::State& state) { run_scene(state, chain(), Measure::JointSeparation); }
void BM_Jolt_Pour(benchmark::State& state) { run_scene(state, pour(), Measure::Escaped); }
void BM_Jolt_Crates(benchmark::State& state) { run_scene(state, crates(), Measure::EnergyRatio); }
// Jolt's own PerformanceTest scenes, with the counters of BM_Kinema_JoltPyramid and
// BM_Kinema_RagdollPile (bench/rigid_bench.cpp).
void BM_Jolt_JoltPyramid(benchmark::State& state) {
  run_scene(state, jolt_pyramid(), Measure::Drift);
}
void BM_Jolt_RagdollPile(benchmark::State& state) {
  run_scene(state, ragdoll_pile(), Measure::Pile);
}

// The argument is the number of threads stepping the world.
BENCHMARK(BM_Jolt_Pyramid)->ArgName("threads")->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Jolt_Chain)->ArgName("threads")->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Jolt_Pour)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
BENCHMARK(BM_Jolt_Crates)->ArgName("threads")->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Jolt_JoltPyramid)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
BENCHMARK(BM_Jolt_RagdollPile)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

}  // namespace
