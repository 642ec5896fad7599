#include "kinema/skeleton/runtime_skeleton.h"

#include <limits>

#include "kinema/core/error.h"
#include "kinema/math/simd4.h"
#include "kinema/skeleton/skeleton.h"

namespace kinema {

RuntimeSkeleton RuntimeSkeleton::build(const Skeleton& skeleton) {
  const int n = skeleton.joint_count();
  if (n > std::numeric_limits<int16_t>::max())
    throw Error({}, {},
                "skeleton has " + std::to_string(n) + " joints; the runtime supports " +
                    std::to_string(std::numeric_limits<int16_t>::max()));
  RuntimeSkeleton r;
  r.parents_.resize(static_cast<size_t>(n));
  r.names_.resize(static_cast<size_t>(n));
  r.rest_.assign(static_cast<size_t>(kinema::soa_count(n)), SoaTransform::identity());
  for (int j = 0; j < n; ++j) {
    r.parents_[static_cast<size_t>(j)] = static_cast<int16_t>(skeleton.parent(j));
    r.names_[static_cast<size_t>(j)] = skeleton.joint(j).name;
    set_joint(r.rest_, j, Transformf(skeleton.joint(j).rest));
  }
  return r;
}

int RuntimeSkeleton::find(std::string_view name) const {
  for (size_t j = 0; j < names_.size(); ++j)
    if (names_[j] == name) return static_cast<int>(j);
  return -1;
}

size_t RuntimeSkeleton::memory_bytes() const {
  size_t bytes = parents_.capacity() * sizeof(int16_t) + rest_.capacity() * sizeof(SoaTransform) +
                 names_.capacity() * sizeof(std::string);
  for (const std::string& s : names_) bytes += s.capacity() > 15 ? s.capacity() + 1 : 0;
  return bytes;
}

bool local_to_model(const RuntimeSkeleton& skeleton, std::span<const SoaTransform> local,
                    std::span<Mat4f> model, const Mat4f& root) {
  using namespace simd;
  const int n = skeleton.joint_count();
  if (local.size() != static_cast<size_t>(skeleton.soa_count()) ||
      model.size() != static_cast<size_t>(n))
    return false;
  const int16_t* parents = skeleton.parents().data();
  const F4 one = splat(1.0f), two = splat(2.0f);
  // The affine part of four local matrices, SoA: element [k][lane], k = column*3 + row.
  alignas(16) float affine[12][4];
  F4 p0 = zero(), p1 = zero(), p2 = zero(), p3 = zero();  // the previous joint's model matrix
  for (size_t g = 0; g < local.size(); ++g) {
    const SoaTransform& s = local[g];
    const F4 qx = load(s.qx), qy = load(s.qy), qz = load(s.qz), qw = load(s.qw);
    const F4 sx = load(s.sx), sy = load(s.sy), sz = load(s.sz);
    const F4 x2 = qx * two, y2 = qy * two, z2 = qz * two;
    const F4 xx = qx * x2, yy = qy * y2, zz = qz * z2;
    const F4 xy = qx * y2, xz = qx * z2, yz = qy * z2;
    const F4 wx = qw * x2, wy = qw * y2, wz = qw * z2;
    store(affine[0], (one - (yy + zz)) * sx);
    store(affine[1], (xy + wz) * sx);
    store(affine[2], (xz - wy) * sx);
    store(affine[3], (xy - wz) * sy);
    store(affine[4], (one - (xx + zz)) * sy);
    store(affine[5], (yz + wx) * sy);
    store(affine[6], (xz + wy) * sz);
    store(affine[7], (yz - wx) * sz);
    store(affine[8], (one - (xx + yy)) * sz);
    store(affine[9], load(s.tx));
    store(affine[10], load(s.ty));
    store(affine[11], load(s.tz));
    const int first = static_cast<int>(g) * 4;
    const int lanes = n - first < 4 ? n - first : 4;
    for (int l = 0; l < lanes; ++l) {
      const int j = first + l;
      const int p = parents[j];
      // A chain (parent = previous joint) takes the parent from registers: going through memory
      // would put a store-to-load forwarding delay on the critical dependency path.
      if (p != j - 1 || j == 0) {
        const float* pm = p < 0 ? root.m.data() : model[static_cast<size_t>(p)].m.data();
        p0 = loadu(pm), p1 = loadu(pm + 4), p2 = loadu(pm + 8), p3 = loadu(pm + 12);
      }
      // Column c of parent·local = P·(local column c); local's bottom row is (0, 0, 0, 1).
      const F4 c0 = (p0 * broadcast(&affine[0][l]) + p1 * broadcast(&affine[1][l])) +
                    p2 * broadcast(&affine[2][l]);
      const F4 c1 = (p0 * broadcast(&affine[3][l]) + p1 * broadcast(&affine[4][l])) +
                    p2 * broadcast(&affine[5][l]);
      const F4 c2 = (p0 * broadcast(&affine[6][l]) + p1 * broadcast(&affine[7][l])) +
                    p2 * broadcast(&affine[8][l]);
      const F4 c3 = (p0 * broadcast(&affine[9][l]) + p1 * broadcast(&affine[10][l])) +
                    (p2 * broadcast(&affine[11][l]) + p3);
      float* out = model[static_cast<size_t>(j)].m.data();
      storeu(out, c0), storeu(out + 4, c1), storeu(out + 8, c2), storeu(out + 12, c3);
      p0 = c0, p1 = c1, p2 = c2, p3 = c3;
    }
  }
  return true;
}

std::vector<float> subtree_mask(const RuntimeSkeleton& skeleton, int joint,
                                std::span<const float> ramp, float weight) {
  const int n = skeleton.joint_count();
  std::vector<float> mask(static_cast<size_t>(n), 0.0f);
  if (joint < 0 || joint >= n) return mask;
  // Depth below `joint`, or -1 outside its subtree; parents come first, so one pass suffices.
  std::vector<int> depth(static_cast<size_t>(n), -1);
  depth[static_cast<size_t>(joint)] = 0;
  for (int j = joint + 1; j < n; ++j) {
    const int p = skeleton.parents()[static_cast<size_t>(j)];
    if (p >= 0 && depth[static_cast<size_t>(p)] >= 0)
      depth[static_cast<size_t>(j)] = depth[static_cast<size_t>(p)] + 1;
  }
  for (int j = joint; j < n; ++j) {
    const int d = depth[static_cast<size_t>(j)];
    if (d < 0) continue;
    mask[static_cast<size_t>(j)] =
        static_cast<size_t>(d) < ramp.size() ? ramp[static_cast<size_t>(d)] : weight;
  }
  return mask;
}

}  // namespace kinema
