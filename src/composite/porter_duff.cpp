// Porter–Duff operators (kinema/composite/porter_duff.h).
#include "kinema/composite/porter_duff.h"

#include <algorithm>
#include <string>

#include "kinema/core/error.h"

namespace kinema::composite {

namespace {

/// F_A·A + F_B·B on all four channels.
Rgba weighted(const Rgba& a, float fa, const Rgba& b, float fb) {
  return {fa * a.r + fb * b.r, fa * a.g + fb * b.g, fa * a.b + fb * b.b, fa * a.a + fb * b.a};
}

void same_size(int w1, int h1, int w2, int h2, const char* what) {
  if (w1 != w2 || h1 != h2)
    throw Error({}, what,
                std::to_string(w1) + "×" + std::to_string(h1) + " against " + std::to_string(w2) +
                    "×" + std::to_string(h2) + ": the images must be the same size");
}

}  // namespace

Rgba composite(PorterDuff op, const Rgba& a, const Rgba& b) {
  switch (op) {
    case PorterDuff::Over:
      return weighted(a, 1, b, 1 - a.a);
    case PorterDuff::In:
      return weighted(a, b.a, b, 0);
    case PorterDuff::Out:
      return weighted(a, 1 - b.a, b, 0);
    case PorterDuff::Atop:
      return weighted(a, b.a, b, 1 - a.a);
    case PorterDuff::Xor:
      return weighted(a, 1 - b.a, b, 1 - a.a);
    case PorterDuff::Plus: {
      Rgba sum = weighted(a, 1, b, 1);
      sum.a = std::min(sum.a, 1.0f);
      return sum;
    }
  }
  return a;
}

Image composite(PorterDuff op, const Image& a, const Image& b) {
  same_size(a.width, a.height, b.width, b.height, "composite");
  Image out(a.width, a.height);
  for (std::size_t i = 0; i < a.pixels.size(); ++i)
    out.pixels[i] = composite(op, a.pixels[i], b.pixels[i]);
  return out;
}

Image apply_matte(const Image& image, const Matte& matte, bool invert) {
  same_size(image.width, image.height, matte.width, matte.height, "matte");
  Image out = image;
  for (std::size_t i = 0; i < out.pixels.size(); ++i)
    out.pixels[i] = scaled(out.pixels[i], invert ? 1 - matte.values[i] : matte.values[i]);
  return out;
}

}  // namespace kinema::composite
