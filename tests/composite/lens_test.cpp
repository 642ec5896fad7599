// Lens distortion: the Brown–Conrady formula against OpenCV's numbers worked by hand, the
// one-term lens of camera_model.h as its k1-only case, undistort() inverting distort() across a
// 1920 × 1080 frame and at random, ST-maps (the identity copies exactly, undistorting then
// distorting returns the plate, a straight line bends and straightens again, a constant stays
// constant, past the fold stays empty), and bad input refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <random>
#include <vector>

#include "kinema/composite/camera_model.h"
#include "kinema/composite/image.h"
#include "kinema/composite/lens.h"
#include "kinema/core/error.h"

namespace kinema::composite {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

/// 35 mm on a 36 mm sensor at 1920 × 1080 (f = 1866.67 px), principal point at the frame's
/// centre in OpenCV's convention ((W − 1)/2, (H − 1)/2).
LensIntrinsics full_hd() { return {1866.67, 1866.67, 959.5, 539.5}; }

/// The same camera at a quarter of the resolution, for whole-image tests.
LensIntrinsics quarter_hd() { return {1866.67 / 4, 1866.67 / 4, 239.5, 134.5}; }

/// A typical wide lens: barrel, a little decentring. ~42 px of distortion in the corners at HD.
BrownConrady barrel() { return {.k1 = -0.12, .k2 = 0.03, .p1 = 1e-3, .p2 = -5e-4}; }

/// A typical long lens: pincushion.
BrownConrady pincushion() { return {.k1 = 0.08, .k2 = 0.01, .k3 = 0.002, .p1 = -6e-4, .p2 = 4e-4}; }

double distance(const PixelPoint& a, const PixelPoint& b) {
  return std::hypot(a.u - b.u, a.v - b.v);
}

/// A smooth opaque plate: slow sinusoids around grey, no detail finer than ~45 px.
Image smooth_plate(int width, int height) {
  Image image(width, height);
  for (int v = 0; v < height; ++v)
    for (int u = 0; u < width; ++u) {
      const float a =
          float(std::sin(2 * std::numbers::pi * u / 60) * std::cos(2 * std::numbers::pi * v / 45));
      const float b = float(std::cos(2 * std::numbers::pi * (u + v) / 80));
      image.at(u, v) = {0.5f + 0.25f * a, 0.5f + 0.2f * b, 0.4f + 0.1f * a * b, 1};
    }
  return image;
}

/// The source position (pixels) a map samples for output pixel (i, j).
PixelPoint sampled_at(const StMap& map, int width, int height, int i, int j) {
  const std::size_t k = std::size_t(j) * std::size_t(map.width) + std::size_t(i);
  return {double(map.s[k]) * width - 0.5, (1 - double(map.t[k])) * height - 0.5};
}

// ---- the formula ----------------------------------------------------------------------------

TEST(Lens, DistortMatchesOpenCvsFormulaWorkedByHand) {
  // (x, y) = (0.3, −0.2), k1 = −0.1, k2 = 0.05, k3 = −0.01, p1 = 0.002, p2 = −0.001:
  //   r² = 0.13, r⁴ = 0.0169, r⁶ = 0.002197
  //   R  = 1 − 0.013 + 0.000845 − 0.00002197 = 0.98782303
  //   x′ = 0.3·R + 2·0.002·0.3·(−0.2) + (−0.001)·(0.13 + 2·0.09)
  //      = 0.296346909 − 0.00024 − 0.00031 = 0.295796909
  //   y′ = −0.2·R + 0.002·(0.13 + 2·0.04) + 2·(−0.001)·0.3·(−0.2)
  //      = −0.197564606 + 0.00042 + 0.00012 = −0.197024606
  const BrownConrady lens{.k1 = -0.1, .k2 = 0.05, .k3 = -0.01, .p1 = 0.002, .p2 = -0.001};
  const NormalizedPoint d = distort({0.3, -0.2}, lens);
  EXPECT_NEAR(d.x, 0.295796909, 1e-15);
  EXPECT_NEAR(d.y, -0.197024606, 1e-15);

  // In pixels with fx = 1500, fy = 1510, (cx, cy) = (959.5, 539.5): (1409.5, 237.5) →
  // (959.5 + 1500·0.295796909, 539.5 − 1510·0.197024606) = (1403.1953635, 241.99284494).
  const LensIntrinsics k{1500, 1510, 959.5, 539.5};
  const PixelPoint p = distort_pixel({1409.5, 237.5}, lens, k);
  EXPECT_NEAR(p.u, 1403.1953635, 1e-9);
  EXPECT_NEAR(p.v, 241.99284494, 1e-9);
  const PixelPoint back = undistort_pixel(p, lens, k);
  EXPECT_NEAR(back.u, 1409.5, 1e-9);
  EXPECT_NEAR(back.v, 237.5, 1e-9);
}

TEST(Lens, EachCoefficientMovesThePointItsOwnWay) {
  // One coefficient at a time on (0.3, −0.2), r² = 0.13.
  const NormalizedPoint p{0.3, -0.2};
  const auto moved = [&](const BrownConrady& lens) { return distort(p, lens); };
  EXPECT_NEAR(moved({.k1 = 0.1}).x, 0.3 * 1.013, 1e-15);                    // radial, r²
  EXPECT_NEAR(moved({.k2 = 0.1}).y, -0.2 * 1.00169, 1e-15);                 // radial, r⁴
  EXPECT_NEAR(moved({.k3 = 1}).x, 0.3 * 1.002197, 1e-15);                   // radial, r⁶
  EXPECT_NEAR(moved({.p1 = 0.01}).x, 0.3 + 2 * 0.01 * 0.3 * -0.2, 1e-15);   // 2·p1·x·y
  EXPECT_NEAR(moved({.p1 = 0.01}).y, -0.2 + 0.01 * 0.21, 1e-15);            // p1·(r² + 2y²)
  EXPECT_NEAR(moved({.p2 = 0.01}).x, 0.3 + 0.01 * 0.31, 1e-15);             // p2·(r² + 2x²)
  EXPECT_NEAR(moved({.p2 = 0.01}).y, -0.2 + 2 * 0.01 * 0.3 * -0.2, 1e-15);  // 2·p2·x·y
}

TEST(Lens, ZeroCoefficientsAreTheIdentity) {
  const BrownConrady none;
  std::mt19937 random(3);
  std::uniform_real_distribution<double> coordinate(-1.5, 1.5);
  for (int i = 0; i < 1000; ++i) {
    const NormalizedPoint p{coordinate(random), coordinate(random)};
    const NormalizedPoint d = distort(p, none), u = undistort(p, none);
    ASSERT_EQ(d.x, p.x);
    ASSERT_EQ(d.y, p.y);
    ASSERT_EQ(u.x, p.x);
    ASSERT_EQ(u.y, p.y);
  }
  const PixelPoint q = distort_pixel({12.25, 1000.5}, none, full_hd());
  EXPECT_NEAR(q.u, 12.25, 1e-12);
  EXPECT_NEAR(q.v, 1000.5, 1e-12);
}

TEST(Lens, ThePrincipalPointDoesNotMoveWithoutTangentialTerms) {
  const BrownConrady radial{.k1 = -0.3, .k2 = 0.1, .k3 = -0.01};
  const PixelPoint c = distort_pixel({959.5, 539.5}, radial, full_hd());
  EXPECT_EQ(c.u, 959.5);
  EXPECT_EQ(c.v, 539.5);
}

TEST(Lens, TheOneTermModelOfCameraModelIsTheCaseK1) {
  // camera_model.h measures y up, this model y down: the same lens, with y flipped.
  std::mt19937 random(5);
  std::uniform_real_distribution<double> coordinate(-0.9, 0.9);
  for (double k : {-0.12, 0.0, 0.1}) {
    const BrownConrady lens{.k1 = k};
    for (int i = 0; i < 1000; ++i) {
      const double x = coordinate(random), y = coordinate(random) * 0.6;
      const Pixel one_term = distort(Pixel{x, y}, k);
      const NormalizedPoint brown = distort(NormalizedPoint{x, -y}, lens);
      ASSERT_NEAR(brown.x, one_term.x, 1e-15);
      ASSERT_NEAR(brown.y, -one_term.y, 1e-15);
      const Pixel one_term_back = undistort(one_term, k);
      const NormalizedPoint brown_back = undistort(brown, lens);
      ASSERT_NEAR(brown_back.x, one_term_back.x, 1e-12);
      ASSERT_NEAR(brown_back.y, -one_term_back.y, 1e-12);
    }
  }

  // In pixels, r normalized the caller's way: by the half-width L = 960 px of a 1920 × 1080
  // frame. Brown–Conrady takes it as fx = fy = L, k1 = k — or, with the real focal length f as
  // fx = fy, as k1 = k·(f/L)².
  const double k = -0.12, half_width = 960, f = 1866.67;
  const LensIntrinsics by_half_width{half_width, half_width, 959.5, 539.5};
  const LensIntrinsics by_focal_length{f, f, 959.5, 539.5};
  const BrownConrady scaled{.k1 = k * (f / half_width) * (f / half_width)};
  for (double u = 0; u < 1920; u += 97)
    for (double v = 0; v < 1080; v += 61) {
      const Pixel centred{(u - 959.5) / half_width, (539.5 - v) / half_width};
      const Pixel bent = distort(centred, k);
      const PixelPoint expected{959.5 + bent.x * half_width, 539.5 - bent.y * half_width};
      EXPECT_LT(distance(distort_pixel({u, v}, {.k1 = k}, by_half_width), expected), 1e-9);
      EXPECT_LT(distance(distort_pixel({u, v}, scaled, by_focal_length), expected), 1e-9);
    }
}

// ---- the inverse ----------------------------------------------------------------------------

/// The worst round trip, both ways, over a grid of pixels covering a 1920 × 1080 frame.
double worst_round_trip(const BrownConrady& lens) {
  double worst = 0;
  for (int u = 0; u <= 1920; u += 30)
    for (int v = 0; v <= 1080; v += 30) {
      const PixelPoint p{double(std::min(u, 1919)), double(std::min(v, 1079))};
      const PixelPoint there = distort_pixel(p, lens, full_hd());
      worst = std::max(worst, distance(undistort_pixel(there, lens, full_hd()), p));
      const PixelPoint back = undistort_pixel(p, lens, full_hd());
      worst = std::max(worst, distance(distort_pixel(back, lens, full_hd()), p));
    }
  return worst;
}

TEST(Lens, UndistortInvertsDistortToANanopixelAcrossAnHdFrame) {
  // The requirement is 0.01 px; converging to 1e-12 in normalized units gives ~1e-9 px.
  EXPECT_LT(worst_round_trip(barrel()), 1e-8);
  EXPECT_LT(worst_round_trip(pincushion()), 1e-8);
  // And the distortion itself is real: tens of pixels in the corner.
  EXPECT_GT(distance(distort_pixel({0, 0}, barrel(), full_hd()), {0, 0}), 30);
  EXPECT_GT(distance(distort_pixel({0, 0}, pincushion(), full_hd()), {0, 0}), 20);
}

TEST(Lens, RandomMildLensesInvertAtRandomPoints) {
  std::mt19937 random(17);
  std::uniform_real_distribution<double> unit(-1, 1);
  for (int trial = 0; trial < 200; ++trial) {
    const BrownConrady lens{.k1 = 0.3 * unit(random),
                            .k2 = 0.1 * unit(random),
                            .k3 = 0.02 * unit(random),
                            .p1 = 2e-3 * unit(random),
                            .p2 = 2e-3 * unit(random)};
    for (int i = 0; i < 100; ++i) {
      // Ideal points over a wide frame (|x| ≤ 0.6, |y| ≤ 0.45): distort, then back.
      const NormalizedPoint p{0.6 * unit(random), 0.45 * unit(random)};
      const NormalizedPoint back = undistort(distort(p, lens), lens);
      ASSERT_NEAR(back.x, p.x, 1e-11) << "trial " << trial;
      ASSERT_NEAR(back.y, p.y, 1e-11) << "trial " << trial;
      // Distorted points (|x′|, |y′| ≤ 0.38, inside every such lens's fold): back, then distort.
      const NormalizedPoint q{0.38 * unit(random), 0.38 * unit(random)};
      const NormalizedPoint forth = distort(undistort(q, lens), lens);
      ASSERT_NEAR(forth.x, q.x, 1e-12) << "trial " << trial;
      ASSERT_NEAR(forth.y, q.y, 1e-12) << "trial " << trial;
    }
  }
}

TEST(Lens, RandomCamerasRoundTripInPixels) {
  std::mt19937 random(23);
  std::uniform_real_distribution<double> unit(0, 1);
  for (int trial = 0; trial < 100; ++trial) {
    const int width = 640 + int(3000 * unit(random)), height = width * 9 / 16;
    const double f = width * (0.6 + 1.4 * unit(random));
    const LensIntrinsics k{f, f * (0.98 + 0.04 * unit(random)),
                           (width - 1) / 2.0 + 20 * (unit(random) - 0.5),
                           (height - 1) / 2.0 + 20 * (unit(random) - 0.5)};
    const BrownConrady lens{.k1 = 0.3 * (unit(random) - 0.5),
                            .k2 = 0.1 * (unit(random) - 0.5),
                            .p1 = 2e-3 * (unit(random) - 0.5),
                            .p2 = 2e-3 * (unit(random) - 0.5)};
    for (int i = 0; i < 50; ++i) {
      const PixelPoint p{width * unit(random) - 0.5, height * unit(random) - 0.5};
      ASSERT_LT(distance(undistort_pixel(distort_pixel(p, lens, k), lens, k), p), 1e-8)
          << "trial " << trial;
    }
  }
}

TEST(Lens, UndistortRefusesPointsPastTheFold) {
  // k1 = −0.5 folds at r² = 2/3, where r′ peaks at 0.544: a radius of 0.6 has no preimage (the
  // Jacobian's determinant reaches 0 on the way out), as camera_model's one-term lens says too.
  const BrownConrady strong{.k1 = -0.5};
  EXPECT_THROW(undistort({0.6, 0}, strong), Error);
  EXPECT_THROW(undistort({0.45, 0.4}, strong), Error);
  EXPECT_NO_THROW(undistort({0.5, 0}, strong));
  try {
    undistort({0.6, 0}, strong);
  } catch (const Error& e) {
    EXPECT_EQ(e.place(), "lens");
    EXPECT_NE(e.reason().find("folds"), std::string::npos) << e.reason();
  }
}

// ---- ST-maps and remapping ------------------------------------------------------------------

TEST(StMap, TheIdentityMapHoldsEachPixelsCentreTUp) {
  const StMap map = st_map_undistort({}, full_hd(), 1920, 1080);
  ASSERT_EQ(map.width, 1920);
  ASSERT_EQ(map.height, 1080);
  ASSERT_EQ(map.s.size(), 1920u * 1080u);
  // Top-left pixel: s = 0.5/1920, t = 1 − 0.5/1080; bottom-right: 1 − 0.5/1920, 0.5/1080.
  EXPECT_FLOAT_EQ(map.s.front(), 0.5f / 1920);
  EXPECT_FLOAT_EQ(map.t.front(), 1 - 0.5f / 1080);
  EXPECT_FLOAT_EQ(map.s.back(), 1 - 0.5f / 1920);
  EXPECT_FLOAT_EQ(map.t.back(), 0.5f / 1080);

  const Image image = st_map_as_image(map);
  EXPECT_EQ(image.at(0, 0), (Rgba{map.s[0], map.t[0], 0, 1}));
  EXPECT_EQ(image.at(1919, 1079), (Rgba{map.s.back(), map.t.back(), 0, 1}));
}

TEST(StMap, RemapWithTheIdentityMapReturnsTheImageExactly) {
  std::mt19937 random(29);
  std::uniform_real_distribution<float> value(0, 4);
  Image image(1920, 1080);
  for (Rgba& p : image.pixels) p = premultiply(value(random), value(random), value(random), 0.25f);
  Matte matte = alpha_of(image);
  for (float& m : matte.values) m = value(random);

  const StMap undistort_map = st_map_undistort({}, full_hd(), 1920, 1080);
  const StMap distort_map = st_map_distort({}, full_hd(), 1920, 1080);
  EXPECT_TRUE(remap(image, undistort_map).pixels == image.pixels);
  EXPECT_TRUE(remap(image, distort_map).pixels == image.pixels);
  EXPECT_TRUE(remap(matte, undistort_map).values == matte.values);
}

TEST(StMap, UndistortingThenDistortingASmoothPlateReturnsIt) {
  const int width = 480, height = 270;
  const Image plate = smooth_plate(width, height);
  for (const BrownConrady& lens : {barrel(), pincushion()}) {
    const StMap undistort_map = st_map_undistort(lens, quarter_hd(), width, height);
    const StMap distort_map = st_map_distort(lens, quarter_hd(), width, height);
    const Image flat = remap(plate, undistort_map);
    const Image back = remap(flat, distort_map);
    // The plate's pixels moved: undistorted, it differs from the plate by far more than the
    // round trip does.
    double moved = 0, worst = 0;
    const int margin = 30;  // the corners are lost one way or the other (no overscan)
    for (int v = margin; v < height - margin; ++v)
      for (int u = margin; u < width - margin; ++u) {
        const Rgba &a = plate.at(u, v), &b = back.at(u, v);
        moved = std::max(moved, double(std::abs(flat.at(u, v).r - a.r)));
        worst = std::max({worst, double(std::abs(b.r - a.r)), double(std::abs(b.g - a.g)),
                          double(std::abs(b.b - a.b)), double(std::abs(b.a - a.a))});
      }
    EXPECT_LT(worst, 3e-3) << "k1 " << lens.k1;
    EXPECT_GT(moved, 0.05) << "k1 " << lens.k1;
  }
}

/// Per column, the alpha-weighted mean row of the image over rows [first, last).
std::vector<double> column_centroids(const Image& image, int first, int last) {
  std::vector<double> centroids(std::size_t(image.width));
  for (int u = 0; u < image.width; ++u) {
    double sum = 0, weighted = 0;
    for (int v = first; v < last; ++v) sum += image.at(u, v).a, weighted += v * image.at(u, v).a;
    centroids[std::size_t(u)] = weighted / sum;
  }
  return centroids;
}

TEST(StMap, AStraightLineBendsUnderTheDistortMapAndStraightensUnderTheUndistortMap) {
  // A soft horizontal line at v = 30 in the undistorted (CG) image, 105 px above the centre.
  const int width = 480, height = 270;
  const double line = 30, sigma = 1.5;
  Image render(width, height);
  for (int v = 0; v < height; ++v)
    for (int u = 0; u < width; ++u) {
      const float a = float(std::exp(-(v - line) * (v - line) / (2 * sigma * sigma)));
      render.at(u, v) = {0.8f * a, 0.8f * a, 0.8f * a, a};
    }
  const LensIntrinsics k = quarter_hd();
  const Image distorted = remap(render, st_map_distort(barrel(), k, width, height));
  const Image straightened = remap(distorted, st_map_undistort(barrel(), k, width, height));

  const int first = 30, last = width - 30;  // columns where the line stays in frame both ways
  const std::vector<double> bent = column_centroids(distorted, 0, 80);
  const std::vector<double> flat = column_centroids(straightened, 0, 80);
  double bent_min = 1e9, bent_max = -1e9, flat_min = 1e9, flat_max = -1e9;
  for (int u = first; u < last; ++u) {
    const double b = bent[std::size_t(u)], f = flat[std::size_t(u)];
    bent_min = std::min(bent_min, b), bent_max = std::max(bent_max, b);
    flat_min = std::min(flat_min, f), flat_max = std::max(flat_max, f);
    // The curve is where the lens puts the line: each of its points undistorts back onto it.
    ASSERT_NEAR(undistort_pixel({double(u), b}, barrel(), k).v, line, 0.05) << "column " << u;
    ASSERT_NEAR(f, line, 0.1) << "column " << u;
  }
  // Barrel: the line bows toward the frame's edge in the middle, by 2.6 px; straightened, it is
  // flat to about a tenth of a pixel (two bilinear resamplings blur it unevenly, not the lens).
  EXPECT_GT(bent_max - bent_min, 2);
  EXPECT_LT(bent[std::size_t(width / 2)], bent[std::size_t(first)]);
  EXPECT_LT(flat_max - flat_min, 0.15);
}

TEST(StMap, AConstantImageStaysConstantWhereverAllFourTapsAreInside) {
  const int width = 480, height = 270;
  const Rgba grey{0.2f, 0.4f, 0.6f, 1};
  const Image constant(width, height, grey);
  const Matte half(width, height, 0.5f);
  for (const BrownConrady& lens : {barrel(), pincushion()})
    for (bool undistorting : {true, false}) {
      const StMap map = undistorting ? st_map_undistort(lens, quarter_hd(), width, height)
                                     : st_map_distort(lens, quarter_hd(), width, height);
      const Image out = remap(constant, map);
      const Matte matte = remap(half, map);
      int inside = 0;
      for (int j = 0; j < height; ++j)
        for (int i = 0; i < width; ++i) {
          const PixelPoint p = sampled_at(map, width, height, i, j);
          if (!(p.u >= 0 && p.u <= width - 1 && p.v >= 0 && p.v <= height - 1)) continue;
          ++inside;
          const Rgba& o = out.at(i, j);
          ASSERT_NEAR(o.r, grey.r, 1e-6f);
          ASSERT_NEAR(o.g, grey.g, 1e-6f);
          ASSERT_NEAR(o.b, grey.b, 1e-6f);
          ASSERT_NEAR(o.a, 1, 1e-6f);
          ASSERT_NEAR(matte.at(i, j), 0.5f, 1e-6f);
        }
      EXPECT_GT(inside, width * height * 8 / 10);
    }
}

TEST(StMap, OutsideTheSourceIsTransparent) {
  // A 1 × 1 map sampling a 4 × 2 opaque source at chosen places.
  const Image source(4, 2, {1, 1, 1, 1});
  const auto sample = [&](float s, float t) {
    return remap(source, StMap{1, 1, {s}, {t}}).pixels[0].a;
  };
  EXPECT_FLOAT_EQ(sample(0.5f, 0.5f), 1);         // between pixel centres, all inside
  EXPECT_FLOAT_EQ(sample(0.125f, 0.75f), 1);      // pixel (0, 0)'s centre
  EXPECT_FLOAT_EQ(sample(0, 0.75f), 0.5f);        // the left edge: half edge pixel, half outside
  EXPECT_FLOAT_EQ(sample(0, 1), 0.25f);           // the top-left corner
  EXPECT_FLOAT_EQ(sample(-0.125f, 0.75f), 0);     // a pixel's width outside
  EXPECT_FLOAT_EQ(sample(-1, -1), 0);             // the no-sample marker
  EXPECT_FLOAT_EQ(sample(float(kNaN), 0.5f), 0);  // nonsense stays transparent
  EXPECT_FLOAT_EQ(sample(float(kInf), 0.5f), 0);
  EXPECT_FLOAT_EQ(sample(1e30f, -1e30f), 0);
}

TEST(StMap, PastTheFoldTheMapsLeaveThePixelsEmpty) {
  // k1 = −0.5 with f = 700 px: the 1920 × 1080 frame's corners (r ≈ 1.57) are past the fold at
  // r² = 2/3, and past the distorted frame's largest radius 0.544.
  const BrownConrady strong{.k1 = -0.5};
  const LensIntrinsics wide{700, 700, 959.5, 539.5};
  const StMap undistort_map = st_map_undistort(strong, wide, 1920, 1080);
  const StMap distort_map = st_map_distort(strong, wide, 1920, 1080);
  for (const StMap* map : {&undistort_map, &distort_map}) {
    EXPECT_EQ(map->s.front(), -1);  // top-left corner
    EXPECT_EQ(map->t.front(), -1);
    EXPECT_NE(map->s[540 * 1920 + 960], -1);  // the centre
  }
  const Image out = remap(Image(1920, 1080, {1, 1, 1, 1}), distort_map);
  EXPECT_EQ(out.at(0, 0).a, 0);
  EXPECT_EQ(out.at(960, 540).a, 1);
}

// ---- bad input ------------------------------------------------------------------------------

TEST(Lens, BadParametersAreRefused) {
  EXPECT_NO_THROW(validate(full_hd()));
  EXPECT_NO_THROW(validate(barrel()));
  EXPECT_THROW(validate(LensIntrinsics{0, 1000, 960, 540}), Error);
  EXPECT_THROW(validate(LensIntrinsics{1000, -1000, 960, 540}), Error);
  EXPECT_THROW(validate(LensIntrinsics{kNaN, 1000, 960, 540}), Error);
  EXPECT_THROW(validate(LensIntrinsics{1000, kInf, 960, 540}), Error);
  EXPECT_THROW(validate(LensIntrinsics{1000, 1000, kNaN, 540}), Error);
  EXPECT_THROW(validate(LensIntrinsics{1000, 1000, 960, -kInf}), Error);
  EXPECT_THROW(validate(BrownConrady{.k2 = kNaN}), Error);
  EXPECT_THROW(validate(BrownConrady{.p2 = kInf}), Error);

  EXPECT_THROW(distort_pixel({0, 0}, barrel(), {0, 0, 960, 540}), Error);
  EXPECT_THROW(undistort_pixel({0, 0}, {.k1 = kNaN}, full_hd()), Error);
  EXPECT_THROW(undistort({kNaN, 0}, barrel()), Error);
  EXPECT_THROW(undistort({0.1, 0}, {.k3 = kInf}), Error);

  EXPECT_THROW(st_map_undistort(barrel(), full_hd(), -1, 1080), Error);
  EXPECT_THROW(st_map_distort(barrel(), {1000, 0, 960, 540}, 1920, 1080), Error);
  EXPECT_THROW(st_map_distort({.p1 = kNaN}, full_hd(), 1920, 1080), Error);

  const StMap short_map{2, 2, {0.5f, 0.5f, 0.5f}, {0.5f, 0.5f, 0.5f, 0.5f}};
  EXPECT_THROW(remap(Image(4, 4), short_map), Error);
  EXPECT_THROW(remap(Matte(4, 4), short_map), Error);
  EXPECT_THROW(st_map_as_image(short_map), Error);
  Image inconsistent(4, 4);
  inconsistent.pixels.pop_back();
  EXPECT_THROW(remap(inconsistent, StMap{1, 1, {0.5f}, {0.5f}}), Error);
  // Empty is fine: an empty map gives an empty image, an empty source a transparent one.
  EXPECT_TRUE(remap(Image(4, 4), StMap{}).pixels.empty());
  EXPECT_EQ(remap(Image(), StMap{1, 1, {0.5f}, {0.5f}}).pixels[0], Rgba{});
}

}  // namespace
}  // namespace kinema::composite
