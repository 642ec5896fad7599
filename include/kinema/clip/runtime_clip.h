// kinema/clip/runtime_clip.h — compact, immutable clips for per-frame sampling.
//
// A RuntimeClip is built offline from a raw Clip: every channel is resampled at a uniform rate
// (so finding the two frames around a time is one multiply, never a search), stored SoA four
// joints at a time, and channels that never change are stored once. Rotations are stored as
// 16-bit normalized integers (max error 1.5e-5 per component, about 0.002°), with consecutive
// frames put in the same hemisphere at build time so sampling is a plain lerp + normalize.
// Translations and scales are 32-bit floats.
//
// Two layouts (RuntimeClipOptions::format). `Fast` stores every joint of a four-joint group
// whose channel moves, rotations as four 16-bit components: the quickest to sample. `Compact`
// stores only the joints that move, rotations as their three smallest components (15, 15 and
// 16 bits; the largest is rebuilt from the unit norm, its position in two spare bits), so a clip
// where a third of the joints move (fingers, toes and helpers hold still) takes about half the
// memory; sampling expands each group's moving lanes with one byte shuffle per component and
// puts consecutive frames in one hemisphere at sampling time. Its rotations are within 2e-4 rad
// (0.012°; 0.2 mm at the end of a 1 m lever) of the source's, against 3e-5 rad for Fast.
//
// Sampling writes a local SoA pose (see kinema/math/soa_transform.h) and never allocates. A
// SamplingCache per playing instance keeps the last decoded frames, so sequential playback
// decodes only the frame it has just reached.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kinema/clip/clip.h"
#include "kinema/math/soa_transform.h"

namespace kinema {

class Skeleton;

/// How a RuntimeClip stores its animated channels (see the file comment).
enum class RuntimeClipFormat {
  Fast,     ///< whole four-joint groups, rotations as 4 × snorm16: fastest sampling
  Compact,  ///< moving joints only, rotations as smallest three (15+15+16 bits): least memory
};

struct RuntimeClipOptions {
  /// Frames per second of the runtime clip; 0 keeps the raw clip's nominal rate (30 when the
  /// clip has none). The last frame always lands exactly on the duration.
  double sample_rate = 0;
  /// A channel whose values stay within this of its first value over the whole clip is stored
  /// once (metres for translations, quaternion component for rotations, ratio for scales).
  double constant_tolerance = 1e-6;
  RuntimeClipFormat format = RuntimeClipFormat::Fast;
};

class RuntimeClip {
 public:
  RuntimeClip() = default;
  /// Resamples `clip` on `skeleton` (joints without a track hold their rest value).
  /// Throws kinema::Error when the clip does not validate against the skeleton or its duration
  /// or rate is not finite and positive.
  static RuntimeClip build(const Clip& clip, const Skeleton& skeleton,
                           const RuntimeClipOptions& options = {});

  const std::string& name() const { return name_; }
  float duration() const { return duration_; }  ///< seconds (> 0 for a built clip)
  float sample_rate() const { return rate_; }   ///< frames per second, (frame_count-1)/duration
  int frame_count() const { return frame_count_; }
  int joint_count() const { return joint_count_; }
  int soa_count() const { return kinema::soa_count(joint_count_); }
  RuntimeClipFormat format() const { return format_; }
  /// Heap bytes held by this clip (what a game keeps in memory for it).
  size_t memory_bytes() const;

  // --- layout (read by the sampler; documented for tools and tests) -------------------------
  // Each of the soa_count() joint groups has, per channel (translation, rotation, scale), either
  // an animated slot (index into that channel's per-frame block) or a constant value. In the
  // Compact format a slot numbers the groups with at least one moving joint in that channel.
  struct Group {
    int32_t translation_slot = -1;  ///< -1: constant, else animated slot
    int32_t rotation_slot = -1;
    int32_t scale_slot = -1;
  };
  std::span<const Group> groups() const { return groups_; }
  int animated_translation_groups() const { return t_slots_; }
  int animated_rotation_groups() const { return r_slots_; }
  int animated_scale_groups() const { return s_slots_; }

 private:
  friend class ClipSampler;
  std::string name_;
  float duration_ = 0, rate_ = 0;
  int frame_count_ = 0, joint_count_ = 0;
  int t_slots_ = 0, r_slots_ = 0, s_slots_ = 0;
  std::vector<Group> groups_;
  std::vector<SoaTransform> constants_;  // constant channels (and rest values), per group
  std::vector<float> translations_;      // [frame][slot][x4 y4 z4]
  std::vector<int16_t> rotations_;       // [frame][slot][x4 y4 z4 w4], snorm16
  std::vector<float> scales_;            // [frame][slot][x4 y4 z4]
  // Compact format: per group, which lanes move in each channel and where their planes start in
  // a frame's block; the blocks hold, group by group, only the moving lanes' values as planes
  // (rotations: a, b, c int16; translations and scales: x, y, z float), then 16 bytes of
  // padding at the very end (a plane is read with one 8- or 16-byte load).
  struct CompactGroup {
    uint8_t rotation_lanes = 0, translation_lanes = 0, scale_lanes = 0;      // bit l: lane l moves
    uint32_t rotation_offset = 0, translation_offset = 0, scale_offset = 0;  // bytes in a frame
    // Where the group's constant scales start in constant_vectors_, or kUnitScales when all four
    // lanes' scales are 1 (within the constant tolerance) and none moves.
    uint32_t scale_constants = 0;
  };
  static constexpr uint32_t kUnitScales = 0xFFFFFFFFu;
  RuntimeClipFormat format_ = RuntimeClipFormat::Fast;
  std::vector<CompactGroup> compact_groups_;
  // Compact format's constants (constants_ stays empty): per group, translations x4 y4 z4 as
  // floats, then the scales x4 y4 z4 of the groups that have others than 1; rotations
  // x4 y4 z4 w4 as floats (read as they are: converting them cost a third of the sampling).
  std::vector<float> constant_vectors_;
  std::vector<float> constant_rotations_;
  size_t frame_bytes_ = 0;
  std::vector<uint8_t> packed_;  // [frame][frame_bytes_] + 16 bytes of padding
};

/// Per-instance decoding cache: the two frames around the last sampled time, decoded. Sized
/// for one clip at construction (allocates then, never while sampling). A cache may be reused
/// for another clip after reset(clip). One cache per playing instance; not shared by threads.
class SamplingCache {
 public:
  SamplingCache() = default;
  explicit SamplingCache(const RuntimeClip& clip) { reset(clip); }
  void reset(const RuntimeClip& clip);
  /// Forgets the decoded frames (the next sample decodes both).
  void invalidate() { frame_ = -1; }

 private:
  friend class ClipSampler;
  const RuntimeClip* clip_ = nullptr;
  int frame_ = -1;              // frame decoded in slot a_
  int a_ = 0;                   // which half of `decoded_` holds frame_ (the other holds frame_+1)
  std::vector<float> decoded_;  // 2 × rotation slots × 16 floats
};

/// Samples `clip` at `time` seconds (clamped to [0, duration]; wrap looping time yourself or
/// use Playback) into `out`, which must hold clip.soa_count() elements. With a cache (reset for
/// this clip) sequential calls decode only new frames. Returns false, writing nothing, when a
/// size does not match, the cache belongs to another clip, or `time` is NaN. Never allocates.
bool sample(const RuntimeClip& clip, float time, std::span<SoaTransform> out);
bool sample(const RuntimeClip& clip, float time, SamplingCache& cache, std::span<SoaTransform> out);

/// A playhead over one clip: looping or clamped, forward or reversed (negative rate).
struct Playback {
  float time = 0;  ///< seconds in [0, duration]
  float rate = 1;  ///< playback speed; negative plays backwards
  bool loop = true;
  /// Advances by dt·rate seconds of clip time, wrapping (loop) or clamping at the ends.
  /// Returns the number of times the playhead wrapped (signed: negative when playing backwards).
  int advance(float dt, float duration);
  /// time / duration, in [0, 1].
  float normalized(float duration) const { return duration > 0 ? time / duration : 0.0f; }
};

}  // namespace kinema
