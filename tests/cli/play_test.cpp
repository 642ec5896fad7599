// tests/cli/play_test.cpp — `kinema play` and the demo's graph step, run as a process.
//
// Exit codes: 0 ok; 1 for command lines that make no sense (missing -o, a --param without a
// value, a flag value CLI11 rejects, OUT equal to an input or a folder); 2 for a bad graph (file,
// JSON pointer, reason) and for --param specs that do not parse or do not fit the graph: a spec
// is data, read by the library's curve parser, which reports file ("--param"), place
// ("speed item 2") and reason like every parser.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "cli_process.h"
#include "kinema/io/asset_file.h"
#include "kinema/skeleton/skeleton.h"
#include "test_paths.h"

namespace fs = std::filesystem;

namespace {

using kinema::test::read_all;
using kinema::test::sh_quote;
using PlayRun = kinema::test::CliRun;

const std::string kDemo = kinema::test_paths::source_dir() + "/data/demo";
const std::string kGraph = kDemo + "/locomotion.graph.json";

class PlayCli : public kinema::test::CliProcessTest {
 protected:
  PlayCli() : CliProcessTest("kinema_play_") {}

  /// A two-state graph on the demo's clips (absolute paths), with `transition` from walk to run.
  std::string write_graph(const std::string& transition) {
    const std::string text = R"({
      "parameters": [{"name": "speed", "type": "float", "default": 1.5},
                     {"name": "go", "type": "trigger"}],
      "clips": [{"name": "walk", "file": ")" +
                             kDemo + R"(/pab_walk.glb", "clip": "walk"},
                {"name": "run", "file": ")" +
                             kDemo + R"(/pab_run.glb", "clip": "run"}],
      "root_motion": {"joint": "Hips", "rotation": false},
      "root": {"type": "state_machine",
        "states": [{"name": "walking", "node": "walk"}, {"name": "running", "node": "run"}],
        "transitions": [)" + transition +
                             "]}}";
    const std::string p = path("two.graph.json");
    std::ofstream(p) << text;
    return p;
  }
};

TEST_F(PlayCli, HelpListsPlay) {
  const PlayRun r = kinema("--help");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("play"), std::string::npos) << r.out;
  const PlayRun sub = kinema("play --help");
  EXPECT_EQ(sub.code, 0);
  EXPECT_NE(sub.out.find("--param"), std::string::npos) << sub.out;
  EXPECT_NE(sub.out.find("--root-motion"), std::string::npos) << sub.out;
}

TEST_F(PlayCli, PlaysTheDemoGraphToGlb) {
  const std::string before = read_all(kGraph);
  const std::string out = path("loco.glb");
  const PlayRun r = kinema("play " + sh_quote(kGraph) +
                           " --param speed=0:1.5,2:4.5 --seconds 2 -o " + sh_quote(out));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("wrote " + out + ": 61 frames, 2 s at 30 fps"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("states visited: locomotion"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("transitions taken: 0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("root motion baked"), std::string::npos) << r.out;
  // The skate of planted feet (cm/s on planted frames), never the old ankle-only mean.
  EXPECT_NE(r.out.find("; foot skate while planted: median "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" planted frames"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("foot sliding"), std::string::npos) << r.out;
  EXPECT_EQ(read_all(kGraph), before) << "the graph is only read";
  const kinema::Asset a = kinema::load_asset(out);
  ASSERT_EQ(a.clips.size(), 1u);
  EXPECT_EQ(a.clips[0].name, "locomotion");
  EXPECT_NEAR(a.clips[0].duration, 2.0, 1e-6);
  const int hips = a.skeleton.find("Hips");
  ASSERT_GE(hips, 0);
  // 1.5 → 4.5 m/s over 2 s: 6 m along +Z.
  const double z = kinema::sample_model_pose(a.clips[0], a.skeleton, 2.0)[static_cast<size_t>(hips)]
                       .translation_part()
                       .z;
  EXPECT_NEAR(z, 6.0, 0.15);
  for (const auto& e : fs::directory_iterator(dir_))
    EXPECT_EQ(e.path().filename(), "loco.glb") << "no temporary files left";
}

TEST_F(PlayCli, WritesBvhInPlaceAtAnotherRate) {
  const std::string out = path("loco.bvh");
  const PlayRun r =
      kinema("play " + sh_quote(kGraph) +
             " --param speed=3 --seconds 2 --fps 24 --root-motion in-place -o " + sh_quote(out));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("49 frames"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("root motion: in place"), std::string::npos) << r.out;
  const kinema::Asset a = kinema::load_asset(out);
  ASSERT_EQ(a.clips.size(), 1u);
  EXPECT_EQ(a.clips[0].frame_count(), 49);
  const int hips = a.skeleton.find("Hips");
  ASSERT_GE(hips, 0);
  for (double t : {0.0, 1.0, 2.0}) {
    const kinema::Vec3 p =
        kinema::sample_model_pose(a.clips[0], a.skeleton, t)[static_cast<size_t>(hips)]
            .translation_part();
    EXPECT_LT(std::hypot(p.x, p.z), 0.05) << "the hips stay over the origin at " << t << " s";
  }
}

TEST_F(PlayCli, TriggersTakeTransitions) {
  const std::string graph = write_graph(
      R"({"from": "walking", "to": "running", "blend": "inertialize", "duration": 0.2,
          "conditions": [{"parameter": "go"}]})");
  const PlayRun r = kinema("play " + sh_quote(graph) + " --param go=0.5 --seconds 1 -o " +
                           sh_quote(path("two.glb")));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("states visited: walking, running; transitions taken: 1"), std::string::npos)
      << r.out;
}

TEST_F(PlayCli, BadGraphExitsTwoWithThePointer) {
  const std::string graph = write_graph(R"({"from": "walking", "to": "sprinting"})");
  const std::string out = path("bad.glb");
  const PlayRun r = kinema("play " + sh_quote(graph) + " -o " + sh_quote(out));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(graph + ":/root/transitions/0/to: unknown state 'sprinting'"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(out));
  // A clip file that is missing, and a file that is not JSON.
  const std::string missing = path("missing.graph.json");
  std::ofstream(missing) << R"({"clips": [{"name": "a", "file": "nope.glb"}], "root": "a"})";
  const PlayRun m = kinema("play " + sh_quote(missing) + " -o " + sh_quote(out));
  EXPECT_EQ(m.code, 2);
  EXPECT_NE(m.err.find("/clips/0/file: clip file not found"), std::string::npos) << m.err;
  const std::string broken = path("broken.graph.json");
  std::ofstream(broken) << "{\"clips\": [";
  const PlayRun b = kinema("play " + sh_quote(broken) + " -o " + sh_quote(out));
  EXPECT_EQ(b.code, 2);
  EXPECT_NE(b.err.find("not valid JSON"), std::string::npos) << b.err;
  EXPECT_EQ(kinema("play " + sh_quote(path("absent.json")) + " -o " + sh_quote(out)).code, 2);
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(PlayCli, BadParamSpecsExitTwo) {
  const std::string out = path("p.glb");
  const PlayRun syntax =
      kinema("play " + sh_quote(kGraph) + " --param speed=0:1,2:x -o " + sh_quote(out));
  EXPECT_EQ(syntax.code, 2);
  EXPECT_NE(syntax.err.find("--param:speed item 2: value 'x' is not a number"), std::string::npos)
      << syntax.err;
  const PlayRun unknown =
      kinema("play " + sh_quote(kGraph) + " --param pace=1 -o " + sh_quote(out));
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.err.find("no parameter 'pace' (parameters: speed)"), std::string::npos)
      << unknown.err;
  const PlayRun no_eq = kinema("play " + sh_quote(kGraph) + " --param speed -o " + sh_quote(out));
  EXPECT_EQ(no_eq.code, 2);
  EXPECT_NE(no_eq.err.find("has no '='"), std::string::npos) << no_eq.err;
  const PlayRun decreasing =
      kinema("play " + sh_quote(kGraph) + " --param speed=2:1,1:3 -o " + sh_quote(out));
  EXPECT_EQ(decreasing.code, 2);
  EXPECT_NE(decreasing.err.find("must not decrease"), std::string::npos) << decreasing.err;
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(PlayCli, UsageErrorsExitOne) {
  const std::string out = path("u.glb");
  EXPECT_EQ(kinema("play " + sh_quote(kGraph)).code, 1) << "no -o";
  EXPECT_EQ(kinema("play -o " + sh_quote(out)).code, 1) << "no GRAPH";
  EXPECT_EQ(kinema("play " + sh_quote(kGraph) + " -o " + sh_quote(out) + " --param").code, 1);
  EXPECT_EQ(
      kinema("play " + sh_quote(kGraph) + " -o " + sh_quote(out) + " --root-motion sideways").code,
      1);
  EXPECT_EQ(kinema("play " + sh_quote(kGraph) + " -o " + sh_quote(out) + " --seconds 0").code, 1);
  EXPECT_EQ(kinema("play " + sh_quote(kGraph) + " -o " + sh_quote(out) + " --fps abc").code, 1);
  const PlayRun folder = kinema("play " + sh_quote(kGraph) + " -o " + sh_quote(dir_.string()));
  EXPECT_EQ(folder.code, 1);
  EXPECT_NE(folder.err.find("is a folder"), std::string::npos) << folder.err;
  const std::string copy = path("copy.graph.json");
  fs::copy_file(kGraph, copy);
  const PlayRun itself = kinema("play " + sh_quote(copy) + " -o " + sh_quote(copy));
  EXPECT_EQ(itself.code, 1);
  EXPECT_EQ(read_all(copy), read_all(kGraph)) << "the graph is untouched";
  const PlayRun ext = kinema("play " + sh_quote(kGraph) + " -o " + sh_quote(path("u.fbx")));
  EXPECT_EQ(ext.code, 1);
  EXPECT_NE(ext.err.find("cannot write '.fbx'"), std::string::npos) << ext.err;
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(path("u.fbx")));
}

TEST_F(PlayCli, QuietPrintsNothing) {
  const PlayRun r =
      kinema("--quiet play " + sh_quote(kGraph) + " --seconds 0.5 -o " + sh_quote(path("q.glb")));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_TRUE(r.err.empty()) << r.err;
  EXPECT_TRUE(fs::exists(path("q.glb")));
}

}  // namespace
