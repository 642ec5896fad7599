// tests/cli/png_pixels.h — decoding the PNGs `kinema render` wrote (stb_image, static in each test
// file that includes it), for the CLI tests that count colours.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#define STB_IMAGE_STATIC
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_PNG
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#endif
#include <stb/stb_image.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

namespace kinema::test {

/// The RGBA8 pixels of PNG bytes, 4 per pixel (empty when they are not a PNG).
inline std::vector<uint8_t> png_rgba(const std::string& png) {
  int w = 0, h = 0, c = 0;
  unsigned char* p = stbi_load_from_memory(reinterpret_cast<const unsigned char*>(png.data()),
                                           int(png.size()), &w, &h, &c, 4);
  if (!p) return {};
  std::vector<uint8_t> rgba(p, p + size_t(w) * size_t(h) * 4);
  stbi_image_free(p);
  return rgba;
}

/// Width and height of PNG bytes (false when they are not a PNG).
inline bool png_size(const std::string& png, int& width, int& height) {
  int c = 0;
  return stbi_info_from_memory(reinterpret_cast<const unsigned char*>(png.data()), int(png.size()),
                               &width, &height, &c) != 0;
}

/// Pixels in each LOD tier's debug colour (`--lod-colours`: near green, mid yellow, far orange,
/// farthest red), lit and anti-aliased, within columns [x0, x0 + w) and rows [y0, y0 + h) of
/// RGBA8 pixels `width` wide.
struct TierPixels {
  int green = 0, yellow = 0, orange = 0, red = 0;
};
inline TierPixels count_tier_pixels(const std::vector<uint8_t>& rgba, int width, int x0, int y0,
                                    int w, int h) {
  TierPixels n;
  for (int y = y0; y < y0 + h; ++y)
    for (int x = x0; x < x0 + w; ++x) {
      const uint8_t* p = &rgba[(size_t(y) * size_t(width) + size_t(x)) * 4];
      const int r8 = p[0], g8 = p[1], b8 = p[2];
      n.green += g8 > r8 + 40 && g8 > b8 + 40;
      n.yellow += r8 > 150 && g8 > 130 && b8 < 90 && std::abs(r8 - g8) < 50;
      n.orange += r8 > 150 && g8 > 70 && g8 < 130 && b8 < 70;
      n.red += r8 > 120 && g8 < 70 && b8 < 80;
    }
  return n;
}

}  // namespace kinema::test
