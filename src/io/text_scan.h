// src/io/text_scan.h — private helpers the text readers (BVH, OBJ) share for splitting lines
// and quoting what they found in an error message.
#pragma once

#include <string>
#include <string_view>

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

}  // namespace kinema::text_scan
