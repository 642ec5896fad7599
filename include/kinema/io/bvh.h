// kinema/io/bvh.h — Biovision Hierarchy (BVH) motion capture, read and write.
//
// Reading: any channel count (0–6, each channel at most once) and order per joint, End Sites,
// several roots, CRLF or LF. Rotation channels compose in the order listed: "Zrotation Xrotation
// Yrotation" is R = Rz·Rx·Ry (EulerOrder::ZXY). Lengths are converted to metres: the unit is
// given by the caller or detected from a plausible human height (CMU cgspeed files are in ASF
// units, 1 unit = 1/0.45 inch = 5.644 cm), measured as the vertical extent of the rest pose
// (joints and End Sites; a non-root joint whose OFFSET is zero on its position channels' axes
// stands at its frame-0 channel values there); if that fits no unit the largest extent is
// tried, then metres are assumed with a warning in SourceInfo::warnings.
//
// Position channels: two readings are in use, and neither is right for every file.
//   - Replace: the channels are the joint's whole local translation, and the OFFSET is only its
//     rest translation (Blender's importer, MotionBuilder; files that give every joint six
//     channels hold channel ≈ OFFSET at rest). Axes without a channel keep the OFFSET.
//   - Add: the channels are a displacement added to the OFFSET (three.js's BVHLoader; the
//     iClone/CC3 exports' roots, channel ≈ 0 at rest).
// BvhTranslation::Auto (the default) decides per joint from the data. On the channel axes, each
// frame's channels are projected on the OFFSET: ratio = (channels · OFFSET) / |OFFSET|². The
// median over the frames (the lower one for an even count) is the joint's rest-like value: within
// 1/3 of 1 the channels sit at the OFFSET and replace it; within 1/3 of 0 they sit at zero and
// add to it. The projection is the only direction in which the two readings differ, so a root
// that travels across the room still decides by its height. A joint where neither fits follows
// the rule — roots add, other joints replace — and is named in SourceInfo::warnings. When the
// OFFSET is zero on the channel axes (below 1e-6 of the rest pose's extent) both readings give
// the same motion. What was decided, and why, is recorded per joint in Asset::bvh_layout
// (BvhJointLayout::translation, translation_basis, offset_ratio); BvhReadOptions::translation
// forces one reading on every joint.
//
// The result: a Skeleton (rest = OFFSET, identity rotation; End Sites are not joints but are kept
// in Asset::bvh_layout with each joint's channel list) and one Clip named after the file stem,
// sample_rate = 1 / Frame Time, duration = (frames − 1) · Frame Time, LINEAR keys at i · Frame
// Time: a rotation track for every joint with rotation channels, a translation track for every
// joint with position channels.
//
// Errors carry the line number: malformed structure, unknown or repeated channels, NaN/Inf,
// a frame line with too few or too many values, a truncated file. Absurd counts (a header
// claiming 10⁹ frames) are rejected against the file's actual size before anything is
// allocated. The hierarchy is parsed without recursion and nesting deeper than 512 joints is
// refused. Non-blank text after the declared frames is ignored with a warning.
//
// Writing: files that Blender, three.js and kinema all read the same way. A joint written with
// position channels gets OFFSET 0 on their axes and the joint's whole local translation in them,
// so that adding and replacing agree: roots (absolute positions, as every reader expects) and
// other joints whose translation the clip moves away from the rest (those get all three
// position channels). Other non-root joints get no position channels, even when the recorded
// layout had them, and their rest translation as OFFSET. Reading such a file back gives the
// same world positions, with a zero rest translation for the joints that carry position
// channels. The channel layout recorded in Asset::bvh_layout is otherwise kept (with rotation
// channels added for an animated or non-identity rotation); without a layout roots get 6
// channels and other joints 3, and leaves get an End Site at their origin. Rest rotations
// (e.g. from glTF) are folded into the rotation channels, which hold the full local rotation, so
// world positions are preserved. Scale is not representable in BVH and is ignored. Euler angles
// are kept continuous from frame to frame (2π unwrapping and the equivalent (a+π, π−b, c+π)
// solution).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kinema/character/asset.h"

namespace kinema {

struct BvhReadOptions {
  /// One file unit in metres; when unset the unit is detected (see bvh_detect_unit).
  std::optional<double> unit_in_meters;
  /// How position channels combine with OFFSETs: decided per joint (Auto) or forced.
  BvhTranslation translation = BvhTranslation::Auto;
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

/// "auto", "replace" or "add".
std::string_view to_string(BvhTranslation translation);
/// The reading named "auto", "replace" or "add"; nullopt for anything else.
std::optional<BvhTranslation> bvh_translation_from_string(std::string_view name);

/// How a BVH asset's position channels were read, for people: one line per reading and basis
/// ("local translation (replaces OFFSET) on 17 joints, measured: Hips, Spine, …", "displacement
/// (adds to OFFSET) on 1 joint, by the rule (neither reading fits): root", "OFFSET 0 (both
/// readings agree) on 1 joint: Hips"), joints in skeleton order. With one line a few names stand
/// for all; with several every joint is named. Empty when no joint has position channels (or the
/// asset did not come from BVH).
std::vector<std::string> describe_bvh_translation(const Asset& asset);

/// The unit (metres per file unit) implied by a standing height measured in file units:
/// metres if the height is 1–2.5, centimetres if 100–250, inches if 40–100, CMU ASF units
/// (0.05644 m) if 20–40, millimetres if 1000–2500. `name` receives "m", "cm", … Returns
/// nullopt when the height fits none.
std::optional<double> bvh_detect_unit(double height_in_file_units, std::string* name = nullptr);

}  // namespace kinema
