// tools/kinema/verb_grow.cpp — `kinema grow [SPEC.json | --preset NAME] -o OUT.(glb|gltf|pc2|obj)
// [--seconds S] [--fps N] [--ring N] [--seed K] [--json]`.
//
// Parses the options and runs pipeline::run_grow (kinema/pipeline/grow.h, docs/procedural.md): a
// timed L-system grown continuously for S seconds and written as a mesh with a morph target a
// frame (.glb/.gltf: `kinema render OUT.glb` draws it), a PC2 point cache with its rest mesh
// (OUT's stem .obj), or the grown plant alone (.obj). Prints the plant's size and the mesh's.
//
// Exit codes: 1 for a command line that makes no sense (OUT not one of those, no spec and no
// preset or both, an unknown preset, too many frames × vertices); 2 for a bad spec (file and JSON
// pointer named), a derivation past its limits, or a write failure.
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "kinema/pipeline/grow.h"

namespace kinema::cli {

namespace {

struct GrowArgs {
  pipeline::GrowRequest request;
  double seconds = 0;
  int ring = 0;
  std::uint64_t seed = 0;
  bool json = false;
};

int run_grow(GrowArgs& a, CLI::App& grow, const GlobalOptions& global) {
  pipeline::GrowRequest& r = a.request;
  if (grow.count("--seconds")) r.seconds = a.seconds;
  if (grow.count("--ring")) r.ring = a.ring;
  if (grow.count("--seed")) r.seed = a.seed;
  JobProgress bars(global.progress_enabled());
  r.progress = bars.callback();
  const pipeline::GrowReport report = pipeline::run_grow(r);
  bars.done();
  if (a.json) {
    nlohmann::ordered_json j;
    j["out"] = report.written;
    j["name"] = report.name;
    j["seconds"] = report.seconds;
    j["frames"] = report.frames;
    j["modules"] = report.modules;
    j["rewrites"] = report.rewrites;
    j["segments"] = report.segments;
    j["leaves"] = report.leaves;
    j["vertices"] = report.vertices;
    j["triangles"] = report.triangles;
    j["height_m"] = report.height;
    j["total_length_m"] = report.total_length;
    j["base_radius_m"] = report.base_radius;
    j["ms_per_frame"] = 1e3 * report.seconds_per_frame;
    std::cout << j.dump(2) << '\n';
  } else if (!global.quiet) {
    std::cout << "kinema grow: " << (report.name.empty() ? r.spec : report.name) << ", "
              << format_number(report.seconds) << " s: " << report.modules << " modules ("
              << report.rewrites << " rewrites), " << report.segments << " segments, "
              << report.leaves << " leaves\n"
              << "  " << format_number(report.height) << " m tall, "
              << format_number(report.total_length) << " m of branches, trunk "
              << format_number(2e2 * report.base_radius, 2) << " cm across\n"
              << "  " << report.vertices << " vertices, " << report.triangles
              << " triangles a frame, " << report.frames << " frames ("
              << format_number(1e3 * report.seconds_per_frame, 2) << " ms a frame)\n";
    for (const std::string& path : report.written) std::cout << "  " << path << '\n';
  }
  return kExitOk;
}

}  // namespace

VerbRun register_grow(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<GrowArgs>();
  pipeline::GrowRequest& r = args->request;
  CLI::App* grow = app.add_subcommand(
      "grow",
      "Grow a plant from a timed L-system (lengths, thickness and angles smooth in age) and write "
      "it as a mesh that grows: .glb with a morph target a frame, .pc2 with its rest .obj, or "
      "the grown .obj");
  std::string presets;
  for (const std::string& name : pipeline::grow_presets())
    presets += (presets.empty() ? "" : ", ") + name;
  auto* spec = grow->add_option("spec", r.spec, "The L-system spec (.json; docs/procedural.md)");
  grow->add_option("--preset", r.preset, "A built-in plant: " + presets)->excludes(spec);
  grow->add_option("-o,--out", r.out, "The mesh to write (.glb .gltf .pc2 .obj)")->required();
  grow->add_option("--seconds", args->seconds,
                   "Seconds of growth (default: the spec's; a preset's is its derivation length)")
      ->check(CLI::Range(0.001, 36000.0));
  grow->add_option("--fps", r.fps, "Frames a second")
      ->capture_default_str()
      ->check(CLI::Range(1, 240));
  grow->add_option("--ring", args->ring, "Vertices around a branch (default: the spec's, 8)")
      ->check(CLI::Range(3, 64));
  grow->add_option("--seed", args->seed, "Seed of stochastic rules (default: the spec's)");
  grow->add_flag("--json", args->json, "Print the summary as one JSON object");
  return [args, grow, &global]() { return run_grow(*args, *grow, global); };
}

}  // namespace kinema::cli
