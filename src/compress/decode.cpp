// Sampling a compressed clip: the constant pose is copied, then every animated track is decoded
// at the two frames around the time (bit unpacking, segment range, clip range) and blended in
// place. Straight-line code per track, no allocation, no mutable state.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "format.h"
#include "kinema/compress/compressed_clip.h"

namespace kinema {

using namespace compress_format;

class CompressedClipDecoder {
 public:
  // Where frame `frame`'s samples are: its segment's headers and the bit of its first sample.
  struct Cursor {
    const uint8_t* header;
    uint64_t bit;
  };
  static Cursor cursor(const CompressedClip& c, int frame) {
    const auto* d = reinterpret_cast<const uint8_t*>(c.bytes_.data());
    const int s = frame / c.segment_frames_;
    const int fi = frame - s * c.segment_frames_;
    return {d + c.segment_headers_ + size_t(s) * c.tracks_.size() * kSegmentTrackBytes,
            c.segment_bits_[size_t(s)] + uint64_t(fi) * c.frame_bits_[size_t(s)]};
  }

  // Decodes one track's sample at the cursor (advancing it) into v (x, y, z[, w]).
  static void decode_track(const uint8_t* d, const CompressedClip::Track& tr, Cursor& cur,
                           float v[4]) {
    const uint8_t* h = cur.header;
    const uint8_t rate = h[0];
    const int bits = kBitRates[rate & 31];
    const uint8_t* range = d + tr.range_offset;
    if (tr.channel == kRotation && bits == 32) {
      for (int i = 0; i < 4; ++i, cur.bit += 32)
        v[i] = std::bit_cast<float>(read_bits(d, cur.bit, 32));
    } else if (tr.channel == kRotation) {
      const int drop = rate >> 5;
      float k[3];
      for (int i = 0; i < 3; ++i) {
        const int comp = i + (i >= drop);
        const Range rg = segment_range(load_f32(range + 8 * comp), load_f32(range + 8 * comp + 4),
                                       h[1 + 2 * i], h[2 + 2 * i]);
        k[i] = dequantize(read_bits(d, cur.bit, bits), bits, rg);
        cur.bit += uint64_t(bits);
      }
      const float dropped = dropped_component(k[0], k[1], k[2]);
      for (int i = 0, o = 0; i < 4; ++i) v[i] = i == drop ? dropped : k[o++];
    } else {
      for (int i = 0; i < 3; ++i) {
        const Range rg = segment_range(load_f32(range + 8 * i), load_f32(range + 8 * i + 4),
                                       h[1 + 2 * i], h[2 + 2 * i]);
        v[i] = dequantize(read_bits(d, cur.bit, bits), bits, rg);
        cur.bit += uint64_t(bits);
      }
    }
    cur.header += kSegmentTrackBytes;
  }

  static float* lane(SoaTransform& s, int channel, int comp) {
    switch (channel) {
      case kTranslation:
        return comp == 0 ? s.tx : comp == 1 ? s.ty : s.tz;
      case kRotation:
        return comp == 0 ? s.qx : comp == 1 ? s.qy : comp == 2 ? s.qz : s.qw;
      default:
        return comp == 0 ? s.sx : comp == 1 ? s.sy : s.sz;
    }
  }

  static void normalize_lane(SoaTransform& o, int l) {
    const float n2 = o.qx[l] * o.qx[l] + o.qy[l] * o.qy[l] + o.qz[l] * o.qz[l] + o.qw[l] * o.qw[l];
    const float inv = 1.0f / std::sqrt(n2);
    o.qx[l] *= inv, o.qy[l] *= inv, o.qz[l] *= inv, o.qw[l] *= inv;
  }

  static void decode(const CompressedClip& c, int frame, float alpha, std::span<SoaTransform> out) {
    const auto* d = reinterpret_cast<const uint8_t*>(c.bytes_.data());
    std::memcpy(out.data(), c.base_.data(), c.base_.size() * sizeof(SoaTransform));
    const bool blend = alpha > 0 && frame + 1 < c.frame_count_;
    Cursor cur = cursor(c, frame);
    for (const CompressedClip::Track& tr : c.tracks_) {
      float v[4];
      decode_track(d, tr, cur, v);
      SoaTransform& o = out[size_t(tr.joint >> 2)];
      const int l = tr.joint & 3;
      const int comps = tr.channel == kRotation ? 4 : 3;
      for (int i = 0; i < comps; ++i) lane(o, tr.channel, i)[l] = v[i];
      if (!blend && tr.channel == kRotation) normalize_lane(o, l);
    }
    if (!blend) return;
    cur = cursor(c, frame + 1);
    for (const CompressedClip::Track& tr : c.tracks_) {
      float v[4];
      decode_track(d, tr, cur, v);
      SoaTransform& o = out[size_t(tr.joint >> 2)];
      const int l = tr.joint & 3;
      if (tr.channel == kRotation) {
        // The two frames may come from segments that dropped different components (and so
        // flipped signs differently): take the short way round, lerp, normalize.
        const float dt = o.qx[l] * v[0] + o.qy[l] * v[1] + o.qz[l] * v[2] + o.qw[l] * v[3];
        const float s = dt < 0 ? -1.0f : 1.0f;
        o.qx[l] += (s * v[0] - o.qx[l]) * alpha, o.qy[l] += (s * v[1] - o.qy[l]) * alpha;
        o.qz[l] += (s * v[2] - o.qz[l]) * alpha, o.qw[l] += (s * v[3] - o.qw[l]) * alpha;
        normalize_lane(o, l);
      } else {
        for (int i = 0; i < 3; ++i) {
          float& x = lane(o, tr.channel, i)[l];
          x += (v[i] - x) * alpha;
        }
      }
    }
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
    const bool blend = alpha > 0;
    for (size_t i = 0; i < joints.size(); ++i) {
      const int j = joints[i];
      SoaTransform o;
      std::memcpy(&o, &c.base_[size_t(j >> 2)], sizeof o);
      const int l = j & 3;
      Cursor c0 = cursor(c, frame), c1 = cursor(c, frame + 1);
      for (const CompressedClip::Track& tr : c.tracks_) {
        if (tr.joint > j) break;
        float v0[4], v1[4];
        decode_track(d, tr, c0, v0);
        decode_track(d, tr, c1, v1);
        if (tr.joint != j) continue;
        if (tr.channel == kRotation) {
          const float dt = v0[0] * v1[0] + v0[1] * v1[1] + v0[2] * v1[2] + v0[3] * v1[3];
          const float s = dt < 0 ? -1.0f : 1.0f;
          for (int k = 0; k < 4; ++k)
            lane(o, kRotation, k)[l] = blend ? v0[k] + (s * v1[k] - v0[k]) * alpha : v0[k];
          normalize_lane(o, l);
        } else {
          for (int k = 0; k < 3; ++k)
            lane(o, tr.channel, k)[l] = blend ? v0[k] + (v1[k] - v0[k]) * alpha : v0[k];
        }
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

bool sample_joints(const CompressedClip& clip, float time, std::span<const int> joints,
                   std::span<Transformf> out) {
  return CompressedClipDecoder::sample_joints(clip, time, joints, out);
}

}  // namespace kinema
