// Ragdolls from a character: Godette's bodies and joints, the pose read back exactly at the start,
// a passive fall that stays in one piece, powered joints that track a target (and a passive one
// that does not), momentum kept by the motors, and hit gains that recover.
#include "kinema/physics/ragdoll.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "kinema/core/error.h"
#include "kinema/ik/joint_limits.h"
#include "kinema/io/asset_file.h"
#include "kinema/skeleton/skeleton.h"
#include "test_paths.h"

namespace kinema {
namespace {

const Asset& godette() {
  static const Asset a = load_asset(test_paths::data_dir() + "/vrm/Godette_vrm_v4.vrm");
  return a;
}

std::vector<Mat4> model_of(const Asset& a, const std::vector<Transform>& local,
                           const Vec3& lift = {}) {
  std::vector<Mat4> model(local.size());
  local_to_model(a.skeleton.parents(), std::span<const Transform>(local), std::span<Mat4>(model),
                 Mat4::trs(lift, Quat::identity(), {1, 1, 1}));
  return model;
}

double max_joint_error(const RigidWorld& world) {
  double worst = 0;
  for (JointId j = 0; j < world.joint_count(); ++j) worst = std::max(worst, world.joint_error(j));
  return worst;
}

void add_ground(RigidWorld& world) {
  world.add_body(make_static_body({0, -0.5, 0}, Quat::identity()), box_shape({20, 0.5, 20}), {},
                 "ground");
}

TEST(Ragdoll, GodetteBecomesCapsulesJoinedAtHerJoints) {
  RigidWorld world;
  const std::vector<Transform> rest = godette().skeleton.rest_pose();
  const Ragdoll doll(godette(), world, model_of(godette(), rest));
  // Her humanoid map's torso, head, arms and legs: 15 joints with skin enough for a body.
  EXPECT_GE(doll.bodies().size(), 14u);
  EXPECT_LE(doll.bodies().size(), 20u);
  EXPECT_LT(doll.body_of_joint(godette().skeleton.find("Finger.l_Armature")), 0);
  EXPECT_LT(doll.body_of_joint(godette().skeleton.find("HairBall_Center")), 0);
  EXPECT_EQ(world.body_count(), doll.bodies().size());
  size_t roots = 0;
  for (const RagdollBody& b : doll.bodies()) roots += b.parent < 0 ? 1 : 0;
  EXPECT_EQ(roots, 1u);  // one tree
  EXPECT_EQ(world.joint_count(), doll.bodies().size() - 1);
  // Water-dense capsules of a chibi whose head is a 26 cm ball: the head alone is ~130 kg.
  double total = 0;
  for (const RagdollBody& b : doll.bodies()) total += 1 / world.body(b.body).inverse_mass;
  EXPECT_NEAR(doll.mass(), total, 1e-9);
  EXPECT_GT(doll.mass(), 100);
  EXPECT_LT(doll.mass(), 400);
  EXPECT_GE(doll.body_of_joint(godette().skeleton.find("head_Armature")), 0);
  EXPECT_LT(max_joint_error(world), 1e-12);
}

TEST(Ragdoll, ReadsBackThePoseItWasBuiltAt) {
  RigidWorld world;
  std::vector<Transform> pose = godette().skeleton.rest_pose();
  pose[size_t(godette().skeleton.find("upper_arm.l_Armature"))].rotation =
      Quat::from_axis_angle({0, 0, 1}, 0.7) *
      pose[size_t(godette().skeleton.find("upper_arm.l_Armature"))].rotation;
  const std::vector<Mat4> model = model_of(godette(), pose, {0.3, 1, -0.2});
  const Ragdoll doll(godette(), world, model);
  std::vector<Mat4> back;
  doll.read_pose(world, pose, back);
  ASSERT_EQ(back.size(), model.size());
  // Every joint under the root that holds the bodies (nodes under other roots, with no body to
  // place them, keep their animation transforms).
  const std::span<const int> parents = godette().skeleton.parents();
  auto root_of = [&](int j) {
    while (parents[size_t(j)] >= 0) j = parents[size_t(j)];
    return j;
  };
  const int root = root_of(godette().skeleton.find("hips_Armature") >= 0
                               ? godette().skeleton.find("hips_Armature")
                               : doll.bodies()[0].joint);
  for (size_t j = 0; j < model.size(); ++j)
    if (root_of(int(j)) == root) {
      for (size_t k = 0; k < 16; ++k) EXPECT_NEAR(back[j].m[k], model[j].m[k], 1e-9) << j;
    }
}

TEST(Ragdoll, PassiveRagdollFallsInOnePieceAndLiesOnTheGround) {
  RigidWorld world;
  add_ground(world);
  const std::vector<Transform> rest = godette().skeleton.rest_pose();
  Ragdoll doll(godette(), world, model_of(godette(), rest, {0, 0.6, 0}));
  double worst = 0;
  for (int i = 0; i < 240; ++i) {
    world.step(1.0 / 60);
    worst = std::max(worst, max_joint_error(world));
  }
  EXPECT_LT(worst, 1e-3);
  double highest = -1e9, lowest = 1e9;
  for (const RagdollBody& b : doll.bodies()) {
    const Vec3 p = world.body(b.body).position;
    ASSERT_TRUE(is_finite(p));
    highest = std::max(highest, p.y);
    lowest = std::min(lowest, p.y);
  }
  EXPECT_GT(lowest, 0);     // nothing through the ground
  EXPECT_LT(highest, 0.6);  // it collapsed (she stands 1.2 m tall)
}

TEST(Ragdoll, PoweredJointsTrackTheTargetAndPassiveOnesDoNot) {
  const Skeleton& s = godette().skeleton;
  const int arm = s.find("upper_arm.l_Armature");
  std::vector<Transform> target = s.rest_pose();
  target[size_t(arm)].rotation =
      Quat::from_axis_angle({0, 0, 1}, 0.6) * target[size_t(arm)].rotation;
  const std::vector<Mat4> target_model = model_of(godette(), target);
  auto arm_error = [&](double strength) {
    RigidWorldSettings settings;
    settings.gravity = {0, 0, 0};
    settings.sleeping = false;
    RigidWorld world(settings);
    Ragdoll doll(godette(), world, model_of(godette(), s.rest_pose()));
    for (int i = 0; i < 120; ++i) {
      doll.drive(world, target_model, strength);
      world.step(1.0 / 60);
    }
    const RagdollBody& b = doll.bodies()[size_t(doll.body_of_joint(arm))];
    const RagdollBody& up = doll.bodies()[size_t(b.parent)];
    const Quat now = conjugate(world.body(up.body).orientation) * world.body(b.body).orientation;
    const Quat want_child = Transform::from_matrix(target_model[size_t(arm)] * b.offset).rotation;
    const Quat want_parent =
        Transform::from_matrix(target_model[size_t(up.joint)] * up.offset).rotation;
    const Quat want = conjugate(want_parent) * want_child;
    return 2 * std::acos(std::min(1.0, std::abs(dot(normalize(now), normalize(want)))));
  };
  EXPECT_LT(arm_error(1), 0.05);  // within 3° after 2 s
  EXPECT_GT(arm_error(0), 0.5);   // passive: it never moves toward 0.6 rad
}

TEST(Ragdoll, MotorsAreInternalSoTheyKeepMomentum) {
  RigidWorldSettings settings;
  settings.gravity = {0, 0, 0};
  settings.sleeping = false;
  RigidWorld world(settings);
  const Skeleton& s = godette().skeleton;
  Ragdoll doll(godette(), world, model_of(godette(), s.rest_pose()));
  std::vector<Transform> target = s.rest_pose();
  for (Transform& t : target) t.rotation = Quat::from_axis_angle({1, 0.3, 0}, 0.2) * t.rotation;
  const std::vector<Mat4> target_model = model_of(godette(), target);
  for (int i = 0; i < 60; ++i) {
    doll.drive(world, target_model);
    world.step(1.0 / 60);
  }
  Vec3 momentum{0, 0, 0};
  for (const RagdollBody& b : doll.bodies())
    momentum += world.body(b.body).linear_velocity / world.body(b.body).inverse_mass;
  EXPECT_LT(length(momentum), 1e-9 * doll.mass());
}

TEST(Ragdoll, StruckLimbGoesLimpAndRecovers) {
  RigidWorld world;
  Ragdoll doll(godette(), world, model_of(godette(), godette().skeleton.rest_pose()));
  const int arm = doll.body_of_joint(godette().skeleton.find("lowerarm.r_Armature"));
  ASSERT_GE(arm, 0);
  doll.set_gain(arm, 0.1);
  EXPECT_NEAR(doll.bodies()[size_t(arm)].gain, 0.1, 1e-12);
  for (int i = 0; i < 30; ++i) doll.recover(1.0 / 60, 1.0);
  EXPECT_NEAR(doll.bodies()[size_t(arm)].gain, 0.6, 1e-9);
  for (int i = 0; i < 60; ++i) doll.recover(1.0 / 60, 1.0);
  EXPECT_EQ(doll.bodies()[size_t(arm)].gain, 1.0);
  std::vector<Mat4> short_pose(3);
  EXPECT_THROW(doll.drive(world, short_pose), Error);
}

const RagdollJointLimit* limit_of(const std::vector<RagdollJointLimit>& limits, int joint) {
  for (const RagdollJointLimit& l : limits)
    if (l.joint == joint) return &l;
  return nullptr;
}

// Where `end` goes when joint j turns by `angle` about its limit's axis at rest (world).
Vec3 end_turned(const Asset& a, const RagdollJointLimit& l, int end, double angle) {
  const std::vector<Mat4> rest = rest_model_matrices(a.skeleton);
  const Vec3 pivot = rest[size_t(l.joint)].transform_point({0, 0, 0});
  const Vec3 axis =
      rotate(normalize(Transform::from_matrix(rest[size_t(l.joint)]).rotation), l.axis);
  return pivot + rotate(Quat::from_axis_angle(axis, angle),
                        rest[size_t(end)].transform_point({0, 0, 0}) - pivot);
}

TEST(RagdollLimits, KneesBendBackAndElbowsForwardAsHinges) {
  const Asset& a = godette();
  const std::vector<RagdollJointLimit> limits = humanoid_ragdoll_limits(a);
  const Humanoid& h = *a.humanoid;
  const std::vector<Mat4> rest = rest_model_matrices(a.skeleton);
  auto at = [&](int j) { return rest[size_t(j)].transform_point({0, 0, 0}); };
  // Where she faces, from her toes (Godette, a VRM 0 model, faces −Z).
  Vec3 forward = at(h.find("leftToes")) - at(h.find("leftFoot"));
  forward.y = 0;
  forward = normalize(forward);
  EXPECT_LT(forward.z, -0.9);
  for (const char* side : {"left", "right"}) {
    const std::string s(side);
    const RagdollJointLimit* knee = limit_of(limits, h.find(s + "LowerLeg"));
    const RagdollJointLimit* elbow = limit_of(limits, h.find(s + "LowerArm"));
    ASSERT_NE(knee, nullptr);
    ASSERT_NE(elbow, nullptr);
    EXPECT_EQ(knee->kind, JointKind::Hinge);
    EXPECT_EQ(elbow->kind, JointKind::Hinge);
    EXPECT_LE(knee->lower, 0);
    EXPECT_GT(knee->upper, 2);
    // A bent knee takes the foot back, a bent elbow the hand forward.
    const int foot = h.find(s + "Foot"), hand = h.find(s + "Hand");
    EXPECT_LT(dot(end_turned(a, *knee, foot, 1.0) - at(foot), forward), -0.05) << side;
    EXPECT_GT(dot(end_turned(a, *elbow, hand, 1.0) - at(hand), forward), 0.05) << side;
    const RagdollJointLimit* hip = limit_of(limits, h.find(s + "UpperLeg"));
    ASSERT_NE(hip, nullptr);
    EXPECT_EQ(hip->kind, JointKind::ConeTwist);
  }
  EXPECT_EQ(limit_of(limits, h.find("hips")), nullptr);  // the root hangs from nothing
}

// The knee's angle in a pose read back from the ragdoll: its twist about the hinge axis from the
// rest pose.
double knee_angle(const Asset& a, const Ragdoll& doll, const RigidWorld& world,
                  const RagdollJointLimit& knee) {
  std::vector<Mat4> model;
  const std::vector<Transform> rest = a.skeleton.rest_pose();
  doll.read_pose(world, rest, model);
  const int parent = a.skeleton.parents()[size_t(knee.joint)];
  Mat4 parent_inverse;
  EXPECT_TRUE(inverse(model[size_t(parent)], parent_inverse));
  const Quat local =
      normalize(Transform::from_matrix(parent_inverse * model[size_t(knee.joint)]).rotation);
  return twist_angle(conjugate(rest[size_t(knee.joint)].rotation) * local, knee.axis);
}

TEST(RagdollLimits, LimitsHoldFromTheRestPoseWhateverPoseTheRagdollStartsIn) {
  const Asset& a = godette();
  const RagdollJointLimit knee =
      *limit_of(humanoid_ragdoll_limits(a), a.humanoid->find("leftLowerLeg"));
  for (const double start : {1.0, -1.0}) {  // bent within the limit; bent the wrong way
    RigidWorldSettings settings;
    settings.gravity = {0, 0, 0};
    settings.sleeping = false;
    RigidWorld world(settings);
    std::vector<Transform> pose = a.skeleton.rest_pose();
    pose[size_t(knee.joint)].rotation =
        pose[size_t(knee.joint)].rotation * Quat::from_axis_angle(knee.axis, start);
    Ragdoll doll(a, world, model_of(a, pose, {0, 2, 0}));
    EXPECT_NEAR(knee_angle(a, doll, world, knee), start, 1e-9);
    for (int i = 0; i < 60; ++i) world.step(1.0 / 60);
    const double after = knee_angle(a, doll, world, knee);
    if (start > 0)
      EXPECT_NEAR(after, start, 0.02);  // free to stay where it is
    else
      EXPECT_GT(after, knee.lower - 0.03);  // pushed back into its range
  }
}

TEST(RagdollLimits, KneesNeverBendTheWrongWayInAFall) {
  const Asset& a = godette();
  const std::vector<RagdollJointLimit> limits = humanoid_ragdoll_limits(a);
  const RagdollJointLimit left = *limit_of(limits, a.humanoid->find("leftLowerLeg"));
  const RagdollJointLimit right = *limit_of(limits, a.humanoid->find("rightLowerLeg"));
  RigidWorld world;
  add_ground(world);
  Ragdoll doll(a, world, model_of(a, a.skeleton.rest_pose(), {0, 0.6, 0}));
  world.body(doll.bodies()[0].body).angular_velocity = {2, 0, 1};  // tumble
  double least = 1e9, most = -1e9;
  for (int i = 0; i < 180; ++i) {
    world.step(1.0 / 60);
    for (const RagdollJointLimit* k : {&left, &right}) {
      const double angle = knee_angle(a, doll, world, *k);
      least = std::min(least, angle);
      most = std::max(most, angle);
    }
  }
  EXPECT_GT(least, left.lower - 0.05);
  EXPECT_LT(most, left.upper + 0.05);
}

TEST(RagdollLimits, CallersLimitsReplaceTheDefaultsAndBadOnesAreRefusedByJoint) {
  const Asset& a = godette();
  const int knee = a.humanoid->find("leftLowerLeg");
  RagdollOptions options;
  RagdollJointLimit stiff;  // a cone along the bone instead of the default hinge
  stiff.joint = knee;
  stiff.swing = 0.1;
  options.limits.push_back(stiff);
  RigidWorld world;
  const Ragdoll doll(a, world, model_of(a, a.skeleton.rest_pose()), options);
  const RagdollBody& shin = doll.bodies()[size_t(doll.body_of_joint(knee))];
  EXPECT_EQ(world.joint(shin.link).kind, JointKind::ConeTwist);

  RagdollJointLimit backwards;
  backwards.joint = knee;
  backwards.kind = JointKind::Hinge;
  backwards.axis = {1, 0, 0};
  backwards.lower = 0.2;  // does not hold the rest angle
  backwards.upper = 1;
  options.limits = {backwards};
  RigidWorld other;
  try {
    Ragdoll(a, other, model_of(a, a.skeleton.rest_pose()), options);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.place(), a.skeleton.joint(knee).name);
    EXPECT_NE(e.reason().find("lower ≤ 0 ≤ upper"), std::string::npos) << e.reason();
  }
  options.limits = {stiff};
  options.limits[0].joint = 100000;
  RigidWorld third;
  EXPECT_THROW(Ragdoll(a, third, model_of(a, a.skeleton.rest_pose()), options), Error);
}

}  // namespace
}  // namespace kinema
