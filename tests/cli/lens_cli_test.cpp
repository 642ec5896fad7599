// tests/cli/lens_cli_test.cpp — `kinema undistort` and `kinema distort` run as processes: a plate
// undistorted and distorted back returns to itself away from the borders, the ST-map written as
// float EXR, a sequence done frame by frame, and refusals — a lens without fx or with an unknown
// key (exit 2), a sequence on one side only or an output over the plate (exit 1) — none of them
// writing anything.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_process.h"
#include "kinema/composite/image_file.h"

namespace fs = std::filesystem;

namespace {

using kinema::composite::Image;
using kinema::composite::Rgba;
using kinema::test::sh_quote;

class LensCli : public kinema::test::CliProcessTest {
 protected:
  LensCli() : CliProcessTest("kinema_lens_") {}

  /// A smooth 96 × 64 plate (slow sines: bilinear resampling is nearly exact on it).
  static Image smooth_plate(float phase = 0) {
    Image image(96, 64);
    for (int y = 0; y < 64; ++y)
      for (int x = 0; x < 96; ++x)
        image.at(x, y) = {0.5f + 0.3f * std::sin(0.07f * x + phase),
                          0.5f + 0.3f * std::cos(0.09f * y), 0.4f, 1};
    return image;
  }
  std::string lens(const std::string& json) {
    const std::string p = path("lens.json");
    kinema::test::write_all(p, json);
    return p;
  }
};

TEST_F(LensCli, UndistortThenDistortReturnsThePlateAndWritesTheStMap) {
  const Image plate = smooth_plate();
  kinema::composite::write_exr(path("plate.exr"), plate,
                               {kinema::composite::ExrPixelType::float32});
  const std::string l = lens(R"({"fx": 80, "k1": -0.12, "k2": 0.03, "p1": 0.001, "p2": -0.0005})");
  auto r =
      kinema("undistort " + sh_quote(path("plate.exr")) + " --lens " + sh_quote(l) + " --st-map " +
             sh_quote(path("map.exr")) + " -o " + sh_quote(path("flat.exr")) + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out).at("width"), 96);
  r = kinema("distort " + sh_quote(path("flat.exr")) + " --lens " + sh_quote(l) + " -o " +
             sh_quote(path("back.exr")));
  ASSERT_EQ(r.code, 0) << r.err;
  const Image flat = kinema::composite::read_exr(path("flat.exr"));
  const Image back = kinema::composite::read_exr(path("back.exr"));
  for (int y = 16; y < 48; ++y)
    for (int x = 24; x < 72; ++x)
      EXPECT_NEAR(back.at(x, y).r, plate.at(x, y).r, 0.01f) << x << "," << y;
  double moved = 0;  // the undistorted plate really differs from the plate (most at the edges)
  for (int y = 0; y < 64; ++y)
    for (int x = 0; x < 96; ++x)
      moved = std::max(moved, double(std::abs(flat.at(x, y).r - plate.at(x, y).r)));
  EXPECT_GT(moved, 0.03);
  // The map, as Nuke reads it: s = (u + ½)/W, t = 1 − (v + ½)/H; near the centre it is nearly the
  // identity, and it is stored as float.
  const auto info = kinema::composite::read_image_info(path("map.exr"));
  EXPECT_EQ(info.sample_type, "float");
  const Image map = kinema::composite::read_exr(path("map.exr"));
  EXPECT_NEAR(map.at(48, 32).r, (48 + 0.5) / 96, 0.01);
  EXPECT_NEAR(map.at(48, 32).g, 1 - (32 + 0.5) / 64, 0.01);
}

TEST_F(LensCli, DoesEveryFrameOfASequence) {
  for (int f : {7, 8, 9})
    kinema::composite::write_png(path("shot." + std::to_string(f) + ".png"),
                                 smooth_plate(float(f)));
  const auto r = kinema("undistort " + sh_quote(path("shot.%d.png")) + " --lens " +
                        sh_quote(lens(R"({"fx": 100, "k1": 0.05})")) + " -o " +
                        sh_quote(path("flat.####.png")) + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out).at("frames"), 3);
  for (const char* name : {"flat.0007.png", "flat.0008.png", "flat.0009.png"})
    EXPECT_TRUE(fs::exists(path(name))) << name;
}

TEST_F(LensCli, RefusesBadLensesAndBadRequestsAndWritesNothing) {
  kinema::composite::write_png(path("plate.png"), smooth_plate());
  const std::string out = " -o " + sh_quote(path("out.png"));
  auto r = kinema("undistort " + sh_quote(path("plate.png")) + " --lens " +
                  sh_quote(lens(R"({"k1": -0.1})")) + out);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("fx"), std::string::npos) << r.err;
  r = kinema("undistort " + sh_quote(path("plate.png")) + " --lens " +
             sh_quote(lens(R"({"fx": 90, "k4": 1})")) + out);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("/k4"), std::string::npos) << r.err;
  r = kinema("undistort " + sh_quote(path("plate.png")) + " --lens " +
             sh_quote(lens(R"({"fx": 90})")) + " -o " + sh_quote(path("out.####.png")));
  EXPECT_EQ(r.code, 1);
  const std::string before = kinema::test::read_all(path("plate.png"));
  r = kinema("distort " + sh_quote(path("plate.png")) + " --lens " +
             sh_quote(lens(R"({"fx": 90})")) + " -o " + sh_quote(path("plate.png")));
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(kinema::test::read_all(path("plate.png")), before);
  EXPECT_FALSE(fs::exists(path("out.png")));
}

}  // namespace
