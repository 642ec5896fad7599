// `kinema demo`'s pictures (demo_steps.h): contact sheets of the steps' outputs — the skinned
// walk, motion matching, cloth, the cape and bodies on the walk, the crowd and its LOD tiers, the
// walks on the stairs, the dam break — each reported, or skipped with the reason when there is no
// OpenGL.
#include <algorithm>
#include <optional>

#include "demo_steps.h"
#include "kinema/character/merge.h"
#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/pipeline/crowd.h"
#include "kinema/render/clip_render.h"

namespace kinema::pipeline::demo_detail {

/// Contact sheets of the skinned character walking (LBS and DQS), the motion-matched walk and run
/// and the walk on the stairs, rendered headless (EGL: a GPU when there is one, else llvmpipe).
void Demo::render() {
  struct Sheet {
    const Asset* asset;
    std::string name;
    SkinningMethod skinning;
    std::string what;
    CameraMode camera = CameraMode::Follow;
  };
  std::vector<Sheet> sheets;
  if (retargeted_ && !retargeted_->meshes.empty()) {
    sheets.push_back({&*retargeted_, "character_walk_lbs.png", SkinningMethod::Lbs,
                      "the character's skinned mesh, linear blend skinning"});
    sheets.push_back({&*retargeted_, "character_walk_dqs.png", SkinningMethod::Dqs,
                      "the same frames, dual-quaternion skinning"});
  }
  const auto written = [&](const fs::path& p) {
    return std::find(produced_.begin(), produced_.end(), p.string()) != produced_.end();
  };
  std::optional<Asset> matched;
  if (const fs::path p = out_dir_ / "motion_matching.glb"; written(p)) {
    matched = load_asset(p.string());
    sheets.push_back({&*matched, "motion_matching.png", SkinningMethod::Lbs,
                      "the motion-matched walk and run, bones as capsules"});
  }
  std::optional<Asset> learned;
  if (const fs::path p = out_dir_ / "learned_motion_matching.glb"; written(p)) {
    learned = load_asset(p.string());
    sheets.push_back({&*learned, "learned_motion_matching.png", SkinningMethod::Lbs,
                      "the same stick with the learned model, bones as capsules"});
  }
  std::optional<Asset> springs;
  if (retargeted_file_.size()) {
    const fs::path p = out_dir_ / (fs::path(retargeted_file_).stem().string() + "_springs.glb");
    if (written(p)) {
      springs = load_asset(p.string());
      sheets.push_back({&*springs, p.stem().string() + ".png", SkinningMethod::Lbs,
                        "the walk with the character's spring bones baked in (hair, ribbon)"});
    }
  }
  std::optional<Asset> fallen;
  if (const fs::path p = out_dir_ / "ragdoll.glb"; written(p)) {
    fallen = load_asset(p.string());
    sheets.push_back({&*fallen, "ragdoll.png", SkinningMethod::Lbs,
                      "the walk hit in the face, falling as a powered ragdoll", CameraMode::Front});
  }
  std::optional<Asset> cloth;
  if (const fs::path p = out_dir_ / "cloth_drape.glb"; written(p)) {
    cloth = load_asset(p.string());
    sheets.push_back({&*cloth, "cloth_drape.png", SkinningMethod::Lbs,
                      "the cloth falling onto the sphere (a morph target per frame)"});
  }
  std::optional<Asset> caped;
  if (const fs::path p = out_dir_ / "cape.glb"; written(p)) {
    const Asset character = load_asset((out_dir_ / "cape_character.glb").string());
    const Asset cape = load_asset(p.string());
    caped = merge_assets(character, 0, cape, 0);
    sheets.push_back({&*caped, "cape.png", SkinningMethod::Lbs,
                      "the cape on the walking character, seen from around her",
                      CameraMode::Orbit});
  }
  // The bodies scene: the character, the jelly, the sparks (billboards), the hair (strands) and
  // the rigid bodies (crates knocked over by a ball).
  std::vector<std::string> bodies;
  if (const fs::path p = out_dir_ / "bodies.glb"; written(p)) {
    bodies = {(out_dir_ / "bodies_character.glb").string(), p.string()};
    if (const fs::path sparks = out_dir_ / "bodies_particles.pc2"; written(sparks))
      bodies.push_back(sparks.string());
    if (const fs::path hair = out_dir_ / "bodies_hair.pc2"; written(hair))
      bodies.push_back(hair.string());  // strands: its .obj beside it has the segments
    if (const fs::path rigid = out_dir_ / "bodies_rigid.glb"; written(rigid))
      bodies.push_back(rigid.string());  // the crates and the ball
  }
  if (!sheets.empty() || !bodies.empty() || written(out_dir_ / "crowd.pc2") ||
      written(out_dir_ / "dam_break_surface.glb") || written(out_dir_ / "smoke_0000.vdb") ||
      written(out_dir_ / "walk_stairs.glb") || written(out_dir_ / "gait_spider.glb"))
    report(DemoEvent::Phase::Started, DemoSheet{});
  for (const Sheet& sheet : sheets) {
    if (sheet.asset->clips.empty()) continue;
    ClipRenderOptions options;
    options.target.width = 320;
    options.target.height = 240;
    options.camera = sheet.camera;
    options.skinning = sheet.skinning;
    DemoSheet step{output(sheet.name), sheet.what, "", ""};
    try {
      step.gl_renderer = render_contact_sheet_to_png(*sheet.asset, 0, 6, options, step.png);
      produced(step.png);
    } catch (const Error& e) {
      // No OpenGL here (no EGL driver): the rest of the demo stands; say why there is no picture.
      step.skipped = e.what();
      step.png = sheet.name;
    }
    report(DemoEvent::Phase::Done, step);
  }
  if (const fs::path crowd = out_dir_ / "crowd.pc2"; written(crowd)) {
    RenderRequest request;
    request.in = crowd.string();
    request.out = output("crowd.png");
    request.contact_sheet = 6;
    request.options.target.width = 320;
    request.options.target.height = 240;
    request.options.camera = CameraMode::Above;
    request.particle_size = 0.6f;  // an agent's shoulders
    render_sheet(request, "crowd.png", "the crowd crossing the square, seen from above");
  }
  // The crowd's characters: a contact sheet of them crossing, and the same with each LOD tier in
  // its colour (near green, mid yellow, far orange, farthest red).
  if (written(out_dir_ / "crowd.pc2")) {
    for (const bool colours : {false, true}) {
      CrowdRequest request;
      request.scene = bundled_file("crowd_square.json").string();
      const std::string name = colours ? "crowd_lod.png" : "crowd_characters.png";
      request.out = output(name);
      request.seconds = 60;
      request.width = 480;
      request.height = 270;
      request.sheet_frames = 6;
      request.lod_colours = colours;
      request.progress = progress_;
      DemoSheet step{request.out,
                     colours ? "the crowd's LOD tiers: near green, mid yellow, far (VAT) orange, "
                               "farthest (impostor) red"
                             : "1,000 characters crossing the square (skinned, VAT and impostor "
                               "tiers cross-faded)",
                     "", ""};
      try {
        step.gl_renderer = run_crowd(request).gl_renderer;
        produced(step.png);
      } catch (const Error& e) {
        step.skipped = e.what();
        step.png = name;
      }
      report(DemoEvent::Phase::Done, step);
    }
  }
  // Walks on the stairs, drawn with the stairs: the clip placed by foot IK, then the gaits.
  struct OnStairs {
    const char* name;
    const char* what;
  };
  for (const OnStairs& walk :
       {OnStairs{"walk_stairs", "the walk after foot placement on the stairs, bones as capsules"},
        OnStairs{"gait_spider", "the spider climbing the stairs by a procedural gait"},
        OnStairs{"gait_character",
                 "the character climbing the stairs by a procedural gait, no clip"}}) {
    const fs::path file = out_dir_ / (std::string(walk.name) + ".glb");
    if (!written(file)) continue;
    RenderRequest request;
    request.in = file.string();
    request.with = {bundled_file("stairs.obj").string()};
    request.out = output(std::string(walk.name) + ".png");
    request.contact_sheet = 6;
    request.options.target.width = 320;
    request.options.target.height = 240;
    render_sheet(request, std::string(walk.name) + ".png", walk.what);
  }
  if (const fs::path surface = out_dir_ / "dam_break_surface.glb"; written(surface)) {
    RenderRequest request;
    request.in = surface.string();
    request.with = {(out_dir_ / "dam_break.pc2").string()};  // the particles, as dots
    request.out = output("dam_break.png");
    request.contact_sheet = 6;
    request.options.target.width = 320;
    request.options.target.height = 240;
    request.options.camera = CameraMode::Front;
    render_sheet(request, "dam_break.png",
                 "the water column collapsing: its surface and its particles");
  }
  if (written(out_dir_ / "smoke_0000.vdb")) {
    RenderRequest request;
    request.in = (out_dir_ / "smoke_%04d.vdb").string();
    request.out = output("smoke.png");
    request.contact_sheet = 6;
    request.options.target.width = 320;
    request.options.target.height = 240;
    request.options.camera = CameraMode::Front;
    render_sheet(
        request, "smoke.png",
        "the plume ray-marched: smoke lit by the sun and sky, fire glowing where fuel burns");
  }
  if (!bodies.empty()) {
    RenderRequest request;
    request.in = bodies[0];
    request.with.assign(bodies.begin() + 1, bodies.end());
    request.out = output("bodies.png");
    request.contact_sheet = 6;
    request.options.target.width = 320;
    request.options.target.height = 240;
    request.options.camera = CameraMode::Orbit;
    request.particle_size = 0.05f;  // sparks visible in a 320 × 240 tile
    render_sheet(
        request, "bodies.png",
        "her hair, the jelly and the sparks beside her as she walks, seen from around her");
  }
}

void Demo::render_sheet(const RenderRequest& request, const std::string& name, std::string what) {
  DemoSheet step{request.out, std::move(what), "", ""};
  try {
    step.gl_renderer = render_file(request).gl_renderer;
    produced(step.png);
  } catch (const Error& e) {
    // No OpenGL here (no EGL driver): the rest of the demo stands; say why there is no picture.
    step.skipped = e.what();
    step.png = name;
  }
  report(DemoEvent::Phase::Done, step);
}

}  // namespace kinema::pipeline::demo_detail
