// Image-based lighting environments (kinema/render/environment.h): the
// direction convention of the equirectangular map, SH9 irradiance against its
// analytic values and brute-force cosine integration, the default sky against
// the fixed lighting it stands in for, the specular chain's energy and blur,
// and .hdr / EXR / PNG loading with its refusals.
#include "kinema/render/environment.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include "kinema/composite/image_file.h"
#include "kinema/core/error.h"
#include "kinema/core/file.h"

namespace kinema {
namespace {

namespace fs = std::filesystem;

constexpr double kPiD = 3.14159265358979323846;

/// E(n) by brute force: Σ L(d) max(n·d, 0) Ω(d) over every texel.
Vec3 brute_force_irradiance(const Environment& e, const Vec3f& n) {
  Vec3 sum;
  for (int y = 0; y < e.height; ++y) {
    const double omega = environment_texel_solid_angle(e, y);
    for (int x = 0; x < e.width; ++x) {
      const double c = dot(environment_texel_direction(e, x, y), n);
      if (c > 0) sum += Vec3(e.at(x, y)) * (c * omega);
    }
  }
  return sum;
}

std::vector<Vec3f> random_normals(int count, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g;
  std::vector<Vec3f> normals;
  while (int(normals.size()) < count) {
    const Vec3f v{g(rng), g(rng), g(rng)};
    if (length(v) > 1e-3f) normals.push_back(normalize(v));
  }
  return normals;
}

/// 1 above the horizon, 0 below.
Environment half_sky(int height) {
  Environment e(2 * height, height);
  for (int y = 0; y < height / 2; ++y)
    for (int x = 0; x < e.width; ++x) e.at(x, y) = Vec3f::one();
  return e;
}

TEST(Environment, DirectionConventionCentreIsMinusZRowZeroIsUp) {
  auto near = [](Vec3f a, Vec3f b) { return length(a - b) < 1e-6f; };
  EXPECT_TRUE(near(environment_direction(0.5f, 0.5f), {0, 0, -1}));
  EXPECT_TRUE(near(environment_direction(0.75f, 0.5f), {1, 0, 0}));
  EXPECT_TRUE(near(environment_direction(0.25f, 0.5f), {-1, 0, 0}));
  EXPECT_TRUE(near(environment_direction(0.0f, 0.5f), {0, 0, 1}));
  EXPECT_TRUE(near(environment_direction(1.0f, 0.5f), {0, 0, 1}));
  EXPECT_TRUE(near(environment_direction(0.3f, 0.0f), {0, 1, 0}));
  EXPECT_TRUE(near(environment_direction(0.3f, 1.0f), {0, -1, 0}));
  // environment_uv inverts it at every texel centre.
  const Environment e(32, 16);
  for (int y = 0; y < e.height; ++y)
    for (int x = 0; x < e.width; ++x) {
      const auto [u, v] = environment_uv(environment_texel_direction(e, x, y) * 3.0f);
      EXPECT_NEAR(u, (x + 0.5f) / e.width, 1e-5f);
      EXPECT_NEAR(v, (y + 0.5f) / e.height, 1e-5f);
    }
}

TEST(Environment, RedTexelsAtTheImageCentreAreSeenTowardsMinusZ) {
  Environment e(64, 32);
  const Vec3f red{1, 0, 0};
  // The image centre is the corner shared by texels (31, 15), (32, 15), (31,
  // 16), (32, 16).
  for (int y : {15, 16})
    for (int x : {31, 32}) e.at(x, y) = red;
  EXPECT_EQ(e.radiance({0, 0, -1}), red);
  EXPECT_EQ(e.radiance({0, 0, -5}), red);  // any length
  EXPECT_EQ(e.radiance({0, 0, 1}), Vec3f{});
  EXPECT_EQ(e.radiance({1, 0, 0}), Vec3f{});
  EXPECT_EQ(e.radiance({0, 1, 0}), Vec3f{});
  EXPECT_EQ(e.radiance({0, 0, 0}), Vec3f{});
  EXPECT_EQ(e.radiance({NAN, 0, -1}), Vec3f{});
  // Half a texel to the right (towards +X) the lookup is half red.
  const Vec3f right = environment_direction(0.5f + 1.0f / 64, 0.5f);
  EXPECT_NEAR(e.radiance(right).x, 0.5f, 1e-4f);
  EXPECT_GT(right.x, 0);
}

TEST(Environment, LookupWrapsAcrossTheSeamAndClampsAtThePoles) {
  Environment e(16, 8);
  for (int x = 0; x < 16; ++x) e.at(x, 0) = {0, 0, 1};  // the top row, blue
  e.at(0, 4) = {2, 2, 2};                               // left edge, just below the horizon
  // The seam (u = 0 = 1) lies midway between column 15 and column 0.
  const Vec3f seam = environment_direction(0.0f, 4.5f / 8);
  EXPECT_NEAR(e.radiance(seam).x, 1.0f, 1e-5f);
  EXPECT_NEAR(e.radiance(environment_direction(0.5f / 16, 4.5f / 8)).x, 2.0f, 1e-5f);
  EXPECT_NEAR(e.radiance(environment_direction(1.0f - 0.25f / 16, 4.5f / 8)).x, 0.5f, 1e-5f);
  EXPECT_EQ(e.radiance({0, 1, 0}), (Vec3f{0, 0, 1}));  // above row 0's centres: clamped
}

TEST(Environment, TexelSolidAnglesCoverTheSphere) {
  const Environment e(40, 20);
  double total = 0;
  for (int y = 0; y < e.height; ++y) total += environment_texel_solid_angle(e, y) * e.width;
  EXPECT_NEAR(total, 4 * kPiD, 1e-4);
  EXPECT_NEAR(mean_radiance(Environment(40, 20, {2, 3, 4})).y, 3.0f, 1e-5f);
}

TEST(Environment, ResampleKeepsMeanRadiance) {
  Environment e(96, 48);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(0, 10);
  for (Vec3f& t : e.texels) t = {u(rng), u(rng), u(rng)};
  for (auto [w, h] : {std::array{20, 10}, std::array{48, 24}, std::array{7, 3}}) {
    const Environment r = resample_environment(e, w, h);
    ASSERT_EQ(r.width, w);
    ASSERT_EQ(r.height, h);
    for (int c = 0; c < 3; ++c)
      EXPECT_NEAR(mean_radiance(r)[c], mean_radiance(e)[c], 1e-4 * mean_radiance(e)[c]);
  }
}

// ---- SH9 irradiance
// -----------------------------------------------------------------------

TEST(Environment, ConstantEnvironmentGivesPiTimesRadianceForEveryNormal) {
  const Vec3f l{0.3f, 1.0f, 2.5f};
  const auto sh = irradiance_sh9(Environment(64, 32, l));
  for (const Vec3f& n : random_normals(200, 1))
    for (int c = 0; c < 3; ++c) EXPECT_NEAR(irradiance(sh, n)[c], kPiD * l[c], 1e-3 * kPiD * l[c]);
  EXPECT_NEAR(irradiance(sh, {0, 7, 0}).y, kPiD,
              1e-3 * kPiD);  // a normal of any length
}

// L = 1 above the horizon (y > 0), 0 below. The projections ∫ Yᵢ L dω over the upper
// hemisphere (y = cos θ, dω = dy dφ; there ∫ dω = 2π, ∫ y dω = π, ∫ x² dω = ∫ y² dω =
// ∫ z² dω = 2π/3, and every integrand odd in x or z vanishes):
//   L₀ = 0.282095 · 2π,   L₁ = 0.488603 · ∫ y dω = 0.488603 · π,
//   L₆ = 0.315392 · (3 ∫ z² dω − ∫ dω) = 0.315392 · (2π − 2π) = 0,
//   L₈ = 0.546274 · (∫ x² dω − ∫ y² dω) = 0,   L₂ = L₃ = L₄ = L₅ = L₇ = 0 (odd in x or z).
// Times Â: c₀ = π L₀ = 2π² · 0.282095 = 5.568328 (= π^{3/2}),
//          c₁ = (2π/3) L₁ = (2π²/3) · 0.488603 = 3.214868 (= π^{3/2}/√3), all others 0.
// So E(n) = c₀ Y₀ + c₁ Y₁(n) = π/2 + (π/2) n.y: E(up) = π, E(down) = 0, E(horizontal) = π/2.
// That is also the exact irradiance of a uniform upper hemisphere (π (1 + cos)/2): the bands the
// order-2 truncation drops (odd l > 1 have Â = 0; even l ≥ 4 have ∫₀¹ P_l = 0) carry nothing
// here, so the truncation error is zero and only the texel quadrature (≈ 1e-5) remains.
TEST(Environment, HalfSkyShCoefficientsMatchTheAnalyticProjection) {
  const auto sh = irradiance_sh9(half_sky(128));
  const std::array<double, 9> expected{5.568328, 3.214868, 0, 0, 0, 0, 0, 0, 0};
  for (std::size_t i = 0; i < 9; ++i)
    for (int c = 0; c < 3; ++c)
      EXPECT_NEAR(sh[i][c], expected[i], 1e-3 * std::max(1.0, expected[i])) << "coefficient " << i;
  EXPECT_NEAR(irradiance(sh, {0, 1, 0}).x, kPiD, 1e-3 * kPiD);
  EXPECT_NEAR(irradiance(sh, {0, -1, 0}).x, 0.0, 1e-3 * kPiD);
  for (const Vec3f n : {Vec3f{1, 0, 0}, Vec3f{0, 0, -1}, Vec3f{0.6f, 0, 0.8f}})
    EXPECT_NEAR(irradiance(sh, n).x, kPiD / 2, 1e-3 * kPiD);
}

// Brute-force ∑ L max(n·d, 0) Ω on the same 256 × 128 texels: its only error is
// the quadrature of the kink where the horizon meets the terminator, well under
// 0.5 % of π.
TEST(Environment, HalfSkyIrradianceMatchesBruteForceCosineIntegration) {
  const Environment e = half_sky(128);
  const auto sh = irradiance_sh9(e);
  for (const Vec3f& n : random_normals(40, 2)) {
    const double exact = kPiD / 2 * (1 + n.y);
    EXPECT_NEAR(brute_force_irradiance(e, n).x, exact, 5e-3 * kPiD);
    EXPECT_NEAR(irradiance(sh, n).x, brute_force_irradiance(e, n).x, 5e-3 * kPiD);
  }
}

// A 3 × 3 texel patch of radiance L around s acts as a point light of intensity
// L · Ω: its SH9 irradiance is L Ω g(n·s) with the order-2 clamped cosine
//   g(t) = Σ_{l≤2} (2l+1)/(4π) Â_l P_l(t) = 1/4 + t/2 + (5/32)(3t² − 1),
// which differs from max(t, 0) by at most 0.094 (at t = 0; 0.0625 at t = ±1).
TEST(Environment, SmallBrightPatchActsLikeAPointLight) {
  Environment e(256, 128);
  const int cx = 170, cy = 40;
  double omega = 0;
  Vec3 centroid;
  for (int y = cy - 1; y <= cy + 1; ++y)
    for (int x = cx - 1; x <= cx + 1; ++x) {
      e.at(x, y) = {1000, 500, 250};
      omega += environment_texel_solid_angle(e, y);
      centroid +=
          Vec3(environment_texel_direction(e, x, y)) * double(environment_texel_solid_angle(e, y));
    }
  const Vec3f s = normalize(Vec3f(centroid));
  const auto sh = irradiance_sh9(e);
  for (const Vec3f& n : random_normals(100, 3)) {
    const double t = dot(n, s);
    const double g = 0.25 + t / 2 + 5.0 / 32 * (3 * t * t - 1);
    const double e_n = irradiance(sh, n).x;
    EXPECT_NEAR(e_n, 1000 * omega * g, 0.01 * 1000 * omega);
    EXPECT_NEAR(e_n, 1000 * omega * std::max(t, 0.0), 0.1 * 1000 * omega);
    EXPECT_NEAR(brute_force_irradiance(e, n).x, 1000 * omega * std::max(t, 0.0),
                0.01 * 1000 * omega);
  }
  EXPECT_NEAR(irradiance(sh, s).y / irradiance(sh, s).x, 0.5, 1e-5);
}

// ---- the default sky
// ----------------------------------------------------------------------

// kShadeGlsl: a white surface's radiance is 0.55 · mix(ground, sky, ½ n.y + ½)
// + 0.85 · sun · max(n·s, 0); the sky's E/π should give the same.
Vec3 fixed_lighting(const Vec3f& n) {
  const Vec3 sky{0.55, 0.62, 0.75}, ground{0.22, 0.19, 0.16}, sun{1, 0.95, 0.88};
  return lerp(ground, sky, 0.5 * n.y + 0.5) * 0.55 +
         sun * (0.85 * std::max(0.0, double(dot(n, default_sun_direction()))));
}

TEST(Environment, DefaultSkyLightsLikeTheFixedShader) {
  const Environment sky = default_sky();
  EXPECT_EQ(sky.width, 256);
  EXPECT_EQ(sky.height, 128);
  const Vec3f s = default_sun_direction();
  EXPECT_NEAR(length(s), 1.0f, 1e-6f);
  EXPECT_NEAR(s.y / s.x, 0.85f / 0.35f, 1e-4f);
  for (const Vec3f n : {Vec3f{0, 1, 0}, Vec3f{0, -1, 0}}) {
    const Vec3 got = brute_force_irradiance(sky, n) / kPiD, want = fixed_lighting(n);
    for (int c = 0; c < 3; ++c) EXPECT_NEAR(got[c], want[c], 1e-3 * want[c]) << n.y;
  }
  for (const Vec3f n : {s, Vec3f{1, 0, 0}, Vec3f{0, 0, 1}, Vec3f{-1, 0, 0}, Vec3f{0, 0, -1}, -s}) {
    const Vec3 got = brute_force_irradiance(sky, n) / kPiD, want = fixed_lighting(n);
    for (int c = 0; c < 3; ++c) EXPECT_NEAR(got[c], want[c], 0.08 * want[c]);
  }
  // The sun alone: E/π = 0.85 · (1, 0.95, 0.88) on a surface facing it.
  const Vec3 sun =
      (brute_force_irradiance(sky, s) - brute_force_irradiance(default_sky(false), s)) / kPiD;
  EXPECT_NEAR(sun.x, 0.85, 1e-3);
  EXPECT_NEAR(sun.y, 0.85 * 0.95, 1e-3);
  EXPECT_NEAR(sun.z, 0.85 * 0.88, 1e-3);
  EXPECT_GT(sky.radiance(s).x, 100.0f);
  // Looks: a blue zenith, a brighter, paler horizon, brownish ground.
  const Vec3f zenith = sky.radiance({0, 1, 0}), horizon = sky.radiance({-1, 0.02f, 0});
  const Vec3f ground = sky.radiance({0, -1, 0});
  EXPECT_GT(zenith.z, 1.2f * zenith.x);
  EXPECT_GT(horizon.x + horizon.y + horizon.z, 1.2f * (zenith.x + zenith.y + zenith.z));
  EXPECT_LT(horizon.z / horizon.x, zenith.z / zenith.x);
  EXPECT_GT(ground.x, ground.y);
  EXPECT_GT(ground.y, ground.z);
}

// ---- specular prefiltering
// ----------------------------------------------------------------

TEST(Environment, PrefilterKeepsEnergyAtEveryLevelAndLevelZeroIsTheSource) {
  const Environment sky = default_sky();
  const auto chain = prefilter_specular(sky, 5);
  ASSERT_EQ(chain.size(), 5u);
  EXPECT_EQ(chain[0].texels, sky.texels);
  const Vec3f mean = mean_radiance(sky);
  float previous_peak = 1e30f;
  for (std::size_t k = 0; k < chain.size(); ++k) {
    EXPECT_EQ(chain[k].width, 256 >> k);
    EXPECT_EQ(chain[k].height, 128 >> k);
    for (int c = 0; c < 3; ++c) EXPECT_NEAR(mean_radiance(chain[k])[c], mean[c], 0.01 * mean[c]);
    // Blurrier at each level: the sun's peak falls.
    float peak = 0;
    for (const Vec3f& t : chain[k].texels) peak = std::max(peak, t.x);
    EXPECT_LT(peak, previous_peak) << "level " << k;
    previous_peak = peak;
  }
  // Longer chains keep an OpenGL mip chain's sizes down to 1 × 1.
  const auto long_chain = prefilter_specular(sky, 9);
  ASSERT_EQ(long_chain.size(), 9u);
  EXPECT_EQ(long_chain[6].width, 4);
  EXPECT_EQ(long_chain[6].height, 2);
  EXPECT_EQ(long_chain[7].width, 2);
  EXPECT_EQ(long_chain[7].height, 1);
  EXPECT_EQ(long_chain[8].width, 1);
  EXPECT_EQ(long_chain[8].height, 1);
  EXPECT_FLOAT_EQ(specular_level_roughness(0, 5), 0.0f);
  EXPECT_FLOAT_EQ(specular_level_roughness(2, 5), 0.5f);
  EXPECT_FLOAT_EQ(specular_level_roughness(4, 5), 1.0f);
}

TEST(Environment, PrefilterReducesLargeMapsToAtMost512By256) {
  Environment e(1000, 500);
  for (int y = 0; y < e.height; ++y)
    for (int x = 0; x < e.width; ++x)
      e.at(x, y) = {1.0f + float(y % 7), 2.0f + float(x % 5), (x / 50 + y / 50) % 2 ? 8.0f : 0.5f};
  const auto chain = prefilter_specular(e, 3);
  ASSERT_EQ(chain.size(), 3u);
  EXPECT_EQ(chain[0].width, 512);
  EXPECT_EQ(chain[0].height, 256);
  EXPECT_EQ(chain[1].width, 256);
  EXPECT_EQ(chain[2].width, 128);
  for (const Environment& level : chain)
    for (int c = 0; c < 3; ++c)
      EXPECT_NEAR(mean_radiance(level)[c], mean_radiance(e)[c], 0.01 * mean_radiance(e)[c]);
}

TEST(Environment, PrefilterOfAConstantMapIsConstant) {
  const Vec3f l{0.2f, 0.4f, 3.0f};
  for (const Environment& level : prefilter_specular(Environment(64, 32, l), 4))
    for (const Vec3f& t : level.texels)
      for (int c = 0; c < 3; ++c) ASSERT_NEAR(t[c], l[c], 1e-5f * l[c]);
}

// At roughness 1 (α = 1) GGX is constant, so the last level is the cosine
// convolution E(R)/π.
TEST(Environment, RoughestLevelIsTheCosineConvolution) {
  const Environment sky = default_sky();
  const auto chain = prefilter_specular(sky, 5);
  const Environment& rough = chain.back();
  for (int y = 0; y < rough.height; ++y)
    for (int x = 0; x < rough.width; ++x) {
      const Vec3f r = environment_texel_direction(rough, x, y);
      const double want = brute_force_irradiance(sky, r).x / kPiD;
      EXPECT_NEAR(rough.at(x, y).x, want, 0.08 * want + 0.01) << x << ", " << y;
    }
}

// A point-like source spreads, at level k, into the GGX lobe w(c) = c · D(h): its radiance falls
// to half its peak where c (α² / q)² = ½, q = α² + (1 − c)(1 − α²)/2 — 18.3° from the source at
// roughness ½ (α = ¼), where a cosine lobe would reach 60° and α = roughness (a common slip)
// 35.4°.
TEST(Environment, MidRoughnessLevelHasTheGgxLobeWidth) {
  Environment e(256, 128);
  for (int y : {63, 64})
    for (int x : {127, 128}) e.at(x, y) = {1000, 1000, 1000};  // around −Z
  const auto chain = prefilter_specular(e, 5);
  const double alpha = 0.25, a2 = alpha * alpha;
  double lo = 0, hi = 1;  // bisect on c for the half maximum
  for (int i = 0; i < 60; ++i) {
    const double c = 0.5 * (lo + hi), q = a2 + (1 - c) * (1 - a2) / 2;
    (c * (a2 / q) * (a2 / q) > 0.5 ? hi : lo) = c;
  }
  const double expected = std::acos(lo);
  EXPECT_NEAR(expected * 180 / kPiD, 18.27, 0.01);
  const Environment& level = chain[2];
  const float peak = level.radiance({0, 0, -1}).x;
  double half = 0;  // the first angle from −Z towards +X where the level is
                    // below half its peak
  for (double b = 0; b < kPiD / 2; b += 0.001)
    if (level.radiance({float(std::sin(b)), 0, float(-std::cos(b))}).x < 0.5f * peak) {
      half = b;
      break;
    }
  EXPECT_NEAR(half, expected, 0.1 * expected) << half * 180 / kPiD << "°";
}

TEST(Environment, PrefilterRefusesEmptyMapsAndBadLevelCounts) {
  EXPECT_THROW(prefilter_specular(Environment{}, 3), UsageError);
  EXPECT_THROW(prefilter_specular(Environment(8, 4), 0), UsageError);
  EXPECT_THROW(prefilter_specular(Environment(8, 4), 17), UsageError);
  EXPECT_EQ(prefilter_specular(Environment(8, 4, {1, 1, 1}), 1).size(), 1u);
}

// ---- files
// ------------------------------------------------------------------------------------

class EnvironmentFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kinema_environment_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string write(const std::string& name, const std::string& bytes) {
    const std::string path = (dir_ / name).string();
    write_file_atomically(path, bytes);
    return path;
  }
  /// The kinema::Error load_environment throws for `path` (fails the test when
  /// none is thrown).
  Error error_of(const std::string& path) {
    try {
      load_environment(path);
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
      return e;
    }
    ADD_FAILURE() << "no kinema::Error for " << path;
    return Error("", "", "");
  }
  fs::path dir_;
};

std::string bytes(std::initializer_list<int> values) {
  std::string s;
  for (int v : values) s.push_back(static_cast<char>(v));
  return s;
}

const std::string kHeader =
    "#?RADIANCE\n# written by hand\nFORMAT=32-bit_rle_rgbe\nEXPOSURE=1.0\n\n-Y "
    "4 +X 8\n";

// Scanline 0: new-style RLE. R: a run of 8 × 128; G: 8 literals 1 … 8; B: a run
// of 4 × 16 then the literals 32 … 35; E: a run of 8 × 129.
const std::string kRow0 = bytes(
    {2, 2, 0, 8, 0x88, 128, 8, 1, 2, 3, 4, 5, 6, 7, 8, 0x84, 16, 4, 32, 33, 34, 35, 0x88, 129});
// Scanline 1: flat, (r, g, b, e) a pixel; pixel 5 has e = 0 (black whatever its
// mantissas).
const std::string kRow1 =
    bytes({1,   200, 7, 135, 31, 180, 7, 136, 61,  160, 7, 137, 91,  140, 7, 135,
           121, 120, 7, 136, 9,  9,   9, 0,   181, 80,  7, 135, 211, 60,  7, 136});
// Scanline 2: RLE. R: literals 255, 0 then 6 × 64; G: 8 × 0; B: 3 × 1, 5 × 2;
// E: 2 × 0, 6 × 144.
const std::string kRow2 =
    bytes({2, 2, 0, 8, 2, 255, 0, 0x86, 64, 0x88, 0, 0x83, 1, 0x85, 2, 0x82, 0, 0x86, 144});
// Scanline 3: flat, (100, 50, 25, 140) then Radiance's old-style repeat (1, 1,
// 1, 6): six more of it, then a black pixel.
const std::string kRow3 = bytes({100, 50, 25, 140, 1, 1, 1, 6, 0, 0, 0, 0});

Vec3f rgbe(int r, int g, int b, int e) {
  if (e == 0) return {};
  const float f = std::ldexp(1.0f, e - 136);
  return {r * f, g * f, b * f};
}

TEST_F(EnvironmentFile, HdrRoundTripReadsExactRgbeValues) {
  const Environment e =
      load_environment(write("probe.hdr", kHeader + kRow0 + kRow1 + kRow2 + kRow3));
  ASSERT_EQ(e.width, 8);
  ASSERT_EQ(e.height, 4);
  const int b0[8] = {16, 16, 16, 16, 32, 33, 34, 35};
  for (int x = 0; x < 8; ++x) EXPECT_EQ(e.at(x, 0), rgbe(128, x + 1, b0[x], 129)) << x;
  EXPECT_EQ(e.at(0, 0), (Vec3f{1.0f, 1.0f / 128, 16.0f / 128}));
  for (int x = 0; x < 8; ++x) {
    const auto* p = reinterpret_cast<const std::uint8_t*>(kRow1.data()) + 4 * x;
    EXPECT_EQ(e.at(x, 1), rgbe(p[0], p[1], p[2], p[3])) << x;
  }
  EXPECT_EQ(e.at(5, 1), Vec3f{});
  EXPECT_EQ(e.at(1, 1), (Vec3f{31, 180, 7}));  // e = 136: the mantissas themselves
  const int r2[8] = {255, 0, 64, 64, 64, 64, 64, 64}, b2[8] = {1, 1, 1, 2, 2, 2, 2, 2};
  for (int x = 0; x < 8; ++x) EXPECT_EQ(e.at(x, 2), rgbe(r2[x], 0, b2[x], x < 2 ? 0 : 144)) << x;
  for (int x = 0; x < 7; ++x) EXPECT_EQ(e.at(x, 3), (Vec3f{1600, 800, 400})) << x;
  EXPECT_EQ(e.at(7, 3), Vec3f{});
  // The same bytes from memory, and with the other magic line.
  EXPECT_EQ(decode_hdr("#?RGBE" + kHeader.substr(10) + kRow0 + kRow1 + kRow2 + kRow3, "mem").texels,
            e.texels);
}

TEST_F(EnvironmentFile, TruncatedHdrIsRefusedAtItsScanline) {
  const std::string whole = kHeader + kRow0 + kRow1 + kRow2 + kRow3;
  for (std::size_t cut : {kHeader.size() + kRow0.size() + kRow1.size() + 7,
                          kHeader.size() + kRow0.size() + kRow1.size() + 1}) {
    const std::string path = write("cut.hdr", whole.substr(0, cut));
    const Error e = error_of(path);
    EXPECT_EQ(e.place().rfind("scanline 2", 0), 0u) << e.what();
    EXPECT_NE(e.reason().find("truncated"), std::string::npos) << e.what();
  }
  const Error last = error_of(write("short.hdr", whole.substr(0, whole.size() - 3)));
  EXPECT_EQ(last.place().rfind("scanline 3", 0), 0u) << last.what();
  // A run that overruns its scanline is malformed, not truncated.
  std::string overrun = kRow0;
  overrun[4] = static_cast<char>(0x89);  // a run of 9 in an 8-pixel scanline
  const Error bad = error_of(write("overrun.hdr", kHeader + overrun + kRow1 + kRow2 + kRow3));
  EXPECT_EQ(bad.place(), "scanline 0, byte " + std::to_string(kHeader.size() + 4));
}

TEST_F(EnvironmentFile, WrongHdrHeadersAreRefused) {
  const std::string pixels = kRow0 + kRow1 + kRow2 + kRow3;
  EXPECT_EQ(error_of(write("junk.hdr", "#?JUNK\n\n-Y 4 +X 8\n" + pixels)).place(), "line 1");
  EXPECT_EQ(error_of(write("nomagic.hdr", "RADIANCE\n\n-Y 4 +X 8\n" + pixels)).place(), "line 1");
  const Error xyze =
      error_of(write("xyze.hdr", "#?RADIANCE\nFORMAT=32-bit_rle_xyze\n\n-Y 4 +X 8\n" + pixels));
  EXPECT_NE(xyze.reason().find("XYZE"), std::string::npos);
  EXPECT_EQ(xyze.place(), "line 2");
  const Error flipped = error_of(write("flipped.hdr", "#?RADIANCE\n\n+Y 4 +X 8\n" + pixels));
  EXPECT_NE(flipped.reason().find("orientation"), std::string::npos);
  EXPECT_EQ(error_of(write("nores.hdr", "#?RADIANCE\n\nwhatever\n" + pixels)).place(), "line 3");
  EXPECT_NE(error_of(write("noend.hdr", "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n"))
                .reason()
                .find("truncated"),
            std::string::npos);
  const Error huge = error_of(write("huge.hdr", "#?RADIANCE\n\n-Y 10000 +X 20000\n"));
  EXPECT_NE(huge.reason().find("16,384"), std::string::npos);
  EXPECT_EQ(error_of(write("neither.bin", "GIF89a")).place(), "byte 0");
}

TEST_F(EnvironmentFile, MapsThatAreNotTwoToOneAreRefused) {
  std::string square = "#?RADIANCE\n\n-Y 8 +X 8\n";
  for (int y = 0; y < 8; ++y) square += kRow3;
  EXPECT_NE(error_of(write("square.hdr", square)).reason().find("twice"), std::string::npos);
  const std::string png = (dir_ / "square.png").string();
  composite::write_image(png, composite::Image(10, 10, {0.5f, 0.5f, 0.5f, 1}));
  EXPECT_NE(error_of(png).reason().find("twice"), std::string::npos);
  // ± 1 pixel is accepted.
  const std::string odd = (dir_ / "odd.png").string();
  composite::write_image(odd, composite::Image(17, 8, {0.5f, 0.5f, 0.5f, 1}));
  EXPECT_EQ(load_environment(odd).width, 17);
}

TEST_F(EnvironmentFile, MissingFileIsRefusedWithItsName) {
  const Error e = error_of((dir_ / "no_such_probe.hdr").string());
  EXPECT_EQ(e.file(), (dir_ / "no_such_probe.hdr").string());
}

TEST_F(EnvironmentFile, ExrIsLoadedAsStored) {
  composite::Image image(64, 32);
  for (int y = 0; y < 32; ++y)
    for (int x = 0; x < 64; ++x) image.at(x, y) = {x / 64.0f, y / 32.0f, 5.0f + x, 1.0f};
  const std::string path = (dir_ / "probe.exr").string();
  composite::ImageWriteOptions options;
  options.exr.pixel_type = composite::ExrPixelType::float32;
  composite::write_image(path, image, options);
  const Environment e = load_environment(path);
  ASSERT_EQ(e.width, 64);
  ASSERT_EQ(e.height, 32);
  for (int y = 0; y < 32; ++y)
    for (int x = 0; x < 64; ++x)
      ASSERT_EQ(e.at(x, y), (Vec3f{x / 64.0f, y / 32.0f, 5.0f + x})) << x << ", " << y;
}

TEST_F(EnvironmentFile, NegativeOrNonFiniteRadianceIsRefused) {
  composite::Image image(64, 32, {1, 1, 1, 1});
  image.at(3, 2) = {-0.5f, 1, 1, 1};
  const std::string path = (dir_ / "negative.exr").string();
  composite::write_image(path, image);
  EXPECT_EQ(error_of(path).place(), "pixel (3, 2)");
  composite::Image nan(8, 4, {1, 1, 1, 1});
  nan.at(7, 1).g = NAN;
  try {
    environment_from_image(nan, "in memory");
    ADD_FAILURE() << "a NaN pixel was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.place(), "pixel (7, 1)");
    EXPECT_EQ(e.file(), "in memory");
  }
}

TEST_F(EnvironmentFile, PngIsDecodedFromSrgbToLinear) {
  const std::string path = (dir_ / "probe.png").string();
  composite::write_image(path, composite::Image(16, 8, {0.5f, 0.25f, 0.04f, 1}));
  const Environment e = load_environment(path);
  ASSERT_EQ(e.width, 16);
  EXPECT_NEAR(e.at(3, 3).x, 0.5f,
              0.01f);  // 8-bit sRGB codes: well under 1 % apart here
  EXPECT_NEAR(e.at(3, 3).y, 0.25f, 0.005f);
  EXPECT_NEAR(e.at(3, 3).z, 0.04f, 0.002f);
}

}  // namespace
}  // namespace kinema
