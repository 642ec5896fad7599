// PNG files for compositing (kinema/composite/image_file.h).
//
// stb_image and stb_image_write are compiled here with internal linkage (their STATIC macros),
// PNG only, so they cannot clash with the copies tinygltf and the renderer compile.
#include "kinema/composite/image_file.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "kinema/core/error.h"
#include "kinema/core/file.h"

#define STB_IMAGE_STATIC
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_PNG
#define STBI_NO_STDIO
#define STBI_NO_LINEAR
#define STBI_NO_HDR
#define STBI_MAX_DIMENSIONS 16384
#include <stb/stb_image.h>

#define STB_IMAGE_WRITE_STATIC
#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STBI_WRITE_NO_STDIO
#include <stb/stb_image_write.h>

namespace kinema::composite {

namespace {

constexpr std::uint32_t kMaxSide = 16384;
constexpr std::uint64_t kMaxPixels = std::uint64_t(1) << 28;

struct StbFree {
  void operator()(void* p) const { stbi_image_free(p); }
};

/// The decoded samples of a PNG as floats in [0, 1], `channels` a pixel.
struct Samples {
  int width = 0, height = 0, channels = 0;
  std::vector<float> values;
};

Samples decode_samples(std::string_view bytes, const std::string& name) {
  static constexpr unsigned char kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (bytes.empty()) throw Error(name, "", "is empty, not a PNG image");
  if (bytes.size() < 8 ||
      !std::equal(kSignature, kSignature + 8, bytes.begin(),
                  [](unsigned char a, char b) { return a == static_cast<unsigned char>(b); }))
    throw Error(name, "byte 0", "not a PNG image (no PNG signature)");
  if (bytes.size() < 8 + 8 + 13 || bytes.substr(12, 4) != "IHDR")
    throw Error(name, "byte 8", "truncated PNG: no IHDR header chunk");
  if (bytes.size() > std::size_t(std::numeric_limits<int>::max()))
    throw Error(name, "", "file too large for a PNG image");
  auto be32 = [&](std::size_t at) {
    std::uint32_t v = 0;
    for (std::size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(bytes[at + i]);
    return v;
  };
  const std::uint32_t w = be32(16), h = be32(20);
  if (w == 0 || h == 0 || w > kMaxSide || h > kMaxSide || std::uint64_t(w) * h > kMaxPixels)
    throw Error(name, "PNG header",
                "image is " + std::to_string(w) + "×" + std::to_string(h) +
                    " pixels; at most 16,384 a side and 268,435,456 in all are accepted");
  const auto* data = reinterpret_cast<const stbi_uc*>(bytes.data());
  const int size = int(bytes.size());
  int iw = 0, ih = 0, channels = 0;
  if (!stbi_info_from_memory(data, size, &iw, &ih, &channels))
    throw Error(name, "PNG header",
                std::string("cannot read the image header: ") + stbi_failure_reason());
  Samples s;
  s.width = iw, s.height = ih, s.channels = channels;
  const std::size_t count = std::size_t(iw) * std::size_t(ih) * std::size_t(channels);
  s.values.resize(count);
  int dw = 0, dh = 0, dc = 0;
  auto fail = [&] {
    throw Error(name, "image data",
                std::string("cannot decode the image: ") + stbi_failure_reason());
  };
  if (stbi_is_16_bit_from_memory(data, size)) {
    std::unique_ptr<stbi_us, StbFree> px(
        stbi_load_16_from_memory(data, size, &dw, &dh, &dc, channels));
    if (!px) fail();
    for (std::size_t i = 0; i < count; ++i) s.values[i] = float(px.get()[i]) / 65535.0f;
  } else {
    std::unique_ptr<stbi_uc, StbFree> px(
        stbi_load_from_memory(data, size, &dw, &dh, &dc, channels));
    if (!px) fail();
    for (std::size_t i = 0; i < count; ++i) s.values[i] = float(px.get()[i]) / 255.0f;
  }
  if (dw != iw || dh != ih) throw Error(name, "image data", "decoded size differs from the header");
  return s;
}

}  // namespace

float srgb_to_linear(float encoded) {
  const float c = std::clamp(encoded, 0.0f, 1.0f);
  return c <= 0.04045f ? c / 12.92f : std::pow((c + 0.055f) / 1.055f, 2.4f);
}

float linear_to_srgb(float linear) {
  const float c = std::clamp(linear, 0.0f, 1.0f);
  return c <= 0.0031308f ? c * 12.92f : 1.055f * std::pow(c, 1 / 2.4f) - 0.055f;
}

Image decode_png(std::string_view bytes, const std::string& name, bool linear) {
  const Samples s = decode_samples(bytes, name);
  Image image(s.width, s.height);
  const bool colour = s.channels >= 3, alpha = s.channels == 2 || s.channels == 4;
  auto curve = [&](float v) { return linear ? v : srgb_to_linear(v); };
  for (std::size_t i = 0; i < image.pixels.size(); ++i) {
    const float* p = &s.values[i * std::size_t(s.channels)];
    const float r = curve(p[0]), g = curve(colour ? p[1] : p[0]), b = curve(colour ? p[2] : p[0]);
    image.pixels[i] = premultiply(r, g, b, alpha ? p[s.channels - 1] : 1.0f);
  }
  return image;
}

Image read_png(const std::string& path, bool linear) {
  return decode_png(read_file(path), path, linear);
}

Matte read_matte_png(const std::string& path) {
  const Samples s = decode_samples(read_file(path), path);
  Matte matte(s.width, s.height);
  const bool alpha = s.channels == 2 || s.channels == 4;
  for (std::size_t i = 0; i < matte.values.size(); ++i)
    matte.values[i] = s.values[i * std::size_t(s.channels) + (alpha ? s.channels - 1 : 0)];
  return matte;
}

namespace {

/// A value in [0, 1] (clamped) as an 8-bit code.
unsigned char code8(float v) { return (unsigned char)std::lround(std::clamp(v, 0.0f, 1.0f) * 255); }

/// PNG bytes of 8-bit samples, `channels` a pixel, row by row. Throws for an empty image.
std::string png_bytes(int width, int height, int channels, const std::vector<unsigned char>& data,
                      const char* what) {
  if (width <= 0 || height <= 0 || data.empty())
    throw Error({}, "PNG", std::string("the ") + what + " is empty");
  std::string bytes;
  auto sink = [](void* context, void* chunk, int size) {
    static_cast<std::string*>(context)->append(static_cast<const char*>(chunk), std::size_t(size));
  };
  if (!stbi_write_png_to_func(sink, &bytes, width, height, channels, data.data(), width * channels))
    throw Error({}, "PNG", "the encoder failed");
  return bytes;
}

}  // namespace

std::string encode_png(const Image& image) {
  std::vector<unsigned char> rgba(image.pixels.size() * 4);
  for (std::size_t i = 0; i < image.pixels.size(); ++i) {
    const Rgba p = unpremultiply(image.pixels[i]);
    rgba[4 * i + 0] = code8(linear_to_srgb(p.r));
    rgba[4 * i + 1] = code8(linear_to_srgb(p.g));
    rgba[4 * i + 2] = code8(linear_to_srgb(p.b));
    rgba[4 * i + 3] = code8(image.pixels[i].a);
  }
  return png_bytes(image.width, image.height, 4, rgba, "image");
}

std::string encode_matte_png(const Matte& matte) {
  std::vector<unsigned char> grey(matte.values.size());
  for (std::size_t i = 0; i < grey.size(); ++i) grey[i] = code8(matte.values[i]);
  return png_bytes(matte.width, matte.height, 1, grey, "matte");
}

void write_png(const std::string& path, const Image& image) {
  std::string bytes;
  try {
    bytes = encode_png(image);
  } catch (const Error& e) {
    throw Error(path, e.place(), e.reason());
  }
  write_file_atomically(path, bytes);
}

}  // namespace kinema::composite
