// kinema/composite/image.h — images as compositing sees them: linear light, premultiplied alpha.
//
// A pixel stores (αR, αG, αB, α): its colour already multiplied by its coverage (Porter & Duff
// 1984). That is what makes filtering right — averaging an opaque red pixel with a transparent
// one gives half-covered red, not a yellowish fringe from the transparent pixel's invisible colour
// — what makes "over" associative, and what lets a pixel with α = 0 and a colour add light
// (a glow) without covering anything. Values are linear (not sRGB-encoded) and unbounded above
// (HDR); a straight-alpha pixel is converted with premultiply() on the way in.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace kinema::composite {

/// A premultiplied linear pixel: r, g, b are colour × alpha; a is coverage in [0, 1].
struct Rgba {
  float r = 0, g = 0, b = 0, a = 0;
  constexpr bool operator==(const Rgba&) const = default;
};

/// A straight (unassociated) colour with its coverage → premultiplied.
constexpr Rgba premultiply(float r, float g, float b, float a) { return {r * a, g * a, b * a, a}; }

/// All four channels times s: a premultiplied pixel seen through coverage s (a matte's value).
constexpr Rgba scaled(const Rgba& p, float s) { return {p.r * s, p.g * s, p.b * s, p.a * s}; }

/// Premultiplied → straight colour (r, g, b divided by a); a pixel with a = 0 has no colour to
/// recover and gives (0, 0, 0, 0).
Rgba unpremultiply(const Rgba& p);

/// The mean of pixels, channel by channel (a box filter's tap): right on premultiplied pixels.
Rgba average(std::span<const Rgba> pixels);

/// width × height premultiplied pixels, row by row from the top-left.
struct Image {
  int width = 0, height = 0;
  std::vector<Rgba> pixels;

  Image() = default;
  /// Filled with `fill` (transparent black by default).
  Image(int width, int height, Rgba fill = {});
  Rgba& at(int x, int y) { return pixels[std::size_t(y) * std::size_t(width) + std::size_t(x)]; }
  const Rgba& at(int x, int y) const {
    return pixels[std::size_t(y) * std::size_t(width) + std::size_t(x)];
  }
};

/// A single-channel coverage image (a matte): 1 keeps, 0 removes.
struct Matte {
  int width = 0, height = 0;
  std::vector<float> values;

  Matte() = default;
  Matte(int width, int height, float fill = 0);
  float& at(int x, int y) { return values[std::size_t(y) * std::size_t(width) + std::size_t(x)]; }
  float at(int x, int y) const {
    return values[std::size_t(y) * std::size_t(width) + std::size_t(x)];
  }
};

/// An image's alpha channel as a matte.
Matte alpha_of(const Image& image);

}  // namespace kinema::composite
