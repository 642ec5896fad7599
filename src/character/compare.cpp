// How far two animations of a character are apart (kinema/character/compare.h).
#include "kinema/character/compare.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

namespace kinema {

JointDistance max_joint_distance(const Asset& a, int clip_a, const Asset& b, int clip_b,
                                 const std::function<void(int, int)>& progress) {
  const Clip& ca = a.clips[static_cast<size_t>(clip_a)];
  const Clip& cb = b.clips[static_cast<size_t>(clip_b)];
  std::vector<std::pair<int, int>> pairs;
  for (int i = 0; i < a.skeleton.joint_count(); ++i)
    if (const int j = b.skeleton.find(a.skeleton.joint(i).name); j >= 0) pairs.emplace_back(i, j);
  JointDistance result;
  result.joints = static_cast<int>(pairs.size());
  const double inferred = infer_frame_rate(ca);
  const double rate = inferred > 0 ? inferred : kDefaultSampleRate;
  result.frames = std::max(1, static_cast<int>(std::lround(ca.duration * rate)) + 1);

  std::vector<Transform> la(static_cast<size_t>(a.skeleton.joint_count()));
  std::vector<Transform> lb(static_cast<size_t>(b.skeleton.joint_count()));
  std::vector<Mat4> ma(la.size()), mb(lb.size());
  for (int f = 0; f < result.frames; ++f) {
    const double t = std::min(ca.duration, f / rate);
    sample_pose(ca, a.skeleton, t, WrapMode::Clamp, la);
    sample_pose(cb, b.skeleton, t, WrapMode::Clamp, lb);
    local_to_model(a.skeleton.parents(), la, ma);
    local_to_model(b.skeleton.parents(), lb, mb);
    for (const auto& [i, j] : pairs) {
      const double d = distance(ma[static_cast<size_t>(i)].translation_part(),
                                mb[static_cast<size_t>(j)].translation_part());
      result.max =
          std::isnan(d) ? std::numeric_limits<double>::infinity() : std::max(result.max, d);
    }
    if (progress) progress(f + 1, result.frames);
  }
  return result;
}

}  // namespace kinema
