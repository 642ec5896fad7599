// The glTF writers' shared output buffer and animation channels (see gltf_buffer.h).
#include "gltf_buffer.h"

#include <cmath>

namespace kinema::gltf_detail {

std::vector<float> vec3_floats(const std::vector<Vec3>& v) {
  std::vector<float> f;
  f.reserve(3 * v.size());
  for (const auto& x : v) f.insert(f.end(), {float(x.x), float(x.y), float(x.z)});
  return f;
}

namespace {

void append_quat(std::vector<float>& f, const Quat& value, bool tangent) {
  const Quat q = tangent ? value : normalize(value);
  Quatf qf{float(q.x), float(q.y), float(q.z), float(q.w)};
  if (!tangent) {  // renormalize in float so the validator's unit-length check passes
    const float len = std::sqrt(qf.x * qf.x + qf.y * qf.y + qf.z * qf.z + qf.w * qf.w);
    qf = qf * (1.f / len);
  }
  f.insert(f.end(), {qf.x, qf.y, qf.z, qf.w});
}

}  // namespace

std::vector<float> quat_floats(std::span<const Quat> qs) {
  std::vector<float> f;
  f.reserve(4 * qs.size());
  for (const Quat& q : qs) append_quat(f, q, false);
  return f;
}

std::vector<float> quat_floats(const Keyframes<Quat>& k) {
  std::vector<float> f;
  f.reserve(4 * k.values.size());
  for (size_t i = 0; i < k.values.size(); ++i)
    append_quat(f, k.values[i], k.interpolation == Interpolation::CubicSpline && i % 3 != 1);
  return f;
}

const char* interp_name(Interpolation i) {
  switch (i) {
    case Interpolation::Step:
      return "STEP";
    case Interpolation::CubicSpline:
      return "CUBICSPLINE";
    default:
      return "LINEAR";
  }
}

void add_channel(tinygltf::Animation& anim, int input, int output, Interpolation interpolation,
                 int node, const char* path) {
  tinygltf::AnimationSampler s;
  s.input = input;
  s.output = output;
  s.interpolation = interp_name(interpolation);
  anim.samplers.push_back(s);
  tinygltf::AnimationChannel c;
  c.sampler = static_cast<int>(anim.samplers.size()) - 1;
  c.target_node = node;
  c.target_path = path;
  anim.channels.push_back(c);
}

}  // namespace kinema::gltf_detail
