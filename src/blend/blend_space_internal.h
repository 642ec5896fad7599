// blend_space_internal.h — what the blend-space sources share: the wording of their errors
// (numbers, the place of a sample) and the per-sample lists their PhaseSync is built from.
// Private to the blend module.
#pragma once

#include <cstddef>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "kinema/blend/blend_space.h"

namespace kinema::blend_detail {

// A number as errors print it (%g).
inline std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// "sample 2 ("run")": the place of an entry in errors.
inline std::string entry_place(const char* label, std::size_t i,
                               std::span<const std::string> names) {
  std::string s = std::string(label) + " " + std::to_string(i);
  if (i < names.size() && !names[i].empty()) s += " (\"" + names[i] + "\")";
  return s;
}

// The samples' names and cycles, in sample order.
std::vector<std::string> names_of(const auto& samples) {
  std::vector<std::string> names;
  for (const auto& s : samples) names.push_back(s.name);
  return names;
}

std::vector<ClipCycle> cycles_of(const auto& samples) {
  std::vector<ClipCycle> cycles;
  for (const auto& s : samples) cycles.push_back(s.cycle);
  return cycles;
}

}  // namespace kinema::blend_detail
