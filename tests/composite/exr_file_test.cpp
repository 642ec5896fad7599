// EXR in and out: half and float round trips, premultiplied values kept as stored, named passes,
// the colour space recorded and read back, 16-bit PNGs, read_image()/write_image() choosing the
// format, and empty, foreign, truncated, corrupted and oversized files refused with the file named
// and nothing written.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>

#include "kinema/composite/exr_file.h"
#include "kinema/composite/image_file.h"
#include "kinema/core/error.h"
#include "kinema/core/file.h"

namespace kinema::composite {
namespace {

namespace fs = std::filesystem;

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / "kinema_composite_exr_file_test";
  fs::create_directories(dir);
  return dir / name;
}

Image random_image(int width, int height, std::uint32_t seed, float max_value = 4.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> colour(0.0f, max_value), alpha(0.0f, 1.0f);
  Image image(width, height);
  for (Rgba& p : image.pixels) p = premultiply(colour(rng), colour(rng), colour(rng), alpha(rng));
  return image;
}

TEST(ExrFile, FloatRoundTripIsExactIncludingHdrAndPremultipliedValues) {
  const Image image = random_image(37, 23, 1, 100.0f);
  const Image back = decode_exr(encode_exr(image, {ExrPixelType::float32}), "float.exr");
  ASSERT_EQ(back.width, 37);
  ASSERT_EQ(back.height, 23);
  EXPECT_EQ(back.pixels, image.pixels);
}

TEST(ExrFile, HalfRoundTripKeepsElevenSignificantBits) {
  const Image image = random_image(64, 32, 2);
  for (ExrCompression c : {ExrCompression::none, ExrCompression::zip, ExrCompression::piz}) {
    const Image back = decode_exr(encode_exr(image, {ExrPixelType::half, c}), "half.exr");
    for (std::size_t i = 0; i < image.pixels.size(); ++i) {
      const Rgba &a = image.pixels[i], &b = back.pixels[i];
      for (auto [x, y] : {std::pair{a.r, b.r}, {a.g, b.g}, {a.b, b.b}, {a.a, b.a}})
        EXPECT_NEAR(y, x, std::abs(x) * (1.0f / 2048) + 1e-7f);  // half: 2⁻¹¹ relative
    }
  }
}

TEST(ExrFile, ColourSpaceIsRecordedAsLinearRec709) {
  const std::string bytes = encode_exr(Image(4, 3, {0.5f, 0.5f, 0.5f, 1}));
  const ExrInfo info = decode_exr_info(bytes, "info.exr");
  EXPECT_EQ(info.width, 4);
  EXPECT_EQ(info.height, 3);
  EXPECT_EQ(info.color_space, "linear Rec.709");
  EXPECT_EQ(info.channels, (std::vector<std::string>{"A", "B", "G", "R"}));
  EXPECT_FALSE(info.any_float32);
}

TEST(ExrFile, NamedPassesRoundTripWithTheirOwnPixelTypes) {
  const int w = 8, h = 5;
  std::vector<ExrChannel> passes(3);
  passes[0] = {"depth.Z", {}, ExrPixelType::float32};
  passes[1] = {"N.X", {}, ExrPixelType::half};
  passes[2] = {"motion.U", {}, ExrPixelType::float32};
  for (std::size_t c = 0; c < passes.size(); ++c)
    for (int i = 0; i < w * h; ++i) passes[c].values.push_back(float(c) * 100 + float(i) * 0.25f);
  int rw = 0, rh = 0;
  const auto back = decode_exr_channels(encode_exr_channels(w, h, passes), "passes.exr", &rw, &rh);
  EXPECT_EQ(rw, w);
  EXPECT_EQ(rh, h);
  ASSERT_EQ(back.size(), 3u);
  for (const ExrChannel& c : back) {
    const auto it = std::find_if(passes.begin(), passes.end(),
                                 [&](const ExrChannel& p) { return p.name == c.name; });
    ASSERT_NE(it, passes.end()) << c.name;
    EXPECT_EQ(c.pixel_type, it->pixel_type) << c.name;
    EXPECT_EQ(c.values, it->values) << c.name;  // all exactly representable in half too
  }
}

TEST(ExrFile, MatteChannelDefaultsToAlphaAndCanBeNamed) {
  std::vector<ExrChannel> channels = {{"Y", {0.25f, 0.5f}, ExrPixelType::float32},
                                      {"A", {1.0f, 0.75f}, ExrPixelType::float32}};
  const std::string bytes = encode_exr_channels(2, 1, channels);
  EXPECT_EQ(decode_exr_matte(bytes, "m.exr").values, (std::vector<float>{1.0f, 0.75f}));
  EXPECT_EQ(decode_exr_matte(bytes, "m.exr", "Y").values, (std::vector<float>{0.25f, 0.5f}));
  EXPECT_THROW(decode_exr_matte(bytes, "m.exr", "Z"), Error);
  // A Y-only file reads as an opaque grey image.
  const Image grey = decode_exr(encode_exr_channels(2, 1, {channels[0]}), "grey.exr");
  EXPECT_EQ(grey.at(1, 0), (Rgba{0.5f, 0.5f, 0.5f, 1.0f}));
}

TEST(ExrFile, RefusesEmptyForeignTruncatedAndCorruptedFiles) {
  const std::string good = encode_exr(random_image(40, 30, 3));
  auto message = [](const std::string& bytes) {
    try {
      decode_exr(bytes, "shot.exr");
    } catch (const Error& e) {
      EXPECT_EQ(e.file(), "shot.exr");
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message("").find("empty"), std::string::npos);
  EXPECT_NE(message("\x89PNG\r\n\x1a\n....").find("not an OpenEXR"), std::string::npos);
  EXPECT_NE(message(good.substr(0, 6)).find("truncated"), std::string::npos);
  for (std::size_t n : {std::size_t(40), std::size_t(200), good.size() / 2, good.size() - 1})
    EXPECT_NE(message(good.substr(0, n)), "accepted") << n << " bytes";
  std::mt19937 rng(4);
  for (int trial = 0; trial < 40; ++trial) {
    std::string bad = good;
    for (int k = 0; k < 8; ++k) bad[rng() % bad.size()] ^= char(1 + rng() % 255);
    try {
      decode_exr(bad, "fuzz.exr");  // a flip in pixel data may still decode: no crash is the point
    } catch (const Error& e) {
      EXPECT_EQ(e.file(), "fuzz.exr");
    }
  }
}

TEST(ExrFile, RefusesMismatchedChannelsWhenWriting) {
  EXPECT_THROW(encode_exr(Image()), Error);
  EXPECT_THROW(encode_exr_channels(2, 2, {{"Z", {1, 2, 3}, ExrPixelType::float32}}), Error);
  EXPECT_THROW(encode_exr_channels(1, 1, {{"Z", {1}, {}}, {"Z", {2}, {}}}), Error);
  EXPECT_THROW(encode_exr_channels(1, 1, {{"", {1}, {}}}), Error);
}

TEST(PngFile, SixteenBitRoundTripKeepsSixteenBitPrecision) {
  const Image image = random_image(33, 17, 5, 1.0f);
  for (bool linear : {false, true}) {
    const std::string bytes = encode_png(image, {16, linear});
    EXPECT_EQ(static_cast<unsigned char>(bytes[24]), 16);  // IHDR bit depth
    const Image back = decode_png(bytes, "deep.png", linear);
    for (std::size_t i = 0; i < image.pixels.size(); ++i) {
      const Rgba a = unpremultiply(image.pixels[i]), b = unpremultiply(back.pixels[i]);
      EXPECT_NEAR(back.pixels[i].a, image.pixels[i].a, 1.0f / 65535);
      if (image.pixels[i].a < 0.01f) continue;  // colour under near-zero alpha is ill-defined
      EXPECT_NEAR(b.r, a.r, 2e-4f);
      EXPECT_NEAR(b.g, a.g, 2e-4f);
      EXPECT_NEAR(b.b, a.b, 2e-4f);
    }
  }
  Matte matte(3, 2);
  matte.values = {0, 0.1f, 0.2f, 0.5f, 0.999f, 1};
  const fs::path path = scratch("matte16.png");
  write_matte(path.string(), matte, {{16, true}, {}});
  const Matte back = read_matte(path.string());
  for (std::size_t i = 0; i < matte.values.size(); ++i)
    EXPECT_NEAR(back.values[i], matte.values[i], 0.5f / 65535);
  EXPECT_THROW(encode_png(image, {12, false}), Error);
}

TEST(ImageFiles, FormatFollowsTheExtensionWhenWritingAndTheContentWhenReading) {
  const Image image = random_image(6, 4, 6, 1.0f);
  const fs::path exr = scratch("pick.exr"), png = scratch("pick.PNG");
  write_image(exr.string(), image);
  write_image(png.string(), image);
  EXPECT_EQ(read_image_info(exr.string()).format, ImageFormat::exr);
  EXPECT_EQ(read_image_info(png.string()).format, ImageFormat::png);
  EXPECT_EQ(read_image_info(png.string()).color_space, "sRGB");
  EXPECT_EQ(read_image_info(png.string()).sample_type, "8-bit");
  EXPECT_EQ(read_image_info(exr.string()).sample_type, "half");
  // An EXR saved under a .png name still reads as what it is.
  const fs::path misnamed = scratch("misnamed.png");
  fs::copy_file(exr, misnamed, fs::copy_options::overwrite_existing);
  EXPECT_EQ(read_image(misnamed.string()).width, 6);
  EXPECT_THROW(write_image(scratch("x.tif").string(), image), UsageError);
  EXPECT_THROW(image_format_for_path("noextension"), UsageError);
}

TEST(ImageFiles, AFailedWriteLeavesTheOldFileUntouched) {
  const fs::path path = scratch("keep.exr");
  write_image(path.string(), Image(2, 2, {1, 0, 0, 1}));
  const std::string before = read_file(path.string());
  EXPECT_THROW(write_image(path.string(), Image()), Error);
  EXPECT_EQ(read_file(path.string()), before);
}

}  // namespace
}  // namespace kinema::composite
