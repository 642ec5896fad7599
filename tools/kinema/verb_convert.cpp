// tools/kinema/verb_convert.cpp — `kinema convert IN OUT [--clip C] [--onto AVATAR] [--fps N]
// [--unit U] [--in-unit U]`.
//
// Parses the options and runs pipeline::convert_file (kinema/pipeline/convert.h): between the
// formats by extension (reads .bvh .gltf .glb .vrm .vrma .fbx .dae, writes .bvh .gltf .glb .vrm
// .vrma .fbx); with --onto the clip is retargeted by humanoid bone names onto the avatar. Writes
// are atomic, so a failure leaves no OUT (or the previous OUT) and IN is only read.
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "cli.h"
#include "kinema/core/units.h"
#include "kinema/pipeline/convert.h"

namespace kinema::cli {

namespace {

struct ConvertArgs {
  std::string in, out, clip, onto, unit, in_unit;
  double fps = 0;
};

int convert(const ConvertArgs& a, const GlobalOptions& global) {
  pipeline::ConvertRequest request;
  request.in = a.in;
  request.out = a.out;
  request.clip = a.clip;
  request.onto = a.onto;
  request.fps = a.fps;
  request.load = global.load;
  // --unit names the unit of the BVH side: the one written, else the one read.
  if (!a.unit.empty()) {
    if (extension_of(a.out) == "bvh")
      request.bvh_unit = metres_per_unit(a.unit);
    else if (extension_of(a.in) == "bvh")
      request.load.bvh.unit_in_meters = metres_per_unit(a.unit);
    else
      throw UsageError("--unit applies to BVH files, and neither IN nor OUT is a .bvh");
  }
  if (!a.in_unit.empty()) {
    if (extension_of(a.in) != "bvh") throw UsageError("--in-unit applies to a .bvh IN only");
    request.load.bvh.unit_in_meters = metres_per_unit(a.in_unit);
  }
  const pipeline::ConvertResult r = pipeline::convert_file(request);

  if (global.quiet) return kExitOk;
  if (r.rest_pose_only)
    std::fprintf(stderr, "kinema: note: %s has no animation; writing its rest pose as one frame\n",
                 a.in.c_str());
  std::cout << "wrote " << a.out << ": " << r.written.skeleton.joint_count() << " joints";
  if (r.clip >= 0) {
    const Clip& c = r.written.clips[static_cast<size_t>(r.clip)];
    std::cout << ", " << r.frames << " frames, " << format_number(c.duration, 3) << " s";
    if (r.rate > 0) std::cout << " at " << format_number(r.rate, 3) << " fps";
    if (!c.name.empty()) std::cout << " (clip \"" << c.name << "\")";
    if (r.retargeted) std::cout << ", retargeted onto " << a.onto;
  } else {
    std::cout << ", no animation";
  }
  std::cout << '\n';
  return kExitOk;
}

}  // namespace

VerbRun register_convert(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<ConvertArgs>();
  CLI::App* sub = app.add_subcommand(
      "convert",
      "Convert between formats by extension: reads .bvh .gltf .glb .vrm .fbx .dae, writes .bvh "
      ".gltf .glb .vrm .vrma .fbx");
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
