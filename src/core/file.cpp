// Whole-file reads and failure-safe writes (kinema/core/file.h).
#include "kinema/core/file.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kinema/core/error.h"

namespace kinema {

std::string extension_of(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  if (!ext.empty() && ext[0] == '.') ext.erase(0, 1);
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext;
}

std::string read_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw Error(path, "", "is a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path, "", std::string("cannot open: ") + std::strerror(errno));
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < 0) throw Error(path, "", "cannot determine the file size");
  in.seekg(0, std::ios::beg);
  std::string bytes(static_cast<size_t>(size), '\0');
  if (size > 0 && !in.read(bytes.data(), size)) throw Error(path, "", "read failed");
  return bytes;
}

void write_file_atomically(const std::string& path, std::string_view bytes) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw Error(path, "", "folder does not exist: " + dir.string());
  std::string tmp_name = target.filename().string();
  tmp_name.insert(0, 1, '.');
  tmp_name.append(".tmp-XXXXXX");
  std::string tmpl = (dir / tmp_name).string();
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0)
    throw Error(path, "", std::string("cannot create a temporary file: ") + std::strerror(errno));
  size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      const std::string why = std::strerror(errno);
      ::close(fd);
      ::unlink(tmpl.c_str());
      throw Error(path, "", "write failed: " + why);
    }
    written += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(tmpl.c_str());
    throw Error(path, "", "write failed: " + why);
  }
  ::chmod(tmpl.c_str(), 0644);
  if (std::rename(tmpl.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(tmpl.c_str());
    throw Error(path, "", "cannot replace the file: " + why);
  }
}

}  // namespace kinema
