// kinema/core/error.h — the typed error every offline/I/O function throws.
//
// Policy: parsing, I/O and user input fail with kinema::Error, which names the file, the place
// (a line, a JSON pointer, a byte offset, a joint name) and the reason. The CLI prints what()
// and exits with code 2. Runtime (per-frame) functions never throw; they validate and return.
#pragma once

#include <stdexcept>
#include <string>

namespace kinema {

class Error : public std::runtime_error {
 public:
  /// `file` may be empty (in-memory data); `place` may be empty when the whole input is at fault.
  Error(std::string file, std::string place, std::string reason);

  const std::string& file() const noexcept { return file_; }
  const std::string& place() const noexcept { return place_; }
  const std::string& reason() const noexcept { return reason_; }

 private:
  std::string file_, place_, reason_;
};

/// "line 12", the place string for text formats.
std::string at_line(long line);

}  // namespace kinema
