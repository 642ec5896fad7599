// tests/cli/key_cli_test.cpp — `kinema key` run as a process: a plate half green screen and half
// grey put over a new sky (the screen side becomes the sky, the grey side stays, the matte says
// which), a blue screen, and refusals: a broken plate, a background of another size and a screen
// with no key channel (exit 2), an output over the plate (exit 1) — none of them writing anything.
#include <gtest/gtest.h>

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

class KeyCli : public kinema::test::CliProcessTest {
 protected:
  KeyCli() : CliProcessTest("kinema_key_") {}

  /// A 64 × 48 plate: the left half the screen colour, the right half linear grey 0.4.
  std::string plate(float r, float g, float b) {
    Image image(64, 48);
    for (int y = 0; y < 48; ++y)
      for (int x = 0; x < 64; ++x)
        image.at(x, y) = x < 32 ? Rgba{r, g, b, 1} : Rgba{0.4f, 0.4f, 0.4f, 1};
    const std::string p = path("plate.png");
    kinema::composite::write_png(p, image);
    return p;
  }
  std::string sky(int width = 64, int height = 48) {
    const std::string p = path("sky.png");
    kinema::composite::write_png(p, Image(width, height, {0.2f, 0.3f, 0.8f, 1}));
    return p;
  }
};

void expect_colour(const Rgba& p, float r, float g, float b) {
  // Two 8-bit sRGB steps of slack: the plate and the output are both rounded.
  using kinema::composite::linear_to_srgb;
  EXPECT_NEAR(linear_to_srgb(p.r), linear_to_srgb(r), 2.5f / 255);
  EXPECT_NEAR(linear_to_srgb(p.g), linear_to_srgb(g), 2.5f / 255);
  EXPECT_NEAR(linear_to_srgb(p.b), linear_to_srgb(b), 2.5f / 255);
}

TEST_F(KeyCli, PutsTheGreySideOverANewSkyAndWritesTheMatte) {
  const std::string in = plate(0.1f, 0.8f, 0.15f), bg = sky();
  const auto r = kinema("key " + sh_quote(in) + " --background " + sh_quote(bg) + " --matte " +
                        sh_quote(path("matte.png")) + " --json -o " + sh_quote(path("out.png")));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("width"), 64);
  EXPECT_EQ(j.at("height"), 48);
  EXPECT_NEAR(j.at("mean_alpha").get<double>(), 0.5, 0.01);
  const Image out = kinema::composite::read_png(path("out.png"));
  expect_colour(out.at(5, 20), 0.2f, 0.3f, 0.8f);   // screen → sky
  expect_colour(out.at(50, 20), 0.4f, 0.4f, 0.4f);  // grey stays
  const kinema::composite::Matte matte = kinema::composite::read_matte_png(path("matte.png"));
  EXPECT_LT(matte.at(5, 20), 0.02f);
  EXPECT_EQ(matte.at(50, 20), 1.0f);
}

TEST_F(KeyCli, KeysABlueScreenToo) {
  const std::string in = plate(0.1f, 0.2f, 0.9f);
  const auto r = kinema("key " + sh_quote(in) + " --screen blue -o " + sh_quote(path("fg.png")));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("kinema key"), std::string::npos);
  const Image fg = kinema::composite::read_png(path("fg.png"));
  EXPECT_LT(fg.at(5, 20).a, 0.02f);
  EXPECT_EQ(fg.at(50, 20).a, 1.0f);
}

TEST_F(KeyCli, WritesLinearExrForegroundAndExrAlphaFromALinearPng) {
  // A linear-valued PNG plate (--linear: no sRGB decode): screen left, grey 0.4 right.
  Image image(64, 48);
  for (int y = 0; y < 48; ++y)
    for (int x = 0; x < 64; ++x)
      image.at(x, y) = x < 32 ? Rgba{0.1f, 0.8f, 0.15f, 1} : Rgba{0.4f, 0.4f, 0.4f, 1};
  const std::string in = path("linear_plate.png");
  kinema::composite::write_png(in, image, {16, true});
  const auto r = kinema("key " + sh_quote(in) + " --screen 0.1,0.8,0.15 --linear -o " +
                        sh_quote(path("fg.exr")) + " --alpha " + sh_quote(path("alpha.exr")));
  ASSERT_EQ(r.code, 0) << r.err;
  const Image fg = kinema::composite::read_exr(path("fg.exr"));
  EXPECT_LT(fg.at(5, 20).a, 0.01f);
  EXPECT_NEAR(fg.at(50, 20).r, 0.4f, 1e-3f);  // linear in, linear out: no curve applied
  EXPECT_EQ(fg.at(50, 20).a, 1.0f);
  const kinema::composite::Matte alpha = kinema::composite::read_exr_matte(path("alpha.exr"));
  EXPECT_EQ(alpha.at(50, 20), 1.0f);
  EXPECT_LT(alpha.at(5, 20), 0.01f);
}

TEST_F(KeyCli, RefusesABrokenPlateAndWritesNothing) {
  const std::string in = path("plate.png");
  kinema::test::write_all(in, "\x89PNG\r\n\x1a\n truncated");
  const auto r = kinema("key " + sh_quote(in) + " -o " + sh_quote(path("out.png")));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("plate.png"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("out.png")));
}

TEST_F(KeyCli, RefusesATruncatedExrPlateAndWritesNothing) {
  Image image(64, 48, {0.1f, 0.8f, 0.15f, 1});
  const std::string whole = kinema::composite::encode_exr(image);
  const std::string in = path("plate.exr");
  kinema::test::write_all(in, whole.substr(0, whole.size() / 2));
  const auto r = kinema("key " + sh_quote(in) + " -o " + sh_quote(path("out.exr")) + " --alpha " +
                        sh_quote(path("alpha.png")));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("plate.exr"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("out.exr")));
  EXPECT_FALSE(fs::exists(path("alpha.png")));
}

TEST_F(KeyCli, RefusesABackgroundOfAnotherSizeAndAScreenWithoutAKeyChannel) {
  const std::string in = plate(0.1f, 0.8f, 0.15f), bg = sky(32, 32);
  auto r = kinema("key " + sh_quote(in) + " --background " + sh_quote(bg) + " -o " +
                  sh_quote(path("out.png")));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("32×32"), std::string::npos) << r.err;
  r = kinema("key " + sh_quote(in) + " --screen 0.5,0.5,0.5 -o " + sh_quote(path("out.png")));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("no channel ahead"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("out.png")));
}

TEST_F(KeyCli, NeverWritesOverThePlate) {
  const std::string in = plate(0.1f, 0.8f, 0.15f);
  const std::string before = kinema::test::read_all(in);
  const auto r = kinema("key " + sh_quote(in) + " -o " + sh_quote(in));
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(kinema::test::read_all(in), before);
  EXPECT_EQ(kinema("key " + sh_quote(in) + " -o " + sh_quote(path("out.jpg"))).code, 1);
}

}  // namespace
