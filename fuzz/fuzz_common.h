// fuzz/fuzz_common.h — what every libFuzzer target shares: a reader's kinema::Error is the
// expected way to refuse bad bytes, so it is caught; any other exception escapes and libFuzzer
// reports it (as it does crashes, sanitizer reports, leaks and slow inputs).
#pragma once

#include <unistd.h>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include "kinema/core/error.h"

namespace kinema::fuzz {

inline std::string_view bytes_of(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// Runs `read`, treating kinema::Error as a refusal.
template <class F>
int refuse_or_read(F&& read) {
  try {
    read();
  } catch (const kinema::Error&) {
  }
  return 0;
}

/// For readers that only take a path: a private folder (under $TMPDIR or /tmp) that the input
/// is written to before each run, removed at exit.
class TempFolder {
 public:
  TempFolder() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/kinema-fuzz-XXXXXX";
    if (!mkdtemp(pattern.data())) std::abort();
    path_ = pattern;
  }
  ~TempFolder() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;

  /// Writes `bytes` to `name` in the folder and returns its path.
  std::string write(const std::string& name, std::string_view bytes) const {
    const std::string file = path_ + "/" + name;
    std::FILE* f = std::fopen(file.c_str(), "wb");
    if (!f) std::abort();
    if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size())
      std::abort();
    std::fclose(f);
    return file;
  }

 private:
  std::string path_;
};

}  // namespace kinema::fuzz
