// tools/kinema/verb_render.cpp — `kinema render FILE [--clip NAME] [--time T | --frames A:B]
// [--size WxH] [--camera orbit|follow|front|above | --eye X,Y,Z --target X,Y,Z [--fov DEG]
// [--camera-up X,Y,Z]] [--skinning lbs|dqs] [--contact-sheet N] [--no-ground] [--no-skeleton]
// [--transparent] [--light X,Y,Z] [--light-irradiance R,G,B] [--environment PROBE]
// [--particle-size M] [--particle-blend alpha|add] [--strand-width M] [--strand-colour R,G,B]
// -o out.png | out_%04d.png | out.mp4`. FILE (or a --with) may be a particle point cache (.pc2):
// its points drawn as billboards, or as strands when an OBJ with `l` lines lies beside it (hair);
// or a smoke/fire volume, .vdb or smoke_%04d.vdb ([--fps F] [--extinction S] [--fire I]); or a
// crowd scene (.json [--lod-colours]), drawn as `kinema crowd` draws it (verb_render_crowd.cpp).
// Over live action: `kinema render FILE --plate PLATE --camera-solve SOLVE.json
// [--place X,Y,Z[,YAW_DEG[,SCALE]]] [--plate-start N] [--fps F] [--clip NAME] [--time T |
// --frames A:B] [--skinning lbs|dqs] [--msaa N] -o out.png|out.exr | out_%04d.png|out.####.exr |
// out.mp4`: the character through each solved camera and lens, over the plate's frames.
//
// Parses the options and runs pipeline::render_file (kinema/pipeline/render.h): draws the asset
// with the render module (OpenGL 4.5 through EGL: a GPU when present, else Mesa's llvmpipe). One
// PNG holds one frame (--time, default 0) or a contact sheet; a pattern with %d writes one PNG per
// frame; .mp4 pipes raw RGBA frames to the ffmpeg program. Nothing is written until every frame is
// rendered (PNGs are encoded in memory first, the MP4 goes to a temporary file renamed at the end),
// so a failure leaves no partial output.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "cli.h"
#include "kinema/pipeline/render.h"
#include "render_crowd.h"

namespace kinema::cli {

namespace {

struct RenderArgs {
  std::string in, out, clip, frames, size = "640x480", camera = "follow", skinning = "lbs",
                                     particle_blend = "alpha";
  float particle_size = 0.03f;
  float strand_width = 0.002f;
  std::vector<float> strand_colour;
  std::vector<std::string> with;
  std::optional<double> time;
  int contact_sheet = 0;
  int msaa = 4;
  // The look.
  bool no_materials = false, no_outlines = false, no_shadows = false, shadow_catcher = false;
  std::string light, environment;
  std::vector<float> light_irradiance;
  bool no_ground = false, no_skeleton = false, transparent = false;
  // A fixed camera.
  std::string eye, target, camera_up;
  std::optional<float> fov;
  // Over a plate.
  std::string plate, camera_solve, place, up;
  std::optional<int> plate_start;
  std::optional<double> fps;
  std::optional<float> extinction, fire;  // volumes
  bool camera_given = false, size_given = false;
};

int render(const RenderArgs& a, const GlobalOptions& global) {
  pipeline::RenderRequest request;
  request.in = a.in;
  request.with = a.with;
  request.out = a.out;
  request.clip = a.clip;
  request.time = a.time;
  request.contact_sheet = a.contact_sheet;
  parse_size(a.size, request.options.target.width, request.options.target.height);
  request.options.target.samples = a.msaa;
  request.options.camera = a.camera == "orbit"   ? CameraMode::Orbit
                           : a.camera == "front" ? CameraMode::Front
                           : a.camera == "above" ? CameraMode::Above
                                                 : CameraMode::Follow;
  if (!a.eye.empty() || !a.target.empty()) {
    if (a.camera_given)
      throw UsageError("--eye and --target place the camera themselves: drop --camera");
    if (!a.plate.empty())
      throw UsageError("--eye and --target: with --plate the camera solve's cameras draw it");
    request.options.camera = CameraMode::Fixed;
    request.options.fixed_camera = pipeline::fixed_camera(a.eye, a.target, a.camera_up, a.fov);
  } else if (a.fov || !a.camera_up.empty()) {
    throw UsageError("--fov and --camera-up go with a fixed camera: --eye X,Y,Z --target X,Y,Z");
  }
  request.options.skinning = a.skinning == "dqs" ? SkinningMethod::Dqs : SkinningMethod::Lbs;
  request.options.billboard_blend =
      a.particle_blend == "add" ? BillboardBlend::Additive : BillboardBlend::Alpha;
  request.particle_size = a.particle_size;
  request.strand_width = a.strand_width;
  if (!a.strand_colour.empty())
    request.strand_colour = {a.strand_colour[0], a.strand_colour[1], a.strand_colour[2]};
  if (!a.frames.empty()) {
    const size_t colon = a.frames.find(':');
    if (colon == std::string::npos || !parse_int(a.frames.substr(0, colon), request.first_frame) ||
        !parse_int(a.frames.substr(colon + 1), request.last_frame) || request.first_frame < 0 ||
        request.last_frame < request.first_frame)
      throw UsageError("--frames " + a.frames + ": expected A:B with 0 ≤ A ≤ B, e.g. 0:120");
  }
  request.options.materials = !a.no_materials;
  request.options.outlines = !a.no_outlines;
  request.options.shadows = !a.no_shadows;
  request.options.shadow_catcher = a.shadow_catcher;
  if (!a.light.empty())
    request.options.light_direction = Vec3f(pipeline::parse_direction(a.light, "--light"));
  for (const float e : a.light_irradiance)
    if (!std::isfinite(e))
      throw UsageError("--light-irradiance must be three finite numbers ≥ 0 (linear RGB)");
  if (!a.light_irradiance.empty())
    request.options.light_irradiance = {a.light_irradiance[0], a.light_irradiance[1],
                                        a.light_irradiance[2]};
  request.options.ground = !a.no_ground;
  request.options.skeleton = !a.no_skeleton;
  request.options.transparent_background = a.transparent;
  if (!a.plate.empty() && (a.no_ground || a.transparent))
    throw UsageError(
        "--no-ground and --transparent: over a plate the frames are the plate with the "
        "character on it (drop them)");
  request.environment = a.environment;
  request.plate = a.plate;
  request.camera_solve = a.camera_solve;
  if (!a.place.empty()) request.place = pipeline::parse_placement(a.place);
  if (!a.up.empty()) request.place.up = pipeline::parse_direction(a.up, "--up");
  if (a.plate.empty() && !a.up.empty())
    throw UsageError("--up is the camera solve's up direction: it goes with --plate");
  request.plate_start = a.plate_start;
  request.fps = a.fps;
  if (a.extinction) request.volume.extinction = *a.extinction;
  if (a.fire) request.volume.emission.intensity = *a.fire;
  if (!a.plate.empty() && a.camera_given)
    throw UsageError(
        "--camera frames the character itself; with --plate the camera solve's "
        "cameras draw it (drop --camera)");
  if (!a.plate.empty() && a.size_given)
    throw UsageError(
        "--size: with --plate the frames are the plate's (and the solve's) size; "
        "drop --size");
  request.load = global.load;
  JobProgress progress(global.progress_enabled());
  const pipeline::RenderResult r = pipeline::render_file(request, progress.callback());
  progress.done();
  if (!global.quiet)
    std::cout << "rendered " << r.frames << (r.frames == 1 ? " frame " : " frames ") << r.width
              << "x" << r.height << " in " << format_number(r.seconds, 2) << " s ("
              << format_number(double(r.frames) / std::max(r.seconds, 1e-9), 1) << " fps) on "
              << r.gl_renderer << " → " << a.out << "\n";
  if (!global.quiet && !request.plate.empty()) {
    if (r.cg_width != r.width || r.cg_height != r.height)
      std::cout << "  drawn as a " << r.cg_width << "x" << r.cg_height
                << " pinhole (the lens reaches past the plate's frame), bent through the solved "
                   "lens\n";
    if (r.unsolved_frames > 0)
      std::cout << "  " << r.unsolved_frames
                << (r.unsolved_frames == 1 ? " frame has" : " frames have")
                << " no solved camera: written as the plate alone\n";
  }
  return kExitOk;
}

}  // namespace

VerbRun register_render(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<RenderArgs>();
  CLI::App* sub = app.add_subcommand(
      "render",
      "Draw a character (skinned meshes, or capsules for a bare skeleton) on a ground grid: one "
      "PNG, a contact sheet, numbered PNGs or an MP4 (needs ffmpeg); or, with --plate and "
      "--camera-solve, through a matchmoved camera over live-action frames. OpenGL 4.5 through "
      "EGL: a GPU when present, else Mesa's llvmpipe");
  sub->add_option("FILE", args->in,
                  "The file to draw (.bvh .gltf .glb .vrm .fbx .dae), a point cache (.pc2, "
                  "from `kinema sim`): particles drawn as billboards, hair (an OBJ of lines "
                  "beside it) as strands, or smoke/fire: an OpenVDB file or smoke_%04d.vdb; or a "
                  "crowd scene (.json, docs/crowds.md), drawn as `kinema crowd` draws it")
      ->required();
  sub->add_option("-o,--out", args->out,
                  "out.png (one frame, or a contact sheet), out_%04d.png (one per frame) or "
                  "out.mp4; with --plate also .exr (linear) and out.####.exr")
      ->required();
  sub->add_option("--clip", args->clip, "The clip, by name or index (default: the first)");
  sub->add_option(
      "--with", args->with,
      "Another file drawn with FILE, playing its first clip (e.g. the cloth `kinema "
      "sim` made around the character), a particle or hair cache (.pc2), a volume (.vdb, "
      "smoke_%04d.vdb) or an OBJ drawn as a still prop (the ground a `kinema gait` walk "
      "climbs); repeatable");
  auto* time =
      sub->add_option("--time", args->time, "The time of a single frame, seconds (default 0)");
  auto* frames = sub->add_option("--frames", args->frames,
                                 "Frames A:B (inclusive, at the clip's rate; default: all)");
  time->excludes(frames);
  sub->add_option("--size", args->size, "Image (or tile) size WxH (default 640x480)");
  sub->add_option("--camera", args->camera,
                  "orbit (circles the character), follow (3/4 view following it; default), "
                  "front (fixed, framing the whole clip) or above (fixed, 60° down from the "
                  "front: crowds, flocks); or a fixed camera: --eye and --target")
      ->check(CLI::IsMember({"orbit", "follow", "front", "above"}));
  sub->add_option("--eye", args->eye,
                  "X,Y,Z: a fixed camera's position, world metres (+Y up; characters face +Z, "
                  "VRM 0.x files as stored: −Z); with --target, instead of --camera");
  sub->add_option("--target", args->target, "X,Y,Z: the point the fixed camera looks at");
  sub->add_option("--fov", args->fov,
                  "The fixed camera's vertical field of view, degrees (default 35)");
  sub->add_option("--camera-up", args->camera_up,
                  "X,Y,Z: the fixed camera's up direction (default 0,1,0)");
  sub->add_flag("--no-ground", args->no_ground, "Leave out the ground grid");
  sub->add_flag("--no-skeleton", args->no_skeleton,
                "When no mesh is skinned (a BVH, gizmos on joints), draw only the meshes, not "
                "the bones as capsules");
  sub->add_flag("--transparent", args->transparent,
                "Clear to transparent instead of the backdrop: PNG alpha is the coverage, the "
                "colour premultiplied (not with .mp4)");
  sub->add_option("--skinning", args->skinning, "lbs (default) or dqs")
      ->check(CLI::IsMember({"lbs", "dqs"}));
  sub->add_option("--contact-sheet", args->contact_sheet,
                  "Tile N frames spread over the clip (or --frames) into one PNG")
      ->check(CLI::Range(1, 256));
  sub->add_option("--particle-size", args->particle_size,
                  "Particles' width in metres, times their size curve (default 0.03)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--particle-blend", args->particle_blend,
                  "alpha (particles over what is behind them; default) or add (light adds up: "
                  "sparks, fire)")
      ->check(CLI::IsMember({"alpha", "add"}));
  sub->add_option("--strand-width", args->strand_width,
                  "Hair strands' width in metres (a cache with an OBJ of lines beside it; default "
                  "0.002, at least a pixel)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--strand-colour", args->strand_colour,
                  "Hair strands' colour, linear RGB R,G,B ≥ 0 (default 0.25,0.13,0.06: brown)")
      ->expected(3)
      ->delimiter(',')
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--msaa", args->msaa, "Multisample anti-aliasing samples (1: off; default 4)")
      ->check(CLI::Range(1, 16));
  sub->add_flag("--no-materials", args->no_materials,
                "Draw every mesh in one flat colour instead of the materials its file defines "
                "(textures, alpha modes, VRM MToon)");
  sub->add_flag("--no-outlines", args->no_outlines, "Leave out VRM MToon outlines");
  sub->add_flag("--no-shadows", args->no_shadows,
                "No shadow map: the key light casts no shadow (over a plate: no shadow catcher)");
  sub->add_flag("--shadow-catcher", args->shadow_catcher,
                "The ground shows only the character's shadow, as black with alpha (with a "
                "transparent background, a layer to composite over a plate)");
  sub->add_option("--light", args->light,
                  "X,Y,Z: the direction towards the key light (default 0.35,0.85,0.45; over a "
                  "plate, in the camera solve's world)");
  sub->add_option("--light-irradiance", args->light_irradiance,
                  "R,G,B: the key light's irradiance on a surface facing it, linear ≥ 0 (default "
                  "2.67,2.54,2.35, i.e. 0.85π·(1,0.95,0.88); a white Lambertian surface facing "
                  "it shows E/π)")
      ->expected(3)
      ->delimiter(',')
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--environment", args->environment,
                  "A light probe lighting the character: an equirectangular .hdr, .exr or .png "
                  "(default: a sky above, warm ground below)");
  sub->add_option("--plate", args->plate,
                  "Live-action frames to draw over: plate.####.png or plate_%04d.exr, or one "
                  "image for a locked-off shot; with --camera-solve. Frame i is plate frame "
                  "--plate-start + i through solve camera i, the clip at i / fps; output frames "
                  "are numbered as the plate's. Not with --camera, --size, --with or "
                  "--contact-sheet");
  sub->add_option("--camera-solve", args->camera_solve,
                  "The camera solve `kinema solve` wrote for the plate (its size must be the "
                  "plate's); the character is drawn through each solved camera and bent "
                  "through the solved lens");
  sub->add_option("--place", args->place,
                  "X,Y,Z[,YAW_DEG[,SCALE]]: the character's origin in the solve's world, its turn "
                  "about +Y (degrees) and a uniform scale (default 0,0,0,0,1). Unless aligned, a "
                  "solve is in its own units, +Y pointing down its first camera's image");
  sub->add_option("--up", args->up,
                  "X,Y,Z: the camera solve's up direction, where the character's +Y points "
                  "(default 0,1,0; an unaligned `kinema solve` has +Y down its first camera's "
                  "image: 0,-1,0)");
  sub->add_option("--plate-start", args->plate_start,
                  "The plate frame matching solve camera 0 (default: the sequence's first frame "
                  "on disk)");
  sub->add_option("--fps", args->fps,
                  "The plate's frames a second: frame i shows the clip at i / fps (default: the "
                  "clip's rate, else 30); the MP4's rate; or a .vdb sequence's (default 24)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--extinction", args->extinction,
                  "Volumes: extinction per unit density σ_t, 1/m (default 5)");
  sub->add_option("--fire", args->fire,
                  "Volumes: emitted radiance per metre of their flame or temperature (at "
                  "1500 K; default 10; 0: no fire)");
  add_render_crowd_options(*sub);
  return [args, sub, &global]() {
    if (const std::optional<int> code = render_crowd_scene(*sub, global)) return *code;
    args->camera_given = sub->count("--camera") > 0;
    args->size_given = sub->count("--size") > 0;
    return render(*args, global);
  };
}

}  // namespace kinema::cli
