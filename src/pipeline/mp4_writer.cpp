// src/pipeline/mp4_writer.cpp — MP4 through ffmpeg (mp4_writer.h).
#include "mp4_writer.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "kinema/core/error.h"

namespace kinema::pipeline {

namespace {

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace

/// Path of a program on PATH, or "".
std::string find_program(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (!path) return "";
  std::string dirs = path;
  size_t start = 0;
  while (start <= dirs.size()) {
    const size_t end = std::min(dirs.find(':', start), dirs.size());
    const std::string dir = dirs.substr(start, end - start);
    const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return "";
}

std::string require_ffmpeg(const std::string& out) {
  std::string ffmpeg = find_program("ffmpeg");
  if (ffmpeg.empty())
    throw Error(out, "",
                "writing .mp4 needs the ffmpeg program, which is not on PATH (install ffmpeg, "
                "or write PNG frames with -o out_%04d.png)");
  return ffmpeg;
}

Mp4Writer::Mp4Writer(const std::string& ffmpeg, const std::string& out, int width, int height,
                     double rate)
    : out_(out) {
  const std::filesystem::path path(out);
  partial_ = (path.parent_path() /
              ("." + path.filename().string() + ".partial-" + std::to_string(::getpid()) + ".mp4"))
                 .string();
  char rate_text[64];
  std::snprintf(rate_text, sizeof rate_text, "%.6g", rate);
  const std::string cmd = shell_quote(ffmpeg) +
                          " -nostdin -y -loglevel error -f rawvideo -pix_fmt rgba -s " +
                          std::to_string(width) + "x" + std::to_string(height) + " -r " +
                          rate_text + " -i - -pix_fmt yuv420p " + shell_quote(partial_);
  pipe_ = ::popen(cmd.c_str(), "w");
  if (!pipe_) throw Error(out, "ffmpeg", "cannot start " + ffmpeg);
}

Mp4Writer::~Mp4Writer() {
  if (pipe_) ::pclose(pipe_);
  std::error_code ec;
  if (!partial_.empty()) std::filesystem::remove(partial_, ec);
}

void Mp4Writer::write(const Image& image) {
  if (std::fwrite(image.rgba.data(), 1, image.rgba.size(), pipe_) != image.rgba.size())
    throw Error(out_, "ffmpeg", "ffmpeg stopped reading frames (see its message above)");
}

void Mp4Writer::finish() {
  const int status = ::pclose(pipe_);
  pipe_ = nullptr;
  if (status != 0)
    throw Error(out_, "ffmpeg",
                "ffmpeg failed (exit status " +
                    std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : status) + ")");
  std::filesystem::rename(partial_, out_);
  partial_.clear();
}

}  // namespace kinema::pipeline
