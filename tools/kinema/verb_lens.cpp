// tools/kinema/verb_lens.cpp — `kinema undistort IN -o OUT --lens LENS.json [--st-map MAP.exr]
// [--linear] [--json]` and `kinema distort …` with the same options.
//
// Runs pipeline::run_lens (kinema/pipeline/lens.h, docs/composite.md): a plate or a numbered
// sequence (#### or %04d in both paths) resampled through a Brown–Conrady lens given as OpenCV's
// calibration values in a JSON file. undistort turns a filmed plate into the pinhole image a
// tracker and a renderer see; distort bends a finished render back to go over the plate.
//
// Exit codes: 1 for a command line that makes no sense (an output that is an input, a sequence
// in only one of IN and OUT, an extension other than .png/.exr); 2 for a bad image or lens file
// (file, place and reason named), frames of different sizes, or a write failure. Nothing is
// written on failure.
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "kinema/pipeline/lens.h"

namespace kinema::cli {

namespace {

struct LensArgs {
  pipeline::LensRequest request;
  bool json = false;
};

int run_lens(LensArgs& a, const GlobalOptions& global, const char* verb) {
  pipeline::LensRequest& r = a.request;
  JobProgress bars(global.progress_enabled());
  r.progress = bars.callback();
  const pipeline::LensReport report = pipeline::run_lens(r);
  bars.done();
  if (a.json) {
    nlohmann::ordered_json j;
    j["out"] = report.written;
    j["frames"] = report.frames;
    j["width"] = report.width;
    j["height"] = report.height;
    j["pixels_without_source"] = report.pixels_without_source;
    j["map_ms"] = 1e3 * report.map_seconds;
    j["remap_ms_per_frame"] = 1e3 * report.remap_seconds / std::max(report.frames, 1);
    std::cout << j.dump(2) << '\n';
  } else if (!global.quiet) {
    std::cout << "kinema " << verb << ": " << report.frames
              << (report.frames == 1 ? " frame" : " frames") << ", " << report.width << "×"
              << report.height << ", map " << format_number(1e3 * report.map_seconds)
              << " ms, remap " << format_number(1e3 * report.remap_seconds / report.frames)
              << " ms a frame";
    if (report.pixels_without_source > 0)
      std::cout << ", " << report.pixels_without_source
                << " pixels past the lens's fold left transparent";
    std::cout << '\n';
    const std::size_t shown = std::min<std::size_t>(report.written.size(), 8);
    for (std::size_t i = 0; i < shown; ++i) std::cout << "  " << report.written[i] << '\n';
    if (report.written.size() > shown)
      std::cout << "  … and " << report.written.size() - shown << " more\n";
  }
  return kExitOk;
}

VerbRun register_lens_verb(CLI::App& app, const GlobalOptions& global, bool distort) {
  auto args = std::make_shared<LensArgs>();
  pipeline::LensRequest& r = args->request;
  r.distort = distort;
  const char* verb = distort ? "distort" : "undistort";
  CLI::App* cmd = app.add_subcommand(
      verb, distort ? "Bend a pinhole render through a lens (Brown–Conrady, OpenCV's values) to go "
                      "over the filmed plate"
                    : "Straighten a filmed plate (Brown–Conrady lens, OpenCV's values) into the "
                      "pinhole image trackers and renderers see");
  cmd->add_option("in", r.in, "The image (.png or .exr), or a sequence: plate.####.exr")
      ->required();
  cmd->add_option("-o,--out", r.out, "The image to write (.png or .exr; a sequence for one)")
      ->required();
  cmd->add_option("--lens", r.lens,
                  "The lens (.json: fx, and optionally fy, cx, cy, k1, k2, k3, p1, p2)")
      ->required();
  cmd->add_option("--st-map", r.st_map_out, "Also write the ST-map (.exr, float) for Nuke/Fusion");
  cmd->add_flag("--linear", r.linear, "PNGs hold linear values (no sRGB decode or encode)");
  cmd->add_flag("--json", args->json, "Print the summary as one JSON object");
  return [args, &global, verb]() { return run_lens(*args, global, verb); };
}

}  // namespace

VerbRun register_undistort(CLI::App& app, const GlobalOptions& global) {
  return register_lens_verb(app, global, false);
}

VerbRun register_distort(CLI::App& app, const GlobalOptions& global) {
  return register_lens_verb(app, global, true);
}

}  // namespace kinema::cli
