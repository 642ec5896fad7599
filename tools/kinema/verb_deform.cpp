// tools/kinema/verb_deform.cpp — `kinema skin bake-weights IN -o OUT [--poses N] [--max-angle D]
// [--clip C] [--seed S] [--iterations N] [--lambda L] [--influences 4|8] [--rings R] [--json]`.
//
// Bakes better LBS weights from delta mush (docs/deform.md): for every skinned
// mesh, poses are sampled (random rotations of every joint about its rest pose, or evenly spaced
// frames of a clip), delta mush of the LBS result is the target, and per-vertex weights are fitted
// to it. Prints the error before and after per mesh and writes OUT (.glb .gltf .vrm) atomically.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli.h"
#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/skeleton/skeleton.h"
#include "kinema/skin/delta_mush.h"

namespace kinema::cli {

namespace {

struct BakeArgs {
  std::string in, out, clip;
  int poses = 24;
  double max_angle = 40;
  unsigned seed = 1;
  DeltaMushSettings mush;
  WeightBakeSettings bake;
  bool json = false;
};

// Model matrices of every sample pose.
std::vector<std::vector<Mat4>> sample_models(const Asset& asset, const BakeArgs& a) {
  const Skeleton& sk = asset.skeleton;
  std::vector<std::vector<Mat4>> models;
  std::vector<Transform> local(size_t(sk.joint_count()));
  if (!a.clip.empty()) {
    const Clip& clip = asset.clips[size_t(find_clip(asset, a.clip, a.in))];
    for (int i = 0; i < a.poses; ++i) {
      const double t = a.poses == 1 ? 0 : clip.duration * i / double(a.poses - 1);
      if (!sample_pose(clip, sk, t, WrapMode::Clamp, local))
        throw Error(a.in, "clip " + a.clip, "cannot sample the clip on this skeleton");
      models.emplace_back(local.size());
      local_to_model(sk.parents(), local, models.back());
    }
    return models;
  }
  std::mt19937 rng(a.seed);
  std::uniform_real_distribution<double> u(-1, 1);
  const double max_rad = a.max_angle * 3.14159265358979323846 / 180.0;
  for (int i = 0; i < a.poses; ++i) {
    local = sk.rest_pose();
    for (Transform& t : local) {
      const Vec3 axis = normalize(Vec3{u(rng), u(rng), u(rng)});
      t.rotation = t.rotation * Quat::from_axis_angle(axis, max_rad * u(rng));
    }
    models.emplace_back(local.size());
    local_to_model(sk.parents(), local, models.back());
  }
  return models;
}

int bake(const BakeArgs& a, const GlobalOptions& global) {
  if (same_file(a.in, a.out))
    throw UsageError("OUT is the same file as IN (" + a.out +
                     "); kinema never overwrites its input — choose another OUT");
  const std::string ext = extension_of(a.out);
  if (ext != "glb" && ext != "gltf" && ext != "vrm")
    throw UsageError("OUT must be .glb, .gltf or .vrm (got '." + ext + "')");
  Asset asset = load_input(a.in, global.load);
  const auto models = sample_models(asset, a);
  int baked = 0;
  std::string json = "{\"meshes\":[";
  for (Mesh& mesh : asset.meshes) {
    if (mesh.skin < 0 || mesh.influences == 0 || mesh.indices.empty()) continue;
    const Skin& skin = asset.skins[size_t(mesh.skin)];
    std::vector<std::vector<Affine3x4f>> palettes;
    for (const auto& model : models) {
      palettes.emplace_back(skin.joints.size());
      if (!skinning_palette(model, skin.joints, skin.inverse_bind, palettes.back()))
        throw Error(a.in, "skin \"" + skin.name + "\"", "a skin joint is outside the skeleton");
    }
    const SkinMeshView view{mesh.positions, {}, {}, mesh.influences, mesh.joints, mesh.weights};
    WeightBake result;
    try {
      result = bake_lbs_weights(view, mesh.indices, palettes, a.mush, a.bake);
    } catch (const Error& e) {
      throw Error(a.in, "mesh \"" + mesh.name + "\", " + e.place(), e.reason());
    }
    mesh.influences = result.influences;
    mesh.joints = std::move(result.joints);
    mesh.weights = std::move(result.weights);
    ++baked;
    if (a.json) {
      json += std::string(baked > 1 ? "," : "") + "{\"name\":\"" + mesh.name +
              "\",\"vertices\":" + std::to_string(mesh.vertex_count()) +
              ",\"rms_before_m\":" + std::to_string(result.rms_before) +
              ",\"rms_after_m\":" + std::to_string(result.rms_after) +
              ",\"max_before_m\":" + std::to_string(result.max_before) +
              ",\"max_after_m\":" + std::to_string(result.max_after) +
              ",\"vertices_kept\":" + std::to_string(result.vertices_kept) + "}";
    } else if (!global.quiet) {
      std::cout << "mesh \"" << mesh.name << "\": " << mesh.vertex_count() << " vertices, error vs "
                << "delta mush over " << models.size() << " poses: rms "
                << format_number(result.rms_before * 1e3, 2) << " → "
                << format_number(result.rms_after * 1e3, 2) << " mm, max "
                << format_number(result.max_before * 1e3, 2) << " → "
                << format_number(result.max_after * 1e3, 2) << " mm\n";
    }
  }
  if (baked == 0) throw Error(a.in, "", "no skinned triangle mesh to bake");
  // The glTF writer's round-trip mode copies the source's vertex attributes (JOINTS_0 included),
  // so the new weights could not land in OUT: write the asset itself instead (skeleton, skins,
  // meshes, morph targets, clips, humanoid; materials and extensions are not carried).
  if (asset.gltf) {
    asset.gltf.reset();
    if (!global.quiet && !a.json)
      std::fprintf(stderr,
                   "kinema: note: OUT is written from kinema's model of IN: materials, textures "
                   "and extensions of IN are not carried over\n");
  }
  save_asset(asset, a.out);
  if (a.json)
    std::cout << json << "],\"poses\":" << models.size() << "}\n";
  else if (!global.quiet)
    std::cout << "wrote " << a.out << '\n';
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
  BakeArgs& a = *args;
  b->add_option("IN", a.in, "The skinned model (.glb .gltf .vrm; never modified)")->required();
  b->add_option("-o,--out", a.out, "The file to write: .glb .gltf or .vrm")->required();
  b->add_option("--poses", a.poses, "Sample poses")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000));
  b->add_option("--max-angle", a.max_angle, "Random poses: largest turn of each joint, degrees")
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
  b->add_flag("--json", a.json, "Print the errors as one JSON object on stdout");
  return [args, b, &global]() {
    if (!b->parsed()) throw UsageError("skin needs a verb: kinema skin bake-weights …");
    return bake(*args, global);
  };
}

}  // namespace kinema::cli
