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

std::string at_line_and_column(std::string_view text, std::size_t byte) {
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i < byte && i < text.size(); ++i) {
    if (text[i] == '\n')
      line += 1, column = 1;
    else
      ++column;
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

}  // namespace kinema
