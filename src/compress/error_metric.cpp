// The object-space error metric of compression: virtual vertices at a distance along each
// joint's local axes, composed down the chain, compared between two poses (pose_error) or between
// a compressed clip and its source at every frame and midpoint (measure_error, verify_clip).
#include <algorithm>
#include <cmath>

#include "error_metric.h"
#include "kinema/compress/compress.h"
#include "kinema/core/error.h"
#include "kinema/skeleton/skeleton.h"

namespace kinema {

namespace compress_detail {

// translation + rotation · (scale ∘ d·axis), with the rotation's three columns formed once
// (the search calls this for every joint at every sample it tries: a third of compression time
// when it rotated three vectors by the quaternion). Model rotations are unit up to rounding.
void vertices(const Transform& model, double d, Vec3 out[3]) {
  const Quat& q = model.rotation;
  const double xx = q.x * q.x, yy = q.y * q.y, zz = q.z * q.z;
  const double xy = q.x * q.y, xz = q.x * q.z, yz = q.y * q.z;
  const double wx = q.w * q.x, wy = q.w * q.y, wz = q.w * q.z;
  const Vec3 cx{1 - 2 * (yy + zz), 2 * (xy + wz), 2 * (xz - wy)};
  const Vec3 cy{2 * (xy - wz), 1 - 2 * (xx + zz), 2 * (yz + wx)};
  const Vec3 cz{2 * (xz + wy), 2 * (yz - wx), 1 - 2 * (xx + yy)};
  out[0] = model.translation + cx * (d * model.scale.x);
  out[1] = model.translation + cy * (d * model.scale.y);
  out[2] = model.translation + cz * (d * model.scale.z);
}

// The largest of the three distances, with one square root (sqrt is monotonic and correctly
// rounded: the same value as the largest of three roots).
double vertex_error(const Vec3 a[3], const Vec3 b[3]) {
  const Vec3 d0 = a[0] - b[0], d1 = a[1] - b[1], d2 = a[2] - b[2];
  return std::sqrt(std::max({dot(d0, d0), dot(d1, d1), dot(d2, d2)}));
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
