// BlendSpace1D: samples on one axis, linear weights between neighbours, and the speed
// matching of locomotion spaces. See kinema/blend/blend_space.h.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "blend_space_internal.h"
#include "kinema/blend/blend_space.h"
#include "kinema/core/error.h"

namespace kinema {

using blend_detail::cycles_of;
using blend_detail::entry_place;
using blend_detail::names_of;
using blend_detail::num;

BlendSpace1D::BlendSpace1D(std::vector<BlendSample1D> samples) : samples_(std::move(samples)) {
  const std::size_t n = samples_.size();
  if (n < 2)
    throw Error("", "",
                "a 1D blend space needs at least 2 samples (got " + std::to_string(n) + ")");
  const std::vector<std::string> names = names_of(samples_);
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(samples_[i].position))
      throw Error("", entry_place("sample", i, names), "position is not finite");
    if (samples_[i].root_speed && !std::isfinite(*samples_[i].root_speed))
      throw Error("", entry_place("sample", i, names), "root speed is not finite");
  }
  order_.resize(n);
  for (std::size_t i = 0; i < n; ++i) order_[i] = static_cast<std::uint32_t>(i);
  std::stable_sort(order_.begin(), order_.end(), [&](std::uint32_t a, std::uint32_t b) {
    return samples_[a].position < samples_[b].position;
  });
  for (std::size_t k = 1; k < n; ++k)
    if (samples_[order_[k]].position == samples_[order_[k - 1]].position)
      throw Error("", entry_place("sample", order_[k], names),
                  "duplicate position " + num(samples_[order_[k]].position) + " (same as " +
                      entry_place("sample", order_[k - 1], names) + ")");
  for (std::uint32_t i : order_) sorted_pos_.push_back(samples_[i].position);
  const std::vector<ClipCycle> cycles = cycles_of(samples_);
  sync_ = PhaseSync(cycles, names, "sample");
}

void BlendSpace1D::locate(double x, std::size_t& lo, std::size_t& hi, double& t) const noexcept {
  const std::size_t n = sorted_pos_.size();
  t = 0.0;
  if (x <= sorted_pos_.front()) {
    lo = hi = 0;  // clamp to the first sample
  } else if (x >= sorted_pos_.back()) {
    lo = hi = n - 1;  // clamp to the last sample
  } else {
    hi = static_cast<std::size_t>(std::upper_bound(sorted_pos_.begin(), sorted_pos_.end(), x) -
                                  sorted_pos_.begin());
    lo = hi - 1;
    t = (x - sorted_pos_[lo]) / (sorted_pos_[hi] - sorted_pos_[lo]);
  }
}

bool BlendSpace1D::weights(float x, std::span<float> out) const noexcept {
  if (!std::isfinite(x) || out.size() != samples_.size()) return false;
  std::size_t lo = 0, hi = 0;
  double t = 0.0;
  locate(x, lo, hi, t);
  std::fill(out.begin(), out.end(), 0.0f);
  out[order_[lo]] = static_cast<float>(1.0 - t);
  if (hi != lo) out[order_[hi]] = static_cast<float>(t);
  return true;
}

std::size_t BlendSpace1D::sparse_weights(float x, std::span<BlendWeight> out) const noexcept {
  if (!std::isfinite(x) || out.size() < kMaxActive) return 0;
  std::size_t lo = 0, hi = 0;
  double t = 0.0;
  locate(x, lo, hi, t);
  std::size_t count = 0;
  const float wl = static_cast<float>(1.0 - t), wh = static_cast<float>(t);
  if (wl > 0.0f) out[count++] = {order_[lo], wl};
  if (hi != lo && wh > 0.0f) out[count++] = {order_[hi], wh};
  return count;
}

std::optional<float> BlendSpace1D::stride(std::span<const float> weights) const noexcept {
  const double sum = sync_.weight_sum(weights);
  if (sum <= 0.0) return std::nullopt;
  double dist = 0.0;
  for (std::size_t i = 0; i < samples_.size(); ++i) {
    if (weights[i] == 0.0f) continue;
    if (!samples_[i].root_speed) return std::nullopt;
    dist += weights[i] * double(*samples_[i].root_speed) * sync_.duration_[i];
  }
  return static_cast<float>(dist / sum);
}

std::optional<float> BlendSpace1D::root_speed(std::span<const float> weights) const noexcept {
  const std::optional<float> s = stride(weights);
  const std::optional<float> t = sync_.cycle_duration(weights);
  if (!s || !t) return std::nullopt;
  return static_cast<float>(double(*s) / double(*t));
}

std::optional<float> BlendSpace1D::playback_scale(std::span<const float> weights,
                                                  float target_speed) const noexcept {
  if (!std::isfinite(target_speed)) return std::nullopt;
  const std::optional<float> v = root_speed(weights);
  if (!v || *v == 0.0f) return std::nullopt;
  return target_speed / *v;
}

bool BlendSpace1D::speed_matched_weights(float target_speed, std::span<float> out) const noexcept {
  if (!std::isfinite(target_speed) || out.size() != samples_.size()) return false;
  const double v = target_speed;
  const std::size_t n = order_.size();
  for (std::size_t k = 0; k + 1 < n; ++k) {
    const BlendSample1D& a = samples_[order_[k]];
    const BlendSample1D& b = samples_[order_[k + 1]];
    if (!a.root_speed || !b.root_speed) continue;
    const double sa = *a.root_speed, sb = *b.root_speed;
    if (v < std::min(sa, sb) || v > std::max(sa, sb)) continue;
    // (w_a·s_a·T_a + w_b·s_b·T_b) / (w_a·T_a + w_b·T_b) = v with w_a = 1 − w_b, solved for w_b.
    const double na = sync_.duration_[order_[k]] * (v - sa);
    const double nb = sync_.duration_[order_[k + 1]] * (sb - v);
    const double wb = na + nb != 0.0 ? std::clamp(na / (na + nb), 0.0, 1.0) : 0.0;
    std::fill(out.begin(), out.end(), 0.0f);
    out[order_[k]] = static_cast<float>(1.0 - wb);
    out[order_[k + 1]] += static_cast<float>(wb);
    return true;
  }
  // No bracketing pair: the sample whose speed is nearest (the caller may then scale playback).
  std::size_t best = n;
  double best_gap = std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k < n; ++k) {
    const BlendSample1D& s = samples_[order_[k]];
    if (s.root_speed && std::abs(*s.root_speed - v) < best_gap) {
      best_gap = std::abs(*s.root_speed - v);
      best = k;
    }
  }
  if (best == n) return false;
  std::fill(out.begin(), out.end(), 0.0f);
  out[order_[best]] = 1.0f;
  return true;
}

}  // namespace kinema
