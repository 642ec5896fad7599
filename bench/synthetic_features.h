// bench/synthetic_features.h — the synthetic motion-matching feature databases the search
// benchmarks share: clips of 300 frames, each a smooth random trajectory of an 8-D latent state
// (damped random walk) mixed into `dims` features with a per-feature wobble, normalized per
// dimension. Deterministic for a seed.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "kinema/match/search.h"

namespace kinema::bench {

inline match::FeatureMatrix synthetic_features(size_t frames, size_t dims, uint32_t seed) {
  using match::FeatureMatrix;

  std::mt19937 rng(seed);
  std::normal_distribution<float> n01(0, 1);
  constexpr size_t kLatent = 8;
  std::vector<float> mix(dims * kLatent);
  for (float& w : mix) w = n01(rng);
  FeatureMatrix m;
  m.dims = dims;
  m.values.reserve(frames * dims);
  std::vector<float> x(kLatent), v(kLatent), wobble(dims), wv(dims);
  for (size_t f = 0; f < frames; ++f) {
    if (f % 300 == 0) {  // a new clip
      for (float& s : x) s = n01(rng);
      for (float& s : v) s = 0;
    }
    for (size_t k = 0; k < kLatent; ++k) {
      v[k] = 0.95f * v[k] + 0.02f * n01(rng) - 0.002f * x[k];
      x[k] += v[k];
    }
    for (size_t d = 0; d < dims; ++d) {
      wv[d] = 0.9f * wv[d] + 0.01f * n01(rng);
      wobble[d] = 0.98f * wobble[d] + wv[d];
      float s = wobble[d];
      for (size_t k = 0; k < kLatent; ++k) s += mix[d * kLatent + k] * x[k];
      m.values.push_back(s);
    }
  }
  for (size_t d = 0; d < dims; ++d) {
    double mean = 0, var = 0;
    for (size_t f = 0; f < frames; ++f) mean += m.values[f * dims + d];
    mean /= double(frames);
    for (size_t f = 0; f < frames; ++f) var += std::pow(m.values[f * dims + d] - mean, 2);
    const double sd = std::sqrt(var / double(frames)) + 1e-9;
    for (size_t f = 0; f < frames; ++f)
      m.values[f * dims + d] = float((m.values[f * dims + d] - mean) / sd);
  }
  return m;
}

}  // namespace kinema::bench
