// kinema/math/age_curve.h — a value over a normalized age u ∈ [0, 1] (a particle's age over its
// lifetime): what the particle system evaluates for size, colour and opacity, and what the
// particle sidecar stores for the renderer. One definition so that both give the same bits.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace kinema {

/// Piecewise linear through the keys (u strictly ascending, one value per key), constant beyond
/// the ends; no keys: the fallback.
struct AgeCurve {
  std::vector<float> u, value;

  float at(float age_fraction, float fallback) const {
    if (u.empty()) return fallback;
    if (age_fraction <= u.front()) return value.front();
    if (age_fraction >= u.back()) return value.back();
    const size_t k = size_t(std::upper_bound(u.begin(), u.end(), age_fraction) - u.begin());
    const float t = (age_fraction - u[k - 1]) / (u[k] - u[k - 1]);
    return value[k - 1] + t * (value[k] - value[k - 1]);
  }
};

}  // namespace kinema
