// tests/cli/hair_render_cli_test.cpp — `kinema sim` writes hair as a point cache with its strands
// as OBJ lines beside it, and `kinema render OUT.pc2` draws them as strands, run as processes:
// in their colour where the dots were before, alone or with a character; an OBJ that does not fit
// the cache exits 2 naming the file and the place, and writes nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cli_process.h"
#include "png_pixels.h"
#include "test_paths.h"

namespace fs = std::filesystem;

namespace {

using kinema::test::read_all;
using kinema::test::sh_quote;
using kinema::test::write_all;

const std::string kFigure = kinema::test_paths::data_dir() + "/gltf/RiggedFigure.glb";

// Three guides hanging 0.4 m down from a bar at 1.2 m, four children each.
const char* const kScene = R"({"duration": 0.5, "fps": 10,
  "hair": {"roots": [[-0.2, 1.2, 0], [0, 1.2, 0], [0.2, 1.2, 0]], "length": 0.4, "segments": 8,
           "children": 4, "child_spread": 0.03}})";

struct Counts {
  int red = 0;     // the strands in --strand-colour 1,0,0
  int orange = 0;  // the default colour of points drawn as billboards
  int other = 0;   // neither, nor the background
};

Counts count_colours(const std::string& png) {
  const std::vector<uint8_t> rgba = kinema::test::png_rgba(png);
  Counts n;
  if (rgba.empty()) ADD_FAILURE() << "not a PNG";
  for (size_t i = 0; i < rgba.size(); i += 4) {
    const uint8_t* q = &rgba[i];
    const bool red = q[0] > 80 && q[0] > 2 * q[1] && q[0] > 2 * q[2];
    const bool orange = q[0] > 200 && q[1] > 140 && q[1] < 200 && q[2] < 120;
    const bool background = q[0] > 150 && q[1] > 150 && q[2] > 150;  // sky and grid
    n.red += red;
    n.orange += orange;
    n.other += !red && !orange && !background;
  }
  return n;
}

class HairRenderCli : public kinema::test::CliProcessTest {
 protected:
  HairRenderCli() : CliProcessTest("kinema_hair_render_") {}
  void SetUp() override {
    CliProcessTest::SetUp();
    write_all(path("hair.json"), kScene);
    const auto sim =
        kinema("sim " + sh_quote(path("hair.json")) + " -o " + sh_quote(path("hair.pc2")));
    ASSERT_EQ(sim.code, 0) << sim.err;
    ASSERT_TRUE(fs::exists(path("hair.obj")));
  }
  kinema::test::CliRun render(const std::string& args, const std::string& name) {
    return kinema("render " + sh_quote(path("hair.pc2")) + " --size 200x150 " + args + " -o " +
                  sh_quote(path(name)));
  }
};

TEST_F(HairRenderCli, DrawsTheStrandsInTheirColourNotDots) {
  const auto r = render("--time 0.1 --strand-colour 1,0,0", "a.png");
  ASSERT_EQ(r.code, 0) << r.err;
  const Counts strands = count_colours(read_all(path("a.png")));
  EXPECT_GT(strands.red, 200);  // 15 strands, 0.4 m long, framed
  EXPECT_EQ(strands.orange, 0);
  // Wider strands cover more.
  ASSERT_EQ(render("--time 0.1 --strand-colour 1,0,0 --strand-width 0.02", "b.png").code, 0);
  EXPECT_GT(count_colours(read_all(path("b.png"))).red, 2 * strands.red);
  // The default colour is brown, not red.
  ASSERT_EQ(render("--time 0.1", "c.png").code, 0);
  const Counts brown = count_colours(read_all(path("c.png")));
  EXPECT_EQ(brown.red, 0);
  EXPECT_GT(brown.other, 200);
  // Without the OBJ the cache is points again: orange dots.
  fs::remove(path("hair.obj"));
  ASSERT_EQ(render("--time 0.1 --strand-colour 1,0,0", "d.png").code, 0);
  const Counts dots = count_colours(read_all(path("d.png")));
  EXPECT_EQ(dots.red, 0);
  EXPECT_GT(dots.orange, 20);
}

TEST_F(HairRenderCli, FramesFollowTheCacheAndCombineWithACharacter) {
  // 6 samples at 30 fps (no sidecar, one frame a sample): frames 0:5.
  const auto seq = render("--frames 0:5", "f_%02d.png");
  ASSERT_EQ(seq.code, 0) << seq.err;
  EXPECT_TRUE(fs::exists(path("f_05.png")));
  EXPECT_FALSE(fs::exists(path("f_06.png")));
  EXPECT_EQ(render("--frames 0:6", "g_%02d.png").code, 1);
  // Beside a character, either way round.
  ASSERT_EQ(render("--time 0.1 --strand-colour 1,0,0 --with " + sh_quote(kFigure), "h.png").code,
            0);
  EXPECT_GT(count_colours(read_all(path("h.png"))).red, 50);
  const auto other =
      kinema("render " + sh_quote(kFigure) + " --with " + sh_quote(path("hair.pc2")) +
             " --time 0.1 --strand-colour 1,0,0 --size 200x150 -o " + sh_quote(path("i.png")));
  ASSERT_EQ(other.code, 0) << other.err;
  const Counts both = count_colours(read_all(path("i.png")));
  EXPECT_GT(both.red, 30);     // thin strands at 200×150: their edges blend towards the sky
  EXPECT_GT(both.other, 200);  // the figure
  // Bad options: usage errors, nothing written.
  EXPECT_EQ(render("--strand-width 0", "x.png").code, 1);
  EXPECT_EQ(render("--strand-colour 1,0", "x.png").code, 1);
  EXPECT_EQ(render("--strand-colour 1,-1,0", "x.png").code, 1);
  EXPECT_FALSE(fs::exists(path("x.png")));
}

TEST_F(HairRenderCli, AnObjThatDoesNotFitTheCacheExitsTwoNamingThePlace) {
  const std::string obj = read_all(path("hair.obj"));
  struct Case {
    std::string obj, place, reason;
  };
  const Case cases[] = {
      // One vertex more than the cache's points.
      {"v 0 0 0\n" + obj, "vertex count", "points"},
      // A line past the vertices.
      {obj + "l 1 100000\n", "line ", "line vertex index 100000 out of range"},
      {obj + "l 1\n", "line ", "at least two vertices"},
      {obj + "l 1 x\n", "line ", "is not an index"},
      {"v 0 0\n" + obj, "line 1", "three coordinates"},
  };
  for (const Case& c : cases) {
    write_all(path("hair.obj"), c.obj);
    const auto r = render("--frames 0:2", "y_%d.png");
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("hair.obj"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.place), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.reason), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(path("y_0.png")));
  }
}

}  // namespace
