// tools/kinema/verb_compress.cpp — `kinema compress IN... -o OUT_DIR [--error 0.01cm]
// [--vertex 3cm] [--segment 16] [--json]`.
//
// Compresses every clip of every input (kinema/compress/compress.h, docs/compress.md) within the
// error bound and writes one .kmc per input (its skeleton and compressed clips, kinema/io/kmc.h)
// into OUT_DIR as <stem>.kmc. Inputs are in metres once read (CMU cgspeed BVH: 1 unit = 1/0.45
// inch), so the bound means what it says. Every input is read before anything is written, and
// each .kmc is written atomically. Prints one line per clip — raw bytes (10 floats × joints ×
// frames), compressed bytes, ratio, max and 99th-percentile error (every joint, frame and
// midpoint, measured with the real decoder), seconds — and the totals; --json prints
// {"clips": [{"file", "name", "raw_bytes", "compressed_bytes", "ratio", "max_error_cm",
// "p99_error_cm", "seconds"}…], "total": {…}} instead.
//
// Exit codes: 1 for a command line that makes no sense (a length without a unit, OUT_DIR a file,
// two inputs with the same stem); 2 for bad input (unreadable, no clip) or a write failure.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/io/kmc.h"

namespace kinema::cli {

namespace {

namespace fs = std::filesystem;

struct CompressArgs {
  std::vector<std::string> inputs;
  std::string out_dir, error = "0.01cm", vertex = "3cm";
  int segment = 16;
  bool json = false;
};

/// "0.01cm", "0.1 mm", "3cm", "0.0001m" → metres. A unit is required: a bare number would be
/// ambiguous between the metres kinema computes in and the centimetres people quote.
double parse_length(const std::string& text, const std::string& option) {
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    throw UsageError(option + " " + text + ": not a length (write e.g. 0.01cm or 0.1mm)");
  }
  std::string unit = text.substr(used);
  unit.erase(std::remove(unit.begin(), unit.end(), ' '), unit.end());
  if (unit.empty())
    throw UsageError(option + " " + text + ": give a unit (m, cm, mm), e.g. " + text + "cm");
  if (!(value > 0) || !std::isfinite(value))
    throw UsageError(option + " " + text + ": must be a positive length");
  return value * unit_from_name(unit);
}

struct ClipRow {
  std::string file, name;
  CompressionStats stats;
  double seconds = 0;
};

std::string cm(double metres) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(5) << metres * 100;
  return s.str();
}

int run_compress(const CompressArgs& a, const GlobalOptions& global) {
  CompressOptions options;
  options.max_error = parse_length(a.error, "--error");
  options.vertex_distance = parse_length(a.vertex, "--vertex");
  options.segment_frames = a.segment;
  std::error_code ec;
  if (fs::exists(a.out_dir, ec) && !fs::is_directory(a.out_dir, ec))
    throw UsageError("OUT_DIR " + a.out_dir + " is a file, not a folder");
  std::map<std::string, std::string> stems;
  std::vector<std::string> outputs;
  for (const std::string& in : a.inputs) {
    const std::string stem = fs::path(in).stem().string();
    if (auto [it, fresh] = stems.emplace(stem, in); !fresh)
      throw UsageError("two inputs would both write " + stem + ".kmc: " + it->second + " and " +
                       in);
    outputs.push_back((fs::path(a.out_dir) / (stem + ".kmc")).string());
    if (same_file(in, outputs.back())) throw UsageError("OUT_DIR would overwrite the input " + in);
  }

  // Everything is read first: bad input fails before any file is written.
  std::vector<Asset> assets;
  long clip_total = 0;
  for (const std::string& in : a.inputs) {
    assets.push_back(load_input(in, global.load));
    if (assets.back().clips.empty()) throw Error(in, "", "no animation clip to compress");
    clip_total += long(assets.back().clips.size());
  }
  fs::create_directories(a.out_dir, ec);
  if (ec) throw Error(a.out_dir, "", "cannot create the folder: " + ec.message());

  std::vector<ClipRow> rows;
  Progress progress("compressing", clip_total, global.progress_enabled() && !a.json);
  long done = 0;
  size_t file_bytes = 0;
  for (size_t i = 0; i < assets.size(); ++i) {
    const Asset& asset = assets[i];
    CompressedAnimation animation;
    animation.skeleton = asset.skeleton;
    animation.source = fs::path(a.inputs[i]).filename().string();
    animation.source_unit_in_meters = asset.source.unit_in_meters;
    animation.source_unit_name = asset.source.unit_name;
    animation.max_error = options.max_error;
    animation.vertex_distance = options.vertex_distance;
    for (const Clip& clip : asset.clips) {
      ClipRow row{a.inputs[i], clip.name, {}, 0};
      const auto t0 = std::chrono::steady_clock::now();
      try {
        animation.clips.push_back(compress(clip, asset.skeleton, options, &row.stats));
      } catch (const Error& e) {
        throw Error(a.inputs[i], "clip \"" + clip.name + "\"", e.reason());
      }
      row.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      rows.push_back(std::move(row));
      progress.update(++done);
    }
    const std::string bytes = serialize_animation(animation);
    write_file_atomically(outputs[i], bytes);
    file_bytes += bytes.size();
  }
  progress.done();

  size_t raw = 0, compressed = 0;
  double max_error = 0, p99 = 0, seconds = 0;
  for (const ClipRow& r : rows) {
    raw += r.stats.raw_bytes;
    compressed += r.stats.compressed_bytes;
    max_error = std::max(max_error, r.stats.error.max);
    p99 = std::max(p99, r.stats.error.p99);
    seconds += r.seconds;
  }
  const double ratio = double(raw) / double(std::max<size_t>(compressed, 1));
  if (a.json) {
    nlohmann::ordered_json j;
    j["error_bound_cm"] = options.max_error * 100;
    j["vertex_distance_cm"] = options.vertex_distance * 100;
    nlohmann::ordered_json clips = nlohmann::ordered_json::array();
    for (const ClipRow& r : rows)
      clips.push_back({{"file", r.file},
                       {"name", r.name},
                       {"joints", r.stats.joints},
                       {"frames", r.stats.frames},
                       {"raw_bytes", r.stats.raw_bytes},
                       {"compressed_bytes", r.stats.compressed_bytes},
                       {"ratio", r.stats.ratio},
                       {"max_error_cm", r.stats.error.max * 100},
                       {"p99_error_cm", r.stats.error.p99 * 100},
                       {"seconds", r.seconds}});
    j["clips"] = std::move(clips);
    j["total"] = {
        {"clips", rows.size()},      {"raw_bytes", raw},  {"compressed_bytes", compressed},
        {"file_bytes", file_bytes},  {"ratio", ratio},    {"max_error_cm", max_error * 100},
        {"p99_error_cm", p99 * 100}, {"seconds", seconds}};
    j["outputs"] = outputs;
    std::cout << j.dump(2) << '\n';
  } else if (!global.quiet) {
    std::cout << "kinema compress: " << rows.size() << (rows.size() == 1 ? " clip" : " clips")
              << " within " << cm(options.max_error) << " cm at virtual vertices "
              << format_number(options.vertex_distance * 100) << " cm from each joint\n";
    std::cout << "  " << std::left << std::setw(36) << "clip" << std::right << std::setw(12)
              << "raw" << std::setw(12) << "compressed" << std::setw(9) << "ratio" << std::setw(11)
              << "max cm" << std::setw(11) << "p99 cm" << std::setw(9) << "s" << '\n';
    for (const ClipRow& r : rows) {
      std::string name = fs::path(r.file).stem().string() + "/" + r.name;
      if (name.size() > 35) name = name.substr(0, 34) + "…";
      std::cout << "  " << std::left << std::setw(36) << name << std::right << std::setw(12)
                << r.stats.raw_bytes << std::setw(12) << r.stats.compressed_bytes << std::setw(9)
                << format_number(r.stats.ratio, 2) << std::setw(11) << cm(r.stats.error.max)
                << std::setw(11) << cm(r.stats.error.p99) << std::setw(9)
                << format_number(r.seconds, 3) << '\n';
    }
    std::cout << "  " << std::left << std::setw(36) << "total" << std::right << std::setw(12) << raw
              << std::setw(12) << compressed << std::setw(9) << format_number(ratio, 2)
              << std::setw(11) << cm(max_error) << std::setw(11) << cm(p99) << std::setw(9)
              << format_number(seconds, 3) << '\n';
    std::cout << "  wrote " << outputs.size() << (outputs.size() == 1 ? " file" : " files")
              << " to " << a.out_dir << " (" << format_bytes(file_bytes) << " with skeletons)\n";
  }
  return kExitOk;
}

}  // namespace

VerbRun register_compress(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<CompressArgs>();
  CLI::App* sub = app.add_subcommand(
      "compress",
      "Compress every clip of the inputs within a guaranteed error bound: one .kmc per input");
  sub->add_option("IN", args->inputs, "Animation files (.bvh .gltf .glb .vrm .vrma .fbx .dae)")
      ->required();
  sub->add_option("-o,--out", args->out_dir, "The folder to write <stem>.kmc files into")
      ->required();
  sub->add_option("--error", args->error,
                  "The bound on any virtual vertex's error, with a unit (m, cm, mm)")
      ->capture_default_str();
  sub->add_option("--vertex", args->vertex,
                  "Distance of the virtual vertices from each joint, with a unit")
      ->capture_default_str();
  sub->add_option("--segment", args->segment, "Frames per segment (ranges and bit rates)")
      ->capture_default_str()
      ->check(CLI::Range(2, 1024));
  sub->add_flag("--json", args->json,
                "Print one JSON object: clips (file, name, raw_bytes, compressed_bytes, ratio, "
                "max_error_cm, p99_error_cm, seconds) and total");
  return [args, &global]() { return run_compress(*args, global); };
}

}  // namespace kinema::cli
