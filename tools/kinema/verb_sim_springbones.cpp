// tools/kinema/verb_sim_springbones.cpp — `kinema sim springbones AVATAR -o OUT.glb|.gltf|.vrm
// [--clip C] [--fps N] [--seconds S] [--json]`, the subcommand of `kinema sim` (verb_sim.cpp).
//
// Runs pipeline::run_spring_bake (kinema/pipeline/spring_bones.h): the avatar's VRM spring bones
// simulated over one of its clips as three-vrm simulates them and baked into it. Prints the
// springs, joints, colliders, frames, time a frame and the largest swing (one JSON object with
// --json).
//
// Exit codes: 1 for an avatar without spring bones or OUT of the wrong kind; 2 for a bad file —
// with no output written.
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "kinema/pipeline/spring_bones.h"

namespace kinema::cli {

namespace {

struct SpringArgs {
  pipeline::SpringBakeRequest request;
  bool json = false;
};

int run_springbones(SpringArgs& a, const GlobalOptions& global) {
  JobProgress bars(global.progress_enabled());
  a.request.progress = bars.callback();
  const pipeline::SpringBakeResult r = pipeline::run_spring_bake(a.request);
  bars.done();
  const double per_frame_us = r.frames > 0 ? 1e6 * r.seconds / r.frames : 0.0;
  if (a.json) {
    nlohmann::ordered_json j;
    j["avatar"] = a.request.avatar;
    j["out"] = a.request.out;
    j["clip"] = r.clip_name;
    j["fps"] = a.request.fps;
    j["frames"] = r.frames;
    j["springs"] = r.springs;
    j["joints"] = r.joints;
    j["colliders"] = r.colliders;
    j["largest_swing_deg"] = r.largest_swing_deg;
    j["us_per_frame"] = per_frame_us;
    std::cout << j.dump(2) << '\n';
  } else if (!global.quiet) {
    std::cout << "kinema sim springbones: " << a.request.avatar << ", "
              << (r.clip_name.empty() ? std::string("rest pose") : "clip \"" + r.clip_name + "\"")
              << ": " << r.springs << " springs, " << r.joints << " joints, " << r.colliders
              << " colliders; " << r.frames << " frames at " << a.request.fps << " fps, "
              << format_number(per_frame_us) << " µs a frame; largest swing "
              << format_number(r.largest_swing_deg) << "°\n"
              << "  " << a.request.out << " (the clip with the secondary motion baked in)\n";
  }
  return kExitOk;
}

}  // namespace

SubVerb register_sim_springbones(CLI::App& sim, const GlobalOptions& global) {
  auto springs = std::make_shared<SpringArgs>();
  CLI::App* sb = sim.add_subcommand(
      "springbones",
      "Simulate a VRM avatar's spring bones (hair, skirts, accessories) over one of its clips and "
      "bake them into it, as three-vrm simulates them (docs/physics.md)");
  sb->add_option("AVATAR", springs->request.avatar,
                 "A .vrm/.glb/.gltf with VRMC_springBone or VRM 0.x secondaryAnimation (never "
                 "modified)")
      ->required();
  sb->add_option("-o,--out", springs->request.out,
                 "The .glb/.gltf/.vrm to write: the avatar with the baked clip and without its "
                 "spring-bone definitions")
      ->required();
  sb->add_option("--clip", springs->request.clip,
                 "The clip to play, by name or index (default: the first; none: the rest pose)");
  sb->add_option("--fps", springs->request.fps, "Simulation steps and frames per second")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  sb->add_option("--seconds", springs->request.seconds,
                 "How long to simulate (default: the clip's duration, 2 s at rest)")
      ->check(CLI::Range(0.0, 3600.0));
  sb->add_flag("--json", springs->json, "Print the summary as one JSON object");
  return {sb, [springs, &global] { return run_springbones(*springs, global); }};
}

}  // namespace kinema::cli
