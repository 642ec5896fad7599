// Numbered frame files (kinema/composite/image_sequence.h).
#include "kinema/composite/image_sequence.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <regex>
#include <system_error>

#include "kinema/core/error.h"

namespace kinema::composite {

namespace {

const std::regex& placeholder() {
  static const std::regex r(R"(#+|%0?(\d*)d)");
  return r;
}

}  // namespace

bool is_sequence_pattern(const std::string& path) { return std::regex_search(path, placeholder()); }

SequencePattern parse_sequence_pattern(const std::string& pattern) {
  std::smatch match;
  if (!std::regex_search(pattern, match, placeholder()))
    throw UsageError("'" + pattern +
                     "' names no frame number: use #### (one # a digit) or %04d in the name");
  const std::string rest = match.suffix().str();
  if (std::regex_search(rest, placeholder()))
    throw UsageError("'" + pattern + "' has more than one frame-number placeholder");
  SequencePattern p;
  p.prefix = match.prefix().str();
  p.suffix = rest;
  const std::string token = match.str();
  if (token[0] == '#') {
    p.digits = int(token.size());
  } else {
    const std::string width = match[1].str();
    p.digits = width.empty() ? 1 : std::max(1, std::stoi(width));
  }
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
