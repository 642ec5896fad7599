#include "kinema/clip/runtime_clip.h"

#include <algorithm>
#include <cmath>

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

  // 2. Classify each group's channels: constant (stored once) or animated (one slot per frame).
  RuntimeClip r;
  r.name_ = clip.name;
  r.duration_ = static_cast<float>(clip.duration);
  r.rate_ = static_cast<float>(rate);
  r.frame_count_ = frames;
  r.joint_count_ = n;
  r.groups_.resize(static_cast<size_t>(groups));
  r.constants_.assign(static_cast<size_t>(groups), SoaTransform::identity());
  const double tol = options.constant_tolerance;
  for (int g = 0; g < groups; ++g) {
    bool t_varies = false, r_varies = false, s_varies = false;
    for (int j = 4 * g; j < std::min(n, 4 * g + 4); ++j) {
      set_joint(r.constants_, j, Transformf(at(0, j)));
      for (int f = 1; f < frames; ++f) {
        const Transform &a = at(0, j), &b = at(f, j);
        t_varies = t_varies || length(b.translation - a.translation) > tol;
        s_varies = s_varies || length(b.scale - a.scale) > tol;
        r_varies = r_varies || std::abs(b.rotation.x - a.rotation.x) > tol ||
                   std::abs(b.rotation.y - a.rotation.y) > tol ||
                   std::abs(b.rotation.z - a.rotation.z) > tol ||
                   std::abs(b.rotation.w - a.rotation.w) > tol;
      }
    }
    Group& gr = r.groups_[static_cast<size_t>(g)];
    if (t_varies) gr.translation_slot = r.t_slots_++;
    if (r_varies) gr.rotation_slot = r.r_slots_++;
    if (s_varies) gr.scale_slot = r.s_slots_++;
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
         rotations_.capacity() * sizeof(int16_t) + scales_.capacity() * sizeof(float);
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

  static void decode_rotations(const RuntimeClip& c, int frame, float* out) {
    using namespace simd;
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

  static bool sample(const RuntimeClip& c, float time, SamplingCache* cache,
                     std::span<SoaTransform> out) {
    if (c.frame_count_ < 2 || out.size() != c.groups_.size() || std::isnan(time)) return false;
    int frame;
    float alpha;
    locate(c, time, frame, alpha);
    if (!cache) {
      write(c, frame, alpha, nullptr, nullptr, out);
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
    write(c, frame, alpha, base + cache->a_ * half, base + (cache->a_ ^ 1) * half, out);
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
