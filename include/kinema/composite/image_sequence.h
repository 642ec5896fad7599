// kinema/composite/image_sequence.h — numbered frame files ("plate.####.png").
//
// A pattern names every frame of a shot: `#` placeholders (one a digit: "plate.####.png" is
// plate.0001.png, plate.0002.png, …) or printf's "%04d". Frame numbers wider than the padding
// are written in full (plate.12345.png); negative frames get a minus sign before the padded
// digits (plate.-001.png for frame −1 of "###").
#pragma once

#include <string>
#include <vector>

namespace kinema::composite {

struct SequencePattern {
  std::string prefix, suffix;
  int digits = 0;  ///< zero-padding width (1 or more)
};

/// True when `path` holds a run of `#` or a "%0Nd" / "%d" placeholder.
bool is_sequence_pattern(const std::string& path);

/// Splits a pattern at its placeholder. Throws kinema::UsageError for a path with none, or with
/// more than one.
SequencePattern parse_sequence_pattern(const std::string& pattern);

/// The file name of `frame`.
std::string sequence_frame_path(const SequencePattern& pattern, int frame);

/// The frames whose files exist, sorted: every file in the pattern's folder named prefix +
/// (a frame number of at least `digits` digits) + suffix. An empty list when the folder does not
/// exist.
std::vector<int> find_sequence_frames(const SequencePattern& pattern);

}  // namespace kinema::composite
