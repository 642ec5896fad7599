// kinema/core/error.h — the typed error every offline/I/O function throws.
//
// Policy: parsing, I/O and user input fail with kinema::Error, which names the file, the place
// (a line, a JSON pointer, a byte offset, a joint name) and the reason. The CLI prints what()
// and exits with code 2. A request that makes no sense on its face — an output that is one of
// the inputs, a clip name the file does not have, an output format kinema cannot write — is a
// kinema::UsageError instead (the caller's mistake, not bad data; the CLI exits with code 1).
// Runtime (per-frame) functions never throw; they validate and return.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

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

/// A request that cannot be carried out as asked, whatever the data: what() says what is wrong
/// with it and how to ask instead.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// "line 12", the place string for text formats.
std::string at_line(long line);

/// "line 3, column 17": where byte `byte` (0-based; a parser's stopping point) lies in `text`.
std::string at_line_and_column(std::string_view text, std::size_t byte);

}  // namespace kinema
