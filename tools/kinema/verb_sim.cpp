// tools/kinema/verb_sim.cpp — `kinema sim SCENE.json -o OUT.pc2|.glb|.gltf [--threads N] [--json]`.
//
// Parses the options and runs pipeline::run_sim_file (kinema/pipeline/sim.h, docs/physics.md):
// the scene's cloths on the fixed-step clock, each written as a PC2 point cache with its rest mesh
// as OBJ, or all of them as one glTF with a morph target per frame. Prints per cloth: vertices,
// springs, frames and steps, time per step, the largest structural stretch (at the end and at any
// frame) and contacts (as one JSON object with --json).
//
// Exit codes: 1 for a command line that makes no sense (OUT not .pc2/.glb/.gltf, a folder or
// SCENE); 2 for a
// bad scene (the message names the JSON pointer of the value at fault), a cloth that blew up, or a
// write failure — with no output written.
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "kinema/pipeline/sim.h"

namespace kinema::cli {

namespace {

struct SimArgs {
  pipeline::SimRequest request;
  bool json = false;
};

const char* solver_name(ClothSolver s) {
  switch (s) {
    case ClothSolver::Xpbd:
      return "xpbd";
    case ClothSolver::ImplicitEuler:
      return "implicit";
    case ClothSolver::SemiImplicit:
      return "semi-implicit";
  }
  return "?";
}

int run_sim(SimArgs& a, const GlobalOptions& global) {
  JobProgress bars(global.progress_enabled());
  a.request.progress = bars.callback();
  const pipeline::SimResult r = pipeline::run_sim_file(a.request);
  bars.done();
  const pipeline::SimScene& scene = r.scene;
  if (a.json) {
    nlohmann::ordered_json j;
    j["scene"] = a.request.scene;
    j["duration_s"] = scene.duration;
    j["fps"] = scene.fps;
    j["rate"] = scene.rate;
    j["frames"] = r.frames;
    j["steps"] = r.steps;
    for (size_t i = 0; i < r.cloths.size(); ++i) {
      const pipeline::SimClothResult& c = r.cloths[i];
      const long steps = r.steps / long(r.cloths.size());
      j["cloth"].push_back({{"name", c.name},
                            {"cache", c.cache_path},
                            {"mesh", c.mesh_path},
                            {"solver", solver_name(scene.cloths[i].options.solver)},
                            {"vertices", c.vertices},
                            {"springs", c.springs},
                            {"ms_per_step", steps > 0 ? 1e3 * c.seconds / double(steps) : 0.0},
                            {"largest_stretch", c.largest_stretch},
                            {"worst_stretch", c.worst_stretch},
                            {"collider_contacts", c.collider_contacts},
                            {"self_contacts", c.self_contacts}});
    }
    std::cout << j.dump(2) << '\n';
  } else if (!global.quiet) {
    std::cout << "kinema sim: " << a.request.scene << ", " << format_number(scene.duration)
              << " s: " << r.frames << " frames at " << scene.fps << " fps, steps of 1/"
              << scene.rate << " s\n";
    for (size_t i = 0; i < r.cloths.size(); ++i) {
      const pipeline::SimClothResult& c = r.cloths[i];
      const long steps = r.steps / long(r.cloths.size());
      std::cout << "  " << c.name << " (" << solver_name(scene.cloths[i].options.solver)
                << "): " << c.vertices << " vertices, " << c.springs << " springs, "
                << format_number(steps > 0 ? 1e3 * c.seconds / double(steps) : 0.0)
                << " ms a step; largest stretch " << format_number(100 * c.largest_stretch)
                << " % at the end, " << format_number(100 * c.worst_stretch)
                << " % at worst; contacts " << c.collider_contacts << " with colliders, "
                << c.self_contacts << " with itself\n"
                << "    "
                << (c.cache_path == c.mesh_path
                        ? c.cache_path + " (glTF: a morph target per frame, clip \"simulation\")"
                        : c.cache_path + " (point cache), " + c.mesh_path + " (rest mesh)")
                << '\n';
    }
  }
  return kExitOk;
}

}  // namespace

VerbRun register_sim(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<SimArgs>();
  CLI::App* sub = app.add_subcommand(
      "sim",
      "Run a JSON scene of cloths and colliders on the fixed-step clock and write each cloth as a "
      "PC2 point cache with its rest mesh as OBJ, or all of them as glTF morph targets "
      "(docs/physics.md)");
  sub->add_option("SCENE", args->request.scene, "The scene, JSON (never modified)")->required();
  sub->add_option("-o,--out", args->request.out,
                  "The .pc2 to write (several cloths: OUT's stem + _NAME.pc2 each; the rest mesh "
                  "goes beside it as .obj), or a .glb/.gltf with every cloth as a mesh with a "
                  "morph target per frame")
      ->required();
  sub->add_option("--threads", args->request.threads, "Threads (0: all cores; same result)")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  sub->add_flag("--json", args->json, "Print the summary as one JSON object");
  return [args, &global] { return run_sim(*args, global); };
}

}  // namespace kinema::cli
