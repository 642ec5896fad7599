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
// GCC 12's AVX-512 intrinsics (_mm512_broadcast_f32x4, _mm512_shuffle_f32x4, _mm512_permute_ps)
// pass an _mm512_undefined_ps() that -Wmaybe-uninitialized takes for an uninitialized read (GCC
// bug 105593, fixed in GCC 13).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

// The affine part of a group's four local matrices, SoA: a[column * 3 + row][lane], the
// translation in a[9..11]. The same operations as the portable kernel's (x + x is x · 2).
[[gnu::target("avx2,fma"), gnu::always_inline]] inline void affine_columns(const SoaTransform& s,
                                                                           __m128 (&a)[12]) {
  const __m128 one = _mm_set1_ps(1.0f);
  const __m128 qx = _mm_load_ps(s.qx), qy = _mm_load_ps(s.qy), qz = _mm_load_ps(s.qz),
               qw = _mm_load_ps(s.qw);
  const __m128 sx = _mm_load_ps(s.sx), sy = _mm_load_ps(s.sy), sz = _mm_load_ps(s.sz);
  const __m128 x2 = _mm_add_ps(qx, qx), y2 = _mm_add_ps(qy, qy), z2 = _mm_add_ps(qz, qz);
  const __m128 xx = _mm_mul_ps(qx, x2), yy = _mm_mul_ps(qy, y2), zz = _mm_mul_ps(qz, z2);
  const __m128 xy = _mm_mul_ps(qx, y2), xz = _mm_mul_ps(qx, z2), yz = _mm_mul_ps(qy, z2);
  const __m128 wx = _mm_mul_ps(qw, x2), wy = _mm_mul_ps(qw, y2), wz = _mm_mul_ps(qw, z2);
  a[0] = _mm_mul_ps(_mm_sub_ps(one, _mm_add_ps(yy, zz)), sx);
  a[1] = _mm_mul_ps(_mm_add_ps(xy, wz), sx);
  a[2] = _mm_mul_ps(_mm_sub_ps(xz, wy), sx);
  a[3] = _mm_mul_ps(_mm_sub_ps(xy, wz), sy);
  a[4] = _mm_mul_ps(_mm_sub_ps(one, _mm_add_ps(xx, zz)), sy);
  a[5] = _mm_mul_ps(_mm_add_ps(yz, wx), sy);
  a[6] = _mm_mul_ps(_mm_add_ps(xz, wy), sz);
  a[7] = _mm_mul_ps(_mm_sub_ps(yz, wx), sz);
  a[8] = _mm_mul_ps(_mm_sub_ps(one, _mm_add_ps(xx, yy)), sz);
  a[9] = _mm_load_ps(s.tx);
  a[10] = _mm_load_ps(s.ty);
  a[11] = _mm_load_ps(s.tz);
}

// Lane L of v in every lane: an in-register shuffle. (Broadcasting it from a stack copy of the
// group, as this kernel did first, reads four bytes out of a sixteen-byte store just made; Zen 5
// ran the whole job 1.3× slower that way.)
template <int L>
[[gnu::target("avx2,fma"), gnu::always_inline]] inline __m128 lane(__m128 v) {
  return _mm_permute_ps(v, _MM_SHUFFLE(L, L, L, L));
}

// Joint j = lane L of its group: model[j] from its parent's matrix (columns p0..p3: the previous
// joint's, left in registers, unless the parent is another joint or the root) and a[].
template <int L>
[[gnu::target("avx2,fma"), gnu::always_inline]] inline void model_joint_avx2(
    const int16_t* parents, int j, const __m128 (&a)[12], Mat4f* model, const float* root,
    __m128& p0, __m128& p1, __m128& p2, __m128& p3) {
  const int p = parents[j];
  if (p != j - 1 || j == 0) {
    const float* pm = p < 0 ? root : model[p].m.data();
    p0 = _mm_loadu_ps(pm), p1 = _mm_loadu_ps(pm + 4), p2 = _mm_loadu_ps(pm + 8),
    p3 = _mm_loadu_ps(pm + 12);
  }
  // Column c of parent·local = P·(local column c), as a chain of fused multiply-adds.
  const __m128 c0 = _mm_fmadd_ps(p1, lane<L>(a[1]),
                                 _mm_fmadd_ps(p0, lane<L>(a[0]), _mm_mul_ps(p2, lane<L>(a[2]))));
  const __m128 c1 = _mm_fmadd_ps(p1, lane<L>(a[4]),
                                 _mm_fmadd_ps(p0, lane<L>(a[3]), _mm_mul_ps(p2, lane<L>(a[5]))));
  const __m128 c2 = _mm_fmadd_ps(p1, lane<L>(a[7]),
                                 _mm_fmadd_ps(p0, lane<L>(a[6]), _mm_mul_ps(p2, lane<L>(a[8]))));
  const __m128 c3 = _mm_fmadd_ps(
      p1, lane<L>(a[10]), _mm_fmadd_ps(p0, lane<L>(a[9]), _mm_fmadd_ps(p2, lane<L>(a[11]), p3)));
  float* out = model[j].m.data();
  _mm_storeu_ps(out, c0), _mm_storeu_ps(out + 4, c1), _mm_storeu_ps(out + 8, c2),
      _mm_storeu_ps(out + 12, c3);
  p0 = c0, p1 = c1, p2 = c2, p3 = c3;
}

// The AVX2 + FMA kernel (chosen at run time, see kernel()): the portable kernel's algorithm with
// fused multiply-adds, so it rounds differently (within the same tolerance of the exact FK).
[[gnu::target("avx2,fma")]] void local_to_model_avx2(const int16_t* parents, int n,
                                                     const SoaTransform* local, size_t groups,
                                                     Mat4f* model, const float* root) {
  __m128 p0 = _mm_setzero_ps(), p1 = p0, p2 = p0, p3 = p0;
  for (size_t g = 0; g < groups; ++g) {
    __m128 a[12];
    affine_columns(local[g], a);
    const int first = static_cast<int>(g) * 4;
    const int lanes = n - first < 4 ? n - first : 4;
    model_joint_avx2<0>(parents, first, a, model, root, p0, p1, p2, p3);
    if (lanes > 1) model_joint_avx2<1>(parents, first + 1, a, model, root, p0, p1, p2, p3);
    if (lanes > 2) model_joint_avx2<2>(parents, first + 2, a, model, root, p0, p1, p2, p3);
    if (lanes > 3) model_joint_avx2<3>(parents, first + 3, a, model, root, p0, p1, p2, p3);
  }
}

// Four 128-bit blocks in one 512-bit register, b0 lowest.
[[gnu::target("avx512f,avx2,fma"), gnu::always_inline]] inline __m512 blocks(__m128 b0, __m128 b1,
                                                                             __m128 b2, __m128 b3) {
  return _mm512_insertf32x4(
      _mm512_insertf32x4(_mm512_insertf32x4(_mm512_zextps128_ps512(b0), b1, 1), b2, 2), b3, 3);
}

// Lane L of each 128-bit block of v, in every lane of that block (an in-block shuffle).
template <int L>
[[gnu::target("avx512f,avx2,fma"), gnu::always_inline]] inline __m512 lane512(__m512 v) {
  return _mm512_permute_ps(v, _MM_SHUFFLE(L, L, L, L));
}

// Joint j = lane L of its group on 512-bit registers: a model matrix is one register (column c in
// block c), and row k of the group's local columns is r_k (block c: entry (k, c) of each lane).
// Three multiply-adds give the four columns, against twelve on 128-bit registers.
template <int L>
[[gnu::target("avx512f,avx2,fma"), gnu::always_inline]] inline void model_joint_avx512(
    const int16_t* parents, int j, __m512 r0, __m512 r1, __m512 r2, Mat4f* model, const float* root,
    __m512& previous) {
  const int p = parents[j];
  // The parent's columns 0, 1 and 2, each in all four blocks, and its column 3 in block 3 only.
  __m512 pc0, pc1, pc2, pc3;
  if (p != j - 1 || j == 0) {
    const float* pm = p < 0 ? root : model[p].m.data();
    pc0 = _mm512_broadcast_f32x4(_mm_loadu_ps(pm));
    pc1 = _mm512_broadcast_f32x4(_mm_loadu_ps(pm + 4));
    pc2 = _mm512_broadcast_f32x4(_mm_loadu_ps(pm + 8));
    pc3 = _mm512_maskz_loadu_ps(0xF000, pm);
  } else {
    pc0 = _mm512_shuffle_f32x4(previous, previous, 0x00);
    pc1 = _mm512_shuffle_f32x4(previous, previous, 0x55);
    pc2 = _mm512_shuffle_f32x4(previous, previous, 0xAA);
    pc3 = _mm512_maskz_mov_ps(0xF000, previous);
  }
  // (pc0·r0 + pc1·r1) + (pc2·r2 + pc3): three operations deep on the parent instead of four
  // (7 % faster than one chain of multiply-adds on Zen 5).
  const __m512 m =
      _mm512_add_ps(_mm512_fmadd_ps(pc0, lane512<L>(r0), _mm512_mul_ps(pc1, lane512<L>(r1))),
                    _mm512_fmadd_ps(pc2, lane512<L>(r2), pc3));
  _mm512_storeu_ps(model[j].m.data(), m);
  previous = m;
}

// The AVX-512 kernel (chosen at run time where the CPU has AVX-512F): the same products as the
// AVX2 one, summed in another order, so it rounds differently again (same tolerance).
[[gnu::target("avx512f,avx2,fma")]] void local_to_model_avx512(const int16_t* parents, int n,
                                                               const SoaTransform* local,
                                                               size_t groups, Mat4f* model,
                                                               const float* root) {
  __m512 previous = _mm512_setzero_ps();
  for (size_t g = 0; g < groups; ++g) {
    __m128 a[12];
    affine_columns(local[g], a);
    const __m512 r0 = blocks(a[0], a[3], a[6], a[9]), r1 = blocks(a[1], a[4], a[7], a[10]),
                 r2 = blocks(a[2], a[5], a[8], a[11]);
    const int first = static_cast<int>(g) * 4;
    const int lanes = n - first < 4 ? n - first : 4;
    model_joint_avx512<0>(parents, first, r0, r1, r2, model, root, previous);
    if (lanes > 1) model_joint_avx512<1>(parents, first + 1, r0, r1, r2, model, root, previous);
    if (lanes > 2) model_joint_avx512<2>(parents, first + 2, r0, r1, r2, model, root, previous);
    if (lanes > 3) model_joint_avx512<3>(parents, first + 3, r0, r1, r2, model, root, previous);
  }
}

bool cpu_has_avx2_fma() { return cpu_features().avx2_fma(); }
bool cpu_has_avx512f() { return cpu_features().avx2_fma() && cpu_features().avx512f; }
#else
bool cpu_has_avx2_fma() { return false; }
bool cpu_has_avx512f() { return false; }
#endif

// The kernel local_to_model runs (set_local_to_model_avx2 / _avx512 narrow it).
constinit KernelChoice g_kernels{&cpu_has_avx2_fma, &cpu_has_avx512f};

int kernel() { return g_kernels.kernel(); }

}  // namespace

bool set_local_to_model_avx2(bool allowed) { return g_kernels.allow_avx2(allowed); }

bool set_local_to_model_avx512(bool allowed) { return g_kernels.allow_avx512(allowed); }

const char* local_to_model_kernel() {
  switch (kernel()) {
    case 2:
      return "avx512f";
    case 1:
      return "avx2+fma";
    default:
      return KINEMA_SIMD_SSE ? "sse" : "portable";
  }
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
  switch (kernel()) {
    case 2:
      local_to_model_avx512(parents, n, local.data(), local.size(), model.data(), root.m.data());
      return true;
    case 1:
      local_to_model_avx2(parents, n, local.data(), local.size(), model.data(), root.m.data());
      return true;
    default:
      break;
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
