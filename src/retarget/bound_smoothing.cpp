// One-sided smoothing of searched bounds (kinema/retarget/bound_smoothing.h).
#include "kinema/retarget/bound_smoothing.h"

#include <algorithm>
#include <deque>

#include "box_blur.h"

namespace kinema {

using retarget_detail::box_blur;

namespace {

/// Running extreme over ±radius with clamped ends (a monotonic deque: O(n)). `better(a, b)`
/// says a wins over b (less for a minimum, greater for a maximum).
template <class Better>
std::vector<double> running_extreme(std::span<const double> v, int radius, Better better) {
  const long n = static_cast<long>(v.size());
  std::vector<double> out(v.size());
  std::deque<long> window;  // indices, their values monotonic from the front's best
  long next = 0;            // next index to enter the window
  for (long i = 0; i < n; ++i) {
    const long hi = std::min(n - 1, i + radius);
    for (; next <= hi; ++next) {
      while (!window.empty() && !better(v[window.back()], v[next])) window.pop_back();
      window.push_back(next);
    }
    while (window.front() < i - radius) window.pop_front();
    out[static_cast<size_t>(i)] = v[static_cast<size_t>(window.front())];
  }
  return out;
}

}  // namespace

std::vector<double> ease_upper_bound(std::span<const double> upper, int radius_frames) {
  std::vector<double> out(upper.begin(), upper.end());
  if (radius_frames <= 0 || upper.empty()) return out;
  // Eroding first pulls every dip's neighbourhood down to it, so the blur that follows rises
  // towards the input instead of spilling over it; the final min catches what still does.
  out = running_extreme(upper, radius_frames, [](double a, double b) { return a < b; });
  out = box_blur(box_blur(out, radius_frames), radius_frames);
  for (size_t i = 0; i < out.size(); ++i) out[i] = std::min(out[i], upper[i]);
  return out;
}

std::vector<double> hold_lower_bound(std::span<const double> lower, int radius_frames) {
  std::vector<double> out(lower.begin(), lower.end());
  if (radius_frames <= 0 || lower.empty()) return out;
  out = running_extreme(lower, radius_frames, [](double a, double b) { return a > b; });
  out = box_blur(box_blur(out, radius_frames), radius_frames);
  for (size_t i = 0; i < out.size(); ++i) out[i] = std::max(out[i], lower[i]);
  return out;
}

}  // namespace kinema
