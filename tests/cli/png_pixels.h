// tests/cli/png_pixels.h — decoding the PNGs `kinema render` wrote (stb_image, static in each test
// file that includes it), for the CLI tests that count colours.
#pragma once

#include <cstdint>
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

}  // namespace kinema::test
