// Vertex animation textures: half floats, the worked sizing (docs/worked_examples.md), baking a
// real skinned clip, the file round trip and corrupted files.
#include "kinema/skin/vat.h"

#include <gtest/gtest.h>

#include <unistd.h>
#include <bit>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kinema/clip/clip.h"
#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/skeleton/skeleton.h"
#include "kinema/skin/skinning.h"
#include "test_paths.h"

namespace kinema {
namespace {

const std::string kData = test_paths::data_dir();

// ---- half floats ------------------------------------------------------------------------------

TEST(Half, ExactValuesAndRoundToNearestEven) {
  EXPECT_EQ(float_to_half(0.0f), 0x0000);
  EXPECT_EQ(float_to_half(-0.0f), 0x8000);
  EXPECT_EQ(float_to_half(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half(-2.0f), 0xc000);
  EXPECT_EQ(float_to_half(0.5f), 0x3800);
  EXPECT_EQ(float_to_half(65504.0f), 0x7bff);
  // 1 + 2⁻¹¹ is halfway between 1 and 1 + 2⁻¹⁰: ties to the even 1.0.
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  // 1 + 3·2⁻¹¹ is halfway between 1 + 2⁻¹⁰ (odd) and 1 + 2⁻⁹ (even): up.
  EXPECT_EQ(float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)), 0x3c01);
  EXPECT_EQ(float_to_half(2047.5f), float_to_half(2048.0f));  // tie at spacing 1 → even 2048
}

TEST(Half, OverflowAndSpecials) {
  EXPECT_EQ(float_to_half(65519.0f), 0x7bff);  // below the halfway point → 65504
  EXPECT_EQ(float_to_half(65520.0f), 0x7c00);  // halfway to 65536 → even → infinity
  EXPECT_EQ(float_to_half(1e6f), 0x7c00);
  EXPECT_EQ(float_to_half(-1e30f), 0xfc00);
  EXPECT_EQ(float_to_half(std::numeric_limits<float>::infinity()), 0x7c00);
  const uint16_t nan = float_to_half(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(nan & 0x7c00, 0x7c00);
  EXPECT_NE(nan & 0x03ff, 0);
  EXPECT_TRUE(std::isnan(half_to_float(nan)));
  // A signalling NaN whose payload lives only in the low bits must not become infinity.
  const float snan = std::bit_cast<float>(0x7f800001u);
  EXPECT_TRUE(std::isnan(half_to_float(float_to_half(snan))));
  EXPECT_TRUE(std::isinf(half_to_float(0x7c00)));
}

TEST(Half, DenormalsAndUnderflow) {
  const float tiny = std::ldexp(1.0f, -24);  // smallest half subnormal
  EXPECT_EQ(float_to_half(tiny), 0x0001);
  EXPECT_EQ(half_to_float(0x0001), tiny);
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -25)), 0x0000);         // tie → even 0
  EXPECT_EQ(float_to_half(1.5f * std::ldexp(1.0f, -25)), 0x0001);  // above the tie
  EXPECT_EQ(float_to_half(3 * std::ldexp(1.0f, -25)), 0x0002);     // 1.5 units: tie → even 2
  EXPECT_EQ(float_to_half(-std::ldexp(1.0f, -26)), 0x8000);
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -14)), 0x0400);     // smallest normal
  EXPECT_EQ(float_to_half(std::ldexp(1023.0f, -24)), 0x03ff);  // largest subnormal
  EXPECT_EQ(float_to_half(std::ldexp(1023.5f, -24)), 0x0400);  // rounds up into the normals
  EXPECT_EQ(float_to_half(std::numeric_limits<float>::denorm_min()), 0x0000);
}

TEST(Half, EveryHalfRoundTripsAndRandomFloatsRoundToTheNearest) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = half_to_float(uint16_t(h));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(half_to_float(float_to_half(f))));
      continue;
    }
    ASSERT_EQ(float_to_half(f), h) << std::hex << h;
  }
  std::mt19937 rng(1);
  std::uniform_int_distribution<uint32_t> bits(0, 0xffffffffu);
  for (int i = 0; i < 200000; ++i) {
    const float f = std::bit_cast<float>(bits(rng) & 0xc7ffffffu);  // |f| < 2¹⁷ mostly
    if (!std::isfinite(f) || std::fabs(f) >= 65504.0f) continue;
    const uint16_t h = float_to_half(f);
    const double got = half_to_float(h);
    const double err = std::fabs(got - double(f));
    // No neighbour of h is closer (next larger and smaller magnitude).
    for (int step : {-1, 1}) {
      const int nb = int(h & 0x7fff) + step;
      if (nb < 0 || nb >= 0x7c00) continue;
      const double other = half_to_float(uint16_t((h & 0x8000) | nb));
      ASSERT_LE(err, std::fabs(other - double(f))) << f;
    }
  }
}

// ---- sizing and synthetic bakes ---------------------------------------------------------------

/// One joint translating along +x at 1 m/s, a strip of `vertices` vertices bound to it, and an
/// optional morph target moving every vertex up by 0.1 m with weight ramping 0 → 1.
Asset strip_asset(size_t vertices, double duration, bool morph = false) {
  Asset a;
  Joint root;
  root.name = "root";
  a.skeleton = Skeleton::build({root});
  Clip clip;
  clip.name = "slide";
  clip.duration = duration;
  clip.tracks.resize(1);
  clip.tracks[0].translation.times = {0.0, duration};
  clip.tracks[0].translation.values = {Vec3{0, 0, 0}, Vec3{duration, 0, 0}};
  Mesh m;
  m.name = "strip";
  m.skin = 0;
  m.influences = 4;
  for (size_t i = 0; i < vertices; ++i) {
    m.positions.push_back({float(i) * 0.001f, 1.0f, 0.0f});
    m.joints.insert(m.joints.end(), {0, 0, 0, 0});
    m.weights.insert(m.weights.end(), {1.0f, 0.0f, 0.0f, 0.0f});
  }
  if (morph) {
    m.morph_targets.push_back({"up", std::vector<Vec3f>(vertices, Vec3f{0, 0.1f, 0}), {}});
    m.default_weights = {0.0};
    MorphTrack t;
    t.mesh = 0;
    t.target_count = 1;
    t.times = {0.0, duration};
    t.values = {0.0, 1.0};
    clip.morph_tracks.push_back(t);
  }
  a.clips.push_back(clip);
  a.meshes.push_back(m);
  a.skins.push_back({"skin", {0}, {Mat4::identity()}, 0});
  return a;
}

TEST(Vat, TwoThousandVerticesSixtyFramesIs960000Bytes) {
  EXPECT_EQ(vat_data_bytes(2000, 60), 960000u);
  VatBakeOptions o;
  o.fps = 30;
  const VatBake bake = bake_vat(strip_asset(2000, 59.0 / 30.0), o);  // 60 frames
  EXPECT_EQ(bake.vertex_count, 2000u);
  EXPECT_EQ(bake.frame_count, 60u);
  EXPECT_EQ(bake.data_bytes(), 960000u);
  EXPECT_EQ(bake.texels.size() * sizeof(uint16_t), 960000u);
  EXPECT_LT(bake.data_bytes(), 1000000u);  // "under 1 MB"
}

TEST(Vat, SyntheticSlideIsExactWhereHalvesAre) {
  VatBakeOptions o;
  o.fps = 4;
  o.encoding = VatEncoding::Absolute;
  const VatBake bake = bake_vat(strip_asset(3, 1.0, true), o);
  ASSERT_EQ(bake.frame_count, 5u);
  for (uint32_t f = 0; f < 5; ++f) {
    const float t = float(f) / 4.0f;
    // x = t + 0.001·i, y = 1 + 0.1·t (morph ramp), z = 0.
    for (uint32_t v = 0; v < 3; ++v) {
      const Vec3f p = bake.position(f, v);
      EXPECT_NEAR(p.x, t + 0.001f * float(v), 5e-4f);
      EXPECT_NEAR(p.y, 1.0f + 0.1f * t, 5e-4f);
      EXPECT_EQ(p.z, 0.0f);
    }
    EXPECT_EQ(bake.texels[size_t(f) * 12 + 3], 0x3c00);  // A = 1
  }
  EXPECT_EQ(bake.origin, (Vec3f{0, 0, 0}));
  EXPECT_NEAR(bake.bounds_max.x, 1.002f, 1e-6f);
  EXPECT_NEAR(bake.bounds_max.y, 1.1f, 1e-6f);
  VatBakeOptions no_morph = o;
  no_morph.morphs = false;
  EXPECT_NEAR(bake_vat(strip_asset(3, 1.0, true), no_morph).position(4, 0).y, 1.0f, 5e-4f);
}

// ---- a real skinned clip ----------------------------------------------------------------------

TEST(Vat, RiggedFigureMatchesIndependentSkinningWithinTheMeasuredError) {
  const Asset a = load_asset(kData + "/gltf/RiggedFigure.glb");
  const VatBake bake = bake_vat(a);
  ASSERT_EQ(bake.meshes.size(), 1u);
  EXPECT_EQ(bake.vertex_count, a.meshes[0].vertex_count());
  EXPECT_EQ(bake.fps, 30.0);  // no nominal rate in the file → 30
  EXPECT_EQ(bake.frame_count, uint32_t(std::round(a.clips[0].duration * 30)) + 1);
  // Half floats near 1 m have a spacing of 2⁻¹⁰ m ≈ 1 mm; centring halves the magnitudes.
  std::printf("RiggedFigure VAT: %u vertices × %u frames, max error %.3f mm, rms %.3f mm\n",
              bake.vertex_count, bake.frame_count, bake.max_error_m * 1e3, bake.rms_error_m * 1e3);
  EXPECT_GT(bake.max_error_m, 0.0);
  EXPECT_LT(bake.max_error_m, 5e-4);
  EXPECT_LE(bake.rms_error_m, bake.max_error_m);
  // Recompute two frames with the skinning API directly.
  const Mesh& mesh = a.meshes[0];
  const Skin& skin = a.skins[size_t(mesh.skin)];
  std::vector<Affine3x4f> palette(skin.joints.size());
  std::vector<Vec3f> out(mesh.vertex_count());
  double worst = 0, moved = 0;
  for (uint32_t f : {0u, bake.frame_count / 2, bake.frame_count - 1}) {
    const double t = std::min(f / bake.fps, a.clips[0].duration);
    const std::vector<Mat4> model = sample_model_pose(a.clips[0], a.skeleton, t);
    ASSERT_TRUE(skinning_palette(model, skin.joints, skin.inverse_bind, palette));
    ASSERT_TRUE(skin_lbs({mesh.positions, {}, {}, mesh.influences, mesh.joints, mesh.weights},
                         palette, {out, {}, {}}));
    for (uint32_t v = 0; v < bake.vertex_count; ++v) {
      worst = std::max(worst, double(distance(bake.position(f, v), out[v])));
      if (f == bake.frame_count / 2)
        moved = std::max(moved, double(distance(out[v], bake.position(0, v))));
    }
  }
  EXPECT_LE(worst, bake.max_error_m + 1e-6);
  EXPECT_GT(moved, 0.05);  // the clip really moves the mesh
}

TEST(Vat, DqsAndEncodingsOnTheRealClip) {
  const Asset a = load_asset(kData + "/gltf/RiggedFigure.glb");
  VatBakeOptions o;
  const VatBake lbs = bake_vat(a, o);
  o.skinning = VatSkinning::Dqs;
  const VatBake dqs = bake_vat(a, o);
  EXPECT_LT(dqs.max_error_m, 5e-4);
  double diff = 0;
  for (uint32_t v = 0; v < lbs.vertex_count; ++v)
    diff = std::max(diff, double(distance(lbs.position(lbs.frame_count / 2, v),
                                          dqs.position(dqs.frame_count / 2, v))));
  EXPECT_GT(diff, 1e-3);  // the methods differ at bent joints
  o.skinning = VatSkinning::Lbs;
  o.encoding = VatEncoding::Absolute;
  const VatBake absolute = bake_vat(a, o);
  EXPECT_GE(absolute.max_error_m, lbs.max_error_m);  // centring never loses precision here
  EXPECT_NEAR(lbs.origin.y, 0.5f * (lbs.bounds_min.y + lbs.bounds_max.y), 1e-6f);
  o.fps = 10;
  EXPECT_EQ(bake_vat(a, o).frame_count, uint32_t(std::round(a.clips[0].duration * 10)) + 1);
}

TEST(Vat, BakeRejectsBadInput) {
  EXPECT_THROW(bake_vat(load_asset(kData + "/gltf/AnimatedMorphCube.glb")), Error);  // no skin
  EXPECT_THROW(bake_vat(load_asset(kData + "/vrm/Godette_vrm_v4.vrm")), Error);      // no clip
  const Asset a = load_asset(kData + "/gltf/RiggedFigure.glb");
  VatBakeOptions o;
  o.clip = 3;
  EXPECT_THROW(bake_vat(a, o), Error);
  o = {};
  o.fps = -1;
  EXPECT_THROW(bake_vat(a, o), Error);
  o.fps = std::numeric_limits<double>::infinity();
  EXPECT_THROW(bake_vat(a, o), Error);
  Asset bad = a;
  bad.meshes[0].weights[0] = 5.0f;  // weights no longer sum to 1
  EXPECT_THROW(bake_vat(bad, {}, "bad.glb"), Error);
}

// ---- files ------------------------------------------------------------------------------------

class VatFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("kinema_vat_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
            std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    if (!HasFailure()) std::filesystem::remove_all(dir_);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::filesystem::path dir_;
};

TEST_F(VatFileTest, WriteThenReadGivesTheSameTexture) {
  const VatBake bake = bake_vat(load_asset(kData + "/gltf/RiggedFigure.glb"));
  const VatFiles files = write_vat(bake, path("figure.json"));
  EXPECT_EQ(files.texture_path, path("figure.dds"));
  EXPECT_EQ(files.texture_bytes, kVatDdsHeaderBytes + bake.data_bytes());
  EXPECT_EQ(std::filesystem::file_size(files.texture_path), files.texture_bytes);
  const std::string dds = read_file(files.texture_path);
  EXPECT_EQ(dds.substr(0, 4), "DDS ");
  const VatBake back = read_vat(files.json_path);
  EXPECT_EQ(back.texels, bake.texels);
  EXPECT_EQ(back.vertex_count, bake.vertex_count);
  EXPECT_EQ(back.frame_count, bake.frame_count);
  EXPECT_EQ(back.fps, bake.fps);
  EXPECT_EQ(back.clip, bake.clip);
  EXPECT_EQ(back.origin, bake.origin);
  EXPECT_EQ(back.bounds_min, bake.bounds_min);
  EXPECT_EQ(back.meshes.size(), 1u);
  EXPECT_EQ(back.meshes[0].vertex_count, bake.vertex_count);
  EXPECT_EQ(back.max_error_m, bake.max_error_m);
  EXPECT_EQ(back.position(3, 7), bake.position(3, 7));
  // No temporary files left behind.
  size_t entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir_)) ++entries;
  EXPECT_EQ(entries, 2u);
}

TEST_F(VatFileTest, CorruptedOrTruncatedFilesThrow) {
  VatBakeOptions o;
  o.fps = 5;
  const VatBake bake = bake_vat(strip_asset(10, 1.0), o);
  const VatFiles files = write_vat(bake, path("v.json"));
  const std::string json = read_file(files.json_path), dds = read_file(files.texture_path);
  auto expect_error = [&](const std::string& json_text, const std::string& dds_bytes,
                          const std::string& what) {
    std::ofstream(files.json_path, std::ios::binary) << json_text;
    std::ofstream(files.texture_path, std::ios::binary) << dds_bytes;
    EXPECT_THROW(read_vat(files.json_path), Error) << what;
  };
  expect_error(json, dds.substr(0, dds.size() - 1), "truncated texture");
  expect_error(json, dds.substr(0, 60), "truncated header");
  expect_error(json, dds + "x", "trailing byte");
  std::string bad = dds;
  bad[0] = 'X';
  expect_error(json, bad, "magic");
  bad = dds;
  bad[84] = 0x71 + 1;
  expect_error(json, bad, "FourCC");
  bad = dds;
  bad[16] = char(bad[16] + 1);
  expect_error(json, bad, "width");
  bad = dds;
  bad[kVatDdsHeaderBytes + 8 * 3 + 1] = char(0x7c);  // an infinite R
  bad[kVatDdsHeaderBytes + 8 * 3] = 0;
  expect_error(json, bad, "infinite texel");
  bad = dds;
  bad[kVatDdsHeaderBytes + 6] = 0;  // A of texel 0 no longer 1
  bad[kVatDdsHeaderBytes + 7] = 0;
  expect_error(json, bad, "alpha");
  auto replace = [&](std::string s, const std::string& from, const std::string& to) {
    const size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) s.replace(at, from.size(), to);
    return s;
  };
  expect_error(replace(json, "\"version\": 1", "\"version\": 2"), dds, "version");
  expect_error(replace(json, "kinema-vat", "other"), dds, "format");
  expect_error(replace(json, "\"frame_count\": 6", "\"frame_count\": 7"), dds, "frame count");
  expect_error(replace(json, "\"vertex_count\": 10", "\"vertex_count\": 0"), dds, "zero vertices");
  expect_error(replace(json, "v.dds", "../v.dds"), dds, "texture path");
  expect_error(replace(json, "v.dds", "missing.dds"), dds, "missing texture");
  expect_error(json.substr(0, json.size() / 2), dds, "truncated JSON");
  expect_error(replace(json, "\"fps\"", "\"fpz\""), dds, "missing fps");
  expect_error(replace(json, "\"first_vertex\": 0", "\"first_vertex\": 5"), dds, "mesh range");
  // And the intact pair still reads.
  std::ofstream(files.json_path, std::ios::binary) << json;
  std::ofstream(files.texture_path, std::ios::binary) << dds;
  EXPECT_NO_THROW(read_vat(files.json_path));
}

TEST_F(VatFileTest, WriteRejectsInconsistentBakesAndDdsNames) {
  VatBake bake = bake_vat(strip_asset(4, 0.5));
  EXPECT_THROW(write_vat(bake, path("v.dds")), Error);
  bake.texels.pop_back();
  EXPECT_THROW(write_vat(bake, path("v.json")), Error);
  EXPECT_FALSE(std::filesystem::exists(path("v.json")));
  EXPECT_FALSE(std::filesystem::exists(path("v.dds")));
  EXPECT_THROW(write_vat(bake_vat(strip_asset(4, 0.5)), path("no/such/dir/v.json")), Error);
}

}  // namespace
}  // namespace kinema
