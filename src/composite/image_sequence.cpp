// Numbered frame files (kinema/composite/image_sequence.h).
#include "kinema/composite/image_sequence.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <system_error>

#include "kinema/core/error.h"

namespace kinema::composite {

namespace {

/// A frame-number placeholder found in a path: where it starts, how long it is, its padding.
struct Placeholder {
  std::size_t start = std::string::npos, length = 0;
  int digits = 0;
};

/// The first run of '#' or printf "%d" / "%0Nd" / "%Nd" at or after `from`. (Scanned by hand:
/// std::regex trips GCC 12's -Wmaybe-uninitialized under the sanitizers, and this is all it did.)
Placeholder find_placeholder(const std::string& s, std::size_t from = 0) {
  for (std::size_t i = from; i < s.size(); ++i) {
    if (s[i] == '#') {
      std::size_t end = i;
      while (end < s.size() && s[end] == '#') ++end;
      return {i, end - i, int(end - i)};
    }
    if (s[i] != '%') continue;
    std::size_t j = i + 1;
    while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
    if (j >= s.size() || s[j] != 'd' || j - i - 1 > 6) continue;
    int width = 1;
    if (j > i + 1) width = std::max(1, std::stoi(s.substr(i + 1, j - i - 1)));
    return {i, j + 1 - i, width};
  }
  return {};
}

}  // namespace

bool is_sequence_pattern(const std::string& path) {
  return find_placeholder(path).start != std::string::npos;
}

SequencePattern parse_sequence_pattern(const std::string& pattern) {
  const Placeholder first = find_placeholder(pattern);
  if (first.start == std::string::npos)
    throw UsageError("'" + pattern +
                     "' names no frame number: use #### (one # a digit) or %04d in the name");
  if (find_placeholder(pattern, first.start + first.length).start != std::string::npos)
    throw UsageError("'" + pattern + "' has more than one frame-number placeholder");
  SequencePattern p;
  p.prefix = pattern.substr(0, first.start);
  p.suffix = pattern.substr(first.start + first.length);
  p.digits = first.digits;
  return p;
}

std::string sequence_frame_path(const SequencePattern& pattern, int frame) {
  std::string digits = std::to_string(frame < 0 ? -static_cast<long long>(frame) : frame);
  if (int(digits.size()) < pattern.digits)
    digits.insert(0, std::size_t(pattern.digits) - digits.size(), '0');
  return pattern.prefix + (frame < 0 ? "-" : "") + digits + pattern.suffix;
}

std::vector<int> find_sequence_frames(const SequencePattern& pattern) {
  namespace fs = std::filesystem;
  const fs::path prefix_path(pattern.prefix);
  // "shots/a/plate." → folder "shots/a", name prefix "plate."; "shots/a/" → whole folder.
  const bool ends_in_folder = !pattern.prefix.empty() && pattern.prefix.back() == '/';
  const fs::path folder = ends_in_folder ? prefix_path : prefix_path.parent_path();
  const std::string name_prefix = ends_in_folder ? "" : prefix_path.filename().string();
  std::vector<int> frames;
  std::error_code ec;
  for (fs::directory_iterator it(folder.empty() ? fs::path(".") : folder, ec), end;
       !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= name_prefix.size() + pattern.suffix.size() ||
        name.compare(0, name_prefix.size(), name_prefix) != 0 ||
        name.compare(name.size() - pattern.suffix.size(), pattern.suffix.size(), pattern.suffix) !=
            0)
      continue;
    std::string number =
        name.substr(name_prefix.size(), name.size() - name_prefix.size() - pattern.suffix.size());
    const bool negative = !number.empty() && number[0] == '-';
    if (negative) number.erase(0, 1);
    if (int(number.size()) < pattern.digits ||
        !std::all_of(number.begin(), number.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      continue;
    // Wider than the padding only without leading zeros: plate.00012.png is not frame 12 of ####.
    if (int(number.size()) > pattern.digits && number[0] == '0') continue;
    int frame = 0;
    const auto [end_ptr, error] =
        std::from_chars(number.data(), number.data() + number.size(), frame);
    if (error != std::errc() || end_ptr != number.data() + number.size()) continue;
    frames.push_back(negative ? -frame : frame);
  }
  std::sort(frames.begin(), frames.end());
  return frames;
}

}  // namespace kinema::composite
