// src/io/text_scan.h — private helpers the text readers (BVH, OBJ) share for splitting lines
// and quoting what they found in an error message.
#pragma once

#include <charconv>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace kinema::text_scan {

/// Blank within a line: space, tab, CR, FF, VT (not '\n').
inline bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

/// A token made printable and short for error messages (binary garbage must not leak).
inline std::string printable(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 32)) {
    const auto u = static_cast<unsigned char>(c);
    out += (u >= 32 && u < 127) ? c : '?';
  }
  if (s.size() > 32) out += "...";
  return out;
}

/// Splits a line into blank-separated tokens (the line has no '\n'; '#' starts a comment).
inline void tokenize(std::string_view line, std::vector<std::string_view>& tokens) {
  tokens.clear();
  if (const size_t hash = line.find('#'); hash != std::string_view::npos)
    line = line.substr(0, hash);
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && is_blank(line[i])) ++i;
    const size_t start = i;
    while (i < line.size() && !is_blank(line[i])) ++i;
    if (i > start) tokens.push_back(line.substr(start, i - start));
  }
}

/// An OBJ vertex reference (`i`, `i/t`, `i//n`, `i/t/n`; 1-based, negative: from the last of the
/// `count` vertices defined so far) as a 0-based index into them. Returns "" when it is one, else
/// why not (`what` names it: "face vertex", "line vertex").
inline std::string obj_vertex_index(std::string_view ref, long long count, const std::string& what,
                                    long long& resolved) {
  const std::string_view first = ref.substr(0, ref.find('/'));
  long long index = 0;
  const auto [ptr, ec] = std::from_chars(first.data(), first.data() + first.size(), index);
  if (first.empty() || ec != std::errc() || ptr != first.data() + first.size())
    return what + " '" + printable(ref) + "' is not an index (i, i/t, i//n or i/t/n)";
  if (index == 0) return what + " index 0 (OBJ indices start at 1)";
  resolved = index > 0 ? index - 1 : count + index;
  if (resolved < 0 || resolved >= count)
    return what + " index " + std::to_string(index) + " out of range (" + std::to_string(count) +
           " vertices defined so far)";
  return "";
}

}  // namespace kinema::text_scan
