// `kinema ragdoll` as a library call: Godette standing at rest is hit on the head and falls
// (a passive and a powered ragdoll), the clip baked from the animation and the ragdoll, and the
// errors that write nothing.
#include "kinema/pipeline/ragdoll.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <numbers>

#include "kinema/clip/clip.h"
#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/io/gltf.h"
#include "kinema/skeleton/skeleton.h"
#include "test_paths.h"

namespace kinema::pipeline {
namespace {

namespace fs = std::filesystem;

class RagdollRun : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kinema_ragdoll_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  RagdollRequest request(const std::string& out, bool powered) const {
    RagdollRequest r;
    r.character = test_paths::data_dir() + "/vrm/Godette_vrm_v4.vrm";
    r.out = path(out);
    r.hit_time = 0.2;
    r.hit_bone = "head";  // the humanoid name; the joint is head_Armature
    r.hit_impulse = {0, 0, -80};
    r.powered = powered;
    r.seconds_after = 2.5;
    return r;
  }
  fs::path dir_;
};

// How far (rad, summed over the joints with a body) the final pose bends from the rest pose.
double bend_from_rest(const Asset& a) {
  const Clip& c = a.clips.at(0);
  const std::vector<Transform> rest = a.skeleton.rest_pose();
  std::vector<Transform> last(rest.size());
  sample_pose(c, a.skeleton, c.duration, WrapMode::Clamp, last);
  double sum = 0;
  for (const char* name : {"upper_arm.l_Armature", "upper_arm.r_Armature", "lowerarm.l_Armature",
                           "lowerarm.r_Armature", "thigh.l_Armature", "thigh.r_Armature",
                           "shin.l_Armature", "shin.r_Armature", "neck_Armature"}) {
    const size_t j = size_t(a.skeleton.find(name));
    sum += angle_between(last[j].rotation, rest[j].rotation);
  }
  return sum;
}

TEST_F(RagdollRun, HitOnTheHeadShesFallsAndTheClipHoldsTheAnimationThenTheRagdoll) {
  const RagdollResult r = run_ragdoll(request("passive.glb", false));
  EXPECT_EQ(r.hit_body, "head_Armature");
  EXPECT_GE(r.bodies, 14u);
  EXPECT_EQ(r.joints, r.bodies - 1);
  EXPECT_EQ(r.clip_name, "rest_ragdoll");  // Godette has no clip: she stands at rest until the hit
  EXPECT_EQ(r.frames, 6 + 75 + 1);         // 0.2 s and 2.5 s at 30 fps, and the hit's frame
  EXPECT_EQ(r.steps, 75 * 4);              // 120 steps a second
  EXPECT_LT(r.worst_joint_error, 1e-3);
  EXPECT_LT(r.final_height, 0.5);  // on the ground (she stands 1.2 m)
  const Asset out = load_asset(path("passive.glb"));
  ASSERT_EQ(out.clips.size(), 1u);
  EXPECT_NEAR(out.clips[0].duration, (r.frames - 1) / 30.0, 1e-6);  // glTF keeps times as floats
  // Before the hit the pose is the rest pose.
  std::vector<Transform> first(size_t(out.skeleton.joint_count()));
  sample_pose(out.clips[0], out.skeleton, 0.1, WrapMode::Clamp, first);
  const std::vector<Transform> rest = out.skeleton.rest_pose();
  for (size_t j = 0; j < rest.size(); ++j)
    EXPECT_LT(angle_between(first[j].rotation, rest[j].rotation), 1e-5) << j;
}

TEST_F(RagdollRun, PoweredRagdollKeepsItsLimbsCloserToTheClipThanAPassiveOne) {
  run_ragdoll(request("passive.glb", false));
  run_ragdoll(request("powered.glb", true));
  const double passive = bend_from_rest(load_asset(path("passive.glb")));
  const double powered = bend_from_rest(load_asset(path("powered.glb")));
  EXPECT_LT(powered, 0.7 * passive) << "passive " << passive << " rad, powered " << powered;
}

TEST_F(RagdollRun, UnknownBoneIsRefusedAndNothingIsWritten) {
  RagdollRequest r = request("none.glb", false);
  r.hit_bone = "tail";
  try {
    run_ragdoll(r);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.place(), "tail");
    EXPECT_NE(e.reason().find("no joint or humanoid bone named \"tail\""), std::string::npos);
  }
  EXPECT_FALSE(fs::exists(path("none.glb")));
  r = request("none.obj", false);
  EXPECT_THROW(run_ragdoll(r), UsageError);
  r = request("none.glb", false);
  r.rate = 100;  // not a multiple of 30
  EXPECT_THROW(run_ragdoll(r), UsageError);
}

TEST(RagdollLimitsFromIk, HingesStayHingesAndSwingTwistsBecomeConesHoldingTheRest) {
  std::vector<JointLimit> ik(4);
  ik[1] = JointLimit::of(make_hinge_limit({1, 0, 0}, 0.2, 2.0));  // rest outside: widened to 0
  ik[2] = JointLimit::of(make_swing_twist_limit({0, 1, 0}, {1, 0, 0}, 0.3, 0.6, -0.4, 0.5));
  ik[3] = JointLimit::of(make_swing_twist_limit({0, 0, 1}, 0.0, -std::numbers::pi, 0.1));
  const std::vector<RagdollJointLimit> r = ragdoll_limits_from_ik(ik);
  ASSERT_EQ(r.size(), 3u);  // joint 0 has none
  EXPECT_EQ(r[0].joint, 1);
  EXPECT_EQ(r[0].kind, JointKind::Hinge);
  EXPECT_DOUBLE_EQ(r[0].lower, 0);
  EXPECT_DOUBLE_EQ(r[0].upper, 2.0);
  EXPECT_EQ(r[1].kind, JointKind::ConeTwist);
  EXPECT_DOUBLE_EQ(r[1].swing, 0.6);  // the circle around the ellipse
  EXPECT_DOUBLE_EQ(r[1].twist_lower, -0.4);
  EXPECT_DOUBLE_EQ(r[1].twist_upper, 0.5);
  EXPECT_DOUBLE_EQ(r[2].swing, 0.01);        // a cone the joint can hold
  EXPECT_DOUBLE_EQ(r[2].twist_lower, -3.1);  // inside (−π, π)
  EXPECT_EQ(r[2].axis.z, 1);
}

TEST_F(RagdollRun, LimitsFileStiffensTheKneesAndABadOneWritesNothing) {
  const std::string limits = path("limits.json");
  std::ofstream(limits) << R"({"leftLowerLeg": {"hinge": [1, 0, 0], "range": [0, 0]},
                               "shin.r_Armature": {"hinge": [1, 0, 0], "range": [0, 0]}})";
  RagdollRequest r = request("stiff.glb", false);
  r.limits_file = limits;
  const RagdollResult stiff = run_ragdoll(r);
  EXPECT_LT(stiff.worst_joint_error, 1e-3);
  const Asset out = load_asset(path("stiff.glb"));
  std::vector<Transform> last(size_t(out.skeleton.joint_count()));
  sample_pose(out.clips[0], out.skeleton, out.clips[0].duration, WrapMode::Clamp, last);
  const std::vector<Transform> rest = out.skeleton.rest_pose();
  for (const char* shin : {"shin.l_Armature", "shin.r_Armature"}) {
    const size_t j = size_t(out.skeleton.find(shin));
    EXPECT_LT(angle_between(last[j].rotation, rest[j].rotation), 0.05) << shin;  // straight
  }

  std::ofstream(limits, std::ios::trunc)
      << R"({"leftLowerLeg": {"hinge": [0, 0, 0], "range": [0, 90]}})";
  r.out = path("bad.glb");
  try {
    run_ragdoll(r);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.file(), limits);
    EXPECT_EQ(e.place(), "/leftLowerLeg/hinge");
  }
  EXPECT_FALSE(fs::exists(path("bad.glb")));
}

// A fall played backwards from where she lies to where she was hit: a get-up clip that starts
// in exactly the pose such a fall ends in (a stand-in for captured get-ups, which the test data
// lacks).
Clip reversed_fall(const Asset& fall, double hit_time, const std::string& name) {
  const Clip& c = fall.clips.at(0);
  Clip out;
  out.name = name;
  out.sample_rate = 30;
  out.tracks.resize(c.tracks.size());
  std::vector<Transform> pose(size_t(fall.skeleton.joint_count()));
  const int frames = int(std::round((c.duration - hit_time) * 30));
  for (int k = 0; k <= frames; ++k) {
    sample_pose(c, fall.skeleton, c.duration - k / 30.0, WrapMode::Clamp, pose);
    for (size_t j = 0; j < pose.size(); ++j)
      if (!c.tracks[j].empty()) append_key(out.tracks[j], k / 30.0, pose[j]);
  }
  out.duration = frames / 30.0;
  return out;
}

TEST_F(RagdollRun, GetsUpFromTheCandidateFrameNearestHowSheLies) {
  // Godette standing (a clip of her rest pose), written once so that every run below reads the
  // same file.
  Asset character = load_asset(request("x.glb", false).character);
  Clip stand;
  stand.name = "stand";
  stand.tracks.resize(size_t(character.skeleton.joint_count()));
  const std::vector<Transform> rest = character.skeleton.rest_pose();
  for (size_t j = 0; j < rest.size(); ++j)
    for (const double t : {0.0, 1.0}) append_key(stand.tracks[j], t, rest[j]);
  stand.duration = 1;
  character.clips = {stand};
  write_gltf(character, path("standing.vrm"), GltfWriteOptions{});
  // Two get-ups: from where she lies on her side after a push on the head toward −Z (the way
  // she faces), and on her back after one toward +Z.
  for (const auto& [push, name] : {std::pair{-80.0, "side.glb"}, std::pair{80.0, "back.glb"}}) {
    RagdollRequest fall = request(name, false);
    fall.character = path("standing.vrm");
    fall.clip = "stand";
    fall.hit_impulse = {0, 0, push};
    run_ragdoll(fall);
  }
  character = load_asset(path("standing.vrm"));
  character.clips.push_back(reversed_fall(load_asset(path("back.glb")), 0.2, "up_from_back"));
  character.clips.push_back(reversed_fall(load_asset(path("side.glb")), 0.2, "up_from_side"));
  write_gltf(character, path("getup.vrm"), GltfWriteOptions{});

  // The same falls again find their own clip's first frame; other falls some frame of either.
  for (const double push : {-80.0, 80.0, -75.0, 70.0}) {
    RagdollRequest r = request("up.glb", false);
    r.character = path("getup.vrm");
    r.clip = "stand";
    r.hit_impulse = {0, 0, push};
    r.get_up = {"up_from_back", "up_from_side"};
    const RagdollResult result = run_ragdoll(r);
    if (std::abs(push) == 80) {
      EXPECT_EQ(result.get_up_clip, push < 0 ? "up_from_side" : "up_from_back");
      EXPECT_EQ(result.get_up_from, 0);
      EXPECT_LT(result.get_up_cost, 1e-3);
    } else {
      EXPECT_FALSE(result.get_up_clip.empty());
      EXPECT_GT(result.get_up_cost, 1e-3);
    }
    const Asset out = load_asset(r.out);
    const Clip& baked = out.clips.at(0);
    EXPECT_GT(result.frames, 6 + 75 + 1);
    EXPECT_NEAR(baked.duration, (result.frames - 1) / 30.0, 1e-5);
    // She stands at the end, and the hand-over into the get-up has no jump.
    const size_t head = size_t(out.humanoid->find("head"));
    std::vector<Transform> pose(size_t(out.skeleton.joint_count()));
    std::vector<Mat4> model(pose.size()), before(pose.size());
    double worst_jump = 0;
    for (int f = 6 + 75; f < result.frames; ++f) {
      sample_pose(baked, out.skeleton, f / 30.0, WrapMode::Clamp, pose);
      local_to_model(out.skeleton.parents(), std::span<const Transform>(pose),
                     std::span<Mat4>(model));
      if (f > 6 + 75)
        worst_jump = std::max(worst_jump, distance(model[head].transform_point({0, 0, 0}),
                                                   before[head].transform_point({0, 0, 0})));
      before = model;
    }
    std::vector<Mat4> rest_model(pose.size());
    local_to_model(out.skeleton.parents(), std::span<const Transform>(rest),
                   std::span<Mat4>(rest_model));
    EXPECT_NEAR(model[head].transform_point({0, 0, 0}).y,
                rest_model[head].transform_point({0, 0, 0}).y, 0.05);
    EXPECT_LT(worst_jump, 0.25) << "m a frame";
  }
  RagdollRequest r = request("none.glb", false);
  r.get_up = {"cartwheel"};
  EXPECT_THROW(run_ragdoll(r), UsageError);
  EXPECT_FALSE(fs::exists(path("none.glb")));
}

}  // namespace
}  // namespace kinema::pipeline
