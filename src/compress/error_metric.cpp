// Resampling, the lossless classification and the object-space error metric (virtual vertices).
#include <algorithm>
#include <cmath>

#include "error_metric.h"
#include "kinema/compress/compress.h"
#include "kinema/core/error.h"
#include "kinema/skeleton/skeleton.h"

namespace kinema {

namespace compress_detail {

void vertices(const Transform& model, double d, Vec3 out[3]) {
  out[0] = model.transform_point({d, 0, 0});
  out[1] = model.transform_point({0, d, 0});
  out[2] = model.transform_point({0, 0, d});
}

double vertex_error(const Vec3 a[3], const Vec3 b[3]) {
  return std::max({distance(a[0], b[0]), distance(a[1], b[1]), distance(a[2], b[2])});
}

void model_pose(std::span<const int> parents, std::span<const Transform> local,
                std::span<Transform> model) {
  for (size_t j = 0; j < local.size(); ++j) {
    const int p = parents[j];
    model[j] = p < 0 ? local[j] : model[size_t(p)] * local[j];
  }
}

Transform blend(const Transform& a, const Transform& b, double t) {
  return {lerp(a.translation, b.translation, t), nlerp(a.rotation, b.rotation, t),
          lerp(a.scale, b.scale, t)};
}

double percentile99(std::vector<float>& v) {
  if (v.empty()) return 0;
  const size_t k = std::min(v.size() - 1, size_t(std::floor(0.99 * double(v.size() - 1))));
  std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(k), v.end());
  return v[k];
}

}  // namespace compress_detail

using namespace compress_detail;

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

double pose_error(const Skeleton& skeleton, std::span<const Transform> a,
                  std::span<const Transform> b, double vertex_distance,
                  std::span<double> per_joint) {
  const size_t n = size_t(skeleton.joint_count());
  if (a.size() != n || b.size() != n || (!per_joint.empty() && per_joint.size() != n))
    throw Error("", "pose_error", "pose sizes do not match the skeleton");
  std::vector<Transform> ma(n), mb(n);
  model_pose(skeleton.parents(), a, ma);
  model_pose(skeleton.parents(), b, mb);
  double worst = 0;
  for (size_t j = 0; j < n; ++j) {
    Vec3 va[3], vb[3];
    vertices(ma[j], vertex_distance, va);
    vertices(mb[j], vertex_distance, vb);
    const double e = vertex_error(va, vb);
    if (!per_joint.empty()) per_joint[j] = e;
    worst = std::max(worst, e);
  }
  return worst;
}

ErrorStats measure_error(const Clip& clip, const Skeleton& skeleton,
                         const CompressedClip& compressed, double vertex_distance) {
  double rate = 0;
  const std::vector<Transform> ref =
      resample_frames(clip, skeleton, compressed.sample_rate(), rate);
  const int n = skeleton.joint_count();
  if (compressed.joint_count() != n || ref.size() / size_t(n) != size_t(compressed.frame_count()))
    throw Error(clip.name, "measure_error", "the compressed clip does not match this clip");
  return verify_clip(skeleton.parents(), ref, compressed, vertex_distance, nullptr);
}

namespace compress_detail {

ErrorStats verify_clip(std::span<const int> parents, std::span<const Transform> ref,
                       const CompressedClip& c, double d,
                       const std::function<void(int frame, bool midpoint, int joint)>& over,
                       double bound) {
  const size_t n = parents.size();
  const int frames = c.frame_count();
  std::vector<SoaTransform> soa(size_t(c.soa_count()));
  std::vector<Transformf> aos(n);
  std::vector<Transform> local(n), model(n), ref_local(n), ref_model(n);
  std::vector<float> errors;
  errors.reserve(n * size_t(2 * frames - 1));
  ErrorStats st;
  for (int f = 0; f < frames; ++f)
    for (int mid = 0; mid < (f + 1 < frames ? 2 : 1); ++mid) {
      sample_frame(c, f, mid ? 0.5f : 0.0f, soa);
      to_aos(soa, aos);
      for (size_t j = 0; j < n; ++j) {
        local[j] = Transform(aos[j]);
        const Transform& r0 = ref[size_t(f) * n + j];
        ref_local[j] = mid ? blend(r0, ref[size_t(f + 1) * n + j], 0.5) : r0;
      }
      model_pose(parents, local, model);
      model_pose(parents, ref_local, ref_model);
      for (size_t j = 0; j < n; ++j) {
        Vec3 a[3], b[3];
        vertices(model[j], d, a);
        vertices(ref_model[j], d, b);
        const double e = vertex_error(a, b);
        errors.push_back(float(e));
        if (e > st.max) {
          st.max = e;
          st.worst_joint = int(j);
          st.worst_time = (f + 0.5 * mid) / double(c.sample_rate());
        }
        if (over && e > bound) over(f, mid != 0, int(j));
      }
    }
  st.samples = errors.size();
  st.p99 = percentile99(errors);
  return st;
}

}  // namespace compress_detail

}  // namespace kinema
