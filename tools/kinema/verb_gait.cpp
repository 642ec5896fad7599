// tools/kinema/verb_gait.cpp — `kinema gait CREATURE -o OUT [--ground TERRAIN.(png|obj)]
// [--path "x,z x,z …"] [--speed V] [--fps F] [--settle S] [--json]`.
//
// Parses the options and runs pipeline::run_gait (kinema/pipeline/gait.h, docs/procedural.md):
// a built-in creature (biped, quadruped, hexapod, spider) or a humanoid character file walks the
// path by a procedural gait — footsteps planned from its velocity, swing arcs over the ground, the
// body over its feet — and the walk is written as a clip (`kinema render OUT --with TERRAIN.obj`
// draws it). Prints the steps taken, how still the planted feet stayed and the least clearance.
//
// Exit codes: 1 for a command line that makes no sense (a bad OUT, a path that does not parse —
// the message points at the character —, a speed or rate out of range); 2 for bad input (an
// unreadable ground or character, a character without humanoid legs, a waypoint with no ground
// under it); nothing is written then.
#include <cmath>
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "kinema/pipeline/gait.h"

namespace kinema::cli {

namespace {

struct GaitArgs {
  pipeline::GaitRequest request;
  std::string path;
  bool json = false;
};

/// "x,z x,z …" (spaces or semicolons between points) → waypoints; a mistake names its column.
std::vector<Vec2> parse_path(const std::string& text) {
  std::vector<Vec2> points;
  std::size_t i = 0;
  const auto fail = [&](const std::string& why) {
    throw UsageError("--path \"" + text + "\": at character " + std::to_string(i + 1) + ": " + why);
  };
  const auto skip = [&](const char* set) {
    while (i < text.size() && std::string_view(set).find(text[i]) != std::string_view::npos) ++i;
  };
  const auto number = [&]() {
    const char* begin = text.c_str() + i;
    char* end = nullptr;
    const double v = std::strtod(begin, &end);
    if (end == begin) fail("expected a number");
    if (!std::isfinite(v)) fail("the number is not finite");
    i += static_cast<std::size_t>(end - begin);
    return v;
  };
  skip(" ;");
  while (i < text.size()) {
    const double x = number();
    skip(" ");
    if (i >= text.size() || text[i] != ',') fail("expected ',' between x and z");
    ++i;
    skip(" ");
    const double z = number();
    points.push_back({x, z});
    if (i < text.size() && text[i] != ' ' && text[i] != ';') fail("expected a space or ';'");
    skip(" ;");
  }
  if (points.size() < 2) throw UsageError("--path needs at least two points \"x,z x,z\"");
  return points;
}

int run_gait(GaitArgs& a, const GlobalOptions& global) {
  pipeline::GaitRequest& r = a.request;
  if (!a.path.empty()) r.path = parse_path(a.path);
  r.load = global.load;
  JobProgress bars(global.progress_enabled());
  r.progress = bars.callback();
  const pipeline::GaitReport report = pipeline::run_gait(r);
  bars.done();
  if (a.json) {
    nlohmann::ordered_json j;
    j["out"] = report.out;
    j["creature"] = report.creature;
    j["legs"] = report.legs;
    j["ground"] = report.ground;
    j["frames"] = report.frames;
    j["duration_s"] = report.duration;
    j["distance_m"] = report.distance;
    j["speed_m_per_s"] = report.speed;
    j["steps"] = report.steps;
    j["planted_slide_m"] = report.planted_slide;
    j["lowest_clearance_m"] = report.lowest_clearance;
    j["body_above_feet_m"] = {report.body_low, report.body_high};
    std::cout << j.dump(2) << '\n';
  } else if (!global.quiet) {
    std::cout << "kinema gait: ";
    print_gait(report, "  ", std::cout);
  }
  return kExitOk;
}

}  // namespace

void print_gait(const pipeline::GaitReport& report, const std::string& indent, std::ostream& out) {
  out << report.creature << " walked " << format_number(report.distance) << " m at "
      << format_number(report.speed, 3) << " m/s on " << report.ground << '\n'
      << indent << report.steps << " steps; planted feet moved at most "
      << format_number(1e3 * report.planted_slide, 3) << " mm a frame; soles kept "
      << format_number(1e3 * report.lowest_clearance, 3) << " mm or more above the ground\n"
      << indent << "body " << format_number(report.body_low, 3) << " … "
      << format_number(report.body_high, 3) << " m above its feet\n"
      << indent << report.out << " (" << report.frames << " frames, "
      << format_number(report.duration) << " s)\n";
}

VerbRun register_gait(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<GaitArgs>();
  pipeline::GaitRequest& r = args->request;
  CLI::App* gait = app.add_subcommand(
      "gait",
      "Walk a creature along a path by a procedural gait (footsteps from its velocity, swing arcs "
      "over the ground, the body over its feet) and write the walk as a clip");
  gait->add_option("CREATURE", r.creature,
                   "biped, quadruped, hexapod, spider, or a character file with a humanoid map")
      ->required();
  gait->add_option("-o,--out", r.out, "The clip to write (.glb .gltf .vrm .bvh)")->required();
  gait->add_option(
      "--ground", r.ground,
      "Ground to walk on: a .png height map or an .obj mesh (default: the plane y = 0)");
  gait->add_option("--path", args->path,
                   "Waypoints \"x,z x,z …\" in metres, the first the start (default: 4 m along +Z "
                   "from (0, -2.5), up the demo stairs)");
  gait->add_option("--speed", r.speed, "m/s (0: the creature's own pace)")->capture_default_str();
  gait->add_option("--fps", r.fps, "Frames per second of the clip")->capture_default_str();
  gait->add_option("--settle", r.settle, "Seconds to stand at the end")->capture_default_str();
  gait->add_option("--cell-size", r.ground_options.height_map.cell_size,
                   "Height map: metres between pixels")
      ->capture_default_str();
  gait->add_option("--height-range", r.ground_options.height_map.height_range,
                   "Height map: metres from black to white")
      ->capture_default_str();
  gait->add_flag("--json", args->json, "Print the summary as one JSON object");
  return [args, &global]() { return run_gait(*args, global); };
}

}  // namespace kinema::cli
