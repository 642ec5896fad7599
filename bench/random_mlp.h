// bench/random_mlp.h — multilayer perceptrons with random weights for the learned
// motion-matching benchmarks (their time does not depend on the values): uniform weights scaled
// by √(3 / inputs), small biases, a fixed input and output normalization. Deterministic for a
// seed.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "kinema/match/learned.h"

namespace kinema::bench {

/// sizes = {inputs, hidden…, outputs}; `hidden` between the layers, none after the last.
inline match::Mlp random_mlp(const std::vector<uint32_t>& sizes, match::Activation hidden,
                             uint32_t seed) {
  using match::Activation;
  using match::DenseLayer;
  using match::Mlp;

  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  Mlp m;
  for (size_t k = 0; k + 1 < sizes.size(); ++k) {
    DenseLayer l;
    l.inputs = sizes[k];
    l.outputs = sizes[k + 1];
    l.activation = k + 2 == sizes.size() ? Activation::none : hidden;
    const float gain = std::sqrt(3.0f / float(l.inputs));
    l.weights.resize(size_t(l.inputs) * l.outputs);
    for (float& w : l.weights) w = u(rng) * gain;
    l.bias.resize(l.outputs);
    for (float& b : l.bias) b = 0.1f * u(rng);
    m.layers.push_back(std::move(l));
  }
  m.input_mean.assign(m.inputs(), 0.1f);
  m.input_scale.assign(m.inputs(), 1.5f);
  m.output_mean.assign(m.outputs(), -0.2f);
  m.output_scale.assign(m.outputs(), 0.5f);
  return m;
}

}  // namespace kinema::bench
