// tools/kinema/verb_ik.cpp — `kinema ik feet IN --ground TERRAIN.(png|obj) -o OUT [options]`.
//
// Foot placement (docs/ik.md) over a whole clip: the clip's humanoid legs are found by name
// (humanoid_of), the clip is played frame by frame on the ground read from a height-map PNG or an
// OBJ mesh (kinema/io/terrain.h), and OUT (.glb .gltf .vrm .bvh, atomic; IN is only read) gets the
// clip with the pelvis lowered and the legs solved. Before/after metrics are printed per foot and
// overall: penetration (max, and mean on planted frames), float on planted frames, the largest
// knee-angle jump, reach failures — with --json as one JSON object on stdout.
//
// Exit codes: 1 for a command line that makes no sense (missing IN, --ground or -o, OUT equal to
// an input or a folder, a bad option value); 2 for bad input (an unreadable or malformed ground or
// clip, a clip without humanoid legs).
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "kinema/character/humanoid.h"
#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/io/terrain.h"
#include "kinema/math/scalar.h"

namespace kinema::cli {

namespace {

namespace fs = std::filesystem;

struct IkArgs {
  IkFeetRequest request;
  std::string floor = "auto", ankle = "auto";
  std::vector<double> origin, offset;
  std::vector<CLI::Option*> png_only, obj_only;  ///< options that make sense for one kind
};

/// "auto" → nullopt, else a finite number (UsageError naming the option otherwise).
std::optional<double> auto_or_number(const std::string& text, const std::string& option) {
  if (text == "auto") return std::nullopt;
  try {
    size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size() && std::isfinite(v)) return v;
  } catch (const std::exception&) {
  }
  throw UsageError(option + " must be a number of metres or 'auto', not '" + text + "'");
}

std::string metrics_line(const FootContactMetrics& m, bool with_reach) {
  std::string s = "penetration max " + format_number(m.penetration_max, 3) + " m, mean " +
                  format_number(m.penetration_mean, 3) + " m; float max " +
                  format_number(m.float_max, 3) + " m, mean " + format_number(m.float_mean, 3) +
                  " m; knee jump max " + format_number(m.knee_jump_max, 1) + "°";
  if (with_reach) s += "; reach failures " + std::to_string(m.reach_failures);
  return s;
}

nlohmann::json metrics_json(const FootContactMetrics& m) {
  return {{"penetration_max_m", m.penetration_max},
          {"penetration_mean_m", m.penetration_mean},
          {"float_max_m", m.float_max},
          {"float_mean_m", m.float_mean},
          {"knee_jump_max_deg", m.knee_jump_max},
          {"reach_failures", m.reach_failures},
          {"planted_frames", m.planted_frames},
          {"frames_on_ground", m.frames}};
}

nlohmann::json report_json(const FootContactReport& r, const std::vector<std::string>& names) {
  nlohmann::json legs = nlohmann::json::object();
  for (size_t i = 0; i < r.legs.size(); ++i) legs[names[i]] = metrics_json(r.legs[i]);
  return {{"overall", metrics_json(r.overall)}, {"legs", legs}};
}

}  // namespace

IkFeetResult run_ik_feet(const IkFeetRequest& rq, const GlobalOptions& global, bool json,
                         const std::string& indent) {
  std::error_code ec;
  if (rq.out.empty()) throw UsageError("ik feet needs an output file: -o OUT.glb|.gltf|.vrm|.bvh");
  if (rq.ground.empty()) throw UsageError("ik feet needs --ground TERRAIN.png|.obj");
  if (fs::is_directory(rq.out, ec))
    throw UsageError("OUT " + rq.out + " is a folder; give a file name such as " +
                     (fs::path(rq.out) / "out.glb").string());
  if (same_file(rq.in, rq.out))
    throw UsageError("OUT is the same file as IN (" + rq.out +
                     "); kinema never overwrites its input — choose another OUT");
  if (same_file(rq.ground, rq.out))
    throw UsageError("OUT is the ground file (" + rq.out + "); choose another OUT");
  const std::string ext = extension_of(rq.out);
  if (ext != "bvh" && ext != "glb" && ext != "gltf" && ext != "vrm")
    throw Error(rq.out, "",
                "cannot write '." + ext + "' files (ik feet writes .glb .gltf .vrm .bvh)");
  const std::string ground_ext = extension_of(rq.ground);
  if (ground_ext != "png" && ground_ext != "obj")
    throw UsageError("--ground " + rq.ground + ": give a .png height map or an .obj mesh");
  if (fs::is_directory(rq.ground, ec))
    throw Error(rq.ground, "", "is a folder; give a .png height map or an .obj mesh");

  // The ground first: it is the new input here, and the cheaper one to get wrong.
  const GroundFile ground = load_ground(rq.ground, rq.ground_options);
  Asset asset = load_input(rq.in, global.load);
  if (asset.clips.empty()) throw Error(rq.in, "", "has no animation to place on the ground");
  const int clip_index = rq.clip.empty() ? 0 : find_clip(asset, rq.clip, rq.in);

  const std::optional<Humanoid> humanoid = humanoid_of(asset);
  static const char* const kSides[2] = {"left", "right"};
  FootPlacementRig rig;
  std::vector<std::string> leg_names;
  if (humanoid) {
    rig.pelvis = humanoid->find("hips");
    for (const char* side : kSides) {
      const std::string s = side;
      FootPlacementJoints j{humanoid->find(s + "UpperLeg"), humanoid->find(s + "LowerLeg"),
                            humanoid->find(s + "Foot")};
      if (j.hip < 0 || j.knee < 0 || j.ankle < 0) continue;
      rig.legs.push_back(j);
      rig.toes.push_back(humanoid->find(s + "Toes"));
      leg_names.push_back(s);
    }
  }
  if (!humanoid || rig.pelvis < 0 || rig.legs.size() != 2)
    throw Error(rq.in, "",
                "cannot find the legs: ik feet needs a humanoid (hips, upper leg, lower leg and "
                "foot on both sides), from a VRM bone map or recognizable joint names (run "
                "kinema info --tree on it)");

  const Clip& clip = asset.clips[static_cast<size_t>(clip_index)];
  ClipFootPlacementOptions options = rq.options;
  if (!(options.fps > 0)) options.fps = frame_rate_of(clip) > 0 ? frame_rate_of(clip) : 30.0;
  if (options.ankle_heights.size() == 1) {
    const double all = options.ankle_heights[0];
    options.ankle_heights.assign(rig.legs.size(), all);
  }
  const int frames = static_cast<int>(std::llround(clip.duration * options.fps)) + 1;
  Progress progress("placing feet on " + fs::path(rq.ground).filename().string(), frames,
                    global.progress_enabled());
  options.progress = [&progress](int done, int) { progress.update(done); };
  IkFeetResult result;
  Clip placed =
      place_feet_on_ground(clip, asset.skeleton, rig, *ground.ground, options, &result.report);
  progress.done();
  placed.sample_rate = options.fps;

  Asset out = std::move(asset);
  out.clips.clear();
  out.clips.push_back(std::move(placed));
  if (ext == "vrm" && !out.humanoid) out.humanoid = humanoid;
  save_asset(out, rq.out);

  const ClipFootPlacementReport& r = result.report;
  if (json) {
    nlohmann::json j = {
        {"input", rq.in},
        {"output", rq.out},
        {"clip", out.clips[0].name},
        {"ground",
         {{"file", rq.ground},
          {"description", ground.description},
          {"min", {ground.lo.x, ground.lo.y, ground.lo.z}},
          {"max", {ground.hi.x, ground.hi.y, ground.hi.z}}}},
        {"frames", r.frames},
        {"fps", r.fps},
        {"floor_height_m", r.floor_height},
        {"ankle_heights_m", r.ankle_heights},
        {"pelvis_offset_min_m", r.pelvis_offset_min},
        {"follow_ground", rq.options.follow_ground},
        {"follow_range_m", {r.follow_min, r.follow_max}},
        {"on_floor", report_json(r.on_floor, leg_names)},
        {"before", report_json(r.before, leg_names)},
        {"after", report_json(r.after, leg_names)},
    };
    std::cout << j.dump(2) << '\n';
  } else if (!global.quiet) {
    std::cout << indent << "ground " << rq.ground << ": " << ground.description << ", x "
              << format_number(ground.lo.x, 2) << "…" << format_number(ground.hi.x, 2) << ", y "
              << format_number(ground.lo.y, 2) << "…" << format_number(ground.hi.y, 2) << ", z "
              << format_number(ground.lo.z, 2) << "…" << format_number(ground.hi.z, 2) << " m\n";
    std::cout << indent << "clip \"" << out.clips[0].name << "\": " << r.frames << " frames at "
              << format_number(r.fps, 3) << " fps; floor " << format_number(r.floor_height, 3)
              << " m" << (rq.options.floor_height ? "" : " (lowest foot joint)")
              << "; ankle heights " << format_number(r.ankle_heights[0], 3) << ", "
              << format_number(r.ankle_heights[1], 3) << " m; planted frames "
              << r.after.legs[0].planted_frames << " left, " << r.after.legs[1].planted_frames
              << " right; pelvis lowered by up to " << format_number(-r.pelvis_offset_min, 3)
              << " m";
    if (rq.options.follow_ground)
      std::cout << "; body carried " << format_number(r.follow_min, 3) << "…"
                << format_number(r.follow_max, 3) << " m with the ground";
    std::cout << '\n';
    std::cout << indent << "on its own floor: " << metrics_line(r.on_floor.overall, false) << '\n';
    std::cout << indent << "before: " << metrics_line(r.before.overall, false) << '\n';
    for (size_t i = 0; i < leg_names.size(); ++i)
      std::cout << indent << "  " << leg_names[i] << ": " << metrics_line(r.before.legs[i], false)
                << '\n';
    std::cout << indent << "after:  " << metrics_line(r.after.overall, true) << '\n';
    for (size_t i = 0; i < leg_names.size(); ++i)
      std::cout << indent << "  " << leg_names[i] << ": " << metrics_line(r.after.legs[i], true)
                << '\n';
    std::cout << indent << "wrote " << rq.out << '\n';
  }
  if (!global.quiet && !rq.options.follow_ground && r.after.overall.penetration_mean > 0.01 &&
      ground.hi.y - r.floor_height > 0.3)
    std::fprintf(stderr,
                 "kinema: note: planted feet are still below the ground (mean %s m); the ground "
                 "rises %s m above the floor, beyond what lowering the pelvis can reach — "
                 "--follow-ground carries the body up with it\n",
                 format_number(r.after.overall.penetration_mean, 3).c_str(),
                 format_number(ground.hi.y - r.floor_height, 2).c_str());
  return result;
}

VerbRun register_ik(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<IkArgs>();
  auto json = std::make_shared<bool>(false);
  CLI::App* ik = app.add_subcommand("ik", "Inverse kinematics on clips (see docs/ik.md)");
  ik->require_subcommand(1);
  CLI::App* feet = ik->add_subcommand(
      "feet",
      "Foot placement over a clip on uneven ground (a .png height map or an .obj mesh): lowers "
      "the pelvis, solves the legs, tilts the feet, and prints before/after contact metrics");
  IkFeetRequest& rq = args->request;
  feet->add_option("IN", rq.in, "The clip to read (.bvh .gltf .glb .vrm .fbx .dae; never modified)")
      ->required();
  feet->add_option("--ground", rq.ground,
                   "The ground: a grayscale .png height map or an .obj mesh, in the clip's "
                   "space (metres, +Y up)")
      ->required();
  feet->add_option("-o,--out", rq.out, "The file to write: .glb .gltf .vrm or .bvh")->required();
  feet->add_option("--clip", rq.clip, "The clip, by name or index (default: the first)");
  HeightMapOptions& hm = rq.ground_options.height_map;
  args->png_only.push_back(feet->add_option("--cell-size", hm.cell_size,
                                            "Height map: metres between neighbouring pixels")
                               ->capture_default_str()
                               ->check(CLI::Range(1e-6, 1e6)));
  args->png_only.push_back(
      feet->add_option("--height-range", hm.height_range,
                       "Height map: metres from black to white (negative: white is low)")
          ->capture_default_str());
  args->png_only.push_back(
      feet->add_option("--base-height", hm.base_height, "Height map: height of black, metres")
          ->capture_default_str());
  args->png_only.push_back(
      feet->add_option(
              "--origin", args->origin,
              "Height map: X,Z of pixel (0, 0) in metres (default: the image is centred on "
              "the origin; columns run along +X, rows along +Z)")
          ->delimiter(',')
          ->expected(2));
  args->obj_only.push_back(feet->add_option("--ground-scale", rq.ground_options.obj_scale,
                                            "OBJ mesh: metres per file unit")
                               ->capture_default_str()
                               ->check(CLI::Range(1e-9, 1e9)));
  feet->add_option("--ground-offset", args->offset, "X,Y,Z metres added to the ground")
      ->delimiter(',')
      ->expected(3);
  feet->add_option("--floor-height", args->floor,
                   "Height of the floor the clip was captured on, metres, or auto (the lowest "
                   "height a foot joint reaches)")
      ->capture_default_str();
  feet->add_option("--ankle-height", args->ankle,
                   "Ankle height above the sole, metres, or auto (each ankle's lowest height above "
                   "the floor)")
      ->capture_default_str();
  FootPlacementSettings& s = rq.options.settings;
  feet->add_option("--half-life", s.foot_half_life,
                   "Seconds in which a foot covers half of a step up or down (0: no smoothing)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 10.0));
  feet->add_option("--pelvis-half-life", s.pelvis_half_life, "The same for the pelvis, seconds")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 10.0));
  auto max_tilt = std::make_shared<double>(40.0);
  feet->add_option("--max-tilt", *max_tilt,
                   "Largest foot tilt towards the ground normal, degrees (negative: no limit)")
      ->capture_default_str()
      ->check(CLI::Range(-1.0, 90.0));
  feet->add_option(
          "--fps", rq.options.fps,
          "Frames per second at which the clip is played and keyed (default: its own rate)")
      ->check(CLI::Range(1.0, 1000.0));
  feet->add_flag("--follow-ground", rq.options.follow_ground,
                 "Carry the whole body up and down with the ground under the pelvis (stairs, "
                 "slopes higher than a knee bend can reach); default: the pelvis is only lowered");
  feet->add_option("--follow-half-life", rq.options.follow_half_life,
                   "Smoothing of --follow-ground, seconds")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 10.0));
  feet->add_flag("--json", *json, "Print the metrics as one JSON object on stdout");
  return [args, json, max_tilt, feet, &global]() {
    if (!feet->parsed()) throw UsageError("ik needs a verb: kinema ik feet …");
    IkFeetRequest& r = args->request;
    const std::string kind = extension_of(r.ground);
    using Kind = std::pair<const std::vector<CLI::Option*>*, const char*>;
    for (const auto& [options, wanted] :
         {Kind{&args->png_only, "png"}, Kind{&args->obj_only, "obj"}})
      for (const CLI::Option* o : *options)
        if (o->count() > 0 && kind != wanted)
          throw UsageError(o->get_name() + " applies to ." + wanted + " grounds, and --ground " +
                           r.ground + " is not one");
    if (!args->origin.empty())
      r.ground_options.height_map.origin = std::array<double, 2>{args->origin[0], args->origin[1]};
    if (!args->offset.empty())
      r.ground_options.offset = {args->offset[0], args->offset[1], args->offset[2]};
    r.options.floor_height = auto_or_number(args->floor, "--floor-height");
    if (const auto a = auto_or_number(args->ankle, "--ankle-height")) {
      if (*a < 0) throw UsageError("--ankle-height must be ≥ 0");
      r.options.ankle_heights = {*a};
    }
    r.options.settings.max_tilt = *max_tilt < 0 ? -1.0 : radians(*max_tilt);
    run_ik_feet(r, global, *json, "");
    return kExitOk;
  };
}

}  // namespace kinema::cli
