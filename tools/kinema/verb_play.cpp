// tools/kinema/verb_play.cpp — `kinema play GRAPH.json [--param NAME=SPEC]… [--seconds S]
// [--fps N] [--root-motion bake|in-place] -o OUT`.
//
// Parses the options and runs pipeline::play_graph_file (kinema/pipeline/play.h, docs/graph.md):
// the graph played over time with parameter curves, the result written as one clip (.glb .gltf
// .vrm .bvh; atomic: a failure leaves no OUT and the graph and its clips are only read).
// `kinema demo` runs the same job and prints the same line (print_play).
//
// Exit codes: 1 for a command line that makes no sense (a missing -o, OUT equal to an input,
// OUT a folder, an unknown flag); 2 for a bad graph (file, JSON pointer, reason) and for a
// --param spec that does not parse or does not fit the graph ("--param", NAME item N, reason):
// the spec is data read by the library's curve parser, reported like any other parse error.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli.h"
#include "kinema/math/scalar.h"
#include "kinema/pipeline/play.h"
#include "skate_report.h"

namespace kinema::cli {

namespace {

std::string join(const std::vector<std::string>& items) {
  std::string s;
  for (const std::string& i : items) s += (s.empty() ? "" : ", ") + i;
  return s.empty() ? "none" : s;
}

}  // namespace

void print_play(const pipeline::PlayRequest& request, const pipeline::PlayResult& r,
                std::ostream& out) {
  const PlayReport& report = r.report;
  out << "wrote " << request.out << ": " << report.frames << " frames, "
      << format_number(r.duration, 3) << " s at " << format_number(request.fps, 3)
      << " fps; states visited: " << join(report.states_visited)
      << "; transitions taken: " << report.transitions_taken;
  if (r.root_motion) {
    if (request.root_motion == RootMotionOutput::InPlace) {
      out << "; root motion: in place";
    } else {
      const RootDelta& p = report.final_placement;
      out << "; root motion baked: ended at (" << format_number(p.translation.x, 2) << ", "
          << format_number(p.translation.z, 2) << ") m, heading "
          << format_number(degrees(p.yaw), 1) << "°";
    }
  }
  if (r.foot_skate) out << "; " << skate_text(*r.foot_skate);
  out << '\n';
}

VerbRun register_play(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<pipeline::PlayRequest>();
  auto mode = std::make_shared<std::string>("bake");
  CLI::App* sub = app.add_subcommand(
      "play",
      "Play an animation graph (JSON: parameters, blend trees, state machines; see "
      "docs/graph.md) with parameter curves and write the result as a clip");
  sub->add_option("GRAPH", args->graph, "The graph .json file (never modified)")->required();
  sub->add_option("-o,--out", args->out, "The file to write: .glb .gltf .vrm or .bvh")->required();
  sub->add_option("--param", args->params,
                  "NAME=TIME:VALUE,… a parameter's curve (piecewise linear; bools 0/1 held until "
                  "the next key), NAME=VALUE a constant, NAME=TIME,… a trigger's firing times. "
                  "Repeat for each parameter")
      ->allow_extra_args(false);
  sub->add_option("--seconds", args->seconds, "Length of the result")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 3600.0));
  sub->add_option("--fps", args->fps, "Frames per second of the result")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 1000.0));
  sub->add_option("--root-motion", *mode,
                  "bake: the character travels by the graph's root motion; in-place: it stays "
                  "at the origin")
      ->capture_default_str()
      ->check(CLI::IsMember({"bake", "in-place"}));
  return [args, mode, &global]() {
    pipeline::PlayRequest request = *args;
    request.root_motion = *mode == "in-place" ? RootMotionOutput::InPlace : RootMotionOutput::Bake;
    request.load = global.load;
    JobProgress progress(global.progress_enabled());
    const pipeline::PlayResult result = pipeline::play_graph_file(request, progress.callback());
    progress.done();
    if (!global.quiet) print_play(request, result, std::cout);
    return kExitOk;
  };
}

}  // namespace kinema::cli
