// tools/kinema/common.cpp — helpers shared by the verbs (see cli.h).
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>

#include "cli.h"
#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"

namespace kinema::cli {

namespace {

double now_seconds() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

}  // namespace

bool GlobalOptions::progress_enabled() const {
  if (quiet || no_progress) return false;
  return force_progress || ::isatty(STDERR_FILENO) == 1;
}

// ---- Progress ----------------------------------------------------------------------------

Progress::Progress(std::string label, long total, bool enabled)
    : label_(std::move(label)), total_(std::max(total, 1L)), enabled_(enabled) {}

Progress::~Progress() { done(); }

void Progress::update(long done_count) {
  if (!enabled_) return;
  const int percent =
      static_cast<int>(100.0 * std::clamp(done_count, 0L, total_) / static_cast<double>(total_));
  const double t = now_seconds();
  if (percent == last_percent_ || (drawn_ && percent < 100 && t - last_draw_ < 0.05)) return;
  last_percent_ = percent;
  last_draw_ = t;
  constexpr int kWidth = 30;
  const int filled = percent * kWidth / 100;
  std::string bar(static_cast<size_t>(filled), '#');
  bar.append(static_cast<size_t>(kWidth - filled), '.');
  std::fprintf(stderr, "\r%s [%s] %3d%%", label_.c_str(), bar.c_str(), percent);
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::done() {
  if (!drawn_) return;
  // Erase the bar so that the next message starts on a clean line.
  std::fprintf(stderr, "\r%*s\r", static_cast<int>(label_.size()) + 40, "");
  std::fflush(stderr);
  drawn_ = false;
}

pipeline::Progress JobProgress::callback() {
  if (!enabled_) return {};
  return [this](const std::string& stage, long done_count, long total) {
    if (!bar_ || stage != stage_) {
      bar_.reset();  // erases the previous stage's bar
      stage_ = stage;
      bar_ = std::make_unique<Progress>(stage, total, true);
    }
    bar_->update(done_count);
  };
}

void JobProgress::done() { bar_.reset(); }

// ---- clips ------------------------------------------------------------------------------

// ---- small parsing / formatting helpers ---------------------------------------------------

std::string format_bytes(unsigned long long bytes) {
  if (bytes < 1000) return std::to_string(bytes) + " B";
  if (bytes < 1000 * 1000) return format_number(static_cast<double>(bytes) / 1e3, 1) + " kB";
  return format_number(static_cast<double>(bytes) / 1e6, 2) + " MB";
}

std::string describe_clip(const Clip& clip) {
  std::string s =
      std::to_string(clip.frame_count()) + " frames, " + format_number(clip.duration, 3) + " s";
  if (clip.sample_rate > 0) s += " at " + format_number(clip.sample_rate, 3) + " fps";
  return s;
}

bool parse_int(const std::string& s, int& v) {
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && ptr == s.data() + s.size();
}

void parse_size(const std::string& s, int& w, int& h) {
  const size_t x = s.find_first_of("xX");
  if (x == std::string::npos || !parse_int(s.substr(0, x), w) || !parse_int(s.substr(x + 1), h) ||
      w < 1 || h < 1 || w > 8192 || h > 8192)
    throw UsageError("--size " + s + ": expected WxH with 1…8192 pixels each, e.g. 640x480");
}

}  // namespace kinema::cli
