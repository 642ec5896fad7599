// tests/cli/match_cli_test.cpp — `kinema match build` run as a process: the summary, the .kmm it
// writes (read back), tags, usage errors (exit 1), bad input (exit 2) and no partial output.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_process.h"
#include "kinema/io/file.h"
#include "kinema/match/database.h"

namespace fs = std::filesystem;

namespace {

using kinema::test::read_all;
using kinema::test::sh_quote;
using kinema::test::write_all;

const std::string kData = KINEMA_TEST_DATA_DIR;
const std::string kWalk = kData + "/bvh/cmu_cgspeed_mb/02_01.bvh";
const std::string kBrisk = kData + "/bvh/cmu_iclone_cc3/007_12.bvh";

class MatchCli : public kinema::test::CliProcessTest {
 protected:
  MatchCli() : CliProcessTest("kinema_match_") {}
};

TEST_F(MatchCli, BuildsADatabaseFromTwoRigsAndReportsIt) {
  const auto r =
      kinema("match build " + sh_quote(kWalk) + " " + sh_quote(kBrisk) +
             " --mirror --skip-frames 1 --features-only --json -o " + sh_quote(path("db.kmm")));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["clips"], 2);
  EXPECT_EQ(j["variants"], 4);
  EXPECT_EQ(j["features"], 27);
  const kinema::match::Database db =
      kinema::match::deserialize_database(read_all(path("db.kmm")), "db.kmm");
  EXPECT_EQ(db.frames(), j["frames"].get<size_t>());
  EXPECT_EQ(db.clips[0].name, "02_01");
  EXPECT_EQ(db.clips[2].name, "007_12");
  // 02_01 is 342 frames at 120 fps = 2.85 s; one frame skipped → 2.842 s → 86 frames at 30 fps.
  EXPECT_EQ(db.clips[0].frame_count, 86u);
  EXPECT_NEAR(db.clips[0].start_time, 1 / 120.005, 1e-4);
  EXPECT_EQ(j["bytes_per_frame"].get<double>(), 27 * 4 + 1);
  EXPECT_FALSE(db.has_poses());
  // Poses need one skeleton: the two rigs are refused without --features-only.
  const auto refused = kinema("match build " + sh_quote(kWalk) + " " + sh_quote(kBrisk) + " -o " +
                              sh_quote(path("poses.kmm")));
  EXPECT_EQ(refused.code, 2);
  EXPECT_NE(refused.err.find("its skeleton differs"), std::string::npos) << refused.err;
  EXPECT_FALSE(fs::exists(path("poses.kmm")));
}

TEST_F(MatchCli, StoresPosesForOneSkeletonIncludingMirroredFrames) {
  const auto r =
      kinema("match build " + sh_quote(kWalk) + " --mirror -o " + sh_quote(path("w.kmm")));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("poses 31 joints a frame"), std::string::npos) << r.out;
  const auto db = kinema::match::deserialize_database(read_all(path("w.kmm")), "w.kmm");
  ASSERT_TRUE(db.has_poses());
  EXPECT_EQ(db.poses.size(), db.frames() * 31);
  // The mirrored copy's hips move with x negated.
  const uint32_t half = db.clips[1].first_frame;
  EXPECT_NEAR(db.pose(half + 20)[0].translation.x, -db.pose(20)[0].translation.x, 1e-4);
  EXPECT_NEAR(db.pose(half + 20)[0].translation.z, db.pose(20)[0].translation.z, 1e-4);
}

TEST_F(MatchCli, TagsFromJsonAndTheirErrors) {
  write_all(path("tags.json"),
            R"({"tags": [{"clip": "02_01", "start": 0, "end": 1.0, "tag": "walk"},
                         {"clip": "02_01", "start": 2.0, "end": 9, "tag": "stop"}]})");
  auto r = kinema("match build " + sh_quote(kWalk) + " --tags " + sh_quote(path("tags.json")) +
                  " -o " + sh_quote(path("db.kmm")));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("tags walk stop"), std::string::npos) << r.out;
  const auto db = kinema::match::deserialize_database(read_all(path("db.kmm")));
  EXPECT_EQ(db.features.tags[0], 1u);
  EXPECT_EQ(db.features.tags[45], 0u);
  EXPECT_EQ(db.features.tags[80], 2u);

  write_all(path("bad.json"),
            R"({"tags": [{"clip": "02_01", "start": "x", "end": 1, "tag": "w"}]})");
  r = kinema("match build " + sh_quote(kWalk) + " --tags " + sh_quote(path("bad.json")) + " -o " +
             sh_quote(path("b.kmm")));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("bad.json:/tags/0/start: expected a number"), std::string::npos) << r.err;
  write_all(path("broken.json"), "{\"tags\": [");
  r = kinema("match build " + sh_quote(kWalk) + " --tags " + sh_quote(path("broken.json")) +
             " -o " + sh_quote(path("b.kmm")));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("not valid JSON"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("b.kmm")));
}

TEST_F(MatchCli, UsageAndInputErrorsLeaveNothingBehind) {
  // Usage: OUT not .kmm, OUT = an input, a bad speed list.
  auto r = kinema("match build " + sh_quote(kWalk) + " -o " + sh_quote(path("db.bin")));
  EXPECT_EQ(r.code, 1) << r.err;
  r = kinema("match build " + sh_quote(kWalk) + " --speeds 1,-2 -o " + sh_quote(path("db.kmm")));
  EXPECT_EQ(r.code, 1) << r.err;
  r = kinema("match build " + sh_quote(kWalk) + " --trajectory 0.5,0.2 -o " +
             sh_quote(path("db.kmm")));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("increasing"), std::string::npos) << r.err;
  // Bad input: a missing file, a truncated BVH, a file without legs.
  r = kinema("match build " + sh_quote(path("none.bvh")) + " -o " + sh_quote(path("db.kmm")));
  EXPECT_EQ(r.code, 2) << r.err;
  const std::string walk = read_all(kWalk);
  write_all(path("cut.bvh"), walk.substr(0, walk.size() / 3));
  r = kinema("match build " + sh_quote(path("cut.bvh")) + " -o " + sh_quote(path("db.kmm")));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("cut.bvh"), std::string::npos) << r.err;
  write_all(path("stick.bvh"),
            "HIERARCHY\nROOT a\n{\n OFFSET 0 0 0\n CHANNELS 6 Xposition Yposition Zposition "
            "Zrotation Xrotation Yrotation\n JOINT b\n {\n  OFFSET 0 1 0\n  CHANNELS 3 Zrotation "
            "Xrotation Yrotation\n  End Site\n  {\n   OFFSET 0 1 0\n  }\n }\n}\nMOTION\nFrames: 2\n"
            "Frame Time: 0.033333\n0 0 0 0 0 0 0 0 0\n0 0 1 0 0 0 0 0 0\n");
  r = kinema("match build " + sh_quote(path("stick.bvh")) + " -o " + sh_quote(path("db.kmm")));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("cannot find the hips and both feet"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("db.kmm")));
  // A failure keeps an existing OUT untouched.
  write_all(path("keep.kmm"), "old");
  r = kinema("match build " + sh_quote(path("cut.bvh")) + " -o " + sh_quote(path("keep.kmm")));
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(read_all(path("keep.kmm")), "old");
}

}  // namespace
