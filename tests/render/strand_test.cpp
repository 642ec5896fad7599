// Strands: line segments drawn as camera-facing ribbons land where the camera projects them, at
// their width in metres (never under a pixel), in their colour (one, or per vertex), hidden
// behind meshes; bad ones are refused naming the element.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "kinema/character/asset.h"
#include "kinema/core/error.h"
#include "kinema/render/renderer.h"
#include "kinema/skeleton/skeleton.h"
#include "render/render_fixture.h"

namespace kinema {
namespace {

using test::is_background;
using test::wall;

constexpr int kW = 320, kH = 240;

std::pair<int, int> pixel_of(const Vec3f& p) {
  float x = 0, y = 0;
  EXPECT_TRUE(project_to_pixel(Camera{}, kW, kH, p, x, y));
  return {int(std::floor(x)), int(std::floor(y))};
}

// Pixels per metre at `depth` metres in front of the default camera.
float pixels_per_metre(float depth) {
  return 0.5f * kH / std::tan(0.5f * Camera{}.fov_y_degrees * std::numbers::pi_v<float> / 180.0f) /
         depth;
}

bool reddish(const Image& im, std::pair<int, int> at) {
  const uint8_t* p = im.pixel(at.first, at.second);
  return p[0] > 80 && p[0] > 2 * p[1] && p[0] > 2 * p[2];
}
bool bluish(const Image& im, std::pair<int, int> at) {
  const uint8_t* p = im.pixel(at.first, at.second);
  return p[2] > 80 && p[2] > 2 * p[0] && p[2] > 2 * p[1];
}

class StrandsDraw : public test::RenderTest {
 protected:
  // One horizontal polyline of three points across the image at y = 1.2, z = `z`, red.
  std::vector<Vec3f> positions(float z) {
    return {{-0.6f, 1.2f, z}, {0, 1.2f, z}, {0.6f, 1.2f, z}};
  }
  std::vector<std::array<uint32_t, 2>> segments{{0, 1}, {1, 2}};
  Image draw(std::span<const Vec3f> points, float width, std::span<const Vec3f> colours = {},
             std::span<const Mat4> pose = {}) {
    DrawOptions d;
    d.ground = false;
    d.strands.positions = points;
    d.strands.segments = segments;
    d.strands.colours = colours;
    d.strands.colour = {1, 0, 0};
    d.strands.width = width;
    return renderer(kW, kH).render(pose, Camera{}, d);
  }
};

TEST_F(StrandsDraw, LandWhereProjectedAtTheirWidthInMetres) {
  const std::vector<Vec3f> p = positions(0);
  const Image im = draw(p, 0.2f);
  const float half = 0.5f * 0.2f * pixels_per_metre(4);  // 4 m from the eye
  ASSERT_GT(half, 5);
  for (const float x : {-0.5f, -0.25f, 0.0f, 0.3f, 0.55f}) {
    const auto [px, py] = pixel_of({x, 1.2f, 0});
    EXPECT_TRUE(reddish(im, {px, py})) << x;
    EXPECT_TRUE(reddish(im, {px, py - int(half) + 2})) << x;
    EXPECT_TRUE(reddish(im, {px, py + int(half) - 2})) << x;
    EXPECT_TRUE(is_background(im, px, py - int(half) - 3)) << x;
    EXPECT_TRUE(is_background(im, px, py + int(half) + 3)) << x;
  }
  // Past the ends: nothing.
  const auto [lx, ly] = pixel_of({-0.7f, 1.2f, 0});
  EXPECT_TRUE(is_background(im, lx, ly));
  const auto [rx, ry] = pixel_of({0.7f, 1.2f, 0});
  EXPECT_TRUE(is_background(im, rx, ry));
}

TEST_F(StrandsDraw, AHairThinnerThanAPixelStillShows) {
  const std::vector<Vec3f> p = positions(0);
  const Image im = draw(p, 1e-5f);
  int drawn = 0;
  const auto [px, py] = pixel_of({0.3f, 1.2f, 0});
  for (int y = py - 2; y <= py + 2; ++y) drawn += !is_background(im, px, y);
  EXPECT_GE(drawn, 1);
  EXPECT_LE(drawn, 3);
}

TEST_F(StrandsDraw, PerVertexColoursBlendAlongTheSegments) {
  const std::vector<Vec3f> p = positions(0);
  const std::vector<Vec3f> colours = {{1, 0, 0}, {1, 0, 0}, {0, 0, 1}};
  const Image im = draw(p, 0.05f, colours);
  EXPECT_TRUE(reddish(im, pixel_of({-0.4f, 1.2f, 0})));
  EXPECT_TRUE(bluish(im, pixel_of({0.55f, 1.2f, 0})));
}

TEST_F(StrandsDraw, HiddenBehindAMeshShownInFrontOfIt) {
  renderer(kW, kH).set_asset(wall());
  const std::vector<Mat4> pose = {Mat4::identity()};
  DrawOptions bare;
  bare.ground = false;
  const Image wall_only = renderer_->render(pose, Camera{}, bare);
  const std::vector<Vec3f> behind = positions(-0.5f), in_front = positions(0.5f);
  const Image hidden = draw(behind, 0.05f, {}, pose);
  const Image shown = draw(in_front, 0.05f, {}, pose);
  for (const float x : {-0.4f, 0.0f, 0.4f}) {
    const auto at = pixel_of({x, 1.2f, 0});
    ASSERT_FALSE(is_background(wall_only, at.first, at.second));
    const uint8_t* w = wall_only.pixel(at.first, at.second);
    const uint8_t* h = hidden.pixel(at.first, at.second);
    EXPECT_EQ(std::vector<uint8_t>(w, w + 4), std::vector<uint8_t>(h, h + 4)) << x;
    EXPECT_TRUE(reddish(shown, pixel_of({x, 1.2f, 0.5f}))) << x;
  }
}

TEST_F(StrandsDraw, TheSameFrameTwiceGivesTheSameBytes) {
  const std::vector<Vec3f> p = positions(0);
  EXPECT_EQ(draw(p, 0.01f).rgba, draw(p, 0.01f).rgba);
}

TEST_F(StrandsDraw, BadStrandsAreRefusedNamingTheElement) {
  const auto refused = [&](const Strands& s, const std::string& place, const std::string& why) {
    DrawOptions d;
    d.strands = s;
    try {
      renderer(kW, kH).render({}, Camera{}, d);
      ADD_FAILURE() << "accepted: expected " << place;
    } catch (const Error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find(place), std::string::npos) << m;
      EXPECT_NE(m.find(why), std::string::npos) << m;
    }
  };
  std::vector<Vec3f> p = positions(0);
  Strands s;
  s.positions = p;
  const std::vector<std::array<uint32_t, 2>> past = {{0, 1}, {1, 3}};
  s.segments = past;
  refused(s, "strand segment 1", "vertex index 3 is out of range (3 vertices)");
  s.segments = segments;
  p[2].y = std::nanf("");
  refused(s, "strand vertex 2", "not finite");
  p[2].y = 1.2f;
  const std::vector<Vec3f> two = {{1, 0, 0}, {1, 0, 0}};
  s.colours = two;
  refused(s, "strands", "2 colours for 3 vertices");
  const std::vector<Vec3f> negative = {{1, 0, 0}, {1, -1, 0}, {1, 0, 0}};
  s.colours = negative;
  refused(s, "strand vertex 1", "colour is negative");
  s.colours = {};
  s.width = 0;
  refused(s, "strands", "width");
  s.width = std::numeric_limits<float>::infinity();
  refused(s, "strands", "width");
  s.width = 0.01f;
  s.min_width_pixels = -1;
  refused(s, "strands", "minimum width");
  s.min_width_pixels = 1;
  s.colour = {0, std::nanf(""), 0};
  refused(s, "strands", "colour is not finite");
  s.colour = {1, 0, 0};
  DrawOptions ok;
  ok.strands = s;
  EXPECT_NO_THROW(renderer(kW, kH).render({}, Camera{}, ok));
}

}  // namespace
}  // namespace kinema
