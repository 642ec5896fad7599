// PNG files for compositing (kinema/composite/image_file.h).
//
// stb_image and stb_image_write are compiled here with internal linkage (their STATIC macros),
// PNG only, so they cannot clash with the copies tinygltf and the renderer compile.
#include "kinema/composite/image_file.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
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

namespace {

Matte decode_matte_png(std::string_view bytes, const std::string& name) {
  const Samples s = decode_samples(bytes, name);
  Matte matte(s.width, s.height);
  const bool alpha = s.channels == 2 || s.channels == 4;
  for (std::size_t i = 0; i < matte.values.size(); ++i)
    matte.values[i] = s.values[i * std::size_t(s.channels) + (alpha ? s.channels - 1 : 0)];
  return matte;
}

}  // namespace

Matte read_matte_png(const std::string& path) { return decode_matte_png(read_file(path), path); }

namespace {

/// A value in [0, 1] (clamped) as an 8- or 16-bit code.
unsigned code(float v, unsigned max) {
  return unsigned(std::lround(double(std::clamp(v, 0.0f, 1.0f)) * max));
}

void check_size(int width, int height, std::size_t samples, const char* what) {
  if (width <= 0 || height <= 0 || samples == 0)
    throw Error({}, "PNG", std::string("the ") + what + " is empty");
}

/// PNG bytes of 8-bit samples, `channels` a pixel, row by row (stb_image_write's encoder).
std::string png_bytes(int width, int height, int channels, const std::vector<unsigned char>& data,
                      const char* what) {
  check_size(width, height, data.size(), what);
  std::string bytes;
  auto sink = [](void* context, void* chunk, int size) {
    static_cast<std::string*>(context)->append(static_cast<const char*>(chunk), std::size_t(size));
  };
  if (!stbi_write_png_to_func(sink, &bytes, width, height, channels, data.data(), width * channels))
    throw Error({}, "PNG", "the encoder failed");
  return bytes;
}

std::uint32_t crc32(const unsigned char* data, std::size_t size, std::uint32_t crc = 0) {
  crc = ~crc;
  for (std::size_t i = 0; i < size; ++i) {
    crc ^= data[i];
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

void append_be32(std::string& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(char((v >> shift) & 0xff));
}

void append_chunk(std::string& out, const char type[4], const std::string& payload) {
  append_be32(out, std::uint32_t(payload.size()));
  const std::size_t start = out.size();
  out.append(type, 4);
  out += payload;
  append_be32(
      out, crc32(reinterpret_cast<const unsigned char*>(out.data() + start), out.size() - start));
}

int paeth(int a, int b, int c) {
  const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/// PNG bytes of 16-bit samples. stb_image_write writes only 8 bits, so the chunks are laid out
/// here around its zlib compressor; every row uses the Paeth filter (8 bytes a pixel for RGBA).
std::string png16_bytes(int width, int height, int channels, const std::vector<std::uint16_t>& data,
                        const char* what) {
  check_size(width, height, data.size(), what);
  const std::size_t bpp = std::size_t(channels) * 2, row = std::size_t(width) * bpp;
  std::vector<unsigned char> raw(std::size_t(height) * row), filtered;
  for (std::size_t i = 0; i < data.size(); ++i) {
    raw[2 * i] = (unsigned char)(data[i] >> 8);
    raw[2 * i + 1] = (unsigned char)(data[i] & 0xff);
  }
  filtered.reserve(std::size_t(height) * (row + 1));
  for (std::size_t y = 0; y < std::size_t(height); ++y) {
    filtered.push_back(4);  // Paeth
    const unsigned char* line = &raw[y * row];
    const unsigned char* above = y > 0 ? &raw[(y - 1) * row] : nullptr;
    for (std::size_t x = 0; x < row; ++x) {
      const int a = x >= bpp ? line[x - bpp] : 0, b = above ? above[x] : 0,
                c = above && x >= bpp ? above[x - bpp] : 0;
      filtered.push_back((unsigned char)(line[x] - paeth(a, b, c)));
    }
  }
  if (filtered.size() > std::size_t(std::numeric_limits<int>::max()))
    throw Error({}, "PNG", std::string("the ") + what + " is too large for one PNG");
  int compressed_size = 0;
  std::unique_ptr<unsigned char, decltype(&std::free)> compressed(
      stbi_zlib_compress(filtered.data(), int(filtered.size()), &compressed_size, 8), &std::free);
  if (!compressed) throw Error({}, "PNG", "the compressor failed");
  std::string out("\x89PNG\r\n\x1a\n", 8), header;
  append_be32(header, std::uint32_t(width));
  append_be32(header, std::uint32_t(height));
  header.push_back(16);  // bits a sample
  header.push_back(char(channels == 4 ? 6 : channels == 2 ? 4 : channels == 3 ? 2 : 0));
  header.append(3, '\0');  // deflate, adaptive filtering, no interlace
  append_chunk(out, "IHDR", header);
  append_chunk(
      out, "IDAT",
      std::string(reinterpret_cast<const char*>(compressed.get()), std::size_t(compressed_size)));
  append_chunk(out, "IEND", {});
  return out;
}

}  // namespace

std::string encode_png(const Image& image, const PngWriteOptions& options) {
  if (options.bits != 8 && options.bits != 16)
    throw Error({}, "PNG", "bits must be 8 or 16, not " + std::to_string(options.bits));
  const unsigned max = options.bits == 16 ? 65535 : 255;
  std::vector<std::uint16_t> codes(image.pixels.size() * 4);
  auto curve = [&](float v) { return options.linear ? v : linear_to_srgb(v); };
  for (std::size_t i = 0; i < image.pixels.size(); ++i) {
    const Rgba p = unpremultiply(image.pixels[i]);
    codes[4 * i + 0] = std::uint16_t(code(curve(p.r), max));
    codes[4 * i + 1] = std::uint16_t(code(curve(p.g), max));
    codes[4 * i + 2] = std::uint16_t(code(curve(p.b), max));
    codes[4 * i + 3] = std::uint16_t(code(image.pixels[i].a, max));
  }
  if (options.bits == 16) return png16_bytes(image.width, image.height, 4, codes, "image");
  return png_bytes(image.width, image.height, 4,
                   std::vector<unsigned char>(codes.begin(), codes.end()), "image");
}

std::string encode_matte_png(const Matte& matte, int bits) {
  if (bits != 8 && bits != 16)
    throw Error({}, "PNG", "bits must be 8 or 16, not " + std::to_string(bits));
  std::vector<std::uint16_t> codes(matte.values.size());
  for (std::size_t i = 0; i < codes.size(); ++i)
    codes[i] = std::uint16_t(code(matte.values[i], bits == 16 ? 65535 : 255));
  if (bits == 16) return png16_bytes(matte.width, matte.height, 1, codes, "matte");
  return png_bytes(matte.width, matte.height, 1,
                   std::vector<unsigned char>(codes.begin(), codes.end()), "matte");
}

namespace {

/// Runs an encoder, naming `path` in its errors, and writes the bytes atomically.
template <class Encode>
void write_encoded(const std::string& path, Encode&& encode) {
  std::string bytes;
  try {
    bytes = encode();
  } catch (const Error& e) {
    throw Error(path, e.place(), e.reason());
  }
  write_file_atomically(path, bytes);
}

bool looks_like_exr(std::string_view bytes) {
  return bytes.size() >= 4 && static_cast<unsigned char>(bytes[0]) == 0x76 &&
         static_cast<unsigned char>(bytes[1]) == 0x2f &&
         static_cast<unsigned char>(bytes[2]) == 0x31 &&
         static_cast<unsigned char>(bytes[3]) == 0x01;
}

}  // namespace

void write_png(const std::string& path, const Image& image, const PngWriteOptions& options) {
  write_encoded(path, [&] { return encode_png(image, options); });
}

ImageFormat image_format_for_path(const std::string& path) {
  const auto dot = path.find_last_of('.');
  std::string extension = dot == std::string::npos ? "" : path.substr(dot + 1);
  for (char& c : extension) c = char(std::tolower(static_cast<unsigned char>(c)));
  if (extension == "png") return ImageFormat::png;
  if (extension == "exr") return ImageFormat::exr;
  throw UsageError("'" + path + "': kinema writes images as .png or .exr");
}

ImageInfo read_image_info(const std::string& path) {
  const std::string bytes = read_file(path);
  ImageInfo info;
  if (looks_like_exr(bytes)) {
    const ExrInfo exr = decode_exr_info(bytes, path);
    info.format = ImageFormat::exr;
    info.width = exr.width, info.height = exr.height;
    info.channels = int(exr.channels.size());
    info.sample_type = exr.any_float32 ? "float" : "half";
    info.color_space = exr.color_space;
    return info;
  }
  const Samples s = decode_samples(bytes, path);  // checks the header and the data
  info.width = s.width, info.height = s.height, info.channels = s.channels;
  info.sample_type = static_cast<unsigned char>(bytes[24]) == 16 ? "16-bit" : "8-bit";
  info.color_space = "sRGB";
  return info;
}

Image read_image(const std::string& path, bool linear_png) {
  const std::string bytes = read_file(path);
  return looks_like_exr(bytes) ? decode_exr(bytes, path) : decode_png(bytes, path, linear_png);
}

Matte read_matte(const std::string& path) {
  const std::string bytes = read_file(path);
  return looks_like_exr(bytes) ? decode_exr_matte(bytes, path) : decode_matte_png(bytes, path);
}

std::string encode_image(ImageFormat format, const Image& image, const ImageWriteOptions& options) {
  return format == ImageFormat::exr ? encode_exr(image, options.exr)
                                    : encode_png(image, options.png);
}

std::string encode_matte(ImageFormat format, const Matte& matte, const ImageWriteOptions& options) {
  if (format == ImageFormat::png) return encode_matte_png(matte, options.png.bits);
  return encode_exr_channels(matte.width, matte.height,
                             {ExrChannel{"Y", matte.values, options.exr.pixel_type}},
                             options.exr.compression);
}

void write_image(const std::string& path, const Image& image, const ImageWriteOptions& options) {
  const ImageFormat format = image_format_for_path(path);
  write_encoded(path, [&] { return encode_image(format, image, options); });
}

void write_matte(const std::string& path, const Matte& matte, const ImageWriteOptions& options) {
  const ImageFormat format = image_format_for_path(path);
  write_encoded(path, [&] { return encode_matte(format, matte, options); });
}

}  // namespace kinema::composite
