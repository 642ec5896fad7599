// tests/cli/gait_cli_test.cpp — `kinema gait` run as a process: a spider and a humanoid character
// walk up the demo stairs (the clip read back: planted feet still, soles above the treads), a
// drawing of the walk, and bad command lines and inputs (exit 1 or 2, nothing written).
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_process.h"
#include "kinema/io/asset_file.h"
#include "test_paths.h"

namespace fs = std::filesystem;

namespace {

using kinema::test::sh_quote;

class GaitCli : public kinema::test::CliProcessTest {
 protected:
  GaitCli() : CliProcessTest("kinema_gait_") {}
  static std::string demo(const std::string& name) {
    return kinema::test_paths::source_dir() + "/data/demo/" + name;
  }
};

TEST_F(GaitCli, ASpiderClimbsTheDemoStairs) {
  const auto r = kinema("gait spider --ground " + sh_quote(demo("stairs.obj")) + " --json -o " +
                        sh_quote(path("spider.glb")));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("legs").size(), 8u);
  EXPECT_GT(j.at("steps").get<int>(), 40);
  EXPECT_LT(j.at("planted_slide_m").get<double>(), 1e-6);
  EXPECT_GT(j.at("lowest_clearance_m").get<double>(), -1e-6);
  const kinema::Asset walk = kinema::load_asset(path("spider.glb"));
  ASSERT_EQ(walk.clips.size(), 1u);
  EXPECT_EQ(walk.skeleton.joint_count(), 2 + 8 * 3);
  EXPECT_EQ(walk.clips[0].frame_count(), j.at("frames").get<int>());
  // The body ends on the landing, 0.75 m up.
  const auto end = kinema::sample_model_pose(walk.clips[0], walk.skeleton, walk.clips[0].duration,
                                             kinema::WrapMode::Clamp);
  EXPECT_GT(end[0].translation_part().y, 0.75);
  const auto render =
      kinema("render " + sh_quote(path("spider.glb")) + " --with " + sh_quote(demo("stairs.obj")) +
             " --time 3 --size 160x120 -o " + sh_quote(path("spider.png")));
  EXPECT_EQ(render.code, 0) << render.err;
  EXPECT_TRUE(fs::exists(path("spider.png")));
}

TEST_F(GaitCli, AHumanoidCharacterWalksAPathOnTheFlat) {
  const auto r = kinema("gait " + sh_quote(demo("character.vrm")) +
                        " --path \"0,0 1.5,1.5; 3,0\" --speed 0.8 --fps 24 --json -o " +
                        sh_quote(path("walk.vrm")));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("legs").size(), 2u);
  EXPECT_NEAR(j.at("distance_m").get<double>(), 2 * std::sqrt(4.5), 1e-9);
  EXPECT_LT(j.at("planted_slide_m").get<double>(), 1e-6);
  const kinema::Asset walk = kinema::load_asset(path("walk.vrm"));
  EXPECT_FALSE(walk.meshes.empty());  // the character comes along
  EXPECT_TRUE(walk.humanoid.has_value());
}

TEST_F(GaitCli, BadCommandLinesAndInputsWriteNothing) {
  struct Case {
    std::string args;
    int code;
    std::string says;
  };
  const std::string out = " -o " + sh_quote(path("w.glb"));
  const Case cases[] = {
      {"spider -o " + sh_quote(path("w.pc2")), 1, ".glb"},
      {"spider --path \"0,0 1,x\"" + out, 1, "at character 7"},
      {"spider --path \"0,0\"" + out, 1, "at least two points"},
      {"spider --speed -1" + out, 1, "--speed"},
      {"spider --speed 1e-9" + out, 1, "at most 3600 s"},
      {"spider --path \"0,0 1e300,0 -1e300,0\"" + out, 1, "at most 3600 s"},
      {"spider --path \"0,0 1e999,0\"" + out, 1, "not finite"},
      {"spider -o " + sh_quote(path("w.vrm")), 1, "humanoid"},
      {"spider --ground " + sh_quote(demo("stairs.obj")) + " --path \"0,0 9,9\"" + out, 2,
       "path point 1 (9, 9)"},
      {sh_quote(demo("stairs.obj")) + out, 2, "stairs.obj"},
  };
  for (const Case& c : cases) {
    const auto r = kinema("gait " + c.args);
    EXPECT_EQ(r.code, c.code) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.args << "\n" << r.err;
    EXPECT_FALSE(fs::exists(path("w.glb"))) << c.args;
  }
}

}  // namespace
