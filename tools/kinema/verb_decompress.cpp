// tools/kinema/verb_decompress.cpp — `kinema decompress IN.kmc -o OUT.glb|.gltf|.bvh [--clip
// NAME]`.
//
// Turns a compressed animation (.kmc, written by `kinema compress`) back into an ordinary file:
// its skeleton with every clip decoded frame by frame (LINEAR keys at the frame times; channels
// that never change get one key). BVH holds one clip: the first, or the one --clip names.
// Written atomically.
//
// Exit codes: 1 for a command line that makes no sense (OUT the same file as IN, an unknown clip,
// an OUT type kinema does not write); 2 for a bad .kmc (corrupted, truncated, another version)
// or a write failure.
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "cli.h"
#include "kinema/core/error.h"
#include "kinema/pipeline/compress.h"

namespace kinema::cli {

namespace {

struct DecompressArgs {
  std::string in, out, clip;
};

int run_decompress(const DecompressArgs& a, const GlobalOptions& global) {
  const pipeline::DecompressResult r = pipeline::decompress_file({a.in, a.out, a.clip});
  if (!global.quiet) {
    std::cout << "kinema decompress: " << a.in << " → " << a.out << '\n';
    for (size_t i = 0; i < r.clips_written; ++i)
      std::cout << "  clip \"" << r.written.clips[i].name
                << "\": " << describe_clip(r.written.clips[i]) << ", "
                << r.written.skeleton.joint_count() << " joints\n";
  }
  return kExitOk;
}

}  // namespace

VerbRun register_decompress(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<DecompressArgs>();
  CLI::App* sub =
      app.add_subcommand("decompress", "Decode a compressed animation (.kmc) back to glTF or BVH");
  sub->add_option("IN", args->in, "A .kmc file written by kinema compress")->required();
  sub->add_option("-o,--out", args->out, "The .glb, .gltf or .bvh to write")->required();
  sub->add_option("--clip", args->clip, "Keep only this clip, by name or index");
  return [args, &global]() { return run_decompress(*args, global); };
}

}  // namespace kinema::cli
