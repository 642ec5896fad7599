// kinema/io/bvh.h — Biovision Hierarchy (BVH) motion capture, read and write.
//
// Reading: any channel count (0–6, each channel at most once) and order per joint, End Sites,
// several roots, CRLF or LF. Position channels are added to the joint's OFFSET, on the root
// (as three.js and MotionBuilder read them) and — kinema's choice — on any other joint that has
// them too. Rotation channels compose in the order listed: "Zrotation Xrotation Yrotation" is
// R = Rz·Rx·Ry (EulerOrder::ZXY). Lengths are converted to metres: the unit is given by the
// caller or detected from a plausible human height (CMU cgspeed files are in ASF units,
// 1 unit = 1/0.45 inch = 5.644 cm), measured as the vertical extent of the rest pose (joints and
// End Sites); if that fits no unit the largest extent is tried, then metres are assumed with a
// warning in SourceInfo::warnings.
//
// The result: a Skeleton (rest = OFFSET, identity rotation; End Sites are not joints but are kept
// in Asset::bvh_layout with each joint's channel list) and one Clip named after the file stem,
// sample_rate = 1 / Frame Time, duration = (frames − 1) · Frame Time, LINEAR keys at i · Frame
// Time: a rotation track for every joint with rotation channels, a translation track (OFFSET +
// position channels) for every joint with position channels.
//
// Errors carry the line number: malformed structure, unknown or repeated channels, NaN/Inf,
// a frame line with too few or too many values, a truncated file. Absurd counts (a header
// claiming 10⁹ frames) are rejected against the file's actual size before anything is
// allocated. The hierarchy is parsed without recursion and nesting deeper than 512 joints is
// refused. Non-blank text after the declared frames is ignored with a warning.
//
// Writing: OFFSET 0 0 0 (on the axes that have position channels) for roots, whose position
// channels then hold absolute positions, so every reader (three.js, MotionBuilder, Blender 3.4
// which replaces the OFFSET) agrees; reading such a file back gives the same world positions but
// a root rest translation of zero. Other joints write their rest translation as OFFSET and, when
// they have position channels, the difference to it. The channel layout recorded in
// Asset::bvh_layout is kept (with channels added where the motion needs them: position channels
// for a translation that moves away from the rest, rotation channels for an animated or
// non-identity rotation); without a layout roots get 6 channels and other joints 3, and leaves get
// an End Site at their origin. Rest rotations (e.g. from glTF) are folded into the rotation
// channels, which hold the full local rotation, so world positions are preserved. Scale is not
// representable in BVH and is ignored. Euler angles are kept continuous from frame to frame
// (2π unwrapping and the equivalent (a+π, π−b, c+π) solution).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "kinema/io/asset.h"

namespace kinema {

struct BvhReadOptions {
  /// One file unit in metres; when unset the unit is detected (see bvh_detect_unit).
  std::optional<double> unit_in_meters;
};

struct BvhWriteOptions {
  int clip = 0;  ///< which clip of the asset to write
  /// One file unit in metres; when unset, the asset's source unit when it came from BVH, else cm.
  std::optional<double> unit_in_meters;
  /// Frame rate to sample at; 0 = the clip's sample_rate (or 30 when it has none).
  double frame_rate = 0;
  /// Rotation channel order for joints without a recorded BVH layout.
  EulerOrder default_order = EulerOrder::ZXY;
  int precision = 9;  ///< significant digits of every number
};

/// Reads a .bvh file. Throws kinema::Error (file, line, reason).
Asset read_bvh(const std::string& path, const BvhReadOptions& options = {});
/// Parses BVH text; `name` is used in error messages and SourceInfo::path.
Asset parse_bvh(std::string_view text, const std::string& name, const BvhReadOptions& options = {});

/// Serializes one clip of an asset as BVH text. Throws kinema::Error if the asset cannot be
/// expressed (no joints, clip index out of range).
std::string format_bvh(const Asset& asset, const BvhWriteOptions& options = {});
/// Writes BVH to `path` atomically (temporary file, then rename).
void write_bvh(const Asset& asset, const std::string& path, const BvhWriteOptions& options = {});

/// The unit (metres per file unit) implied by a standing height measured in file units:
/// metres if the height is 1–2.5, centimetres if 100–250, inches if 40–100, CMU ASF units
/// (0.05644 m) if 20–40, millimetres if 1000–2500. `name` receives "m", "cm", … Returns
/// nullopt when the height fits none.
std::optional<double> bvh_detect_unit(double height_in_file_units, std::string* name = nullptr);

}  // namespace kinema
