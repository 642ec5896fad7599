// kinema/composite/porter_duff.h — Porter & Duff's compositing operators on premultiplied pixels.
//
// With c = αC the premultiplied colour, every operator is c_o = F_A·c_A + F_B·c_B and
// α_o = F_A·α_A + F_B·α_B, the same weights on all four channels:
//
//   operator   F_A       F_B        what it keeps
//   over       1         1 − α_A    A in front of B
//   in         α_B       0          A where B is
//   out        1 − α_B   0          A where B is not
//   atop       α_B       1 − α_A    A over B, but only where B is
//   xor        1 − α_B   1 − α_A    each where the other is not
//   plus       1         1          the sum (additive light, dissolves), alpha clamped to 1
//
// "over" is associative: (A over B) over C = A over (B over C), so layers can be pre-combined in
// any grouping.
#pragma once

#include "kinema/composite/image.h"

namespace kinema::composite {

enum class PorterDuff { Over, In, Out, Atop, Xor, Plus };

/// A op B on one pixel.
Rgba composite(PorterDuff op, const Rgba& a, const Rgba& b);

/// A over B.
inline Rgba over(const Rgba& a, const Rgba& b) { return composite(PorterDuff::Over, a, b); }

/// A op B, pixel by pixel. Throws kinema::Error when the sizes differ.
Image composite(PorterDuff op, const Image& a, const Image& b);

/// Multiplies every pixel (all four channels) by the matte: a garbage matte keeps what it
/// covers; `invert` multiplies by 1 − matte instead — a holdout matte, cutting a CG layer where
/// a real object passes in front of it. Throws kinema::Error when the sizes differ.
Image apply_matte(const Image& image, const Matte& matte, bool invert = false);

}  // namespace kinema::composite
