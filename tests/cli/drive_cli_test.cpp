// tests/cli/drive_cli_test.cpp — `kinema drive` run as a process: a toe keyed from the frame
// (read back and checked against the driven value) and from the distance the hips travelled, the
// JSON summary, usage
// errors (exit 1), bad input with the expression's column (exit 2), and nothing written on either.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_process.h"
#include "kinema/io/asset_file.h"
#include "test_paths.h"

namespace fs = std::filesystem;

namespace {

using kinema::test::sh_quote;

const std::string kWalk = kinema::test_paths::data_dir() + "/bvh/cmu_cgspeed_mb/02_01.bvh";

class DriveCli : public kinema::test::CliProcessTest {
 protected:
  DriveCli() : CliProcessTest("kinema_drive_") {}
};

TEST_F(DriveCli, KeysAToeFromTheFrameAndFromTheHipsPath) {
  const auto r = kinema("drive " + sh_quote(kWalk) +
                        " --joint LeftToeBase --translate y '0.05 * frame' --json -o " +
                        sh_quote(path("driven.glb")));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("joint"), "LeftToeBase");
  EXPECT_EQ(j.at("channel"), "translate y");
  const int keys = j.at("keys");
  EXPECT_GT(keys, 100);
  // Read back: the toe's local y at frame 10 is 0.05 · 10 (in the file's units: metres).
  const kinema::Asset a = kinema::load_asset(path("driven.glb"));
  const int toe = a.skeleton.find("LeftToeBase");
  ASSERT_GE(toe, 0);
  const kinema::JointTrack& track = a.clips[0].tracks[std::size_t(toe)];
  ASSERT_EQ(int(track.translation.key_count()), keys);
  EXPECT_NEAR(track.translation.key_value(10).y, 0.5, 1e-5);

  const auto turn =
      kinema("drive " + sh_quote(kWalk) + " --joint LeftToeBase --rotate x 'Hips_dist / 0.3' -o " +
             sh_quote(path("wheel.bvh")));
  EXPECT_EQ(turn.code, 0) << turn.err;
  EXPECT_NE(turn.out.find("LeftToeBase rotate x = Hips_dist / 0.3"), std::string::npos) << turn.out;
  EXPECT_TRUE(fs::exists(path("wheel.bvh")));
}

TEST_F(DriveCli, ErrorsWriteNothing) {
  const std::string out = " -o " + sh_quote(path("driven.glb"));
  // A misspelt variable: exit 2, the column and a caret.
  const auto typo =
      kinema("drive " + sh_quote(kWalk) + " --joint LeftToeBase --rotate x 'Hips_dst / 0.3'" + out);
  EXPECT_EQ(typo.code, 2);
  EXPECT_NE(typo.err.find("column 1"), std::string::npos) << typo.err;
  EXPECT_NE(typo.err.find("Hips_dst"), std::string::npos) << typo.err;
  // No such joint; a value that is not finite: exit 2.
  EXPECT_EQ(kinema("drive " + sh_quote(kWalk) + " --joint Tail --rotate x 1" + out).code, 2);
  EXPECT_EQ(
      kinema("drive " + sh_quote(kWalk) + " --joint LeftToeBase --rotate x '1 / (frame - 3)'" + out)
          .code,
      2);
  // Neither --rotate nor --translate, an unknown clip, OUT of another kind: exit 1.
  EXPECT_EQ(kinema("drive " + sh_quote(kWalk) + " --joint LeftToeBase 1" + out).code, 1);
  EXPECT_EQ(
      kinema("drive " + sh_quote(kWalk) + " --clip run --joint LeftToeBase --rotate x 1" + out)
          .code,
      1);
  EXPECT_EQ(kinema("drive " + sh_quote(kWalk) + " --joint LeftToeBase --rotate x 1 -o " +
                   sh_quote(path("driven.txt")))
                .code,
            1);
  EXPECT_FALSE(fs::exists(path("driven.glb")));
  EXPECT_FALSE(fs::exists(path("driven.txt")));
}

}  // namespace
