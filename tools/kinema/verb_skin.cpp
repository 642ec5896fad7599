// tools/kinema/verb_skin.cpp — `kinema skin bake-weights IN -o OUT [--poses N] [--max-angle D]
// [--clip C] [--seed S] [--iterations N] [--lambda L] [--influences 4|8] [--rings R] [--json]`.
//
// Parses the options and runs pipeline::bake_weights_file (kinema/pipeline/skin_weights.h,
// docs/deform.md): for every skinned mesh, poses are sampled (random rotations of every joint
// about its rest pose, or evenly spaced frames of a clip), delta mush of the LBS result is the
// target, and per-vertex weights are fitted to it. Prints the error before and after per mesh;
// OUT (.glb .gltf .vrm) is written atomically.
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "cli.h"
#include "kinema/pipeline/skin_weights.h"

namespace kinema::cli {

namespace {

struct BakeArgs {
  pipeline::BakeWeightsRequest request;
  double max_angle_degrees = 40;
  bool json = false;
};

int bake(const BakeArgs& a, const GlobalOptions& global) {
  pipeline::BakeWeightsRequest request = a.request;
  request.max_angle = a.max_angle_degrees * 3.14159265358979323846 / 180.0;
  request.load = global.load;
  const pipeline::BakeWeightsResult r = pipeline::bake_weights_file(request);
  if (a.json) {
    std::string json = "{\"meshes\":[";
    for (size_t i = 0; i < r.meshes.size(); ++i) {
      const pipeline::BakedMesh& m = r.meshes[i];
      json += std::string(i > 0 ? "," : "") + "{\"name\":\"" + m.name +
              "\",\"vertices\":" + std::to_string(m.vertices) +
              ",\"rms_before_m\":" + std::to_string(m.rms_before) +
              ",\"rms_after_m\":" + std::to_string(m.rms_after) +
              ",\"max_before_m\":" + std::to_string(m.max_before) +
              ",\"max_after_m\":" + std::to_string(m.max_after) +
              ",\"vertices_kept\":" + std::to_string(m.vertices_kept) + "}";
    }
    std::cout << json << "],\"poses\":" << r.poses << "}\n";
    return kExitOk;
  }
  if (global.quiet) return kExitOk;
  for (const pipeline::BakedMesh& m : r.meshes)
    std::cout << "mesh \"" << m.name << "\": " << m.vertices << " vertices, error vs "
              << "delta mush over " << r.poses << " poses: rms "
              << format_number(m.rms_before * 1e3, 2) << " → "
              << format_number(m.rms_after * 1e3, 2) << " mm, max "
              << format_number(m.max_before * 1e3, 2) << " → "
              << format_number(m.max_after * 1e3, 2) << " mm\n";
  std::cout << "wrote " << request.out << '\n';
  return kExitOk;
}

}  // namespace

VerbRun register_skin(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<BakeArgs>();
  CLI::App* skin = app.add_subcommand("skin", "Skinning tools (see docs/deform.md)");
  skin->require_subcommand(1);
  CLI::App* b = skin->add_subcommand(
      "bake-weights",
      "Fit LBS weights that reproduce delta mush over sample poses; prints the error before and "
      "after");
  BakeArgs& args_ = *args;
  pipeline::BakeWeightsRequest& a = args_.request;
  b->add_option("IN", a.in, "The skinned model (.glb .gltf .vrm; never modified)")->required();
  b->add_option("-o,--out", a.out, "The file to write: .glb .gltf or .vrm")->required();
  b->add_option("--poses", a.poses, "Sample poses")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000));
  b->add_option("--max-angle", args_.max_angle_degrees,
                "Random poses: largest turn of each joint, degrees")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 180.0));
  b->add_option("--clip", a.clip, "Sample the poses evenly from this clip instead (name or index)");
  b->add_option("--seed", a.seed, "Random poses: seed")->capture_default_str();
  b->add_option("--iterations", a.mush.iterations, "Delta mush smoothing passes")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000));
  b->add_option("--lambda", a.mush.lambda, "Delta mush smoothing step")
      ->capture_default_str()
      ->check(CLI::Range(1e-6, 1.0));
  b->add_option("--influences", a.bake.max_influences, "Influences per vertex in OUT")
      ->capture_default_str()
      ->check(CLI::IsMember({4, 8}));
  b->add_option("--rings", a.bake.candidate_rings,
                "Candidate joints from neighbours up to this many edges away")
      ->capture_default_str()
      ->check(CLI::Range(0, 8));
  b->add_flag("--json", args_.json, "Print the errors as one JSON object on stdout");
  return [args, b, &global]() {
    if (!b->parsed()) throw UsageError("skin needs a verb: kinema skin bake-weights …");
    return bake(*args, global);
  };
}

}  // namespace kinema::cli
