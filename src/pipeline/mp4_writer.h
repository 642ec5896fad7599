// src/pipeline/mp4_writer.h — MP4 files written by piping raw RGBA frames to ffmpeg (internal to
// the pipeline: `kinema render`, `kinema crowd`).
#pragma once

#include <cstdio>
#include <string>

#include "kinema/render/renderer.h"

namespace kinema::pipeline {

/// Path of a program on PATH, or "".
std::string find_program(const std::string& name);

/// ffmpeg's path, or a kinema::Error naming `out` that says how to do without it.
std::string require_ffmpeg(const std::string& out);

/// An MP4 being written by ffmpeg into a temporary file beside OUT, renamed over OUT by finish();
/// the temporary file is removed when the writer is dropped unfinished.
class Mp4Writer {
 public:
  Mp4Writer(const std::string& ffmpeg, const std::string& out, int width, int height, double rate);
  Mp4Writer(const Mp4Writer&) = delete;
  Mp4Writer& operator=(const Mp4Writer&) = delete;
  ~Mp4Writer();
  /// Appends a frame of the size given at construction. Throws kinema::Error when ffmpeg stops.
  void write(const Image& image);
  /// Waits for ffmpeg and moves the file into place. Throws kinema::Error when ffmpeg failed.
  void finish();

 private:
  std::string out_, partial_;
  FILE* pipe_ = nullptr;
};

}  // namespace kinema::pipeline
