// tools/kinema/verb_compress.cpp — `kinema compress IN... -o OUT_DIR [--error 0.01cm]
// [--vertex 3cm] [--clip C] [--json]`.
//
// Compresses the chosen clip (default: the first) of every input into OUT_DIR/<stem>.kc
// (kinema/compress/compressed_clip.h), each written atomically. Units are normalized by the
// importers first (CMU cgspeed BVH: 1 unit = 1/0.45 inch = 5.644 cm), so a centimetre is a
// centimetre. Prints a progress bar over the clips, one line per clip (raw bytes as 10 floats ×
// joints × frames, compressed bytes, ratio, max and 99th-percentile error measured with the real
// decoder, seconds) and the totals; --json prints {"clips": [...], "total": {...}} instead.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "kinema/compress/compress.h"
#include "kinema/core/error.h"
#include "kinema/io/file.h"

namespace kinema::cli {

namespace {

struct CompressArgs {
  std::vector<std::string> inputs;
  std::string out_dir, error = "0.01cm", vertex = "3cm", clip;
  int segment_frames = 16;
  bool json = false;
};

/// "0.01cm", "0.1mm", "1e-4m", "2 cm"; a bare number is centimetres. Throws UsageError.
double length_in_metres(const std::string& text, const char* option) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    throw UsageError(std::string(option) + " " + text + ": not a length (e.g. 0.01cm, 0.1mm)");
  }
  std::string unit = text.substr(used);
  unit.erase(0, unit.find_first_not_of(' '));
  double scale = 0;
  if (unit.empty() || unit == "cm") scale = 0.01;
  if (unit == "mm") scale = 0.001;
  if (unit == "m") scale = 1;
  if (scale == 0 || !std::isfinite(v) || v < 0)
    throw UsageError(std::string(option) + " " + text +
                     ": give a non-negative length in m, cm or mm (e.g. 0.01cm)");
  return v * scale;
}

struct ClipReport {
  std::string name, file;
  CompressionStats stats;
  double seconds = 0;
};

int compress_verb(const CompressArgs& a, const GlobalOptions& global) {
  CompressOptions options;
  options.max_error = length_in_metres(a.error, "--error");
  options.vertex_distance = length_in_metres(a.vertex, "--vertex");
  options.segment_frames = a.segment_frames;
  if (!(options.max_error > 0)) throw UsageError("--error must be positive");
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(a.out_dir, ec) && !fs::is_directory(a.out_dir, ec))
    throw UsageError("-o " + a.out_dir + " is a file; give a folder");
  for (const std::string& in : a.inputs)
    if (extension_of(in) == "kc") throw UsageError(in + " is already compressed");
  fs::create_directories(a.out_dir, ec);
  if (ec) throw Error(a.out_dir, "", "cannot create the folder: " + ec.message());

  std::vector<ClipReport> reports;
  std::set<std::string> names;
  Progress progress("compressing", long(a.inputs.size()), global.progress_enabled());
  for (const std::string& in : a.inputs) {
    const Asset asset = load_input(in);
    if (asset.clips.empty()) throw Error(in, "", "has no animation to compress");
    const int clip = a.clip.empty() ? 0 : find_clip(asset, a.clip, in);
    // OUT_DIR/<stem>.kc; a stem seen before gets its folder's name in front.
    const fs::path p(in);
    std::string stem = p.stem().string();
    if (names.count(stem)) stem = p.parent_path().filename().string() + "_" + stem;
    for (int k = 2; names.count(stem); ++k) stem = p.stem().string() + "_" + std::to_string(k);
    names.insert(stem);
    ClipReport r;
    r.name = stem;
    r.file = (fs::path(a.out_dir) / (stem + ".kc")).string();
    const auto t0 = std::chrono::steady_clock::now();
    const CompressedClip c = compress(asset.clips[size_t(clip)], asset.skeleton, options, &r.stats);
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    write_file_atomically(r.file,
                          {reinterpret_cast<const char*>(c.bytes().data()), c.bytes().size()});
    reports.push_back(std::move(r));
    progress.update(long(reports.size()));
  }
  progress.done();

  size_t raw = 0, packed = 0;
  double max_error = 0, p99 = 0, seconds = 0;
  for (const ClipReport& r : reports) {
    raw += r.stats.raw_bytes, packed += r.stats.compressed_bytes, seconds += r.seconds;
    max_error = std::max(max_error, r.stats.error.max);
    p99 = std::max(p99, r.stats.error.p99);
  }
  const double ratio = packed > 0 ? double(raw) / double(packed) : 0;
  if (a.json) {
    using json = nlohmann::ordered_json;
    json clips = json::array();
    for (const ClipReport& r : reports)
      clips.push_back({{"name", r.name},
                       {"file", r.file},
                       {"joints", r.stats.joints},
                       {"frames", r.stats.frames},
                       {"raw_bytes", r.stats.raw_bytes},
                       {"compressed_bytes", r.stats.compressed_bytes},
                       {"ratio", r.stats.ratio},
                       {"max_error_cm", r.stats.error.max * 100},
                       {"p99_error_cm", r.stats.error.p99 * 100},
                       {"seconds", r.seconds}});
    json total = {{"clips", reports.size()},
                  {"raw_bytes", raw},
                  {"compressed_bytes", packed},
                  {"ratio", ratio},
                  {"max_error_cm", max_error * 100},
                  {"p99_error_cm", p99 * 100},
                  {"seconds", seconds}};
    std::cout << json{{"error_bound_cm", options.max_error * 100},
                      {"vertex_distance_cm", options.vertex_distance * 100},
                      {"clips", clips},
                      {"total", total}}
                     .dump(2)
              << '\n';
    return kExitOk;
  }
  if (global.quiet) return kExitOk;
  std::printf("%-24s %6s %7s %12s %12s %8s %10s %10s %8s\n", "clip", "joints", "frames",
              "raw_bytes", "compressed", "ratio", "max_cm", "p99_cm", "seconds");
  for (const ClipReport& r : reports)
    std::printf("%-24s %6d %7d %12zu %12zu %8.2f %10.5f %10.5f %8.3f\n", r.name.c_str(),
                r.stats.joints, r.stats.frames, r.stats.raw_bytes, r.stats.compressed_bytes,
                r.stats.ratio, r.stats.error.max * 100, r.stats.error.p99 * 100, r.seconds);
  std::printf("%-24s %6s %7s %12zu %12zu %8.2f %10.5f %10.5f %8.3f\n", "total", "", "", raw, packed,
              ratio, max_error * 100, p99 * 100, seconds);
  std::printf("bound %s cm on vertices %s cm from each joint; wrote %zu file(s) to %s\n",
              format_number(options.max_error * 100, 6).c_str(),
              format_number(options.vertex_distance * 100, 3).c_str(), reports.size(),
              a.out_dir.c_str());
  return kExitOk;
}

}  // namespace

VerbRun register_compress(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<CompressArgs>();
  CLI::App* sub = app.add_subcommand(
      "compress",
      "Compress clips (.bvh .gltf .glb .vrm .fbx .dae) into OUT_DIR/<name>.kc within an error "
      "bound on virtual vertices, and report ratio and error");
  sub->add_option("IN", args->inputs, "Files to compress (the chosen clip of each)")->required();
  sub->add_option("-o,--out", args->out_dir, "Folder for the .kc files (created if missing)")
      ->required();
  sub->add_option("--error", args->error,
                  "Error bound on every virtual vertex at every frame and midpoint, e.g. "
                  "0.01cm (default), 0.1mm, 1e-4m; a bare number is cm");
  sub->add_option("--vertex", args->vertex,
                  "Distance of the virtual vertices from each joint along its axes (default "
                  "3cm)");
  sub->add_option("--segment", args->segment_frames, "Frames per segment (default 16)")
      ->check(CLI::Range(2, 1024));
  sub->add_option("--clip", args->clip, "The clip to compress, by name or index (default: first)");
  sub->add_flag("--json", args->json,
                "Print {\"clips\": [{name, file, joints, frames, raw_bytes, compressed_bytes, "
                "ratio, max_error_cm, p99_error_cm, seconds}], \"total\": {...}}");
  return [args, &global]() { return compress_verb(*args, global); };
}

}  // namespace kinema::cli
