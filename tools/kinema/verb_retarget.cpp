// tools/kinema/verb_retarget.cpp — `kinema retarget SRC --onto AVATAR -o OUT [--map MAP.json]
// [--onto-map MAP.json] [--mode rotation|direction] [--ground auto|off] [--fps N] [--clip C]
// [--twist F] [--no-fingers] [--json] [--preview PNG]`.
//
// Parses the options and runs pipeline::retarget_file (kinema/pipeline/retarget.h), then prints
// what was written and a metrics table of the result before and after foot grounding.
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "kinema/pipeline/retarget.h"

namespace kinema::cli {
namespace {

struct RetargetArgs {
  pipeline::RetargetRequest request;
  std::string mode = "rotation", ground = "auto";
  bool no_fingers = false, json = false;
};

nlohmann::json skate_json(const FootSkate& s) {
  nlohmann::json j{{"planted_frames", s.planted_frames}};
  if (s.speed) {
    j["median_cm_per_s"] = s.speed->median;
    j["p90_cm_per_s"] = s.speed->p90;
    j["max_cm_per_s"] = s.speed->max;
  } else {
    j["contacts"] = false;
  }
  return j;
}

nlohmann::json metrics_json(const MotionMetrics& m) {
  nlohmann::json j{{"skate", skate_json(m.skate)},
                   {"penetration_max_cm", m.penetration_max},
                   {"float_max_cm", m.float_max},
                   {"knee_jump_max_deg", m.knee_jump_max},
                   {"bone_length_error_max_m", m.bone_length_error_max}};
  if (m.pose_error) {
    j["pose_mse_over_height_squared"] = m.pose_error->mse_over_height_squared;
    j["pose_mean_joint_error_m"] = m.pose_error->mean_joint_error;
  }
  return j;
}

std::string skate_text(const FootSkate& s) {
  if (!s.speed) return "no contacts";
  return format_number(s.speed->median, 2) + " / " + format_number(s.speed->p90, 2) + " cm/s";
}

/// One row of the metrics table: the label, then the value before and (when grounded) after.
void row(std::ostream& out, const std::string& label, const std::string& before,
         const std::string& after) {
  out << "  " << label << std::string(label.size() < 30 ? 30 - label.size() : 1, ' ') << before;
  if (!after.empty()) out << std::string(before.size() < 22 ? 22 - before.size() : 1, ' ') << after;
  out << '\n';
}

void print_text(const RetargetArgs& a, const pipeline::RetargetResult& r, std::ostream& out) {
  const Clip& c = r.written.clips[0];
  out << "wrote " << a.request.out << ": " << r.frames << " frames, "
      << format_number(c.duration, 3) << " s at " << format_number(r.rate, 3) << " fps onto "
      << a.request.onto << " (" << r.written.skeleton.joint_count() << " joints)\n";
  if (r.grounded)
    out << "grounded: " << r.grounding.plants[0] + r.grounding.plants[1] << " plants, hips moved "
        << format_number(r.grounding.hips_offset_min * 100, 1) << " … "
        << format_number(r.grounding.hips_offset_max * 100, 1) << " cm\n";
  const MotionMetrics& b = r.before;
  const MotionMetrics* g = r.after ? &*r.after : nullptr;
  auto both = [&](auto&& text) { return std::make_pair(text(b), g ? text(*g) : std::string()); };
  row(out, "", "retargeted", g ? "grounded" : "");
  auto [s0, s1] = both([](const MotionMetrics& m) { return skate_text(m.skate); });
  row(out, "foot skate median / p90", s0, s1);
  auto [p0, p1] = both([](const MotionMetrics& m) {
    return format_number(m.penetration_max, 2) + " / " + format_number(m.float_max, 2) + " cm";
  });
  row(out, "sole penetration / float max", p0, p1);
  auto [k0, k1] =
      both([](const MotionMetrics& m) { return format_number(m.knee_jump_max, 2) + "°"; });
  row(out, "knee-angle jump max", k0, k1);
  auto [l0, l1] = both([](const MotionMetrics& m) {
    return format_number(m.bone_length_error_max * 1000, 4) + " mm";
  });
  row(out, "bone-length error max", l0, l1);
  if (b.pose_error) {
    auto [e0, e1] = both([](const MotionMetrics& m) {
      return m.pose_error ? format_number(m.pose_error->mse_over_height_squared * 1e3, 4) + "e-3"
                          : std::string("-");
    });
    row(out, "joint MSE / height²", e0, e1);
  }
  if (!r.renderer.empty())
    out << "preview: " << a.request.preview << " (source above, result below; " << r.renderer
        << ")\n";
}

int run_retarget(RetargetArgs& a, const GlobalOptions& global) {
  pipeline::RetargetRequest& rq = a.request;
  rq.load = global.load;
  rq.options.mode = a.mode == "direction" ? RetargetMode::Direction : RetargetMode::Rotation;
  rq.options.fingers = !a.no_fingers;
  rq.ground = a.ground == "auto";
  JobProgress bars(global.progress_enabled());
  const pipeline::RetargetResult r = pipeline::retarget_file(rq, bars.callback());
  bars.done();
  if (global.quiet) return kExitOk;
  if (a.json) {
    nlohmann::json j{{"out", rq.out},          {"frames", r.frames},
                     {"rate", r.rate},         {"duration_s", r.written.clips[0].duration},
                     {"grounded", r.grounded}, {"before", metrics_json(r.before)}};
    if (r.after) j["after"] = metrics_json(*r.after);
    if (r.grounded) {
      j["plants"] = r.grounding.plants;
      j["hips_offset_m"] = {r.grounding.hips_offset_min, r.grounding.hips_offset_max};
    }
    if (!r.renderer.empty()) j["preview"] = rq.preview;
    std::cout << j.dump() << '\n';
    return kExitOk;
  }
  print_text(a, r, std::cout);
  return kExitOk;
}

}  // namespace

VerbRun register_retarget(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<RetargetArgs>();
  pipeline::RetargetRequest& rq = args->request;
  CLI::App* sub = app.add_subcommand(
      "retarget",
      "Move a humanoid clip onto an avatar of other proportions and rest pose, ground its feet "
      "and report foot skate, penetration, knee jumps and bone lengths before and after "
      "(docs/retarget.md)");
  sub->add_option("SRC", rq.in, "The motion: .bvh .gltf .glb .vrm .vrma .fbx .dae (never modified)")
      ->required();
  sub->add_option("--onto", rq.onto, "The avatar (.vrm .glb .gltf .fbx .bvh; never modified)")
      ->required();
  sub->add_option("-o,--out", rq.out,
                  "The file to write: .vrma (VRM Animation, VRM 1.0 avatars), .vrm .glb .gltf "
                  "(the avatar with the clip), .bvh or .fbx")
      ->required();
  sub->add_option("--clip", rq.clip, "The clip of SRC, by name or index (default: the first)");
  sub->add_option("--map", rq.map,
                  "A JSON humanoid map for SRC: {\"hips\": \"joint name\", \"leftUpperLeg\": …} "
                  "(default: recognized from the joint names)");
  sub->add_option("--onto-map", rq.onto_map,
                  "A JSON humanoid map for the avatar (default: its VRM map, or recognized)");
  sub->add_option("--mode", args->mode,
                  "rotation: transfer world rotations; direction: point each segment along the "
                  "source's segment (follows joint positions)")
      ->check(CLI::IsMember({"rotation", "direction"}))
      ->capture_default_str();
  sub->add_option("--ground", args->ground,
                  "auto: plant the feet by moving the hips and locking planted feet; off: leave "
                  "them")
      ->check(CLI::IsMember({"auto", "off"}))
      ->capture_default_str();
  sub->add_option("--fps", rq.options.sample_rate, "Frame rate of the result (default: SRC's)")
      ->check(CLI::Range(0.001, 10000.0));
  sub->add_option("--twist", rq.options.forearm_twist,
                  "Fraction (0–1) of the hand's twist moved into the forearm")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  sub->add_flag("--no-fingers", args->no_fingers, "Leave the avatar's fingers in their rest pose");
  sub->add_option("--preview", rq.preview, "Render SRC and the result side by side into this PNG");
  sub->add_option("--preview-frames", rq.preview_frames, "Frames per row of the preview")
      ->check(CLI::Range(1, 16))
      ->capture_default_str();
  sub->add_flag("--json", args->json, "Print the report as one JSON object");
  return [args, &global]() { return run_retarget(*args, global); };
}

}  // namespace kinema::cli
