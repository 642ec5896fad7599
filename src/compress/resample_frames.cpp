// Resampling a raw clip at the uniform rate compress() works on (kinema/compress/compress.h):
// whole frames over the duration, rotations normalized and kept in one hemisphere from frame to
// frame so that the compressor's ranges and the decoder's interpolation see continuous curves.
#include <algorithm>
#include <cmath>

#include "kinema/compress/compress.h"
#include "kinema/core/error.h"
#include "kinema/skeleton/skeleton.h"

namespace kinema {

std::vector<Transform> resample_frames(const Clip& clip, const Skeleton& skeleton,
                                       double sample_rate, double& rate) {
  clip.validate(skeleton.joint_count(), clip.name);
  if (!std::isfinite(clip.duration) || !(clip.duration > 0))
    throw Error(clip.name, "duration", "a compressed clip needs a positive, finite duration");
  rate = sample_rate > 0 ? sample_rate : sample_rate_or(clip);
  if (!std::isfinite(rate) || rate <= 0)
    throw Error(clip.name, "sample_rate", "sample rate must be finite and positive");
  const int n = skeleton.joint_count();
  const int frames = std::max(2, int(std::lround(clip.duration * rate)) + 1);
  rate = (frames - 1) / clip.duration;
  std::vector<Transform> poses(size_t(frames) * size_t(n));
  for (int f = 0; f < frames; ++f) {
    const double t = std::min(clip.duration, f / rate);
    std::span<Transform> pose(poses.data() + size_t(f) * size_t(n), size_t(n));
    sample_pose(clip, skeleton, t, WrapMode::Clamp, pose);
    for (int j = 0; j < n; ++j) {
      Quat& q = pose[size_t(j)].rotation;
      q = normalize(q);
      if (f > 0 && dot(q, poses[size_t(f - 1) * size_t(n) + size_t(j)].rotation) < 0) q = -q;
    }
  }
  return poses;
}

}  // namespace kinema
