// tests/cli/render_crowd_cli_test.cpp — `kinema render SCENE.json`, run as a process: a crowd
// scene drawn as `kinema crowd` draws it (the same PNG, byte for byte), its LOD tiers in their
// colours with --lod-colours; a malformed scene refused (exit 2, nothing written); render's
// options that make no sense for a scene, and outputs that are not pictures, refused (exit 1).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli_process.h"
#include "kinema/core/file.h"
#include "png_pixels.h"
#include "test_paths.h"

namespace fs = std::filesystem;

namespace render_crowd_cli_test {
namespace {

using kinema::test::sh_quote;

// The demo square's characters, a near camera and tiers close enough that all four are on
// screen (as crowd_cli_test.cpp's), walked for a fifth of a second.
std::string characters_scene() {
  const std::string data = kinema::test_paths::source_dir() + "/data/demo/";
  return R"({"seconds": 0.2, "step": 0.0166666667, "area": {"lo": [-20, -10], "hi": [40, 10]},
    "agents": [{"block": {"origin": [-18, -6], "rows": 12, "columns": 12, "spacing": 1.0,
                          "goal_offset": [30, 0]}}],
    "characters": {"walk": ")" +
         data + R"(pab_walk.glb", "lod": {"mid": 7, "far": 11, "farthest": 15}},
    "camera": {"eye": [-22, 7, 0], "target": [-8, 0, 0]}})";
}

class RenderCrowdCli : public kinema::test::CliProcessTest {
 protected:
  RenderCrowdCli() : CliProcessTest("kinema_render_crowd_") {}
  std::string scene(const std::string& name, const std::string& text) {
    const std::string p = path(name);
    std::ofstream(p) << text;
    return p;
  }
};

TEST_F(RenderCrowdCli, DrawsTheSceneAsKinemaCrowdDoesWithTheTiersInTheirColours) {
  const std::string s = scene("crowd.json", characters_scene());
  const auto r = kinema("render " + sh_quote(s) + " --size 160x96 --contact-sheet 1 --fps 30 " +
                        "--lod-colours -o " + sh_quote(path("render.png")));
  ASSERT_EQ(r.code, 0) << r.err;
  // kinema crowd's summary, after the verb's name.
  EXPECT_EQ(r.out.rfind("kinema render: 144 agents", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("at their LOD tiers"), std::string::npos) << r.out;
  const std::string png = kinema::read_file(path("render.png"));
  int width = 0, height = 0;
  ASSERT_TRUE(kinema::test::png_size(png, width, height));
  EXPECT_EQ(width, 160);
  EXPECT_EQ(height, 96);
  const std::vector<uint8_t> rgba = kinema::test::png_rgba(png);
  const kinema::test::TierPixels coloured =
      kinema::test::count_tier_pixels(rgba, 160, 0, 0, 160, 96);
  EXPECT_GT(coloured.green, 20);
  EXPECT_GT(coloured.yellow, 20);
  EXPECT_GT(coloured.orange, 5);
  EXPECT_GT(coloured.red, 5);
  // The very picture kinema crowd draws.
  const auto c = kinema("crowd " + sh_quote(s) + " --size 160x96 --contact-sheet 1 --fps 30 " +
                        "--lod-colours -o " + sh_quote(path("crowd.png")));
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_EQ(kinema::read_file(path("crowd.png")), png);
}

TEST_F(RenderCrowdCli, AMalformedSceneIsRefusedAtItsJsonPointerAndWritesNothing) {
  const std::string s =
      scene("bad.json", R"({"agents": [{"position": [0, "x"], "goal": [1, 1]}]})");
  const auto r = kinema("render " + sh_quote(s) + " -o " + sh_quote(path("bad.png")));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("/agents/0/position/1"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("bad.png")));
  // A picture of a scene without characters names what is missing.
  const std::string bare =
      scene("bare.json", R"({"agents": [{"position": [0, 0], "goal": [1, 1]}]})");
  const auto b = kinema("render " + sh_quote(bare) + " -o " + sh_quote(path("bare.png")));
  EXPECT_EQ(b.code, 2) << b.err;
  EXPECT_NE(b.err.find("/characters"), std::string::npos) << b.err;
  EXPECT_FALSE(fs::exists(path("bare.png")));
}

TEST_F(RenderCrowdCli, OptionsThatMakeNoSenseForASceneAreUsageErrors) {
  const std::string s = scene("crowd.json", characters_scene());
  const struct {
    std::string options, out, says;
  } cases[] = {
      {"--clip walk", "x.png", "--clip"},
      {"--time 1", "x.png", "--time"},
      {"--frames 0:3", "x.png", "--frames"},
      {"--camera above", "x.png", "--camera"},
      {"--with other.glb", "x.png", "--with"},
      {"--plate plate.png", "x.png", "--plate"},
      {"--no-ground", "x.png", "--no-ground"},
      {"", "x.glb", "kinema crowd"},  // not a picture: kinema crowd writes it
      {"", "x.pc2", "kinema crowd"},
      {"", "x_%04d.png", ".png"},
      {"", "x.exr", ".mp4"},
  };
  for (const auto& c : cases) {
    const auto r =
        kinema("render " + sh_quote(s) + " " + c.options + " -o " + sh_quote(path(c.out)));
    EXPECT_EQ(r.code, 1) << c.options << " -o " << c.out << "\n" << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.options << " -o " << c.out << "\n"
                                                     << r.err;
  }
  for (const auto& e : fs::directory_iterator(dir_))
    EXPECT_EQ(e.path().extension(), ".json") << e.path();
  // --lod-colours colours a crowd: not for a character file.
  const std::string bvh = kinema::test_paths::data_dir() + "/bvh/cmu_cgspeed_mb/02_01.bvh";
  const auto r = kinema("render " + sh_quote(bvh) + " --lod-colours -o " + sh_quote(path("b.png")));
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("--lod-colours"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("b.png")));
}

}  // namespace
}  // namespace render_crowd_cli_test
