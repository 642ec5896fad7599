// tools/kinema/verb_crowd.cpp — `kinema crowd SCENE.json -o OUT.pc2|OUT.mp4|OUT.png|OUT.glb
// [--seconds S] [--threads N] [--size WxH] [--fps F] [--contact-sheet N] [--lod-colours] [--json]`.
//
// Parses the options and runs pipeline::run_crowd (kinema/pipeline/crowd.h, docs/crowds.md): the
// scene's agents walk to their goals along A* paths, avoiding each other (ORCA), and are written as
// a PC2 point cache with its particle sidecar (.kpa) — `kinema render OUT.pc2` draws them — or,
// with the scene's characters, drawn walking at their LOD tiers into an .mp4 or a .png contact
// sheet, or as a glTF scene of keyed pawns. Prints how many arrived, the deepest overlap and the
// time a step (and a frame) took.
//
// Exit codes: 1 for a command line that makes no sense (OUT not .pc2/.mp4/.png, OUT the scene, a
// size out of range); 2 for a scene that cannot be read or walked (malformed JSON, a value out of
// range, a goal off the navigation grid, a picture without characters), named by the scene's file
// and JSON pointer; nothing is written then.
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
  std::string size = "960x540";
  bool json = false;
};

int run_crowd(CrowdArgs& a, const GlobalOptions& global) {
  parse_size(a.size, a.request.width, a.request.height);
  JobProgress bars(global.progress_enabled());
  a.request.progress = bars.callback();
  const pipeline::CrowdReport report = pipeline::run_crowd(a.request);
  bars.done();
  if (a.json) {
    nlohmann::ordered_json j;
    if (!report.layout_path.empty()) {
      j["out"] = report.layout_path;
      j["frames_keyed"] = report.frames_keyed;
      j["fps"] = report.fps;
    } else if (!report.picture_path.empty()) {
      j["out"] = report.picture_path;
      j["gl_renderer"] = report.gl_renderer;
      j["frames_drawn"] = report.frames_drawn;
      j["fps"] = report.fps;
      j["ms_per_draw"] = 1e3 * report.seconds_per_draw;
      j["ms_per_animate"] = 1e3 * report.seconds_per_animate;
      j["bake_s"] = report.bake_seconds;
      j["vat_bytes"] = report.vat_bytes;
      j["impostor_bytes"] = report.impostor_bytes;
      j["mean_agents_per_tier"] = {{"near", report.mean_tier_agents[0]},
                                   {"mid", report.mean_tier_agents[1]},
                                   {"far", report.mean_tier_agents[2]},
                                   {"farthest", report.mean_tier_agents[3]}};
      j["joint_updates_per_s"] = report.joint_updates_per_second;
    } else {
      j["out"] = report.cache_path;
      j["sidecar"] = report.sidecar_path;
    }
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
  if (!report.layout_path.empty()) {
    out << indent << report.layout_path << ": " << report.agents << " agents as pawns keyed "
        << report.frames_keyed << " times at " << format_number(report.fps, 2)
        << " fps, with the obstacles, the goals and the ground\n";
    return;
  }
  if (!report.picture_path.empty()) {
    const auto& t = report.mean_tier_agents;
    out << indent << "characters (" << report.joints << " joints) at their LOD tiers, mean agents "
        << "near " << format_number(t[0], 1) << ", mid " << format_number(t[1], 1) << ", far (VAT) "
        << format_number(t[2], 1) << ", farthest (impostor) " << format_number(t[3], 1) << "; "
        << format_number(report.joint_updates_per_second / 1e3, 1) << "k joint updates a second\n"
        << indent << "bakes " << format_number(report.bake_seconds, 2) << " s (VATs "
        << format_bytes(report.vat_bytes) << ", impostors " << format_bytes(report.impostor_bytes)
        << "); a frame: animation " << format_number(1e3 * report.seconds_per_animate, 2)
        << " ms, drawing " << format_number(1e3 * report.seconds_per_draw, 1) << " ms ("
        << report.gl_renderer << ")\n"
        << indent << report.picture_path << " (" << report.frames_drawn << " frames drawn at "
        << format_number(report.fps, 2) << " fps)\n";
    return;
  }
  out << indent << report.cache_path << " (" << report.frames << " frames), " << report.sidecar_path
      << '\n';
}

VerbRun register_crowd(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<CrowdArgs>();
  pipeline::CrowdRequest& r = args->request;
  CLI::App* crowd = app.add_subcommand(
      "crowd",
      "Walk a crowd scene (agents, goals, obstacles, a ground) with A* paths and ORCA avoidance, "
      "and write it as a PC2 point cache that kinema render draws, or draw its characters at "
      "their LOD tiers into an .mp4 or a .png contact sheet");
  crowd->add_option("scene", r.scene, "The crowd scene (.json; docs/crowds.md)")
      ->required()
      ->check(CLI::ExistingFile);
  crowd
      ->add_option("-o,--out", r.out,
                   "What to write: a point cache (.pc2; its .kpa beside it), or the scene's "
                   "characters drawn: .mp4 (every frame; needs ffmpeg) or .png (a contact sheet)")
      ->required();
  crowd->add_option("--seconds", r.seconds, "Seconds to walk (default: the scene's)")
      ->check(CLI::Range(0.001, 36000.0));
  crowd->add_option("--threads", r.threads, "Threads (0: all cores; same result)")
      ->capture_default_str();
  crowd->add_option("--size", args->size, "Frame (tile) size of a picture, WxH")
      ->capture_default_str();
  crowd->add_option("--fps", r.fps, "Frames a second drawn and animated, or keyed in a glTF scene")
      ->capture_default_str();
  crowd->add_option("--contact-sheet", r.sheet_frames, "Tiles of a .png contact sheet")
      ->capture_default_str();
  crowd->add_flag("--lod-colours", r.lod_colours,
                  "Colour the characters by LOD tier: near green, mid yellow, far (VAT) orange, "
                  "farthest (impostor) red");
  crowd->add_flag("--json", args->json, "Print the summary as one JSON object");
  return [args, &global]() { return run_crowd(*args, global); };
}

}  // namespace kinema::cli
