// A box filter over a per-frame sequence (retarget module private): the one-sided smoothing of
// searched bounds and the smoothing of arm paths both blur with it.
#pragma once

#include <algorithm>
#include <vector>

namespace kinema::retarget_detail {

/// Mean over ±radius frames, ends clamped (the first and last values repeat); a running sum, so
/// O(n) whatever the radius. T needs +, − and division by double (double, Vec3).
template <class T>
std::vector<T> box_blur(const std::vector<T>& v, int radius) {
  const long n = static_cast<long>(v.size());
  std::vector<T> out(v.size());
  if (n == 0) return out;
  auto at = [&](long i) { return v[static_cast<size_t>(std::clamp(i, 0L, n - 1))]; };
  T sum = at(-radius);
  for (long k = -radius + 1; k <= radius; ++k) sum = sum + at(k);
  const double count = 2.0 * radius + 1;
  for (long i = 0; i < n; ++i) {
    out[static_cast<size_t>(i)] = sum / count;
    sum = sum + at(i + radius + 1) - at(i - radius);
  }
  return out;
}

}  // namespace kinema::retarget_detail
