// tools/kinema/verb_comp.cpp — `kinema comp SCRIPT.json [--frames FIRST LAST] [--json]`.
//
// Runs pipeline::run_comp (kinema/pipeline/comp.h, docs/composite.md): a JSON list of
// compositing nodes — read, key, over and the other Porter–Duff ops, mattes, roto, lens
// distortion, differential rendering, grain, motion blur, write — over one frame or a numbered
// sequence, with a progress bar per frame.
//
// Exit codes: 1 for a command line that makes no sense (an output that is an input, two outputs
// to one file, an extension other than .png/.exr); 2 for a bad script (its JSON place named), a
// bad or missing image, sizes that differ, or a write failure. Nothing is written on failure.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "kinema/pipeline/comp.h"

namespace kinema::cli {

namespace {

struct CompArgs {
  pipeline::CompRequest request;
  std::vector<int> frames;
  bool json = false;
};

int run_comp(CompArgs& a, const GlobalOptions& global) {
  pipeline::CompRequest& r = a.request;
  if (a.frames.size() == 2) {
    if (a.frames[1] < a.frames[0]) throw UsageError("--frames FIRST LAST needs FIRST ≤ LAST");
    r.first_frame = a.frames[0], r.last_frame = a.frames[1];
  }
  JobProgress bars(global.progress_enabled());
  r.progress = bars.callback();
  const pipeline::CompReport report = pipeline::run_comp(r);
  bars.done();
  if (a.json) {
    nlohmann::ordered_json j;
    j["out"] = report.written;
    j["frames"] = report.frames;
    j["nodes"] = report.nodes;
    j["width"] = report.width;
    j["height"] = report.height;
    j["ms"] = 1e3 * report.seconds;
    std::cout << j.dump(2) << '\n';
  } else if (!global.quiet) {
    std::cout << "kinema comp: " << r.script << ", " << report.nodes << " nodes × " << report.frames
              << (report.frames == 1 ? " frame" : " frames") << ", " << report.width << "×"
              << report.height << " (" << format_number(1e3 * report.seconds)
              << " ms of compositing)\n";
    const std::size_t shown = std::min<std::size_t>(report.written.size(), 8);
    for (std::size_t i = 0; i < shown; ++i) std::cout << "  " << report.written[i] << '\n';
    if (report.written.size() > shown)
      std::cout << "  … and " << report.written.size() - shown << " more\n";
  }
  return kExitOk;
}

}  // namespace

VerbRun register_comp(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<CompArgs>();
  CLI::App* comp = app.add_subcommand(
      "comp",
      "Run a compositing script (JSON nodes: read, key, over…, matte, roto, distort, "
      "differential, grain, motion_blur, write) over a frame or a sequence");
  comp->add_option("script", args->request.script, "The script (.json)")->required();
  comp->add_option("--frames", args->frames, "Do these frames instead of the script's range")
      ->expected(2);
  comp->add_flag("--json", args->json, "Print the summary as one JSON object");
  return [args, &global]() { return run_comp(*args, global); };
}

}  // namespace kinema::cli
