// tools/kinema/verb_compress.cpp — `kinema compress IN... -o OUT_DIR [--error 0.01cm]
// [--vertex 3cm] [--segment 16] [--json]`.
//
// Parses the options and runs pipeline::compress_files (kinema/pipeline/compress.h,
// docs/compress.md): every clip of every input within the error bound, one .kmc per input (its
// skeleton and compressed clips, kinema/io/kmc.h) in OUT_DIR as <stem>.kmc. Inputs are in metres
// once read (CMU cgspeed BVH: 1 unit = 1/0.45 inch), so the bound means what it says. Every input
// is read before anything is written, and each .kmc is written atomically. Prints one line per clip
// — raw bytes (10 floats × joints × frames), compressed bytes, ratio, max and 99th-percentile error
// (every joint, frame and midpoint, measured with the real decoder), seconds — and the totals;
// --json prints
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
#include "kinema/core/units.h"
#include "kinema/pipeline/compress.h"

namespace kinema::cli {

namespace {

namespace fs = std::filesystem;

struct CompressArgs {
  std::vector<std::string> inputs;
  std::string out_dir, error = "0.01cm", vertex = "3cm";
  int segment = 16;
  bool json = false;
};

std::string cm(double metres) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(5) << metres * 100;
  return s.str();
}

int run_compress(const CompressArgs& a, const GlobalOptions& global) {
  pipeline::CompressRequest request;
  request.inputs = a.inputs;
  request.out_dir = a.out_dir;
  request.options.max_error = parse_length(a.error, "--error");
  request.options.vertex_distance = parse_length(a.vertex, "--vertex");
  request.options.segment_frames = a.segment;
  request.load = global.load;
  JobProgress progress(global.progress_enabled() && !a.json);
  const pipeline::CompressResult result = pipeline::compress_files(request, progress.callback());
  progress.done();
  const CompressOptions& options = request.options;
  const std::vector<pipeline::CompressedClipReport>& rows = result.clips;
  const std::vector<std::string>& outputs = result.outputs;
  const size_t raw = result.raw_bytes, compressed = result.compressed_bytes;
  const double ratio = result.ratio, max_error = result.max_error, p99 = result.p99_error,
               seconds = result.seconds;
  const size_t file_bytes = result.file_bytes;
  if (a.json) {
    nlohmann::ordered_json j;
    j["error_bound_cm"] = options.max_error * 100;
    j["vertex_distance_cm"] = options.vertex_distance * 100;
    nlohmann::ordered_json clips = nlohmann::ordered_json::array();
    for (const pipeline::CompressedClipReport& r : rows)
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
    for (const pipeline::CompressedClipReport& r : rows) {
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
