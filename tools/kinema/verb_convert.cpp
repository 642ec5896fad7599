// tools/kinema/verb_convert.cpp — `kinema convert IN OUT [--clip C] [--onto AVATAR] [--fps N]
// [--unit U] [--in-unit U]`.
//
// Converts between the formats by extension (reads .bvh .gltf .glb .vrm .fbx .dae, writes .bvh
// .gltf .glb .vrm). With --onto, the chosen clip is retargeted by humanoid bone names onto the
// avatar's skeleton and OUT is the avatar carrying that clip. Writes go through a temporary
// file and a rename, so a failure leaves no OUT (or the previous OUT) and IN is only read.
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "cli.h"
#include "kinema/character/humanoid.h"
#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/io/bvh.h"
#include "kinema/io/gltf.h"
#include "kinema/retarget/retarget.h"

namespace kinema::cli {

namespace {

struct ConvertArgs {
  std::string in, out, clip, onto, unit, in_unit;
  double fps = 0;
};

bool is_gltf_family(const std::string& ext) {
  return ext == "gltf" || ext == "glb" || ext == "vrm";
}

int convert(const ConvertArgs& a, const GlobalOptions& global) {
  const std::string out_ext = extension_of(a.out);
  const std::string in_ext = extension_of(a.in);
  // Refuse what cannot work before reading anything.
  if (same_file(a.in, a.out))
    throw UsageError("OUT is the same file as IN (" + a.out +
                     "); kinema never overwrites its input — choose another OUT");
  if (!a.onto.empty() && same_file(a.onto, a.out))
    throw UsageError("OUT is the same file as the --onto avatar (" + a.out +
                     "); choose another OUT");
  std::error_code ec;
  if (std::filesystem::is_directory(a.out, ec))
    throw UsageError("OUT " + a.out + " is a folder; give a file name such as " +
                     (std::filesystem::path(a.out) / "out.glb").string());
  if (out_ext != "bvh" && !is_gltf_family(out_ext))
    throw Error(a.out, "",
                "cannot write '." + out_ext + "' files (kinema writes .bvh .gltf .glb .vrm)");

  // --unit names the unit of the BVH side: the one written, else the one read.
  std::optional<double> write_unit, read_unit;
  if (!a.unit.empty()) {
    if (out_ext == "bvh")
      write_unit = unit_from_name(a.unit);
    else if (in_ext == "bvh")
      read_unit = unit_from_name(a.unit);
    else
      throw UsageError("--unit applies to BVH files, and neither IN nor OUT is a .bvh");
  }
  if (!a.in_unit.empty()) {
    if (in_ext != "bvh") throw UsageError("--in-unit applies to a .bvh IN only");
    read_unit = unit_from_name(a.in_unit);
  }

  LoadOptions load = global.load;
  if (read_unit) load.bvh.unit_in_meters = read_unit;
  Asset asset = load_input(a.in, load);

  const bool clip_given = !a.clip.empty();
  int clip = clip_given ? find_clip(asset, a.clip, a.in) : 0;

  Asset result;
  if (!a.onto.empty()) {
    if (asset.clips.empty()) throw Error(a.in, "", "has no animation to retarget");
    Asset avatar = load_input(a.onto, global.load);
    Clip moved = retarget_humanoid(asset, clip, avatar);
    if (moved.name.empty()) moved.name = asset.clips[static_cast<size_t>(clip)].name;
    result = std::move(avatar);
    result.clips.clear();
    result.clips.push_back(std::move(moved));
    clip = 0;
  } else {
    result = std::move(asset);
  }

  const bool has_clip = clip < static_cast<int>(result.clips.size());
  if (a.fps > 0 && has_clip && out_ext != "bvh") {
    Clip& c = result.clips[static_cast<size_t>(clip)];
    c = resample(c, result.skeleton, a.fps);
    c.sample_rate = a.fps;
  }

  if (out_ext == "bvh") {
    // Without a clip the skeleton goes out in its rest pose as a single frame (a BVH needs a
    // MOTION section); that is how a rigged avatar's skeleton reaches BVH-only tools.
    BvhWriteOptions options;
    options.clip = clip;
    options.unit_in_meters = write_unit;
    if (has_clip)
      options.frame_rate =
          a.fps > 0 ? a.fps : frame_rate_of(result.clips[static_cast<size_t>(clip)]);
    else if (!global.quiet)
      std::fprintf(stderr,
                   "kinema: note: %s has no animation; writing its rest pose as one frame\n",
                   a.in.c_str());
    write_bvh(result, a.out, options);
  } else {
    GltfWriteOptions options;
    options.binary = out_ext != "gltf";
    options.vrm = out_ext == "vrm";
    if (has_clip && (clip_given || !a.onto.empty())) options.clips = {clip};
    write_gltf(result, a.out, options);
  }

  if (!global.quiet) {
    std::cout << "wrote " << a.out << ": " << result.skeleton.joint_count() << " joints";
    if (has_clip) {
      const Clip& c = result.clips[static_cast<size_t>(clip)];
      const double rate = a.fps > 0 ? a.fps : frame_rate_of(c);
      const long frames = rate > 0 ? std::lround(c.duration * rate) + 1 : c.frame_count();
      std::cout << ", " << frames << " frames, " << format_number(c.duration, 3) << " s";
      if (rate > 0) std::cout << " at " << format_number(rate, 3) << " fps";
      if (!c.name.empty()) std::cout << " (clip \"" << c.name << "\")";
      if (!a.onto.empty()) std::cout << ", retargeted onto " << a.onto;
    } else {
      std::cout << ", no animation";
    }
    std::cout << '\n';
  }
  return kExitOk;
}

}  // namespace

VerbRun register_convert(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<ConvertArgs>();
  CLI::App* sub = app.add_subcommand(
      "convert",
      "Convert between formats by extension: reads .bvh .gltf .glb .vrm .fbx .dae, writes .bvh "
      ".gltf .glb .vrm");
  sub->add_option("IN", args->in, "The file to read (never modified)")->required();
  sub->add_option("OUT", args->out, "The file to write (atomically; must differ from IN)")
      ->required();
  sub->add_option("--clip", args->clip,
                  "The clip to convert, by name or index (default: the first; glTF output "
                  "keeps all clips unless this is given)");
  sub->add_option("--onto", args->onto,
                  "Retarget the clip onto this avatar (.vrm/.glb/...) by humanoid bone names and "
                  "write the avatar with the new clip");
  sub->add_option("--fps", args->fps, "Resample to this frame rate")
      ->check(CLI::Range(0.001, 10000.0));
  const auto units = CLI::IsMember({"m", "cm", "mm", "inch", "cmu"});
  sub->add_option("--unit", args->unit,
                  "Length unit of the BVH side: the unit written when OUT is .bvh, else the "
                  "unit IN.bvh is read in (overrides detection). cmu = CMU ASF unit (5.644 cm)")
      ->check(units);
  sub->add_option("--in-unit", args->in_unit,
                  "Length unit IN.bvh is read in (overrides detection), for .bvh → .bvh")
      ->check(units);
  return [args, &global]() { return convert(*args, global); };
}

}  // namespace kinema::cli
