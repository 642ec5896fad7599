// kinema/compress/summary.h — what a compressed clip costs and holds, for reports (`kinema info`
// on a .kmc, `kinema compress`).
#pragma once

#include <cstddef>

#include "kinema/compress/compressed_clip.h"

namespace kinema {

struct CompressedClipSummary {
  /// What the clip would take uncompressed: 10 floats (translation, rotation, scale) per joint
  /// per frame, 4 bytes each.
  size_t raw_bytes = 0;
  size_t compressed_bytes = 0;  ///< the serialized clip
  double ratio = 0;             ///< raw / compressed
  /// Mean bits per stored component over the animated tracks and segments (raw floats count 32).
  double mean_bits_per_component = 0;
};

CompressedClipSummary summarize(const CompressedClip& clip);

}  // namespace kinema
