// tests/cli/boids_cli_test.cpp — `kinema boids` run as a process: the summary (the flock aligns),
// the point cache and sidecar it writes (read back), usage errors (exit 1) and no output on them.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_process.h"
#include "kinema/io/particle_sidecar.h"
#include "kinema/io/point_cache.h"

namespace fs = std::filesystem;

namespace {

using kinema::test::sh_quote;

class BoidsCli : public kinema::test::CliProcessTest {
 protected:
  BoidsCli() : CliProcessTest("kinema_boids_") {}
};

TEST_F(BoidsCli, FliesTheClassicFlockAndWritesACacheRenderCanDraw) {
  const auto r = kinema("boids --json -o " + sh_quote(path("flock.pc2")));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("boids"), 48);
  EXPECT_EQ(j.at("steps"), 320);  // 16 s of 0.05 s
  EXPECT_LT(j.at("alignment_start").get<double>(), 0.5);
  EXPECT_GT(j.at("alignment_end").get<double>(), 0.95);
  EXPECT_EQ(j.at("flocks_end"), 1);
  const kinema::PointCache cache = kinema::read_pc2(path("flock.pc2"));
  EXPECT_EQ(cache.points, 48);
  EXPECT_EQ(cache.samples(), 321);
  for (int f = 0; f < cache.samples(); f += 40)
    for (int p = 0; p < cache.points; ++p)
      EXPECT_FLOAT_EQ(cache.at(f, p).y, 1.0f);  // over the ground
  const kinema::ParticleSidecar sidecar = kinema::read_particle_sidecar(path("flock.kpa"));
  EXPECT_EQ(sidecar.frames(), 321);
  EXPECT_EQ(sidecar.points.size(), 48u);
  const auto render =
      kinema("render " + sh_quote(path("flock.pc2")) +
             " --time 8 --particle-size 0.2 --size 160x120 -o " + sh_quote(path("flock.png")));
  EXPECT_EQ(render.code, 0) << render.err;
  EXPECT_TRUE(fs::exists(path("flock.png")));
}

TEST_F(BoidsCli, ThreeDimensionsAndOptions) {
  const auto r = kinema(
      "boids --dimensions 3 --count 300 --seconds 2 --step 0.02 --weights 2,1,0.5 --speed 1,4 "
      "--radius 2 --separation 0.5 --seed 4 --threads 2 --json -o " +
      sh_quote(path("f3.pc2")));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("dimensions"), 3);
  EXPECT_EQ(j.at("frames"), 101);
  EXPECT_EQ(kinema::read_pc2(path("f3.pc2")).points, 300);
}

TEST_F(BoidsCli, UsageErrorsWriteNothing) {
  for (const std::string& args :
       {"-o " + sh_quote(path("flock.obj")),                      // not .pc2
        "--world 4 -o " + sh_quote(path("flock.pc2")),            // narrower than 2 × 3 m
        "--speed 3,1 -o " + sh_quote(path("flock.pc2")),          // min above max
        "--dimensions 4 -o " + sh_quote(path("flock.pc2")),       // neither 2 nor 3
        "--weights 1,-1,1 -o " + sh_quote(path("flock.pc2"))}) {  // a negative weight
    const auto r = kinema("boids " + args);
    EXPECT_EQ(r.code, 1) << args << "\n" << r.err;
    EXPECT_FALSE(fs::exists(path("flock.pc2"))) << args;
    EXPECT_FALSE(fs::exists(path("flock.kpa"))) << args;
  }
}

}  // namespace
