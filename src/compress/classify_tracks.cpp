// The lossless stages of compression (kinema/compress/compress.h): which channels of a resampled
// clip are the identity (stored nowhere), constant (stored once) or animated (stored per frame).
#include <algorithm>

#include "kinema/compress/compress.h"

namespace kinema {

TrackClassification classify_tracks(std::span<const Transform> poses, int joint_count) {
  TrackClassification c;
  const size_t n = size_t(std::max(joint_count, 0));
  c.kinds.assign(n * 3, TrackKind::Identity);
  if (n == 0) return c;
  const size_t frames = poses.size() / n;
  for (size_t j = 0; j < n; ++j)
    for (int ch = 0; ch < 3; ++ch) {
      const int comps = ch == 1 ? 4 : 3;
      auto value = [&](size_t f, int i) -> float {
        const Transform& x = poses[f * n + j];
        if (ch == 0)
          return float(i == 0 ? x.translation.x : i == 1 ? x.translation.y : x.translation.z);
        if (ch == 2) return float(i == 0 ? x.scale.x : i == 1 ? x.scale.y : x.scale.z);
        return float(i == 0   ? x.rotation.x
                     : i == 1 ? x.rotation.y
                     : i == 2 ? x.rotation.z
                              : x.rotation.w);
      };
      const float identity[4] = {ch == 2 ? 1.0f : 0.0f, ch == 2 ? 1.0f : 0.0f,
                                 ch == 2 ? 1.0f : 0.0f, 1.0f};
      bool is_identity = true, is_constant = true;
      for (size_t f = 0; f < frames; ++f) {
        // A rotation equals the identity with either sign of w.
        const float sign = ch == 1 && value(f, 3) < 0 ? -1.0f : 1.0f;
        for (int i = 0; i < comps; ++i) {
          const float v = value(f, i);
          is_identity = is_identity && sign * v == identity[i];
          is_constant = is_constant && v == value(0, i);
        }
      }
      const TrackKind kind = is_identity   ? TrackKind::Identity
                             : is_constant ? TrackKind::Constant
                                           : TrackKind::Animated;
      c.kinds[j * 3 + size_t(ch)] = kind;
      const size_t bytes = size_t(comps) * 4;
      if (kind == TrackKind::Identity) ++c.identity;
      if (kind == TrackKind::Constant) ++c.constant, c.constant_bytes += bytes;
      if (kind == TrackKind::Animated) ++c.animated, c.animated_bytes_per_frame += bytes;
    }
  return c;
}

}  // namespace kinema
