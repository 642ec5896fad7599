// The stability scenes, each also a benchmark (bench/rigid_bench.h, the same worlds through
// bench/rigid_bench_kinema.h): a pyramid of 105 boxes at rest for 10 s, 1,000 mixed bodies poured
// into a bin, a 50-link chain released horizontally, a truck into 100 crates, and a ragdoll
// tumbling down stairs — each held to its measure: drift, bodies kept in, joint separation, no NaN
// and bounded energy.
#include <gtest/gtest.h>

#include <cmath>

#include "../../bench/rigid_bench_kinema.h"
#include "kinema/io/asset_file.h"
#include "kinema/physics/ragdoll.h"
#include "kinema/skeleton/skeleton.h"
#include "test_paths.h"

namespace kinema {
namespace {

using namespace rigid_bench;

std::vector<Vec3> positions(const RigidWorld& world) {
  std::vector<Vec3> out;
  for (BodyId id = 0; id < world.body_count(); ++id) out.push_back(world.body(id).position);
  return out;
}

bool all_finite(const RigidWorld& world) {
  for (BodyId id = 0; id < world.body_count(); ++id) {
    const RigidBody& b = world.body(id);
    if (!is_finite(b.position) || !is_finite(b.linear_velocity) || !is_finite(b.angular_velocity))
      return false;
  }
  return true;
}

TEST(RigidStability, PyramidOf105BoxesDriftsLessThanOneCentimetreInTenSeconds) {
  const Scene scene = pyramid();
  // Two substeps of 5 passes (0.71 cm, still faster than Bullet's one step of 10 passes, which
  // leaves 1.96 cm; kinema's one substep leaves 1.24 cm, four 0.56 cm: BENCHMARKS.md).
  RigidWorld world = build_kinema_world(scene, 2);
  const std::vector<Vec3> start = positions(world);
  for (int i = 0; i < scene.steps; ++i) world.step(kStep);
  double drift = 0;
  for (BodyId id = 0; id < world.body_count(); ++id)
    drift = std::max(drift, distance(world.body(id).position, start[id]));
  EXPECT_LT(drift, 0.01);
}

TEST(RigidStability, ThousandBodiesPouredIntoABinStayInItAndSettle) {
  const Scene scene = pour();
  RigidWorld world = build_kinema_world(scene, 1);
  for (int i = 0; i < scene.steps; ++i) world.step(kStep);
  ASSERT_TRUE(all_finite(world));
  int escaped = 0;
  for (BodyId id = 5; id < world.body_count(); ++id) {  // after the ground and the four walls
    const Vec3 p = world.body(id).position;
    escaped += std::abs(p.x) > 3.0 || std::abs(p.z) > 3.0 || p.y < 0.05;
  }
  EXPECT_EQ(escaped, 0);
  // 1,000 bodies of 1 kg fell up to 6.4 m (≈ 37 kJ); after 5 s they are all but still.
  EXPECT_LT(world.kinetic_energy(), 50.0);
}

TEST(RigidStability, FiftyLinkChainReleasedHorizontallyHoldsItsJointsWithinAMillimetre) {
  const Scene scene = chain();
  RigidWorld world = build_kinema_world(scene, 1);
  double worst = 0;
  for (int i = 0; i < scene.steps; ++i) {
    world.step(kStep);
    worst = std::max(worst, max_joint_error(world));
  }
  ASSERT_TRUE(all_finite(world));
  EXPECT_LT(worst, 1e-3);
  // It swung down: the free end is now below the pin.
  EXPECT_LT(world.body(BodyId(world.body_count() - 1)).position.y, 10 - 2.0);
}

TEST(RigidStability, TruckIntoOneHundredCratesNeverExplodes) {
  const Scene scene = crates();
  RigidWorld world = build_kinema_world(scene, 1);
  const double energy0 = world.kinetic_energy();  // the truck's 400 kJ
  double highest = 0;
  for (int i = 0; i < scene.steps; ++i) {
    world.step(kStep);
    ASSERT_TRUE(all_finite(world)) << "step " << i;
    highest = std::max(highest, world.kinetic_energy());
  }
  // Gravity adds what the crates knocked off the wall fall (≤ 100 · 20 kg · 9.81 · 5 m ≈ 98 kJ at
  // most); the collisions themselves only take energy away.
  EXPECT_LT(highest, energy0 + 100 * 20 * kGravity * 5.0);
  const Vec3 truck = world.body(BodyId(world.body_count() - 1)).position;
  EXPECT_GT(truck.z, -1.0);  // it went through the wall's line, not bounced back
}

TEST(RigidStability, RagdollLyingOnItsOwnLimbsComesToRestAndSleeps) {
  // One of Jolt's ragdolls (23 parts, swing–twist joints with limits) dropped in its dead pose:
  // it lands with limbs on its body, contacts between its own parts that the joints' exact solve
  // must not keep pushing into (with that solve last in every pass it jittered at 0.1 rad/s for
  // ever).
  const Scene scene = ragdoll_pile(1, 1);
  RigidWorldSettings settings;
  settings.max_joint_turn_per_substep = 0;
  RigidWorld world = build_kinema_world(scene, 1, settings);
  double worst = 0;
  for (int i = 0; i < 600; ++i) {
    world.step(kStep);
    worst = std::max(worst, max_joint_error(world));
  }
  EXPECT_LT(worst, 1e-3);
  int awake = 0;
  for (BodyId id = 1; id < world.body_count(); ++id) awake += world.body(id).awake ? 1 : 0;
  EXPECT_EQ(awake, 0) << "of " << world.body_count() - 1 << " parts, after 10 s";
}

// Ten of Jolt's powered ragdolls dropped in a pile on the floor (one pile of the benchmark's
// sixteen): the joints' position passes must not push the parts lying on the floor into it. With
// the passes' heavier metric on every body they ended 17.6 mm deep (72 mm at the landing); bodies
// in contact keep their own inertias, and the pile rests 9.3 mm deep (44 mm at the landing),
// within the floor's contact slop and recovery.
TEST(RigidStability, PileOfTenPoweredRagdollsRestsOnTheFloorNotInIt) {
  const Scene scene = ragdoll_pile(1, 10);
  RigidWorld world = build_kinema_world(scene, 1);
  const KinemaMotors motors(scene, world);
  double deepest = 0, resting = 0, worst_joint = 0;
  for (int i = 0; i < scene.steps; ++i) {
    motors.drive(world);
    world.step(kStep);
    worst_joint = std::max(worst_joint, max_joint_error(world));
    double lowest = 0;
    for (BodyId id = 1; id < world.body_count(); ++id) {
      const RigidBody& b = world.body(id);
      const Quat& q = b.orientation;
      lowest = std::min(lowest,
                        lowest_point(scene.bodies[id], shape_origin_of(b).y, q.x, q.y, q.z, q.w));
    }
    deepest = std::max(deepest, -lowest);
    resting = -lowest;
  }
  EXPECT_LT(resting, 0.012);
  EXPECT_LT(deepest, 0.055);
  EXPECT_LT(worst_joint, 1e-5);
}

TEST(RigidStability, RagdollTumblesDownStairsInOnePiece) {
  const Asset godette = load_asset(test_paths::data_dir() + "/vrm/Godette_vrm_v4.vrm");
  RigidWorld world;
  // Eight steps 0.3 m deep and 0.15 m high going down toward +z, then a floor at y = 0.
  const int steps = 8;
  for (int s = 0; s < steps; ++s) {
    const double top = 0.15 * (steps - s);
    world.add_body(make_static_body({0, top / 2, 0.3 * s + 0.15}, Quat::identity()),
                   box_shape({1.5, top / 2, 0.15}), {0.6, 0}, "step " + std::to_string(s));
  }
  world.add_body(make_static_body({0, -0.5, 0}, Quat::identity()), box_shape({20, 0.5, 20}),
                 {0.6, 0}, "floor");
  std::vector<Mat4> model(size_t(godette.skeleton.joint_count()));
  const std::vector<Transform> rest = godette.skeleton.rest_pose();
  local_to_model(godette.skeleton.parents(), std::span<const Transform>(rest),
                 std::span<Mat4>(model),
                 Mat4::trs({0, 0.15 * steps + 0.02, 0.1}, Quat::identity(), {1, 1, 1}));
  Ragdoll doll(godette, world, model);
  for (const RagdollBody& b : doll.bodies())  // a shove forward, down the stairs
    world.body(b.body).linear_velocity = {0, 0, 2.0};
  double worst_joint = 0;
  for (int i = 0; i < 300; ++i) {
    world.step(1.0 / 60);
    ASSERT_TRUE(all_finite(world)) << "step " << i;
    worst_joint = std::max(worst_joint, max_joint_error(world));
  }
  EXPECT_LT(worst_joint, 2e-3);
  // She went down: every body ends below where it began and above the floor or the steps.
  double highest = -1e9;
  for (const RagdollBody& b : doll.bodies())
    highest = std::max(highest, world.body(b.body).position.y);
  EXPECT_LT(highest, 0.15 * steps);
  for (const RagdollBody& b : doll.bodies()) {
    const Vec3 p = world.body(b.body).position;
    const int step = int(std::floor(p.z / 0.3));
    const double surface =
        step >= 0 && step < steps && std::abs(p.x) < 1.5 ? 0.15 * (steps - step) : 0;
    EXPECT_GT(p.y, surface - 0.02) << world.name(b.body);
  }
}

}  // namespace
}  // namespace kinema
