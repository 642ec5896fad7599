// BVH reader: a token/line scanner over the whole text, an iterative hierarchy parser (no
// recursion, so hostile nesting cannot overflow the stack), then a line-based MOTION parser.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_set>
#include <vector>

#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/io/bvh.h"
#include "kinema/math/euler.h"
#include "text_scan.h"

namespace kinema {
namespace {

constexpr int kMaxDepth = 512;  // deeper hierarchies are rejected (no real skeleton is close)
constexpr double kDegToRad = 3.14159265358979323846 / 180.0;

// Channel codes: 0..2 = X/Y/Z position, 3..5 = X/Y/Z rotation.
constexpr std::string_view kChannelNames[6] = {"Xposition", "Yposition", "Zposition",
                                               "Xrotation", "Yrotation", "Zrotation"};

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const auto ca = static_cast<unsigned char>(a[i]), cb = static_cast<unsigned char>(b[i]);
    if (std::tolower(ca) != std::tolower(cb)) return false;
  }
  return true;
}

bool istarts_with(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && iequals(s.substr(0, prefix.size()), prefix);
}

int channel_code(std::string_view name) {
  for (int i = 0; i < 6; ++i)
    if (iequals(name, kChannelNames[i])) return i;
  return -1;
}

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}
using text_scan::is_blank;
using text_scan::printable;

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

struct Token {
  std::string_view text;  // empty at end of input
  long line = 0;
};

class Scanner {
 public:
  Scanner(std::string_view text, const std::string& name) : text_(text), name_(name) {
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;  // UTF-8 byte order mark
  }

  [[noreturn]] void fail(long line, const std::string& reason) const {
    throw Error(name_, at_line(line), reason);
  }
  long line() const { return line_; }
  size_t remaining() const { return text_.size() - pos_; }

  /// The next whitespace-separated token (text empty at end of input).
  Token next() {
    while (pos_ < text_.size() && is_space(text_[pos_])) {
      if (text_[pos_] == '\n') ++line_;
      ++pos_;
    }
    const size_t start = pos_;
    while (pos_ < text_.size() && !is_space(text_[pos_])) ++pos_;
    return {text_.substr(start, pos_ - start), line_};
  }

  Token expect(std::string_view what) {
    const Token t = next();
    if (t.text.empty()) fail(line_, "unexpected end of file, expected '" + std::string(what) + "'");
    if (!iequals(t.text, what))
      fail(t.line, "expected '" + std::string(what) + "', found '" + printable(t.text) + "'");
    return t;
  }

  /// The rest of the current line, trimmed (the newline is left for next()).
  std::string_view rest_of_line() {
    const size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
    return trim(text_.substr(start, pos_ - start));
  }

  /// The next line (without its terminator), or false at end of input. `line_no` receives its
  /// number.
  bool next_line(std::string_view& out, long& line_no) {
    if (pos_ >= text_.size()) return false;
    // Finish the current line first when a token read left us inside it.
    const size_t start = pos_;
    size_t end = text_.find('\n', pos_);
    if (end == std::string_view::npos) end = text_.size();
    out = text_.substr(start, end - start);
    line_no = line_;
    pos_ = end;
    if (pos_ < text_.size()) {
      ++pos_;
      ++line_;
    }
    return true;
  }

  /// Next line that is not blank; false at end of input.
  bool next_nonblank_line(std::string_view& out, long& line_no) {
    while (next_line(out, line_no))
      if (!trim(out).empty()) return true;
    return false;
  }

 private:
  std::string_view text_;
  const std::string& name_;
  size_t pos_ = 0;
  long line_ = 1;
};

/// Parses a whole token as a finite double; returns false if it is not a number.
bool parse_double(std::string_view s, double& out) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  const char* end = s.data() + s.size();
  const auto [p, ec] = std::from_chars(s.data(), end, out);
  return ec == std::errc() && p == end;
}

double number_or_fail(const Scanner& sc, const Token& t, std::string_view what) {
  if (t.text.empty()) sc.fail(sc.line(), "unexpected end of file, expected " + std::string(what));
  double v = 0;
  if (!parse_double(t.text, v))
    sc.fail(t.line, "expected " + std::string(what) + ", found '" + printable(t.text) + "'");
  if (!std::isfinite(v))
    sc.fail(t.line, std::string(what) + " is not a finite number ('" + printable(t.text) + "')");
  return v;
}

Vec3 read_vec3(Scanner& sc, std::string_view what) {
  Vec3 v;
  for (int i = 0; i < 3; ++i) v[i] = number_or_fail(sc, sc.next(), what);
  return v;
}

struct ParsedJoint {
  std::string name;
  int parent = kNoParent;
  long line = 0;
  bool has_offset = false;
  Vec3 offset{0, 0, 0};       // file units
  std::vector<int> channels;  // channel codes in file order
  int first_value = 0;        // index of the first channel value in a frame line
  bool has_end_site = false;
  Vec3 end_site{0, 0, 0};  // file units
};

void read_channels(Scanner& sc, ParsedJoint& joint, const Token& keyword) {
  if (!joint.channels.empty())
    sc.fail(keyword.line, "joint '" + joint.name + "' has two CHANNELS lines");
  const Token count_tok = sc.next();
  const double count = number_or_fail(sc, count_tok, "a channel count");
  if (count != std::floor(count) || count < 0 || count > 6)
    sc.fail(count_tok.line, "channel count must be an integer from 0 to 6, found '" +
                                printable(count_tok.text) + "'");
  bool seen[6] = {false, false, false, false, false, false};
  for (int i = 0; i < static_cast<int>(count); ++i) {
    const Token t = sc.next();
    if (t.text.empty()) sc.fail(sc.line(), "unexpected end of file in CHANNELS");
    const int code = channel_code(t.text);
    if (code < 0) sc.fail(t.line, "unknown channel '" + printable(t.text) + "'");
    if (seen[code]) sc.fail(t.line, "channel '" + std::string(kChannelNames[code]) + "' repeated");
    seen[code] = true;
    joint.channels.push_back(code);
  }
}

/// Parses HIERARCHY … up to and including the MOTION keyword.
std::vector<ParsedJoint> parse_hierarchy(Scanner& sc) {
  const Token first = sc.next();
  if (first.text.empty()) sc.fail(1, "empty file, expected 'HIERARCHY'");
  if (!iequals(first.text, "HIERARCHY"))
    sc.fail(first.line,
            "not a BVH file: expected 'HIERARCHY', found '" + printable(first.text) + "'");

  std::vector<ParsedJoint> joints;
  std::vector<int> open;  // stack of open joints (innermost last)
  std::unordered_set<std::string> names;
  for (;;) {
    const Token t = sc.next();
    if (t.text.empty()) {
      if (joints.empty()) sc.fail(sc.line(), "unexpected end of file, expected 'ROOT'");
      sc.fail(sc.line(), open.empty() ? "unexpected end of file, expected 'MOTION'"
                                      : "unexpected end of file inside joint '" +
                                            joints[static_cast<size_t>(open.back())].name + "'");
    }
    const bool is_root = iequals(t.text, "ROOT");
    if (is_root || iequals(t.text, "JOINT")) {
      if (is_root && !open.empty())
        sc.fail(t.line, "ROOT inside joint '" + joints[static_cast<size_t>(open.back())].name +
                            "' (missing '}'?)");
      if (!is_root && open.empty()) sc.fail(t.line, "JOINT outside any ROOT");
      if (static_cast<int>(open.size()) >= kMaxDepth)
        sc.fail(t.line, "hierarchy nested deeper than " + std::to_string(kMaxDepth) + " joints");
      std::string_view name = sc.rest_of_line();
      bool brace_on_line = false;
      if (!name.empty() && name.back() == '{') {  // "JOINT Hips {"
        name = trim(name.substr(0, name.size() - 1));
        brace_on_line = true;
      }
      if (name.empty())
        sc.fail(t.line, std::string(is_root ? "ROOT" : "JOINT") + " without a name");
      ParsedJoint j;
      j.name = std::string(name);
      j.parent = open.empty() ? kNoParent : open.back();
      j.line = t.line;
      if (!names.insert(j.name).second)
        sc.fail(t.line, "duplicate joint name '" + printable(name) + "'");
      if (!brace_on_line) sc.expect("{");
      open.push_back(static_cast<int>(joints.size()));
      joints.push_back(std::move(j));
    } else if (iequals(t.text, "End")) {
      if (open.empty()) sc.fail(t.line, "End Site outside any joint");
      ParsedJoint& j = joints[static_cast<size_t>(open.back())];
      const std::string_view rest = sc.rest_of_line();
      if (!iequals(rest, "Site") && !iequals(rest, "Site {"))
        sc.fail(t.line, "expected 'End Site', found 'End " + printable(rest) + "'");
      if (j.has_end_site) sc.fail(t.line, "joint '" + j.name + "' has two End Sites");
      if (!iequals(rest, "Site {")) sc.expect("{");
      sc.expect("OFFSET");
      j.end_site = read_vec3(sc, "an End Site OFFSET value");
      j.has_end_site = true;
      sc.expect("}");
    } else if (iequals(t.text, "OFFSET")) {
      if (open.empty()) sc.fail(t.line, "OFFSET outside any joint");
      ParsedJoint& j = joints[static_cast<size_t>(open.back())];
      if (j.has_offset) sc.fail(t.line, "joint '" + j.name + "' has two OFFSETs");
      j.offset = read_vec3(sc, "an OFFSET value");
      j.has_offset = true;
    } else if (iequals(t.text, "CHANNELS")) {
      if (open.empty()) sc.fail(t.line, "CHANNELS outside any joint");
      read_channels(sc, joints[static_cast<size_t>(open.back())], t);
    } else if (t.text == "}") {
      if (open.empty()) sc.fail(t.line, "unmatched '}'");
      const ParsedJoint& j = joints[static_cast<size_t>(open.back())];
      if (!j.has_offset) sc.fail(j.line, "joint '" + j.name + "' has no OFFSET");
      open.pop_back();
    } else if (iequals(t.text, "MOTION")) {
      if (!open.empty())
        sc.fail(t.line, "MOTION inside joint '" + joints[static_cast<size_t>(open.back())].name +
                            "' (missing '}')");
      if (joints.empty()) sc.fail(t.line, "MOTION before any ROOT");
      return joints;
    } else {
      sc.fail(t.line, "unexpected '" + printable(t.text) + "' in the hierarchy");
    }
  }
}

/// The number after "Key:" on a line that must start with `key` (e.g. "Frame Time:").
std::string_view value_after(Scanner& sc, std::string_view line, long line_no,
                             std::string_view key) {
  line = trim(line);
  if (!istarts_with(line, key)) {
    sc.fail(line_no, "expected '" + std::string(key) + "', found '" + printable(line) + "'");
  }
  return trim(line.substr(key.size()));
}

std::string file_stem(const std::string& path) {
  size_t start = path.find_last_of("/\\");
  start = start == std::string::npos ? 0 : start + 1;
  std::string stem = path.substr(start);
  const size_t dot = stem.find_last_of('.');
  if (dot != std::string::npos && dot > 0) stem.resize(dot);
  return stem;
}

std::string unit_name_of(double unit) {
  struct Known {
    double value;
    const char* name;
  };
  constexpr Known known[] = {
      {1.0, "m"}, {0.01, "cm"}, {0.001, "mm"}, {0.0254, "inch"}, {0.0254 / 0.45, "cmu-asf"}};
  for (const auto& k : known)
    if (std::abs(unit - k.value) <= 1e-6 * k.value) return k.name;
  return "custom";
}

/// The OFFSET restricted to the joint's position-channel axes (zero elsewhere).
Vec3 offset_on_channel_axes(const ParsedJoint& j) {
  Vec3 o{0, 0, 0};
  for (int code : j.channels)
    if (code < 3) o[code] = j.offset[code];
  return o;
}

/// Rest-pose heights: vertical (Y) extent, and the largest extent over the three axes. A
/// non-root joint whose OFFSET is zero on its position-channel axes (as kinema writes a joint the
/// clip translates) stands at its frame-0 channel values there, so that a file whose rest pose
/// lives in its motion still gets a height.
void rest_extents(const std::vector<ParsedJoint>& joints, const double* frame0, double& y_extent,
                  double& max_extent) {
  std::vector<Vec3> model(joints.size());
  Vec3 lo{std::numeric_limits<double>::max(), std::numeric_limits<double>::max(),
          std::numeric_limits<double>::max()};
  Vec3 hi = -lo;
  auto add = [&](const Vec3& p) {
    for (int a = 0; a < 3; ++a) {
      lo[a] = std::min(lo[a], p[a]);
      hi[a] = std::max(hi[a], p[a]);
    }
  };
  for (size_t i = 0; i < joints.size(); ++i) {
    const ParsedJoint& j = joints[i];
    Vec3 local = j.offset;
    if (frame0 && j.parent != kNoParent && offset_on_channel_axes(j) == Vec3{0, 0, 0})
      for (size_t c = 0; c < j.channels.size(); ++c)
        if (j.channels[c] < 3) local[j.channels[c]] = frame0[j.first_value + static_cast<int>(c)];
    model[i] =
        (j.parent == kNoParent ? Vec3{0, 0, 0} : model[static_cast<size_t>(j.parent)]) + local;
    add(model[i]);
    if (j.has_end_site) add(model[i] + j.end_site);
  }
  y_extent = hi.y - lo.y;
  max_extent = std::max({hi.x - lo.x, hi.y - lo.y, hi.z - lo.z});
}

std::string format_ratio(double ratio) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", ratio);
  return buf;
}

/// Within this distance of 1 (or of 0) the median offset ratio says the channels sit at the
/// OFFSET (or at zero); between the two, or beyond, neither reading fits.
constexpr double kReadingFit = 1.0 / 3.0;
/// An OFFSET shorter than this fraction of the rest pose's extent (on the channel axes) makes
/// both readings give the same motion to better than a millionth of the figure.
constexpr double kZeroOffset = 1e-6;

/// Decides how joint `pj`'s position channels are read (kinema/io/bvh.h, "Position channels")
/// and records it in `layout`. `values` holds `frames` rows of `total` channel values.
void decide_translation(const ParsedJoint& pj, const std::vector<double>& values, size_t frames,
                        int total, double extent, BvhTranslation requested,
                        BvhJointLayout& layout) {
  const bool is_root = pj.parent == kNoParent;
  const BvhTranslation rule = is_root ? BvhTranslation::Add : BvhTranslation::Replace;
  const Vec3 o = offset_on_channel_axes(pj);
  const double o2 = length_squared(o);
  if (frames > 0 && o2 > 0) {
    std::vector<double> ratios(frames);
    for (size_t f = 0; f < frames; ++f) {
      const double* v = values.data() + f * static_cast<size_t>(total) + pj.first_value;
      double along = 0;
      for (size_t c = 0; c < pj.channels.size(); ++c)
        if (pj.channels[c] < 3) along += v[c] * o[pj.channels[c]];
      ratios[f] = along / o2;
    }
    const auto middle = ratios.begin() + static_cast<long>((frames - 1) / 2);  // lower median
    std::nth_element(ratios.begin(), middle, ratios.end());
    layout.offset_ratio = *middle;
  }
  if (requested != BvhTranslation::Auto) {
    layout.translation = requested;
    layout.translation_basis = BvhTranslationBasis::Requested;
  } else if (std::sqrt(o2) <= kZeroOffset * extent) {
    layout.translation = rule;
    layout.translation_basis = BvhTranslationBasis::OffsetZero;
  } else if (std::abs(layout.offset_ratio - 1) <= kReadingFit) {
    layout.translation = BvhTranslation::Replace;
    layout.translation_basis = BvhTranslationBasis::Measured;
  } else if (std::abs(layout.offset_ratio) <= kReadingFit) {
    layout.translation = BvhTranslation::Add;
    layout.translation_basis = BvhTranslationBasis::Measured;
  } else {  // neither fits (or nothing to measure: no frames)
    layout.translation = rule;
    layout.translation_basis = BvhTranslationBasis::Rule;
  }
}

/// The MOTION section's header lines.
struct MotionHeader {
  int64_t frames = 0;
  double frame_time = 0;  // seconds
};

/// Reads "Frames:" and "Frame Time:" after the MOTION keyword, and refuses a frame count the
/// rest of the file cannot hold (every one of the `total` values of a frame takes at least one
/// character and one separator) before anything is allocated for it.
MotionHeader read_motion_header(Scanner& sc, int total) {
  std::string_view line;
  long line_no = 0;
  sc.rest_of_line();  // anything after MOTION on its line is ignored
  sc.next_line(line, line_no);
  if (!sc.next_nonblank_line(line, line_no))
    sc.fail(sc.line(), "unexpected end of file, expected 'Frames:'");
  const long frames_line = line_no;
  const std::string_view frames_text = value_after(sc, line, line_no, "Frames:");
  MotionHeader header;
  header.frames = -1;
  {
    const char* end = frames_text.data() + frames_text.size();
    const auto [p, ec] = std::from_chars(frames_text.data(), end, header.frames);
    if (ec != std::errc() || p != end || header.frames < 0)
      sc.fail(line_no,
              "frame count must be a non-negative integer, found '" + printable(frames_text) + "'");
  }
  if (!sc.next_nonblank_line(line, line_no))
    sc.fail(sc.line(), "unexpected end of file, expected 'Frame Time:'");
  const std::string_view time_text = value_after(sc, line, line_no, "Frame Time:");
  if (!parse_double(time_text, header.frame_time) || !std::isfinite(header.frame_time))
    sc.fail(line_no, "frame time is not a finite number ('" + printable(time_text) + "')");
  if (!(header.frame_time > 0))
    sc.fail(line_no, "frame time must be positive, found '" + printable(time_text) + "'");

  const auto remaining = static_cast<int64_t>(sc.remaining());
  if (total > 0 && header.frames > (remaining + 1) / (2 * static_cast<int64_t>(total)))
    sc.fail(frames_line, "header claims " + std::to_string(header.frames) + " frames of " +
                             std::to_string(total) + " channels but only " +
                             std::to_string(remaining) + " bytes follow");
  if (header.frames > std::numeric_limits<int>::max())
    sc.fail(frames_line, "frame count " + std::to_string(header.frames) + " is too large");
  return header;
}

/// The channel values of `frames` frame lines, `total` finite numbers each (frame-major).
std::vector<double> read_frames(Scanner& sc, int64_t frames, int total) {
  std::vector<double> values(static_cast<size_t>(frames) * static_cast<size_t>(total));
  if (total == 0) return values;
  std::string_view line;
  long line_no = 0;
  for (int64_t f = 0; f < frames; ++f) {
    if (!sc.next_nonblank_line(line, line_no))
      sc.fail(sc.line(), "unexpected end of file: " + std::to_string(f) + " of " +
                             std::to_string(frames) + " frames present");
    double* out = values.data() + static_cast<size_t>(f) * static_cast<size_t>(total);
    int count = 0;
    size_t i = 0;
    while (i < line.size()) {
      while (i < line.size() && is_blank(line[i])) ++i;
      if (i >= line.size()) break;
      const size_t start = i;
      while (i < line.size() && !is_blank(line[i])) ++i;
      const std::string_view tok = line.substr(start, i - start);
      if (count >= total)
        sc.fail(line_no, "frame " + std::to_string(f) + " has more than the " +
                             std::to_string(total) + " values the hierarchy declares");
      double v = 0;
      if (!parse_double(tok, v))
        sc.fail(line_no,
                "frame " + std::to_string(f) + ": '" + printable(tok) + "' is not a number");
      if (!std::isfinite(v))
        sc.fail(line_no,
                "frame " + std::to_string(f) + ": value '" + printable(tok) + "' is not finite");
      out[count++] = v;
    }
    if (count < total)
      sc.fail(line_no, "frame " + std::to_string(f) + " has " + std::to_string(count) +
                           " values, the hierarchy declares " + std::to_string(total));
  }
  return values;
}

/// The file's length unit in metres: the requested one, else detected from the rest pose's
/// height `y_extent` (or, when the pose is not upright, its largest extent `max_extent`), else
/// metres with a warning. Recorded in `source` (unit_in_meters, unit_name, unit_detected).
double choose_unit(double y_extent, double max_extent, const BvhReadOptions& options,
                   const std::string& name, SourceInfo& source) {
  double unit = 1.0;
  if (options.unit_in_meters) {
    unit = *options.unit_in_meters;
    if (!std::isfinite(unit) || !(unit > 0))
      throw Error(name, "", "unit_in_meters must be a positive finite number");
    source.unit_name = unit_name_of(unit);
    source.unit_detected = false;
  } else {
    std::string unit_name;
    std::optional<double> detected = bvh_detect_unit(y_extent, &unit_name);
    if (!detected) {
      detected = bvh_detect_unit(max_extent, &unit_name);
      if (detected)
        source.warnings.push_back(
            "rest pose is not upright; unit detected from its largest extent");
    }
    if (detected) {
      unit = *detected;
      source.unit_name = unit_name;
      source.unit_detected = true;
    } else {
      unit = 1.0;
      source.unit_name = "m";
      source.warnings.push_back("unit not detected (rest-pose height " + std::to_string(y_extent) +
                                " file units); assumed metres");
    }
  }
  source.unit_in_meters = unit;
  return unit;
}

/// Each joint's channel list and End Site (in metres) and, for joints with position channels,
/// how they are read (decide_translation), with a warning where neither reading fits.
std::vector<BvhJointLayout> joint_layouts(const std::vector<ParsedJoint>& joints,
                                          const std::vector<double>& values, size_t frames,
                                          int total, double unit, double max_extent,
                                          BvhTranslation requested,
                                          std::vector<std::string>& warnings) {
  std::vector<BvhJointLayout> layouts(joints.size());
  for (size_t i = 0; i < joints.size(); ++i) {
    const ParsedJoint& pj = joints[i];
    BvhJointLayout& layout = layouts[i];
    for (int code : pj.channels) layout.channels.emplace_back(kChannelNames[code]);
    layout.has_end_site = pj.has_end_site;
    layout.end_site = pj.end_site * unit;
    if (std::none_of(pj.channels.begin(), pj.channels.end(), [](int c) { return c < 3; })) continue;
    decide_translation(pj, values, frames, total, max_extent, requested, layout);
    if (layout.translation_basis == BvhTranslationBasis::Rule && frames > 0)
      warnings.push_back(
          "joint '" + pj.name + "' (line " + std::to_string(pj.line) +
          "): its position channels sit neither at its OFFSET nor at zero (median ratio " +
          format_ratio(layout.offset_ratio) + "); read as " +
          (layout.translation == BvhTranslation::Add ? "a displacement added to the OFFSET"
                                                     : "its local translation") +
          (pj.parent == kNoParent ? " (the rule for roots)" : " (the rule for non-root joints)"));
  }
  return layouts;
}

/// The skeleton: joints in file order, rest translation the OFFSET in metres.
Skeleton bvh_skeleton(const std::vector<ParsedJoint>& joints, double unit,
                      const std::string& name) {
  std::vector<Joint> skel_joints;
  skel_joints.reserve(joints.size());
  for (const ParsedJoint& pj : joints) {
    Joint j;
    j.name = pj.name;
    j.parent = pj.parent;
    j.rest.translation = pj.offset * unit;
    skel_joints.push_back(std::move(j));
  }
  return Skeleton::build(std::move(skel_joints), /*require_single_root=*/false, name);
}

/// One joint's keys at the frame `times`: translations (channels replacing or added to the
/// OFFSET, as `layout` decided) in metres, rotations (the rotation channels composed in file
/// order) with neighbouring keys on one hemisphere.
JointTrack joint_track(const ParsedJoint& pj, const BvhJointLayout& layout,
                       const std::vector<double>& values, int total,
                       const std::vector<double>& times, double unit) {
  const size_t nframes = times.size();
  bool has_pos = false, has_rot = false;
  for (int code : pj.channels) (code < 3 ? has_pos : has_rot) = true;
  JointTrack track;
  const bool replace_offset = layout.translation == BvhTranslation::Replace;
  if (has_pos) {
    track.translation.interpolation = Interpolation::Linear;
    track.translation.times = times;
    track.translation.values.resize(nframes);
  }
  if (has_rot) {
    track.rotation.interpolation = Interpolation::Linear;
    track.rotation.times = times;
    track.rotation.values.resize(nframes);
  }
  Quat previous = Quat::identity();
  for (size_t f = 0; f < nframes; ++f) {
    const double* v = values.data() + f * static_cast<size_t>(total) + pj.first_value;
    Vec3 pos = pj.offset;
    Quat rot = Quat::identity();
    for (size_t c = 0; c < pj.channels.size(); ++c) {
      const int code = pj.channels[c];
      if (code < 3) {
        pos[code] = replace_offset ? v[c] : pos[code] + v[c];
      } else {
        Vec3 axis{0, 0, 0};
        axis[code - 3] = 1;
        rot = rot * Quat::from_axis_angle(axis, v[c] * kDegToRad);
      }
    }
    if (has_pos) track.translation.values[f] = pos * unit;
    if (has_rot) {
      rot = normalize(rot);
      if (f > 0 && dot(rot, previous) < 0) rot = -rot;  // keep neighbouring keys on one hemisphere
      track.rotation.values[f] = rot;
      previous = rot;
    }
  }
  return track;
}

/// The file's one clip, named after the file stem: LINEAR keys at every frame time.
Clip bvh_clip(const std::vector<ParsedJoint>& joints, const std::vector<BvhJointLayout>& layouts,
              const std::vector<double>& values, int total, const MotionHeader& motion, double unit,
              const std::string& name) {
  Clip clip;
  clip.name = file_stem(name);
  clip.sample_rate = 1.0 / motion.frame_time;
  clip.duration =
      motion.frames > 0 ? static_cast<double>(motion.frames - 1) * motion.frame_time : 0.0;
  clip.tracks.resize(joints.size());
  const auto nframes = static_cast<size_t>(motion.frames);
  if (nframes == 0) return clip;
  // Every animated channel shares the frame grid: build it once.
  std::vector<double> times(nframes);
  for (size_t f = 0; f < nframes; ++f) times[f] = static_cast<double>(f) * motion.frame_time;
  for (size_t i = 0; i < joints.size(); ++i)
    clip.tracks[i] = joint_track(joints[i], layouts[i], values, total, times, unit);
  return clip;
}

}  // namespace

std::optional<double> bvh_detect_unit(double height, std::string* name) {
  struct Range {
    double lo, hi, unit;
    const char* name;
  };
  // Ordered so that the overlapping bounds (e.g. 100 or 2.5) resolve the way the header lists.
  constexpr Range ranges[] = {{1.0, 2.5, 1.0, "m"},
                              {100.0, 250.0, 0.01, "cm"},
                              {40.0, 100.0, 0.0254, "inch"},
                              {20.0, 40.0, 0.0254 / 0.45, "cmu-asf"},
                              {1000.0, 2500.0, 0.001, "mm"}};
  if (!std::isfinite(height)) return std::nullopt;
  for (const Range& r : ranges) {
    if (height >= r.lo && height <= r.hi) {
      if (name) *name = r.name;
      return r.unit;
    }
  }
  return std::nullopt;
}

std::string_view to_string(BvhTranslation translation) {
  switch (translation) {
    case BvhTranslation::Auto:
      return "auto";
    case BvhTranslation::Replace:
      return "replace";
    case BvhTranslation::Add:
      return "add";
  }
  return "?";
}

std::optional<BvhTranslation> bvh_translation_from_string(std::string_view name) {
  for (BvhTranslation t : {BvhTranslation::Auto, BvhTranslation::Replace, BvhTranslation::Add})
    if (name == to_string(t)) return t;
  return std::nullopt;
}

std::vector<std::string> describe_bvh_translation(const Asset& asset) {
  // Joints grouped by what was decided, in skeleton order.
  struct Group {
    std::string what, how;
    std::vector<std::string> joints;
  };
  std::vector<Group> groups;
  const int n = std::min(asset.skeleton.joint_count(), static_cast<int>(asset.bvh_layout.size()));
  for (int j = 0; j < n; ++j) {
    const BvhJointLayout& layout = asset.bvh_layout[static_cast<size_t>(j)];
    const bool has_position = std::any_of(layout.channels.begin(), layout.channels.end(),
                                          [](const std::string& c) { return channel_code(c) < 3; });
    if (!has_position) continue;
    std::string what, how;
    switch (layout.translation_basis) {
      case BvhTranslationBasis::OffsetZero:
        what = "OFFSET 0 (both readings agree)";
        break;
      case BvhTranslationBasis::Requested:
        how = "as requested";
        break;
      case BvhTranslationBasis::Measured:
        how = "measured";
        break;
      case BvhTranslationBasis::Rule:
        how = "by the rule (neither reading fits)";
        break;
    }
    if (what.empty())
      what = layout.translation == BvhTranslation::Replace ? "local translation (replaces OFFSET)"
                                                           : "displacement (adds to OFFSET)";
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const Group& g) { return g.what == what && g.how == how; });
    if (it == groups.end()) it = groups.insert(groups.end(), Group{what, how, {}});
    it->joints.push_back(asset.skeleton.joint(j).name);
  }
  std::vector<std::string> lines;
  // One reading for all: a few names say enough. Several: every joint is named.
  const size_t names_shown = groups.size() == 1 ? 8 : std::numeric_limits<size_t>::max();
  for (const Group& g : groups) {
    std::string line = g.what + " on " + std::to_string(g.joints.size()) +
                       (g.joints.size() == 1 ? " joint" : " joints") +
                       (g.how.empty() ? "" : ", " + g.how) + ": ";
    for (size_t i = 0; i < g.joints.size() && i < names_shown; ++i)
      line += (i ? ", " : "") + g.joints[i];
    if (g.joints.size() > names_shown)
      line += ", … (" + std::to_string(g.joints.size() - names_shown) + " more)";
    lines.push_back(std::move(line));
  }
  return lines;
}

Asset parse_bvh(std::string_view text, const std::string& name, const BvhReadOptions& options) {
  Scanner sc(text, name);
  std::vector<ParsedJoint> joints = parse_hierarchy(sc);
  int total = 0;  // channel values per frame line
  for (ParsedJoint& j : joints) {
    j.first_value = total;
    total += static_cast<int>(j.channels.size());
  }
  const MotionHeader motion = read_motion_header(sc, total);
  const std::vector<double> values = read_frames(sc, motion.frames, total);

  Asset asset;
  asset.source.path = name;
  asset.source.format = "bvh";
  asset.source.up_axis = "+Y";
  asset.source.forward_axis = "+Z";
  std::string_view line;
  long line_no = 0;
  if (total > 0 && sc.next_nonblank_line(line, line_no))
    asset.source.warnings.push_back("data after the " + std::to_string(motion.frames) +
                                    " declared frames ignored (from line " +
                                    std::to_string(line_no) + ")");
  double y_extent = 0, max_extent = 0;
  rest_extents(joints, motion.frames > 0 && total > 0 ? values.data() : nullptr, y_extent,
               max_extent);
  const double unit = choose_unit(y_extent, max_extent, options, name, asset.source);
  asset.bvh_layout = joint_layouts(joints, values, static_cast<size_t>(motion.frames), total, unit,
                                   max_extent, options.translation, asset.source.warnings);
  asset.skeleton = bvh_skeleton(joints, unit, name);
  asset.clips.push_back(bvh_clip(joints, asset.bvh_layout, values, total, motion, unit, name));
  return asset;
}

Asset read_bvh(const std::string& path, const BvhReadOptions& options) {
  const std::string text = read_file(path);
  return parse_bvh(text, path, options);
}

}  // namespace kinema
