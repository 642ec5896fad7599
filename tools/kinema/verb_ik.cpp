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
#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/io/terrain.h"
#include "kinema/math/scalar.h"
#include "kinema/retarget/humanoid.h"
#include "skate_report.h"

namespace kinema::cli {

namespace {

namespace fs = std::filesystem;

struct IkArgs {
  pipeline::FeetRequest request;
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

void print_feet(const pipeline::FeetRequest& rq, const pipeline::FeetResult& result, bool json,
                const std::string& indent, std::ostream& out) {
  const ClipFootPlacementReport& r = result.report;
  const std::vector<std::string>& leg_names = result.legs;
  if (json) {
    nlohmann::json j = {
        {"input", rq.in},
        {"output", rq.out},
        {"clip", result.clip},
        {"ground",
         {{"file", rq.ground},
          {"description", result.ground},
          {"min", {result.ground_lo.x, result.ground_lo.y, result.ground_lo.z}},
          {"max", {result.ground_hi.x, result.ground_hi.y, result.ground_hi.z}}}},
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
        {"foot_skate",
         {{"before", skate_json(result.skate_before)}, {"after", skate_json(result.skate_after)}}},
    };
    out << j.dump(2) << '\n';
    return;
  }
  const Vec3& lo = result.ground_lo;
  const Vec3& hi = result.ground_hi;
  out << indent << "ground " << rq.ground << ": " << result.ground << ", x "
      << format_number(lo.x, 2) << "…" << format_number(hi.x, 2) << ", y " << format_number(lo.y, 2)
      << "…" << format_number(hi.y, 2) << ", z " << format_number(lo.z, 2) << "…"
      << format_number(hi.z, 2) << " m\n";
  out << indent << "clip \"" << result.clip << "\": " << r.frames << " frames at "
      << format_number(r.fps, 3) << " fps; floor " << format_number(r.floor_height, 3) << " m"
      << (rq.options.floor_height ? "" : " (lowest foot joint)") << "; ankle heights "
      << format_number(r.ankle_heights[0], 3) << ", " << format_number(r.ankle_heights[1], 3)
      << " m; planted frames " << r.after.legs[0].planted_frames << " left, "
      << r.after.legs[1].planted_frames << " right; pelvis lowered by up to "
      << format_number(-r.pelvis_offset_min, 3) << " m";
  if (rq.options.follow_ground)
    out << "; body carried " << format_number(r.follow_min, 3) << "…"
        << format_number(r.follow_max, 3) << " m with the ground";
  out << '\n';
  out << indent << "on its own floor: " << metrics_line(r.on_floor.overall, false) << '\n';
  out << indent << "before: " << metrics_line(r.before.overall, false) << '\n';
  for (size_t i = 0; i < leg_names.size(); ++i)
    out << indent << "  " << leg_names[i] << ": " << metrics_line(r.before.legs[i], false) << '\n';
  out << indent << "after:  " << metrics_line(r.after.overall, true) << '\n';
  for (size_t i = 0; i < leg_names.size(); ++i)
    out << indent << "  " << leg_names[i] << ": " << metrics_line(r.after.legs[i], true) << '\n';
  if (result.skate_before && result.skate_after)
    out << indent << "before: " << skate_text(*result.skate_before) << '\n'
        << indent << "after:  " << skate_text(*result.skate_after) << '\n';
  out << indent << "wrote " << rq.out << '\n';
}

void note_feet_below_ground(const pipeline::FeetRequest& rq, const pipeline::FeetResult& result) {
  const ClipFootPlacementReport& r = result.report;
  if (!rq.options.follow_ground && r.after.overall.penetration_mean > 0.01 &&
      result.ground_hi.y - r.floor_height > 0.3)
    std::fprintf(stderr,
                 "kinema: note: planted feet are still below the ground (mean %s m); the ground "
                 "rises %s m above the floor, beyond what lowering the pelvis can reach — "
                 "--follow-ground carries the body up with it\n",
                 format_number(r.after.overall.penetration_mean, 3).c_str(),
                 format_number(result.ground_hi.y - r.floor_height, 2).c_str());
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
  pipeline::FeetRequest& rq = args->request;
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
    pipeline::FeetRequest& r = args->request;
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
    r.load = global.load;
    JobProgress progress(global.progress_enabled());
    const pipeline::FeetResult result = pipeline::place_feet(r, progress.callback());
    progress.done();
    if (*json || !global.quiet) print_feet(r, result, *json, "", std::cout);
    if (!global.quiet) note_feet_below_ground(r, result);
    return kExitOk;
  };
}

}  // namespace kinema::cli
