#include "kinema/lod/update_lod.h"

#include <algorithm>
#include <cmath>

namespace kinema {

float lod_update_hz(std::span<const LodLevel> levels, float distance, float frame_hz) {
  if (!(distance >= 0)) return frame_hz;  // NaN or negative: treat as near
  float best_distance = -1, rate = frame_hz;
  for (const LodLevel& level : levels)
    if (level.update_hz > 0 && distance >= level.min_distance &&
        level.min_distance > best_distance) {
      best_distance = level.min_distance;
      rate = level.update_hz;
    }
  return std::min(rate, frame_hz);
}

int lod_period(float update_hz, float frame_hz) {
  if (!(update_hz > 0) || !(frame_hz > 0) || update_hz >= frame_hz) return 1;
  return std::max(1, static_cast<int>(std::lround(frame_hz / update_hz)));
}

}  // namespace kinema
