// tools/kinema/verb_demo.cpp — `kinema demo [MOTION [CHARACTER]] [-o OUT_DIR]`.
//
// Finds the bundled data (data/demo: a CMU walk and a small skinned character, the pab walk and
// run, stairs and a slope) or takes the user's files, runs pipeline::run_demo
// (kinema/pipeline/demo.h: round trip, retarget, clean, graph, motion matching, foot placement,
// compression, renders) and prints each step as it goes, with the same printers as the verbs
// those steps share (`kinema play`, `match`, `ik feet`, `crowd`; demo_printer.cpp).
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "build_paths.h"
#include "cli.h"
#include "kinema/pipeline/demo.h"

namespace kinema::cli {

namespace {

namespace fs = std::filesystem;

struct DemoArgs {
  std::vector<std::string> files;
  std::string out_dir = "kinema-demo-out";
};

/// The folder with the bundled demo data: $KINEMA_DEMO_DATA, else the source tree's data/demo,
/// else the installed copy.
fs::path demo_data_dir() {
  if (const char* env = std::getenv("KINEMA_DEMO_DATA"); env && *env) return fs::path(env);
  std::error_code ec;
  if (fs::is_directory(build_paths::demo_data(), ec)) return fs::path(build_paths::demo_data());
  if (fs::is_directory(build_paths::installed_demo_data(), ec))
    return fs::path(build_paths::installed_demo_data());
  throw Error("", "",
              "cannot find the demo data (data/demo); set KINEMA_DEMO_DATA to its folder or "
              "give files: kinema demo MOTION.bvh [CHARACTER.glb]");
}

int demo(const DemoArgs& args, const GlobalOptions& global) {
  if (args.files.size() > 2) throw UsageError("demo takes at most two files: MOTION [CHARACTER]");
  pipeline::DemoRequest request;
  if (args.files.empty()) {
    request = pipeline::demo_on_bundled_data(demo_data_dir().string());
  } else {
    request.motion = args.files[0];
    if (args.files.size() == 2) request.character = args.files[1];
  }
  request.out_dir = args.out_dir;
  request.load = global.load;
  JobProgress progress(global.progress_enabled());
  pipeline::run_demo(
      request,
      [&](const pipeline::DemoEvent& event) {
        progress.done();  // a step's report starts on a clean line
        if (!global.quiet) print_demo_event(event, std::cout);
      },
      progress.callback());
  return kExitOk;
}

}  // namespace

VerbRun register_demo(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<DemoArgs>();
  CLI::App* sub = app.add_subcommand(
      "demo",
      "A tour on the bundled walk + character (or your MOTION [CHARACTER]): summaries, "
      "BVH → GLB → BVH round trip with its error, retarget by humanoid names, and (bundled data) "
      "a walk/run blend through an animation graph, motion matching along a scripted stick, "
      "foot placement on stairs and a slope, simulations, a crowd crossing a square, and "
      "compression within 0.01 cm");
  sub->add_option("FILES", args->files, "MOTION (any readable file) and optional CHARACTER");
  sub->add_option("-o,--out", args->out_dir, "Folder for the results (created if needed)")
      ->capture_default_str();
  return [args, &global]() { return demo(*args, global); };
}

}  // namespace kinema::cli
