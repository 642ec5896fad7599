// tools/kinema/verb_ragdoll.cpp — `kinema ragdoll CHARACTER --hit TIME,BONE,IX:IY:IZ -o OUT
// [--clip C] [--powered] [--limits L.json] [--get-up C,…] [--seconds S] [--fps N] [--rate N]
// [--json]`.
//
// Runs pipeline::run_ragdoll (kinema/pipeline/ragdoll.h): the character plays its clip until the
// hit, becomes a ragdoll with the animation's velocities, takes the impulse and falls — passive,
// or powered (PD motors keep tracking the clip, the struck limb goes limp and recovers) — baked
// into one clip. Prints the bodies, mass, the struck body, joint separation and time per step.
//
// Exit codes: 1 for a command line that makes no sense (a malformed --hit, OUT of the wrong kind
// or the character itself, an unknown clip); 2 for a bad file or a bone the character does not
// have — with no output written.
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "kinema/core/error.h"
#include "kinema/pipeline/ragdoll.h"

namespace kinema::cli {

namespace {

struct RagdollArgs {
  pipeline::RagdollRequest request;
  std::string hit;
  bool json = false;
};

// "TIME,BONE,IX:IY:IZ" (seconds, a joint or humanoid bone name, N·s in world axes).
void parse_hit(const std::string& text, pipeline::RagdollRequest& r) {
  const auto bad = [&] {
    throw UsageError(
        "--hit must be TIME,BONE,IX:IY:IZ (seconds, a bone, an impulse in N·s), e.g. "
        "1.2,head,0:0:-60; got \"" +
        text + "\"");
  };
  const size_t a = text.find(','), b = text.rfind(',');
  if (a == std::string::npos || a == b) bad();
  try {
    size_t used = 0;
    r.hit_time = std::stod(text.substr(0, a), &used);
    if (used != a || !(r.hit_time >= 0)) bad();
    r.hit_bone = text.substr(a + 1, b - a - 1);
    if (r.hit_bone.empty()) bad();
    std::stringstream impulse(text.substr(b + 1));
    std::string part;
    double v[3];
    int k = 0;
    while (std::getline(impulse, part, ':')) {
      if (k == 3) bad();
      v[k++] = std::stod(part, &used);
      if (used != part.size()) bad();
    }
    if (k != 3) bad();
    r.hit_impulse = {v[0], v[1], v[2]};
  } catch (const std::logic_error&) {
    bad();
  }
}

int run_ragdoll(RagdollArgs& a, const GlobalOptions& global) {
  parse_hit(a.hit, a.request);
  JobProgress bars(global.progress_enabled());
  a.request.progress = bars.callback();
  const pipeline::RagdollResult r = pipeline::run_ragdoll(a.request);
  bars.done();
  const double us = r.steps > 0 ? 1e6 * r.seconds / double(r.steps) : 0.0;
  if (a.json) {
    nlohmann::ordered_json j;
    j["character"] = a.request.character;
    j["out"] = a.request.out;
    j["clip"] = r.clip_name;
    j["powered"] = a.request.powered;
    j["bodies"] = r.bodies;
    j["joints"] = r.joints;
    j["mass_kg"] = r.mass;
    j["hit_body"] = r.hit_body;
    j["frames"] = r.frames;
    j["steps"] = r.steps;
    j["us_per_step"] = us;
    j["worst_joint_error_m"] = r.worst_joint_error;
    j["final_height_m"] = r.final_height;
    if (!r.get_up_clip.empty())
      j["get_up"] = {{"clip", r.get_up_clip}, {"from_s", r.get_up_from}, {"cost", r.get_up_cost}};
    std::cout << j.dump(2) << '\n';
  } else if (!global.quiet) {
    std::cout << "kinema ragdoll: " << a.request.character << ", hit at "
              << format_number(a.request.hit_time) << " s on " << r.hit_body << " ("
              << (a.request.powered ? "powered" : "passive") << ")\n  " << r.bodies << " bodies, "
              << r.joints << " joints, " << format_number(r.mass) << " kg; " << r.steps
              << " steps, " << format_number(us) << " µs a step; joints apart by "
              << format_number(1000 * r.worst_joint_error) << " mm at worst; highest body "
              << format_number(r.final_height) << " m above the ground at the end\n  ";
    if (!r.get_up_clip.empty())
      std::cout << "gets up with \"" << r.get_up_clip << "\" from " << format_number(r.get_up_from)
                << " s (pose distance " << format_number(r.get_up_cost) << ")\n  ";
    std::cout << a.request.out << " (clip \"" << r.clip_name << "\", " << r.frames
              << " frames; kinema render " << a.request.out << " -o OUT.png --contact-sheet 6)\n";
  }
  return kExitOk;
}

}  // namespace

VerbRun register_ragdoll(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<RagdollArgs>();
  CLI::App* sub = app.add_subcommand(
      "ragdoll",
      "Play a character's clip until a hit, then let it fall as a ragdoll (capsules from its skin, "
      "joints at its bones) — passive, or --powered: its joints keep tracking the clip while the "
      "struck limb goes limp — and bake the result into one clip");
  sub->add_option("CHARACTER", args->request.character, "A skinned .vrm, .glb or .gltf")
      ->required();
  sub->add_option("-o,--out", args->request.out, "The .glb/.gltf/.vrm to write")->required();
  sub->add_option("--hit", args->hit,
                  "TIME,BONE,IX:IY:IZ: when (s), where (a joint or VRM humanoid bone name) and the "
                  "impulse (N·s, world axes), e.g. 1.2,head,0:0:-60")
      ->required();
  sub->add_option("--clip", args->request.clip, "The clip, by name or index (default: the first)");
  sub->add_flag("--powered", args->request.powered,
                "Drive the joints toward the clip with PD motors (an active ragdoll)");
  sub->add_option("--limits", args->request.limits_file,
                  "A joint limits JSON (joint or humanoid bone → hinge or swing-twist, degrees; "
                  "docs/physics.md): replaces the humanoid defaults of the joints it names");
  sub->add_option("--get-up", args->request.get_up,
                  "Clips of the character to get back up with (names or indices, comma-separated): "
                  "the frame nearest the fallen pose is found by motion-matching search and the "
                  "clip plays on from there")
      ->delimiter(',');
  sub->add_option("--get-up-blend", args->request.get_up_blend,
                  "Seconds to blend from the fallen pose into the get-up clip")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--seconds", args->request.seconds_after, "How long after the hit (s)")
      ->check(CLI::Range(0.0, 600.0))
      ->capture_default_str();
  sub->add_option("--fps", args->request.fps, "Frames a second in the output")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  sub->add_option("--rate", args->request.rate, "Simulation steps a second (a multiple of --fps)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  sub->add_flag("--json", args->json, "Print the summary as one JSON object");
  return [args, &global] { return run_ragdoll(*args, global); };
}

}  // namespace kinema::cli
