// tools/kinema/verb_play.cpp — `kinema play GRAPH.json [--param NAME=SPEC]… [--seconds S]
// [--fps N] [--root-motion bake|in-place] -o OUT`.
//
// Plays an animation graph (docs/graph.md) over time with parameter curves and writes the
// result as one clip through save_asset (.glb .gltf .vrm .bvh; atomic: a failure leaves no OUT
// and the graph and its clips are only read). `kinema demo` runs the same code (run_play).
//
// Exit codes: 1 for a command line that makes no sense (a missing -o, OUT equal to an input,
// OUT a folder, an unknown flag); 2 for a bad graph (file, JSON pointer, reason) and for a
// --param spec that does not parse or does not fit the graph ("--param", NAME item N, reason):
// the spec is data read by the library's curve parser, reported like any other parse error.
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli.h"
#include "kinema/blend/root_motion.h"
#include "kinema/character/humanoid.h"
#include "kinema/core/error.h"
#include "kinema/graph/graph_play.h"
#include "kinema/io/asset_file.h"
#include "kinema/io/graph_file.h"
#include "kinema/math/scalar.h"

namespace kinema::cli {

namespace {

std::string join(const std::vector<std::string>& items) {
  std::string s;
  for (const std::string& i : items) s += (s.empty() ? "" : ", ") + i;
  return s.empty() ? "none" : s;
}

}  // namespace

// The foot-sliding metric of the result (blend/root_motion.h): how far planted feet drift in the
// world, which is what a bad blend or root motion shows as skating. Empty when no humanoid feet
// are found.
static std::string foot_sliding_summary(const Asset& asset, const Clip& clip, double fps) {
  const std::optional<Humanoid> humanoid = humanoid_of(asset);
  if (!humanoid) return {};
  const int feet[] = {humanoid->find("leftFoot"), humanoid->find("rightFoot")};
  if (feet[0] < 0 || feet[1] < 0 || !(clip.duration > 0)) return {};
  const std::vector<Vec3> positions = foot_world_positions(clip, asset.skeleton, feet, fps);
  const double dt = clip.duration / (sampled_frame_count(clip, fps) - 1);
  const FootSlidingReport report = measure_foot_sliding(positions, 2, dt);
  return "foot sliding while planted: mean " + format_number(report.total.mean_speed, 3) +
         " m/s, max " + format_number(report.total.max_speed, 3) + " m/s";
}

void run_play(const PlayRequest& request, const GlobalOptions& global) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (request.out.empty())
    throw UsageError("play needs an output file: -o OUT.glb|.gltf|.vrm|.bvh");
  if (fs::is_directory(request.out, ec))
    throw UsageError("OUT " + request.out + " is a folder; give a file name such as " +
                     (fs::path(request.out) / "out.glb").string());
  if (same_file(request.graph, request.out))
    throw UsageError("OUT is the graph file (" + request.out + "); choose another OUT");
  const std::string ext = extension_of(request.out);
  if (ext != "bvh" && ext != "glb" && ext != "gltf" && ext != "vrm")
    throw Error(request.out, "",
                "cannot write '." + ext + "' files (play writes .glb .gltf .vrm .bvh)");

  PlayOptions options;
  options.seconds = request.seconds;
  options.fps = request.fps;
  options.root_motion = request.in_place ? RootMotionOutput::InPlace : RootMotionOutput::Bake;
  for (const std::string& spec : request.params) options.params.push_back(parse_param_curve(spec));

  std::error_code dir_ec;
  if (fs::is_directory(request.graph, dir_ec))
    throw Error(request.graph, "", "is a folder; give a graph .json file");
  const BuiltGraph built = load_anim_graph(request.graph, global.load);
  for (const GraphClipSource& clip : built.clips)
    if (same_file(clip.path, request.out))
      throw UsageError("OUT is a clip file of the graph (" + request.out + "); choose another OUT");

  Progress progress("playing " + fs::path(request.graph).filename().string(),
                    std::lround(request.seconds * request.fps) + 1, global.progress_enabled());
  options.progress = [&progress](int done, int) { progress.update(done); };
  PlayReport report;
  Asset result = play_graph(built, options, &report);
  progress.done();
  // A VRM needs a humanoid map: guess it from joint names when the clips' file has none.
  if (ext == "vrm" && !result.humanoid) result.humanoid = humanoid_of(result);
  save_asset(result, request.out);

  if (!global.quiet) {
    const Clip& clip = result.clips[0];
    std::cout << "wrote " << request.out << ": " << report.frames << " frames, "
              << format_number(clip.duration, 3) << " s at " << format_number(request.fps, 3)
              << " fps; states visited: " << join(report.states_visited)
              << "; transitions taken: " << report.transitions_taken;
    if (built.graph.root_motion().enabled) {
      if (request.in_place) {
        std::cout << "; root motion: in place";
      } else {
        const RootDelta& p = report.final_placement;
        std::cout << "; root motion baked: ended at (" << format_number(p.translation.x, 2) << ", "
                  << format_number(p.translation.z, 2) << ") m, heading "
                  << format_number(degrees(p.yaw), 1) << "°";
      }
    }
    const std::string sliding = foot_sliding_summary(result, clip, request.fps);
    if (!sliding.empty()) std::cout << "; " << sliding;
    std::cout << '\n';
  }
}

VerbRun register_play(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<PlayRequest>();
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
    args->in_place = *mode == "in-place";
    run_play(*args, global);
    return kExitOk;
  };
}

}  // namespace kinema::cli
