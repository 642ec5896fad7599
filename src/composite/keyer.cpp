// The colour-difference keyer (kinema/composite/keyer.h).
#include "kinema/composite/keyer.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "kinema/core/error.h"

namespace kinema::composite {

namespace {

/// The screen's key channel (its largest) and the other two.
struct Channels {
  int key = 1, first = 0, second = 2;
};

Channels channels_of(const float screen[3]) {
  Channels c;
  c.key = screen[2] > screen[1] && screen[2] > screen[0] ? 2 : screen[0] > screen[1] ? 0 : 1;
  c.first = c.key == 0 ? 1 : 0;
  c.second = c.key == 2 ? 1 : 2;
  return c;
}

float difference(const float rgb[3], const Channels& c) {
  return rgb[c.key] - std::max(rgb[c.first], rgb[c.second]);
}

}  // namespace

void validate(const KeyerOptions& options) {
  for (float v : options.screen)
    if (!std::isfinite(v) || v < 0)
      throw Error({}, "keyer", "the screen colour must be finite and non-negative");
  const Channels c = channels_of(options.screen);
  if (!(difference(options.screen, c) > 0))
    throw Error({}, "keyer",
                "the screen colour has no channel ahead of both others (green or blue screen)");
}

/// The keyer with its screen's channels and difference worked out once.
class Keyer {
 public:
  explicit Keyer(const KeyerOptions& options)
      : o_(options),
        c_(channels_of(options.screen)),
        inverse_screen_difference_(1 / difference(options.screen, c_)) {}

  float alpha(const float rgb[3]) const {
    return 1 - std::clamp(difference(rgb, c_) * inverse_screen_difference_, 0.0f, 1.0f);
  }

  Rgba pixel(const float rgb[3]) const {
    const float a = alpha(rgb);
    float fg[3];
    for (int i = 0; i < 3; ++i)
      fg[i] = o_.subtract_screen ? std::max(rgb[i] - (1 - a) * o_.screen[i], 0.0f) : rgb[i] * a;
    if (o_.suppress_spill) fg[c_.key] = std::min(fg[c_.key], 0.5f * (fg[c_.first] + fg[c_.second]));
    return {fg[0], fg[1], fg[2], a};
  }

 private:
  KeyerOptions o_;
  Channels c_;
  float inverse_screen_difference_;
};

float key_alpha(const float rgb[3], const KeyerOptions& options) {
  return Keyer(options).alpha(rgb);
}

Rgba key_pixel(const float rgb[3], const KeyerOptions& options) {
  return Keyer(options).pixel(rgb);
}

Image key(const Image& plate, const KeyerOptions& options, const std::optional<Matte>& garbage) {
  validate(options);
  if (garbage && (garbage->width != plate.width || garbage->height != plate.height))
    throw Error({}, "garbage matte",
                std::to_string(garbage->width) + "×" + std::to_string(garbage->height) +
                    " against the plate's " + std::to_string(plate.width) + "×" +
                    std::to_string(plate.height) + ": the matte must be the plate's size");
  const Keyer keyer(options);
  Image out(plate.width, plate.height);
  for (std::size_t i = 0; i < plate.pixels.size(); ++i) {
    const Rgba& p = plate.pixels[i];
    const float rgb[3] = {p.r, p.g, p.b};
    const Rgba k = keyer.pixel(rgb);
    out.pixels[i] = garbage ? scaled(k, garbage->values[i]) : k;
  }
  return out;
}

}  // namespace kinema::composite
