// Matching CG to a plate: differential rendering's worked number and its properties, grain
// measured back from known noise, grain that follows its seed, and motion blur that keeps light.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "kinema/composite/plate_match.h"
#include "kinema/core/error.h"

namespace kinema::composite {
namespace {

TEST(DifferentialRendering, ShadowDarkensThePlateByTheDifference) {
  // 0.6 + (0.3 − 0.5) = 0.4: darker by exactly the shadow, the plate's own texture kept.
  EXPECT_NEAR(differential_pixel(0.6f, 0.3f, 0.5f), 0.4f, 1e-7f);
  Image plate(2, 1, {0.6f, 0.6f, 0.6f, 1}), with(2, 1, {0.3f, 0.3f, 0.3f, 1}),
      without(2, 1, {0.5f, 0.5f, 0.5f, 1});
  plate.at(1, 0) = {0.9f, 0.2f, 0.1f, 1};  // texture under the shadow survives
  const Image out = differential_composite(plate, with, without);
  EXPECT_NEAR(out.at(0, 0).r, 0.4f, 1e-6f);
  EXPECT_NEAR(out.at(1, 0).r, 0.7f, 1e-6f);
  EXPECT_NEAR(out.at(1, 0).g, 0.0f, 1e-6f);  // 0.2 − 0.2, clamped at zero below
  EXPECT_NEAR(out.at(1, 0).b, 0.0f, 1e-6f);  // 0.1 − 0.2 → 0: no negative light
  EXPECT_EQ(out.at(1, 0).a, 1.0f);
}

TEST(DifferentialRendering, NoObjectMeansThePlateUnchangedAndTheObjectGoesOver) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(0, 1);
  Image plate(16, 16), stand_in(16, 16), object(16, 16);
  for (Rgba& p : plate.pixels) p = {u(rng), u(rng), u(rng), 1};
  for (Rgba& p : stand_in.pixels) p = {u(rng), u(rng), u(rng), 1};
  EXPECT_EQ(differential_composite(plate, stand_in, stand_in).pixels, plate.pixels);
  object.at(3, 4) = {0.5f, 0.25f, 0, 1};
  const Image out = differential_composite(plate, stand_in, stand_in, &object);
  EXPECT_EQ(out.at(3, 4), object.at(3, 4));  // opaque object covers
  EXPECT_EQ(out.at(5, 5), plate.at(5, 5));
  EXPECT_THROW(differential_composite(plate, Image(15, 16), stand_in), Error);
}

TEST(Grain, EstimateRecoversTheNoiseAddedToATexturedPlate) {
  // A plate with a gradient, an edge and Gaussian grain of known σ per channel.
  const int w = 256, h = 192;
  Image plate(w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      plate.at(x, y) = {0.2f + 0.5f * float(x) / w, x < w / 2 ? 0.3f : 0.7f, 0.4f, 1};
  add_grain(plate, {0.02f, 0.01f, 0.04f}, 99);
  const Grain g = estimate_grain(plate);
  EXPECT_NEAR(g.sigma_r, 0.02f, 0.02f * 0.05f);
  EXPECT_NEAR(g.sigma_g, 0.01f, 0.01f * 0.05f);
  EXPECT_NEAR(g.sigma_b, 0.04f, 0.04f * 0.05f);
  EXPECT_THROW(estimate_grain(Image(2, 5)), Error);
}

TEST(Grain, EstimateSeesThroughDenseTexture) {
  // Tiles 6 px wide, each its own tone (steps up to 0.3), and grout lines: most 3×3
  // neighbourhoods touch an edge, yet the grain comes back within 10 %.
  const int w = 300, h = 200;
  Image plate(w, h);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> tone(0.2f, 0.5f);
  std::vector<float> tiles(std::size_t((w / 6 + 1) * (h / 6 + 1)));
  for (float& t : tiles) t = tone(rng);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const float v =
          (x % 6 == 0 || y % 6 == 0) ? 0.05f : tiles[std::size_t((y / 6) * (w / 6 + 1) + x / 6)];
      plate.at(x, y) = {v, v, v, 1};
    }
  add_grain(plate, {0.012f, 0.012f, 0.012f}, 5);
  const Grain g = estimate_grain(plate);
  EXPECT_NEAR(g.sigma_g, 0.012f, 0.0012f);
}

TEST(Grain, FollowsItsSeedAndLeavesTransparentPixelsAlone) {
  Image a(32, 32, {0.5f, 0.5f, 0.5f, 1}), b = a, c = a;
  a.at(0, 0) = b.at(0, 0) = c.at(0, 0) = {};
  add_grain(a, {0.05f, 0.05f, 0.05f}, 1);
  add_grain(b, {0.05f, 0.05f, 0.05f}, 1);
  add_grain(c, {0.05f, 0.05f, 0.05f}, 2);
  EXPECT_EQ(a.pixels, b.pixels);
  EXPECT_NE(a.pixels, c.pixels);
  EXPECT_EQ(a.at(0, 0), Rgba{});
  double mean = 0;
  for (const Rgba& p : a.pixels) mean += p.r;
  EXPECT_NEAR(mean / double(a.pixels.size() - 1), 0.5, 0.01);  // zero-mean grain
}

TEST(MotionBlur, SpreadsAPointAlongTheMotionAndKeepsItsLight) {
  Image image(41, 9);
  image.at(20, 4) = {1, 1, 1, 1};
  const Image out = motion_blur(image, Vec2(10, 0), 40);
  double total = 0;
  for (const Rgba& p : out.pixels) total += p.r;
  EXPECT_NEAR(total, 1.0, 1e-5);
  EXPECT_GT(out.at(16, 4).r, 0.0f);
  EXPECT_GT(out.at(24, 4).r, 0.0f);
  EXPECT_EQ(out.at(20, 3).r, 0.0f);  // nothing across the motion
  EXPECT_EQ(out.at(27, 4).r, 0.0f);  // nothing past half the motion
  // No motion: the image unchanged; a per-pixel field equal everywhere: the same as uniform.
  EXPECT_EQ(motion_blur(image, Vec2(0, 0)).pixels, image.pixels);
  const std::vector<Vec2f> field(image.pixels.size(), Vec2f(10, 0));
  EXPECT_EQ(vector_blur(image, field, 40).pixels, out.pixels);
  EXPECT_THROW(vector_blur(image, std::span<const Vec2f>(field).first(3)), Error);
}

}  // namespace
}  // namespace kinema::composite
