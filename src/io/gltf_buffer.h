// src/io/gltf_buffer.h — what the glTF writers (gltf_write.cpp, vrma.cpp) share: the single
// output buffer with its views and accessors, float packing of key values, and animation
// channels.
#pragma once

#include <tiny_gltf.h>

#include <map>
#include <span>
#include <vector>

#include "kinema/clip/clip.h"

namespace kinema::gltf_detail {

/// Appends data to the single output buffer.
class Builder {
 public:
  explicit Builder(tinygltf::Model& m) : m_(m) {}
  std::vector<unsigned char> bin;

  /// A bufferView of `bytes` (4-byte aligned); `target` 0 for none (animation data).
  int view(const void* data, size_t bytes, int target) {
    while (bin.size() % 4) bin.push_back(0);
    tinygltf::BufferView bv;
    bv.buffer = 0;
    bv.byteOffset = bin.size();
    bv.byteLength = bytes;
    bv.target = target;
    const auto* p = static_cast<const unsigned char*>(data);
    bin.insert(bin.end(), p, p + bytes);
    m_.bufferViews.push_back(bv);
    return static_cast<int>(m_.bufferViews.size()) - 1;
  }

  int accessor(int view, int component_type, int type, size_t count, std::vector<double> min = {},
               std::vector<double> max = {}) {
    tinygltf::Accessor a;
    a.bufferView = view;
    a.byteOffset = 0;
    a.normalized = false;
    a.componentType = component_type;
    a.type = type;
    a.count = count;
    a.minValues = std::move(min);
    a.maxValues = std::move(max);
    m_.accessors.push_back(a);
    return static_cast<int>(m_.accessors.size()) - 1;
  }

  /// Float accessor of `comps` components per element, with min/max when asked.
  int floats(const std::vector<float>& v, int type, int comps, int target, bool minmax) {
    const size_t count = v.size() / static_cast<size_t>(comps);
    std::vector<double> lo, hi;
    if (minmax && count > 0) {
      lo.assign(static_cast<size_t>(comps), std::numeric_limits<double>::infinity());
      hi.assign(static_cast<size_t>(comps), -std::numeric_limits<double>::infinity());
      for (size_t i = 0; i < v.size(); ++i) {
        const size_t c = i % static_cast<size_t>(comps);
        lo[c] = std::min(lo[c], double(v[i]));
        hi[c] = std::max(hi[c], double(v[i]));
      }
    }
    const int bv = view(v.data(), v.size() * sizeof(float), target);
    return accessor(bv, TINYGLTF_COMPONENT_TYPE_FLOAT, type, count, lo, hi);
  }

  /// Animation input accessors are shared between channels with identical key times.
  int times(const std::vector<double>& t) {
    auto it = times_.find(t);
    if (it != times_.end()) return it->second;
    std::vector<float> f(t.begin(), t.end());
    for (size_t i = 1; i < f.size(); ++i)  // keep strictly increasing after rounding to float
      if (!(f[i] > f[i - 1]))
        f[i] = std::nextafter(f[i - 1], std::numeric_limits<float>::infinity());
    const int a = floats(f, TINYGLTF_TYPE_SCALAR, 1, 0, true);
    times_.emplace(t, a);
    return a;
  }

 private:
  tinygltf::Model& m_;
  std::map<std::vector<double>, int> times_;
};

/// Floats of Vec3 values, x y z each.
std::vector<float> vec3_floats(const std::vector<Vec3>& v);

/// Floats of unit quaternions (x y z w), renormalized in float so that the validator's
/// unit-length check passes.
std::vector<float> quat_floats(std::span<const Quat> qs);

/// The same for a key track: CUBICSPLINE tangents are written as they are.
std::vector<float> quat_floats(const Keyframes<Quat>& k);

/// "STEP", "LINEAR" or "CUBICSPLINE".
const char* interp_name(Interpolation i);

/// A sampler (input key times, output values) and the channel that drives `path` of `node`.
void add_channel(tinygltf::Animation& anim, int input, int output, Interpolation interpolation,
                 int node, const char* path);

}  // namespace kinema::gltf_detail
