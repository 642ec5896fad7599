// Volume rendering checks (kinema/render/volume.h), on the CPU alone: a slab's opacity is
// Beer–Lambert's, the light's transmittance through a slab is too, an empty volume and a volume
// hidden behind a surface change nothing, fire brightens with its temperature and its flame, the
// lit side of a smoke ball is the brighter, the threads do not change a bit, bad input is refused.
#include <gtest/gtest.h>
#include <tbb/task_arena.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kinema/core/error.h"
#include "kinema/render/volume.h"

namespace kinema {
namespace {

/// nx × ny × nz voxels of `h` metres centred on the origin, every density `d`.
DenseVolume uniform_volume(int nx, int ny, int nz, float h, float d) {
  DenseVolume v;
  v.nx = nx;
  v.ny = ny;
  v.nz = nz;
  v.voxel_size = h;
  v.origin = Vec3f{float(1 - nx), float(1 - ny), float(1 - nz)} * (0.5f * h);
  v.density.assign(v.voxels(), d);
  return v;
}

Camera front_camera(float distance, float fov = 20) {
  Camera c;
  c.eye = {0, 0, distance};
  c.target = {0, 0, 0};
  c.fov_y_degrees = fov;
  c.near_plane = 0.05f;
  return c;
}

const float* px(const VolumeImage& im, int x, int y) {
  return &im.rgba[(size_t(y) * size_t(im.width) + size_t(x)) * 4];
}

float luminance(const float* p) { return 0.2126f * p[0] + 0.7152f * p[1] + 0.0722f * p[2]; }

TEST(Volume, SlabSeenHeadOnHasBeerLambertAlpha) {
  // 2 m × 2 m, 0.2 m thick, density 2, σ_t = 3 /m: α = 1 − e^(−1.2) at the image centre.
  const float d = 2, sigma = 3, thickness = 0.2f;
  const DenseVolume slab = uniform_volume(40, 40, 4, 0.05f, d);
  const float expected = 1 - std::exp(-sigma * d * thickness);
  for (const float step : {0.5f, 1.3f, 0.07f}) {
    VolumeShading s;
    s.extinction = sigma;
    s.step = step;
    const VolumeImage im = render_volume(slab, s, front_camera(3), 32, 24);
    for (const auto& [x, y] : {std::pair{15, 11}, {16, 12}, {15, 12}, {16, 11}})
      EXPECT_NEAR(px(im, x, y)[3], expected, 1e-3) << "step " << step << " pixel " << x << "," << y;
    EXPECT_GT(luminance(px(im, 16, 12)), 0.0f);  // it scatters light
  }
}

TEST(Volume, LightTransmittanceThroughASlabIsBeerLambert) {
  const float d = 1.5f, sigma = 2, h = 0.1f;
  const DenseVolume v = uniform_volume(12, 10, 12, h, d);
  VolumeShading s;
  s.extinction = sigma;
  s.light_direction = {0, 2, 0};  // straight down from above: the top face is ½ voxel from row 9
  const std::vector<float> t = light_transmittance(v, s);
  for (int j = 0; j < v.ny; ++j) {
    const size_t at = size_t(5) + size_t(v.nx) * (size_t(j) + size_t(v.ny) * 5);
    EXPECT_NEAR(t[at], std::exp(-sigma * d * h * (float(v.ny - j) - 0.5f)), 1e-5) << "row " << j;
  }
  // At 45° in x–y, far from the +x face, the light leaves through the top: √2 × as far.
  s.light_direction = {1, 1, 0};
  const std::vector<float> t45 = light_transmittance(v, s);
  for (int j = 0; j < v.ny; ++j) {
    const size_t at = size_t(0) + size_t(v.nx) * (size_t(j) + size_t(v.ny) * 5);
    const float path = (float(v.ny - j) - 0.5f) * h * std::sqrt(2.0f);
    EXPECT_NEAR(t45[at], std::exp(-sigma * d * path), 1e-5) << "row " << j;
  }
}

TEST(Volume, EmptyVolumeLeavesTheFrameBitForBit) {
  DenseVolume v = uniform_volume(16, 16, 16, 0.05f, 0);
  v.temperature.assign(v.voxels(), 300);  // too cold to glow
  VolumeShading s;
  s.emission.mode = VolumeEmission::Mode::Blackbody;
  const VolumeImage im = render_volume(v, s, front_camera(2, 35), 40, 30);
  for (const float c : im.rgba) ASSERT_EQ(c, 0.0f);
  Image frame(40, 30);
  std::mt19937 rng(7);
  for (uint8_t& b : frame.rgba) b = uint8_t(rng() & 0xff);
  const Image before = frame;
  composite_volume(frame, im);
  EXPECT_EQ(frame.rgba, before.rgba);
}

TEST(Volume, VolumeBehindAnOpaqueSurfaceAddsNothingThere) {
  const DenseVolume v = uniform_volume(20, 20, 20, 0.05f, 4);  // a 1 m cube, 2.5 m away
  const int w = 40, h = 30;
  std::vector<float> depth(size_t(w) * size_t(h), std::numeric_limits<float>::infinity());
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w / 2; ++x) depth[size_t(y) * size_t(w) + size_t(x)] = 1.5f;  // a wall
  const VolumeImage im = render_volume(v, {}, front_camera(3, 35), w, h, depth);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w / 2; ++x)
      for (int c = 0; c < 4; ++c) ASSERT_EQ(px(im, x, y)[c], 0.0f) << x << "," << y;
  EXPECT_GT(px(im, 3 * w / 4 - 4, h / 2)[3],
            0.99f);  // the right half sees the cube
  // A surface inside the cube cuts the ray short: less opacity than without it.
  std::vector<float> inside(size_t(w) * size_t(h), 2.52f);
  const VolumeImage cut = render_volume(v, {}, front_camera(3, 35), w, h, inside);
  EXPECT_NEAR(px(cut, w / 2, h / 2)[3], 1 - std::exp(-5.0f * 4 * 0.02f), 2e-3);
  // The frame keeps its bytes behind the wall.
  Image frame(w, h);
  for (uint8_t& b : frame.rgba) b = 200;
  composite_volume(frame, im);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w / 2; ++x)
      for (int c = 0; c < 4; ++c) ASSERT_EQ(frame.pixel(x, y)[c], 200);
  EXPECT_NE(frame.pixel(3 * w / 4 - 4, h / 2)[0], 200);
}

TEST(Volume, FireBrightensWithTemperatureAndFlame) {
  DenseVolume v = uniform_volume(10, 10, 10, 0.03f, 0);  // emission alone, nothing absorbs
  VolumeShading s;
  s.emission.mode = VolumeEmission::Mode::Blackbody;
  float previous = 0;
  for (const float kelvin : {700.0f, 1000.0f, 1400.0f, 1900.0f, 2600.0f}) {
    v.temperature.assign(v.voxels(), kelvin);
    const VolumeImage im = render_volume(v, s, front_camera(1.5f), 16, 12);
    const float* p = px(im, 8, 6);
    EXPECT_EQ(p[3], 0.0f);  // emission only: nothing is hidden
    const float y = luminance(p);
    if (kelvin < s.emission.min_kelvin)
      EXPECT_EQ(y, 0.0f);
    else
      EXPECT_GT(y, previous) << kelvin << " K";
    if (kelvin > 1000) {
      EXPECT_GT(p[0], p[2]) << "a fire is redder than it is blue";
    }
    previous = y;
  }
  // Emission per metre times the 0.3 m path, at the reference temperature (1500 K).
  v.temperature.assign(v.voxels(), 1500);
  const VolumeImage ref = render_volume(v, s, front_camera(1.5f), 16, 12);
  const float m = s.emission.min_kelvin / 1500;
  EXPECT_NEAR(luminance(px(ref, 8, 6)), 10 * 0.3f * (1 - m * m * m * m), 2e-3);
  // The flame ramp: more flame, more light.
  s.emission.mode = VolumeEmission::Mode::Flame;
  v.temperature.clear();
  previous = 0;
  for (const float f : {0.1f, 0.3f, 0.6f, 0.9f}) {
    v.flame.assign(v.voxels(), f);
    const float y = luminance(px(render_volume(v, s, front_camera(1.5f), 16, 12), 8, 6));
    EXPECT_GT(y, previous) << "flame " << f;
    previous = y;
  }
}

TEST(Volume, BlackbodyColourRunsFromRedToBlue) {
  const Vec3f warm = blackbody_colour(1500), white = blackbody_colour(6500),
              blue = blackbody_colour(12000);
  EXPECT_GT(warm.x, warm.y);
  EXPECT_GT(warm.y, warm.z);
  EXPECT_NEAR(white.x, white.z, 0.08f);  // D65 is near 6500 K
  EXPECT_NEAR(white.y, 1.0f, 0.05f);
  EXPECT_GT(blue.z, blue.x);
  for (const Vec3f& c : {warm, white, blue})
    EXPECT_NEAR(0.2126f * c.x + 0.7152f * c.y + 0.0722f * c.z, 1.0f, 0.1f);
}

/// A ball of smoke, radius 0.4 m, on a 32³ grid of 3 cm voxels.
DenseVolume smoke_ball() {
  DenseVolume v = uniform_volume(32, 32, 32, 0.03f, 0);
  for (int k = 0; k < v.nz; ++k)
    for (int j = 0; j < v.ny; ++j)
      for (int i = 0; i < v.nx; ++i) {
        const Vec3f p = v.origin + Vec3f{float(i), float(j), float(k)} * v.voxel_size;
        if (length(p) < 0.4f) v.density[size_t(i) + 32 * (size_t(j) + 32 * size_t(k))] = 3;
      }
  return v;
}

TEST(Volume, LitSideOfASmokeBallIsBrighter) {
  const DenseVolume v = smoke_ball();
  VolumeShading s;
  s.light_direction = {1, 0, 0};  // lit from +x: the right of the image
  s.ambient = {0, 0, 0};          // the key light alone
  const VolumeImage im = render_volume(v, s, front_camera(3.5f), 64, 48);
  double left = 0, right = 0;
  int n = 0;
  for (int y = 18; y < 30; ++y)
    for (int dx = 4; dx < 12; ++dx) {
      left += luminance(px(im, 32 - 1 - dx, y));
      right += luminance(px(im, 32 + dx, y));
      ++n;
      EXPECT_GT(px(im, 32 + dx, y)[3], 0.5f);
    }
  EXPECT_GT(right, 5 * left) << "lit " << right / n << ", shadowed " << left / n;
  // And its light transmittance falls from the lit side to the other.
  const std::vector<float> t = light_transmittance(v, s);
  const size_t row = 32 * (16 + 32 * 16);
  EXPECT_GT(t[row + 28], 0.5f);
  EXPECT_LT(t[row + 4], 0.01f);
}

TEST(Volume, OneAndTwoThreadsGiveTheSameBits) {
  DenseVolume v = smoke_ball();
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> noise(0, 1);
  v.temperature.resize(v.voxels());
  for (size_t i = 0; i < v.voxels(); ++i) {
    v.density[i] *= noise(rng);
    v.temperature[i] = 600 + 1500 * noise(rng);
  }
  VolumeShading s;
  s.emission.mode = VolumeEmission::Mode::Blackbody;
  s.anisotropy = 0.4f;
  s.light_direction = {0.3f, 0.9f, -0.2f};
  const Camera cam = front_camera(2.5f, 30);
  VolumeImage one, two;
  tbb::task_arena(1).execute([&] { one = render_volume(v, s, cam, 48, 36); });
  tbb::task_arena(2).execute([&] { two = render_volume(v, s, cam, 48, 36); });
  ASSERT_EQ(one.rgba.size(), two.rgba.size());
  EXPECT_EQ(one.rgba, two.rgba);
  double alpha = 0;
  for (size_t i = 3; i < one.rgba.size(); i += 4) alpha += one.rgba[i];
  EXPECT_GT(alpha, 10.0);  // it drew something
}

TEST(Volume, BadInputIsRefused) {
  const DenseVolume ok = uniform_volume(4, 4, 4, 0.1f, 1);
  VolumeShading nan;
  nan.extinction = std::numeric_limits<float>::quiet_NaN();
  EXPECT_THROW(render_volume(ok, nan, front_camera(2), 8, 8), Error);
  VolumeShading step;
  step.step = 0;
  EXPECT_THROW(validate_volume_shading(step, "smoke.vdb"), Error);
  try {
    validate_volume_shading(nan, "smoke.vdb");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.file(), "smoke.vdb");
    EXPECT_EQ(e.place(), "volume extinction");
  }
  DenseVolume short_field = ok;
  short_field.density.pop_back();
  EXPECT_THROW(render_volume(short_field, {}, front_camera(2), 8, 8), Error);
  DenseVolume inf = ok;
  inf.density[5] = std::numeric_limits<float>::infinity();
  EXPECT_THROW(validate_volume(inf, "x.vdb"), Error);
  EXPECT_THROW(render_volume(ok, {}, front_camera(2), 8, 8, std::vector<float>(3, 1.0f)), Error);
  EXPECT_THROW(render_volume(ok, {}, front_camera(2), 0, 8), Error);
  Image frame(8, 8);
  EXPECT_THROW(composite_volume(frame, render_volume(ok, {}, front_camera(2), 4, 8)), Error);
}

}  // namespace
}  // namespace kinema
