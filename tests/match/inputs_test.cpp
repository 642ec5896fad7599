// What motion matching reads besides clips (kinema/match/inputs.h): the humanoid's feature
// joints, TAGS.json and PATH.json, with their errors; and the offline run of a controller along a
// scripted stick (kinema/match/run_along_path.h).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "common/error_of.h"
#include "kinema/blend/foot_contact.h"
#include "kinema/blend/root_motion.h"
#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/match/inputs.h"
#include "kinema/match/run_along_path.h"
#include "kinema/retarget/humanoid.h"
#include "test_paths.h"

using namespace kinema;
using namespace kinema::match;

namespace {

const std::string kData = test_paths::data_dir();

using kinema::test::error_of;

TEST(MatchInputs, FeatureJointsComeFromTheHumanoidMap) {
  const Asset walk = load_asset(kData + "/bvh/cmu_cgspeed_mb/02_01.bvh");
  const FeatureJoints j = feature_joints_of(walk, "02_01.bvh");
  EXPECT_EQ(walk.skeleton.joint(j.hips).name, "Hips");
  EXPECT_EQ(walk.skeleton.joint(j.left_foot).name, "LeftFoot");
  EXPECT_EQ(walk.skeleton.joint(j.right_foot).name, "RightFoot");
  EXPECT_EQ(walk.skeleton.joint(j.left_upper_leg).name, "LeftUpLeg");
  EXPECT_EQ(walk.skeleton.joint(j.right_lower_leg).name, "RightLeg");
  // A skeleton whose names map to no humanoid: the file and the reason are named.
  Asset chain;
  std::vector<Joint> joints(2);
  joints[0].name = "a";
  joints[1].name = "b";
  joints[1].parent = 0;
  chain.skeleton = Skeleton::build(joints, true);
  const Error e = error_of([&] { feature_joints_of(chain, "chain.glb"); });
  EXPECT_EQ(e.file(), "chain.glb");
  EXPECT_NE(e.reason().find("no humanoid"), std::string::npos) << e.what();
}

TEST(MatchInputs, TagRangesByClipWithErrorsAtTheirPointer) {
  const std::vector<std::string> clips{"walk", "run"};
  const auto tags = parse_tag_ranges(
      R"({"tags": [{"clip": "walk", "start": 0, "end": 1.5, "tag": "idle"},
                   {"clip": "run", "start": 2, "end": 2, "tag": "jump"},
                   {"clip": "walk", "start": 3, "end": 4, "tag": "turn"}]})",
      "tags.json", clips);
  ASSERT_EQ(tags.at("walk").size(), 2u);
  EXPECT_EQ(tags.at("walk")[1].tag, "turn");
  EXPECT_DOUBLE_EQ(tags.at("walk")[0].end, 1.5);
  EXPECT_EQ(tags.at("run")[0].tag, "jump");
  struct Bad {
    const char* json;
    const char* place;
    const char* reason;
  };
  for (const Bad& bad : {Bad{"{", "", "not valid JSON"}, Bad{"[]", "/tags", "expected an object"},
                         Bad{R"({"tags": [{"clip": "swim", "start": 0, "end": 1, "tag": "x"}]})",
                             "/tags/0/clip", "no clip \"swim\" among the inputs (walk, run)"},
                         Bad{R"({"tags": [{"clip": "walk", "start": 2, "end": 1, "tag": "x"}]})",
                             "/tags/0", "start is after end"},
                         Bad{R"({"tags": [{"clip": "walk", "start": "0", "end": 1, "tag": "x"}]})",
                             "/tags/0/start", "expected a number of seconds"},
                         Bad{R"({"tags": [{"clip": "walk", "start": 0, "end": 1, "tag": ""}]})",
                             "/tags/0/tag", "expected a non-empty string"}}) {
    const Error e = error_of([&] { parse_tag_ranges(bad.json, "tags.json", clips); });
    EXPECT_EQ(e.file(), "tags.json");
    EXPECT_EQ(e.place(), bad.place) << bad.json;
    EXPECT_NE(e.reason().find(bad.reason), std::string::npos) << e.what();
  }
}

TEST(MatchInputs, StickPathKeysAreHeldAndNormalized) {
  const StickPath p = parse_stick_path(R"({"duration": 6, "keys": [
      {"time": 0, "direction": [0, 2], "speed": 1.5},
      {"time": 2, "direction": [3, 4]},
      {"time": 4, "direction": [1, 0], "speed": 3, "facing": [0, -1]}]})",
                                       "path.json");
  EXPECT_DOUBLE_EQ(p.duration, 6);
  ASSERT_EQ(p.keys.size(), 3u);
  // Walking +Z at 1.5 m/s, facing where it goes (zero facing: follow the velocity).
  EXPECT_DOUBLE_EQ(p.at(1.9).velocity.z, 1.5);
  EXPECT_EQ(p.at(1.9).facing, (Vec3{0, 0, 0}));
  // Standing with a direction: facing it, normalized.
  EXPECT_EQ(p.at(2.0).velocity, (Vec3{0, 0, 0}));
  EXPECT_NEAR(p.at(3).facing.x, 0.6, 1e-12);
  EXPECT_NEAR(p.at(3).facing.z, 0.8, 1e-12);
  // Running +X facing −Z; before the first key the first key holds.
  EXPECT_DOUBLE_EQ(p.at(5).velocity.x, 3);
  EXPECT_DOUBLE_EQ(p.at(5).facing.z, -1);
  EXPECT_DOUBLE_EQ(p.at(-1).velocity.z, 1.5);
}

TEST(MatchInputs, StickPathErrorsNameTheirPointer) {
  struct Bad {
    const char* json;
    const char* place;
    const char* reason;
  };
  for (const Bad& bad :
       {Bad{R"({"keys": []})", "/duration", "expected a number of seconds"},
        Bad{R"({"duration": 0, "keys": [{"time": 0}]})", "/duration", "must be > 0"},
        Bad{R"({"duration": 1e9, "keys": [{"time": 0}]})", "/duration", "at most an hour"},
        Bad{R"({"duration": 1, "keys": []})", "/keys", "non-empty array"},
        Bad{R"({"duration": 1, "keys": [{"time": 1}, {"time": 1}]})", "/keys/1/time",
            "times must increase"},
        Bad{R"({"duration": 1, "keys": [{"time": 0, "speed": 1}]})", "/keys/0/direction",
            "expected [x, z]"},
        Bad{R"({"duration": 1, "keys": [{"time": 0, "speed": 1, "direction": [0, 0]}]})",
            "/keys/0/direction", "non-zero length"},
        Bad{R"({"duration": 1, "keys": [{"time": 0, "speed": 120, "direction": [0, 1]}]})",
            "/keys/0/speed", "0 to 100"},
        Bad{R"({"duration": 1, "keys": [7]})", "/keys/0", "expected an object"}}) {
    const Error e = error_of([&] { parse_stick_path(bad.json, "path.json"); });
    EXPECT_EQ(e.place(), bad.place) << bad.json;
    EXPECT_NE(e.reason().find(bad.reason), std::string::npos) << e.what();
  }
}

TEST(MatchRunAlongPath, FollowsAStraightStickAndRecordsEveryFrame) {
  const Asset turn = load_asset(kData + "/bvh/cmu_iclone_cc3/006_11_turn_30fps.bvh");
  const Asset walk = load_asset(kData + "/bvh/cmu_iclone_cc3/007_12.bvh");
  std::vector<ClipSource> clips;
  for (const Asset* a : {&turn, &walk}) {
    ClipSource s;
    s.name = a == &turn ? "turn" : "walk";
    s.skeleton = &a->skeleton;
    s.clip = &a->clips[0];
    s.joints = feature_joints_of(*a, s.name);
    s.start_time = a == &turn ? 1 / 30.0 : 1 / 60.0;  // frame 0 of these exports is broken
    clips.push_back(s);
  }
  DatabaseOptions o;
  o.mirror = true;
  const Database db = build_database(clips, o);
  const StickPath path = parse_stick_path(
      R"({"duration": 4, "keys": [{"time": 0, "direction": [0, 1], "speed": 1.3}]})", "p.json");
  int last_done = 0, total = 0;
  const PathRun run = run_along_path(db, path, {}, [&](int done, int all) {
    EXPECT_EQ(done, last_done + 1);
    last_done = done;
    total = all;
  });
  EXPECT_EQ(run.frames, 4 * 30 + 1);
  EXPECT_EQ(total, run.frames);
  EXPECT_EQ(run.clip.frame_count(), run.frames);
  EXPECT_NEAR(run.clip.duration, 4.0, 1e-9);
  ASSERT_EQ(run.clip.tracks.size(), size_t(db.skeleton.joint_count()));
  EXPECT_EQ(run.clip.tracks[0].rotation.key_count(), size_t(run.frames));
  EXPECT_GE(run.searches, 30u);
  // It keeps within the clamp of the stick's path and walks at about the stick's speed.
  EXPECT_LT(run.trajectory_error_max, 0.15 + 1e-6);
  EXPECT_LT(run.speed_error_mean, 0.5);
  // Planted feet skate slower than a slow walk (ankles alone: the database has no toes).
  const int feet[] = {db.joints.left_foot, db.joints.right_foot};
  const std::vector<Vec3> ankles = foot_world_positions(run.clip, db.skeleton, feet, db.fps);
  const FootSkateReport skate = measure_foot_skate(ankles, {}, 2, 1.0 / db.fps);
  ASSERT_TRUE(skate.total.speed);
  EXPECT_LT(skate.total.speed->median, 50);
  // The same input gives the same bits.
  const PathRun again = run_along_path(db, path);
  EXPECT_EQ(again.clip.tracks[5].rotation.values, run.clip.tracks[5].rotation.values);
  EXPECT_EQ(again.trajectory_error_mean, run.trajectory_error_mean);
}

}  // namespace
