// Internal: the byte layout of a compressed clip, shared by the encoder (compress.cpp), the
// loader (compressed_clip.cpp) and the decoder (decode.cpp). Documented in
// kinema/compress/compressed_clip.h and docs/compress.md; not installed.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kinema/compress/compressed_clip.h"

namespace kinema::compress_format {

inline constexpr char kMagic[4] = {'K', 'N', 'M', 'C'};
/// Version 2 (per-component bit rates, 8-byte segment headers). Version 1 files are refused
/// with an error naming the version (recompress them from the source).
inline constexpr uint16_t kVersion = 2;
inline constexpr size_t kHeaderBytes = 44;
/// Bytes of zero padding after the sample data, so the decoder may always read 8 bytes.
inline constexpr size_t kTailPadding = 8;
/// Bytes per animated track per segment: a 16-bit rate word + 3 × (8-bit min, 8-bit extent).
inline constexpr size_t kSegmentTrackBytes = 8;

// The rate word (u16, little-endian) of a track's segment header: bits 0–3, 4–7 and 8–11 are
// the bit-rate codes of the three stored components, bits 12–13 the rotation's dropped component
// (0 for translations and scales), bit 14 marks a raw segment (every component a full float,
// rotations all four; the codes are 0 then), bit 15 is 0.
inline constexpr uint16_t kRawFlag = 0x4000;
inline int rate_code(uint16_t word, int i) { return (word >> (4 * i)) & 15; }
inline int dropped_index(uint16_t word) { return (word >> 12) & 3; }
inline bool is_raw(uint16_t word) { return (word & kRawFlag) != 0; }

/// Segments of a clip: frames [s·S, s·S + S), except that a tail of fewer than S/2 frames
/// joins the segment before it (so a 49-frame clip at S = 16 has segments of 16, 16 and 17
/// frames rather than a fourth segment whose headers would cost more than its one frame).
inline uint32_t segment_count(uint64_t frames, uint32_t S) {
  uint64_t n = (frames + S - 1) / S;
  if (n > 1 && frames - (n - 1) * S < S / 2) --n;
  return uint32_t(n);
}
/// The segment holding a frame, and the frames of segment s.
inline uint32_t segment_of(uint64_t frame, uint32_t S, uint32_t count) {
  return uint32_t(std::min<uint64_t>(frame / S, count - 1));
}
inline uint64_t segment_length(uint32_t s, uint64_t frames, uint32_t S, uint32_t count) {
  return s + 1 == count ? frames - uint64_t(s) * S : S;
}

enum Channel : int { kTranslation = 0, kRotation = 1, kScale = 2 };

// Channel kinds (TrackKind), 2 bits each in a joint's kind byte: translation bits 0–1,
// rotation 2–3, scale 4–5. Code 3 is invalid (the loader rejects it before reading kinds).
inline TrackKind kind_in_byte(uint8_t kinds, int channel) {
  return TrackKind((kinds >> (2 * channel)) & 3);
}
inline uint8_t kind_bits(TrackKind kind, int channel) {
  return uint8_t(uint8_t(kind) << (2 * channel));
}

/// Bits of a stored component for each 4-bit rate code. Code 0 stores nothing (the segment
/// range's midpoint). Three components take at most 48 bits: one 64-bit read holds them all.
inline constexpr uint8_t kBitRates[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 16};
/// The encoder's rate index per component: the 16 codes, then kRawRate (the whole track raw).
inline constexpr int kBitRateCount = 17;
inline constexpr int kRawRate = 16;
inline int rate_bits(int index) { return index == kRawRate ? 32 : kBitRates[index]; }

/// Stored components per sample: three, except raw rotations, which keep all four (so a segment
/// whose dropped component gets small — a jump through 180° — still decodes exactly).
inline int stored_components(int channel, bool raw) { return channel == 1 && raw ? 4 : 3; }
/// Bits of one sample of a track in a segment, from its rate word.
inline uint32_t sample_bits(int channel, uint16_t word) {
  if (is_raw(word)) return 32u * uint32_t(stored_components(channel, true));
  return uint32_t(kBitRates[rate_code(word, 0)] + kBitRates[rate_code(word, 1)] +
                  kBitRates[rate_code(word, 2)]);
}

inline uint32_t fnv1a(const uint8_t* p, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 16777619u;
  return h;
}

inline uint64_t load_le64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
  return v;
}
inline uint32_t load_le32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}
inline uint16_t load_le16(const uint8_t* p) { return uint16_t(p[0] | p[1] << 8); }
inline float load_f32(const uint8_t* p) { return std::bit_cast<float>(load_le32(p)); }

/// `bits` (≤ 32) bits starting at bit `pos` (LSB first); the buffer has kTailPadding spare bytes.
inline uint32_t read_bits(const uint8_t* data, uint64_t pos, int bits) {
  const uint64_t w = load_le64(data + (pos >> 3)) >> (pos & 7);
  return bits == 32 ? uint32_t(w) : uint32_t(w & ((uint64_t(1) << bits) - 1));
}

/// A segment's range of one component, from its two bytes and the clip range.
struct Range {
  float min, extent;
};
inline Range segment_range(float clip_min, float clip_extent, uint8_t min_q, uint8_t ext_q) {
  const float step = clip_extent * (1.0f / 255.0f);
  return {clip_min + float(min_q) * step, float(ext_q) * step};
}

/// 1 / (2^bits − 1) per bit count (0.5 for 0 bits: the code is 1/2 of nothing, see dequantize).
struct InverseMax {
  float v[33];
  constexpr InverseMax() : v{} {
    v[0] = 0.0f;
    for (int b = 1; b <= 32; ++b) v[b] = 1.0f / float((uint64_t(1) << b) - 1);
  }
};
inline constexpr InverseMax kInverseMax{};

/// One stored component → value (the decoder's exact arithmetic; the encoder emulates with it):
/// base + code · step, with base the segment minimum (its middle for 0 bits) and step
/// extent · 1/(2^bits − 1), both computed once per segment header. 32 bits are the raw float.
inline float dequantize(uint32_t code, int bits, Range r) {
  if (bits == 32) return std::bit_cast<float>(code);
  const float base = r.min + (bits == 0 ? 0.5f : 0.0f) * r.extent;
  return base + float(code) * (r.extent * kInverseMax.v[bits]);
}

/// The encoder's side of dequantize.
inline uint32_t quantize(float v, int bits, Range r) {
  if (bits == 32) return std::bit_cast<uint32_t>(v);
  if (bits == 0 || !(r.extent > 0)) return 0;
  const double maxc = double((uint32_t(1) << bits) - 1);
  double u = (double(v) - double(r.min)) / double(r.extent);
  u = u < 0 ? 0 : (u > 1 ? 1 : u);
  return uint32_t(std::lround(u * maxc));
}

/// Reconstructs the dropped component of a smallest-three quaternion (never NaN).
inline float dropped_component(float a, float b, float c) {
  const float s = 1.0f - (a * a + b * b + c * c);
  return s > 0 ? std::sqrt(s) : 0.0f;
}

}  // namespace kinema::compress_format
