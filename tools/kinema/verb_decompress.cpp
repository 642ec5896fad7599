// tools/kinema/verb_decompress.cpp — `kinema decompress IN.kc --skeleton FILE -o OUT`.
//
// Decodes a compressed clip at every frame and writes it as a clip of the skeleton read from
// FILE (the file the clip was compressed from, or any with the same joints in the same order:
// a .kc file holds no skeleton, as a game shares one skeleton between many clips) to OUT, by
// extension (.bvh .gltf .glb .vrm), atomically.
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli.h"
#include "kinema/compress/compressed_clip.h"
#include "kinema/core/error.h"
#include "kinema/io/file.h"

namespace kinema::cli {

CompressedClip read_compressed_clip(const std::string& path) {
  const std::string bytes = read_file(path);
  return CompressedClip::deserialize(
      {reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()}, path);
}

Clip decompress_to_clip(const CompressedClip& c) {
  Clip clip;
  clip.name = c.name();
  clip.sample_rate = c.sample_rate();
  clip.duration = (c.frame_count() - 1) / double(c.sample_rate());
  const size_t n = size_t(c.joint_count());
  clip.tracks.resize(n);
  std::vector<SoaTransform> soa(size_t(c.soa_count()));
  std::vector<Transformf> aos(n);
  for (int f = 0; f < c.frame_count(); ++f) {
    sample_frame(c, f, 0.0f, soa);
    to_aos(soa, aos);
    const double t = f == c.frame_count() - 1 ? clip.duration : f / double(c.sample_rate());
    for (size_t j = 0; j < n; ++j) {
      JointTrack& tr = clip.tracks[j];
      const Transform x(aos[j]);
      tr.translation.times.push_back(t);
      tr.translation.values.push_back(x.translation);
      tr.rotation.times.push_back(t);
      tr.rotation.values.push_back(x.rotation);
      tr.scale.times.push_back(t);
      tr.scale.values.push_back(x.scale);
    }
  }
  return clip;
}

namespace {

struct DecompressArgs {
  std::string in, skeleton, out;
};

int decompress_verb(const DecompressArgs& a, const GlobalOptions& global) {
  if (same_file(a.in, a.out) || same_file(a.skeleton, a.out))
    throw UsageError("OUT must differ from IN and from --skeleton");
  const std::string ext = extension_of(a.out);
  if (ext != "bvh" && ext != "gltf" && ext != "glb" && ext != "vrm")
    throw Error(a.out, "",
                "cannot write '." + ext + "' files (kinema writes .bvh .gltf .glb .vrm)");
  const CompressedClip c = read_compressed_clip(a.in);
  Asset asset = load_input(a.skeleton);
  if (asset.skeleton.joint_count() != c.joint_count())
    throw Error(a.skeleton, "",
                "has " + std::to_string(asset.skeleton.joint_count()) + " joints but " + a.in +
                    " was compressed for " + std::to_string(c.joint_count()));
  asset.clips.clear();
  asset.clips.push_back(decompress_to_clip(c));
  save_asset(asset, a.out);
  if (!global.quiet)
    std::cout << "wrote " << a.out << ": " << c.joint_count() << " joints, "
              << describe_clip(asset.clips[0]) << " (from " << a.in << ", "
              << format_bytes(c.size_bytes()) << ")\n";
  return kExitOk;
}

}  // namespace

VerbRun register_decompress(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<DecompressArgs>();
  CLI::App* sub = app.add_subcommand(
      "decompress", "Decode a compressed clip (.kc) back to .bvh .gltf .glb or .vrm");
  sub->add_option("IN", args->in, "The .kc file")->required();
  sub->add_option("--skeleton", args->skeleton,
                  "A file with the clip's skeleton (e.g. the one it was compressed from)")
      ->required();
  sub->add_option("-o,--out", args->out, "The file to write (atomically)")->required();
  return [args, &global]() { return decompress_verb(*args, global); };
}

}  // namespace kinema::cli
