// kinema/io/bvh.h — Biovision Hierarchy (BVH) motion capture, read and write.
//
// Reading: any channel count and order per joint, End Sites, several roots, CRLF or LF.
// Root position channels are added to the root's OFFSET (as three.js and MotionBuilder read
// them). Lengths are converted to metres: the unit is given by the caller or detected from a
// plausible human height (CMU cgspeed files are in ASF units, 1 unit = 1/0.45 inch = 5.644 cm).
// Errors carry the line number. Absurd counts (a header claiming 10⁹ frames) are rejected
// against the file's actual size before anything is allocated.
//
// Writing: OFFSET 0 0 0 for roots with absolute root positions in the motion, so every reader
// (three.js, MotionBuilder, Blender 3.4 which replaces the OFFSET) agrees.
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
Asset parse_bvh(std::string_view text, const std::string& name,
                const BvhReadOptions& options = {});

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
