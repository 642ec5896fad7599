// kinema/compress/compressed_clip.h — compressed runtime clips: format, loading, sampling.
//
// A CompressedClip is what kinema::compress (kinema/compress/compress.h) produces and what a game
// keeps in memory: one contiguous byte buffer (exactly its serialized form) plus a few small
// tables derived from it when it is loaded (the constant pose in SoA form, where each segment's
// samples start, which joint each animated track drives). It is immutable; sampling is const,
// never allocates and is safe on any number of threads.
//
// The format (version 2, little-endian; docs/compress.md has the rationale and the numbers):
//
//   header (44 bytes)  "KNMC", u16 version, u16 flags (0), u32 total size, u32 FNV-1a checksum of
//                      every byte after offset 16, u32 joints, u32 frames, f32 sample rate,
//                      f32 duration, u16 frames per segment, u16 name length, u32 animated
//                      tracks, u32 constant tracks
//   name               UTF-8, not terminated
//   kinds              one byte per joint: translation bits 0–1, rotation 2–3, scale 4–5; each
//                      0 = identity (stored nowhere: zero translation, identity rotation, unit
//                      scale), 1 = constant, 2 = animated
//   constants          per constant track, in joint then T/R/S order: 3 or 4 full floats
//   clip ranges        per animated track: the minima of x, y, z (and w for rotations) as
//                      floats, then the extents
//   segment headers    per segment (frames [s·S, s·S+S); a tail of fewer than S/2 frames
//                      belongs to the last full segment), per animated track, 8 bytes: a u16
//                      rate word (bits 0–3, 4–7, 8–11: the bit-rate codes of the three stored
//                      components, each indexing 0…14 or 16 bits; bits 12–13: the rotation's
//                      dropped component, 0 for translations and scales; bit 14: raw, every
//                      component a full float and the codes 0; bit 15: 0), then the segment's
//                      range of the three stored components as 8-bit fractions of the clip
//                      range: three minima, then three extents
//   samples            per segment, byte-aligned: per frame, per animated track, 3 components
//                      at their own bit rates, LSB first (raw rotations: all 4 floats)
//   8 zero bytes       so the decoder may always read 8 bytes at once
//
// Version 1 buffers (one bit rate per track and segment, 7-byte segment headers) are refused with
// an error naming the version ("unsupported version 1 (this build reads 2)"): recompress them.
//
// Rotations are stored in smallest-three form: per track and segment, the component with the
// largest minimum magnitude over the segment's frames is dropped (2 bits), each sample's sign is
// flipped so that it is positive, and it is rebuilt as sqrt(1 − a² − b² − c²). Because the
// dropped component can change between segments the decoder checks the hemisphere of the two
// frames it interpolates (a dot product), then lerps and normalizes (nlerp). Translations and
// scales are lerped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kinema/math/soa_transform.h"
#include "kinema/math/transform.h"

namespace kinema {

/// What a compressed clip stores for one channel (translation, rotation or scale) of a joint.
/// The values are the channel's 2-bit code in the format's kind byte.
enum class TrackKind : uint8_t {
  Identity = 0,  ///< stored nowhere: zero translation, identity rotation, unit scale
  Constant = 1,  ///< stored once, as full floats
  Animated = 2,  ///< stored per frame, quantized per segment
};

class CompressedClip {
 public:
  CompressedClip() = default;

  /// Validates and loads a serialized clip (copies the bytes). Throws kinema::Error naming
  /// `source`, the byte offset and the reason on a bad magic, an unknown version, a size or
  /// checksum mismatch, truncation, counts that do not fit the data, non-finite or negative
  /// ranges, constants or rates, or an invalid kind / bit-rate / dropped-component code.
  static CompressedClip deserialize(std::span<const std::byte> bytes,
                                    const std::string& source = {});
  /// The serialized form (the same bytes deserialize() accepts).
  std::span<const std::byte> bytes() const { return bytes_; }

  const std::string& name() const { return name_; }
  float duration() const { return duration_; }
  float sample_rate() const { return rate_; }
  int frame_count() const { return frame_count_; }
  int joint_count() const { return joint_count_; }
  int soa_count() const { return kinema::soa_count(joint_count_); }
  /// Frames per segment S; the last segment holds the rest (S/2 … 3S/2 − 1 frames, or all of a
  /// clip shorter than S).
  int segment_frames() const { return segment_frames_; }
  int segment_count() const { return static_cast<int>(segment_bits_.size()); }
  int animated_track_count() const { return static_cast<int>(tracks_.size()); }
  int constant_track_count() const { return constant_tracks_; }
  /// Serialized size (what a file holds).
  size_t size_bytes() const { return bytes_.size(); }
  /// Heap bytes held: the buffer plus the tables derived at load.
  size_t memory_bytes() const;

  /// What is stored for a channel of a joint (channel 0 translation, 1 rotation, 2 scale);
  /// nothing for a joint or channel out of range.
  std::optional<TrackKind> kind(int joint, int channel) const;
  /// Bits of a stored component (0, 1, 2) of animated track t in segment s: 0…14 or 16, or 32
  /// for raw floats; component −1 (the default) gives the most of the three. −1 out of range.
  int bit_rate(int segment, int track, int component = -1) const;

 private:
  friend class CompressedClipDecoder;
  friend class CompressedClipLoader;
  struct Track {
    int32_t joint;
    int32_t channel;  // 0 T, 1 R, 2 S
    uint32_t range_offset;
    uint32_t lane;  // float index of component 0 in an SoA pose (component i at lane + 4·i)
  };
  std::vector<std::byte> bytes_;
  std::string name_;
  float duration_ = 0, rate_ = 0;
  int frame_count_ = 0, joint_count_ = 0, segment_frames_ = 0, constant_tracks_ = 0;
  size_t segment_headers_ = 0;          // byte offset of the segment headers
  std::vector<uint64_t> segment_bits_;  // bit offset of each segment's samples in bytes_
  std::vector<uint32_t> frame_bits_;    // bits per frame of each segment
  std::vector<Track> tracks_;
  std::vector<SoaTransform> base_;  // identity and constant channels, SoA
  // Per joint lane (four per group), all bits set where the joint's rotation is animated: the
  // lanes the decoder normalizes and writes when it stores a group's rotations.
  std::vector<uint32_t> rotation_lanes_;
};

/// Per-instance decoding cache for sequential playback: the decoded samples of the two frames
/// around the last sampled time, so playing forward (or backward) decodes only the frame just
/// reached. Sized for one clip at construction or reset() (allocates then, never while
/// sampling); one per playing instance, not shared by threads. Results are bit-identical to
/// sampling without a cache.
class CompressedSamplingCache {
 public:
  CompressedSamplingCache() = default;
  explicit CompressedSamplingCache(const CompressedClip& clip) { reset(clip); }
  void reset(const CompressedClip& clip);
  /// Forgets the decoded frames (the next sample decodes both).
  void invalidate() { frame_ = last_frame_ = -1; }

 private:
  friend class CompressedClipDecoder;
  const CompressedClip* clip_ = nullptr;
  int frame_ = -1;       // the frame decoded in half a_ (frame_ + 1 in the other); -1: none
  int last_frame_ = -1;  // the frame of the last sample, cached or not
  int a_ = 0;
  std::vector<float> decoded_;  // 2 × animated tracks × 4 floats
};

/// Samples at `time` seconds (clamped to [0, duration]) into `out` (clip.soa_count() elements,
/// the layout of kinema::sample for RuntimeClip, so it works wherever a runtime clip does).
/// Returns false, writing nothing, when the size does not match, the clip is empty or `time` is
/// NaN. Never allocates; safe on many threads.
bool sample(const CompressedClip& clip, float time, std::span<SoaTransform> out);
/// The same with a cache reset for this clip (returns false, writing nothing, when it belongs
/// to another clip).
bool sample(const CompressedClip& clip, float time, CompressedSamplingCache& cache,
            std::span<SoaTransform> out);

/// Samples only the listed joints: out[i] receives joint joints[i]. Returns false, writing
/// nothing, on a size mismatch, a joint index out of range, an empty clip or a NaN time.
bool sample_joints(const CompressedClip& clip, float time, std::span<const int> joints,
                   std::span<Transformf> out);

/// Decodes frame `frame` blended towards frame + 1 by `alpha` ∈ [0, 1] (alpha is ignored on the
/// last frame). What sample() does after locating the time; tools and tests use it to hit frames
/// and midpoints exactly. Returns false as sample() does, or when frame is out of range.
bool sample_frame(const CompressedClip& clip, int frame, float alpha, std::span<SoaTransform> out);

}  // namespace kinema
