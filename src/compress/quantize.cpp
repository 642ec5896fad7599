#include "kinema/compress/quantize.h"

#include <algorithm>
#include <cmath>

namespace kinema {

namespace {
const double kHalfSqrt2 = std::sqrt(0.5);
}

SmallestThree encode_smallest_three(const Quat& q_in, int bits) {
  bits = std::clamp(bits, 1, 31);
  Quat q = normalize(q_in);
  const double c[4] = {q.x, q.y, q.z, q.w};
  int drop = 0;
  for (int i = 1; i < 4; ++i)
    if (std::abs(c[i]) > std::abs(c[drop])) drop = i;
  const double sign = c[drop] < 0 ? -1.0 : 1.0;
  SmallestThree s;
  s.dropped = drop;
  s.bits = bits;
  const double maxc = double((uint64_t(1) << bits) - 1);
  for (int i = 0, o = 0; i < 4; ++i) {
    if (i == drop) continue;
    const double u = std::clamp((sign * c[i] + kHalfSqrt2) / (2 * kHalfSqrt2), 0.0, 1.0);
    s.codes[o++] = uint32_t(std::lround(u * maxc));
  }
  return s;
}

double decode_smallest_three_component(uint32_t code, int bits) {
  const double maxc = double((uint64_t(1) << std::clamp(bits, 1, 31)) - 1);
  return double(code) / maxc * (2 * kHalfSqrt2) - kHalfSqrt2;
}

Quat decode_smallest_three(const SmallestThree& s) {
  double k[3];
  for (int i = 0; i < 3; ++i) k[i] = decode_smallest_three_component(s.codes[i], s.bits);
  const double d = std::sqrt(std::max(0.0, 1.0 - (k[0] * k[0] + k[1] * k[1] + k[2] * k[2])));
  double c[4];
  for (int i = 0, o = 0; i < 4; ++i) c[i] = i == s.dropped ? d : k[o++];
  return {c[0], c[1], c[2], c[3]};
}

std::vector<int> reduce_keys(std::span<const double> values, double tolerance) {
  std::vector<int> kept;
  const int n = static_cast<int>(values.size());
  if (n == 0) return kept;
  kept.push_back(0);
  int start = 0;
  // Does the line from `start` to `end` reproduce every sample in between?
  auto fits = [&](int end) {
    for (int i = start + 1; i < end; ++i) {
      const double t = double(i - start) / double(end - start);
      const double v = values[size_t(start)] + (values[size_t(end)] - values[size_t(start)]) * t;
      if (!(std::abs(v - values[size_t(i)]) <= tolerance)) return false;
    }
    return true;
  };
  for (int end = start + 2; end < n; ++end)
    if (!fits(end)) {
      start = end - 1;
      kept.push_back(start);
    }
  if (n > 1) kept.push_back(n - 1);
  return kept;
}

}  // namespace kinema
