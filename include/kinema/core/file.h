// kinema/core/file.h — whole-file reads, and writes that never leave a half-written file.
#pragma once

#include <string>
#include <string_view>

namespace kinema {

/// Reads a whole file; throws kinema::Error (file, reason) if it cannot.
std::string read_file(const std::string& path);

/// Writes `bytes` to `path` through a temporary file in the same folder, then renames it over
/// the target, so a failure never leaves a half-written file. Throws kinema::Error.
void write_file_atomically(const std::string& path, std::string_view bytes);

/// Lower-case extension without the dot ("bvh"), or "" when there is none.
std::string extension_of(const std::string& path);

}  // namespace kinema
