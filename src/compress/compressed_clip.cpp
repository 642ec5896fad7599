// Loading a compressed clip: every field is validated before anything is sized from it, so a
// corrupted, truncated or hostile buffer gives a kinema::Error naming the byte offset.
#include "kinema/compress/compressed_clip.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "format.h"
#include "kinema/core/error.h"

namespace kinema {

using namespace compress_format;

namespace {

constexpr uint32_t kMaxFrames = 1u << 22;  // ~9.7 h at 120 fps
constexpr uint32_t kMaxJoints = 1u << 16;

/// Components a channel stores per sample at full precision: 4 for rotations, else 3.
int components(int channel) { return channel == kRotation ? 4 : 3; }

}  // namespace

/// Reads a serialized clip section by section (the order of the format, compressed_clip.h),
/// validating each before the next is sized from it, and fills the clip's derived tables.
class CompressedClipLoader {
 public:
  CompressedClipLoader(std::span<const std::byte> bytes, const std::string& source)
      : bytes_(bytes),
        d_(reinterpret_cast<const uint8_t*>(bytes.data())),
        n_(bytes.size()),
        source_(source) {}

  CompressedClip load() {
    read_header();
    read_name();
    read_kinds();
    read_constants();
    read_clip_ranges();
    read_segment_headers();
    locate_samples();
    check_raw_samples();
    find_rotation_lanes();
    c_.bytes_.assign(bytes_.begin(), bytes_.end());
    return std::move(c_);
  }

 private:
  using Track = CompressedClip::Track;

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
  /// The kind of joint j's channel ch (valid once read_kinds has checked the kind bytes).
  TrackKind kind(uint32_t j, int ch) const { return kind_in_byte(d_[kinds_at_ + j], ch); }
  /// Frames in segment s (the last may be short).
  uint64_t segment_frame_count(uint32_t s) const {
    return segment_length(s, frames_, uint32_t(c_.segment_frames_), segments_);
  }

  /// Magic, version, flags, size, checksum, then the counts, rate and duration.
  void read_header() {
    need(0, kHeaderBytes, "the header");
    if (std::memcmp(d_, kMagic, 4) != 0) fail(0, "not a kinema compressed clip (magic)");
    if (load_le16(d_ + 4) != kVersion)
      fail(4, "unsupported version " + std::to_string(load_le16(d_ + 4)) + " (this build reads " +
                  std::to_string(kVersion) + ")");
    if (load_le16(d_ + 6) != 0) fail(6, "unknown flags");
    const uint32_t total = load_le32(d_ + 8);
    if (total != n_)
      fail(total < n_ ? size_t(total) : n_, "the header says " + std::to_string(total) +
                                                " bytes but there are " + std::to_string(n_) +
                                                (total > n_ ? " (truncated)" : " (trailing data)"));
    if (fnv1a(d_ + 16, n_ - 16) != load_le32(d_ + 12))
      fail(12, "checksum mismatch (the data is corrupted)");

    joints_ = load_le32(d_ + 16), frames_ = load_le32(d_ + 20);
    if (joints_ == 0 || joints_ > kMaxJoints) fail(16, "joint count out of range");
    if (frames_ < 2 || frames_ > kMaxFrames) fail(20, "frame count out of range");
    c_.rate_ = finite_f32(24, "sample rate");
    c_.duration_ = finite_f32(28, "duration");
    if (!(c_.rate_ > 0)) fail(24, "sample rate must be positive");
    if (!(c_.duration_ > 0)) fail(28, "duration must be positive");
    const double expected = (frames_ - 1) / double(c_.rate_);
    if (std::abs(expected - c_.duration_) > 1e-3 * expected + 1e-4)
      fail(28, "duration does not match frames and sample rate");
    c_.segment_frames_ = load_le16(d_ + 32);
    if (c_.segment_frames_ < 1) fail(32, "frames per segment must be at least 1");
    name_length_ = load_le16(d_ + 34);
    animated_ = load_le32(d_ + 36), constants_ = load_le32(d_ + 40);
    if (animated_ > 3 * joints_) fail(36, "animated track count exceeds 3 per joint");
    if (constants_ > 3 * joints_) fail(40, "constant track count exceeds 3 per joint");
    c_.frame_count_ = int(frames_);
    c_.joint_count_ = int(joints_);
    c_.constant_tracks_ = int(constants_);
    at_ = kHeaderBytes;
  }

  void read_name() {
    need(at_, name_length_, "the name");
    c_.name_.assign(reinterpret_cast<const char*>(d_ + at_), name_length_);
    at_ += name_length_;
  }

  /// One byte per joint; the counts of animated and constant channels must match the header's.
  void read_kinds() {
    need(at_, joints_, "the channel kinds");
    kinds_at_ = at_;
    uint32_t n_anim = 0, n_const = 0;
    for (uint32_t j = 0; j < joints_; ++j) {
      const uint8_t k = d_[at_ + j];
      if (k & 0xC0) fail(at_ + j, "invalid channel kind byte");
      for (int ch = 0; ch < 3; ++ch) {
        if (((k >> (2 * ch)) & 3) == 3) fail(at_ + j, "invalid channel kind");
        n_anim += kind(j, ch) == TrackKind::Animated;
        n_const += kind(j, ch) == TrackKind::Constant;
      }
    }
    if (n_anim != animated_) fail(36, "animated track count does not match the channel kinds");
    if (n_const != constants_) fail(40, "constant track count does not match the channel kinds");
    at_ += joints_;
  }

  /// The constant channels' full floats → the base pose (identity channels keep the identity).
  void read_constants() {
    c_.base_.assign(size_t(kinema::soa_count(int(joints_))), SoaTransform::identity());
    for (uint32_t j = 0; j < joints_; ++j) {
      Transformf x;
      for (int ch = 0; ch < 3; ++ch) {
        if (kind(j, ch) != TrackKind::Constant) continue;
        const int comps = components(ch);
        need(at_, 4 * size_t(comps), "a constant track");
        float v[4];
        for (int i = 0; i < comps; ++i) v[i] = finite_f32(at_ + 4 * size_t(i), "a constant");
        if (ch == kTranslation) x.translation = {v[0], v[1], v[2]};
        if (ch == kScale) x.scale = {v[0], v[1], v[2]};
        if (ch == kRotation) {
          const float len2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2] + v[3] * v[3];
          if (!(std::abs(len2 - 1.0f) < 1e-3f)) fail(at_, "constant rotation is not unit length");
          x.rotation = {v[0], v[1], v[2], v[3]};
        }
        at_ += 4 * size_t(comps);
      }
      set_joint(c_.base_, int(j), x);
    }
  }

  /// Per animated track, its clip range (minima then extents) → the track table.
  void read_clip_ranges() {
    c_.tracks_.reserve(animated_);
    for (uint32_t j = 0; j < joints_; ++j)
      for (int ch = 0; ch < 3; ++ch) {
        if (kind(j, ch) != TrackKind::Animated) continue;
        const int comps = components(ch);
        need(at_, 8 * size_t(comps), "a clip range");
        for (int i = 0; i < comps; ++i) {
          const size_t o = at_ + 4 * size_t(i), oe = o + 4 * size_t(comps);
          const float mn = finite_f32(o, "a range minimum"), ext = finite_f32(oe, "a range");
          if (!(ext >= 0) || !std::isfinite(mn + ext))
            fail(oe, "range extent must be finite and not negative");
          if (ch == kRotation && (mn < -1.01f || mn + ext > 1.01f))
            fail(o, "rotation range outside [-1, 1]");
        }
        const uint32_t first = ch == kTranslation ? 0 : ch == kRotation ? 3 : 7;
        c_.tracks_.push_back(
            Track{int32_t(j), int32_t(ch), uint32_t(at_), (j >> 2) * 40 + first * 4 + (j & 3)});
        at_ += 8 * size_t(comps);
      }
  }

  /// Per segment and animated track: bit rate, dropped component, segment range → bits/frame.
  void read_segment_headers() {
    segments_ = segment_count(frames_, uint32_t(c_.segment_frames_));
    c_.segment_headers_ = at_;
    need(at_, size_t(segments_) * animated_ * kSegmentTrackBytes, "the segment headers");
    c_.frame_bits_.resize(segments_);
    c_.segment_bits_.resize(segments_);
    for (uint32_t s = 0; s < segments_; ++s) {
      uint32_t bits = 0;
      for (uint32_t t = 0; t < animated_; ++t, at_ += kSegmentTrackBytes) {
        const uint16_t word = load_le16(d_ + at_);
        if (word & 0x8000) fail(at_ + 1, "invalid rate word");
        if (is_raw(word) && (word & 0x0FFF)) fail(at_, "invalid bit rate (raw with codes)");
        if (c_.tracks_[t].channel != kRotation && dropped_index(word) != 0)
          fail(at_ + 1, "invalid component code");
        for (int i = 0; i < 3; ++i)
          if (int(d_[at_ + 2 + size_t(i)]) + d_[at_ + 5 + size_t(i)] > 255)
            fail(at_ + 2 + size_t(i), "segment range exceeds the clip range");
        bits += sample_bits(c_.tracks_[t].channel, word);
      }
      c_.frame_bits_[s] = bits;
    }
  }

  /// Where each segment's samples start (each byte-aligned), then the zero padding at the end.
  void locate_samples() {
    uint64_t data_at = at_;
    for (uint32_t s = 0; s < segments_; ++s) {
      c_.segment_bits_[s] = data_at * 8;
      data_at += (segment_frame_count(s) * c_.frame_bits_[s] + 7) / 8;
      if (data_at > n_) fail(n_, "truncated: the samples of segment " + std::to_string(s));
    }
    need(size_t(data_at), kTailPadding, "the end padding");
    if (data_at + kTailPadding != n_) fail(size_t(data_at + kTailPadding), "trailing data");
    for (size_t i = 0; i < kTailPadding; ++i)
      if (d_[data_at + i] != 0) fail(size_t(data_at + i), "end padding is not zero");
  }

  /// Raw-float samples must be finite too (quantized ones are bounded by their ranges).
  void check_raw_samples() const {
    for (uint32_t s = 0; s < segments_; ++s) {
      const uint8_t* hdr = d_ + c_.segment_headers_ + size_t(s) * animated_ * kSegmentTrackBytes;
      uint64_t bit = c_.segment_bits_[s];
      for (uint64_t f = 0; f < segment_frame_count(s); ++f)
        for (uint32_t t = 0; t < animated_; ++t) {
          const uint16_t word = load_le16(hdr + size_t(t) * kSegmentTrackBytes);
          if (!is_raw(word)) {
            bit += sample_bits(c_.tracks_[t].channel, word);
            continue;
          }
          for (int i = 0; i < stored_components(c_.tracks_[t].channel, true); ++i, bit += 32)
            if (!std::isfinite(std::bit_cast<float>(read_bits(d_, bit, 32))))
              fail(size_t(bit / 8), "a raw sample is not finite");
        }
    }
  }

  /// The joint lanes with animated rotations, which the decoder normalizes and writes.
  void find_rotation_lanes() {
    c_.rotation_lanes_.assign(c_.base_.size() * 4, 0);
    for (const Track& t : c_.tracks_)
      if (t.channel == kRotation) c_.rotation_lanes_[size_t(t.joint)] = 0xFFFFFFFFu;
  }

  std::span<const std::byte> bytes_;
  const uint8_t* d_;
  size_t n_;
  const std::string& source_;
  CompressedClip c_;
  uint32_t joints_ = 0, frames_ = 0, animated_ = 0, constants_ = 0, segments_ = 0;
  size_t name_length_ = 0;
  size_t at_ = 0;        // the next byte to read
  size_t kinds_at_ = 0;  // the kind bytes
};

CompressedClip CompressedClip::deserialize(std::span<const std::byte> bytes,
                                           const std::string& source) {
  return CompressedClipLoader(bytes, source).load();
}

size_t CompressedClip::memory_bytes() const {
  return bytes_.capacity() + name_.capacity() + segment_bits_.capacity() * sizeof(uint64_t) +
         frame_bits_.capacity() * sizeof(uint32_t) + tracks_.capacity() * sizeof(Track) +
         base_.capacity() * sizeof(SoaTransform) + rotation_lanes_.capacity() * sizeof(uint32_t);
}

std::optional<TrackKind> CompressedClip::kind(int joint, int channel) const {
  if (joint < 0 || joint >= joint_count_ || channel < 0 || channel > 2) return std::nullopt;
  const auto* d = reinterpret_cast<const uint8_t*>(bytes_.data());
  return kind_in_byte(d[kHeaderBytes + name_.size() + size_t(joint)], channel);
}

int CompressedClip::bit_rate(int segment, int track, int component) const {
  if (segment < 0 || segment >= segment_count() || track < 0 || track >= animated_track_count() ||
      component < -1 || component > 2)
    return -1;
  const auto* d = reinterpret_cast<const uint8_t*>(bytes_.data());
  const uint16_t word =
      load_le16(d + segment_headers_ +
                (size_t(segment) * tracks_.size() + size_t(track)) * kSegmentTrackBytes);
  if (is_raw(word)) return 32;
  if (component >= 0) return kBitRates[rate_code(word, component)];
  return std::max({kBitRates[rate_code(word, 0)], kBitRates[rate_code(word, 1)],
                   kBitRates[rate_code(word, 2)]});
}

}  // namespace kinema
