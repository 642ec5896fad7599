// tools/kinema/verb_matchmove.cpp — `kinema track PLATES -o TRACKS.json [--preview PNG]
// [--max-corners N] [--min-distance PX] [--window PX] [--linear] [--json]` and `kinema solve
// TRACKS.json -o CAMERA.json [--focal-guess PX] [--fixed-focal] [--no-distortion] [--tangential]
// [--json]`.
//
// Run pipeline::run_track and pipeline::run_solve (kinema/pipeline/matchmove.h,
// docs/composite.md): corners followed through a plate sequence (pyramidal Lucas–Kanade with a
// forward–backward check), then every frame's camera, one focal length and lens, and the tracks'
// 3D points by bundle adjustment, with the reprojection error that says how good the solve is.
//
// Exit codes: 1 for a command line that makes no sense (plates that are not a sequence, outputs
// of the wrong kind or over an input); 2 for bad images or a bad tracks file (file, place and
// reason named), too few frames or tracks, or a shot without parallax.
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "kinema/pipeline/matchmove.h"

namespace kinema::cli {

namespace {

struct TrackArgs {
  pipeline::TrackRequest request;
  bool json = false;
};

int run_track(TrackArgs& a, const GlobalOptions& global) {
  JobProgress bars(global.progress_enabled());
  a.request.progress = bars.callback();
  const pipeline::TrackReport report = pipeline::run_track(a.request);
  bars.done();
  if (a.json) {
    nlohmann::ordered_json j;
    j["out"] = report.written;
    j["frames"] = report.frames;
    j["first_frame"] = report.first_frame;
    j["width"] = report.width;
    j["height"] = report.height;
    j["tracks"] = report.tracks;
    j["mean_track_length"] = report.mean_length;
    j["ms"] = 1e3 * report.seconds;
    std::cout << j.dump(2) << '\n';
  } else if (!global.quiet) {
    std::cout << "kinema track: " << report.frames << " frames (" << report.width << "×"
              << report.height << ", from frame " << report.first_frame << "), " << report.tracks
              << " tracks living " << format_number(report.mean_length, 3) << " frames on average ("
              << format_number(1e3 * report.seconds) << " ms)\n";
    for (const std::string& path : report.written) std::cout << "  " << path << '\n';
  }
  return kExitOk;
}

struct SolveArgs {
  pipeline::SolveRequest request;
  bool fixed_focal = false, no_distortion = false, json = false;
};

int run_solve(SolveArgs& a, const GlobalOptions& global) {
  a.request.options.solve_focal = !a.fixed_focal;
  a.request.options.solve_radial = !a.no_distortion;
  const pipeline::SolveReport report = pipeline::run_solve(a.request);
  const matchmove::CameraSolve& s = report.solve;
  int solved = 0;
  for (const matchmove::SolvedCamera& c : s.cameras) solved += c.solved;
  if (a.json) {
    nlohmann::ordered_json j;
    j["out"] = report.written;
    j["frames"] = s.cameras.size();
    j["solved_frames"] = solved;
    j["focal_px"] = s.intrinsics.fx;
    j["k1"] = s.lens.k1;
    j["k2"] = s.lens.k2;
    j["points"] = s.points.size();
    j["observations"] = s.observations;
    j["mean_error_px"] = s.mean_error;
    j["rms_error_px"] = s.rms_error;
    j["initial_frames"] = {s.initial_frames[0], s.initial_frames[1]};
    j["seconds"] = s.seconds;
    std::cout << j.dump(2) << '\n';
  } else if (!global.quiet) {
    std::cout << "kinema solve: " << solved << " of " << s.cameras.size()
              << " frames solved from the pair " << s.initial_frames[0] << "–"
              << s.initial_frames[1] << ", focal " << format_number(s.intrinsics.fx) << " px, k1 "
              << format_number(s.lens.k1, 4) << ", k2 " << format_number(s.lens.k2, 4) << '\n'
              << "  " << s.points.size() << " points, " << s.observations
              << " observations: reprojection error mean " << format_number(s.mean_error, 3)
              << " px, RMS " << format_number(s.rms_error, 3) << " px ("
              << format_number(s.seconds, 3) << " s)\n";
    for (const std::string& path : report.written) std::cout << "  " << path << '\n';
  }
  return kExitOk;
}

}  // namespace

VerbRun register_track(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<TrackArgs>();
  pipeline::TrackRequest& r = args->request;
  CLI::App* cmd = app.add_subcommand(
      "track",
      "Follow corners through a plate sequence (pyramidal Lucas–Kanade, forward–backward "
      "checked) into a tracks file for `kinema solve`");
  cmd->add_option("plates", r.plates, "The plate sequence: plate.####.exr (or .png, %04d)")
      ->required();
  cmd->add_option("-o,--out", r.out, "The tracks to write (.json)")->required();
  cmd->add_option("--preview", r.preview, "Also draw every track's path on the last frame (.png)");
  cmd->add_option("--max-corners", r.options.max_corners, "Corners tracked at once")
      ->capture_default_str();
  cmd->add_option("--min-distance", r.options.min_distance, "Pixels between corners")
      ->capture_default_str();
  cmd->add_option("--window", r.options.window_size, "Lucas–Kanade window, pixels (odd)")
      ->capture_default_str();
  cmd->add_flag("--linear", r.linear, "PNG plates hold linear values (no sRGB decode)");
  cmd->add_flag("--json", args->json, "Print the summary as one JSON object");
  return [args, &global]() { return run_track(*args, global); };
}

VerbRun register_solve(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<SolveArgs>();
  pipeline::SolveRequest& r = args->request;
  CLI::App* cmd = app.add_subcommand(
      "solve",
      "Solve the camera from a tracks file: every frame's position and orientation, the "
      "focal length and lens distortion, and the tracks' 3D points (bundle adjustment)");
  cmd->add_option("tracks", r.tracks, "The tracks (.json, from `kinema track`)")->required();
  cmd->add_option("-o,--out", r.out, "The solve to write (.json)")->required();
  cmd->add_option("--focal-guess", r.options.initial_focal,
                  "Focal length to start from, px (default 1.2 × the plate's width)");
  cmd->add_flag("--fixed-focal", args->fixed_focal, "Keep the focal guess instead of solving it");
  cmd->add_flag("--no-distortion", args->no_distortion, "Solve no lens distortion (k1 = k2 = 0)");
  cmd->add_flag("--tangential", r.options.solve_tangential, "Also solve p1, p2");
  cmd->add_flag("--json", args->json, "Print the summary as one JSON object");
  return [args, &global]() { return run_solve(*args, global); };
}

}  // namespace kinema::cli
