#include "kinema/skeleton/runtime_skeleton.h"

#include <atomic>
#include <limits>

#include "kinema/core/cpu_features.h"
#include "kinema/core/error.h"
#include "kinema/math/simd4.h"
#include "kinema/skeleton/skeleton.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define KINEMA_L2M_AVX2 1
#else
#define KINEMA_L2M_AVX2 0
#endif

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

namespace {

#if KINEMA_L2M_AVX2
// The AVX2 + FMA kernel (chosen at run time, see use_avx2): the same algorithm as the portable one
// below, with VEX broadcasts straight from memory (one load each instead of a load and a shuffle)
// and fused multiply-adds, so it rounds differently (within the same tolerance of the exact FK).
[[gnu::target("avx2,fma")]] void local_to_model_avx2(const int16_t* parents, int n,
                                                     const SoaTransform* local, size_t groups,
                                                     Mat4f* model, const float* root) {
  const __m128 one = _mm_set1_ps(1.0f);
  alignas(16) float affine[12][4];
  __m128 p0 = _mm_setzero_ps(), p1 = p0, p2 = p0, p3 = p0;
  for (size_t g = 0; g < groups; ++g) {
    const SoaTransform& s = local[g];
    const __m128 qx = _mm_load_ps(s.qx), qy = _mm_load_ps(s.qy), qz = _mm_load_ps(s.qz),
                 qw = _mm_load_ps(s.qw);
    const __m128 sx = _mm_load_ps(s.sx), sy = _mm_load_ps(s.sy), sz = _mm_load_ps(s.sz);
    const __m128 x2 = _mm_add_ps(qx, qx), y2 = _mm_add_ps(qy, qy), z2 = _mm_add_ps(qz, qz);
    const __m128 xx = _mm_mul_ps(qx, x2), yy = _mm_mul_ps(qy, y2), zz = _mm_mul_ps(qz, z2);
    const __m128 xy = _mm_mul_ps(qx, y2), xz = _mm_mul_ps(qx, z2), yz = _mm_mul_ps(qy, z2);
    const __m128 wx = _mm_mul_ps(qw, x2), wy = _mm_mul_ps(qw, y2), wz = _mm_mul_ps(qw, z2);
    _mm_store_ps(affine[0], _mm_mul_ps(_mm_sub_ps(one, _mm_add_ps(yy, zz)), sx));
    _mm_store_ps(affine[1], _mm_mul_ps(_mm_add_ps(xy, wz), sx));
    _mm_store_ps(affine[2], _mm_mul_ps(_mm_sub_ps(xz, wy), sx));
    _mm_store_ps(affine[3], _mm_mul_ps(_mm_sub_ps(xy, wz), sy));
    _mm_store_ps(affine[4], _mm_mul_ps(_mm_sub_ps(one, _mm_add_ps(xx, zz)), sy));
    _mm_store_ps(affine[5], _mm_mul_ps(_mm_add_ps(yz, wx), sy));
    _mm_store_ps(affine[6], _mm_mul_ps(_mm_add_ps(xz, wy), sz));
    _mm_store_ps(affine[7], _mm_mul_ps(_mm_sub_ps(yz, wx), sz));
    _mm_store_ps(affine[8], _mm_mul_ps(_mm_sub_ps(one, _mm_add_ps(xx, yy)), sz));
    _mm_store_ps(affine[9], _mm_load_ps(s.tx));
    _mm_store_ps(affine[10], _mm_load_ps(s.ty));
    _mm_store_ps(affine[11], _mm_load_ps(s.tz));
    const int first = static_cast<int>(g) * 4;
    const int lanes = n - first < 4 ? n - first : 4;
    for (int l = 0; l < lanes; ++l) {
      const int j = first + l;
      const int p = parents[j];
      if (p != j - 1 || j == 0) {
        const float* pm = p < 0 ? root : model[p].m.data();
        p0 = _mm_loadu_ps(pm), p1 = _mm_loadu_ps(pm + 4), p2 = _mm_loadu_ps(pm + 8),
        p3 = _mm_loadu_ps(pm + 12);
      }
      // Column c of parent·local = P·(local column c), as a chain of fused multiply-adds.
      const __m128 c0 = _mm_fmadd_ps(p1, _mm_broadcast_ss(&affine[1][l]),
                                     _mm_fmadd_ps(p0, _mm_broadcast_ss(&affine[0][l]),
                                                  _mm_mul_ps(p2, _mm_broadcast_ss(&affine[2][l]))));
      const __m128 c1 = _mm_fmadd_ps(p1, _mm_broadcast_ss(&affine[4][l]),
                                     _mm_fmadd_ps(p0, _mm_broadcast_ss(&affine[3][l]),
                                                  _mm_mul_ps(p2, _mm_broadcast_ss(&affine[5][l]))));
      const __m128 c2 = _mm_fmadd_ps(p1, _mm_broadcast_ss(&affine[7][l]),
                                     _mm_fmadd_ps(p0, _mm_broadcast_ss(&affine[6][l]),
                                                  _mm_mul_ps(p2, _mm_broadcast_ss(&affine[8][l]))));
      const __m128 c3 =
          _mm_fmadd_ps(p1, _mm_broadcast_ss(&affine[10][l]),
                       _mm_fmadd_ps(p0, _mm_broadcast_ss(&affine[9][l]),
                                    _mm_fmadd_ps(p2, _mm_broadcast_ss(&affine[11][l]), p3)));
      float* out = model[j].m.data();
      _mm_storeu_ps(out, c0), _mm_storeu_ps(out + 4, c1), _mm_storeu_ps(out + 8, c2),
          _mm_storeu_ps(out + 12, c3);
      p0 = c0, p1 = c1, p2 = c2, p3 = c3;
    }
  }
}

bool cpu_has_avx2_fma() { return cpu_features().avx2_fma(); }
#else
bool cpu_has_avx2_fma() { return false; }
#endif

// -1: not asked yet; 0: the portable kernel; 1: AVX2 + FMA.
std::atomic<int> g_use_avx2{-1};

bool use_avx2() {
  int use = g_use_avx2.load(std::memory_order_relaxed);
  if (use < 0) {
    use = cpu_has_avx2_fma() ? 1 : 0;
    g_use_avx2.store(use, std::memory_order_relaxed);
  }
  return use == 1;
}

}  // namespace

bool set_local_to_model_avx2(bool allowed) {
  g_use_avx2.store(allowed && cpu_has_avx2_fma() ? 1 : 0, std::memory_order_relaxed);
  return use_avx2();
}

bool local_to_model(const RuntimeSkeleton& skeleton, std::span<const SoaTransform> local,
                    std::span<Mat4f> model, const Mat4f& root) {
  using namespace simd;
  const int n = skeleton.joint_count();
  if (local.size() != static_cast<size_t>(skeleton.soa_count()) ||
      model.size() != static_cast<size_t>(n))
    return false;
  const int16_t* parents = skeleton.parents().data();
#if KINEMA_L2M_AVX2
  if (use_avx2()) {
    local_to_model_avx2(parents, n, local.data(), local.size(), model.data(), root.m.data());
    return true;
  }
#endif
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
