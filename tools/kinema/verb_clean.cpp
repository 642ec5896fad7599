// tools/kinema/verb_clean.cpp — `kinema clean IN --character AVATAR [--clip C]
// [--visibility V.json] [--camera X,Y,Z] -o OUT [--report R.json] [--preview P.png]
// [--plot D.png] [--margin M] [--keep N] [--no-couple] [--finger-limit M] [--smooth N]
// [--transition W]
// [--threads N]`.
//
// Parses the options and runs pipeline::clean_file (kinema/pipeline/clean.h), then prints what
// was written and a before/after table per arm.
#include <cmath>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include <CLI/CLI.hpp>

#include "cli.h"
#include "kinema/pipeline/clean.h"

namespace kinema::cli {
namespace {

struct CleanArgs {
  pipeline::CleanRequest request;
  std::string camera;
  bool no_couple = false, no_fingers = false, no_accel_limit = false;
  double accel_allowance_mm = ArmClearanceOptions{}.acceleration_allowance_m * 1000;
};

/// "X,Y,Z" → a point (metres); UsageError otherwise.
Vec3 parse_camera(const std::string& text) {
  std::istringstream in(text);
  double v[3];
  char comma = 0;
  bool ok = bool(in >> v[0] >> comma) && comma == ',' && bool(in >> v[1] >> comma) &&
            comma == ',' && bool(in >> v[2]);
  ok = ok && (in >> std::ws).eof() && std::isfinite(v[0]) && std::isfinite(v[1]) &&
       std::isfinite(v[2]);
  if (!ok)
    throw UsageError("clean --camera: '" + text +
                     "' is not X,Y,Z (three numbers in metres, e.g. 0,1.5,3)");
  return {v[0], v[1], v[2]};
}

/// Characters `text` takes on a terminal: UTF-8 code points ("→" and "²" are one each).
size_t columns(const std::string& text) {
  size_t n = 0;
  for (unsigned char c : text) n += (c & 0xC0) != 0x80;
  return n;
}

/// Spaces that pad `text` to `width` columns (at least one).
std::string pad(const std::string& text, size_t width) {
  return std::string(columns(text) < width ? width - columns(text) : 1, ' ');
}

/// One row of the table: the label, then the left and the right arm.
void row(std::ostream& out, const std::string& label, const std::string& left,
         const std::string& right) {
  out << "  " << label << pad(label, 30) << left << pad(left, 24) << right << '\n';
}

std::string arrow(const std::string& a, const std::string& b) { return a + " → " + b; }

void print_arms(const ArmClearanceResult& c, std::ostream& out) {
  const ArmClearanceMetrics &l = c.arms[0], &r = c.arms[1];
  const auto both = [&](const std::string& label, auto&& text) {
    row(out, label, text(l), text(r));
  };
  row(out, "", "left arm", "right arm");
  both("frames inside", [](const ArmClearanceMetrics& m) {
    return arrow(std::to_string(m.frames_inside_before), std::to_string(m.frames_inside_after));
  });
  both("switches per-frame → DP", [](const ArmClearanceMetrics& m) {
    return arrow(std::to_string(m.switches_per_frame), std::to_string(m.switches));
  });
  both("jerk peak (mm/frame²)", [](const ArmClearanceMetrics& m) {
    return arrow(format_number(m.jerk_peak_before_mm, 2), format_number(m.jerk_peak_after_mm, 2));
  });
  both("jerk p99 (mm/frame²)", [](const ArmClearanceMetrics& m) {
    return arrow(format_number(m.jerk_p99_before_mm, 2), format_number(m.jerk_p99_after_mm, 2));
  });
  both("added mean / max (mm)", [](const ArmClearanceMetrics& m) {
    return format_number(m.added_mean_mm, 1) + " / " + format_number(m.added_max_mm, 1);
  });
  both("accel. limited frames",
       [](const ArmClearanceMetrics& m) { return std::to_string(m.limit.frames_changed); });
}

void print_text(const pipeline::CleanRequest& rq, const pipeline::CleanResult& r,
                std::ostream& out) {
  const ArmClearanceResult& c = r.clearance;
  out << "wrote " << rq.out << ": " << c.frames << " frames at " << format_number(c.rate, 3)
      << " fps, clip '" << r.clip_name << "' on " << rq.character << " (" << r.matched_joints
      << " joints matched by name)\n";
  print_arms(c, out);
  if (c.clasped.frames > 0)
    out << "clasped hands: " << c.clasped.frames << " frames, wrists "
        << format_number(c.clasped.distance_before_m * 100, 1) << " → "
        << format_number(c.clasped.distance_after_m * 100, 1) << " cm apart (largest change "
        << format_number(c.clasped.max_change_m * 100, 1) << " cm)\n";
  const ArmClearanceTimings& t = c.timings;
  out << "body surface: " << c.body_vertices << " vertices; time: surface "
      << format_number(t.surface_s, 3) << " s, candidates " << format_number(t.candidates_s, 3)
      << " s, path " << format_number(t.path_s, 3) << " s, coupling "
      << format_number(t.coupling_s, 3) << " s, smoothing " << format_number(t.smoothing_s, 3)
      << " s, acceleration limit " << format_number(t.limit_s, 3) << " s, total "
      << format_number(t.total_s, 3) << " s\n";
  if (!rq.report.empty()) out << "report: " << rq.report << '\n';
  if (!r.renderer.empty()) {
    out << "preview: " << rq.preview << " (frames";
    for (long f : r.preview_frame_indices) out << ' ' << f;
    out << "; before above, after below; " << r.renderer << ")\n";
  }
  if (!r.preview_skipped.empty()) out << "preview skipped: " << r.preview_skipped << '\n';
  if (!rq.plot.empty()) out << "plot: " << rq.plot << " (depth per frame, mm)\n";
}

}  // namespace

void print_clean(const pipeline::CleanRequest& request, const pipeline::CleanResult& result,
                 const std::string& indent, std::ostream& out) {
  std::ostringstream text;
  print_text(request, result, text);
  std::istringstream lines(text.str());
  for (std::string line; std::getline(lines, line);) out << indent << line << '\n';
}

namespace {

int run_clean(CleanArgs& a, const GlobalOptions& global) {
  pipeline::CleanRequest& rq = a.request;
  rq.load = global.load;
  if (!a.camera.empty()) rq.camera = parse_camera(a.camera);
  rq.options.couple_hands = !a.no_couple;
  rq.options.part_fingers = !a.no_fingers;
  rq.options.limit_acceleration = !a.no_accel_limit;
  rq.options.acceleration_allowance_m = a.accel_allowance_mm / 1000;
  JobProgress bars(global.progress_enabled());
  const pipeline::CleanResult r = pipeline::clean_file(rq, bars.callback());
  bars.done();
  if (!global.quiet) print_clean(rq, r, "", std::cout);
  return kExitOk;
}

}  // namespace

VerbRun register_clean(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<CleanArgs>();
  pipeline::CleanRequest& rq = args->request;
  ArmClearanceOptions& o = rq.options;
  CLI::App* sub = app.add_subcommand(
      "clean",
      "Push a retargeted clip's arms out of the character's body, choosing the side over the "
      "whole clip, and report frames inside, front/back switches and wrist jerk before and after "
      "(docs/retarget.md)");
  sub->add_option("IN", rq.in,
                  "The motion on the character: .vrma, or .vrm .glb .gltf .bvh .fbx with the "
                  "character's joint names (never modified)")
      ->required();
  sub->add_option("--character", rq.character,
                  "The character: a VRM or glTF with a skinned mesh (never modified)")
      ->required();
  sub->add_option("-o,--out", rq.out,
                  "The file to write: .vrma (VRM 1.0 characters), .vrm .glb .gltf (the character "
                  "with the clip), .bvh or .fbx")
      ->required();
  sub->add_option("--clip", rq.clip, "The clip of IN, by name or index (default: the first)");
  sub->add_option("--visibility", rq.visibility,
                  "Per-frame hand visibility, JSON {\"left\": [0–1 …], \"right\": [0–1 …]} "
                  "(default: none, no side preference)");
  sub->add_option("--camera", args->camera,
                  "Camera position X,Y,Z in the character's space, metres (default with "
                  "--visibility: 3 m in front of the hips)");
  sub->add_option("--report", rq.report, "Write the before/after figures to this JSON file");
  sub->add_option("--preview", rq.preview,
                  "Render the worst frames before (above) and after (below) into this PNG");
  sub->add_option("--preview-frames", rq.preview_frames, "Worst frames in the preview")
      ->check(CLI::Range(1, 16))
      ->capture_default_str();
  sub->add_option("--plot", rq.plot, "Plot the per-frame depth before and after (mm) as a PNG");
  sub->add_option("--margin", o.margin_m, "Clearance beyond each arm part's radius, metres")
      ->check(CLI::Range(0.0, 0.1))
      ->capture_default_str();
  sub->add_option("--keep", o.keep, "Candidate arm poses kept per frame")
      ->check(CLI::Range(1, 8))
      ->capture_default_str();
  sub->add_flag("--no-couple", args->no_couple, "Push clasped hands independently");
  sub->add_flag("--no-fingers", args->no_fingers,
                "Do not part clasped hands whose fingers would interlace");
  sub->add_option("--finger-limit", o.finger_pass_limit_m,
                  "How far a fingertip may pass the other wrist, metres (negative: a gap)")
      ->check(CLI::Range(-0.2, 0.2))
      ->capture_default_str();
  sub->add_option("--smooth", o.smooth_radius_frames,
                  "Smooth the chosen path over ± this many frames at 30 fps where the body "
                  "allows (0: off)")
      ->check(CLI::Range(0, 30))
      ->capture_default_str();
  sub->add_option("--transition", o.transition_weight,
                  "Cost per m² of change between consecutive frames' answers (at 30 fps)")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  sub->add_flag("--no-accel-limit", args->no_accel_limit,
                "Do not limit the cleaned wrists' and elbows' acceleration (a push the body "
                "asks for within a few frames then shows as a jolt)");
  sub->add_option("--accel-allowance", args->accel_allowance_mm,
                  "How far the cleaned wrist's acceleration may exceed the input's 99th "
                  "percentile, mm/frame²")
      ->check(CLI::Range(0.0, 1000.0))
      ->capture_default_str();
  sub->add_option("--threads", o.threads,
                  "Threads (0: all cores; the result does not depend on it)")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  return [args, &global]() { return run_clean(*args, global); };
}

}  // namespace kinema::cli
