// PNG in and out of premultiplied linear images: round trips within 8-bit sRGB rounding, alpha
// premultiplied on the way in and divided out on the way out, 16-bit and grey files, mattes from
// alpha or grey, and empty, foreign, truncated and hostile files refused with the file named.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>

#include "kinema/composite/image_file.h"
#include "kinema/core/error.h"
#include "kinema/core/file.h"

namespace kinema::composite {
namespace {

namespace fs = std::filesystem;

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / "kinema_composite_image_file_test";
  fs::create_directories(dir);
  return dir / name;
}

std::uint32_t crc32(const std::string& bytes) {
  std::uint32_t c = 0xFFFFFFFFu;
  for (unsigned char b : bytes) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  }
  return ~c;
}

std::string be32(std::uint32_t v) { return {char(v >> 24), char(v >> 16), char(v >> 8), char(v)}; }

std::string chunk(const std::string& type, const std::string& data) {
  return be32(std::uint32_t(data.size())) + type + data + be32(crc32(type + data));
}

/// A 16-bit grey PNG of one row, its data in a stored (uncompressed) zlib block.
std::string grey16_png(const std::vector<std::uint16_t>& row) {
  std::string raw(1, '\0');  // filter type 0
  for (std::uint16_t v : row) raw += char(v >> 8), raw += char(v & 0xFF);
  std::uint32_t a = 1, b = 0;
  for (unsigned char c : raw) a = (a + c) % 65521, b = (b + a) % 65521;
  const auto n = std::uint16_t(raw.size());
  std::string zlib = {char(0x78),
                      char(0x01),
                      char(0x01),
                      char(n & 0xFF),
                      char(n >> 8),
                      char(~n & 0xFF),
                      char((~n >> 8) & 0xFF)};
  zlib += raw + be32((b << 16) | a);
  const std::string header =
      be32(std::uint32_t(row.size())) + be32(1) + std::string{16, 0, 0, 0, 0};
  return std::string("\x89PNG\r\n\x1a\n", 8) + chunk("IHDR", header) + chunk("IDAT", zlib) +
         chunk("IEND", "");
}

TEST(ImageFile, SrgbCurveRoundTripsAndMatchesItsKnownPoints) {
  EXPECT_NEAR(srgb_to_linear(0.5f), 0.21404f, 1e-5f);
  EXPECT_NEAR(linear_to_srgb(0.18f), 0.46135f, 1e-5f);
  for (int i = 0; i <= 255; ++i) {
    const float v = float(i) / 255;
    EXPECT_NEAR(linear_to_srgb(srgb_to_linear(v)), v, 1e-5f) << i;
  }
}

TEST(ImageFile, RoundTripKeepsPixelsWithinEightBitRounding) {
  Image image(3, 2);
  image.at(0, 0) = premultiply(0.8f, 0.6f, 0.5f, 1);
  image.at(1, 0) = premultiply(0.18f, 0.18f, 0.18f, 0.5f);  // half covered
  image.at(2, 0) = {};                                      // transparent
  image.at(0, 1) = premultiply(1, 0, 0, 1);
  image.at(1, 1) = premultiply(0.02f, 0.4f, 0.9f, 0.25f);
  image.at(2, 1) = premultiply(0, 0, 0, 1);
  const fs::path path = scratch("round_trip.png");
  write_png(path.string(), image);
  const Image back = read_png(path.string());
  ASSERT_EQ(back.width, 3);
  ASSERT_EQ(back.height, 2);
  for (std::size_t i = 0; i < image.pixels.size(); ++i) {
    const Rgba a = unpremultiply(image.pixels[i]), b = unpremultiply(back.pixels[i]);
    EXPECT_NEAR(back.pixels[i].a, image.pixels[i].a, 0.5f / 255 + 1e-6f) << i;
    // Half a code step of the sRGB curve, at its steepest where the value is.
    for (auto [x, y] : {std::pair{a.r, b.r}, {a.g, b.g}, {a.b, b.b}})
      EXPECT_NEAR(linear_to_srgb(y), linear_to_srgb(x), 0.5f / 255 + 1e-6f) << i;
  }
  EXPECT_EQ(back.at(2, 0), Rgba{});
}

TEST(ImageFile, SixteenBitGreyReadsAsLinearOrSrgb) {
  const std::string png = grey16_png({0, 32768, 65535});
  const Image linear = decode_png(png, "grey16.png", true);
  ASSERT_EQ(linear.width, 3);
  EXPECT_NEAR(linear.at(1, 0).r, 32768.0f / 65535, 1e-6f);
  EXPECT_EQ(linear.at(1, 0).r, linear.at(1, 0).b);
  EXPECT_EQ(linear.at(2, 0), (Rgba{1, 1, 1, 1}));
  const Image srgb = decode_png(png, "grey16.png");
  EXPECT_NEAR(srgb.at(1, 0).g, srgb_to_linear(32768.0f / 65535), 1e-6f);
  const fs::path path = scratch("grey16.png");
  write_file_atomically(path.string(), png);
  const Matte matte = read_matte_png(path.string());
  EXPECT_NEAR(matte.at(1, 0), 32768.0f / 65535, 1e-6f);
}

TEST(ImageFile, MatteComesFromAlphaWhenThereIsOne) {
  Image image(2, 1);
  image.at(0, 0) = premultiply(1, 1, 1, 0.25f);
  image.at(1, 0) = premultiply(0, 0, 0, 1);
  const fs::path path = scratch("matte.png");
  write_png(path.string(), image);
  const Matte matte = read_matte_png(path.string());
  EXPECT_NEAR(matte.at(0, 0), 64.0f / 255, 1e-6f);
  EXPECT_EQ(matte.at(1, 0), 1);
  // A matte written as grey reads back as itself, to the nearest 8-bit code.
  Matte coverage(3, 1);
  coverage.values = {0, 0.3f, 1};
  const fs::path grey = scratch("grey_matte.png");
  write_file_atomically(grey.string(), encode_matte_png(coverage));
  const Matte back = read_matte_png(grey.string());
  for (int x = 0; x < 3; ++x) EXPECT_NEAR(back.at(x, 0), coverage.at(x, 0), 0.5f / 255 + 1e-6f);
}

TEST(ImageFile, RefusesEmptyForeignTruncatedAndHostileFiles) {
  auto refuses = [](const std::string& bytes, const std::string& reason) {
    try {
      decode_png(bytes, "plate.png");
      ADD_FAILURE() << "accepted: " << reason;
    } catch (const Error& e) {
      EXPECT_EQ(e.file(), "plate.png");
      EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
    }
  };
  refuses("", "empty");
  refuses("GIF89a........................", "not a PNG");
  const std::string good = grey16_png({1, 2, 3, 4});
  refuses(good.substr(0, 20), "truncated");
  refuses(good.substr(0, good.size() - 30), "cannot decode");
  std::string huge = good;
  huge.replace(16, 4, be32(100000));  // a width of 100,000 pixels in the header
  refuses(huge, "at most 16,384");
  EXPECT_THROW(read_png(scratch("missing.png").string()), Error);
  EXPECT_THROW(write_png(scratch("empty.png").string(), Image()), Error);
  EXPECT_FALSE(fs::exists(scratch("empty.png")));
}

}  // namespace
}  // namespace kinema::composite
