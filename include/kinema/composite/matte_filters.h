// kinema/composite/matte_filters.h — cleaning a matte: shrink, grow and soften it.
//
// Keyed and rotoscoped mattes have holes, specks and hard edges. Erosion (a minimum filter)
// eats specks and pulls the edge in; dilation (a maximum filter) fills holes and pushes it out;
// erosion then dilation (an opening) removes specks smaller than the radius and leaves larger
// shapes as they were. The neighbourhood is a disc of `radius` pixels; edges clamp. Blur is a
// Gaussian of standard deviation `sigma` pixels, separable, its kernel cut at 3σ and normalized
// so that a constant matte stays constant.
#pragma once

#include "kinema/composite/image.h"

namespace kinema::composite {

Matte erode(const Matte& matte, int radius);
Matte dilate(const Matte& matte, int radius);
/// sigma ≥ 0 (0: a copy). Throws kinema::Error for a negative or non-finite sigma.
Matte blur(const Matte& matte, double sigma);

}  // namespace kinema::composite
