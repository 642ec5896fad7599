// What a compressed clip costs and holds (kinema/compress/summary.h).
#include "kinema/compress/summary.h"

namespace kinema {

CompressedClipSummary summarize(const CompressedClip& clip) {
  CompressedClipSummary s;
  s.raw_bytes = 40 * size_t(clip.joint_count()) * size_t(clip.frame_count());
  s.compressed_bytes = clip.size_bytes();
  s.ratio = double(s.raw_bytes) / double(s.compressed_bytes);
  double sum = 0;
  long n = 0;
  for (int seg = 0; seg < clip.segment_count(); ++seg)
    for (int t = 0; t < clip.animated_track_count(); ++t)
      for (int i = 0; i < 3; ++i, ++n) sum += clip.bit_rate(seg, t, i);
  s.mean_bits_per_component = n > 0 ? sum / double(n) : 0.0;
  return s;
}

}  // namespace kinema
