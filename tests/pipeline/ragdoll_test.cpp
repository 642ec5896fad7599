// `kinema ragdoll` as a library call: Godette standing at rest is hit on the head and falls
// (a passive and a powered ragdoll), the clip baked from the animation and the ragdoll, and the
// errors that write nothing.
#include "kinema/pipeline/ragdoll.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <numbers>

#include "kinema/clip/clip.h"
#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/skeleton/skeleton.h"

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
    r.character = std::string(KINEMA_TEST_DATA_DIR) + "/vrm/Godette_vrm_v4.vrm";
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

}  // namespace
}  // namespace kinema::pipeline
