// kinema/composite/keyer.h — chroma keying: a matte from a green or blue screen.
//
// The colour-difference keyer: how much greener (or bluer) than its other channels a pixel is,
//   d = K − max(other two),  α = 1 − clamp(d / d_S, 0, 1),
// with d_S the same difference for the screen colour S (the key channel K is S's largest). The
// screen itself gets α = 0, anything no greener than it is neutral gets 1, and an edge pixel that
// mixes a neutral (grey) foreground with the screen gets exactly its coverage; a coloured
// foreground's edges come out somewhat off (half skin, half screen: 0.615 for 0.5), which real
// keyers tune away. Then
//   screen subtraction  c = max(plate − (1 − α)·S, 0): the foreground's premultiplied colour;
//   spill suppression   K′ = min(K, (other two)/2): the screen's light bounced onto the subject.
// Spill suppression commutes with premultiplication (scaling all three channels keeps which is
// larger), so it runs on the premultiplied colour.
#pragma once

#include <optional>

#include "kinema/composite/image.h"

namespace kinema::composite {

/// Typical screens, linear: what `--screen green` / `blue` (and comp's "green" / "blue") mean.
inline constexpr float kGreenScreen[3] = {0.1f, 0.8f, 0.15f};
inline constexpr float kBlueScreen[3] = {0.1f, 0.2f, 0.9f};

struct KeyerOptions {
  /// The screen's linear colour; its largest channel is the key channel (green or blue).
  float screen[3] = {0.1f, 0.8f, 0.15f};
  bool subtract_screen = true;  ///< remove (1 − α)·S from the colour (premultiplied foreground)
  bool suppress_spill = true;   ///< limit the key channel to the mean of the other two
};

/// Checks the options: a finite screen colour with one channel ahead of both others
/// (d_S > 0). Throws kinema::Error naming the reason.
void validate(const KeyerOptions& options);

/// α of one plate pixel (straight linear RGB, as the camera saw it).
float key_alpha(const float rgb[3], const KeyerOptions& options = {});

/// The keyed foreground of one plate pixel: premultiplied colour and α.
Rgba key_pixel(const float rgb[3], const KeyerOptions& options = {});

/// Keys a plate (its alpha ignored: a plate is opaque). A garbage matte, when given, keeps only
/// what it covers (light stands and the screen's edges outside it become transparent). Throws
/// kinema::Error for bad options or a matte of another size.
Image key(const Image& plate, const KeyerOptions& options = {},
          const std::optional<Matte>& garbage = std::nullopt);

}  // namespace kinema::composite
