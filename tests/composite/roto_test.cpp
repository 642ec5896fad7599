// Rotoscoping: exact coverage (1 inside, 0 outside, ½ and ¼ where a pixel-aligned edge or corner
// cuts a pixel), matte sums equal to analytic areas (squares, a rotated square, a triangle, a
// Bézier circle, random star polygons), the non-zero winding rule, keys (halfway, clamped before
// and after, Catmull–Rom through the keys with continuous velocity), invert, blend modes and
// opacity, the feather's falloff (exact values, monotone, interior untouched, varying along an
// edge), exact shifts by whole pixels, clipping at the image's sides, the outline's tolerance,
// and bad input refused with its place named.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "kinema/composite/image.h"
#include "kinema/composite/roto.h"
#include "kinema/core/error.h"

namespace kinema::composite {
namespace {

RotoVertex corner(double x, double y, double feather = 0) { return {{x, y}, {}, {}, feather}; }

/// A one-key shape through `points` with straight edges.
RotoShape polygon(const std::vector<Vec2>& points, double feather = 0,
                  const std::string& name = "polygon") {
  RotoShape shape;
  shape.name = name;
  shape.keys.push_back({0, {}});
  for (const Vec2& p : points) shape.keys[0].vertices.push_back(corner(p.x, p.y, feather));
  return shape;
}

RotoShape rectangle(double x0, double y0, double x1, double y1, double feather = 0) {
  return polygon({{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}}, feather, "rectangle");
}

/// A circle as four Bézier arcs, handles 0.5523·r along the tangent.
std::vector<RotoVertex> circle_vertices(Vec2 centre, double r, double feather = 0) {
  std::vector<RotoVertex> v;
  for (int i = 0; i < 4; ++i) {
    const double angle = i * std::numbers::pi / 2;
    const Vec2 radial{std::cos(angle), std::sin(angle)}, tangent{-radial.y, radial.x};
    v.push_back({centre + radial * r, tangent * (-0.5523 * r), tangent * (0.5523 * r), feather});
  }
  return v;
}

RotoShape one_key(std::vector<RotoVertex> vertices, const std::string& name = "shape") {
  RotoShape shape;
  shape.name = name;
  shape.keys.push_back({0, std::move(vertices)});
  return shape;
}

double sum(const Matte& m) {
  double s = 0;
  for (float v : m.values) s += v;
  return s;
}

double shoelace(const std::vector<Vec2>& p) {
  double twice = 0;
  for (std::size_t i = 0; i < p.size(); ++i) twice += det(p[i], p[(i + 1) % p.size()]);
  return std::abs(twice) / 2;
}

void expect_in_unit_range(const Matte& m) {
  for (float v : m.values) {
    ASSERT_TRUE(std::isfinite(v));
    ASSERT_GE(v, 0.0f);
    ASSERT_LE(v, 1.0f);
  }
}

// ---- coverage -----------------------------------------------------------------------------------

TEST(RotoCoverage, PixelAlignedSquareIsExactlyOneInsideAndZeroOutside) {
  const Matte m = rasterize_roto(rectangle(10, 10, 20, 20), 0, 32, 32);
  ASSERT_EQ(m.width, 32);
  ASSERT_EQ(m.height, 32);
  for (int y = 0; y < 32; ++y)
    for (int x = 0; x < 32; ++x) {
      const bool inside = x >= 10 && x < 20 && y >= 10 && y < 20;
      ASSERT_EQ(m.at(x, y), inside ? 1.0f : 0.0f) << x << ", " << y;
    }
}

TEST(RotoCoverage, EdgeThatHalvesAPixelGivesOneHalfAndACornerOneQuarter) {
  const Matte m = rasterize_roto(rectangle(10, 10, 20.5, 20.5), 0, 32, 32);
  for (int y = 10; y < 20; ++y) {
    EXPECT_EQ(m.at(19, y), 1.0f);
    EXPECT_EQ(m.at(20, y), 0.5f);
    EXPECT_EQ(m.at(21, y), 0.0f);
  }
  for (int x = 10; x < 20; ++x) EXPECT_EQ(m.at(x, 20), 0.5f);
  EXPECT_EQ(m.at(20, 20), 0.25f);
  EXPECT_NEAR(sum(m), 10.5 * 10.5, 1e-9);
}

TEST(RotoCoverage, MatteSumsEqualTheAreasOfARotatedSquareAndATriangle) {
  // A square of half-diagonal 20 turned 30° about a point off the pixel grid: area 2·20² = 800.
  std::vector<Vec2> square;
  for (int i = 0; i < 4; ++i) {
    const double a = std::numbers::pi / 6 + i * std::numbers::pi / 2;
    square.push_back({50.3 + 20 * std::cos(a), 40.7 + 20 * std::sin(a)});
  }
  EXPECT_NEAR(sum(rasterize_roto(polygon(square), 0, 100, 100)), 800, 800 * 1e-6);
  const std::vector<Vec2> triangle{{3.2, 4.9}, {61.7, 20.1}, {17.45, 55.55}};
  EXPECT_NEAR(sum(rasterize_roto(polygon(triangle), 0, 64, 64)), shoelace(triangle),
              shoelace(triangle) * 1e-6);
}

TEST(RotoCoverage, FourArcCircleHasAreaPiRSquaredWithinOneTenthPercent) {
  for (const double r : {30.0, 100.0}) {
    const Matte m = rasterize_roto(one_key(circle_vertices({120.25, 110.5}, r)), 0, 240, 230);
    const double area = std::numbers::pi * r * r;
    EXPECT_NEAR(sum(m), area, area * 1e-3) << "r = " << r;
    EXPECT_EQ(m.at(120, 110), 1.0f);
    expect_in_unit_range(m);
  }
}

TEST(RotoCoverage, OrientationDoesNotChangeTheMatte) {
  std::vector<RotoVertex> forward = circle_vertices({40, 40}, 25);
  forward[1].position += Vec2{3, -2};  // not symmetric
  std::vector<RotoVertex> backward(forward.rbegin(), forward.rend());
  for (RotoVertex& v : backward) std::swap(v.in_tangent, v.out_tangent);
  const Matte a = rasterize_roto(one_key(forward), 0, 80, 80);
  const Matte b = rasterize_roto(one_key(backward), 0, 80, 80);
  for (std::size_t i = 0; i < a.values.size(); ++i) ASSERT_NEAR(a.values[i], b.values[i], 1e-6);
}

TEST(RotoCoverage, NonZeroWindingFillsThePentagramsCentreAndBothLobesOfABowTie) {
  // A pentagram drawn as one outline of 5 vertices: its centre has winding 2, filled under
  // non-zero (even-odd would leave it empty). The filled star is the decagon whose inner corners
  // lie at R·cos 72°/cos 36°.
  const double R = 40;
  std::vector<Vec2> star, decagon;
  for (int i = 0; i < 5; ++i) {
    const double a = -std::numbers::pi / 2 + i * 4 * std::numbers::pi / 5;
    star.push_back({50 + R * std::cos(a), 50 + R * std::sin(a)});
  }
  const double inner = R * std::cos(2 * std::numbers::pi / 5) / std::cos(std::numbers::pi / 5);
  for (int i = 0; i < 10; ++i) {
    const double a = -std::numbers::pi / 2 + i * std::numbers::pi / 5;
    decagon.push_back(
        {50 + (i % 2 ? inner : R) * std::cos(a), 50 + (i % 2 ? inner : R) * std::sin(a)});
  }
  const Matte m = rasterize_roto(polygon(star), 0, 100, 100);
  EXPECT_EQ(m.at(49, 49), 1.0f);
  EXPECT_EQ(m.at(50, 50), 1.0f);
  expect_in_unit_range(m);
  // Only the five pixels holding an inner corner, where the outline crosses itself, are
  // approximate.
  EXPECT_NEAR(sum(m), shoelace(decagon), 1.0);
  // A bow tie: two triangles of 100 px² turning opposite ways.
  const Matte bow = rasterize_roto(polygon({{10, 10}, {30, 30}, {30, 10}, {10, 30}}), 0, 40, 40);
  EXPECT_NEAR(sum(bow), 200, 1e-9);
  EXPECT_EQ(bow.at(12, 20), 1.0f);
  EXPECT_EQ(bow.at(27, 20), 1.0f);
  EXPECT_EQ(bow.at(20, 12), 0.0f);
}

TEST(RotoCoverage, ShapesReachingPastTheImageAreClipped) {
  // Half off the left side: columns 0 … 9 of rows 5 … 14.
  const Matte left = rasterize_roto(rectangle(-10, 5, 10, 15), 0, 32, 32);
  EXPECT_NEAR(sum(left), 100, 1e-9);
  EXPECT_EQ(left.at(0, 5), 1.0f);
  EXPECT_EQ(left.at(10, 5), 0.0f);
  // Over every side: all 1.
  const Matte all = rasterize_roto(rectangle(-5, -7, 40, 41), 0, 32, 32);
  for (float v : all.values) ASSERT_EQ(v, 1.0f);
  // Wholly outside, on each side: all 0.
  for (const RotoShape& outside : {rectangle(-30, 5, -10, 15), rectangle(40, 5, 60, 15),
                                   rectangle(5, -30, 15, -10), rectangle(5, 40, 15, 60)})
    EXPECT_EQ(sum(rasterize_roto(outside, 0, 32, 32)), 0);
  // A triangle across the left side keeps its part right of x = 0: (0, 0), (20, 0), (0, 20).
  EXPECT_NEAR(sum(rasterize_roto(polygon({{-10, 0}, {20, 0}, {-10, 30}}), 0, 32, 32)), 200, 1e-9);
  // A curved shape far off the image on the left and crossing the rows: nothing shows.
  EXPECT_EQ(sum(rasterize_roto(one_key(circle_vertices({-5000, 16}, 300)), 0, 32, 32)), 0);
}

TEST(RotoCoverage, ClippingByTheImageMatchesACropOfALargerMatte) {
  // Random curved, feathered shapes in a 96 × 96 matte, and the same shapes moved by (−dx, −dy)
  // into smaller mattes of odd sizes: each is the larger one's crop at (dx, dy).
  std::mt19937 rng(31);
  std::uniform_real_distribution<double> pos(-10, 106), handle(-30, 30), feather(0, 9);
  std::uniform_int_distribution<int> offset(0, 40), side(1, 53);
  for (int trial = 0; trial < 30; ++trial) {
    std::vector<RotoVertex> v(std::size_t(3 + trial % 5));
    for (RotoVertex& x : v)
      x = {{pos(rng), pos(rng)},
           {handle(rng), handle(rng)},
           {handle(rng), handle(rng)},
           feather(rng)};
    const Matte big = rasterize_roto(one_key(v), 0, 96, 96);
    const int dx = offset(rng), dy = offset(rng), w = side(rng), h = side(rng);
    for (RotoVertex& x : v) x.position -= Vec2{double(dx), double(dy)};
    const Matte crop = rasterize_roto(one_key(v), 0, w, h);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x)
        ASSERT_NEAR(crop.at(x, y), big.at(x + dx, y + dy), 1e-5)
            << "trial " << trial << ", pixel " << x << ", " << y;
  }
}

TEST(RotoCoverage, CoverageStaysWithinZeroAndOneForTangledFeatheredShapes) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> pos(-10, 74), handle(-40, 40), feather(0, 6);
  for (int trial = 0; trial < 40; ++trial) {
    std::vector<RotoShape> shapes;
    for (int s = 0; s < 3; ++s) {
      std::vector<RotoVertex> v(std::size_t(3 + trial % 6));
      for (RotoVertex& x : v)
        x = {{pos(rng), pos(rng)},
             {handle(rng), handle(rng)},
             {handle(rng), handle(rng)},
             trial % 2 ? feather(rng) : 0.0};
      RotoShape shape = one_key(v);
      shape.blend = RotoBlend(s == 0 ? 0 : (trial + s) % 3);
      shape.invert = (trial + s) % 4 == 0;
      shape.opacity = 0.3 + 0.7 * ((trial + s) % 3) / 2.0;
      shapes.push_back(shape);
      expect_in_unit_range(rasterize_roto(shape, 0, 64, 64));
    }
    expect_in_unit_range(rasterize_roto(shapes, 0, 64, 64));
  }
}

TEST(RotoCoverage, RandomStarPolygonsSumToTheirShoelaceArea) {
  std::mt19937 rng(2024);
  std::uniform_real_distribution<double> radius(3, 45), jitter(-0.4, 0.4), centre(46, 82);
  std::uniform_int_distribution<int> count(3, 24);
  for (int trial = 0; trial < 200; ++trial) {
    const int n = count(rng);
    const Vec2 c{centre(rng), centre(rng)};
    std::vector<Vec2> points;
    for (int i = 0; i < n; ++i) {
      const double a = (i + jitter(rng)) * 2 * std::numbers::pi / n;
      const double r = radius(rng);
      points.push_back({c.x + r * std::cos(a), c.y + r * std::sin(a)});
    }
    const Matte m = rasterize_roto(polygon(points), 0, 128, 128);
    expect_in_unit_range(m);
    const double area = shoelace(points);
    ASSERT_NEAR(sum(m), area, area * 1e-6) << "trial " << trial;
  }
}

TEST(RotoCoverage, MovingAShapeByWholePixelsShiftsItsMatteExactly) {
  // Dyadic numbers keep every step of the arithmetic exact under the shift.
  std::vector<RotoVertex> v = circle_vertices({30.25, 28.5}, 14.75, 3.5);
  v[2].feather = 1.25;
  v[0].out_tangent = {2.5, 9.75};
  std::vector<RotoVertex> moved = v;
  for (RotoVertex& x : moved) x.position += Vec2{7, -3};
  const Matte a = rasterize_roto(one_key(v), 0, 80, 64);
  const Matte b = rasterize_roto(one_key(moved), 0, 80, 64);
  double total = 0;
  for (int y = 0; y < 64; ++y)
    for (int x = 0; x < 80; ++x) {
      const float shifted = x - 7 >= 0 && y + 3 < 64 ? a.at(x - 7, y + 3) : 0.0f;
      ASSERT_EQ(b.at(x, y), shifted) << x << ", " << y;
      total += b.at(x, y);
    }
  EXPECT_NEAR(total, sum(a), 1e-9);
}

TEST(RotoCoverage, OutlineStaysWithinTheFlatnessOfTheCurves) {
  const std::vector<RotoVertex> v = circle_vertices({0, 0}, 200);
  const std::vector<Vec2> outline = roto_outline(v);
  ASSERT_GT(outline.size(), 16u);
  EXPECT_EQ(outline.front(), v[0].position);
  for (const RotoVertex& x : v)
    EXPECT_NE(std::find(outline.begin(), outline.end(), x.position), outline.end());
  // Every point of every curve lies within kRotoFlatness of the polyline.
  double worst = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    const Vec2 p0 = v[i].position, p1 = p0 + v[i].out_tangent;
    const Vec2 p3 = v[(i + 1) % 4].position, p2 = p3 + v[(i + 1) % 4].in_tangent;
    for (int k = 0; k <= 2000; ++k) {
      const double t = k / 2000.0, u = 1 - t;
      const Vec2 q =
          p0 * (u * u * u) + p1 * (3 * u * u * t) + p2 * (3 * u * t * t) + p3 * (t * t * t);
      double nearest = 1e9;
      for (std::size_t j = 0; j < outline.size(); ++j) {
        const Vec2 a = outline[j], d = outline[(j + 1) % outline.size()] - a;
        const double s = std::clamp(dot(q - a, d) / length_squared(d), 0.0, 1.0);
        nearest = std::min(nearest, length(q - (a + d * s)));
      }
      worst = std::max(worst, nearest);
    }
  }
  EXPECT_LE(worst, kRotoFlatness);
}

TEST(RotoCoverage, FullHdMatteOfAFeatheredEightVertexShape) {
  std::vector<RotoVertex> v;
  for (int i = 0; i < 8; ++i) {
    const double a = i * std::numbers::pi / 4, r = i % 2 ? 300 : 420;
    const Vec2 radial{std::cos(a), std::sin(a)}, tangent{-radial.y, radial.x};
    v.push_back({Vec2{960, 540} + radial * r, tangent * -90.0, tangent * 90.0, 10});
  }
  std::vector<RotoVertex> unfeathered = v;
  for (RotoVertex& x : unfeathered) x.feather = 0;
  const Matte hard = rasterize_roto(one_key(unfeathered), 0, 1920, 1080);
  const Matte soft = rasterize_roto(one_key(v), 0, 1920, 1080);
  expect_in_unit_range(soft);
  EXPECT_EQ(soft.at(960, 540), 1.0f);
  EXPECT_EQ(soft.at(0, 0), 0.0f);
  // The feather adds half its width times the outline's length, give or take the corners.
  double perimeter = 0;
  const std::vector<Vec2> outline = roto_outline(v);
  for (std::size_t i = 0; i < outline.size(); ++i)
    perimeter += length(outline[(i + 1) % outline.size()] - outline[i]);
  EXPECT_NEAR(sum(soft) - sum(hard), 0.5 * 10 * perimeter, 0.05 * 0.5 * 10 * perimeter);
}

// ---- keys ---------------------------------------------------------------------------------------

RotoShape two_keys(RotoInterpolation mode = RotoInterpolation::Linear) {
  RotoShape shape = rectangle(10, 10, 20, 20, 1);
  RotoKey later{2, shape.keys[0].vertices};
  for (RotoVertex& v : later.vertices) {
    v.position = v.position * 1.5 + Vec2{8, 4};
    v.out_tangent = {3, 1};
    v.feather = 5;
  }
  shape.keys.push_back(later);
  shape.interpolation = mode;
  return shape;
}

TEST(RotoKeys, HalfwayBetweenTwoKeysIsTheShapeAtTheHalfwayPositions) {
  const RotoShape shape = two_keys();
  std::vector<RotoVertex> halfway = shape.keys[0].vertices;
  for (std::size_t i = 0; i < halfway.size(); ++i) {
    const RotoVertex &a = shape.keys[0].vertices[i], &b = shape.keys[1].vertices[i];
    halfway[i] = {(a.position + b.position) / 2.0, (a.in_tangent + b.in_tangent) / 2.0,
                  (a.out_tangent + b.out_tangent) / 2.0, (a.feather + b.feather) / 2};
  }
  EXPECT_EQ(vertices_at(shape, 1), halfway);
  const Matte keyed = rasterize_roto(shape, 1, 48, 48);
  const Matte drawn = rasterize_roto(one_key(halfway), 0, 48, 48);
  EXPECT_EQ(keyed.values, drawn.values);
}

TEST(RotoKeys, BeforeTheFirstKeyAndAfterTheLastTheyHold) {
  for (const RotoInterpolation mode : {RotoInterpolation::Linear, RotoInterpolation::CatmullRom}) {
    const RotoShape shape = two_keys(mode);
    EXPECT_EQ(vertices_at(shape, -3), shape.keys[0].vertices);
    EXPECT_EQ(vertices_at(shape, 0), shape.keys[0].vertices);
    EXPECT_EQ(vertices_at(shape, 2), shape.keys[1].vertices);
    EXPECT_EQ(vertices_at(shape, 9.5), shape.keys[1].vertices);
    EXPECT_EQ(rasterize_roto(shape, -3, 48, 48).values,
              rasterize_roto(one_key(shape.keys[0].vertices), 0, 48, 48).values);
    EXPECT_EQ(rasterize_roto(shape, 9.5, 48, 48).values,
              rasterize_roto(one_key(shape.keys[1].vertices), 0, 48, 48).values);
  }
}

/// A triangle whose first vertex's x is `xs[k]` at key k.
RotoShape moving_triangle(const std::vector<double>& times, const std::vector<double>& xs) {
  RotoShape shape;
  shape.name = "moving";
  shape.interpolation = RotoInterpolation::CatmullRom;
  for (std::size_t k = 0; k < times.size(); ++k)
    shape.keys.push_back({times[k], {corner(xs[k], 5), corner(40, 5), corner(20, 30)}});
  return shape;
}

TEST(RotoKeys, CatmullRomWithTwoKeysIsLinear) {
  const RotoShape smooth = two_keys(RotoInterpolation::CatmullRom), straight = two_keys();
  for (const double t : {0.1, 0.5, 1.0, 1.7}) {
    const std::vector<RotoVertex> a = vertices_at(smooth, t), b = vertices_at(straight, t);
    for (std::size_t i = 0; i < a.size(); ++i) {
      EXPECT_NEAR(a[i].position.x, b[i].position.x, 1e-12);
      EXPECT_NEAR(a[i].position.y, b[i].position.y, 1e-12);
      EXPECT_NEAR(a[i].out_tangent.x, b[i].out_tangent.x, 1e-12);
      EXPECT_NEAR(a[i].feather, b[i].feather, 1e-12);
    }
  }
}

TEST(RotoKeys, CatmullRomKeepsConstantVelocityOverUnevenKeys) {
  // x = 3 + 4t at t = 0, 1, 3.5, 4: the spline is that line everywhere between.
  const RotoShape shape = moving_triangle({0, 1, 3.5, 4}, {3, 7, 17, 19});
  for (const double t : {0.25, 0.5, 2.0, 3.0, 3.75})
    EXPECT_NEAR(vertices_at(shape, t)[0].position.x, 3 + 4 * t, 1e-12) << t;
}

TEST(RotoKeys, CatmullRomPassesThroughTheKeysWithContinuousVelocity) {
  // x = 0, 10, 4 at t = 0, 1, 3: through each key, and at key 1 the same velocity from both
  // sides, (4 − 0)/(3 − 0).
  const RotoShape shape = moving_triangle({0, 1, 3}, {0, 10, 4});
  auto x = [&](double t) { return vertices_at(shape, t)[0].position.x; };
  EXPECT_EQ(x(0), 0);
  EXPECT_EQ(x(1), 10);
  EXPECT_EQ(x(3), 4);
  const double e = 1e-6;
  EXPECT_NEAR((x(1) - x(1 - e)) / e, 4.0 / 3, 1e-4);
  EXPECT_NEAR((x(1 + e) - x(1)) / e, 4.0 / 3, 1e-4);
  // Halfway to the first key: h00·0 + h10·1·10 + h01·10 + h11·1·(4/3) at s = ½.
  EXPECT_NEAR(x(0.5), 0.125 * 10 + 0.5 * 10 - 0.125 * 4.0 / 3, 1e-12);
}

TEST(RotoKeys, CatmullRomOvershootNeverMakesAFeatherNegative) {
  RotoShape shape = moving_triangle({0, 1, 2}, {0, 0, 0});
  shape.keys[2].vertices[1].feather = 10;  // 0, 0, 10: the spline dips below 0 on [0, 1]
  for (const double t : {0.25, 0.5, 0.75}) EXPECT_EQ(vertices_at(shape, t)[1].feather, 0);
  EXPECT_GT(vertices_at(shape, 1.5)[1].feather, 0);
}

// ---- invert, blending, opacity ------------------------------------------------------------------

TEST(RotoBlending, InvertGivesOneMinusTheMatte) {
  RotoShape shape = one_key(circle_vertices({20.3, 18.9}, 11, 2));
  const Matte plain = rasterize_roto(shape, 0, 40, 40);
  shape.invert = true;
  const Matte inverted = rasterize_roto(shape, 0, 40, 40);
  const Matte in_list = rasterize_roto(std::vector<RotoShape>{shape}, 0, 40, 40);
  for (std::size_t i = 0; i < plain.values.size(); ++i) {
    ASSERT_EQ(inverted.values[i], 1 - plain.values[i]);
    ASSERT_EQ(in_list.values[i], 1 - plain.values[i]);
  }
}

TEST(RotoBlending, SubtractCutsAHole) {
  RotoShape hole = rectangle(20, 20, 30, 30);
  hole.blend = RotoBlend::Subtract;
  const Matte m =
      rasterize_roto(std::vector<RotoShape>{rectangle(10, 10, 50, 50), hole}, 0, 64, 64);
  EXPECT_EQ(m.at(25, 25), 0.0f);
  EXPECT_EQ(m.at(15, 25), 1.0f);
  EXPECT_EQ(m.at(55, 25), 0.0f);
  EXPECT_NEAR(sum(m), 40 * 40 - 10 * 10, 1e-9);
  // Subtracting first leaves nothing to cut; adding after the cut fills it again.
  EXPECT_EQ(sum(rasterize_roto(std::vector<RotoShape>{hole}, 0, 64, 64)), 0);
  EXPECT_NEAR(sum(rasterize_roto(std::vector<RotoShape>{rectangle(10, 10, 50, 50), hole,
                                                        rectangle(20, 20, 30, 30)},
                                 0, 64, 64)),
              1600, 1e-9);
}

TEST(RotoBlending, AddIsTheUnionAndMultiplyTheIntersection) {
  const RotoShape a = rectangle(10, 10, 30, 30), b = rectangle(20, 20, 40, 40);
  EXPECT_NEAR(sum(rasterize_roto(std::vector<RotoShape>{a, b}, 0, 64, 64)), 400 + 400 - 100, 1e-9);
  RotoShape intersect = b;
  intersect.blend = RotoBlend::Multiply;
  const Matte m = rasterize_roto(std::vector<RotoShape>{a, intersect}, 0, 64, 64);
  EXPECT_NEAR(sum(m), 100, 1e-9);
  EXPECT_EQ(m.at(25, 25), 1.0f);
  EXPECT_EQ(m.at(15, 15), 0.0f);
}

TEST(RotoBlending, OpacityScalesWhatAShapeDoes) {
  RotoShape half = rectangle(10, 10, 30, 30);
  half.opacity = 0.25;
  EXPECT_EQ(rasterize_roto(half, 0, 40, 40).at(20, 20), 0.25f);
  EXPECT_EQ(rasterize_roto(std::vector<RotoShape>{half}, 0, 40, 40).at(20, 20), 0.25f);
  RotoShape cut = rectangle(15, 15, 25, 25);
  cut.blend = RotoBlend::Subtract;
  cut.opacity = 0.5;
  const Matte m = rasterize_roto(std::vector<RotoShape>{rectangle(10, 10, 30, 30), cut}, 0, 40, 40);
  EXPECT_EQ(m.at(20, 20), 0.5f);
  EXPECT_EQ(m.at(12, 12), 1.0f);
  RotoShape faint = rectangle(15, 15, 25, 25);
  faint.blend = RotoBlend::Multiply;
  faint.opacity = 0.5;
  const Matte n =
      rasterize_roto(std::vector<RotoShape>{rectangle(10, 10, 30, 30), faint}, 0, 40, 40);
  EXPECT_EQ(n.at(20, 20), 1.0f);
  EXPECT_EQ(n.at(12, 12), 0.5f);
}

// ---- feather ------------------------------------------------------------------------------------

double smoothstep(double x) { return x * x * (3 - 2 * x); }

TEST(RotoFeather, FallsMonotonicallyFromOneToZeroAcrossItsWidthAndLeavesTheInterior) {
  const Matte hard = rasterize_roto(rectangle(10, 10, 40, 40), 0, 64, 64);
  const Matte soft = rasterize_roto(rectangle(10, 10, 40, 40, 10), 0, 64, 64);
  for (std::size_t i = 0; i < hard.values.size(); ++i)
    if (hard.values[i] == 1) {
      ASSERT_EQ(soft.values[i], 1.0f);
    }
  // Right of the edge x = 40 on row 25: 1 − smoothstep(d/10), d from the pixel centre.
  for (int x = 40; x < 64; ++x) {
    const double d = x + 0.5 - 40;
    EXPECT_NEAR(soft.at(x, 25), d < 10 ? 1 - smoothstep(d / 10) : 0, 1e-6) << x;
    if (x > 40 && d < 10.5) {
      EXPECT_LT(soft.at(x, 25), soft.at(x - 1, 25)) << x;
    }
  }
  EXPECT_GT(soft.at(49, 25), 0.0f);
  EXPECT_EQ(soft.at(50, 25), 0.0f);
  // Past a corner the feather rounds off with the distance to the corner.
  const double d = std::hypot(43.5 - 40, 44.5 - 40);
  EXPECT_NEAR(soft.at(43, 44), 1 - smoothstep(d / 10), 1e-6);
  expect_in_unit_range(soft);
}

TEST(RotoFeather, VariesAlongEachEdgeWithItsVerticesFeathers) {
  // Feathers 0, 0, 8, 8 at the corners of a 40 px square: none above the top edge, 8 below the
  // bottom one, growing down the sides. Checked against a brute-force search of
  // min |p − q| / f(q) over points q along the outline.
  const std::vector<Vec2> corners{{10, 10}, {50, 10}, {50, 50}, {10, 50}};
  const double feathers[4] = {0, 0, 8, 8};
  RotoShape shape = polygon(corners);
  for (int i = 0; i < 4; ++i) shape.keys[0].vertices[std::size_t(i)].feather = feathers[i];
  const Matte m = rasterize_roto(shape, 0, 64, 64);
  for (int y = 0; y < 64; ++y)
    for (int x = 0; x < 64; ++x) {
      if (x >= 10 && x < 50 && y >= 10 && y < 50) {
        ASSERT_EQ(m.at(x, y), 1.0f);
        continue;
      }
      const Vec2 p{x + 0.5, y + 0.5};
      double best = 1e9;
      for (int e = 0; e < 4; ++e)
        for (int k = 0; k <= 1000; ++k) {
          const double u = k / 1000.0, f = feathers[e] + (feathers[(e + 1) % 4] - feathers[e]) * u;
          const Vec2 q = corners[std::size_t(e)] * (1 - u) + corners[std::size_t((e + 1) % 4)] * u;
          if (f > 0) best = std::min(best, length(p - q) / f);
        }
      const double expected = best < 1 ? 1 - smoothstep(best) : 0;
      ASSERT_NEAR(m.at(x, y), expected, 2e-3) << x << ", " << y;
    }
  EXPECT_EQ(m.at(30, 8), 0.0f);   // above the unfeathered top edge
  EXPECT_GT(m.at(30, 52), 0.3f);  // below the bottom one
}

TEST(RotoFeather, ReachesThePixelsInTheImagesLastCorner) {
  // A square's corner 2.5 px up and left of the last pixel's centre, whatever the image's size
  // (so that the feather's 8 × 8 tiles end in every way, down to a single pixel).
  const double expected = 1 - smoothstep(std::hypot(2.5, 2.5) / 5);
  for (int n = 1; n <= 20; ++n) {
    const Matte m = rasterize_roto(rectangle(-10, -10, n - 3, n - 3, 5), 0, n, n);
    EXPECT_NEAR(m.at(n - 1, n - 1), expected, 1e-6) << n;
  }
}

TEST(RotoFeather, RandomPolygonsMatchABruteForceSearchOfTheOutline) {
  // Random star polygons, each vertex its own feather (some 0), against max(hard matte, φ) with
  // φ from a search of every edge (coarse samples, then fine ones around the best).
  std::mt19937 rng(99);
  std::uniform_real_distribution<double> radius(4, 22), jitter(-0.4, 0.4), feather(0, 12);
  for (int trial = 0; trial < 10; ++trial) {
    const int n = 3 + trial % 6;
    std::vector<Vec2> points;
    std::vector<double> feathers;
    for (int i = 0; i < n; ++i) {
      const double a = (i + jitter(rng)) * 2 * std::numbers::pi / n, r = radius(rng);
      points.push_back({32.3 + r * std::cos(a), 31.8 + r * std::sin(a)});
      feathers.push_back(i % 4 == 3 ? 0.0 : feather(rng));
    }
    const RotoShape hard_shape = polygon(points);
    RotoShape shape = hard_shape;
    for (int i = 0; i < n; ++i)
      shape.keys[0].vertices[std::size_t(i)].feather = feathers[std::size_t(i)];
    const Matte hard = rasterize_roto(hard_shape, 0, 64, 64),
                soft = rasterize_roto(shape, 0, 64, 64);
    for (int y = 0; y < 64; ++y)
      for (int x = 0; x < 64; ++x) {
        const Vec2 p{x + 0.5, y + 0.5};
        double best = 1e9;
        for (int e = 0; e < n; ++e) {
          const Vec2 a = points[std::size_t(e)], b = points[std::size_t((e + 1) % n)];
          const double fa = feathers[std::size_t(e)], fb = feathers[std::size_t((e + 1) % n)];
          auto ratio = [&](double u) {
            const double f = fa + (fb - fa) * u;
            return f > 0 ? length(p - (a * (1 - u) + b * u)) / f : 1e9;
          };
          double best_u = 0, best_e = 1e9;
          for (int k = 0; k <= 100; ++k)
            if (ratio(k / 100.0) < best_e) best_e = ratio(k / 100.0), best_u = k / 100.0;
          for (int k = -100; k <= 100; ++k) {
            const double u = std::clamp(best_u + k / 10000.0, 0.0, 1.0);
            best_e = std::min(best_e, ratio(u));
          }
          best = std::min(best, best_e);
        }
        const double phi = best < 1 ? 1 - smoothstep(best) : 0;
        ASSERT_NEAR(soft.at(x, y), std::max(double(hard.at(x, y)), phi), 1e-4)
            << "trial " << trial << ", pixel " << x << ", " << y;
      }
  }
}

// ---- bad input ----------------------------------------------------------------------------------

/// Expects `f` to throw kinema::Error with exactly `place` and a reason containing `reason`.
template <class F>
void expect_error(F f, const std::string& place, const std::string& reason) {
  try {
    f();
    ADD_FAILURE() << "no error for " << place;
  } catch (const Error& e) {
    EXPECT_EQ(e.place(), place);
    EXPECT_NE(e.reason().find(reason), std::string::npos) << e.reason();
  }
}

RotoShape mask() {
  RotoShape shape;
  shape.name = "mask";
  for (int k = 0; k < 3; ++k) {
    RotoKey key{double(k), {}};
    for (int i = 0; i < 6; ++i)
      key.vertices.push_back(corner(20 + 10 * std::cos(i), 20 + 10 * std::sin(i), 1));
    shape.keys.push_back(key);
  }
  return shape;
}

TEST(RotoErrors, BadVerticesNameTheShapeKeyAndVertex) {
  const double nan = std::nan(""), inf = INFINITY;
  auto fails = [](RotoShape shape, const std::string& place, const std::string& reason) {
    expect_error([&] { validate(shape); }, place, reason);
    expect_error([&] { rasterize_roto(shape, 0, 32, 32); }, place, reason);
    expect_error([&] { vertices_at(shape, 0); }, place, reason);
  };
  RotoShape s = mask();
  s.keys[2].vertices[5].position.x = nan;
  fails(s, "roto shape 'mask', key 2, vertex 5", "position is not finite");
  s = mask();
  s.keys[1].vertices[0].in_tangent.y = inf;
  fails(s, "roto shape 'mask', key 1, vertex 0", "in tangent is not finite");
  s = mask();
  s.keys[0].vertices[3].out_tangent.x = -inf;
  fails(s, "roto shape 'mask', key 0, vertex 3", "out tangent is not finite");
  s = mask();
  s.keys[2].vertices[4].feather = -0.5;
  fails(s, "roto shape 'mask', key 2, vertex 4", "negative");
  s = mask();
  s.keys[0].vertices[1].feather = nan;
  fails(s, "roto shape 'mask', key 0, vertex 1", "feather is not finite");
  s = mask();
  s.keys[1].vertices[2].position.y = 2e6;
  fails(s, "roto shape 'mask', key 1, vertex 2", "beyond");
}

TEST(RotoErrors, BadKeysAndShapesAreRefused) {
  const double nan = std::nan("");
  auto fails = [](RotoShape shape, const std::string& place, const std::string& reason) {
    expect_error([&] { validate(shape); }, place, reason);
    expect_error([&] { rasterize_roto(std::vector<RotoShape>{shape}, 0, 32, 32); }, place, reason);
  };
  RotoShape s = mask();
  s.keys.clear();
  fails(s, "roto shape 'mask'", "no keys");
  s = mask();
  s.keys[0].vertices.resize(2);
  s.keys[1].vertices.resize(2);
  s.keys[2].vertices.resize(2);
  fails(s, "roto shape 'mask', key 0", "at least 3");
  s = mask();
  s.keys[2].vertices.pop_back();
  fails(s, "roto shape 'mask', key 2", "same count");
  s = mask();
  s.keys[2].time = 1;
  fails(s, "roto shape 'mask', key 2", "increase strictly");
  s = mask();
  s.keys[1].time = 5;
  fails(s, "roto shape 'mask', key 2", "increase strictly");
  s = mask();
  s.keys[1].time = nan;
  fails(s, "roto shape 'mask', key 1", "time is not finite");
  s = mask();
  s.opacity = 1.5;
  fails(s, "roto shape 'mask'", "opacity");
  s.opacity = nan;
  fails(s, "roto shape 'mask'", "opacity");
  s = mask();
  s.blend = RotoBlend(7);
  fails(s, "roto shape 'mask'", "blend");
  // Unnamed: by the index in the list, or plainly on its own.
  s = mask();
  s.name.clear();
  s.keys[0].vertices[0].position.x = nan;
  expect_error(
      [&] {
        rasterize_roto(std::vector<RotoShape>{mask(), s}, 0, 32, 32);
      },
      "roto shape 1, key 0, vertex 0", "not finite");
  expect_error([&] { validate(s); }, "roto shape, key 0, vertex 0", "not finite");
}

TEST(RotoErrors, BadSizesTimesAndOutlinesAreRefused) {
  const RotoShape s = mask();
  for (const auto& [w, h] : {std::pair{0, 10}, {10, 0}, {-3, 10}, {16385, 10}, {10, 16385}})
    expect_error([&] { rasterize_roto(s, 0, w, h); }, "roto matte", "outside 1 to 16,384");
  expect_error([&] { rasterize_roto(std::vector<RotoShape>{}, 0, 0, 5); }, "roto matte", "size");
  EXPECT_EQ(sum(rasterize_roto(std::vector<RotoShape>{}, 0, 16384, 1)), 0);
  expect_error([&] { rasterize_roto(s, std::nan(""), 32, 32); }, "roto matte", "time");
  expect_error([&] { rasterize_roto(std::vector<RotoShape>{s}, INFINITY, 32, 32); }, "roto matte",
               "time");
  expect_error([&] { vertices_at(s, std::nan("")); }, "roto shape 'mask'", "time");
  const std::vector<RotoVertex> two{corner(0, 0), corner(5, 5)};
  expect_error([&] { roto_outline(two); }, "roto outline", "at least 3");
}

}  // namespace
}  // namespace kinema::composite
