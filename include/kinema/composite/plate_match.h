// kinema/composite/plate_match.h — making CG sit in a filmed plate: the shadows and light it
// casts (differential rendering), the plate's film grain, and its motion blur.
//
// Differential rendering (Debevec 1998): render a simple stand-in of the real surroundings (the
// ground as a shadow catcher) twice, with and without the CG object; the difference is exactly
// the shadow and bounce light the object adds, so it is added to the plate, whose own texture
// stays. A plate pixel of 0.6 whose stand-in renders 0.5 without the creature and 0.3 with its
// shadow becomes 0.6 + (0.3 − 0.5) = 0.4. The object itself then goes over the result.
#pragma once

#include <cstdint>
#include <span>

#include "kinema/composite/image.h"
#include "kinema/math/vec2.h"

namespace kinema::composite {

/// plate + (with − without), channel by channel on r, g, b (alpha stays the plate's), clamped at
/// 0 (a difference cannot take more light than the plate has); then `object` (the CG object's
/// own premultiplied render, or null) over it. All images the same size, else kinema::Error.
Image differential_composite(const Image& plate, const Image& with_object,
                             const Image& without_object, const Image* object = nullptr);

/// One pixel of differential_composite(), without the object: the worked number's arithmetic.
constexpr float differential_pixel(float plate, float with_object, float without_object) {
  const float v = plate + (with_object - without_object);
  return v > 0 ? v : 0;
}

/// The plate's grain as a standard deviation per channel (linear units), measured robustly
/// [Immerkær 1996]: each pixel's residual under the mask [1 −2 1; −2 4 −2; 1 −2 1] (zero on
/// flat areas and linear ramps, 6σ on noise), its median absolute value scaled for a Gaussian,
/// over the pixels whose Sobel gradient is below 2.5 noise scales (edges and texture left out,
/// the gate tightened three times from the first estimate).
struct Grain {
  float sigma_r = 0, sigma_g = 0, sigma_b = 0;
};
/// Throws kinema::Error for an image smaller than 3×3.
Grain estimate_grain(const Image& plate);

/// Adds zero-mean Gaussian grain of `grain`'s size to the image, weighted by each pixel's alpha
/// (grain on CG coverage only: the plate under it has its own). The same seed gives the same
/// grain. A pixel's noise depends only on (seed, x, y), not on the order pixels are visited.
void add_grain(Image& image, const Grain& grain, std::uint64_t seed);

/// Blur along a straight motion of (dx, dy) px over the shutter, centred on each pixel: the mean
/// of `samples` bilinear taps spread evenly from −½ to +½ of the motion (a box shutter). Outside
/// the image is transparent. samples < 1 is taken as 1.
Image motion_blur(const Image& image, Vec2 motion_px, int samples = 16);

/// The same with a motion vector per pixel (a renderer's motion pass, px over the shutter, x right
/// and y down), gathered at each pixel. `motion` holds width × height vectors, else kinema::Error.
Image vector_blur(const Image& image, std::span<const Vec2f> motion, int samples = 16);

}  // namespace kinema::composite
