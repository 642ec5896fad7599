#include "kinema/clip/runtime_clip.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>

#include "kinema/core/error.h"
#include "kinema/math/simd4.h"
#include "kinema/skeleton/skeleton.h"

namespace kinema {
namespace {

constexpr float kSnormScale = 32767.0f;
constexpr int kTranslationFloats = 12;  // x4 y4 z4 per group
constexpr int kRotationValues = 16;     // x4 y4 z4 w4 per group

int16_t to_snorm16(double v) {
  return static_cast<int16_t>(std::lround(std::clamp(v, -1.0, 1.0) * kSnormScale));
}

// ---- Compact format: rotations as their three smallest components --------------------------
// The largest component of a unit quaternion is at least 1/2 and the others at most 1/√2 in
// magnitude. The quaternion is negated so that the largest is positive; the other three, in
// x, y, z, w order, are stored as a (15 bits), b (15 bits) and c (16 bits) over [-1/√2, 1/√2];
// the largest one's index goes into the low bits of a (bit 0) and b (bit 1).
constexpr float kInvSqrt2 = 0.70710678118654752f;
constexpr float kSmallest15 = kInvSqrt2 / 16383.0f;  // a and b: value = (stored >> 1) · this
constexpr float kSmallest16 = kInvSqrt2 / 32767.0f;  // c: value = stored · this

std::array<int16_t, 3> to_smallest_three(const Quat& q_in) {
  const double v[4] = {q_in.x, q_in.y, q_in.z, q_in.w};
  int largest = 0;
  for (int i = 1; i < 4; ++i)
    if (std::abs(v[i]) > std::abs(v[largest])) largest = i;
  const double sign = v[largest] < 0 ? -1.0 : 1.0;
  double rest[3];
  for (int i = 0, k = 0; i < 4; ++i)
    if (i != largest) rest[k++] = sign * v[i];
  auto q15 = [](double x) {
    return static_cast<int>(std::lround(std::clamp(x / double(kInvSqrt2), -1.0, 1.0) * 16383.0));
  };
  const int a = q15(rest[0]) * 2 + (largest & 1), b = q15(rest[1]) * 2 + (largest >> 1);
  const int c =
      static_cast<int>(std::lround(std::clamp(rest[2] / double(kInvSqrt2), -1.0, 1.0) * 32767.0));
  return {static_cast<int16_t>(a), static_cast<int16_t>(b), static_cast<int16_t>(c)};
}

// Byte-shuffle tables that spread a plane of m ≤ 4 packed values over the lanes whose bit is
// set in a four-bit mask (lane l takes the value of rank popcount(mask below l)); lanes not set
// read zero. i16: the int16 lands in the lane's high half (an arithmetic shift by 16 then
// sign-extends it); f32: the float lands as it is.
struct LaneTables {
  alignas(16) uint8_t i16[16][16];
  alignas(16) uint8_t f32[16][16];
  alignas(16) uint32_t lanes[16][4];  // all bits set where the lane moves
};
constexpr LaneTables make_lane_tables() {
  LaneTables t{};
  for (int mask = 0; mask < 16; ++mask)
    for (int l = 0; l < 4; ++l) {
      const bool set = (mask >> l) & 1;
      const int rank = std::popcount(static_cast<unsigned>(mask & ((1 << l) - 1)));
      for (int b = 0; b < 4; ++b) {
        t.f32[mask][4 * l + b] = set ? static_cast<uint8_t>(4 * rank + b) : 0x80;
        t.i16[mask][4 * l + b] = set && b >= 2 ? static_cast<uint8_t>(2 * rank + b - 2) : 0x80;
      }
      t.lanes[mask][l] = set ? 0xFFFFFFFFu : 0u;
    }
  return t;
}
constexpr LaneTables kLaneTables = make_lane_tables();

}  // namespace

RuntimeClip RuntimeClip::build(const Clip& clip, const Skeleton& skeleton,
                               const RuntimeClipOptions& options) {
  clip.validate(skeleton.joint_count(), clip.name);
  if (!std::isfinite(clip.duration) || clip.duration < 0)
    throw Error(clip.name, "duration", "clip duration must be finite and not negative");
  double rate = options.sample_rate > 0 ? options.sample_rate : sample_rate_or(clip);
  if (!std::isfinite(rate) || rate <= 0)
    throw Error(clip.name, "sample_rate", "sample rate must be finite and positive");
  const int n = skeleton.joint_count();
  const int groups = kinema::soa_count(n);
  // Whole frames over the duration; the last lands exactly on it (the rate is adjusted).
  const int frames =
      clip.duration > 0 ? std::max(2, int(std::lround(clip.duration * rate)) + 1) : 2;
  rate = clip.duration > 0 ? (frames - 1) / clip.duration : 0.0;

  // 1. Sample every frame (double precision), rotations kept in one hemisphere frame to frame.
  std::vector<Transform> poses(static_cast<size_t>(frames) * static_cast<size_t>(n));
  for (int f = 0; f < frames; ++f) {
    const double t = clip.duration > 0 ? std::min(clip.duration, f / rate) : 0.0;
    std::span<Transform> pose(poses.data() + static_cast<size_t>(f) * n, static_cast<size_t>(n));
    sample_pose(clip, skeleton, t, WrapMode::Clamp, pose);
    for (Transform& x : pose) x.rotation = normalize(x.rotation);
    if (f > 0)
      for (int j = 0; j < n; ++j) {
        Quat& q = pose[static_cast<size_t>(j)].rotation;
        if (dot(q, poses[static_cast<size_t>(f - 1) * n + j].rotation) < 0) q = -q;
      }
  }
  auto at = [&](int f, int j) -> const Transform& { return poses[static_cast<size_t>(f) * n + j]; };

  // 2. Classify each group's channels: constant (stored once) or animated (one slot per frame);
  // the Compact format also keeps which lanes of a group move.
  RuntimeClip r;
  r.format_ = options.format;
  const bool compact = options.format == RuntimeClipFormat::Compact;
  if (compact) r.compact_groups_.resize(static_cast<size_t>(groups));
  r.name_ = clip.name;
  r.duration_ = static_cast<float>(clip.duration);
  r.rate_ = static_cast<float>(rate);
  r.frame_count_ = frames;
  r.joint_count_ = n;
  r.groups_.resize(static_cast<size_t>(groups));
  r.constants_.assign(static_cast<size_t>(groups), SoaTransform::identity());
  const double tol = options.constant_tolerance;
  uint32_t frame_bytes = 0;
  for (int g = 0; g < groups; ++g) {
    uint8_t t_lanes = 0, r_lanes = 0, s_lanes = 0;
    for (int j = 4 * g; j < std::min(n, 4 * g + 4); ++j) {
      set_joint(r.constants_, j, Transformf(at(0, j)));
      bool t_varies = false, r_varies = false, s_varies = false;
      for (int f = 1; f < frames; ++f) {
        const Transform &a = at(0, j), &b = at(f, j);
        t_varies = t_varies || length(b.translation - a.translation) > tol;
        s_varies = s_varies || length(b.scale - a.scale) > tol;
        r_varies = r_varies || std::abs(b.rotation.x - a.rotation.x) > tol ||
                   std::abs(b.rotation.y - a.rotation.y) > tol ||
                   std::abs(b.rotation.z - a.rotation.z) > tol ||
                   std::abs(b.rotation.w - a.rotation.w) > tol;
      }
      const uint8_t bit = static_cast<uint8_t>(1u << (j - 4 * g));
      t_lanes |= t_varies ? bit : 0, r_lanes |= r_varies ? bit : 0, s_lanes |= s_varies ? bit : 0;
    }
    Group& gr = r.groups_[static_cast<size_t>(g)];
    if (t_lanes) gr.translation_slot = r.t_slots_++;
    if (r_lanes) gr.rotation_slot = r.r_slots_++;
    if (s_lanes) gr.scale_slot = r.s_slots_++;
    if (compact) {
      // A group's planes, one after the other: rotations (3 × 2 bytes a moving lane), then
      // translations and scales (3 × 4 bytes a moving lane).
      CompactGroup& cg = r.compact_groups_[static_cast<size_t>(g)];
      cg.rotation_lanes = r_lanes, cg.translation_lanes = t_lanes, cg.scale_lanes = s_lanes;
      cg.rotation_offset = frame_bytes;
      frame_bytes += 6u * static_cast<uint32_t>(std::popcount(r_lanes));
      cg.translation_offset = frame_bytes;
      frame_bytes += 12u * static_cast<uint32_t>(std::popcount(t_lanes));
      cg.scale_offset = frame_bytes;
      frame_bytes += 12u * static_cast<uint32_t>(std::popcount(s_lanes));
    }
  }

  if (compact) {
    // 3. (Compact) Fill each frame's block with the moving lanes' planes.
    r.frame_bytes_ = frame_bytes;
    r.packed_.assign(static_cast<size_t>(frames) * frame_bytes + 16, 0);
    for (int f = 0; f < frames; ++f) {
      uint8_t* block = r.packed_.data() + static_cast<size_t>(f) * frame_bytes;
      for (int g = 0; g < groups; ++g) {
        const CompactGroup& cg = r.compact_groups_[static_cast<size_t>(g)];
        const int mr = std::popcount(cg.rotation_lanes), mt = std::popcount(cg.translation_lanes),
                  ms = std::popcount(cg.scale_lanes);
        for (int l = 0, kr = 0, kt = 0, ks = 0; l < 4; ++l) {
          const int j = 4 * g + l;
          if (j >= n) break;
          const Transform& x = at(f, j);
          if ((cg.rotation_lanes >> l) & 1) {
            const std::array<int16_t, 3> abc = to_smallest_three(x.rotation);
            for (int c = 0; c < 3; ++c)
              std::memcpy(block + cg.rotation_offset + 2 * (c * mr + kr), &abc[c], 2);
            ++kr;
          }
          auto put_vec3 = [&](uint32_t offset, int m, int k, const Vec3& v) {
            const float xyz[3] = {float(v.x), float(v.y), float(v.z)};
            for (int c = 0; c < 3; ++c) std::memcpy(block + offset + 4 * (c * m + k), &xyz[c], 4);
          };
          if ((cg.translation_lanes >> l) & 1)
            put_vec3(cg.translation_offset, mt, kt++, x.translation);
          if ((cg.scale_lanes >> l) & 1) put_vec3(cg.scale_offset, ms, ks++, x.scale);
        }
      }
    }
    // 4. (Compact) The constants: translations and rotations as floats, scales only for the
    // groups where one differs from 1.
    const size_t group_count = static_cast<size_t>(groups);
    r.constant_vectors_.resize(group_count * kTranslationFloats);
    r.constant_rotations_.resize(group_count * kRotationValues);
    for (size_t g = 0; g < group_count; ++g) {
      const SoaTransform& k = r.constants_[g];
      float* t = r.constant_vectors_.data() + g * kTranslationFloats;
      float* q = r.constant_rotations_.data() + g * kRotationValues;
      bool unit = r.compact_groups_[g].scale_lanes == 0;
      for (int l = 0; l < 4; ++l) {
        t[l] = k.tx[l], t[4 + l] = k.ty[l], t[8 + l] = k.tz[l];
        q[l] = k.qx[l], q[4 + l] = k.qy[l], q[8 + l] = k.qz[l], q[12 + l] = k.qw[l];
        for (float v : {k.sx[l], k.sy[l], k.sz[l]}) unit = unit && std::abs(v - 1.0) <= tol;
      }
      r.compact_groups_[g].scale_constants =
          unit ? kUnitScales : static_cast<uint32_t>(r.constant_vectors_.size());
      if (!unit)
        for (const float* lanes : {k.sx, k.sy, k.sz})
          r.constant_vectors_.insert(r.constant_vectors_.end(), lanes, lanes + 4);
    }
    r.constant_vectors_.shrink_to_fit();
    std::vector<SoaTransform>().swap(r.constants_);  // not used by the Compact sampler
    return r;
  }

  // 3. Fill the per-frame blocks. Padding lanes hold the identity.
  r.translations_.assign(static_cast<size_t>(frames) * r.t_slots_ * kTranslationFloats, 0.0f);
  r.scales_.assign(static_cast<size_t>(frames) * r.s_slots_ * kTranslationFloats, 1.0f);
  r.rotations_.assign(static_cast<size_t>(frames) * r.r_slots_ * kRotationValues, 0);
  for (int f = 0; f < frames; ++f)
    for (int g = 0; g < groups; ++g) {
      const Group& gr = r.groups_[static_cast<size_t>(g)];
      for (int l = 0; l < 4; ++l) {
        const int j = 4 * g + l;
        const Transform x = j < n ? at(f, j) : Transform{};
        if (gr.translation_slot >= 0) {
          float* p = &r.translations_[(static_cast<size_t>(f) * r.t_slots_ + gr.translation_slot) *
                                      kTranslationFloats];
          p[l] = float(x.translation.x), p[4 + l] = float(x.translation.y),
          p[8 + l] = float(x.translation.z);
        }
        if (gr.scale_slot >= 0) {
          float* p = &r.scales_[(static_cast<size_t>(f) * r.s_slots_ + gr.scale_slot) *
                                kTranslationFloats];
          p[l] = float(x.scale.x), p[4 + l] = float(x.scale.y), p[8 + l] = float(x.scale.z);
        }
        if (gr.rotation_slot >= 0) {
          int16_t* p = &r.rotations_[(static_cast<size_t>(f) * r.r_slots_ + gr.rotation_slot) *
                                     kRotationValues];
          p[l] = to_snorm16(x.rotation.x), p[4 + l] = to_snorm16(x.rotation.y);
          p[8 + l] = to_snorm16(x.rotation.z), p[12 + l] = to_snorm16(x.rotation.w);
        }
      }
    }
  return r;
}

size_t RuntimeClip::memory_bytes() const {
  return name_.capacity() + groups_.capacity() * sizeof(Group) +
         constants_.capacity() * sizeof(SoaTransform) + translations_.capacity() * sizeof(float) +
         rotations_.capacity() * sizeof(int16_t) + scales_.capacity() * sizeof(float) +
         compact_groups_.capacity() * sizeof(CompactGroup) + packed_.capacity() +
         constant_vectors_.capacity() * sizeof(float) +
         constant_rotations_.capacity() * sizeof(float);
}

void SamplingCache::reset(const RuntimeClip& clip) {
  clip_ = &clip;
  frame_ = -1;
  a_ = 0;
  decoded_.assign(2 * static_cast<size_t>(clip.animated_rotation_groups()) * kRotationValues, 0.0f);
}

// The sampler: friends of both classes, so the layout stays private.
class ClipSampler {
 public:
  // Frame index and blend factor for a time (clamped into the clip).
  static void locate(const RuntimeClip& c, float time, int& frame, float& alpha) {
    const float x = std::clamp(time * c.rate_, 0.0f, float(c.frame_count_ - 1));
    frame = std::min(static_cast<int>(x), c.frame_count_ - 2);
    alpha = x - float(frame);
  }

  // ---- Compact format -------------------------------------------------------------------
  // The lanes set in `mask` get the plane's packed floats in rank order; the others read 0.
  static simd::F4 expand_f32(const uint8_t* plane, int mask) {
#if KINEMA_SIMD_SSE
    const __m128i shuffle = _mm_load_si128(reinterpret_cast<const __m128i*>(kLaneTables.f32[mask]));
    const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(plane));
    return {_mm_castsi128_ps(_mm_shuffle_epi8(raw, shuffle))};
#else
    float v[4];
    for (int l = 0, k = 0; l < 4; ++l)
      if ((mask >> l) & 1)
        std::memcpy(&v[l], plane + 4 * k++, 4);
      else
        v[l] = 0.0f;
    return simd::loadu(v);
#endif
  }

  // A mask usable by simd::select: the lanes set in `mask`.
  static simd::F4 lane_select(int mask) {
#if KINEMA_SIMD_SSE
    return {_mm_castsi128_ps(
        _mm_load_si128(reinterpret_cast<const __m128i*>(kLaneTables.lanes[mask])))};
#else
    const float v[4] = {float(mask & 1), float((mask >> 1) & 1), float((mask >> 2) & 1),
                        float((mask >> 3) & 1)};
    return simd::loadu(v);
#endif
  }

  // One group's moving rotations of one frame, rebuilt from their smallest three components
  // (lanes that do not move come out as some unit quaternion, replaced by the caller).
  static void decode_smallest_three(const uint8_t* planes, int mask, simd::F4& x, simd::F4& y,
                                    simd::F4& z, simd::F4& w) {
    using namespace simd;
    const int m = std::popcount(static_cast<unsigned>(mask));
#if KINEMA_SIMD_SSE
    const __m128i shuffle = _mm_load_si128(reinterpret_cast<const __m128i*>(kLaneTables.i16[mask]));
    auto plane = [&](int c) {
      const __m128i raw = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(planes + 2 * c * m));
      return _mm_srai_epi32(_mm_shuffle_epi8(raw, shuffle), 16);
    };
    const __m128i ia = plane(0), ib = plane(1), ic = plane(2), one = _mm_set1_epi32(1);
    const __m128i index =
        _mm_or_si128(_mm_and_si128(ia, one), _mm_slli_epi32(_mm_and_si128(ib, one), 1));
    const F4 a = F4{_mm_cvtepi32_ps(_mm_srai_epi32(ia, 1))} * splat(kSmallest15);
    const F4 b = F4{_mm_cvtepi32_ps(_mm_srai_epi32(ib, 1))} * splat(kSmallest15);
    const F4 c = F4{_mm_cvtepi32_ps(ic)} * splat(kSmallest16);
    auto is = [&](int i) {
      return F4{_mm_castsi128_ps(_mm_cmpeq_epi32(index, _mm_set1_epi32(i)))};
    };
#else
    float va[4], vb[4], vc[4], vi[4];
    for (int l = 0, k = 0; l < 4; ++l) {
      int16_t abc[3] = {0, 0, 0};
      if ((mask >> l) & 1) {
        for (int p = 0; p < 3; ++p) std::memcpy(&abc[p], planes + 2 * (p * m + k), 2);
        ++k;
      }
      va[l] = float(abc[0] >> 1) * kSmallest15, vb[l] = float(abc[1] >> 1) * kSmallest15;
      vc[l] = float(abc[2]) * kSmallest16;
      vi[l] = float((abc[0] & 1) | ((abc[1] & 1) << 1));
    }
    const F4 a = loadu(va), b = loadu(vb), c = loadu(vc), index = loadu(vi);
    auto is = [&](int i) {
      float v[4];
      for (int l = 0; l < 4; ++l) v[l] = vi[l] == float(i) ? 1.0f : 0.0f;
      return loadu(v);
    };
    (void)index;
#endif
    const F4 d = sqrt(max(zero(), splat(1.0f) - (a * a + b * b + c * c)));
    const F4 i0 = is(0), i1 = is(1), i2 = is(2), i3 = is(3);
    x = select(i0, d, a);
    y = select(i0, a, select(i1, d, b));
    z = select(i2, d, select(i3, c, b));
    w = select(i3, d, c);
  }

  static void decode_rotations(const RuntimeClip& c, int frame, float* out) {
    using namespace simd;
    if (c.format_ == RuntimeClipFormat::Compact) {
      const uint8_t* block = c.packed_.data() + static_cast<size_t>(frame) * c.frame_bytes_;
      for (size_t g = 0; g < c.groups_.size(); ++g) {
        const int slot = c.groups_[g].rotation_slot;
        if (slot < 0) continue;
        const RuntimeClip::CompactGroup& cg = c.compact_groups_[g];
        F4 x, y, z, w;
        decode_smallest_three(block + cg.rotation_offset, cg.rotation_lanes, x, y, z, w);
        float* o = out + static_cast<size_t>(slot) * kRotationValues;
        store(o, x), store(o + 4, y), store(o + 8, z), store(o + 12, w);
      }
      return;
    }
    const F4 scale = splat(1.0f / kSnormScale);
    const int16_t* src =
        c.rotations_.data() + static_cast<size_t>(frame) * c.r_slots_ * kRotationValues;
    for (int i = 0; i < c.r_slots_ * kRotationValues; i += 4)
      store(out + i, load_i16(src + i, scale));
  }

  // A translation or scale channel of one group: lerped from its slot in the two frame blocks,
  // or the stored constant.
  static void vec3_channel(int slot, const float* f0, const float* f1, simd::F4 a, const float* kx,
                           const float* ky, const float* kz, float* ox, float* oy, float* oz) {
    using namespace simd;
    if (slot < 0) {
      store(ox, load(kx)), store(oy, load(ky)), store(oz, load(kz));
      return;
    }
    const size_t i = static_cast<size_t>(slot) * kTranslationFloats;
    store(ox, lerp(load(f0 + i), load(f1 + i), a));
    store(oy, lerp(load(f0 + i + 4), load(f1 + i + 4), a));
    store(oz, lerp(load(f0 + i + 8), load(f1 + i + 8), a));
  }

  // Writes the pose from two decoded rotation frames (or straight from the int16 blocks when
  // `r0`/`r1` are null).
  static void write(const RuntimeClip& c, int frame, float alpha, const float* r0, const float* r1,
                    std::span<SoaTransform> out) {
    using namespace simd;
    const F4 a = splat(alpha), scale = splat(1.0f / kSnormScale);
    const size_t t_stride = static_cast<size_t>(c.t_slots_) * kTranslationFloats;
    const float* t0 = c.translations_.data() + static_cast<size_t>(frame) * t_stride;
    const float* t1 = t0 + t_stride;
    const size_t s_stride = static_cast<size_t>(c.s_slots_) * kTranslationFloats;
    const float* s0 = c.scales_.data() + static_cast<size_t>(frame) * s_stride;
    const float* s1 = s0 + s_stride;
    const size_t r_stride = static_cast<size_t>(c.r_slots_) * kRotationValues;
    const int16_t* q0 = c.rotations_.data() + static_cast<size_t>(frame) * r_stride;
    const int16_t* q1 = q0 + r_stride;
    for (size_t g = 0; g < c.groups_.size(); ++g) {
      const RuntimeClip::Group& gr = c.groups_[g];
      const SoaTransform& k = c.constants_[g];
      SoaTransform& o = out[g];
      vec3_channel(gr.translation_slot, t0, t1, a, k.tx, k.ty, k.tz, o.tx, o.ty, o.tz);
      if (gr.rotation_slot >= 0) {
        const size_t i = static_cast<size_t>(gr.rotation_slot) * kRotationValues;
        F4 x, y, z, w;
        if (r0) {
          x = lerp(load(r0 + i), load(r1 + i), a), y = lerp(load(r0 + i + 4), load(r1 + i + 4), a);
          z = lerp(load(r0 + i + 8), load(r1 + i + 8), a);
          w = lerp(load(r0 + i + 12), load(r1 + i + 12), a);
        } else {
          x = lerp(load_i16(q0 + i, scale), load_i16(q1 + i, scale), a);
          y = lerp(load_i16(q0 + i + 4, scale), load_i16(q1 + i + 4, scale), a);
          z = lerp(load_i16(q0 + i + 8, scale), load_i16(q1 + i + 8, scale), a);
          w = lerp(load_i16(q0 + i + 12, scale), load_i16(q1 + i + 12, scale), a);
        }
        // Frames share a hemisphere (fixed at build time): lerp then one normalization.
        const F4 inv = rsqrt(x * x + y * y + (z * z + w * w));
        store(o.qx, x * inv), store(o.qy, y * inv), store(o.qz, z * inv), store(o.qw, w * inv);
      } else {
        store(o.qx, load(k.qx)), store(o.qy, load(k.qy)), store(o.qz, load(k.qz));
        store(o.qw, load(k.qw));
      }
      vec3_channel(gr.scale_slot, s0, s1, a, k.sx, k.sy, k.sz, o.sx, o.sy, o.sz);
    }
  }

  // A translation or scale channel of one Compact group: the moving lanes lerped from the two
  // frame blocks, the others the stored constant.
  static void compact_vec3(int lanes, const uint8_t* p0, const uint8_t* p1, simd::F4 a,
                           const float* kx, const float* ky, const float* kz, float* ox, float* oy,
                           float* oz) {
    using namespace simd;
    if (!lanes) {
      store(ox, load(kx)), store(oy, load(ky)), store(oz, load(kz));
      return;
    }
    const size_t plane = 4 * static_cast<size_t>(std::popcount(static_cast<unsigned>(lanes)));
    const F4 moving = lane_select(lanes);
    store(ox, select(moving, lerp(expand_f32(p0, lanes), expand_f32(p1, lanes), a), load(kx)));
    store(oy, select(moving, lerp(expand_f32(p0 + plane, lanes), expand_f32(p1 + plane, lanes), a),
                     load(ky)));
    store(oz, select(moving,
                     lerp(expand_f32(p0 + 2 * plane, lanes), expand_f32(p1 + 2 * plane, lanes), a),
                     load(kz)));
  }

  // write() for the Compact format. Decoded frames (from a cache) may be in opposite
  // hemispheres, as may freshly decoded ones: the second is negated where the two disagree.
  static void write_compact(const RuntimeClip& c, int frame, float alpha, const float* r0,
                            const float* r1, std::span<SoaTransform> out) {
    using namespace simd;
    alignas(16) static constexpr float kOnes[kTranslationFloats] = {
        1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f};
    const F4 a = splat(alpha);
    const uint8_t* b0 = c.packed_.data() + static_cast<size_t>(frame) * c.frame_bytes_;
    const uint8_t* b1 = b0 + c.frame_bytes_;
    const size_t groups = c.groups_.size();
    for (size_t g = 0; g < groups; ++g) {
      const RuntimeClip::CompactGroup& cg = c.compact_groups_[g];
      const float* kt = c.constant_vectors_.data() + g * kTranslationFloats;
      const float* ks = cg.scale_constants == RuntimeClip::kUnitScales
                            ? kOnes
                            : c.constant_vectors_.data() + cg.scale_constants;
      const float* kq = c.constant_rotations_.data() + g * kRotationValues;
      SoaTransform& o = out[g];
      compact_vec3(cg.translation_lanes, b0 + cg.translation_offset, b1 + cg.translation_offset, a,
                   kt, kt + 4, kt + 8, o.tx, o.ty, o.tz);
      const F4 cx = load(kq), cy = load(kq + 4), cz = load(kq + 8), cw = load(kq + 12);
      if (cg.rotation_lanes) {
        F4 x0, y0, z0, w0, x1, y1, z1, w1;
        if (r0) {
          const size_t i = static_cast<size_t>(c.groups_[g].rotation_slot) * kRotationValues;
          x0 = load(r0 + i), y0 = load(r0 + i + 4), z0 = load(r0 + i + 8), w0 = load(r0 + i + 12);
          x1 = load(r1 + i), y1 = load(r1 + i + 4), z1 = load(r1 + i + 8), w1 = load(r1 + i + 12);
        } else {
          decode_smallest_three(b0 + cg.rotation_offset, cg.rotation_lanes, x0, y0, z0, w0);
          decode_smallest_three(b1 + cg.rotation_offset, cg.rotation_lanes, x1, y1, z1, w1);
        }
        const F4 opposite = greater(zero(), x0 * x1 + y0 * y1 + (z0 * z1 + w0 * w1));
        x1 = select(opposite, zero() - x1, x1), y1 = select(opposite, zero() - y1, y1);
        z1 = select(opposite, zero() - z1, z1), w1 = select(opposite, zero() - w1, w1);
        const F4 x = lerp(x0, x1, a), y = lerp(y0, y1, a), z = lerp(z0, z1, a), w = lerp(w0, w1, a);
        const F4 inv = rsqrt(x * x + y * y + (z * z + w * w));
        const F4 moving = lane_select(cg.rotation_lanes);
        store(o.qx, select(moving, x * inv, cx)), store(o.qy, select(moving, y * inv, cy));
        store(o.qz, select(moving, z * inv, cz)), store(o.qw, select(moving, w * inv, cw));
      } else {
        store(o.qx, cx), store(o.qy, cy), store(o.qz, cz), store(o.qw, cw);
      }
      compact_vec3(cg.scale_lanes, b0 + cg.scale_offset, b1 + cg.scale_offset, a, ks, ks + 4,
                   ks + 8, o.sx, o.sy, o.sz);
    }
  }

  static bool sample(const RuntimeClip& c, float time, SamplingCache* cache,
                     std::span<SoaTransform> out) {
    if (c.frame_count_ < 2 || out.size() != c.groups_.size() || std::isnan(time)) return false;
    int frame;
    float alpha;
    locate(c, time, frame, alpha);
    // Called directly (not through a pointer) so that each layout's writer is inlined.
    auto write_pose = [&c](int frame, float alpha, const float* r0, const float* r1,
                           std::span<SoaTransform> out) {
      if (c.format_ == RuntimeClipFormat::Compact)
        write_compact(c, frame, alpha, r0, r1, out);
      else
        write(c, frame, alpha, r0, r1, out);
    };
    if (!cache) {
      write_pose(frame, alpha, nullptr, nullptr, out);
      return true;
    }
    if (cache->clip_ != &c) return false;
    const size_t half = static_cast<size_t>(c.r_slots_) * kRotationValues;
    float* base = cache->decoded_.data();
    if (cache->frame_ == frame) {
      // Same interval as last time: nothing to decode.
    } else if (cache->frame_ >= 0 && cache->frame_ + 1 == frame) {
      // Forward playback: the old second frame becomes the first; decode the new second.
      cache->a_ ^= 1;
      decode_rotations(c, frame + 1, base + (cache->a_ ^ 1) * half);
    } else if (cache->frame_ >= 0 && cache->frame_ - 1 == frame) {
      // Reversed playback: the old first frame becomes the second; decode the new first.
      cache->a_ ^= 1;
      decode_rotations(c, frame, base + cache->a_ * half);
    } else {
      decode_rotations(c, frame, base + cache->a_ * half);
      decode_rotations(c, frame + 1, base + (cache->a_ ^ 1) * half);
    }
    cache->frame_ = frame;
    write_pose(frame, alpha, base + cache->a_ * half, base + (cache->a_ ^ 1) * half, out);
    return true;
  }
};

bool sample(const RuntimeClip& clip, float time, std::span<SoaTransform> out) {
  return ClipSampler::sample(clip, time, nullptr, out);
}

bool sample(const RuntimeClip& clip, float time, SamplingCache& cache,
            std::span<SoaTransform> out) {
  return ClipSampler::sample(clip, time, &cache, out);
}

int Playback::advance(float dt, float duration) {
  if (!(duration > 0) || !std::isfinite(dt) || !std::isfinite(rate)) return 0;
  float t = time + dt * rate;
  if (!loop) {
    time = std::clamp(t, 0.0f, duration);
    return 0;
  }
  const float wraps = std::floor(t / duration);
  t -= wraps * duration;
  // Guard the float edge cases: t may round to exactly `duration` or fall just below zero.
  if (t >= duration) t = 0.0f;
  if (t < 0.0f) t = 0.0f;
  time = t;
  return static_cast<int>(wraps);
}

}  // namespace kinema
