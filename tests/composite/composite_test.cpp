// Compositing: the worked numbers of the chroma-key, premultiplied-alpha and camera-matching
// text (the keyer's α of 0, 1, 0.5 and 0.615, screen subtraction to (0.2, 0.2, 0.2), the sky
// composite (0.3, 0.35, 0.6), spill suppression, filtering straight against premultiplied, the
// 1,866.7 px focal length, the 1.8 px reprojection error, the lens's 0.739), then properties:
// "over" is associative, a synthetic green-screen plate keys to a mean matte error under 0.01,
// matte filters, distortion inverted, bad input refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "kinema/composite/camera_model.h"
#include "kinema/composite/image.h"
#include "kinema/composite/keyer.h"
#include "kinema/composite/matte_filters.h"
#include "kinema/composite/porter_duff.h"
#include "kinema/core/error.h"

namespace kinema::composite {
namespace {

constexpr float kTight = 1e-6f;

void expect_rgb(const Rgba& p, float r, float g, float b, float tolerance = kTight) {
  EXPECT_NEAR(p.r, r, tolerance);
  EXPECT_NEAR(p.g, g, tolerance);
  EXPECT_NEAR(p.b, b, tolerance);
}

// ---- keying -------------------------------------------------------------------------------------

TEST(Keyer, ScreenDifferenceIsSixtyFiveHundredths) {
  // S = (0.1, 0.8, 0.15): d_S = 0.8 − 0.15 = 0.65, so a pixel with d = 0.325 keys to 0.5.
  const float edge[3] = {0.25f, 0.6f, 0.275f};
  EXPECT_NEAR(key_alpha(edge), 1 - 0.325f / 0.65f, kTight);
}

TEST(Keyer, ScreenIsTransparentSkinOpaqueGreyEdgeHalf) {
  const float screen[3] = {0.1f, 0.8f, 0.15f}, skin[3] = {0.8f, 0.6f, 0.5f};
  const float grey_edge[3] = {0.25f, 0.6f, 0.275f};  // ½ grey sweater (0.4) + ½ screen
  EXPECT_NEAR(key_alpha(screen), 0, kTight);
  EXPECT_NEAR(key_alpha(skin), 1, kTight);  // d = −0.2, clamped to 0
  EXPECT_NEAR(key_alpha(grey_edge), 0.5, kTight);
}

TEST(Keyer, HalfSkinHalfScreenKeysTo0615NotOneHalf) {
  // (0.45, 0.7, 0.325): d = 0.25, α = 1 − 0.25/0.65 ≈ 0.615 — the method is exact only for
  // neutral colours.
  const float mixed[3] = {0.45f, 0.7f, 0.325f};
  EXPECT_NEAR(key_alpha(mixed), 0.615f, 5e-4f);
  EXPECT_NEAR(key_alpha(mixed), 1 - 0.25f / 0.65f, kTight);
}

TEST(Keyer, ScreenSubtractionLeavesThePremultipliedSweater) {
  // (0.25, 0.6, 0.275) − 0.5·(0.1, 0.8, 0.15) = (0.2, 0.2, 0.2) = 0.5·(0.4, 0.4, 0.4).
  const float grey_edge[3] = {0.25f, 0.6f, 0.275f};
  KeyerOptions o;
  o.suppress_spill = false;
  const Rgba fg = key_pixel(grey_edge, o);
  expect_rgb(fg, 0.2f, 0.2f, 0.2f);
  EXPECT_NEAR(fg.a, 0.5f, kTight);
  expect_rgb(unpremultiply(fg), 0.4f, 0.4f, 0.4f, 2e-6f);
}

TEST(Keyer, OverANewSkyGivesPoint3Point35Point6) {
  // (0.2, 0.2, 0.2) + 0.5·(0.2, 0.3, 0.8) = (0.3, 0.35, 0.6).
  const float grey_edge[3] = {0.25f, 0.6f, 0.275f};
  const Rgba sky{0.2f, 0.3f, 0.8f, 1};
  const Rgba out = over(key_pixel(grey_edge), sky);
  expect_rgb(out, 0.3f, 0.35f, 0.6f);
  EXPECT_NEAR(out.a, 1, kTight);
}

TEST(Keyer, SpillSuppressionLimitsGreenToTheMeanOfRedAndBlue) {
  // Skin (0.8, 0.6, 0.5): (R + B)/2 = 0.65 ≥ 0.6, unchanged; spilled skin (0.8, 0.7, 0.5) →
  // (0.8, 0.65, 0.5).
  const float skin[3] = {0.8f, 0.6f, 0.5f}, spilled[3] = {0.8f, 0.7f, 0.5f};
  expect_rgb(key_pixel(skin), 0.8f, 0.6f, 0.5f);
  expect_rgb(key_pixel(spilled), 0.8f, 0.65f, 0.5f);
}

TEST(Keyer, BlueScreenKeysOnBlue) {
  KeyerOptions o;
  o.screen[0] = 0.1f, o.screen[1] = 0.2f, o.screen[2] = 0.9f;  // d_S = 0.7
  const float screen[3] = {0.1f, 0.2f, 0.9f}, grey[3] = {0.4f, 0.4f, 0.4f};
  const float edge[3] = {0.25f, 0.3f, 0.65f};  // ½ grey + ½ screen
  EXPECT_NEAR(key_alpha(screen, o), 0, kTight);
  EXPECT_NEAR(key_alpha(grey, o), 1, kTight);
  EXPECT_NEAR(key_alpha(edge, o), 0.5f, kTight);
  expect_rgb(key_pixel(edge, o), 0.2f, 0.2f, 0.2f);
}

/// A 160 × 120 green-screen plate of a procedural creature (two overlapping ellipses, coverage
/// from 8 × 8 supersampling), its colour a neutral grey shaded across the body, the screen
/// uneven by ±2 %, green spill (+0.03) on the creature within 4 px of its outline. Returns the
/// plate and the true coverage.
std::pair<Image, Matte> synthetic_plate() {
  constexpr int kWidth = 160, kHeight = 120, kSamples = 8;
  auto inside = [](double x, double y) {
    const double body = (x - 80) * (x - 80) / (40.0 * 40) + (y - 70) * (y - 70) / (28.0 * 28);
    const double head = (x - 112) * (x - 112) / (16.0 * 16) + (y - 40) * (y - 40) / (14.0 * 14);
    return body <= 1 || head <= 1;
  };
  Image plate(kWidth, kHeight);
  Matte coverage(kWidth, kHeight);
  for (int y = 0; y < kHeight; ++y)
    for (int x = 0; x < kWidth; ++x) {
      int hits = 0;
      for (int sy = 0; sy < kSamples; ++sy)
        for (int sx = 0; sx < kSamples; ++sx)
          hits += inside(x + (sx + 0.5) / kSamples, y + (sy + 0.5) / kSamples);
      coverage.at(x, y) = float(hits) / (kSamples * kSamples);
    }
  for (int y = 0; y < kHeight; ++y)
    for (int x = 0; x < kWidth; ++x) {
      const float a = coverage.at(x, y);
      const float unevenness = 1 + 0.02f * float(std::sin(x * 0.07) * std::cos(y * 0.05));
      const float screen[3] = {0.1f * unevenness, 0.8f * unevenness, 0.15f * unevenness};
      const float shade = 0.3f + 0.3f * float(y) / kHeight;
      // Spill: within 4 px of the background the creature picks up green light.
      bool near = false;
      for (int dy = -4; dy <= 4 && !near; ++dy)
        for (int dx = -4; dx <= 4 && !near; ++dx) {
          const int sx = std::clamp(x + dx, 0, kWidth - 1), sy = std::clamp(y + dy, 0, kHeight - 1);
          near = coverage.at(sx, sy) < 0.5f;
        }
      const float spill = near ? 0.03f : 0;
      const float fg[3] = {shade, shade + spill, shade};
      plate.at(x, y) = {a * fg[0] + (1 - a) * screen[0], a * fg[1] + (1 - a) * screen[1],
                        a * fg[2] + (1 - a) * screen[2], 1};
    }
  return {plate, coverage};
}

TEST(Keyer, SyntheticPlateKeysToAMeanMatteErrorUnderOneHundredth) {
  const auto [plate, coverage] = synthetic_plate();
  const Image keyed = key(plate);
  double error = 0, fringe_before = 0, fringe_after = 0;
  int edge_pixels = 0;
  KeyerOptions no_spill;  // the naive foreground: the plate times α, green edges and all
  no_spill.suppress_spill = false;
  no_spill.subtract_screen = false;
  const Image unsuppressed = key(plate, no_spill);
  for (size_t i = 0; i < keyed.pixels.size(); ++i) {
    error += std::abs(keyed.pixels[i].a - coverage.values[i]);
    if (coverage.values[i] > 0.05f) {
      const Rgba& u = unsuppressed.pixels[i];
      const Rgba& s = keyed.pixels[i];
      fringe_before += std::max(0.0f, u.g - 0.5f * (u.r + u.b));
      fringe_after += std::max(0.0f, s.g - 0.5f * (s.r + s.b));
      ++edge_pixels;
    }
  }
  error /= double(keyed.pixels.size());
  EXPECT_LT(error, 0.01) << "mean matte error";
  // Edges keep the screen's green without subtraction and suppression, and lose it with them.
  EXPECT_GT(fringe_before / edge_pixels, 0.001);
  EXPECT_LT(fringe_after / edge_pixels, 1e-6);
}

TEST(Keyer, GarbageMatteDropsALightStandOutsideIt) {
  auto [plate, coverage] = synthetic_plate();
  // A grey light stand at the left edge, outside the creature.
  for (int y = 10; y < 110; ++y)
    for (int x = 4; x < 8; ++x) plate.at(x, y) = {0.5f, 0.5f, 0.5f, 1};
  Matte garbage(plate.width, plate.height, 1);
  for (int y = 0; y < plate.height; ++y)
    for (int x = 0; x < 20; ++x) garbage.at(x, y) = 0;
  const Image without = key(plate), with = key(plate, {}, garbage);
  EXPECT_NEAR(without.at(5, 50).a, 1, kTight);  // the keyer alone keeps the stand
  EXPECT_EQ(with.at(5, 50), Rgba{});
  EXPECT_EQ(with.at(80, 70), without.at(80, 70));  // the creature is untouched
}

TEST(Keyer, RefusesAScreenWithoutAKeyChannelAndAMatteOfAnotherSize) {
  KeyerOptions grey;
  grey.screen[0] = grey.screen[1] = grey.screen[2] = 0.5f;
  EXPECT_THROW(validate(grey), Error);
  EXPECT_THROW(key(Image(4, 4), grey), Error);
  KeyerOptions nan;
  nan.screen[1] = std::nanf("");
  EXPECT_THROW(validate(nan), Error);
  EXPECT_THROW(key(Image(4, 4), {}, Matte(3, 4, 1)), Error);
}

// ---- premultiplied alpha and Porter–Duff --------------------------------------------------------

TEST(PorterDuff, PremultipliedFilteringGivesPinkWhereStraightGivesAYellowFringe) {
  // An opaque red pixel beside a transparent one whose invisible colour is green, averaged.
  const Rgba white{1, 1, 1, 1};
  // Straight: (0.5, 0.5, 0, 0.5), over white 0.5·(0.5, 0.5, 0) + 0.5·(1, 1, 1).
  const float sr = 0.5f, sg = 0.5f, sb = 0, sa = 0.5f;
  expect_rgb(Rgba{sa * sr + (1 - sa), sa * sg + (1 - sa), sa * sb + (1 - sa), 1}, 0.75f, 0.75f,
             0.5f);
  // Premultiplied: the transparent pixel is (0, 0, 0, 0) whatever its colour was.
  const Rgba pixels[2] = {premultiply(1, 0, 0, 1), premultiply(0, 1, 0, 0)};
  const Rgba mean = average(pixels);
  EXPECT_EQ(mean, (Rgba{0.5f, 0, 0, 0.5f}));
  expect_rgb(over(mean, white), 1, 0.5f, 0.5f);
}

TEST(PorterDuff, EachOperatorWeighsBothLayersAsItsTableSays) {
  const Rgba a{0.4f, 0.1f, 0, 0.5f}, b{0, 0.6f, 0.2f, 0.8f};
  auto near = [](const Rgba& p, const Rgba& q) {
    EXPECT_NEAR(p.r, q.r, kTight);
    EXPECT_NEAR(p.g, q.g, kTight);
    EXPECT_NEAR(p.b, q.b, kTight);
    EXPECT_NEAR(p.a, q.a, kTight);
  };
  near(composite(PorterDuff::Over, a, b), {0.4f, 0.1f + 0.3f, 0.1f, 0.5f + 0.4f});
  near(composite(PorterDuff::In, a, b), {0.32f, 0.08f, 0, 0.4f});
  near(composite(PorterDuff::Out, a, b), {0.08f, 0.02f, 0, 0.1f});
  near(composite(PorterDuff::Atop, a, b), {0.32f, 0.08f + 0.3f, 0.1f, 0.8f});
  near(composite(PorterDuff::Xor, a, b), {0.08f, 0.02f + 0.3f, 0.1f, 0.1f + 0.4f});
  near(composite(PorterDuff::Plus, a, b), {0.4f, 0.7f, 0.2f, 1});
}

TEST(PorterDuff, OverIsAssociativeOnRandomPixels) {
  std::mt19937 random(3);
  std::uniform_real_distribution<float> unit(0, 1);
  auto pixel = [&] {
    const float a = unit(random);
    return premultiply(unit(random), unit(random), unit(random), a);
  };
  float worst = 0;
  for (int i = 0; i < 10000; ++i) {
    const Rgba a = pixel(), b = pixel(), c = pixel();
    const Rgba left = over(over(a, b), c), right = over(a, over(b, c));
    worst = std::max({worst, std::abs(left.r - right.r), std::abs(left.g - right.g),
                      std::abs(left.b - right.b), std::abs(left.a - right.a)});
  }
  EXPECT_LT(worst, 1e-6f);
}

TEST(PorterDuff, HoldoutCutsTheLayerWhereTheMatteIs) {
  Image cg(2, 1, {0.5f, 0.25f, 0, 0.5f});
  Matte holdout(2, 1);
  holdout.at(1, 0) = 1;  // a real object in front of the right pixel
  const Image cut = apply_matte(cg, holdout, true);
  EXPECT_EQ(cut.at(0, 0), cg.at(0, 0));
  EXPECT_EQ(cut.at(1, 0), Rgba{});
  EXPECT_THROW(composite(PorterDuff::Over, Image(2, 2), Image(2, 3)), Error);
  EXPECT_THROW(apply_matte(cg, Matte(1, 1)), Error);
}

// ---- mattes -------------------------------------------------------------------------------------

TEST(MatteFilters, OpeningRemovesSpecksAndKeepsShapes) {
  Matte m(40, 40);
  for (int y = 10; y < 30; ++y)
    for (int x = 10; x < 30; ++x) m.at(x, y) = 1;  // a 20 px square
  m.at(3, 3) = 1;                                  // a speck
  const Matte opened = dilate(erode(m, 2), 2);
  EXPECT_EQ(opened.at(3, 3), 0);
  EXPECT_EQ(opened.at(20, 20), 1);
  EXPECT_EQ(opened.at(12, 12), 1);
  // Closing fills a hole.
  Matte holed = m;
  holed.at(20, 20) = 0;
  EXPECT_EQ(erode(dilate(holed, 1), 1).at(20, 20), 1);
  EXPECT_THROW(erode(m, -1), Error);
}

TEST(MatteFilters, BlurKeepsAConstantAndTheMassOfAnInteriorShape) {
  Matte flat(16, 16, 0.7f);
  for (float v : blur(flat, 2.5).values) EXPECT_NEAR(v, 0.7f, 1e-6f);
  Matte dot(41, 41);
  dot.at(20, 20) = 1;
  const Matte soft = blur(dot, 2);
  double mass = 0;
  for (float v : soft.values) mass += v;
  EXPECT_NEAR(mass, 1, 1e-5);
  EXPECT_LT(soft.at(20, 20), 0.1f);
  EXPECT_NEAR(soft.at(18, 20), soft.at(22, 20), 1e-7f);  // symmetric
  EXPECT_THROW(blur(dot, -1), Error);
  EXPECT_THROW(blur(dot, std::nan("")), Error);
}

// ---- matching the camera ------------------------------------------------------------------------

TEST(CameraModel, ThirtyFiveMillimetresOnAFullFrameSensorAre1866Point7Pixels) {
  EXPECT_NEAR(focal_length_pixels(35, 36, 1920), 1866.67, 0.005);
  EXPECT_THROW(focal_length_pixels(35, 0, 1920), Error);
}

TEST(CameraModel, APointFiveMetresAwayProjectsTo373By187) {
  const double f = focal_length_pixels(35, 36, 1920);
  const Pixel p = project({1, 0.5, -5}, f);
  EXPECT_NEAR(p.x, 373.3, 0.05);  // f·1/5
  EXPECT_NEAR(p.y, 186.7, 0.05);  // f·0.5/5
  EXPECT_THROW(project({1, 0.5, 5}, f), Error);
}

TEST(CameraModel, TrackedAt375By186TheReprojectionErrorIs1Point8Pixels) {
  const double f = focal_length_pixels(35, 36, 1920);
  const Reprojection r = reprojection_error({1, 0.5, -5}, f, {375.0, 186.0});
  EXPECT_NEAR(r.error.x, 1.67, 0.005);
  EXPECT_NEAR(r.error.y, -0.67, 0.005);
  EXPECT_NEAR(r.distance, 1.8, 0.005);
}

TEST(CameraModel, ALensWithKMinus012MovesRadius08To0739) {
  // 0.8·(1 − 0.12·0.64) = 0.73856.
  const Pixel d = distort({0.8, 0}, -0.12);
  EXPECT_NEAR(d.x, 0.739, 5e-4);
  EXPECT_NEAR(d.x, 0.8 * (1 - 0.12 * 0.64), 1e-12);
  EXPECT_EQ(d.y, 0);
}

TEST(CameraModel, UndistortInvertsDistortAndRefusesWhereTheLensFolds) {
  std::mt19937 random(11);
  std::uniform_real_distribution<double> coordinate(-0.9, 0.9);
  for (double k : {-0.2, -0.12, 0.0, 0.1, 0.3})
    for (int i = 0; i < 1000; ++i) {
      const Pixel p{coordinate(random), coordinate(random) * 0.7};
      const Pixel back = undistort(distort(p, k), k);
      ASSERT_NEAR(back.x, p.x, 1e-12) << "k " << k;
      ASSERT_NEAR(back.y, p.y, 1e-12) << "k " << k;
    }
  // k = −0.5 folds at r² = 2/3 (r′ at most 0.544): a radius of 0.6 has no preimage.
  EXPECT_THROW(undistort({0.6, 0}, -0.5), Error);
}

}  // namespace
}  // namespace kinema::composite
