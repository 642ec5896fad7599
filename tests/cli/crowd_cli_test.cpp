// tests/cli/crowd_cli_test.cpp — `kinema crowd` run as a process: the demo square walked (agents
// arrive, none overlap), the point cache and sidecar read back and drawn, a scene on the demo
// stairs, and bad scenes (malformed JSON, values out of range, a goal off the navigation grid or in
// a wall) refused with the JSON pointer, exit 2 and nothing written.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_process.h"
#include "kinema/io/particle_sidecar.h"
#include "kinema/io/point_cache.h"

namespace fs = std::filesystem;

namespace {

using kinema::test::sh_quote;

class CrowdCli : public kinema::test::CliProcessTest {
 protected:
  CrowdCli() : CliProcessTest("kinema_crowd_") {}
  std::string scene(const std::string& name, const std::string& text) {
    const std::string p = path(name);
    std::ofstream(p) << text;
    return p;
  }
  static std::string demo(const std::string& name) {
    return std::string(KINEMA_SOURCE_DIR) + "/data/demo/" + name;
  }
};

TEST_F(CrowdCli, WalksTheDemoSquareWithoutOverlapAndWritesACacheRenderCanDraw) {
  const auto r = kinema("crowd " + sh_quote(demo("crowd_square.json")) +
                        " --seconds 20 --json -o " + sh_quote(path("square.pc2")));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("agents"), 1000);
  EXPECT_EQ(j.at("steps"), 1200);
  EXPECT_LT(j.at("max_overlap_fraction").get<double>(), 0.05);
  EXPECT_GT(j.at("navigation_open_cells").get<int>(), 0);
  const kinema::PointCache cache = kinema::read_pc2(path("square.pc2"));
  EXPECT_EQ(cache.points, 1000);
  EXPECT_EQ(cache.samples(), 1201);
  // Everyone has set off east (the block) or west (the 100 scattered the other way).
  int moved = 0;
  for (int p = 0; p < cache.points; ++p)
    moved += std::abs(cache.at(1200, p).x - cache.at(0, p).x) > 5.0f;
  EXPECT_GT(moved, 900);
  EXPECT_EQ(kinema::read_particle_sidecar(path("square.kpa")).points.size(), 1000u);
  const auto render = kinema("render " + sh_quote(path("square.pc2")) +
                             " --camera above --time 10 --particle-size 0.6 --size 160x120 -o " +
                             sh_quote(path("square.png")));
  EXPECT_EQ(render.code, 0) << render.err;
  EXPECT_TRUE(fs::exists(path("square.png")));
}

TEST_F(CrowdCli, AgentsClimbTheDemoStairsToTheLanding) {
  const std::string s = scene("stairs.json", R"({
    "seconds": 12, "step": 0.02,
    "ground": {"file": ")" + demo("stairs.obj") + R"(", "cell_size": 0.25, "max_step": 0.2},
    "agents": [{"block": {"origin": [0, -2.6], "rows": 2, "columns": 3, "spacing": 0.8,
                          "goal_offset": [0, 5]}}]
  })");
  const auto r = kinema("crowd " + sh_quote(s) + " --json -o " + sh_quote(path("stairs.pc2")));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("arrived"), 6);
  const kinema::PointCache cache = kinema::read_pc2(path("stairs.pc2"));
  for (int p = 0; p < cache.points; ++p) {
    EXPECT_FLOAT_EQ(cache.at(0, p).y, 0.0f);                     // on the floor
    EXPECT_FLOAT_EQ(cache.at(cache.samples() - 1, p).y, 0.75f);  // on the landing
  }
  // A step higher than the agents can climb: the landing cannot be reached.
  const std::string steep = scene("steep.json", R"({
    "ground": {"file": ")" + demo("stairs.obj") + R"(", "max_step": 0.1},
    "agents": [{"position": [0.5, -2.5], "goal": [0.5, 2.5]}]
  })");
  const auto refused = kinema("crowd " + sh_quote(steep) + " -o " + sh_quote(path("steep.pc2")));
  EXPECT_EQ(refused.code, 2);
  EXPECT_NE(refused.err.find("/agents/0"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("no path"), std::string::npos) << refused.err;
  EXPECT_FALSE(fs::exists(path("steep.pc2")));
}

TEST_F(CrowdCli, BadScenesAreRefusedAtTheirJsonPointerAndWriteNothing) {
  const struct {
    const char* text;
    const char* where;
  } cases[] = {
      {R"({"agents": [{"position": [0, 0], "goal": [1, 1]})", "line 1"},  // truncated
      {R"({"agents": []})", "/agents"},
      {R"({"agents": [{"position": [0, 0]}]})", "/agents/0"},
      {R"({"agents": [{"position": [0, "x"], "goal": [1, 1]}]})", "/agents/0/position/1"},
      {R"({"step": -1, "agents": [{"position": [0, 0], "goal": [1, 1]}]})", "/step"},
      {R"({"settings": {"max_neighbours": 0}, "agents": [{"position": [0, 0], "goal": [1, 1]}]})",
       "/settings/max_neighbours"},
      {R"({"settings": {"radius": 0.3, "spin": 1}, "agents": [{"position": [0, 0], "goal": [1, 1]}]})",
       "/settings/spin"},
      {R"({"area": {"lo": [0, 0], "hi": [10, 10]}, "agents": [{"position": [1, 1], "goal": [20, 5]}]})",
       "/agents/0"},  // the goal is off the grid
      {R"({"area": {"lo": [0, 0], "hi": [10, 10]}, "obstacles": [{"box": {"lo": [4, 0], "hi": [6, 10]}}],
           "agents": [{"position": [1, 1], "goal": [5, 5]}]})",
       "/agents/0"},  // the goal is in a wall
      {R"({"area": {"lo": [0, 0], "hi": [10, 10]}, "obstacles": [{"box": {"lo": [4, 0], "hi": [6, 10]}}],
           "agents": [{"position": [1, 1], "goal": [9, 5]}]})",
       "/agents/0"},  // the wall splits the area: no path
      {R"({"area": {"lo": [0, 0], "hi": [1, 1]}, "agents": [{"scatter": {"count": 50,
           "from": {"lo": [0, 0], "hi": [1, 1]}, "to": {"lo": [0, 0], "hi": [1, 1]}}}]})",
       "/agents/0/scatter/from"},  // no room for 50
      {R"({"obstacles": [{"disc": {"centre": [0, 0], "radius": 1}}],
           "agents": [{"position": [1, 1], "goal": [2, 2]}]})",
       "/obstacles"},  // obstacles without an area
  };
  int k = 0;
  for (const auto& c : cases) {
    const std::string s = scene("bad" + std::to_string(k) + ".json", c.text);
    const std::string out = path("bad" + std::to_string(k++) + ".pc2");
    const auto r = kinema("crowd " + sh_quote(s) + " -o " + sh_quote(out));
    EXPECT_EQ(r.code, 2) << c.text << "\n" << r.err;
    EXPECT_NE(r.err.find(c.where), std::string::npos) << c.where << "\n" << r.err;
    EXPECT_FALSE(fs::exists(out)) << c.text;
    EXPECT_FALSE(fs::exists(out.substr(0, out.size() - 4) + ".kpa")) << c.text;
  }
  // Usage errors: exit 1, nothing written.
  const std::string good =
      scene("good.json", R"({"agents": [{"position": [0, 0], "goal": [1, 1]}]})");
  EXPECT_EQ(kinema("crowd " + sh_quote(good) + " -o " + sh_quote(path("x.obj"))).code, 1);
  EXPECT_EQ(kinema("crowd " + sh_quote(good) + " -o " + sh_quote(good)).code, 1);
  EXPECT_FALSE(fs::exists(path("x.obj")));
}

}  // namespace
