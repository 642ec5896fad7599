// tools/kinema/verb_render_crowd.cpp — `kinema render SCENE.json [--lod-colours] [--size WxH]
// [--fps F] [--contact-sheet N] -o OUT.png|OUT.mp4` (render_crowd.h): a crowd scene
// (docs/crowds.md) drawn as `kinema crowd SCENE.json -o OUT.png|OUT.mp4` draws it — the agents
// walked, the scene's characters animated and drawn at their LOD tiers (GPU instancing; with
// --lod-colours each tier in its colour) among its obstacles and ground — with the same summary.
//
// Exit codes: 1 for render's options that make no sense for a scene (--clip, --camera, --plate…)
// and for an OUT that is not a picture (.pc2 and .glb go to `kinema crowd`); 2 for a scene that
// cannot be read, walked or drawn (kinema crowd's errors, named by the scene's JSON pointer);
// nothing is written then.
#include <algorithm>
#include <iostream>
#include <iterator>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "cli.h"
#include "kinema/core/file.h"
#include "kinema/pipeline/crowd.h"
#include "render_crowd.h"

namespace kinema::cli {

void add_render_crowd_options(CLI::App& render) {
  render.add_flag("--lod-colours")
      ->description(
          "A crowd scene (.json): colour the characters by LOD tier — near green, mid yellow, "
          "far (VAT) orange, farthest (impostor) red");
}

std::optional<int> render_crowd_scene(const CLI::App& render, const GlobalOptions& global) {
  const auto given = [&](const char* name) { return render.count(name) > 0; };
  const auto value = [&](const char* name) { return render.get_option(name)->as<std::string>(); };
  const bool lod_colours = given("--lod-colours");
  const std::string in = value("FILE"), out = value("--out");
  if (extension_of(in) != "json") {
    if (lod_colours)
      throw UsageError(
          "render: --lod-colours colours a crowd's LOD tiers: FILE must be a crowd scene (.json)");
    return std::nullopt;
  }
  static constexpr std::string_view kSceneOptions[] = {"FILE",  "--out",           "--size",
                                                       "--fps", "--contact-sheet", "--lod-colours"};
  for (const CLI::Option* o : render.get_options()) {
    const std::string name = o->get_name();
    if (o->count() > 0 && std::find(std::begin(kSceneOptions), std::end(kSceneOptions), name) ==
                              std::end(kSceneOptions))
      throw UsageError("render: " + name + " makes no sense for a crowd scene (" + in +
                       "), drawn as `kinema crowd` draws it: -o OUT.png|OUT.mp4 with --size, "
                       "--fps, --contact-sheet and --lod-colours only");
  }
  const std::string ext = extension_of(out);
  if (ext == "pc2" || ext == "glb" || ext == "gltf")
    throw UsageError("render: " + out + " is not a picture; `kinema crowd " + in + " -o " + out +
                     "` writes the walk as a point cache (.pc2) or a glTF scene");
  if ((ext != "png" && ext != "mp4") || out.find('%') != std::string::npos)
    throw UsageError("render: " + out +
                     ": a crowd scene is drawn into one .png (a contact sheet) or an .mp4");
  pipeline::CrowdRequest request;
  request.scene = in;
  request.out = out;
  if (given("--size")) parse_size(value("--size"), request.width, request.height);
  if (given("--fps")) request.fps = render.get_option("--fps")->as<double>();
  if (given("--contact-sheet"))
    request.sheet_frames = render.get_option("--contact-sheet")->as<int>();
  request.lod_colours = lod_colours;
  JobProgress bars(global.progress_enabled());
  request.progress = bars.callback();
  const pipeline::CrowdReport report = pipeline::run_crowd(request);
  bars.done();
  if (!global.quiet) {
    std::cout << "kinema render: ";
    print_crowd(report, "  ", std::cout);
  }
  return kExitOk;
}

}  // namespace kinema::cli
