// tools/kinema/verb_crowd.cpp — `kinema crowd SCENE.json -o OUT.pc2 [--seconds S] [--threads N]
// [--json]`.
//
// Parses the options and runs pipeline::run_crowd (kinema/pipeline/crowd.h, docs/crowds.md): the
// scene's agents walk to their goals along A* paths, avoiding each other (ORCA), and are written as
// a PC2 point cache with its particle sidecar (.kpa) — `kinema render OUT.pc2` draws them. Prints
// how many arrived, the deepest overlap and the time a step took.
//
// Exit codes: 1 for a command line that makes no sense (OUT not .pc2, OUT the scene); 2 for a
// scene that cannot be read or walked (malformed JSON, a value out of range, a goal off the
// navigation grid), named by the scene's file and JSON pointer; nothing is written then.
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "kinema/pipeline/crowd.h"

namespace kinema::cli {

namespace {

struct CrowdArgs {
  pipeline::CrowdRequest request;
  bool json = false;
};

int run_crowd(CrowdArgs& a, const GlobalOptions& global) {
  JobProgress bars(global.progress_enabled());
  a.request.progress = bars.callback();
  const pipeline::CrowdReport report = pipeline::run_crowd(a.request);
  bars.done();
  if (a.json) {
    nlohmann::ordered_json j;
    j["out"] = report.cache_path;
    j["sidecar"] = report.sidecar_path;
    j["agents"] = report.agents;
    j["steps"] = report.steps;
    j["frames"] = report.frames;
    j["step_s"] = report.step;
    j["arrived"] = report.arrived;
    j["all_arrived_s"] = report.seconds_all_arrived;
    j["max_overlap_fraction"] = report.max_overlap;
    j["ms_per_step"] = 1e3 * report.seconds_per_step;
    j["navigation_cells"] = report.cells;
    j["navigation_open_cells"] = report.open_cells;
    std::cout << j.dump(2) << '\n';
  } else if (!global.quiet) {
    std::cout << "kinema crowd: ";
    print_crowd(report, "  ", std::cout);
  }
  return kExitOk;
}

}  // namespace

void print_crowd(const pipeline::CrowdReport& report, const std::string& indent,
                 std::ostream& out) {
  out << report.agents << " agents, " << report.steps << " steps of " << format_number(report.step)
      << " s (" << format_number(1e3 * report.seconds_per_step, 3) << " ms a step)\n"
      << indent << "arrived " << report.arrived << " of " << report.agents;
  if (report.seconds_all_arrived >= 0)
    out << " (all by " << format_number(report.seconds_all_arrived) << " s)";
  out << ", deepest overlap " << format_number(100 * report.max_overlap, 3) << " % of a radius\n";
  if (report.cells > 0)
    out << indent << "navigation grid: " << report.open_cells << " of " << report.cells
        << " cells open\n";
  out << indent << report.cache_path << " (" << report.frames << " frames), " << report.sidecar_path
      << '\n';
}

VerbRun register_crowd(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<CrowdArgs>();
  pipeline::CrowdRequest& r = args->request;
  CLI::App* crowd = app.add_subcommand(
      "crowd",
      "Walk a crowd scene (agents, goals, obstacles, a ground) with A* paths and ORCA avoidance, "
      "and write it as a PC2 point cache that kinema render draws");
  crowd->add_option("scene", r.scene, "The crowd scene (.json; docs/crowds.md)")
      ->required()
      ->check(CLI::ExistingFile);
  crowd->add_option("-o,--out", r.out, "The point cache to write (.pc2; its .kpa beside it)")
      ->required();
  crowd->add_option("--seconds", r.seconds, "Seconds to walk (default: the scene's)")
      ->check(CLI::Range(0.001, 36000.0));
  crowd->add_option("--threads", r.threads, "Threads (0: all cores; same result)")
      ->capture_default_str();
  crowd->add_flag("--json", args->json, "Print the summary as one JSON object");
  return [args, &global]() { return run_crowd(*args, global); };
}

}  // namespace kinema::cli
