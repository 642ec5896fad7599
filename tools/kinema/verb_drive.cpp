// tools/kinema/verb_drive.cpp — `kinema drive IN --joint NAME (--rotate x|y|z | --translate
// x|y|z) EXPRESSION -o OUT [--clip NAME] [--fps N] [--json]`.
//
// Parses the options and runs pipeline::run_drive_file (kinema/pipeline/drive.h,
// docs/procedural.md): one channel of a joint keyed at every frame from an expression over the
// clip's time and its joints' translations, positions and distances travelled (`car_dist / 0.3`
// turns a wheel of 0.3 m by the distance the joint `car` travelled).
//
// Exit codes: 1 for a command line that makes no sense (OUT not a writable kind or IN itself, an
// unknown clip, neither or both of --rotate and --translate); 2 for bad input (unreadable IN, no
// such joint, an expression that does not parse — its column is printed — or a value that is not
// finite), with nothing written.
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "kinema/pipeline/drive.h"

namespace kinema::cli {

namespace {

struct DriveArgs {
  pipeline::DriveRequest request;
  std::string rotate, translate;
  bool json = false;
};

int run_drive(DriveArgs& a, const GlobalOptions& global) {
  if (a.rotate.empty() == a.translate.empty())
    throw UsageError("drive: give one of --rotate AXIS and --translate AXIS");
  const std::string& axis = a.rotate.empty() ? a.translate : a.rotate;
  const int k = axis == "x" ? 0 : axis == "y" ? 1 : 2;
  a.request.channel = DrivenChannel((a.rotate.empty() ? 3 : 0) + k);
  a.request.load = global.load;
  const pipeline::DriveResult r = pipeline::run_drive_file(a.request);
  if (a.json) {
    nlohmann::ordered_json j;
    j["in"] = a.request.in;
    j["out"] = a.request.out;
    j["clip"] = r.clip;
    j["joint"] = a.request.joint;
    j["channel"] = (a.rotate.empty() ? "translate " : "rotate ") + axis;
    j["expression"] = a.request.expression;
    j["keys"] = r.keys;
    std::cout << j.dump(2) << '\n';
  } else if (!global.quiet) {
    std::cout << "kinema drive: " << a.request.joint << " "
              << (a.rotate.empty() ? "translate " : "rotate ") << axis << " = "
              << a.request.expression << " on clip \"" << r.clip << "\", " << r.keys << " keys\n  "
              << a.request.out << '\n';
  }
  return kExitOk;
}

}  // namespace

VerbRun register_drive(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<DriveArgs>();
  pipeline::DriveRequest& r = args->request;
  CLI::App* drive = app.add_subcommand(
      "drive",
      "Key one channel of a joint from an expression over the clip's own motion (a driver): "
      "variables t, frame, and per joint NAME_tx/_ty/_tz, NAME_px/_py/_pz, NAME_dist");
  drive->add_option("IN", r.in, "A file with a skeleton and a clip (.glb .gltf .vrm .bvh .fbx)")
      ->required();
  drive
      ->add_option("EXPRESSION", r.expression, "The value: radians for --rotate, m for --translate")
      ->required();
  drive->add_option("-o,--out", r.out, "The file to write (.glb .gltf .vrm .bvh)")->required();
  drive->add_option("--joint", r.joint, "The driven joint")->required();
  drive->add_option("--rotate", args->rotate, "Turn about this local axis, added to the animation")
      ->check(CLI::IsMember({"x", "y", "z"}));
  drive->add_option("--translate", args->translate, "Set this local translation component")
      ->check(CLI::IsMember({"x", "y", "z"}));
  drive->add_option("--clip", r.clip, "The clip, by name or index (default: the first)");
  drive->add_option("--fps", r.fps, "Keys a second (default: the clip's rate, else 30)")
      ->check(CLI::Range(0.01, 1000.0));
  drive->add_flag("--json", args->json, "Print the summary as one JSON object");
  return [args, &global]() { return run_drive(*args, global); };
}

}  // namespace kinema::cli
