// tools/kinema/verb_vat.cpp — `kinema vat IN [--clip NAME] [--fps N] [--skinning lbs|dqs]
// [--encoding center|absolute] [--json] -o OUT.json`.
//
// Parses the options and runs pipeline::bake_vat_file (kinema/pipeline/vat.h, docs/faces.md): every
// skinned mesh of IN skinned over one clip, one RGBA16F row per frame, written as OUT's stem +
// ".dds" next to the JSON metadata OUT (both atomically: a failure leaves neither half-written nor
// a new texture without its JSON). Prints vertices, frames, bytes and the half-float error against
// the exact skinned positions (as one JSON object with --json).
//
// Exit codes: 1 for a command line that makes no sense (OUT not .json, OUT a folder or IN, an
// unknown clip, a bad option value); 2 for bad input (unreadable file, no clip, no skinned mesh,
// a broken skin) or a write failure.
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "kinema/pipeline/vat.h"

namespace kinema::cli {

namespace {

struct VatArgs {
  std::string in, out, clip, skinning = "lbs", encoding = "center";
  double fps = 0;
  bool json = false;
};

int run_vat(const VatArgs& a, const GlobalOptions& global) {
  pipeline::VatRequest request;
  request.in = a.in;
  request.out = a.out;
  request.clip = a.clip;
  request.options.fps = a.fps;
  request.options.skinning = a.skinning == "dqs" ? VatSkinning::Dqs : VatSkinning::Lbs;
  request.options.encoding =
      a.encoding == "absolute" ? VatEncoding::Absolute : VatEncoding::CenterOffset;
  request.load = global.load;
  const pipeline::VatResult result = pipeline::bake_vat_file(request);
  const VatBake& bake = result.bake;
  const VatFiles& files = result.files;

  if (a.json) {
    nlohmann::ordered_json j;
    j["in"] = a.in;
    j["out"] = files.json_path;
    j["texture"] = files.texture_path;
    j["clip"] = bake.clip;
    j["vertices"] = bake.vertex_count;
    j["frames"] = bake.frame_count;
    j["fps"] = bake.fps;
    j["skinning"] = to_string(bake.skinning);
    j["encoding"] = to_string(bake.encoding);
    j["data_bytes"] = bake.data_bytes();
    j["texture_bytes"] = files.texture_bytes;
    j["max_error_m"] = bake.max_error_m;
    j["rms_error_m"] = bake.rms_error_m;
    std::cout << j.dump(2) << '\n';
  } else if (!global.quiet) {
    std::cout << "kinema vat: " << a.in << ", clip \"" << bake.clip << "\"\n"
              << "  vertices " << bake.vertex_count << " (" << bake.meshes.size()
              << (bake.meshes.size() == 1 ? " skinned mesh" : " skinned meshes") << "), frames "
              << bake.frame_count << " at " << format_number(bake.fps) << " fps, "
              << to_string(bake.skinning) << ", " << to_string(bake.encoding) << '\n'
              << "  texture " << files.texture_path << ": " << bake.vertex_count << " × "
              << bake.frame_count << " RGBA16F, " << bake.data_bytes() << " bytes of texels + "
              << kVatDdsHeaderBytes << " header = " << files.texture_bytes << " bytes ("
              << format_bytes(files.texture_bytes) << ")\n"
              << "  max error " << format_number(bake.max_error_m * 1e3, 3) << " mm (rms "
              << format_number(bake.rms_error_m * 1e3, 3) << " mm) against the skinned mesh\n"
              << "  metadata " << files.json_path << '\n';
  }
  if (bake.vertex_count > 16384 && !global.quiet)
    std::cerr << "kinema: warning: " << bake.vertex_count
              << " texels per row exceed the 16384-texel texture width many GPUs support\n";
  return kExitOk;
}

}  // namespace

VerbRun register_vat(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<VatArgs>();
  CLI::App* vat = app.add_subcommand(
      "vat",
      "Bake a vertex animation texture: skinned vertex positions per frame of a clip as an "
      "RGBA16F .dds (one row per frame, one texel per vertex) plus JSON metadata");
  vat->add_option("IN", args->in,
                  "A file with a skinned mesh and a clip (.glb .gltf .vrm .fbx .dae)")
      ->required();
  vat->add_option("-o,--out", args->out, "The JSON metadata to write; the texture is its .dds")
      ->required();
  vat->add_option("--clip", args->clip, "The clip, by name or index (default: the first)");
  vat->add_option("--fps", args->fps,
                  "Frames per second to sample (default: the clip's rate, else 30)")
      ->check(CLI::Range(0.01, 1000.0));
  vat->add_option("--skinning", args->skinning, "lbs or dqs")
      ->capture_default_str()
      ->check(CLI::IsMember({"lbs", "dqs"}));
  vat->add_option("--encoding", args->encoding,
                  "center (positions minus the bounds' centre, more precise) or absolute")
      ->capture_default_str()
      ->check(CLI::IsMember({"center", "absolute"}));
  vat->add_flag("--json", args->json, "Print the summary as one JSON object");
  return [args, &global]() { return run_vat(*args, global); };
}

}  // namespace kinema::cli
