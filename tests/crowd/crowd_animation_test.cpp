// The crowd's characters on the pab walk and run (ozz-animation's sample character): speeds
// measured from the clips, feet that stay planted at any speed (stride matching; foot skate of a
// near agent at most 2 cm/s median), the LOD tiers' skeletons (full, reduced, none), the same bits
// whatever the thread count, turning toward the velocity, and bad gaits refused.
#include "kinema/crowd/crowd_animation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <vector>

#include "kinema/blend/foot_contact.h"
#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "test_paths.h"

namespace kinema {
namespace {

const std::string kData = test_paths::data_dir();

CrowdGait pab_gait() {
  const Asset walk = load_asset(kData + "/fbx/ozz_pab/walk.fbx");
  const Asset run = load_asset(kData + "/fbx/ozz_pab/run.fbx");
  CrowdGait gait;
  gait.skeleton = walk.skeleton;
  gait.walk = walk.clips.at(0);
  gait.run = run.clips.at(0);
  gait.root_joint = walk.skeleton.find("Hips");
  for (const char* side : {"Left", "Right"}) {
    const std::string s = side;
    gait.legs.push_back({walk.skeleton.find(s + "UpLeg"), walk.skeleton.find(s + "Leg"),
                         walk.skeleton.find(s + "Foot")});
  }
  return gait;
}

// The same gait without legs: no foot locking.
const CrowdGait& unlocked_gait() {
  static const CrowdGait g = [] {
    CrowdGait u = pab_gait();
    u.legs.clear();
    return u;
  }();
  return g;
}

const CrowdGait& gait() {
  static const CrowdGait g = pab_gait();
  return g;
}

// The foot skate (cm/s, kinema's measure: the slower of ankle and toe on planted frames,
// plants detected on the feet's own motion) of one agent walking straight along +Z at `speed`
// for `seconds` at 60 frames a second, after its first second.
SkateSpeeds skate(CrowdAnimator& animator, float speed, float seconds) {
  const RuntimeSkeleton& sk = animator.full_skeleton();
  const int ankle[] = {sk.find("LeftFoot"), sk.find("RightFoot")};
  const int toe[] = {sk.find("LeftFootThumb1"), sk.find("RightFootThumb1")};
  const float dt = 1.0f / 60;
  Vec2f position{0, 0};
  const Vec2f velocity{0, speed};
  std::vector<Vec3> ankles, toes;
  for (int frame = 0; frame * dt < seconds; ++frame) {
    position += velocity * dt;
    animator.update(dt, std::span(&position, 1), std::span(&velocity, 1), {},
                    {position.x, 1.7f, position.y});
    if (frame * dt < 1.0f) continue;
    const auto pose = animator.pose(0);
    for (int foot = 0; foot < 2; ++foot) {
      ankles.push_back(Vec3(pose[std::size_t(ankle[foot])].translation_part()));
      toes.push_back(Vec3(pose[std::size_t(toe[foot])].translation_part()));
    }
  }
  const FootSkateReport report = measure_foot_skate(ankles, toes, 2, dt);
  return report.total.speed.value_or(SkateSpeeds{1e9, 1e9, 1e9});
}

TEST(CrowdAnimation, SpeedsAreMeasuredFromTheClips) {
  const CrowdAnimator animator(gait(), {}, 1);
  EXPECT_GT(animator.walk_speed(), 0.8f);
  EXPECT_LT(animator.walk_speed(), 2.0f);
  EXPECT_GT(animator.run_speed(), animator.walk_speed() * 1.5f);
}

// The skate (cm/s) of the clip itself, played in a loop with its root motion.
SkateSpeeds source_skate(const Clip& clip) {
  const CrowdGait& g = gait();
  const RuntimeSkeleton sk = RuntimeSkeleton::build(g.skeleton);
  const int ankle[] = {sk.find("LeftFoot"), sk.find("RightFoot")};
  const int toe[] = {sk.find("LeftFootThumb1"), sk.find("RightFootThumb1")};
  const double dt = 1.0 / 60;
  const Vec3 start =
      sample_model_pose(clip, g.skeleton, 0)[std::size_t(g.root_joint)].transform_point({});
  const Vec3 end =
      sample_model_pose(clip, g.skeleton, clip.duration)[std::size_t(g.root_joint)].transform_point(
          {});
  std::vector<Vec3> ankles, toes;
  for (double t = 0; t < 4 * clip.duration; t += dt) {
    const double loops = std::floor(t / clip.duration);
    Vec3 shift = (end - start) * loops;
    shift.y = 0;
    const std::vector<Mat4> pose = sample_model_pose(clip, g.skeleton, t - loops * clip.duration);
    for (int foot = 0; foot < 2; ++foot) {
      ankles.push_back(pose[std::size_t(ankle[foot])].transform_point({}) + shift);
      toes.push_back(pose[std::size_t(toe[foot])].transform_point({}) + shift);
    }
  }
  return measure_foot_skate(ankles, toes, 2, dt).total.speed.value();
}

TEST(CrowdAnimation, NearAgentsFeetStayPlantedAtWalkingSpeeds) {
  // Stride matching keeps a planted foot planted at any speed the walk is played at: the median
  // skate of a near agent stays within 2 cm/s.
  CrowdAnimator probe(gait(), {}, 1);
  const float walk = probe.walk_speed();
  for (float speed : {walk, 0.7f * walk, 0.4f * walk}) {
    CrowdAnimator animator(gait(), {}, 1);
    const SkateSpeeds s = skate(animator, speed, 6.0f);
    EXPECT_LE(s.median, 2.0) << "at " << speed << " m/s (p90 " << s.p90 << " cm/s)";
  }
}

TEST(CrowdAnimation, RunningAddsNoSkateToTheRunClipsOwn) {
  // The pab run skates by itself (16 cm/s median, looped with its root motion): a running agent
  // without foot locking shows that and no more.
  CrowdAnimator animator(unlocked_gait(), {}, 1);
  const SkateSpeeds own = source_skate(gait().run);
  const SkateSpeeds played = skate(animator, animator.run_speed(), 6.0f);
  EXPECT_GT(own.median, 10.0);
  EXPECT_LE(played.median, own.median + 2.0) << "own " << own.median << " cm/s";
}

TEST(CrowdAnimation, FootLockingKeepsNearFeetPlantedAtEverySpeed) {
  // The run, and the walk–run blend whose stances differ in length, skate 12–17 cm/s unlocked;
  // near agents pin their planted feet by IK: the median skate stays within 2 cm/s.
  CrowdAnimator probe(gait(), {}, 1);
  const float walk = probe.walk_speed(), run = probe.run_speed();
  for (float speed : {0.6f * walk, walk, 0.5f * (walk + run), 0.75f * walk + 0.25f * run, run}) {
    CrowdAnimator unlocked(unlocked_gait(), {}, 1), locked(gait(), {}, 1);
    const SkateSpeeds before = skate(unlocked, speed, 6.0f);
    const SkateSpeeds after = skate(locked, speed, 6.0f);
    EXPECT_LE(after.median, 2.0) << "at " << speed << " m/s: " << before.median << " unlocked";
    std::printf("foot locking at %.2f m/s: skate median %.2f → %.2f cm/s, p90 %.2f → %.2f\n", speed,
                before.median, after.median, before.p90, after.p90);
    EXPECT_LE(after.median, before.median + 1e-9) << "at " << speed << " m/s";
  }
}

TEST(CrowdAnimation, FootLockingKeepsTheLegsAndOnlyActsNear) {
  CrowdAnimationSettings settings;
  settings.lod.fade_seconds = 0;
  CrowdAnimator animator(gait(), settings, 2);
  const RuntimeSkeleton& sk = animator.full_skeleton();
  const int chain[] = {sk.find("LeftUpLeg"), sk.find("LeftLeg"), sk.find("LeftFoot"),
                       sk.find("LeftFootThumb1")};
  const Skeleton& rest = gait().skeleton;
  const std::vector<Mat4> bind = sample_model_pose(gait().walk, rest, 0);
  double bone[3];
  for (int b = 0; b < 3; ++b)
    bone[b] = distance(bind[std::size_t(rest.find(sk.name(chain[b])))].translation_part(),
                       bind[std::size_t(rest.find(sk.name(chain[b + 1])))].translation_part());
  const float dt = 1.0f / 60;
  const float speed = animator.run_speed();
  Vec2f positions[2] = {{0, 0}, {0, 200}};  // one beside the camera, one 200 m away (mid or far)
  const Vec2f velocities[2] = {{0, speed}, {0, speed}};
  int locked_frames = 0;
  double worst = 0;
  for (int frame = 0; frame < 240; ++frame) {
    for (Vec2f& p : positions) p += velocities[0] * dt;
    animator.update(dt, positions, velocities, {}, {positions[0].x, 1.7f, positions[0].y});
    locked_frames += animator.foot_locked(0, 0) ? 1 : 0;
    EXPECT_FALSE(animator.foot_locked(1, 0));
    EXPECT_FALSE(animator.foot_locked(1, 1));
    const auto pose = animator.pose(0);
    for (int b = 0; b < 3; ++b)
      worst = std::max(worst,
                       std::abs(distance(Vec3(pose[std::size_t(chain[b])].translation_part()),
                                         Vec3(pose[std::size_t(chain[b + 1])].translation_part())) -
                                bone[b]));
  }
  EXPECT_GT(locked_frames, 24);  // the run: its left foot pinned through every stance (~6 frames)
  EXPECT_LT(worst, 1e-4);        // the IK bends the leg; no bone stretches (float poses)
}

TEST(CrowdAnimation, TiersEvaluateTheFullTheReducedOrNoSkeleton) {
  CrowdAnimationSettings settings;
  settings.lod.fade_seconds = 0;
  CrowdAnimator animator(gait(), settings, 3);
  EXPECT_LT(animator.mid_skeleton().joint_count(), animator.full_skeleton().joint_count());
  const RuntimeSkeleton& mid = animator.mid_skeleton();
  for (const char* kept : {"Hips", "Head", "LeftHand", "RightFoot", "LeftForeArm"}) {
    if (animator.full_skeleton().find(kept) >= 0) {
      EXPECT_GE(mid.find(kept), 0) << kept;
    }
  }
  for (const char* dropped : {"LeftHandIndex2", "Bip01RToe0Nub", "Camera01"}) {
    EXPECT_LT(mid.find(dropped), 0) << dropped;
  }
  // Agents 5 m, 25 m and 60 m from the camera: near, mid and far.
  const std::vector<Vec2f> positions{{0, 5}, {0, 25}, {0, 60}}, velocities(3, Vec2f{1, 0});
  for (int frame = 0; frame < 4; ++frame) {
    animator.update(1.0f / 60, positions, velocities, {}, {0, 1.7f, 0});
  }
  EXPECT_EQ(animator.lod().tier(0), CrowdTier::Near);
  EXPECT_EQ(animator.lod().tier(1), CrowdTier::Mid);
  EXPECT_EQ(animator.lod().tier(2), CrowdTier::Far);
  EXPECT_EQ(animator.pose(0).size(), std::size_t(animator.full_skeleton().joint_count()));
  EXPECT_EQ(animator.pose(1).size(), std::size_t(mid.joint_count()));
  EXPECT_TRUE(animator.pose(2).empty());  // the VAT plays it at cycle_time()
  EXPECT_GT(animator.cycle_time(2), 0.0f);
  // The mid pose's joints stand where the full skeleton's would at the same phase.
  CrowdAnimationSettings all_near = settings;
  all_near.lod.tiers[1].min_distance = all_near.lod.tiers[2].min_distance = 500;
  all_near.lod.tiers[3].min_distance = 600;
  CrowdAnimator reference(gait(), all_near, 3);
  for (int frame = 0; frame < 4; ++frame) {
    reference.update(1.0f / 60, positions, velocities, {}, {0, 1.7f, 0});
  }
  for (int k = 0; k < mid.joint_count(); k += 3) {
    const int full = animator.mid_joints()[std::size_t(k)];
    const Vec3f a = animator.pose(1)[std::size_t(k)].translation_part();
    const Vec3f b = reference.pose(1)[std::size_t(full)].translation_part();
    EXPECT_LT(length(a - b), 0.05f) << mid.name(k);  // the mid tier updates every other frame
  }
}

TEST(CrowdAnimation, AMidPoseOnTheFullSkeletonKeepsItsJointsAndCarriesTheRest) {
  CrowdAnimationSettings settings;
  settings.lod.fade_seconds = 0;
  CrowdAnimator animator(gait(), settings, 3);
  const std::vector<Vec2f> positions{{0, 5}, {0, 25}, {0, 60}}, velocities(3, Vec2f{1, 0});
  for (int frame = 0; frame < 4; ++frame) {
    animator.update(1.0f / 60, positions, velocities, {}, {0, 1.7f, 0});
  }
  const RuntimeSkeleton& full = animator.full_skeleton();
  std::vector<Mat4f> out(std::size_t(full.joint_count()));
  ASSERT_TRUE(animator.full_pose(0, out));  // near: the pose itself
  for (std::size_t j = 0; j < out.size(); ++j) EXPECT_EQ(out[j], animator.pose(0)[j]);
  ASSERT_TRUE(animator.full_pose(1, out));  // mid: kept joints as they are
  const auto mid = animator.pose(1);
  for (std::size_t k = 0; k < mid.size(); ++k)
    EXPECT_EQ(out[std::size_t(animator.mid_joints()[k])], mid[k]);
  // A dropped finger rides on its hand at its rest distance (bone lengths kept).
  const int finger = full.find("LeftHandIndex1"), hand = gait().skeleton.parent(finger);
  ASSERT_GE(finger, 0);
  ASSERT_EQ(gait().skeleton.find("LeftHandIndex1"), finger);  // the same joint order
  const std::vector<Mat4> rest_model = rest_model_matrices(gait().skeleton);
  const float rest = float(length(rest_model[std::size_t(finger)].translation_part() -
                                  rest_model[std::size_t(hand)].translation_part()));
  const float now = length(out[std::size_t(finger)].translation_part() -
                           out[std::size_t(hand)].translation_part());
  EXPECT_NEAR(now, rest, 1e-4f);
  EXPECT_FALSE(animator.full_pose(2, out));  // far: no skeleton
  std::vector<Mat4f> wrong(3);
  EXPECT_FALSE(animator.full_pose(0, wrong));
}

TEST(CrowdAnimation, TheInPlaceCycleIsWhatAnAgentAtTheOriginPlays) {
  CrowdAnimationSettings settings;
  settings.foot_locking = false;
  CrowdAnimator animator(unlocked_gait(), settings, 1);
  const float speed = animator.walk_speed();
  const Vec2f at{0, 0}, velocity{0, speed};  // heading 0: +Z
  for (int frame = 0; frame < 7; ++frame)
    animator.update(1.0f / 60, std::span(&at, 1), std::span(&velocity, 1), {}, {0, 1.7f, -2});
  std::vector<Mat4f> baked(std::size_t(animator.full_skeleton().joint_count()));
  animator.sample_in_place(animator.phase(0), 0, baked);
  const auto pose = animator.pose(0);
  for (std::size_t j = 0; j < baked.size(); ++j)
    EXPECT_LT(length(baked[j].translation_part() - pose[j].translation_part()), 1e-5f);
  // The phase wraps; the run blends in by weight.
  std::vector<Mat4f> wrapped(baked.size()), run(baked.size());
  animator.sample_in_place(animator.phase(0) + 2, 0, wrapped);
  EXPECT_LT(length(wrapped[5].translation_part() - baked[5].translation_part()), 1e-5f);
  animator.sample_in_place(animator.phase(0), 1, run);
  float moved = 0;
  for (std::size_t j = 0; j < run.size(); ++j)
    moved = std::max(moved, length(run[j].translation_part() - baked[j].translation_part()));
  EXPECT_GT(moved, 0.05f);
  EXPECT_GT(animator.run_duration(), 0.0f);
  EXPECT_NEAR(animator.walk_duration(), float(gait().walk.duration), 1e-4f);
  std::vector<Mat4f> short_out(4);
  EXPECT_THROW(animator.sample_in_place(0, 0, short_out), Error);
}

TEST(CrowdAnimation, SameBitsWhateverTheThreadCount) {
  CrowdAnimationSettings one, two;
  one.threads = 1;
  two.threads = 2;
  const std::size_t n = 300;
  CrowdAnimator a(gait(), one, n), b(gait(), two, n);
  std::vector<Vec2f> positions(n), velocities(n);
  for (std::size_t i = 0; i < n; ++i) {
    positions[i] = {float(i % 20) * 2.0f, float(i / 20) * 3.0f};
    velocities[i] = {std::sin(float(i)), 1.0f + 0.01f * float(i)};
  }
  for (int frame = 0; frame < 10; ++frame) {
    a.update(1.0f / 60, positions, velocities, {}, {0, 1.7f, 0});
    b.update(1.0f / 60, positions, velocities, {}, {0, 1.7f, 0});
  }
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_EQ(a.pose(i).size(), b.pose(i).size()) << i;
    for (std::size_t j = 0; j < a.pose(i).size(); ++j) ASSERT_EQ(a.pose(i)[j], b.pose(i)[j]);
  }
}

TEST(CrowdAnimation, BodiesTurnTowardTheirVelocityAtTheTurnRate) {
  CrowdAnimationSettings settings;
  settings.turn_rate = 3.0f;
  CrowdAnimator animator(gait(), settings, 1);
  const Vec2f p{0, 0}, v{1.2f, 0};  // toward +X: a quarter turn from +Z
  animator.update(0.1f, std::span(&p, 1), std::span(&v, 1), {}, {0, 1.7f, 0});
  EXPECT_NEAR(animator.heading(0), 0.3f, 1e-5f);
  for (int k = 0; k < 10; ++k) animator.update(0.1f, std::span(&p, 1), std::span(&v, 1), {}, {});
  EXPECT_NEAR(animator.heading(0), std::numbers::pi_v<float> / 2, 1e-5f);
}

TEST(CrowdAnimation, BadGaitsAreRefused) {
  CrowdGait bad = gait();
  bad.root_joint = 500;
  EXPECT_THROW(CrowdAnimator(bad, {}, 1), Error);
  bad = gait();
  bad.walk = Clip{};
  EXPECT_THROW(CrowdAnimator(bad, {}, 1), Error);
  bad = gait();
  bad.run_speed = 0.1f;  // slower than the walk
  EXPECT_THROW(CrowdAnimator(bad, {}, 1), Error);
  bad = gait();
  bad.root_joint = bad.skeleton.find("Camera01");  // does not travel
  EXPECT_THROW(CrowdAnimator(bad, {}, 1), Error);
  CrowdAnimationSettings settings;
  settings.turn_rate = 0;
  EXPECT_THROW(CrowdAnimator(gait(), settings, 1), Error);
}

}  // namespace
}  // namespace kinema
