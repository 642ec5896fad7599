// Matte erosion, dilation and blur (kinema/composite/matte_filters.h).
#include "kinema/composite/matte_filters.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "kinema/core/error.h"

namespace kinema::composite {

namespace {

/// The minimum (or maximum) over a disc of `radius` around each pixel, edges clamped.
Matte disc_filter(const Matte& matte, int radius, bool take_max, const char* what) {
  if (radius < 0) throw Error({}, what, "the radius must be ≥ 0, not " + std::to_string(radius));
  Matte out = matte;
  if (radius == 0 || matte.values.empty()) return out;
  std::vector<std::pair<int, int>> offsets;
  for (int dy = -radius; dy <= radius; ++dy)
    for (int dx = -radius; dx <= radius; ++dx)
      if (dx * dx + dy * dy <= radius * radius) offsets.push_back({dx, dy});
  for (int y = 0; y < matte.height; ++y)
    for (int x = 0; x < matte.width; ++x) {
      float v = matte.at(x, y);
      for (const auto& [dx, dy] : offsets) {
        const float s = matte.at(std::clamp(x + dx, 0, matte.width - 1),
                                 std::clamp(y + dy, 0, matte.height - 1));
        v = take_max ? std::max(v, s) : std::min(v, s);
      }
      out.at(x, y) = v;
    }
  return out;
}

}  // namespace

Matte erode(const Matte& matte, int radius) { return disc_filter(matte, radius, false, "erode"); }

Matte dilate(const Matte& matte, int radius) { return disc_filter(matte, radius, true, "dilate"); }

Matte blur(const Matte& matte, double sigma) {
  if (!(sigma >= 0) || !std::isfinite(sigma))
    throw Error({}, "blur", "sigma must be finite and ≥ 0");
  if (sigma == 0 || matte.values.empty()) return matte;
  const int reach = int(std::ceil(3 * sigma));
  std::vector<double> kernel(std::size_t(2 * reach + 1));
  double sum = 0;
  for (int i = -reach; i <= reach; ++i)
    sum += kernel[std::size_t(i + reach)] = std::exp(-0.5 * i * i / (sigma * sigma));
  for (double& k : kernel) k /= sum;
  // Rows, then columns; the columns a whole row at a time (each output row a weighted sum of
  // input rows), so that both passes read memory in order.
  const int w = matte.width, h = matte.height;
  Matte rows(w, h), out(w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      double v = 0;
      for (int i = -reach; i <= reach; ++i)
        v += kernel[std::size_t(i + reach)] * matte.at(std::clamp(x + i, 0, w - 1), y);
      rows.at(x, y) = float(v);
    }
  std::vector<double> column_sum(static_cast<std::size_t>(w));
  for (int y = 0; y < h; ++y) {
    std::fill(column_sum.begin(), column_sum.end(), 0.0);
    for (int i = -reach; i <= reach; ++i) {
      const double k = kernel[std::size_t(i + reach)];
      const float* row = &rows.values[std::size_t(std::clamp(y + i, 0, h - 1)) * std::size_t(w)];
      for (int x = 0; x < w; ++x) column_sum[std::size_t(x)] += k * row[x];
    }
    for (int x = 0; x < w; ++x) out.at(x, y) = float(column_sum[std::size_t(x)]);
  }
  return out;
}

}  // namespace kinema::composite
