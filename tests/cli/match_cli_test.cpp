// tests/cli/match_cli_test.cpp — `kinema match build` run as a process: the summary, the .kmm it
// writes (read back), tags, usage errors (exit 1), bad input (exit 2) and no partial output.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_process.h"
#include "kinema/io/asset_file.h"
#include "kinema/match/database.h"
#include "kinema/match/learned.h"
#include "test_paths.h"

namespace fs = std::filesystem;

namespace {

using kinema::test::read_all;
using kinema::test::sh_quote;
using kinema::test::write_all;

const std::string kData = kinema::test_paths::data_dir();
const std::string kWalk = kData + "/bvh/cmu_cgspeed_mb/02_01.bvh";
const std::string kBrisk = kData + "/bvh/cmu_iclone_cc3/007_12.bvh";
const std::string kTurn = kData + "/bvh/cmu_iclone_cc3/006_11_turn_30fps.bvh";

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

// `kinema info DB.kmm` shows a database on disk as `match build` reported it when writing it;
// a corrupted database is a clear error (exit 2) naming the file and the byte offset.
TEST_F(MatchCli, InfoShowsADatabaseAndRejectsACorruptedOne) {
  const auto built = kinema("match build " + sh_quote(kWalk) +
                            " --mirror --speeds 0.8,1 --json -o " + sh_quote(path("w.kmm")));
  ASSERT_EQ(built.code, 0) << built.err;
  const auto b = nlohmann::json::parse(built.out);
  auto r = kinema("info --json " + sh_quote(path("w.kmm")));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["format"], "kmm");
  const auto& d = j["database"];
  for (const char* key : {"variants", "frames", "searchable_frames", "features", "feature_bytes",
                          "bytes_per_frame", "poses", "joints", "file_bytes", "tags"})
    EXPECT_EQ(d[key], b[key]) << key;
  EXPECT_EQ(d["variants"], 4);  // mirrored × two speeds
  ASSERT_EQ(d["clip_variants"].size(), 4u);
  EXPECT_EQ(d["clip_variants"][0]["mirrored"], false);  // speeds first, then mirrored
  EXPECT_EQ(d["clip_variants"][2]["mirrored"], true);
  EXPECT_NEAR(d["clip_variants"][0]["speed"].get<double>(), 0.8, 1e-6);
  EXPECT_EQ(d["groups"].size(), 7u);  // feet ×2 positions, ×2 velocities, hip, trajectory ×2
  size_t dims = 0;
  for (const auto& g : d["groups"]) dims += g["dims"].get<size_t>();
  EXPECT_EQ(dims, 27u);
  r = kinema("info " + sh_quote(path("w.kmm")));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("motion-matching database"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("poses 31 joints a frame"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("clip variants: 4"), std::string::npos) << r.out;
  // One byte flipped in the payload: the checksum catches it.
  std::string bytes = read_all(path("w.kmm"));
  bytes[bytes.size() / 2] = char(bytes[bytes.size() / 2] ^ 0x5A);
  write_all(path("bad.kmm"), bytes);
  r = kinema("info " + sh_quote(path("bad.kmm")));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("bad.kmm"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("checksum"), std::string::npos) << r.err;
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

TEST_F(MatchCli, RunFollowsAPathAndReports) {
  auto r = kinema("match build " + sh_quote(kTurn) + " " + sh_quote(kBrisk) +
                  " --mirror --skip-frames 1 -o " + sh_quote(path("db.kmm")));
  ASSERT_EQ(r.code, 0) << r.err;
  write_all(path("path.json"),
            R"({"duration": 6, "keys": [{"time": 0, "direction": [0, 1], "speed": 1.3},
                                      {"time": 3, "direction": [-1, 0], "speed": 1.3}]})");
  r = kinema("match run " + sh_quote(path("db.kmm")) + " --path " + sh_quote(path("path.json")) +
             " --foot-locking --json -o " + sh_quote(path("out.glb")));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["frames"], 181);
  EXPECT_EQ(j["searches"], 61);  // the first frame, then every 0.1 s
  EXPECT_GT(j["transitions"].get<int>(), 0);
  EXPECT_LE(j["trajectory_error_max_m"].get<double>(), 0.15 + 1e-9);
  // Foot locking keeps planted feet still: skate on the ankles and toes, cm/s.
  ASSERT_TRUE(j["foot_skate"]["median_cm_per_s"].is_number()) << j["foot_skate"];
  EXPECT_TRUE(j["foot_skate"]["with_toes"].get<bool>());
  EXPECT_GT(j["foot_skate"]["planted_frames"].get<int>(), 60);
  EXPECT_LT(j["foot_skate"]["median_cm_per_s"].get<double>(), 5.0);
  const kinema::Asset out = kinema::load_asset(path("out.glb"));
  EXPECT_EQ(out.skeleton.joint_count(), 100);
  ASSERT_EQ(out.clips.size(), 1u);
  EXPECT_NEAR(out.clips[0].duration, 6.0, 1e-6);
  // The text report names what it measured.
  r = kinema("match run " + sh_quote(path("db.kmm")) + " --path " + sh_quote(path("path.json")) +
             " -o " + sh_quote(path("out.bvh")));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("searches"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("foot skate while planted: median "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("trajectory error"), std::string::npos) << r.out;
  // Locomotion warping (stride and lower-body turn, plants held) instead of foot locking.
  r = kinema("match run " + sh_quote(path("db.kmm")) + " --path " + sh_quote(path("path.json")) +
             " --warp --json -o " + sh_quote(path("warped.glb")));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto w = nlohmann::json::parse(r.out);
  EXPECT_EQ(w["frames"], 181);
  ASSERT_TRUE(w["foot_skate"]["median_cm_per_s"].is_number()) << w["foot_skate"];
  EXPECT_LT(w["foot_skate"]["median_cm_per_s"].get<double>(), 5.0);
}

TEST_F(MatchCli, RunRejectsBadPathsAndDatabases) {
  auto r =
      kinema("match build " + sh_quote(kBrisk) + " --skip-frames 1 -o " + sh_quote(path("db.kmm")));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto run = [&](const std::string& json, const std::string& db = "db.kmm") {
    write_all(path("p.json"), json);
    return kinema("match run " + sh_quote(path(db)) + " --path " + sh_quote(path("p.json")) +
                  " -o " + sh_quote(path("o.glb")));
  };
  r = run(R"({"keys": []})");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("p.json:/duration"), std::string::npos) << r.err;
  r = run(R"({"duration": 2, "keys": [{"time": 0, "direction": [0, 0], "speed": 1}]})");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("/keys/0/direction: a direction needs a non-zero length"), std::string::npos)
      << r.err;
  r = run(R"({"duration": 2, "keys": [{"time": 1}, {"time": 0.5}]})");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("/keys/1/time: times must increase"), std::string::npos) << r.err;
  r = run("{");
  EXPECT_EQ(r.code, 2);
  EXPECT_FALSE(fs::exists(path("o.glb")));
  // A features-only database cannot be played; a corrupted one is named.
  r = kinema("match build " + sh_quote(kBrisk) + " --features-only -o " + sh_quote(path("f.kmm")));
  ASSERT_EQ(r.code, 0) << r.err;
  r = run(R"({"duration": 1, "keys": [{"time": 0}]})", "f.kmm");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("no poses"), std::string::npos) << r.err;
  std::string bytes = read_all(path("db.kmm"));
  bytes[bytes.size() / 2] ^= 1;
  write_all(path("bad.kmm"), bytes);
  r = run(R"({"duration": 1, "keys": [{"time": 0}]})", "bad.kmm");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("bad.kmm:byte 24: checksum mismatch"), std::string::npos) << r.err;
  // Usage: OUT of another kind.
  r = kinema("match run " + sh_quote(path("db.kmm")) + " --path " + sh_quote(path("p.json")) +
             " -o " + sh_quote(path("o.txt")));
  EXPECT_EQ(r.code, 1);
  EXPECT_FALSE(fs::exists(path("o.glb")));
}

}  // namespace

// `kinema match learn` trains a (tiny) model, writes it and its loss curves; `match run
// MODEL.kml` drives the character with it and `--compare` runs the database beside it;
// `match evaluate` measures it on a database.
TEST_F(MatchCli, LearnsRunsComparesAndEvaluatesAModel) {
  auto r = kinema("match build " + sh_quote(kTurn) + " " + sh_quote(kBrisk) +
                  " --skip-frames 1 -o " + sh_quote(path("db.kmm")));
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string tiny = " --hidden 16 --latent 4 --epochs 0.01 --min-iterations 40";
  r = kinema("match learn " + sh_quote(path("db.kmm")) + tiny + " --json -o " +
             sh_quote(path("m.kml")));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["latent"], 4);
  EXPECT_EQ(j["features"], 27);
  EXPECT_EQ(j["joints"], 100);
  EXPECT_EQ(j["networks"].size(), 3u);
  EXPECT_EQ(j["networks"][0]["iterations"], 40);
  EXPECT_EQ(j["file_bytes"].get<size_t>(), fs::file_size(path("m.kml")));
  EXPECT_LT(j["model_bytes"].get<size_t>(), j["database_bytes"].get<size_t>());
  EXPECT_EQ(j["plot"], path("m.losses.png"));
  EXPECT_EQ(read_all(path("m.losses.png")).substr(1, 3), "PNG");
  const auto model = kinema::match::deserialize_learned_model(read_all(path("m.kml")), "m.kml");
  EXPECT_EQ(model.latent_dims, 4u);
  // `kinema info` shows the model; a flipped byte is a checksum error naming the file.
  r = kinema("info --json " + sh_quote(path("m.kml")));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto info = nlohmann::json::parse(r.out);
  EXPECT_EQ(info["format"], "kml");
  EXPECT_EQ(info["model"]["latent"], 4);
  EXPECT_EQ(info["model"]["networks"][2]["widths"].front(), 27);
  EXPECT_EQ(info["model"]["networks"][2]["widths"].back(), 31);
  EXPECT_EQ(info["model"]["trained_frames"], j["database_frames"]);
  r = kinema("info " + sh_quote(path("m.kml")));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("learned motion-matching model"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("stepper: 31 → 16 → 16 → 31"), std::string::npos) << r.out;
  std::string kml = read_all(path("m.kml"));
  kml[kml.size() / 2] = char(kml[kml.size() / 2] ^ 0x5A);
  write_all(path("bad.kml"), kml);
  r = kinema("info " + sh_quote(path("bad.kml")));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("bad.kml"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("checksum"), std::string::npos) << r.err;

  write_all(path("path.json"),
            R"({"duration": 3, "keys": [{"time": 0, "direction": [0, 1], "speed": 1.3},
                                      {"time": 1.5, "direction": [-1, 0], "speed": 1.3}]})");
  r = kinema("match run " + sh_quote(path("m.kml")) + " --path " + sh_quote(path("path.json")) +
             " --compare " + sh_quote(path("db.kmm")) + " --json -o " + sh_quote(path("l.glb")));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto run = nlohmann::json::parse(r.out);
  EXPECT_EQ(run["backend"], "learned");
  EXPECT_EQ(run["frames"], 91);
  EXPECT_EQ(run["exact"]["frames"], 91);
  EXPECT_EQ(run["searches"], run["exact"]["searches"]);
  EXPECT_TRUE(run["root_distance_mean_m"].is_number());
  EXPECT_TRUE(run["pose_distance_mean_cm"].is_number());
  EXPECT_EQ(kinema::load_asset(path("l.glb")).skeleton.joint_count(), 100);
  r = kinema("match run " + sh_quote(path("m.kml")) + " --path " + sh_quote(path("path.json")) +
             " --compare " + sh_quote(path("db.kmm")) + " -o " + sh_quote(path("l.bvh")));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("learned vs exact: roots "), std::string::npos) << r.out;

  r = kinema("match evaluate " + sh_quote(path("m.kml")) + " " + sh_quote(path("db.kmm")) +
             " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto e = nlohmann::json::parse(r.out);
  EXPECT_GT(e["frames"].get<int>(), 100);
  EXPECT_GT(e["pose_error_p50_cm"].get<double>(), 0);
  EXPECT_LE(e["pose_error_p50_cm"].get<double>(), e["pose_error_p99_cm"].get<double>());
  EXPECT_GE(e["projector_agreement"].get<double>(), 0);
  EXPECT_LE(e["projector_agreement"].get<double>(), 1);
}

TEST_F(MatchCli, LearnAndRunRefuseBadModelsAndOptions) {
  auto r =
      kinema("match build " + sh_quote(kBrisk) + " --skip-frames 1 -o " + sh_quote(path("db.kmm")));
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string tiny = " --hidden 8 --latent 2 --epochs 0.01 --min-iterations 5";
  // Usage: OUT must be a .kml, not the database.
  r = kinema("match learn " + sh_quote(path("db.kmm")) + tiny + " -o " + sh_quote(path("m.kmm")));
  EXPECT_EQ(r.code, 1) << r.err;
  // A corrupted database: exit 2 naming it, nothing written.
  std::string bytes = read_all(path("db.kmm"));
  write_all(path("bad.kmm"), bytes.substr(0, bytes.size() / 2));
  r = kinema("match learn " + sh_quote(path("bad.kmm")) + tiny + " -o " + sh_quote(path("m.kml")));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("bad.kmm"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("m.kml")));
  EXPECT_FALSE(fs::exists(path("m.losses.png")));
  // Training runs in the learn plugin (libkinema_learn_torch.so); one that does not open is a
  // clear error naming where it looked, and nothing is written.
  r = kinema_env(
      "KINEMA_LEARN_PLUGIN=" + sh_quote(path("db.kmm")),
      "match learn " + sh_quote(path("db.kmm")) + tiny + " -o " + sh_quote(path("m.kml")));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("learn plugin"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(path("db.kmm")), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("m.kml")));
  // A features-only database cannot be learned.
  r = kinema("match build " + sh_quote(kBrisk) + " --features-only -o " + sh_quote(path("f.kmm")));
  ASSERT_EQ(r.code, 0) << r.err;
  r = kinema("match learn " + sh_quote(path("f.kmm")) + tiny + " -o " + sh_quote(path("m.kml")));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("no poses"), std::string::npos) << r.err;

  r = kinema("match learn " + sh_quote(path("db.kmm")) + tiny + " -o " + sh_quote(path("m.kml")));
  ASSERT_EQ(r.code, 0) << r.err;
  write_all(path("path.json"), R"({"duration": 1, "keys": [{"time": 0, "direction": [0, 1],
                                                            "speed": 1}]})");
  const std::string run = "match run ";
  const std::string args =
      " --path " + sh_quote(path("path.json")) + " -o " + sh_quote(path("o.glb"));
  // A truncated model: exit 2 naming the file, no output.
  bytes = read_all(path("m.kml"));
  write_all(path("cut.kml"), bytes.substr(0, bytes.size() - 7));
  r = kinema(run + sh_quote(path("cut.kml")) + args);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("cut.kml"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("o.glb")));
  // --compare needs a learned model; tags need a database.
  r = kinema(run + sh_quote(path("db.kmm")) + " --compare " + sh_quote(path("db.kmm")) + args);
  EXPECT_EQ(r.code, 1) << r.err;
  r = kinema(run + sh_quote(path("m.kml")) + " --tags walk" + args);
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_FALSE(fs::exists(path("o.glb")));
  // evaluate on a database of another skeleton.
  r = kinema("match build " + sh_quote(kWalk) + " -o " + sh_quote(path("other.kmm")));
  ASSERT_EQ(r.code, 0) << r.err;
  r = kinema("match evaluate " + sh_quote(path("m.kml")) + " " + sh_quote(path("other.kmm")));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("skeleton"), std::string::npos) << r.err;
}
