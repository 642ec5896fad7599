// kinema/pipeline/format_number.h — a number as the pipeline's messages and reports and the
// `kinema` command line print it.
#pragma once

#include <cmath>
#include <cstdio>
#include <string>

namespace kinema::pipeline {

/// "12.5", "3": `value` with at most `digits` decimals, trailing zeros dropped; "-0" is "0".
inline std::string format_number(double value, int digits = 3) {
  if (!std::isfinite(value)) return std::to_string(value);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, value);
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
  }
  return s == "-0" ? "0" : s;
}

}  // namespace kinema::pipeline
