// Sampling a compressed clip: the constant pose is copied, then every animated track is decoded
// at the two frames around the time (bit unpacking, segment range, clip range) and blended in
// place. Straight-line code per track, no allocation, no mutable state.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "format.h"
#include "kinema/compress/compressed_clip.h"

#if defined(__SSE4_1__)
#include <smmintrin.h>
#define KINEMA_COMPRESS_SSE 1
#else
#define KINEMA_COMPRESS_SSE 0
#endif

namespace kinema {

using namespace compress_format;

#if KINEMA_COMPRESS_SSE
namespace {

// pshufb masks: lanes 0–2 ← the three kept components of (x, y, z, w), by dropped index.
alignas(16) constexpr uint8_t kKeep[4][16] = {
    {4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0x80, 0x80, 0x80, 0x80},
    {0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15, 0x80, 0x80, 0x80, 0x80},
    {0, 1, 2, 3, 4, 5, 6, 7, 12, 13, 14, 15, 0x80, 0x80, 0x80, 0x80},
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0x80, 0x80, 0x80, 0x80}};
// (k0, k1, k2, dropped) → (x, y, z, w), by dropped index.
alignas(16) constexpr uint8_t kExpand[4][16] = {
    {12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11},
    {0, 1, 2, 3, 12, 13, 14, 15, 4, 5, 6, 7, 8, 9, 10, 11},
    {0, 1, 2, 3, 4, 5, 6, 7, 12, 13, 14, 15, 8, 9, 10, 11},
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}};

inline __m128 shuffle_bytes(__m128 v, const uint8_t* mask) {
  return _mm_castsi128_ps(_mm_shuffle_epi8(_mm_castps_si128(v),
                                           _mm_load_si128(reinterpret_cast<const __m128i*>(mask))));
}

// What a track's segment header says, ready to unpack samples: per stored component the value
// of code 0 (the segment minimum, or its midpoint for 0 bits) and the step per code, as
// dequantize() computes them, and the bit widths. Computed once per track and header (once for
// both frames of a pair 15 times in 16).
struct Segment4 {
  __m128 base, step;
  uint64_t m0, m1, m2;  // masks of the three codes
  uint32_t s1, s2;      // shifts of codes 1 and 2
  uint32_t bits;        // of a sample
  uint16_t word;
};

inline Segment4 segment4(const uint8_t* d, uint32_t range_offset, int channel, const uint8_t* h) {
  const uint64_t hw = load_le64(h);
  Segment4 g;
  g.word = uint16_t(hw);
  const float* r = reinterpret_cast<const float*>(d + range_offset);
  const bool rot = channel == 1;
  __m128 cmin = _mm_loadu_ps(r), cext = _mm_loadu_ps(r + (rot ? 4 : 3));
  if (rot) {
    const uint8_t* keep = kKeep[dropped_index(g.word)];
    cmin = shuffle_bytes(cmin, keep), cext = shuffle_bytes(cext, keep);
  }
  // segment_range(): the clip range × the segment's 8-bit fractions.
  const __m128 step = _mm_mul_ps(cext, _mm_set1_ps(1.0f / 255.0f));
  const __m128 qmin = _mm_cvtepi32_ps(_mm_cvtepu8_epi32(_mm_cvtsi32_si128(int(hw >> 16))));
  const __m128 qext = _mm_cvtepi32_ps(_mm_cvtepu8_epi32(_mm_cvtsi32_si128(int(hw >> 40))));
  const __m128 smin = _mm_add_ps(cmin, _mm_mul_ps(qmin, step)), sext = _mm_mul_ps(qext, step);
  const uint32_t b0 = kBitRates[g.word & 15], b1 = kBitRates[(g.word >> 4) & 15],
                 b2 = kBitRates[(g.word >> 8) & 15];
  // dequantize() per lane: (min + ½·extent for 0 bits) + code · (extent · 1/(2^bits − 1)).
  const __m128 inv =
      _mm_setr_ps(kInverseMax.v[b0], kInverseMax.v[b1], kInverseMax.v[b2], kInverseMax.v[1]);
  const __m128 half = _mm_and_ps(_mm_cmpeq_ps(inv, _mm_setzero_ps()), _mm_set1_ps(0.5f));
  g.base = _mm_add_ps(smin, _mm_mul_ps(half, sext));
  g.step = _mm_mul_ps(sext, inv);
  g.m0 = (uint64_t(1) << b0) - 1, g.m1 = (uint64_t(1) << b1) - 1, g.m2 = (uint64_t(1) << b2) - 1;
  g.s1 = b0, g.s2 = b0 + b1;
  g.bits = is_raw(g.word) ? 32u * (rot ? 4u : 3u) : b0 + b1 + b2;
  return g;
}

// One sample at `bit` (advanced) → (x, y, z[, w]), as dequantize() and dropped_component() do.
// With rebuild false a quantized rotation comes back as its three kept components (lane 3 zero),
// for rebuild_pair() to finish two frames at once.
inline __m128 unpack4(const uint8_t* d, int channel, const Segment4& g, uint64_t& bit,
                      bool rebuild = true) {
  const bool rot = channel == 1;
  if (is_raw(g.word)) {
    uint32_t c[4] = {0, 0, 0, 0};
    const int n = rot ? 4 : 3;
    for (int i = 0; i < n; ++i, bit += 32) c[i] = read_bits(d, bit, 32);
    return _mm_castsi128_ps(_mm_setr_epi32(int(c[0]), int(c[1]), int(c[2]), int(c[3])));
  }
  // At most 3 × 16 bits: all three codes in one 64-bit read.
  const uint64_t w = load_le64(d + (bit >> 3)) >> (bit & 7);
  bit += g.bits;
  const __m128 code = _mm_cvtepi32_ps(
      _mm_setr_epi32(int(w & g.m0), int((w >> g.s1) & g.m1), int((w >> g.s2) & g.m2), 0));
  __m128 v = _mm_add_ps(g.base, _mm_mul_ps(code, g.step));
  if (!rot) return v;
  v = _mm_blend_ps(v, _mm_setzero_ps(), 8);
  if (!rebuild) return v;
  const __m128 m = _mm_mul_ps(v, v);
  __m128 sum = _mm_hadd_ps(m, m);
  sum = _mm_hadd_ps(sum, sum);  // the order of rebuild_pair(): (a² + b²) + c²
  const __m128 dropped =
      _mm_sqrt_ps(_mm_max_ps(_mm_sub_ps(_mm_set1_ps(1.0f), sum), _mm_setzero_ps()));
  return shuffle_bytes(_mm_blend_ps(v, dropped, 8), kExpand[dropped_index(g.word)]);
}

// Rebuilds the dropped components of two quantized rotations (kept components in lanes 0–2) with
// one square root; raw rotations (all four stored) are left as they are. The sums run in the
// order of dropped_component(): (a² + b²) + c².
inline void rebuild_pair(__m128& v0, uint16_t w0, __m128& v1, uint16_t w1) {
  const __m128 m0 = _mm_mul_ps(v0, v0), m1 = _mm_mul_ps(v1, v1);
  __m128 sum = _mm_hadd_ps(m0, m1);
  sum = _mm_hadd_ps(sum, sum);  // (|k0|², |k1|², |k0|², |k1|²)
  const __m128 dropped =
      _mm_sqrt_ps(_mm_max_ps(_mm_sub_ps(_mm_set1_ps(1.0f), sum), _mm_setzero_ps()));
  if (!is_raw(w0))
    v0 = shuffle_bytes(_mm_blend_ps(v0, _mm_shuffle_ps(dropped, dropped, 0x00), 8),
                       kExpand[dropped_index(w0)]);
  if (!is_raw(w1))
    v1 = shuffle_bytes(_mm_blend_ps(v1, _mm_shuffle_ps(dropped, dropped, 0x55), 8),
                       kExpand[dropped_index(w1)]);
}

// The animated rotations of a pose, written group by group. Tracks come in joint order, so the
// rotations of one group of four joints arrive together; they are collected as (x, y, z, w)
// vectors, transposed to the group's SoA lanes, normalized four at a time (nlerp's
// normalization: q·(1/|q|) with the estimate and one Newton step, the sum as
// ((x² + y²) + (z² + w²))) and stored into the lanes that hold animated rotations, the others
// (constants, already in the pose) kept bit-exact. Storing each rotation's lanes as four scalars
// and normalizing the pose afterwards reloaded every 16-byte group over scalar stores just made,
// which the CPU cannot forward: a stall of about a dozen cycles a load.
class RotationGroups {
 public:
  RotationGroups(const uint32_t* lanes, SoaTransform* out) : lanes_(lanes), out_(out) {}
  ~RotationGroups() { flush(); }

  void put(int joint, __m128 q) {
    if ((joint >> 2) != group_) {
      flush();
      group_ = joint >> 2;
    }
    q_[joint & 3] = q;
  }

 private:
  void flush() {
    if (group_ < 0) return;
    __m128 x = q_[0], y = q_[1], z = q_[2], w = q_[3];
    _MM_TRANSPOSE4_PS(x, y, z, w);
    const __m128 n = _mm_add_ps(_mm_add_ps(_mm_mul_ps(x, x), _mm_mul_ps(y, y)),
                                _mm_add_ps(_mm_mul_ps(z, z), _mm_mul_ps(w, w)));
    const __m128 r = _mm_rsqrt_ps(n);
    const __m128 inv =
        _mm_mul_ps(r, _mm_sub_ps(_mm_set1_ps(1.5f),
                                 _mm_mul_ps(_mm_mul_ps(_mm_set1_ps(0.5f), n), _mm_mul_ps(r, r))));
    SoaTransform& o = out_[group_];
    const __m128 mask = _mm_castsi128_ps(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(lanes_ + 4 * size_t(group_))));
    _mm_store_ps(o.qx, _mm_blendv_ps(_mm_load_ps(o.qx), _mm_mul_ps(x, inv), mask));
    _mm_store_ps(o.qy, _mm_blendv_ps(_mm_load_ps(o.qy), _mm_mul_ps(y, inv), mask));
    _mm_store_ps(o.qz, _mm_blendv_ps(_mm_load_ps(o.qz), _mm_mul_ps(z, inv), mask));
    _mm_store_ps(o.qw, _mm_blendv_ps(_mm_load_ps(o.qw), _mm_mul_ps(w, inv), mask));
    // Lanes without an animated rotation keep a unit quaternion: no NaN or denormal is formed.
    q_[0] = q_[1] = q_[2] = q_[3] = _mm_setr_ps(0, 0, 0, 1);
    group_ = -1;
  }

  const uint32_t* lanes_;
  SoaTransform* out_;
  int group_ = -1;
  __m128 q_[4] = {_mm_setr_ps(0, 0, 0, 1), _mm_setr_ps(0, 0, 0, 1), _mm_setr_ps(0, 0, 0, 1),
                  _mm_setr_ps(0, 0, 0, 1)};
};

inline void store_lanes(float* p, __m128 v, bool four) {
  alignas(16) float t[4];
  _mm_store_ps(t, v);
  p[0] = t[0], p[4] = t[1], p[8] = t[2];
  if (four) p[12] = t[3];
}

}  // namespace
#endif

class CompressedClipDecoder {
 public:
  // Where frame `frame`'s samples are: its segment's headers and the bit of its first sample.
  struct Cursor {
    const uint8_t* header;
    uint64_t bit;
  };
  static Cursor cursor(const CompressedClip& c, int frame) {
    const auto* d = reinterpret_cast<const uint8_t*>(c.bytes_.data());
    const int s = std::min(frame / c.segment_frames_, int(c.segment_bits_.size()) - 1);
    const int fi = frame - s * c.segment_frames_;
    return {d + c.segment_headers_ + size_t(s) * c.tracks_.size() * kSegmentTrackBytes,
            c.segment_bits_[size_t(s)] + uint64_t(fi) * c.frame_bits_[size_t(s)]};
  }

  // The segment ranges of a track's three stored components (clip range × segment bytes).
  static void ranges(const uint8_t* d, const CompressedClip::Track& tr, const uint8_t* h,
                     Range r[3]) {
    const uint8_t* range = d + tr.range_offset;
    const int drop = tr.channel == kRotation ? dropped_index(load_le16(h)) : 3;
    const int comps = tr.channel == kRotation ? 4 : 3;
    for (int i = 0; i < 3; ++i) {
      const int comp = i + (i >= drop);
      r[i] = segment_range(load_f32(range + 4 * comp), load_f32(range + 4 * (comps + comp)),
                           h[2 + i], h[5 + i]);
    }
  }

  // Unpacks one sample at `bit` (advancing it) into v (x, y, z[, w]).
  static void unpack(const uint8_t* d, int channel, const uint8_t* h, const Range r[3],
                     uint64_t& bit, float v[4]) {
    const uint16_t word = load_le16(h);
    const bool raw = is_raw(word);
    if (channel == kRotation && raw) {
      for (int i = 0; i < 4; ++i, bit += 32) v[i] = std::bit_cast<float>(read_bits(d, bit, 32));
      return;
    }
    float k[3];
    for (int i = 0; i < 3; ++i) {
      const int bits = raw ? 32 : kBitRates[rate_code(word, i)];
      k[i] = dequantize(read_bits(d, bit, bits), bits, r[i]);
      bit += uint64_t(bits);
    }
    if (channel != kRotation) {
      v[0] = k[0], v[1] = k[1], v[2] = k[2], v[3] = 0;
      return;
    }
    const int drop = dropped_index(word);
    const float dropped = dropped_component(k[0], k[1], k[2]);
    for (int i = 0, o = 0; i < 4; ++i) v[i] = i == drop ? dropped : k[o++];
  }

  // Decodes one track at the cursor (advancing it).
  static void decode_track(const uint8_t* d, const CompressedClip::Track& tr, Cursor& cur,
                           float v[4]) {
    Range r[3];
    ranges(d, tr, cur.header, r);
    unpack(d, tr.channel, cur.header, r, cur.bit, v);
    cur.header += kSegmentTrackBytes;
  }

  // Decodes one track at two cursors; when both frames lie in one segment (15 times in 16) the
  // ranges are computed once.
  static void decode_pair(const uint8_t* d, const CompressedClip::Track& tr, Cursor& c0, Cursor& c1,
                          float v0[4], float v1[4]) {
    Range r[3];
    ranges(d, tr, c0.header, r);
    unpack(d, tr.channel, c0.header, r, c0.bit, v0);
    if (c1.header != c0.header) ranges(d, tr, c1.header, r);
    unpack(d, tr.channel, c1.header, r, c1.bit, v1);
    c0.header += kSegmentTrackBytes;
    c1.header += kSegmentTrackBytes;
  }

  static float* lane(SoaTransform& s, int channel, int comp) {
    float* base = channel == kTranslation ? s.tx : channel == kRotation ? s.qx : s.sx;
    return base + 4 * comp;
  }

  static void normalize4(float v[4]) {
    const float inv = 1.0f / std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2] + v[3] * v[3]);
    v[0] *= inv, v[1] *= inv, v[2] *= inv, v[3] *= inv;
  }

  // Blends b into a (rotations: short way round, then normalized).
  static void blend(int channel, float a[4], const float b[4], float alpha) {
    if (channel == kRotation) {
      const float s = a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] < 0 ? -1.0f : 1.0f;
      for (int i = 0; i < 4; ++i) a[i] += (s * b[i] - a[i]) * alpha;
      normalize4(a);
    } else {
      for (int i = 0; i < 3; ++i) a[i] += (b[i] - a[i]) * alpha;
    }
  }

  static void decode(const CompressedClip& c, int frame, float alpha, std::span<SoaTransform> out) {
    const auto* d = reinterpret_cast<const uint8_t*>(c.bytes_.data());
    std::memcpy(out.data(), c.base_.data(), c.base_.size() * sizeof(SoaTransform));
    // SoaTransform is 40 floats, no padding: component i of a track's joint is at lane + 4·i.
    float* o = out.data()->tx;
    Cursor c0 = cursor(c, frame);
#if KINEMA_COMPRESS_SSE
    if constexpr (std::endian::native == std::endian::little) {
      if (alpha > 0 && frame + 1 < c.frame_count_) {
        Cursor c1 = cursor(c, frame + 1);
        const __m128 a = _mm_set1_ps(alpha), sign = _mm_set1_ps(-0.0f);
        RotationGroups rotations(c.rotation_lanes_.data(), out.data());
        for (const CompressedClip::Track& tr : c.tracks_) {
          const bool rot = tr.channel == kRotation;
          const Segment4 g0 = segment4(d, tr.range_offset, tr.channel, c0.header);
          __m128 v0 = unpack4(d, tr.channel, g0, c0.bit, false);
          const Segment4 g1 =
              c1.header == c0.header ? g0 : segment4(d, tr.range_offset, tr.channel, c1.header);
          __m128 v1 = unpack4(d, tr.channel, g1, c1.bit, false);
          if (rot) {
            rebuild_pair(v0, g0.word, v1, g1.word);
            v1 = _mm_xor_ps(v1, _mm_and_ps(_mm_dp_ps(v0, v1, 0xFF), sign));
          }
          c0.header += kSegmentTrackBytes, c1.header += kSegmentTrackBytes;
          v0 = _mm_add_ps(v0, _mm_mul_ps(_mm_sub_ps(v1, v0), a));
          if (rot)
            rotations.put(tr.joint, v0);
          else
            store_lanes(o + tr.lane, v0, false);
        }
        return;
      }
      RotationGroups rotations(c.rotation_lanes_.data(), out.data());
      for (const CompressedClip::Track& tr : c.tracks_) {
        const Segment4 g = segment4(d, tr.range_offset, tr.channel, c0.header);
        const __m128 v = unpack4(d, tr.channel, g, c0.bit);
        c0.header += kSegmentTrackBytes;
        const bool rot = tr.channel == kRotation;
        if (rot)
          rotations.put(tr.joint, v);
        else
          store_lanes(o + tr.lane, v, false);
      }
      return;
    }
#endif
    if (alpha > 0 && frame + 1 < c.frame_count_) {
      // The two frames may come from segments that dropped different components (and so
      // flipped signs differently): blend() takes the short way round, lerps, normalizes.
      Cursor c1 = cursor(c, frame + 1);
      for (const CompressedClip::Track& tr : c.tracks_) {
        float v0[4], v1[4];
        decode_pair(d, tr, c0, c1, v0, v1);
        blend(tr.channel, v0, v1, alpha);
        float* p = o + tr.lane;
        p[0] = v0[0], p[4] = v0[1], p[8] = v0[2];
        if (tr.channel == kRotation) p[12] = v0[3];
      }
      return;
    }
    for (const CompressedClip::Track& tr : c.tracks_) {
      float v[4];
      decode_track(d, tr, c0, v);
      float* p = o + tr.lane;
      if (tr.channel == kRotation) normalize4(v), p[12] = v[3];
      p[0] = v[0], p[4] = v[1], p[8] = v[2];
    }
  }

  // Decodes every animated track of one frame into dst (4 floats each; rotations rebuilt, not
  // normalized).
  static void decode_frame(const CompressedClip& c, int frame, float* dst) {
    const auto* d = reinterpret_cast<const uint8_t*>(c.bytes_.data());
    Cursor cur = cursor(c, frame);
    for (const CompressedClip::Track& tr : c.tracks_) {
#if KINEMA_COMPRESS_SSE
      if constexpr (std::endian::native == std::endian::little) {
        const Segment4 g = segment4(d, tr.range_offset, tr.channel, cur.header);
        _mm_storeu_ps(dst, unpack4(d, tr.channel, g, cur.bit));
        cur.header += kSegmentTrackBytes;
        dst += 4;
        continue;
      }
#endif
      decode_track(d, tr, cur, dst);
      dst += 4;
    }
  }

  // The pose from two decoded frames: what decode() computes, from the cache.
  static void write_cached(const CompressedClip& c, const float* f0, const float* f1, float alpha,
                           bool blend_frames, std::span<SoaTransform> out) {
    std::memcpy(out.data(), c.base_.data(), c.base_.size() * sizeof(SoaTransform));
    float* o = out.data()->tx;
#if KINEMA_COMPRESS_SSE
    RotationGroups rotations(c.rotation_lanes_.data(), out.data());
#endif
    for (const CompressedClip::Track& tr : c.tracks_) {
      const bool rot = tr.channel == kRotation;
#if KINEMA_COMPRESS_SSE
      if constexpr (std::endian::native == std::endian::little) {
        __m128 v0 = _mm_loadu_ps(f0);
        if (blend_frames) {
          __m128 v1 = _mm_loadu_ps(f1);
          if (rot) v1 = _mm_xor_ps(v1, _mm_and_ps(_mm_dp_ps(v0, v1, 0xFF), _mm_set1_ps(-0.0f)));
          v0 = _mm_add_ps(v0, _mm_mul_ps(_mm_sub_ps(v1, v0), _mm_set1_ps(alpha)));
        }
        if (rot)
          rotations.put(tr.joint, v0);
        else
          store_lanes(o + tr.lane, v0, false);
        f0 += 4, f1 += 4;
        continue;
      }
#endif
      float v0[4] = {f0[0], f0[1], f0[2], f0[3]};
      if (blend_frames)
        blend(tr.channel, v0, f1, alpha);
      else if (rot)
        normalize4(v0);
      float* p = o + tr.lane;
      p[0] = v0[0], p[4] = v0[1], p[8] = v0[2];
      if (rot) p[12] = v0[3];
      f0 += 4, f1 += 4;
    }
  }

  static bool sample_cached(const CompressedClip& c, float time, CompressedSamplingCache& cache,
                            std::span<SoaTransform> out) {
    if (c.frame_count_ < 2 || out.size() != c.base_.size() || std::isnan(time) || cache.clip_ != &c)
      return false;
    int frame;
    float alpha;
    locate(c, time, frame, alpha);
    const size_t half = c.tracks_.size() * 4;
    float* base = cache.decoded_.data();
    if (cache.frame_ == frame) {
      // Same interval: nothing to decode.
    } else if (cache.frame_ >= 0 && cache.frame_ + 1 == frame) {
      cache.a_ ^= 1;  // forward: the old second frame becomes the first
      decode_frame(c, frame + 1, base + size_t(cache.a_ ^ 1) * half);
    } else if (cache.frame_ >= 0 && cache.frame_ - 1 == frame) {
      cache.a_ ^= 1;  // backward: the old first frame becomes the second
      decode_frame(c, frame, base + size_t(cache.a_) * half);
    } else if (frame != cache.last_frame_ + 1 && frame != cache.last_frame_ - 1) {
      // A seek, or playback faster than a frame a call (a 120 fps clip at 60 Hz lands two frames
      // on every time): neither decoded frame will serve the next call, so decode straight into
      // the pose (the same bits) rather than through the cache, which cost a pass more.
      decode(c, frame, alpha, out);
      cache.frame_ = -1, cache.last_frame_ = frame;
      return true;
    } else {
      decode_frame(c, frame, base + size_t(cache.a_) * half);
      decode_frame(c, frame + 1, base + size_t(cache.a_ ^ 1) * half);
    }
    cache.frame_ = cache.last_frame_ = frame;
    write_cached(c, base + size_t(cache.a_) * half, base + size_t(cache.a_ ^ 1) * half, alpha,
                 alpha > 0, out);
    return true;
  }

  static void locate(const CompressedClip& c, float time, int& frame, float& alpha) {
    const float x = std::clamp(time * c.rate_, 0.0f, float(c.frame_count_ - 1));
    frame = std::min(static_cast<int>(x), c.frame_count_ - 2);
    alpha = x - float(frame);
  }

  static bool sample_joints(const CompressedClip& c, float time, std::span<const int> joints,
                            std::span<Transformf> out) {
    if (c.frame_count_ < 2 || joints.size() != out.size() || std::isnan(time)) return false;
    for (int j : joints)
      if (j < 0 || j >= c.joint_count_) return false;
    int frame;
    float alpha;
    locate(c, time, frame, alpha);
    const auto* d = reinterpret_cast<const uint8_t*>(c.bytes_.data());
    const bool blend_frames = alpha > 0;
    for (size_t i = 0; i < joints.size(); ++i) {
      const int j = joints[i];
      SoaTransform o;
      std::memcpy(&o, &c.base_[size_t(j >> 2)], sizeof o);
      const int l = j & 3;
      Cursor c0 = cursor(c, frame), c1 = cursor(c, frame + 1);
      for (const CompressedClip::Track& tr : c.tracks_) {
        if (tr.joint > j) break;
        float v0[4], v1[4];
        decode_pair(d, tr, c0, c1, v0, v1);
        if (tr.joint != j) continue;
        if (blend_frames) blend(tr.channel, v0, v1, alpha);
        if (tr.channel == kRotation) normalize4(v0);
        for (int k = 0; k < (tr.channel == kRotation ? 4 : 3); ++k)
          lane(o, tr.channel, k)[l] = v0[k];
      }
      out[i] = get_joint(std::span<const SoaTransform>(&o, 1), l);
    }
    return true;
  }
};

bool sample_frame(const CompressedClip& clip, int frame, float alpha, std::span<SoaTransform> out) {
  if (clip.frame_count() < 2 || out.size() != size_t(clip.soa_count()) || std::isnan(alpha) ||
      frame < 0 || frame >= clip.frame_count())
    return false;
  CompressedClipDecoder::decode(clip, frame, std::clamp(alpha, 0.0f, 1.0f), out);
  return true;
}

bool sample(const CompressedClip& clip, float time, std::span<SoaTransform> out) {
  if (clip.frame_count() < 2 || out.size() != size_t(clip.soa_count()) || std::isnan(time))
    return false;
  int frame;
  float alpha;
  CompressedClipDecoder::locate(clip, time, frame, alpha);
  CompressedClipDecoder::decode(clip, frame, alpha, out);
  return true;
}

void CompressedSamplingCache::reset(const CompressedClip& clip) {
  clip_ = &clip;
  frame_ = last_frame_ = -1;
  a_ = 0;
  decoded_.assign(2 * size_t(clip.animated_track_count()) * 4, 0.0f);
}

bool sample(const CompressedClip& clip, float time, CompressedSamplingCache& cache,
            std::span<SoaTransform> out) {
  return CompressedClipDecoder::sample_cached(clip, time, cache, out);
}

bool sample_joints(const CompressedClip& clip, float time, std::span<const int> joints,
                   std::span<Transformf> out) {
  return CompressedClipDecoder::sample_joints(clip, time, joints, out);
}

}  // namespace kinema
