#include "kinema/core/error.h"

namespace kinema {
namespace {
std::string compose(const std::string& file, const std::string& place, const std::string& reason) {
  std::string s;
  if (!file.empty()) s += file;
  if (!place.empty()) s += (s.empty() ? "" : ":") + place;
  if (!s.empty()) s += ": ";
  return s + reason;
}
}  // namespace

Error::Error(std::string file, std::string place, std::string reason)
    : std::runtime_error(compose(file, place, reason)),
      file_(std::move(file)),
      place_(std::move(place)),
      reason_(std::move(reason)) {}

std::string at_line(long line) { return "line " + std::to_string(line); }

}  // namespace kinema
