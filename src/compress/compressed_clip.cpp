// Loading a compressed clip: every field is validated before anything is sized from it, so a
// corrupted, truncated or hostile buffer gives a kinema::Error naming the byte offset.
#include "kinema/compress/compressed_clip.h"

#include <cmath>
#include <cstring>

#include "format.h"
#include "kinema/core/error.h"

namespace kinema {

using namespace compress_format;

namespace {

constexpr uint32_t kMaxFrames = 1u << 22;  // ~9.7 h at 120 fps
constexpr uint32_t kMaxJoints = 1u << 16;

class Reader {
 public:
  Reader(const uint8_t* data, size_t size, const std::string& source)
      : d_(data), n_(size), source_(source) {}
  [[noreturn]] void fail(size_t offset, const std::string& reason) const {
    throw Error(source_, "byte " + std::to_string(offset), reason);
  }
  void need(size_t offset, size_t count, const char* what) const {
    if (offset > n_ || count > n_ - offset)
      fail(offset, std::string("truncated: ") + what + " needs " + std::to_string(count) +
                       " bytes, " + std::to_string(offset > n_ ? 0 : n_ - offset) + " left");
  }
  float finite_f32(size_t offset, const char* what) const {
    const float v = load_f32(d_ + offset);
    if (!std::isfinite(v)) fail(offset, std::string(what) + " is not finite");
    return v;
  }

 private:
  const uint8_t* d_;
  size_t n_;
  const std::string& source_;
};

}  // namespace

CompressedClip CompressedClip::deserialize(std::span<const std::byte> bytes,
                                           const std::string& source) {
  const auto* d = reinterpret_cast<const uint8_t*>(bytes.data());
  const size_t n = bytes.size();
  Reader r(d, n, source);
  r.need(0, kHeaderBytes, "the header");
  if (std::memcmp(d, kMagic, 4) != 0) r.fail(0, "not a kinema compressed clip (magic)");
  if (load_le16(d + 4) != kVersion)
    r.fail(4, "unsupported version " + std::to_string(load_le16(d + 4)) + " (this build reads " +
                  std::to_string(kVersion) + ")");
  if (load_le16(d + 6) != 0) r.fail(6, "unknown flags");
  const uint32_t total = load_le32(d + 8);
  if (total != n)
    r.fail(total < n ? size_t(total) : n, "the header says " + std::to_string(total) +
                                              " bytes but there are " + std::to_string(n) +
                                              (total > n ? " (truncated)" : " (trailing data)"));
  if (fnv1a(d + 16, n - 16) != load_le32(d + 12))
    r.fail(12, "checksum mismatch (the data is corrupted)");

  CompressedClip c;
  const uint32_t joints = load_le32(d + 16), frames = load_le32(d + 20);
  if (joints == 0 || joints > kMaxJoints) r.fail(16, "joint count out of range");
  if (frames < 2 || frames > kMaxFrames) r.fail(20, "frame count out of range");
  c.rate_ = r.finite_f32(24, "sample rate");
  c.duration_ = r.finite_f32(28, "duration");
  if (!(c.rate_ > 0)) r.fail(24, "sample rate must be positive");
  if (!(c.duration_ > 0)) r.fail(28, "duration must be positive");
  const double expected = (frames - 1) / double(c.rate_);
  if (std::abs(expected - c.duration_) > 1e-3 * expected + 1e-4)
    r.fail(28, "duration does not match frames and sample rate");
  c.segment_frames_ = load_le16(d + 32);
  if (c.segment_frames_ < 1) r.fail(32, "frames per segment must be at least 1");
  const size_t name_len = load_le16(d + 34);
  const uint32_t animated = load_le32(d + 36), constants = load_le32(d + 40);
  if (animated > 3 * joints) r.fail(36, "animated track count exceeds 3 per joint");
  if (constants > 3 * joints) r.fail(40, "constant track count exceeds 3 per joint");
  c.frame_count_ = int(frames);
  c.joint_count_ = int(joints);
  c.constant_tracks_ = int(constants);

  size_t at = kHeaderBytes;
  r.need(at, name_len, "the name");
  c.name_.assign(reinterpret_cast<const char*>(d + at), name_len);
  at += name_len;

  // Kinds.
  r.need(at, joints, "the channel kinds");
  const size_t kinds_at = at;
  uint32_t n_anim = 0, n_const = 0;
  for (uint32_t j = 0; j < joints; ++j) {
    const uint8_t k = d[at + j];
    if (k & 0xC0) r.fail(at + j, "invalid channel kind byte");
    for (int ch = 0; ch < 3; ++ch) {
      if (((k >> (2 * ch)) & 3) == 3) r.fail(at + j, "invalid channel kind");
      n_anim += kind_in_byte(k, ch) == TrackKind::Animated;
      n_const += kind_in_byte(k, ch) == TrackKind::Constant;
    }
  }
  if (n_anim != animated) r.fail(36, "animated track count does not match the channel kinds");
  if (n_const != constants) r.fail(40, "constant track count does not match the channel kinds");
  at += joints;

  // Constants → the base pose.
  c.base_.assign(size_t(kinema::soa_count(int(joints))), SoaTransform::identity());
  for (uint32_t j = 0; j < joints; ++j) {
    Transformf x;
    for (int ch = 0; ch < 3; ++ch) {
      if (kind_in_byte(d[kinds_at + j], ch) != TrackKind::Constant) continue;
      const int comps = ch == kRotation ? 4 : 3;
      r.need(at, 4 * size_t(comps), "a constant track");
      float v[4];
      for (int i = 0; i < comps; ++i) v[i] = r.finite_f32(at + 4 * size_t(i), "a constant");
      if (ch == kTranslation) x.translation = {v[0], v[1], v[2]};
      if (ch == kScale) x.scale = {v[0], v[1], v[2]};
      if (ch == kRotation) {
        const float len2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2] + v[3] * v[3];
        if (!(std::abs(len2 - 1.0f) < 1e-3f)) r.fail(at, "constant rotation is not unit length");
        x.rotation = {v[0], v[1], v[2], v[3]};
      }
      at += 4 * size_t(comps);
    }
    set_joint(c.base_, int(j), x);
  }

  // Clip ranges.
  c.tracks_.reserve(animated);
  for (uint32_t j = 0; j < joints; ++j)
    for (int ch = 0; ch < 3; ++ch) {
      if (kind_in_byte(d[kinds_at + j], ch) != TrackKind::Animated) continue;
      const int comps = ch == kRotation ? 4 : 3;
      r.need(at, 8 * size_t(comps), "a clip range");
      for (int i = 0; i < comps; ++i) {
        const size_t o = at + 4 * size_t(i), oe = o + 4 * size_t(comps);
        const float mn = r.finite_f32(o, "a range minimum"), ext = r.finite_f32(oe, "a range");
        if (!(ext >= 0) || !std::isfinite(mn + ext))
          r.fail(oe, "range extent must be finite and not negative");
        if (ch == kRotation && (mn < -1.01f || mn + ext > 1.01f))
          r.fail(o, "rotation range outside [-1, 1]");
      }
      const uint32_t first = ch == kTranslation ? 0 : ch == kRotation ? 3 : 7;
      c.tracks_.push_back(
          {int32_t(j), int32_t(ch), uint32_t(at), (j >> 2) * 40 + first * 4 + (j & 3)});
      at += 8 * size_t(comps);
    }

  // Segment headers.
  const uint32_t segs = (frames + uint32_t(c.segment_frames_) - 1) / uint32_t(c.segment_frames_);
  c.segment_headers_ = at;
  r.need(at, size_t(segs) * animated * kSegmentTrackBytes, "the segment headers");
  c.frame_bits_.resize(segs);
  c.segment_bits_.resize(segs);
  for (uint32_t s = 0; s < segs; ++s) {
    uint32_t bits = 0;
    for (uint32_t t = 0; t < animated; ++t, at += kSegmentTrackBytes) {
      const uint8_t rate = d[at];
      if ((rate & 31) >= kBitRateCount || (rate & 0x80)) r.fail(at, "invalid bit rate");
      if (c.tracks_[t].channel != kRotation && (rate >> 5)) r.fail(at, "invalid component code");
      for (int i = 0; i < 3; ++i)
        if (int(d[at + 1 + size_t(i)]) + d[at + 4 + size_t(i)] > 255)
          r.fail(at + 1 + size_t(i), "segment range exceeds the clip range");
      const int b = kBitRates[rate & 31];
      bits += uint32_t(stored_components(c.tracks_[t].channel, b) * b);
    }
    c.frame_bits_[s] = bits;
  }

  // Samples: each segment byte-aligned, then the zero padding.
  uint64_t data_at = at;
  for (uint32_t s = 0; s < segs; ++s) {
    const uint64_t seg_frames =
        std::min<uint64_t>(c.segment_frames_, frames - s * c.segment_frames_);
    c.segment_bits_[s] = data_at * 8;
    data_at += (seg_frames * c.frame_bits_[s] + 7) / 8;
    if (data_at > n) r.fail(n, "truncated: the samples of segment " + std::to_string(s));
  }
  r.need(size_t(data_at), kTailPadding, "the end padding");
  if (data_at + kTailPadding != n) r.fail(size_t(data_at + kTailPadding), "trailing data");
  for (size_t i = 0; i < kTailPadding; ++i)
    if (d[data_at + i] != 0) r.fail(size_t(data_at + i), "end padding is not zero");

  // Raw-float samples must be finite too (quantized ones are bounded by their ranges).
  for (uint32_t s = 0; s < segs; ++s) {
    const uint64_t seg_frames =
        std::min<uint64_t>(c.segment_frames_, frames - s * c.segment_frames_);
    const uint8_t* hdr = d + c.segment_headers_ + size_t(s) * animated * kSegmentTrackBytes;
    uint64_t bit = c.segment_bits_[s];
    for (uint64_t f = 0; f < seg_frames; ++f)
      for (uint32_t t = 0; t < animated; ++t) {
        const int b = kBitRates[hdr[t * kSegmentTrackBytes] & 31];
        for (int i = 0; i < stored_components(c.tracks_[t].channel, b); ++i, bit += uint64_t(b))
          if (b == 32 && !std::isfinite(std::bit_cast<float>(read_bits(d, bit, 32))))
            r.fail(size_t(bit / 8), "a raw sample is not finite");
      }
  }

  c.rotation_lanes_.assign(c.base_.size() * 4, 0);
  for (const Track& t : c.tracks_)
    if (t.channel == kRotation) c.rotation_lanes_[size_t(t.joint)] = 0xFFFFFFFFu;
  for (size_t g = 0; g < c.base_.size(); ++g)
    if (c.rotation_lanes_[4 * g] | c.rotation_lanes_[4 * g + 1] | c.rotation_lanes_[4 * g + 2] |
        c.rotation_lanes_[4 * g + 3])
      c.rotation_groups_.push_back(int32_t(g));

  c.bytes_.assign(bytes.begin(), bytes.end());
  return c;
}

size_t CompressedClip::memory_bytes() const {
  return bytes_.capacity() + name_.capacity() + segment_bits_.capacity() * sizeof(uint64_t) +
         frame_bits_.capacity() * sizeof(uint32_t) + tracks_.capacity() * sizeof(Track) +
         base_.capacity() * sizeof(SoaTransform) + rotation_groups_.capacity() * sizeof(int32_t) +
         rotation_lanes_.capacity() * sizeof(uint32_t);
}

std::optional<TrackKind> CompressedClip::kind(int joint, int channel) const {
  if (joint < 0 || joint >= joint_count_ || channel < 0 || channel > 2) return std::nullopt;
  const auto* d = reinterpret_cast<const uint8_t*>(bytes_.data());
  return kind_in_byte(d[kHeaderBytes + name_.size() + size_t(joint)], channel);
}

int CompressedClip::bit_rate(int segment, int track) const {
  if (segment < 0 || segment >= segment_count() || track < 0 || track >= animated_track_count())
    return -1;
  const auto* d = reinterpret_cast<const uint8_t*>(bytes_.data());
  return kBitRates[d[segment_headers_ +
                     (size_t(segment) * tracks_.size() + size_t(track)) * kSegmentTrackBytes] &
                   31];
}

}  // namespace kinema
