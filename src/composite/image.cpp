// Premultiplied images and mattes (kinema/composite/image.h).
#include "kinema/composite/image.h"

namespace kinema::composite {

Rgba unpremultiply(const Rgba& p) {
  if (!(p.a > 0)) return {};
  const float inverse = 1 / p.a;
  return {p.r * inverse, p.g * inverse, p.b * inverse, p.a};
}

Rgba average(std::span<const Rgba> pixels) {
  if (pixels.empty()) return {};
  double r = 0, g = 0, b = 0, a = 0;
  for (const Rgba& p : pixels) r += p.r, g += p.g, b += p.b, a += p.a;
  const double n = double(pixels.size());
  return {float(r / n), float(g / n), float(b / n), float(a / n)};
}

Image::Image(int w, int h, Rgba fill)
    : width(w), height(h), pixels(std::size_t(w) * std::size_t(h), fill) {}

Matte::Matte(int w, int h, float fill)
    : width(w), height(h), values(std::size_t(w) * std::size_t(h), fill) {}

Matte alpha_of(const Image& image) {
  Matte matte(image.width, image.height);
  for (std::size_t i = 0; i < image.pixels.size(); ++i) matte.values[i] = image.pixels[i].a;
  return matte;
}

}  // namespace kinema::composite
