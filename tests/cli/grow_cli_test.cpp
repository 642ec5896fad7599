// tests/cli/grow_cli_test.cpp — `kinema grow` run as a process: a preset grown into a glTF whose
// morph targets play the growth (and that `kinema render` draws), a spec into a point cache with
// one vertex count and its rest mesh, the grown plant as OBJ; bad specs (malformed or truncated
// JSON, bad values, rule errors, deep nesting, runaway generations) exit 2 naming the file and
// the JSON pointer, usage errors exit 1, and neither writes anything.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli_process.h"
#include "kinema/io/gltf.h"
#include "kinema/io/point_cache.h"

namespace fs = std::filesystem;

namespace {

using kinema::test::sh_quote;

class GrowCli : public kinema::test::CliProcessTest {
 protected:
  GrowCli() : CliProcessTest("kinema_grow_") {}

  /// Writes `json` as SPEC.json and runs `kinema grow SPEC.json ARGS`.
  kinema::test::CliRun grow_spec(const std::string& json, const std::string& args) {
    kinema::test::write_all(path("spec.json"), json);
    return kinema("grow " + sh_quote(path("spec.json")) + " " + args);
  }
};

TEST_F(GrowCli, GrowsAPresetIntoAGlbWhoseMorphTargetsPlayTheGrowthAndRenderDrawsIt) {
  const auto r =
      kinema("grow --preset abop-1.24d --fps 2 --ring 4 --json -o " + sh_quote(path("plant.glb")));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("frames"), 16);      // 7.9 s at 2 fps: 0 … 7.5 s
  EXPECT_EQ(j.at("modules"), 13956);  // Fig. 1.24d's string after n = 7
  EXPECT_EQ(j.at("segments"), 4118);
  EXPECT_GT(j.at("height_m").get<double>(), 1.5);
  const kinema::Asset plant = kinema::read_gltf(path("plant.glb"));
  ASSERT_EQ(plant.meshes.size(), 1u);
  EXPECT_EQ(plant.meshes[0].vertex_count(), j.at("vertices").get<std::size_t>());
  EXPECT_EQ(plant.meshes[0].morph_targets.size(), 16u);
  ASSERT_EQ(plant.clips.size(), 1u);
  EXPECT_EQ(plant.clips[0].name, "growth");
  EXPECT_NEAR(plant.clips[0].duration, 7.5, 1e-6);
  const auto render = kinema("render " + sh_quote(path("plant.glb")) +
                             " --time 7 --size 160x120 -o " + sh_quote(path("plant.png")));
  EXPECT_EQ(render.code, 0) << render.err;
  EXPECT_TRUE(fs::exists(path("plant.png")));
}

TEST_F(GrowCli, PointCacheHasOneVertexCountAndGrowsWithoutJumps) {
  const auto r = grow_spec(
      R"({"axiom": "A", "rules": ["A -> F[&+AL][^-AL]FA", "F -> FF"], "angle": 30,
          "step": 0.05, "seconds": 3.5, "terminal_ages": {"F": 1.5},
          "growth": {"curve": "logistic", "pipe_radius": 0.01}, "leaf": {"size": 0.04},
          "ring": 5})",
      "--fps 10 --json -o " + sh_quote(path("plant.pc2")));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const kinema::PointCache cache = kinema::read_pc2(path("plant.pc2"));
  EXPECT_EQ(cache.points, j.at("vertices").get<int>());
  EXPECT_EQ(cache.samples(), 36);
  // Frames 0.1 s apart move little: the largest step of any vertex is under 10 cm.
  for (int f = 1; f < cache.samples(); ++f) {
    float largest = 0;
    for (int p = 0; p < cache.points; ++p)
      largest = std::max(largest, kinema::length(cache.at(f, p) - cache.at(f - 1, p)));
    EXPECT_LT(largest, 0.1f) << f;
  }
  // The rest mesh beside it: one `v` a point.
  std::istringstream obj(kinema::test::read_all(path("plant.obj")));
  int vertices = 0;
  for (std::string line; std::getline(obj, line);) vertices += line.rfind("v ", 0) == 0;
  EXPECT_EQ(vertices, cache.points);
}

TEST_F(GrowCli, ObjIsTheGrownPlant) {
  const auto r = kinema("grow --preset bush-3d --seconds 3.9 -o " + sh_quote(path("bush.obj")));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("leaves"), std::string::npos);
  EXPECT_GT(fs::file_size(path("bush.obj")), 1000u);
}

TEST_F(GrowCli, BadSpecsExitTwoNamingTheFileAndPointerAndWriteNothing) {
  struct Case {
    std::string json, expected;
  };
  const Case cases[] = {
      {R"({"axiom": "F", "rules": ["F -> FF"], "step": )", "line 1, column"},  // truncated
      {R"({"axiom": "F", "step": -1})", "/step"},
      {R"({"axiom": "F", "colour": 3})", "/colour: unknown key"},
      {R"({"rules": []})", "/axiom: missing"},
      {R"({"axiom": "A", "rules": ["A -> B", "A -> F[+A"]})", "/rules/1, column 7"},
      {R"({"axiom": "A", "rules": ["A -> B : 0.5", "A -> C : 0.4"]})", "/rules: the probabil"},
      {R"({"axiom": "A", "growth": {"curve": "cubic"}})", "/growth/curve"},
      {R"({"axiom": "A", "terminal_ages": {"AB": 1}})", "/terminal_ages/AB"},
      {R"({"axiom": "A", "leaf": {"symbol": "+"}})", "/leaf/symbol"},
      {"{\"axiom\": \"" + std::string(5000, '[') + std::string(5000, ']') + "\"}",
       "deeper than 1000"},
      {R"({"axiom": "A", "rules": ["A -> AB", "B -> A"], "seconds": 60})",
       "more than 2000000 modules"},
      {R"({"axiom": "A", "rules": ["A -> B", "B -> A"], "seconds": 1e9})", "at most 10000"},
  };
  for (const Case& c : cases) {
    const auto r = grow_spec(c.json, "-o " + sh_quote(path("plant.glb")));
    EXPECT_EQ(r.code, 2) << c.json.substr(0, 80) << "\n" << r.err;
    EXPECT_NE(r.err.find("spec.json"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.expected), std::string::npos) << c.expected << "\n" << r.err;
    EXPECT_FALSE(fs::exists(path("plant.glb"))) << c.json.substr(0, 80);
  }
  const auto caret = grow_spec(R"({"axiom": "A", "rules": ["A -> F]"]})", "-o x.glb");
  EXPECT_NE(caret.err.find("\n  A -> F]\n        ^"), std::string::npos) << caret.err;
}

TEST_F(GrowCli, UsageErrorsExitOneAndWriteNothing) {
  kinema::test::write_all(path("spec.json"), R"({"axiom": "F"})");
  const std::string spec = sh_quote(path("spec.json"));
  for (const std::string& args :
       {"--preset abop-1.24a -o " + sh_quote(path("plant.png")),          // not a mesh
        "-o " + sh_quote(path("plant.glb")),                              // nothing to grow
        spec + " --preset abop-1.24a -o " + sh_quote(path("plant.glb")),  // both
        "--preset oak -o " + sh_quote(path("plant.glb")),                 // no such preset
        "--preset abop-1.24a --fps 0 -o " + sh_quote(path("plant.glb")),
        "--preset abop-1.24a --ring 2 -o " + sh_quote(path("plant.glb")),
        "--preset abop-1.24a --fps 240 -o " + sh_quote(path("plant.glb"))}) {  // too big a glb
    const auto r = kinema("grow " + args);
    EXPECT_EQ(r.code, 1) << args << "\n" << r.err;
    EXPECT_FALSE(fs::exists(path("plant.glb"))) << args;
    EXPECT_FALSE(fs::exists(path("plant.png"))) << args;
  }
}

}  // namespace
