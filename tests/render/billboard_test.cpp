// Billboards: particles drawn as round sprites land where the camera projects them, at the size
// in metres, in their colour and opacity (alpha "over", back to front, or additive), hidden behind
// meshes but not by one another; a cache's dead particles are not drawn; bad ones are refused.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "kinema/character/asset.h"
#include "kinema/composite/image_file.h"
#include "kinema/core/error.h"
#include "kinema/pipeline/render.h"
#include "kinema/render/renderer.h"
#include "kinema/skeleton/skeleton.h"
#include "render/render_fixture.h"

namespace kinema {
namespace {

using test::is_background;
using test::wall;

constexpr int kW = 320, kH = 240;

Camera front_camera() {
  Camera c;  // from (0, 1, 4) towards (0, 1, 0)
  return c;
}

DrawOptions no_ground(std::span<const Billboard> billboards,
                      BillboardBlend blend = BillboardBlend::Alpha) {
  DrawOptions d;
  d.ground = false;
  d.billboards = billboards;
  d.billboard_blend = blend;
  return d;
}

// The pixel under world point p.
std::pair<int, int> pixel_of(const Vec3f& p) {
  float x = 0, y = 0;
  EXPECT_TRUE(project_to_pixel(front_camera(), kW, kH, p, x, y));
  return {int(std::floor(x)), int(std::floor(y))};
}

// Radius in pixels of a billboard `size` metres wide at `depth` metres in front of the camera.
float pixel_radius(float size, float depth) {
  const float focal =
      0.5f * kH /
      std::tan(0.5f * front_camera().fov_y_degrees * std::numbers::pi_v<float> / 180.0f);
  return 0.5f * size * focal / depth;
}

void expect_rgb(const Image& im, std::pair<int, int> at, int r, int g, int b, int tolerance = 1) {
  const uint8_t* p = im.pixel(at.first, at.second);
  EXPECT_NEAR(p[0], r, tolerance) << "at " << at.first << ", " << at.second;
  EXPECT_NEAR(p[1], g, tolerance) << "at " << at.first << ", " << at.second;
  EXPECT_NEAR(p[2], b, tolerance) << "at " << at.first << ", " << at.second;
  EXPECT_EQ(p[3], 255);
}

class Billboards : public test::RenderTest {};

TEST_F(Billboards, LandWhereProjectedAtTheirSizeInMetres) {
  const Billboard b{{0.3f, 1.2f, 0}, 0.2f, {1, 0, 0}, 1};
  const Image im = renderer(kW, kH).render({}, front_camera(), no_ground({&b, 1}));
  const auto centre = pixel_of(b.position);
  expect_rgb(im, centre, 255, 0, 0);        // opaque inside 40 % of the radius, linear 1 → 255
  const float r = pixel_radius(b.size, 4);  // 9.5 px
  ASSERT_GT(r, 6);
  // Round: inside 30 % of the radius every way is fully red; beyond 115 % is background.
  for (int k = 0; k < 8; ++k) {
    const float a = float(k) * std::numbers::pi_v<float> / 4;
    const int ix = int(std::floor(float(centre.first) + 0.5f + 0.3f * r * std::cos(a)));
    const int iy = int(std::floor(float(centre.second) + 0.5f + 0.3f * r * std::sin(a)));
    expect_rgb(im, {ix, iy}, 255, 0, 0);
    const int ox = int(std::floor(float(centre.first) + 0.5f + 1.15f * r * std::cos(a)));
    const int oy = int(std::floor(float(centre.second) + 0.5f + 1.15f * r * std::sin(a)));
    EXPECT_TRUE(is_background(im, ox, oy)) << ox << ", " << oy;
  }
  // Everything else is background: count the red pixels ≈ the disc's area (soft edge included).
  int coloured = 0;
  for (int y = 0; y < kH; ++y)
    for (int x = 0; x < kW; ++x) coloured += !is_background(im, x, y);
  const float area = std::numbers::pi_v<float> * r * r;
  EXPECT_GT(coloured, 0.7f * area);
  EXPECT_LT(coloured, 1.25f * area);
}

TEST_F(Billboards, OpacityBlendsOverTheBackgroundAndAdditiveAddsInLinearLight) {
  // The target is sRGB: blending works on decoded values, the result is encoded again.
  const auto decode = [](int encoded) { return composite::srgb_to_linear(float(encoded) / 255); };
  const auto encode = [](float linear) {
    return int(std::lround(composite::linear_to_srgb(linear) * 255.0f));
  };
  // Background (204, 214, 227). Half-opaque blue: halfway to (0, 0, 1) in linear light.
  const Billboard blue{{0, 1, 0}, 0.3f, {0, 0, 1}, 0.5f};
  const Image over = renderer(kW, kH).render({}, front_camera(), no_ground({&blue, 1}));
  EXPECT_EQ(encode(0.5f * decode(204)), 149);  // not 102, the encoded values' mean
  expect_rgb(over, pixel_of(blue.position), encode(0.5f * decode(204)), encode(0.5f * decode(214)),
             encode(0.5f + 0.5f * decode(227)), 2);
  // Additive: linear 0.01 red is 25.5 encoded, added to the background's 204 (linear 0.604).
  const Billboard dim{{0, 1, 0}, 0.3f, {0.01f, 0, 0}, 1};
  const Image added =
      renderer().render({}, front_camera(), no_ground({&dim, 1}, BillboardBlend::Additive));
  expect_rgb(added, pixel_of(dim.position), encode(decode(204) + 0.01f), 214, 227, 2);
  const Image alpha = renderer().render({}, front_camera(), no_ground({&dim, 1}));
  expect_rgb(alpha, pixel_of(dim.position), encode(0.01f), 0, 0, 2);
}

TEST_F(Billboards, AlphaBlendingDrawsTheFarthestFirstWhateverTheOrder) {
  // A red sprite in front of a blue one on the same line of sight: red shows, whichever comes
  // first in the list (they write no depth, so only the sort decides).
  const Vec3f eye = front_camera().eye;
  const Vec3f near_p{0.2f, 1.1f, 1}, far_p = eye + (near_p - eye) * 2.0f;
  const std::vector<Billboard> near_first = {{near_p, 0.1f, {1, 0, 0}, 1},
                                             {far_p, 0.3f, {0, 0, 1}, 1}};
  const std::vector<Billboard> far_first = {near_first[1], near_first[0]};
  const Image a = renderer(kW, kH).render({}, front_camera(), no_ground(near_first));
  const Image b = renderer().render({}, front_camera(), no_ground(far_first));
  expect_rgb(a, pixel_of(near_p), 255, 0, 0);
  EXPECT_EQ(a.rgba, b.rgba);
  // Additive: the sum, whatever the order too.
  const Image c =
      renderer().render({}, front_camera(), no_ground(near_first, BillboardBlend::Additive));
  expect_rgb(c, pixel_of(near_p), 255, 214, 255);
}

TEST_F(Billboards, AreHiddenBehindAMeshAndShowInFrontOfIt) {
  const Asset a = wall();
  Renderer& r = renderer(kW, kH);
  r.set_asset(a);
  const std::vector<Mat4> pose = {Mat4::identity()};
  const Image bare = r.render(pose, front_camera(), no_ground({}));
  const Billboard behind{{0, 1, -0.3f}, 0.3f, {1, 0, 0}, 1};
  const Billboard front{{0, 1, 0.3f}, 0.3f, {1, 0, 0}, 1};
  const Image hidden = r.render(pose, front_camera(), no_ground({&behind, 1}));
  EXPECT_FALSE(is_background(bare, kW / 2, kH / 2));  // the wall fills the middle
  EXPECT_EQ(hidden.rgba, bare.rgba) << "a sprite behind the wall must not show";
  const Image shown = r.render(pose, front_camera(), no_ground({&front, 1}));
  expect_rgb(shown, pixel_of(front.position), 255, 0, 0);
}

TEST_F(Billboards, ThousandsInOneInstancedDrawAllShow) {
  // 50 × 38 sprites 5 px wide, 6 px apart, on a plane facing the camera: every one is drawn.
  std::vector<Billboard> grid;
  const float depth = 4, step_px = 6;
  const float metres_per_px = 0.5f / pixel_radius(1, depth);  // a 1 m sprite's radius, inverted
  for (int j = 0; j < 38; ++j)
    for (int i = 0; i < 50; ++i) {
      const float x = (float(i) - 24.5f) * step_px * metres_per_px;
      const float y = 1 + (float(j) - 18.5f) * step_px * metres_per_px;
      grid.push_back({{x, y, 0}, 5 * metres_per_px, {0, float(i % 2), float(j % 2)}, 1});
    }
  const Image im = renderer(kW, kH).render({}, front_camera(), no_ground(grid));
  int drawn = 0;
  for (const Billboard& b : grid) {
    const auto [x, y] = pixel_of(b.position);
    const uint8_t* p = im.pixel(x, y);
    drawn += std::abs(p[0] - 0) < 24 && std::abs(p[1] - int(255 * b.colour.y)) < 24 &&
             std::abs(p[2] - int(255 * b.colour.z)) < 24;
  }
  EXPECT_EQ(drawn, int(grid.size()));
}

TEST_F(Billboards, BadOnesAreRefusedByIndex) {
  Renderer& r = renderer(kW, kH);
  const float nan = std::nanf("");
  const std::vector<Billboard> bad = {{{nan, 0, 0}, 0.1f, {1, 1, 1}, 1},
                                      {{0, 0, 0}, 0, {1, 1, 1}, 1},
                                      {{0, 0, 0}, 0.1f, {1, 1, 1}, 1.5f},
                                      {{0, 0, 0}, 0.1f, {-1, 1, 1}, 1},
                                      {{0, 0, 0}, 0.1f, {1, nan, 1}, 1}};
  for (const Billboard& b : bad) {
    const std::vector<Billboard> list = {{{0, 1, 0}, 0.1f, {1, 1, 1}, 1}, b};
    try {
      r.render({}, front_camera(), no_ground(list));
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("billboard 1"), std::string::npos) << e.what();
    }
  }
}

// ---- a particle cache's billboards -------------------------------------------------------------

pipeline::ParticleCacheFile three_points() {
  pipeline::ParticleCacheFile f;
  f.path = "three.pc2";
  f.cache.points = 3;
  for (int s = 0; s < 3; ++s)
    for (int p = 0; p < 3; ++p) f.cache.positions.push_back({float(p) - 1, 1, 0});
  ParticleSidecar sc;
  sc.frames_per_second = 10;
  sc.frame_times = {0, 0.1, 0.2};
  sc.size = {{0, 1}, {1, 3}};       // grows to 3× over its life
  sc.colour[0] = {{0, 1}, {1, 0}};  // red → black
  sc.opacity = {{0.5f}, {0.25f}};
  sc.points = {{0, 2, 0, 0.2}, {1, 1, 0.1, 1}, {2, 2, 0.2, 0.4}};
  f.sidecar = sc;
  return f;
}

TEST(ParticleBillboards, OnlyTheLivingAtTheirAgesSizeColourAndOpacity) {
  const pipeline::ParticleCacheFile f = three_points();
  std::vector<Billboard> out;
  pipeline::particle_billboards(f, 0, 0.1f, out);
  ASSERT_EQ(out.size(), 1u);  // points 1 and 2 are not born yet
  EXPECT_FLOAT_EQ(out[0].position.x, -1);
  EXPECT_FLOAT_EQ(out[0].size, 0.1f);
  EXPECT_FLOAT_EQ(out[0].colour.x, 1);
  out.clear();
  pipeline::particle_billboards(f, 2, 0.1f, out);
  ASSERT_EQ(out.size(), 2u);  // point 1 has died
  EXPECT_FLOAT_EQ(out[0].position.x, -1);
  EXPECT_FLOAT_EQ(out[0].size, 0.3f);  // u = 1
  EXPECT_FLOAT_EQ(out[0].colour.x, 0);
  EXPECT_FLOAT_EQ(out[1].position.x, 1);  // born at 0.2 s: u = 0
  EXPECT_FLOAT_EQ(out[1].size, 0.1f);
  EXPECT_FLOAT_EQ(out[1].opacity, 0.25f);
  // Without the sidecar every point is drawn, in the default colour.
  pipeline::ParticleCacheFile bare = f;
  bare.sidecar.reset();
  out.clear();
  pipeline::particle_billboards(bare, 0, 0.1f, out);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[2].colour.y, pipeline::kDefaultParticleColour.y);
  EXPECT_EQ(bare.samples_per_second(), 30);
  EXPECT_EQ(f.samples_per_second(), 10);
  EXPECT_EQ(f.sample_at(0.14), 1);
  EXPECT_EQ(f.sample_at(99), 2);
}

TEST_F(Billboards, DeadParticlesAreNotDrawn) {
  const pipeline::ParticleCacheFile f = three_points();
  std::vector<Billboard> out;
  pipeline::particle_billboards(f, 2, 0.2f, out);
  const Image im = renderer(kW, kH).render({}, front_camera(), no_ground(out));
  EXPECT_FALSE(is_background(im, pixel_of({-1, 1, 0}).first, pixel_of({-1, 1, 0}).second));
  EXPECT_TRUE(is_background(im, pixel_of({0, 1, 0}).first, pixel_of({0, 1, 0}).second));
  EXPECT_FALSE(is_background(im, pixel_of({1, 1, 0}).first, pixel_of({1, 1, 0}).second));
}

}  // namespace
}  // namespace kinema
