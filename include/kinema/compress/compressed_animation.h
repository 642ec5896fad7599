// kinema/compress/compressed_animation.h — .kmc files: a skeleton with its compressed clips.
//
// A CompressedClip (compressed_clip.h) is the runtime form of one clip; it does not carry the
// skeleton it animates. A .kmc file does, so that a compressed animation can be inspected,
// played or turned back into glTF or BVH on its own (`kinema compress`, `kinema decompress`,
// `kinema info`, and load_asset, which reads .kmc like any other animation file).
//
// Format (version 1, little-endian). Header, 32 bytes: "KMCANIM\0", u32 format version, u32
// zero, u64 payload bytes, u64 FNV-1a of the payload. Payload: the source file's name (u32
// length + UTF-8), the source's unit in metres (f64) and unit name (string), the compression
// bound and virtual-vertex distance in metres (2 × f64), u64 joint count, the joints (name,
// parent, rest transform as 10 f64), u64 clip count, then per clip u64 byte count and the
// clip's own serialized bytes (which carry their own magic, version and checksum). Every count
// is checked against the bytes left before anything is allocated.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kinema/clip/clip.h"
#include "kinema/compress/compressed_clip.h"
#include "kinema/skeleton/skeleton.h"

namespace kinema {

/// Format version of .kmc files this kinema writes and reads.
inline constexpr uint32_t animation_file_version = 1;

struct CompressedAnimation {
  Skeleton skeleton;                  ///< what every clip animates (metres, radians)
  std::vector<CompressedClip> clips;  ///< each with skeleton.joint_count() joints
  std::string source;                 ///< the file the clips came from (for reports)
  double source_unit_in_meters = 1.0;
  std::string source_unit_name = "m";
  double max_error = 0;        ///< the bound the clips were compressed with (metres; 0: unknown)
  double vertex_distance = 0;  ///< the virtual vertices' distance from each joint (metres)
};

/// The .kmc bytes of an animation. Throws kinema::Error when a clip does not have the
/// skeleton's joint count.
std::string serialize_animation(const CompressedAnimation& animation);

/// Reads .kmc bytes; throws kinema::Error naming `file`, the byte offset and the reason (bad
/// magic, unknown version, size or checksum mismatch, truncation, counts that do not fit, an
/// invalid skeleton, a clip that does not load or has another joint count).
CompressedAnimation deserialize_animation(std::string_view bytes, const std::string& file);

// Reading and writing .kmc files, and loading them as assets: kinema/io/kmc.h.

/// A compressed clip decoded back into a raw clip: every frame decoded, LINEAR keys at the
/// frame times on the animated channels, one key on channels that never change (the clip's
/// name, duration and sample rate are kept). Throws kinema::Error when the joint counts differ.
Clip decompress_clip(const CompressedClip& clip, const Skeleton& skeleton);

}  // namespace kinema
