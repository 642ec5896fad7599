// tests/cli/particles_render_cli_test.cpp — `kinema sim` writes a particle cache's sidecar and
// `kinema render OUT.pc2` draws the particles as billboards, run as processes: the living ones in
// their colour, none once they have died, every point in a default colour without the sidecar,
// with a character beside them; bad caches and sidecars exit 2 naming the file and the place, and
// write nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "cli_process.h"
#include "kinema/io/particle_sidecar.h"
#include "kinema/io/point_cache.h"
#include "png_pixels.h"
#include "test_paths.h"

namespace fs = std::filesystem;

namespace {

using kinema::test::read_all;
using kinema::test::sh_quote;
using kinema::test::write_all;

const std::string kFigure = kinema::test_paths::data_dir() + "/gltf/RiggedFigure.glb";

// Red sparks (linear (1, 0, 0), drawn (255, 0, 0)) shrinking to half over a 0.3 s life, emitted
// for the first 0.3 s beside where a character stands: by 0.7 s every one has died.
const char* const kScene = R"({"duration": 1, "fps": 10, "rate": 60,
  "particles": {
    "emitters": [{"position": [0.7, 1, 0.4], "rate": 100, "velocity": [0, 1.5, 0], "spread": 0.6,
                  "lifetime": 0.3, "stop_time": 0.3, "seed": 3}],
    "colour": [{"u": [0], "value": [1]}, {"u": [0], "value": [0]}, {"u": [0], "value": [0]}],
    "size": {"u": [0, 1], "value": [1, 0.5]}}})";

struct Counts {
  int red = 0, orange = 0;  // the sidecar's sparks; the default colour of a bare cache
  int pink = 0;             // red added to the background
};

Counts count_colours(const std::string& png) {
  const std::vector<uint8_t> rgba = kinema::test::png_rgba(png);
  Counts n;
  if (rgba.empty()) ADD_FAILURE() << "not a PNG";
  for (size_t i = 0; i < rgba.size(); i += 4) {
    const uint8_t* q = &rgba[i];
    n.red += q[0] > 200 && q[1] < 60 && q[2] < 60;
    n.orange += q[0] > 200 && q[1] > 140 && q[1] < 200 && q[2] < 120;  // (255, 177, 89)
    n.pink += q[0] >= 250 && q[1] > 200 && q[2] > 200;
  }
  return n;
}

class ParticlesRenderCli : public kinema::test::CliProcessTest {
 protected:
  ParticlesRenderCli() : CliProcessTest("kinema_particles_render_") {}
  void SetUp() override {
    CliProcessTest::SetUp();
    write_all(path("sparks.json"), kScene);
    const auto sim =
        kinema("sim " + sh_quote(path("sparks.json")) + " -o " + sh_quote(path("sparks.pc2")));
    ASSERT_EQ(sim.code, 0) << sim.err;
    ASSERT_NE(sim.out.find("sparks.kpa"), std::string::npos) << sim.out;
  }
  /// `kinema render sparks.pc2 ARGS -o NAME`; the PNG's colour counts when it succeeds.
  Counts render(const std::string& args, const std::string& name = "a.png") {
    const auto r = kinema("render " + sh_quote(path("sparks.pc2")) + " --size 200x150 " + args +
                          " -o " + sh_quote(path(name)));
    EXPECT_EQ(r.code, 0) << args << "\n" << r.err;
    EXPECT_NE(r.out.find("rendered"), std::string::npos) << r.out;
    return r.code == 0 ? count_colours(read_all(path(name))) : Counts{};
  }
};

TEST_F(ParticlesRenderCli, TheSidecarSaysWhenEachPointLivesAndHowOld) {
  const kinema::PointCache cache = kinema::read_pc2(path("sparks.pc2"));
  const kinema::ParticleSidecar s = kinema::read_particle_sidecar(path("sparks.kpa"));
  ASSERT_EQ(s.points.size(), size_t(cache.points));
  ASSERT_EQ(s.frames(), cache.samples());
  EXPECT_EQ(s.frames_per_second, 10);
  EXPECT_EQ(s.size.value, (std::vector<float>{1, 0.5f}));
  for (size_t i = 0; i < s.points.size(); ++i) {
    const kinema::ParticleLife& l = s.points[i];
    EXPECT_GE(l.first_frame, 1);  // frame 0 is the state before any step
    EXPECT_NEAR(l.lifetime, 0.3, 1e-9);
    // Drawn exactly at the frames whose instant falls in its life (born, not yet past it): the
    // frames come from what the cache drew, the clock from the particle system.
    for (int f = 0; f < s.frames(); ++f) {
      const double age = s.frame_times[size_t(f)] - l.birth;
      EXPECT_EQ(s.alive(i, f), age > 1e-6 && age <= l.lifetime + 1e-6) << i << " " << f;
    }
    // Young when first drawn (at most a frame old), and the cache holds it there before.
    EXPECT_LE(s.age_fraction(i, l.first_frame), 0.1 / 0.3 + 1e-6) << i;
    const auto& first = cache.at(l.first_frame, int(i));
    const auto& before = cache.at(l.first_frame - 1, int(i));
    EXPECT_EQ(first.x, before.x);
    EXPECT_EQ(first.y, before.y);
  }
}

TEST_F(ParticlesRenderCli, DrawsTheLivingInTheirColourAndNoneOnceDead) {
  EXPECT_EQ(render("--time 0").red, 0);  // nothing emitted yet
  const Counts alive = render("--time 0.2");
  EXPECT_GT(alive.red, 20);
  EXPECT_EQ(render("--time 0.9").red, 0);  // every spark has died
  // Without the sidecar every point is drawn, all the time, in the default orange (at 30 fps:
  // the 11 samples last 1/3 s).
  fs::remove(path("sparks.kpa"));
  const Counts bare = render("--time 0.3");
  EXPECT_EQ(bare.red, 0);
  EXPECT_GT(bare.orange, 20);
}

TEST_F(ParticlesRenderCli, FramesFollowTheCacheAndCombineWithACharacter) {
  const auto seq = kinema("render " + sh_quote(path("sparks.pc2")) +
                          " --size 64x48 --frames 0:10 -o " + sh_quote(path("f_%02d.png")));
  ASSERT_EQ(seq.code, 0) << seq.err;
  EXPECT_TRUE(fs::exists(path("f_00.png")));
  EXPECT_TRUE(fs::exists(path("f_10.png")));
  EXPECT_FALSE(fs::exists(path("f_11.png")));
  const auto past = kinema("render " + sh_quote(path("sparks.pc2")) + " --frames 0:11 -o " +
                           sh_quote(path("g_%02d.png")));
  EXPECT_EQ(past.code, 1) << past.err;
  EXPECT_NE(past.err.find("0:10"), std::string::npos) << past.err;
  // Around a character, either way round; additive sparks on the light background stay bright.
  const Counts with = render("--time 0.2 --particle-size 0.06 --with " + sh_quote(kFigure));
  EXPECT_GT(with.red, 5);
  const auto other =
      kinema("render " + sh_quote(kFigure) + " --with " + sh_quote(path("sparks.pc2")) +
             " --time 0.2 --particle-size 0.06 --size 200x150 -o " + sh_quote(path("b.png")));
  EXPECT_EQ(other.code, 0) << other.err;
  EXPECT_GT(count_colours(read_all(path("b.png"))).red, 5);
  const Counts added = render("--time 0.2 --particle-blend add", "c.png");
  EXPECT_EQ(added.red, 0);  // red added to the light background is pink, not red
  EXPECT_GT(added.pink, 20);
  const auto blend = kinema("render " + sh_quote(path("sparks.pc2")) +
                            " --particle-blend screen -o " + sh_quote(path("d.png")));
  EXPECT_EQ(blend.code, 1);
  const auto size = kinema("render " + sh_quote(path("sparks.pc2")) + " --particle-size -1 -o " +
                           sh_quote(path("d.png")));
  EXPECT_EQ(size.code, 1);
  EXPECT_FALSE(fs::exists(path("d.png")));
}

TEST_F(ParticlesRenderCli, BadCachesAndSidecarsExitTwoNamingThePlace) {
  const std::string sidecar = read_all(path("sparks.kpa"));
  const std::string cache = read_all(path("sparks.pc2"));
  struct Case {
    std::string pc2, kpa, file, place;
  };
  const Case cases[] = {
      {cache, sidecar.substr(0, sidecar.size() - 7), "sparks.kpa", "truncated"},
      {cache, sidecar.substr(0, 12), "sparks.kpa", "truncated"},
      {cache, "not a sidecar at all, but long enough for a header.", "sparks.kpa", "magic"},
      {cache.substr(0, cache.size() - 12), sidecar, "sparks.pc2", "truncated"},
      {cache.substr(0, 30), sidecar, "sparks.pc2", "header"},
  };
  for (const Case& c : cases) {
    write_all(path("sparks.pc2"), c.pc2);
    write_all(path("sparks.kpa"), c.kpa);
    const auto r = kinema("render " + sh_quote(path("sparks.pc2")) + " --time 0.2 -o " +
                          sh_quote(path("x.png")));
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find(c.file), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.place), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(path("x.png")));
  }
  // A sidecar of another run: its counts differ from the cache's.
  write_all(path("other.json"), R"({"duration": 0.5, "fps": 10,
    "particles": {"emitters": [{"rate": 10, "lifetime": 1}]}})");
  ASSERT_EQ(
      kinema("sim " + sh_quote(path("other.json")) + " -o " + sh_quote(path("other.pc2"))).code, 0);
  write_all(path("sparks.pc2"), cache);
  fs::copy_file(path("other.kpa"), path("sparks.kpa"), fs::copy_options::overwrite_existing);
  const auto r = kinema("render " + sh_quote(path("sparks.pc2")) + " --frames 0:3 -o " +
                        sh_quote(path("y_%d.png")));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("sparks.kpa"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("points over"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("y_0.png")));
}

}  // namespace
