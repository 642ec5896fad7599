// Retargeting across proportions, rest poses, spine counts and facing (kinema/retarget/retarget.h).
#include "kinema/retarget/retarget.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/retarget/rig.h"
#include "test_paths.h"

namespace kinema {
namespace {

const std::string kData = test_paths::data_dir();

/// A small humanoid built in code, with its map. Offsets in metres; T-pose facing +Z.
struct TestRig {
  std::vector<Joint> joints;
  Humanoid map;

  int add(const std::string& name, const std::string& bone, const std::string& parent, Vec3 offset,
          Quat rotation = Quat::identity()) {
    Joint j;
    j.name = name;
    for (size_t i = 0; i < joints.size(); ++i)
      if (joints[i].name == parent) j.parent = static_cast<int>(i);
    j.rest.translation = offset;
    j.rest.rotation = rotation;
    joints.push_back(j);
    const int index = static_cast<int>(joints.size()) - 1;
    if (!bone.empty()) map.bones.emplace_back(bone, index);
    return index;
  }
  Skeleton skeleton() const { return Skeleton::build(joints, true); }
};

struct RigShape {
  int spine_bones = 2;      ///< 1–3: spine, chest, upperChest
  double arm_down_deg = 0;  ///< 0 = T-pose, 45 = A-pose (rest rotation on the upper arms)
  double scale = 1;         ///< uniform scale of every offset
  double yaw_deg = 0;       ///< rest rotation of the hips about +Y
  bool arm_roll = false;    ///< an unmapped joint between upper and lower arm
};

TestRig make_rig(const RigShape& shape) {
  TestRig r;
  const double k = shape.scale;
  r.add("Hips", "hips", "", Vec3{0, 1.0, 0} * k,
        Quat::from_axis_angle(Vec3::unit_y(), shape.yaw_deg * kPi / 180));
  const char* spine_bones[] = {"spine", "chest", "upperChest"};
  std::string parent = "Hips";
  for (int i = 0; i < shape.spine_bones; ++i) {
    const std::string name = "Spine" + std::to_string(i);
    r.add(name, spine_bones[i], parent, Vec3{0, 0.36 / shape.spine_bones, 0.01} * k);
    parent = name;
  }
  r.add("Neck", "neck", parent, Vec3{0, 0.12, 0} * k);
  r.add("Head", "head", "Neck", Vec3{0, 0.1, 0.02} * k);
  for (const int side : {1, -1}) {
    const std::string s = side > 0 ? "left" : "right", n = side > 0 ? "L" : "R";
    r.add("Shoulder" + n, s + "Shoulder", parent, Vec3{0.04 * side, 0.06, 0} * k);
    r.add("UpperArm" + n, s + "UpperArm", "Shoulder" + n, Vec3{0.12 * side, 0, 0} * k,
          Quat::from_axis_angle(Vec3::unit_z(), -side * shape.arm_down_deg * kPi / 180));
    std::string elbow_parent = "UpperArm" + n;
    if (shape.arm_roll) {
      r.add("ArmRoll" + n, "", elbow_parent, Vec3{0.13 * side, 0, 0} * k);
      elbow_parent = "ArmRoll" + n;
    }
    r.add("LowerArm" + n, s + "LowerArm", elbow_parent,
          Vec3{(shape.arm_roll ? 0.13 : 0.26) * side, 0, 0} * k);
    r.add("Hand" + n, s + "Hand", "LowerArm" + n, Vec3{0.24 * side, 0, 0} * k);
    r.add("Middle1" + n, s + "MiddleProximal", "Hand" + n, Vec3{0.08 * side, 0, 0.01} * k);
    r.add("Middle2" + n, s + "MiddleIntermediate", "Middle1" + n, Vec3{0.03 * side, 0, 0} * k);
    r.add("Middle3" + n, s + "MiddleDistal", "Middle2" + n, Vec3{0.025 * side, 0, 0} * k);
    r.add("UpperLeg" + n, s + "UpperLeg", "Hips", Vec3{0.09 * side, -0.06, 0} * k);
    r.add("LowerLeg" + n, s + "LowerLeg", "UpperLeg" + n, Vec3{0, -0.42, 0.01} * k);
    r.add("Foot" + n, s + "Foot", "LowerLeg" + n, Vec3{0, -0.42, -0.02} * k);
    r.add("Toes" + n, s + "Toes", "Foot" + n, Vec3{0, -0.07, 0.13} * k);
  }
  return r;
}

/// A clip with random rotations on every joint (up to `max_deg`) and a wandering hips path.
Clip random_clip(const Skeleton& sk, int frames, double max_deg, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  Clip c;
  c.name = "random";
  c.sample_rate = 30;
  c.duration = (frames - 1) / 30.0;
  c.tracks.resize(size_t(sk.joint_count()));
  for (int j = 0; j < sk.joint_count(); ++j)
    for (int f = 0; f < frames; ++f) {
      const Vec3 axis = normalize(Vec3{u(rng), u(rng), u(rng)});
      const Quat q =
          sk.joint(j).rest.rotation * Quat::from_axis_angle(axis, max_deg * kPi / 180 * u(rng));
      c.tracks[size_t(j)].rotation.times.push_back(f / 30.0);
      c.tracks[size_t(j)].rotation.values.push_back(q);
      if (j == 0) {
        c.tracks[0].translation.times.push_back(f / 30.0);
        c.tracks[0].translation.values.push_back(sk.joint(0).rest.translation +
                                                 Vec3{0.3 * u(rng), 0.05 * u(rng), 0.3 * u(rng)});
      }
    }
  return c;
}

std::vector<Vec3> positions_at(const Clip& clip, const Skeleton& sk, double t) {
  std::vector<Transform> local(size_t(sk.joint_count()));
  std::vector<Mat4> model(local.size());
  EXPECT_TRUE(sample_pose(clip, sk, t, WrapMode::Clamp, local));
  EXPECT_TRUE(local_to_model(sk.parents(), local, model));
  std::vector<Vec3> p;
  for (const Mat4& m : model) p.push_back(m.translation_part());
  return p;
}

std::vector<Quat> world_rotations_at(const Clip& clip, const Skeleton& sk, double t) {
  std::vector<Transform> local(size_t(sk.joint_count()));
  std::vector<Mat4> model(local.size());
  EXPECT_TRUE(sample_pose(clip, sk, t, WrapMode::Clamp, local));
  EXPECT_TRUE(local_to_model(sk.parents(), local, model));
  std::vector<Quat> q;
  for (const Mat4& m : model) q.push_back(rotation_of(m));
  return q;
}

/// Largest distance between `a`'s and `b`'s positions of each humanoid bone both map.
double max_bone_distance(const TestRig& a, const std::vector<Vec3>& pa, const TestRig& b,
                         const std::vector<Vec3>& pb, double scale_b_to_a = 1) {
  double worst = 0;
  for (const auto& [bone, ja] : a.map.bones) {
    const int jb = b.map.find(bone);
    if (jb < 0) continue;
    worst = std::max(worst, distance(pa[size_t(ja)], pb[size_t(jb)] * scale_b_to_a));
  }
  return worst;
}

TEST(Retarget, OntoTheSameSkeletonIsTheIdentity) {
  const TestRig rig = make_rig({});
  const Skeleton sk = rig.skeleton();
  const Clip clip = random_clip(sk, 20, 40, 1);
  for (RetargetMode mode : {RetargetMode::Rotation, RetargetMode::Direction}) {
    RetargetOptions o;
    o.mode = mode;
    const Clip out = retarget_clip(sk, rig.map, clip, sk, rig.map, o);
    for (int f = 0; f < 20; ++f) {
      const double t = f / 30.0;
      const auto src = positions_at(clip, sk, t), dst = positions_at(out, sk, t);
      for (size_t j = 0; j < src.size(); ++j)
        ASSERT_LE(distance(src[j], dst[j]), 1e-6) << "joint " << j << " frame " << f;
    }
  }
}

TEST(Retarget, OntoAUniformlyScaledCopyScalesPositionsExactly) {
  const TestRig a = make_rig({}), b = make_rig({.scale = 1.37});
  const Skeleton sa = a.skeleton(), sb = b.skeleton();
  const Clip clip = random_clip(sa, 15, 35, 2);
  const Clip out = retarget_clip(sa, a.map, clip, sb, b.map);
  for (int f = 0; f < 15; ++f) {
    const auto src = positions_at(clip, sa, f / 30.0), dst = positions_at(out, sb, f / 30.0);
    for (size_t j = 0; j < src.size(); ++j)
      ASSERT_LE(distance(src[j] * 1.37, dst[j]), 1e-6) << "joint " << j << " frame " << f;
  }
}

TEST(Retarget, KeepsTheTargetsBoneLengths) {
  const TestRig a = make_rig({}), b = make_rig({.spine_bones = 3, .scale = 0.8});
  const Skeleton sa = a.skeleton(), sb = b.skeleton();
  const Clip out = retarget_clip(sa, a.map, random_clip(sa, 10, 50, 3), sb, b.map);
  const auto rest = rest_model_matrices(sb);
  for (int f = 0; f < 10; ++f) {
    const auto p = positions_at(out, sb, f / 30.0);
    for (int j = 1; j < sb.joint_count(); ++j) {
      const int parent = sb.parent(j);
      if (j == b.map.find("hips")) continue;
      const double len =
          distance(rest[size_t(j)].translation_part(), rest[size_t(parent)].translation_part());
      ASSERT_NEAR(distance(p[size_t(j)], p[size_t(parent)]), len, 1e-9) << sb.joint(j).name;
    }
  }
}

TEST(Retarget, APoseAndTPoseDriveEachOtherByRestDirections) {
  // Same proportions, different rest poses: every mapped joint lands where the source's does.
  const TestRig t_pose = make_rig({}), a_pose = make_rig({.arm_down_deg = 45});
  const Skeleton st = t_pose.skeleton(), sa = a_pose.skeleton();
  for (const bool t_to_a : {true, false}) {
    const TestRig& src = t_to_a ? t_pose : a_pose;
    const TestRig& dst = t_to_a ? a_pose : t_pose;
    const Skeleton& ss = t_to_a ? st : sa;
    const Skeleton& sd = t_to_a ? sa : st;
    const Clip clip = random_clip(ss, 12, 40, 4);
    const Clip out = retarget_clip(ss, src.map, clip, sd, dst.map);
    for (int f = 0; f < 12; ++f)
      EXPECT_LE(max_bone_distance(src, positions_at(clip, ss, f / 30.0), dst,
                                  positions_at(out, sd, f / 30.0)),
                1e-6)
          << (t_to_a ? "T → A" : "A → T") << " frame " << f;
  }
}

TEST(Retarget, ARigFacingAnotherWayIsTurnedToMatch) {
  const TestRig src = make_rig({}), dst = make_rig({.yaw_deg = 90});
  const Skeleton ss = src.skeleton(), sd = dst.skeleton();
  const Clip clip = random_clip(ss, 8, 30, 5);
  const Clip out = retarget_clip(ss, src.map, clip, sd, dst.map);
  const Quat yaw = Quat::from_axis_angle(Vec3::unit_y(), kPi / 2);
  for (int f = 0; f < 8; ++f) {
    const auto ps = positions_at(clip, ss, f / 30.0), pd = positions_at(out, sd, f / 30.0);
    for (const auto& [bone, js] : src.map.bones) {
      const int jd = dst.map.find(bone);
      const Vec3 want = rotate(yaw, ps[size_t(js)] - ps[0]);
      EXPECT_LE(distance(want, pd[size_t(jd)] - pd[0]), 1e-6) << bone << " frame " << f;
    }
  }
}

TEST(Retarget, SpineCountsDifferAndTheBendIsSpread) {
  // One source spine bone bent 30° forward; three target spine bones share the bend, and the
  // neck and head above them turn exactly as the source's.
  const TestRig src = make_rig({.spine_bones = 1}), dst = make_rig({.spine_bones = 3});
  const Skeleton ss = src.skeleton(), sd = dst.skeleton();
  Clip clip;
  clip.duration = 0;
  clip.tracks.resize(size_t(ss.joint_count()));
  const int spine = src.map.find("spine");
  clip.tracks[size_t(spine)].rotation.times = {0};
  clip.tracks[size_t(spine)].rotation.values = {Quat::from_axis_angle(Vec3::unit_x(), kPi / 6)};
  const Clip out = retarget_clip(ss, src.map, clip, sd, dst.map);
  const auto ws = world_rotations_at(clip, ss, 0), wd = world_rotations_at(out, sd, 0);
  double previous = 0;
  for (const char* bone : {"spine", "chest", "upperChest"}) {
    const double a = angle_between(wd[size_t(dst.map.find(bone))], Quat::identity());
    EXPECT_GT(a, previous + 1e-3) << bone;
    EXPECT_LE(a, kPi / 6 + 1e-9) << bone;
    previous = a;
  }
  for (const char* bone : {"neck", "head"})
    EXPECT_LE(angle_between(wd[size_t(dst.map.find(bone))], ws[size_t(src.map.find(bone))]), 1e-9)
        << bone;
}

TEST(Retarget, DirectionModeFollowsSegmentsThroughUnmappedJoints) {
  // The source bends its arm at an unmapped roll joint: rotation transfer misses the bend,
  // direction transfer points the target's upper arm at the source's elbow.
  const TestRig src = make_rig({.arm_roll = true}), dst = make_rig({});
  const Skeleton ss = src.skeleton(), sd = dst.skeleton();
  Clip clip;
  clip.tracks.resize(size_t(ss.joint_count()));
  const int roll = ss.find("ArmRollL");
  clip.tracks[size_t(roll)].rotation.times = {0};
  clip.tracks[size_t(roll)].rotation.values = {Quat::from_axis_angle(Vec3::unit_z(), 0.6)};
  const auto ps = positions_at(clip, ss, 0);
  const Vec3 want = normalize(ps[size_t(ss.find("LowerArmL"))] - ps[size_t(ss.find("UpperArmL"))]);
  auto direction = [&](RetargetMode mode) {
    RetargetOptions o;
    o.mode = mode;
    const auto pd = positions_at(retarget_clip(ss, src.map, clip, sd, dst.map, o), sd, 0);
    return normalize(pd[size_t(sd.find("LowerArmL"))] - pd[size_t(sd.find("UpperArmL"))]);
  };
  EXPECT_GT(distance(direction(RetargetMode::Rotation), want), 0.1);
  EXPECT_LE(distance(direction(RetargetMode::Direction), want), 1e-9);
}

TEST(Retarget, ForearmTwistMovesIntoTheLowerArmWithoutMovingAnything) {
  const TestRig rig = make_rig({});
  const Skeleton sk = rig.skeleton();
  Clip clip;
  clip.tracks.resize(size_t(sk.joint_count()));
  const int hand = sk.find("HandL"), lower = sk.find("LowerArmL");
  clip.tracks[size_t(hand)].rotation.times = {0};
  clip.tracks[size_t(hand)].rotation.values = {Quat::from_axis_angle(Vec3::unit_x(), 1.2)};
  RetargetOptions half;
  half.forearm_twist = 0.5;
  const Clip plain = retarget_clip(sk, rig.map, clip, sk, rig.map);
  const Clip spread = retarget_clip(sk, rig.map, clip, sk, rig.map, half);
  const auto p0 = positions_at(plain, sk, 0), p1 = positions_at(spread, sk, 0);
  for (size_t j = 0; j < p0.size(); ++j) EXPECT_LE(distance(p0[j], p1[j]), 1e-9) << j;
  const auto w0 = world_rotations_at(plain, sk, 0), w1 = world_rotations_at(spread, sk, 0);
  EXPECT_LE(angle_between(w0[size_t(hand)], w1[size_t(hand)]), 1e-9);
  EXPECT_NEAR(angle_between(w1[size_t(lower)], Quat::identity()), 0.6, 1e-9);
}

TEST(Retarget, BadInputIsAnErrorNamingThePlace) {
  const TestRig rig = make_rig({});
  const Skeleton sk = rig.skeleton();
  const Clip clip = random_clip(sk, 4, 10, 6);
  Humanoid no_knee = rig.map;
  std::erase_if(no_knee.bones, [](const auto& b) { return b.first == "leftLowerLeg"; });
  try {
    retarget_clip(sk, no_knee, clip, sk, rig.map, {}, "walk.bvh");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.file(), "walk.bvh");
    EXPECT_NE(std::string(e.what()).find("leftLowerLeg"), std::string::npos) << e.what();
  }
  TestRig squashed = make_rig({});
  squashed.joints[size_t(squashed.map.find("leftHand"))].rest.translation = {0, 0, 0};
  try {
    retarget_clip(sk, rig.map, clip, squashed.skeleton(), squashed.map, {}, "a", "avatar.vrm");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.file(), "avatar.vrm");
    EXPECT_NE(std::string(e.what()).find("zero length"), std::string::npos) << e.what();
    EXPECT_NE(e.place().find("LowerArmL"), std::string::npos) << e.place();
  }
  Clip nan = clip;
  nan.tracks[size_t(sk.find("HandR"))].rotation.values[2].x = std::nan("");
  try {
    retarget_clip(sk, rig.map, nan, sk, rig.map, {}, "walk.bvh");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("HandR"), std::string::npos) << e.what();
    EXPECT_NE(e.place().find("t = 0.0666"), std::string::npos) << e.place();
  }
  RetargetOptions bad;
  bad.forearm_twist = 2;
  EXPECT_THROW(retarget_clip(sk, rig.map, clip, sk, rig.map, bad), UsageError);
  bad = {};
  bad.sample_rate = -30;
  EXPECT_THROW(retarget_clip(sk, rig.map, clip, sk, rig.map, bad), UsageError);
}

TEST(Retarget, CmuWalkOntoBothAvatarsKeepsLengthsAndHipsScale) {
  const Asset walk = load_asset(kData + "/bvh/cmu_cgspeed_mb/02_01.bvh");
  for (const char* avatar : {"/vrm/debug_robot.vrm", "/vrm/Godette_vrm_v4.vrm"}) {
    const Asset dst = load_asset(kData + avatar);
    RetargetOptions o;
    o.sample_rate = 30;
    const Clip c = retarget_humanoid(walk, 0, dst, o);
    ASSERT_NO_THROW(c.validate(dst.skeleton.joint_count()));
    EXPECT_DOUBLE_EQ(c.sample_rate, 30);
    const auto rest = rest_model_matrices(dst.skeleton);
    const auto p = positions_at(c, dst.skeleton, c.duration / 2);
    for (int j = 0; j < dst.skeleton.joint_count(); ++j) {
      const int parent = dst.skeleton.parent(j);
      if (parent < 0 || j == dst.humanoid->find("hips")) continue;  // the hips translate
      EXPECT_NEAR(
          distance(p[size_t(j)], p[size_t(parent)]),
          distance(rest[size_t(j)].translation_part(), rest[size_t(parent)].translation_part()),
          1e-6)
          << avatar << " " << dst.skeleton.joint(j).name;
    }
  }
}

}  // namespace
}  // namespace kinema

namespace kinema {
namespace {

TEST(Retarget, CmuWalkOntoItselfIsTheIdentity) {
  const Asset walk = load_asset(kData + "/bvh/cmu_cgspeed_mb/02_01.bvh");
  const Clip out = retarget_humanoid(walk, 0, walk);
  double worst = 0;
  std::string where;
  for (int f = 0; f < 343; f += 7) {
    const double t = std::min(f / out.sample_rate, out.duration);
    const auto a = positions_at(walk.clips[0], walk.skeleton, t);
    const auto b = positions_at(out, walk.skeleton, t);
    for (size_t j = 0; j < a.size(); ++j)
      if (distance(a[j], b[j]) > worst) {
        worst = distance(a[j], b[j]);
        where = walk.skeleton.joint(int(j)).name + " frame " + std::to_string(f);
      }
  }
  EXPECT_LE(worst, 1e-6) << where;
}

}  // namespace
}  // namespace kinema
