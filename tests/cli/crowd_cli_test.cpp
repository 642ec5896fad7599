// tests/cli/crowd_cli_test.cpp — `kinema crowd` run as a process: the demo square walked (agents
// arrive, none overlap), the point cache and sidecar read back and drawn, a scene on the demo
// stairs, and bad scenes (malformed JSON, values out of range, a goal off the navigation grid or in
// a wall) refused with the JSON pointer, exit 2 and nothing written; the characters drawn at their
// LOD tiers into a contact sheet, and pictures of scenes without characters refused.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_process.h"
#include "kinema/core/file.h"
#include "kinema/io/gltf.h"
#include "kinema/io/particle_sidecar.h"
#include "kinema/io/point_cache.h"
#include "png_pixels.h"
#include "test_paths.h"

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
    return kinema::test_paths::source_dir() + "/data/demo/" + name;
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

// The demo square with the pab characters, a near camera and tiers close enough that all four
// are on screen.
std::string characters_scene(const std::string& extra = "") {
  const std::string data = kinema::test_paths::source_dir() + "/data/demo/";
  return R"({"step": 0.0166666667, "area": {"lo": [-20, -10], "hi": [40, 10]},
    "agents": [{"block": {"origin": [-18, -6], "rows": 12, "columns": 12, "spacing": 1.0,
                          "goal_offset": [30, 0]}}],
    "characters": {"walk": ")" +
         data + R"(pab_walk.glb", "run": ")" + data +
         R"(pab_run.glb", "lod": {"mid": 7, "far": 11, "farthest": 15})" + extra + R"(},
    "camera": {"eye": [-22, 7, 0], "target": [-8, 0, 0]}})";
}

TEST_F(CrowdCli, DrawsTheCharactersAtTheirLodTiersIntoAContactSheet) {
  const std::string s = scene("characters.json", characters_scene());
  const auto r = kinema("crowd " + sh_quote(s) + " --seconds 2 --size 160x96 --contact-sheet 3 " +
                        "--lod-colours --json -o " + sh_quote(path("sheet.png")));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("out"), path("sheet.png"));
  EXPECT_EQ(j.at("frames_drawn"), 3);
  EXPECT_NEAR(j.at("fps").get<double>(), 30, 1e-6);
  const auto& tiers = j.at("mean_agents_per_tier");
  for (const char* t : {"near", "mid", "far", "farthest"})
    EXPECT_GT(tiers.at(t).get<double>(), 0) << t;
  EXPECT_GT(j.at("vat_bytes").get<double>(), 0);
  EXPECT_GT(j.at("impostor_bytes").get<double>(), 0);
  const std::string png = kinema::read_file(path("sheet.png"));
  int width = 0, height = 0;
  ASSERT_TRUE(kinema::test::png_size(png, width, height));
  EXPECT_EQ(width, 2 * 160);  // ⌈√3⌉ columns
  EXPECT_EQ(height, 2 * 96);
  const std::vector<uint8_t> rgba = kinema::test::png_rgba(png);
  // Every tier's debug colour is on the first tile.
  const kinema::test::TierPixels coloured =
      kinema::test::count_tier_pixels(rgba, width, 0, 0, 160, 96);
  EXPECT_GT(coloured.green, 20);
  EXPECT_GT(coloured.yellow, 20);
  EXPECT_GT(coloured.orange, 5);
  EXPECT_GT(coloured.red, 5);
}

TEST_F(CrowdCli, PicturesNeedCharactersThatLoadAndFit) {
  const struct {
    std::string text;
    const char* where;
  } cases[] = {
      {R"({"agents": [{"position": [0, 0], "goal": [1, 1]}]})", "/characters"},
      {characters_scene(R"(, "root": "Tail")"), "/characters/root"},
      {characters_scene(R"(, "legs": [["LeftUpLeg", "LeftLeg"]])"), "/characters/legs/0"},
      {characters_scene(R"(, "spin": 1)"), "/characters/spin"},
      {R"({"agents": [{"position": [0, 0], "goal": [1, 1]}], "characters": {"run": "x.glb"}})",
       "/characters"},
      {R"({"agents": [{"position": [0, 0], "goal": [1, 1]}], "characters": {"walk": 5}})",
       "/characters/walk"},
      {R"({"agents": [{"position": [0, 0], "goal": [1, 1]}], "characters": {"walk": "none.glb"}})",
       "none.glb"},                              // the missing file is named
      {characters_scene() + R"( )", "/camera"},  // replaced below: eye on the target

  };
  int k = 0;
  for (const auto& c : cases) {
    std::string text = c.text;
    if (std::string(c.where) == "/camera")
      text.replace(text.find(R"("target": [-8, 0, 0])"), 20, R"("target": [-22, 7, 0])");
    const std::string s = scene("pic" + std::to_string(k) + ".json", text);
    const std::string out = path("pic" + std::to_string(k++) + ".png");
    const auto r = kinema("crowd " + sh_quote(s) + " --seconds 1 --size 64x64 -o " + sh_quote(out));
    EXPECT_EQ(r.code, 2) << c.text << "\n" << r.err;
    EXPECT_NE(r.err.find(c.where), std::string::npos) << c.where << "\n" << r.err;
    EXPECT_FALSE(fs::exists(out)) << c.text;
  }
  // A bad lod order names its pointer; an odd size for an .mp4 and a tiny size are usage errors.
  std::string lod = characters_scene();
  lod.replace(lod.find(R"("mid": 7)"), 8, R"("mid": 70)");
  const auto r = kinema("crowd " + sh_quote(scene("lod.json", lod)) + " --seconds 1 -o " +
                        sh_quote(path("lod.png")));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("/characters/lod"), std::string::npos) << r.err;
  const std::string good = scene("good.json", characters_scene());
  EXPECT_EQ(kinema("crowd " + sh_quote(good) + " --size 161x96 -o " + sh_quote(path("x.mp4"))).code,
            1);
  EXPECT_EQ(kinema("crowd " + sh_quote(good) + " --size 8x8 -o " + sh_quote(path("x.png"))).code,
            1);
  EXPECT_FALSE(fs::exists(path("x.mp4")));
  EXPECT_FALSE(fs::exists(path("x.png")));
}

TEST_F(CrowdCli, WritesTheWalkAsAGltfSceneOfKeyedPawns) {
  const std::string s = scene("layout.json", R"({"area": {"lo": [-10, -5], "hi": [10, 5]},
    "obstacles": [{"disc": {"centre": [0, 0], "radius": 1}}, {"box": {"lo": [4, 3], "hi": [5, 4]}}],
    "agents": [{"position": [-8, 0.5], "goal": [8, 0.5]}, {"position": [8, -0.5], "goal": [-8, -0.5]}]})");
  const auto r =
      kinema("crowd " + sh_quote(s) + " --seconds 4 --fps 10 --json -o " + sh_quote(path("l.glb")));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("frames_keyed"), 41);
  const kinema::Asset a = kinema::read_gltf(path("l.glb"));
  for (const char* node : {"ground", "obstacles", "goals", "agent_00000", "agent_00001"})
    EXPECT_GE(a.skeleton.find(node), 0) << node;
  const int agent = a.skeleton.find("agent_00000");
  ASSERT_GE(agent, 0);
  ASSERT_EQ(a.clips.size(), 1u);
  const kinema::JointTrack& t = a.clips[0].tracks.at(std::size_t(agent));
  ASSERT_EQ(t.translation.key_count(), 41u);
  EXPECT_NEAR(t.translation.values.front().x, -8, 1e-5);
  EXPECT_GT(t.translation.values.back().x, -8 + 3);  // it walked east, round the fountain
  EXPECT_NEAR(a.clips[0].duration, 4.0, 1e-6);
  // Heading east: +Z turned toward +X.
  const kinema::Vec3 forward = kinema::rotate(t.rotation.values.back(), kinema::Vec3{0, 0, 1});
  EXPECT_GT(forward.x, 0.5);
  // Meshes: the ground, the obstacles, the goals and a pawn each, all on their nodes.
  EXPECT_EQ(a.meshes.size(), 5u);
  for (const kinema::Mesh& m : a.meshes) EXPECT_GE(m.node, 0) << m.name;
  // .gltf too; an fps out of range is a usage error.
  EXPECT_EQ(kinema("crowd " + sh_quote(s) + " --seconds 1 -o " + sh_quote(path("l.gltf"))).code, 0);
  EXPECT_EQ(kinema("crowd " + sh_quote(s) + " --fps 0 -o " + sh_quote(path("z.glb"))).code, 1);
  EXPECT_FALSE(fs::exists(path("z.glb")));
}

TEST_F(CrowdCli, AnMp4GetsEveryFrameThroughFfmpeg) {
  // A stand-in ffmpeg that keeps the raw frames it is given: their count and size are checked,
  // and the file moves into place only when it exits cleanly.
  const std::string bin = path("bin");
  fs::create_directories(bin);
  {
    std::ofstream f(bin + "/ffmpeg");
    f << "#!/bin/sh\nfor a; do out=\"$a\"; done\ncat > \"$out\"\n";
  }
  fs::permissions(bin + "/ffmpeg", fs::perms::owner_all);
  const std::string s = scene("mp4.json", characters_scene());
  const auto r = kinema_env("PATH=" + bin + ":/usr/bin:/bin",
                            "crowd " + sh_quote(s) + " --seconds 0.5 --fps 20 --size 64x48 -o " +
                                sh_quote(path("walk.mp4")));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(fs::file_size(path("walk.mp4")), 11u * 64u * 48u * 4u);  // frames 0 … 10
  for (const auto& e : fs::directory_iterator(dir_))
    EXPECT_EQ(e.path().filename().string().find(".partial"), std::string::npos) << e.path();
  const auto none =
      kinema_env("PATH=/nonexistent-kinema-bin",
                 "crowd " + sh_quote(s) + " --size 64x48 -o " + sh_quote(path("n.mp4")));
  EXPECT_EQ(none.code, 2);
  EXPECT_NE(none.err.find("ffmpeg"), std::string::npos) << none.err;
  EXPECT_FALSE(fs::exists(path("n.mp4")));
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
