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

Asset load_input(const std::string& path, const LoadOptions& options) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw Error(path, "", "is a folder; give a .bvh .gltf .glb .vrm .fbx or .dae file");
  return load_asset(path, options);
}

// ---- clips ------------------------------------------------------------------------------

namespace {

/// Rate of evenly spaced key times (spacing within 1% of the mean), else 0.
double uniform_rate(const std::vector<double>& times) {
  if (times.size() < 3) return 0;
  const double span = times.back() - times.front();
  if (!(span > 0)) return 0;
  const double step = span / static_cast<double>(times.size() - 1);
  for (size_t i = 1; i < times.size(); ++i)
    if (std::abs(times[i] - times[i - 1] - step) > 0.01 * step) return 0;
  const double rate = 1.0 / step;
  // Float32 key times (glTF) blur an integer rate in the 7th-8th digit.
  const double rounded = std::round(rate);
  return std::abs(rate - rounded) < 1e-6 * rate ? rounded : rate;
}

}  // namespace

double frame_rate_of(const Clip& clip) {
  if (clip.sample_rate > 0) return clip.sample_rate;
  const std::vector<double>* longest = nullptr;
  auto consider = [&](const std::vector<double>& times) {
    if (!longest || times.size() > longest->size()) longest = &times;
  };
  for (const JointTrack& track : clip.tracks) {
    consider(track.rotation.times);
    consider(track.translation.times);
    consider(track.scale.times);
  }
  return longest ? uniform_rate(*longest) : 0;
}

// ---- small parsing / formatting helpers ---------------------------------------------------

double unit_from_name(const std::string& name) {
  if (name == "m") return 1.0;
  if (name == "cm") return 0.01;
  if (name == "mm") return 0.001;
  if (name == "inch" || name == "in") return 0.0254;
  if (name == "cmu") return 0.0254 / 0.45;  // CMU ASF length unit: 1/0.45 inch
  throw UsageError("unknown unit '" + name + "' (use m, cm, mm, inch or cmu)");
}

int find_clip(const Asset& asset, const std::string& name_or_index, const std::string& file) {
  const int count = static_cast<int>(asset.clips.size());
  for (int i = 0; i < count; ++i)
    if (asset.clips[static_cast<size_t>(i)].name == name_or_index) return i;
  int index = -1;
  const char* first = name_or_index.data();
  const char* last = first + name_or_index.size();
  const auto [ptr, ec] = std::from_chars(first, last, index);
  if (ec == std::errc() && ptr == last && index >= 0 && index < count) return index;
  std::string names;
  for (int i = 0; i < count; ++i) {
    names += names.empty() ? "" : ", ";
    names += std::to_string(i) + " '" + asset.clips[static_cast<size_t>(i)].name + "'";
  }
  throw UsageError(
      file + ": no clip '" + name_or_index + "'" +
      (count == 0 ? std::string(" (the file has no animation)") : " (clips: " + names + ")"));
}

bool same_file(const std::string& a, const std::string& b) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) {
    const bool eq = fs::equivalent(a, b, ec);
    if (!ec) return eq;
  }
  const fs::path pa = fs::weakly_canonical(fs::absolute(a, ec), ec);
  const fs::path pb = fs::weakly_canonical(fs::absolute(b, ec), ec);
  return pa.lexically_normal() == pb.lexically_normal();
}

std::string format_number(double value, int digits) {
  if (!std::isfinite(value)) return std::to_string(value);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, value);
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return s;
}

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

}  // namespace kinema::cli
