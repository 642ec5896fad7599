// `kinema demo` as a library call (kinema/pipeline/demo.h): each step is a function that reports
// to the observer as it starts and when it is done.
#include "kinema/pipeline/demo.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <optional>

#include "demo_plate.h"
#include "demo_steps.h"
#include "kinema/character/merge.h"
#include "kinema/core/error.h"
#include "kinema/core/file.h"
#include "kinema/io/bvh.h"
#include "kinema/io/gltf.h"
#include "kinema/io/kmc.h"
#include "kinema/pipeline/inspect.h"
#include "kinema/pipeline/render.h"
#include "kinema/render/clip_render.h"
#include "kinema/retarget/humanoid.h"
#include "kinema/retarget/retarget.h"

namespace kinema::pipeline {

namespace fs = std::filesystem;

namespace demo_detail {

/// The stick the motion-matching step follows: walk, run, walk veering 45° left.
constexpr const char* kStickPath = R"({"duration": 9, "keys": [
  {"time": 0, "direction": [0, 1], "speed": 1.5},
  {"time": 3, "direction": [0, 1], "speed": 4.0},
  {"time": 6, "direction": [0.7, 0.7], "speed": 1.5}]}
)";

std::string Demo::output(const std::string& name) const {
  const std::string out = (out_dir_ / name).string();
  for (const std::string& in : {rq_.motion, rq_.character})
    if (!in.empty() && same_file(in, out))
      throw UsageError("the demo would write " + out +
                       ", which is an input; choose another -o folder");
  return out;
}

Asset Demo::load(const std::string& role, const std::string& path) {
  DemoLoad step{role, path, nullptr};
  report(DemoEvent::Phase::Started, step);
  Asset asset = load_input(path, rq_.load);
  step.asset = &asset;
  report(DemoEvent::Phase::Done, step);
  return asset;
}

void Demo::round_trip() {
  DemoRoundTrip step{rq_.motion, output(stem_ + ".glb"), output(stem_ + "_roundtrip.bvh"), {}, {}};
  report(DemoEvent::Phase::Started, step);
  GltfWriteOptions gltf_options;
  gltf_options.binary = true;
  gltf_options.clips = {0};
  write_gltf(motion_, step.glb, gltf_options);
  produced(step.glb);
  const Asset via_glb = read_gltf(step.glb);
  if (via_glb.clips.empty()) throw Error(step.glb, "", "the written GLB has no animation");
  BvhWriteOptions bvh_options;
  if (motion_.source.format == "bvh") bvh_options.unit_in_meters = motion_.source.unit_in_meters;
  // GLB stores key times, not a rate: write the BVH at the rate of the keys (the motion's).
  bvh_options.frame_rate = infer_frame_rate(via_glb.clips[0]);
  write_bvh(via_glb, step.bvh, bvh_options);
  produced(step.bvh);
  BvhReadOptions read_options;
  read_options.unit_in_meters = bvh_options.unit_in_meters;
  const Asset back = read_bvh(step.bvh, read_options);
  if (back.clips.empty()) throw Error(step.bvh, "", "the written BVH has no animation");

  step.glb_error = max_joint_distance(motion_, 0, via_glb, 0, [&](int done, int total) {
    pipeline::report(progress_, "checking GLB", done, total);
  });
  step.bvh_error = max_joint_distance(motion_, 0, back, 0, [&](int done, int total) {
    pipeline::report(progress_, "checking BVH", done, total);
  });
  report(DemoEvent::Phase::Done, step);
  const int joints = motion_.skeleton.joint_count();
  const JointDistance& glb = step.glb_error;
  const JointDistance& bvh = step.bvh_error;
  if (glb.joints < joints || bvh.joints < joints)
    throw Error(glb.joints < joints ? step.glb : step.bvh, "",
                "the round trip lost joints (" + std::to_string(std::min(glb.joints, bvh.joints)) +
                    " of " + std::to_string(joints) + " found by name)");
  if (!(glb.max <= step.tolerance && bvh.max <= step.tolerance)) {
    char moved[64];
    const double worst = std::max(glb.max, bvh.max);
    std::snprintf(moved, sizeof moved, "%.3g m (%.3g mm)", worst, worst * 1000);
    throw Error(
        glb.max > step.tolerance ? step.glb : step.bvh, "",
        std::string("round trip moved a joint by ") + moved + ", more than the 1 mm tolerance");
  }
}

void Demo::retarget() {
  DemoRetarget step;
  step.motion = rq_.motion;
  step.character = character_ ? rq_.character : "";
  report(DemoEvent::Phase::Started, step);
  if (!character_) return report(DemoEvent::Phase::Done, step);
  const std::string char_stem = fs::path(rq_.character).stem().string();
  step.glb = output(char_stem + "_" + stem_ + ".glb");
  const auto hm = humanoid_of(motion_, &step.motion_guessed);
  const auto hc = humanoid_of(*character_, &step.character_guessed);
  if (!hm)
    step.skipped = rq_.motion + ": joint names do not map to humanoid bones";
  else if (!hc)
    step.skipped = rq_.character + ": no humanoid bone map (not a VRM) and names do not map";
  if (!step.skipped.empty()) {
    step.glb.clear();
    return report(DemoEvent::Phase::Done, step);
  }
  step.motion_bones = hm->bones.size();
  step.character_bones = hc->bones.size();
  // The retarget job: retarget, ground, measure, write the GLB and the side-by-side preview.
  RetargetRequest job;
  job.in = rq_.motion;
  job.onto = rq_.character;
  job.out = step.glb;
  job.preview = step.preview = output("retarget_preview.png");
  job.load = rq_.load;
  step.job = retarget_file(job);
  produced(step.glb);
  produced(step.preview);
  Asset result = step.job.written;
  // A VRM character also goes out as a VRM 1.0 avatar with the motion on it, and the motion as
  // a VRM Animation for that avatar.
  if (character_->source.format.rfind("vrm", 0) == 0 && character_->humanoid) {
    step.vrm = output(char_stem + "_" + stem_ + ".vrm");
    GltfWriteOptions vrm_options;
    vrm_options.binary = true;
    vrm_options.vrm = true;
    write_gltf(result, step.vrm, vrm_options);
    produced(step.vrm);
    RetargetRequest vrma = job;
    vrma.onto = step.vrm;
    vrma.out = step.vrma = output(stem_ + ".vrma");
    vrma.preview.clear();
    retarget_file(vrma);
    produced(step.vrma);
  }
  retargeted_ = std::move(result);
  retargeted_file_ = step.glb;
  step.result = &*retargeted_;
  report(DemoEvent::Phase::Done, step);
}

/// The retargeted walk's arms pushed out of the character's body: the clean job, writing the
/// cleaned GLB, its report, a preview of the worst frames (skipped without OpenGL) and the depth
/// plot. A character the job cannot use (no skinned torso) is reported as skipped.
void Demo::clean(const std::string& retargeted_file) {
  if (retargeted_file.empty()) return;
  DemoClean step;
  const std::string char_stem = fs::path(rq_.character).stem().string();
  step.request.in = retargeted_file;
  step.request.character = rq_.character;
  step.request.out = output(char_stem + "_" + stem_ + "_clean.glb");
  step.request.report = output("clean_report.json");
  step.request.preview = output("clean_preview.png");
  step.request.plot = output("clean_depth.png");
  step.request.preview_optional = true;
  step.request.load = rq_.load;
  report(DemoEvent::Phase::Started, step);
  try {
    step.result = clean_file(step.request, progress_);
  } catch (const Error& e) {
    step.skipped = e.what();
    return report(DemoEvent::Phase::Done, step);
  }
  produced(step.request.out);
  produced(step.request.report);
  if (step.result.preview_skipped.empty()) produced(step.request.preview);
  produced(step.request.plot);
  report(DemoEvent::Phase::Done, step);
}

/// Blend walk and run through the animation graph: the play job, the speed ramping from a walk to
/// a run.
void Demo::graph() {
  DemoGraph step;
  step.request.graph = bundled_file("locomotion.graph.json").string();
  std::error_code ec;
  if (!fs::is_regular_file(step.request.graph, ec)) {
    step.skipped_folder = rq_.bundled_data;
    return report(DemoEvent::Phase::Done, step);
  }
  step.request.out = output("locomotion.glb");
  step.request.params = {"speed=0:1.5,3:4.5"};
  step.request.seconds = 4;
  step.request.fps = 30;
  step.request.load = rq_.load;
  report(DemoEvent::Phase::Started, step);
  step.result = play_graph_file(step.request, progress_);
  produced(step.request.out);
  report(DemoEvent::Phase::Done, step);
}

/// A database of the walk and run, mirrored and re-timed, then a scripted stick followed with
/// search, inertialized transitions and locomotion warping (stride, lower-body turn, planted feet
/// held): the match jobs.
void Demo::motion_matching() {
  const fs::path walk = bundled_file("pab_walk.glb"), run = bundled_file("pab_run.glb");
  std::error_code ec;
  if (!fs::is_regular_file(walk, ec) || !fs::is_regular_file(run, ec)) return;
  DemoMatchBuild build;
  build.request.inputs = {walk.string(), run.string()};
  build.request.out = output("locomotion.kmm");
  build.request.database.mirror = true;
  build.request.database.speeds = {0.9, 1.0, 1.1};
  build.request.load = rq_.load;
  report(DemoEvent::Phase::Started, build);
  build.result = build_match_database(build.request, progress_);
  produced(build.request.out);
  report(DemoEvent::Phase::Done, build);

  const std::string path = output("stick_path.json");
  write_file_atomically(path, kStickPath);
  produced(path);
  DemoMatchRun run_step;
  run_step.request.database = build.request.out;
  run_step.request.path = path;
  run_step.request.out = output("motion_matching.glb");
  run_step.request.controller.locomotion_warping = true;
  run_step.request.controller.clamp_angle = 30 * 3.14159265358979323846 / 180;
  report(DemoEvent::Phase::Started, run_step);
  run_step.result = run_match_along_path(run_step.request, progress_);
  produced(run_step.request.out);
  report(DemoEvent::Phase::Done, run_step);

  // Learned motion matching: a small model of the same database (a few seconds of training on
  // one thread), then the same stick with the model, the database run beside it.
  DemoMatchLearn learn;
  learn.learn.database = build.request.out;
  learn.learn.out = output("locomotion.kml");
  learn.learn.train.hidden = 128;
  learn.learn.train.latent_dims = 16;
  learn.learn.train.epochs = 1;
  learn.learn.train.min_iterations = 400;
  report(DemoEvent::Phase::Started, learn);
  learn.learned = learn_match_model(learn.learn, progress_);
  produced(learn.learn.out);
  produced(learn.learned.plot);
  learn.run = run_step.request;
  learn.run.database = learn.learn.out;
  learn.run.compare = build.request.out;
  learn.run.out = output("learned_motion_matching.glb");
  learn.result = run_match_along_path(learn.run, progress_);
  produced(learn.run.out);
  report(DemoEvent::Phase::Done, learn);
}

/// The walk's feet on stairs and on a slope (the terrain is laid out along the bundled walk's
/// path): the feet job, the body following the ground.
void Demo::feet() {
  struct Terrain {
    const char* file;
    const char* out;
    const char* what;
  };
  static constexpr Terrain kTerrains[] = {
      {"stairs.obj", "walk_stairs.glb", "5 steps of 0.15 m rise and 0.30 m run (OBJ mesh)"},
      {"slope.png", "walk_slope.glb", "a 0.25 m ramp over 2 m (16-bit PNG height map)"}};
  for (const Terrain& t : kTerrains) {
    DemoFeet step;
    step.ground_file = t.file;
    step.description = t.what;
    const fs::path ground = bundled_file(t.file);
    std::error_code ec;
    if (!fs::is_regular_file(ground, ec)) {
      step.skipped_folder = rq_.bundled_data;
      report(DemoEvent::Phase::Done, step);
      continue;
    }
    step.request.in = rq_.motion;
    step.request.ground = ground.string();
    step.request.out = output(t.out);
    step.request.options.follow_ground = true;
    step.request.load = rq_.load;
    report(DemoEvent::Phase::Started, step);
    step.result = place_feet(step.request, progress_);
    produced(step.request.out);
    report(DemoEvent::Phase::Done, step);
  }
}

/// The bundled cloth scene: a sheet dropped onto a sphere, simulated (XPBD) into a glTF with a
/// morph target per frame.
void Demo::cloth() {
  std::optional<DemoCloth> step = bundled_scene(
      "cloth.json", "cloth_drape.glb", "a sheet dropped onto a sphere (XPBD, inextensible, 60 Hz)");
  if (!step) return;
  produced(step->request.out);
  report(DemoEvent::Phase::Done, *step);
}

/// Runs bundled scene `scene_file` into `out` (its character replaced by `character_file` when
/// given), reporting it started; the caller records what it wrote and reports it done. Nothing
/// when the scene is not bundled.
std::optional<DemoCloth> Demo::bundled_scene(const char* scene_file, const char* out,
                                             std::string what, const std::string& character_file) {
  const fs::path scene = bundled_file(scene_file);
  std::error_code ec;
  if (!fs::is_regular_file(scene, ec)) return std::nullopt;
  DemoCloth step;
  step.what = std::move(what);
  step.request.scene = scene.string();
  step.request.character_file = character_file;
  step.request.out = output(out);
  step.request.progress = progress_;
  report(DemoEvent::Phase::Started, step);
  step.result = run_sim_file(step.request);
  return step;
}

/// A column of water collapsing in a tank (SPH, boundary-particle walls): the particles as a
/// point cache with their sidecar, the liquid's surface at every frame as glTF.
void Demo::liquid() {
  const std::optional<DemoCloth> step =
      bundled_scene("dam_break.json", "dam_break.pc2",
                    "a column of water collapsing in a tank (SPH, weakly compressible, 60 Hz)");
  if (!step || !step->result.liquid) return;
  const SimLiquidResult& l = *step->result.liquid;
  for (const std::string& path : {l.cache_path, l.mesh_path, l.sidecar_path, l.surface_path})
    if (!path.empty()) produced(path);
  report(DemoEvent::Phase::Done, *step);
}

/// A plume of smoke and fire rising from a burner past a sphere (Stable Fluids, 32 × 48 × 32
/// cells): an OpenVDB file per frame, which Blender imports as a volume and `kinema render`
/// ray-marches.
void Demo::smoke() {
  const std::optional<DemoCloth> step = bundled_scene(
      "smoke_plume.json", "smoke_%04d.vdb",
      "smoke and fire rising past a sphere (Stable Fluids, 32 × 48 × 32 cells, 48 Hz)");
  if (!step || !step->result.smoke) return;
  // The first and the last frame stand for the sequence in the list of files produced.
  const std::vector<std::string>& frames = step->result.smoke->paths;
  if (!frames.empty()) produced(frames.front());
  if (frames.size() > 1) produced(frames.back());
  report(DemoEvent::Phase::Done, *step);
}

/// Runs bundled scene `scene_file` on the retargeted walk into `out`, reporting it started and
/// recording the output and the character as produced; the caller adds its other outputs and
/// reports it done. Nothing when the scene is not bundled or nothing was retargeted.
std::optional<DemoCloth> Demo::walk_scene(const char* scene_file, const char* out,
                                          std::string what) {
  if (retargeted_file_.empty()) return std::nullopt;
  std::optional<DemoCloth> step = bundled_scene(scene_file, out, std::move(what), retargeted_file_);
  if (step) {
    produced(step->request.out);
    produced(step->result.character_path);
  }
  return step;
}

/// The bundled cape on the retargeted walk: the cloth pinned to the chest, colliding with the
/// body's capsules, the character's spring bones on the same steps; written as the cape (a morph
/// target per frame) and the character with its spring bones baked in.
void Demo::cape() {
  const std::optional<DemoCloth> step =
      walk_scene("cape.json", "cape.glb",
                 "a cape on the character's back as it walks, with its spring bones (XPBD, 60 Hz)");
  if (step) report(DemoEvent::Phase::Done, *step);
}

/// The bundled scene of everything else that moves with the walk: hair grown from the head's skin
/// and following it, a jelly (tetrahedra) dropped beside the character, sparks bouncing on the
/// ground, crates knocked over by a ball; written as the jelly (a morph target per frame), point
/// caches of the hair and sparks (the sparks with their sidecar), the rigid bodies (a node each)
/// and the character.
void Demo::bodies() {
  const std::optional<DemoCloth> step = walk_scene(
      "bodies.json", "bodies.glb",
      "hair on the walking character's head, a jelly dropped beside her, sparks and crates "
      "knocked over by a ball (60 Hz)");
  if (!step) return;
  const SimResult& result = step->result;
  if (result.hair) {
    produced(result.hair->cache_path);
    produced(result.hair->mesh_path);
  }
  if (result.rigid) produced(result.rigid->path);
  if (!result.particle_cache_path.empty()) {
    produced(result.particle_cache_path);
    produced(result.particle_mesh_path);
    produced(result.particle_sidecar_path);
  }
  report(DemoEvent::Phase::Done, *step);
}

/// The character's spring bones (hair, ribbons, skirts) over the retargeted walk: simulated and
/// baked into the walk, so that any glTF viewer plays the secondary motion.
void Demo::spring_bones() {
  if (!retargeted_ || retargeted_->spring_bones.empty() || retargeted_file_.empty()) return;
  DemoSpringBones step;
  step.request.avatar = retargeted_file_;
  step.request.out = output(fs::path(retargeted_file_).stem().string() + "_springs.glb");
  step.request.progress = progress_;
  report(DemoEvent::Phase::Started, step);
  step.result = run_spring_bake(step.request);
  produced(step.request.out);
  report(DemoEvent::Phase::Done, step);
}

/// A hit reaction: the retargeted walk hit in the face a third of the way in (an impulse against
/// her direction of travel), falling as a powered ragdoll whose joints keep tracking the walk.
void Demo::ragdoll() {
  if (!retargeted_ || retargeted_->meshes.empty() || retargeted_file_.empty() ||
      retargeted_->clips.empty())
    return;
  const Asset& a = *retargeted_;
  const Clip& walk = a.clips[0];
  // Her direction of travel: the root's displacement over the clip, on the ground.
  std::vector<Transform> first(size_t(a.skeleton.joint_count())), last(first.size());
  sample_pose(walk, a.skeleton, 0, WrapMode::Clamp, first);
  sample_pose(walk, a.skeleton, walk.duration, WrapMode::Clamp, last);
  std::vector<Mat4> m0(first.size()), m1(first.size());
  local_to_model(a.skeleton.parents(), std::span<const Transform>(first), std::span<Mat4>(m0));
  local_to_model(a.skeleton.parents(), std::span<const Transform>(last), std::span<Mat4>(m1));
  const int hips = a.humanoid && a.humanoid->find("hips") >= 0 ? a.humanoid->find("hips") : 0;
  Vec3 travel =
      m1[size_t(hips)].transform_point({0, 0, 0}) - m0[size_t(hips)].transform_point({0, 0, 0});
  travel.y = 0;
  const Vec3 forward = length(travel) > 1e-6 ? normalize(travel) : Vec3{0, 0, 1};
  DemoRagdoll step;
  step.request.character = retargeted_file_;
  step.request.out = output("ragdoll.glb");
  step.request.hit_time = std::round(walk.duration / 3 * 30) / 30;
  step.request.hit_bone = a.humanoid && a.humanoid->find("head") >= 0
                              ? "head"
                              : a.skeleton.joint(a.skeleton.joint_count() - 1).name;
  step.request.hit_impulse = forward * -70.0;
  step.request.powered = true;
  step.request.seconds_after = 2.5;
  step.request.progress = progress_;
  report(DemoEvent::Phase::Started, step);
  step.result = run_ragdoll(step.request);
  produced(step.request.out);
  report(DemoEvent::Phase::Done, step);
}

/// A crowd crossing the square: 900 agents in a block walking east round a fountain and four
/// pillars, 100 scattered the other way (navigation grid, A*, ORCA avoidance).
void Demo::crowd() {
  DemoCrowd step;
  step.request.scene = bundled_file("crowd_square.json").string();
  std::error_code ec;
  if (!fs::is_regular_file(step.request.scene, ec)) {
    step.skipped_folder = rq_.bundled_data;
    return report(DemoEvent::Phase::Done, step);
  }
  step.request.out = output("crowd.pc2");
  step.request.seconds = 60;
  step.request.progress = progress_;
  report(DemoEvent::Phase::Started, step);
  step.result = run_crowd(step.request);
  produced(step.result.cache_path);
  produced(step.result.sidecar_path);
  report(DemoEvent::Phase::Done, step);
}

/// Procedural gaits up the stairs: the spider, then the character when it has humanoid legs.
void Demo::gaits() {
  DemoGait step;
  const std::string stairs = bundled_file("stairs.obj").string();
  std::error_code ec;
  if (!fs::is_regular_file(stairs, ec)) {
    step.skipped_folder = rq_.bundled_data;
    return report(DemoEvent::Phase::Done, step);
  }
  GaitRequest spider;
  spider.creature = "spider";
  spider.ground = stairs;
  spider.out = output("gait_spider.glb");
  spider.progress = progress_;
  step.requests.push_back(spider);
  if (!rq_.character.empty() && character_ && humanoid_of(*character_)) {
    GaitRequest walker = spider;
    walker.creature = rq_.character;
    walker.out = output("gait_character.glb");
    step.requests.push_back(walker);
  }
  report(DemoEvent::Phase::Started, step);
  for (const GaitRequest& request : step.requests) {
    step.results.push_back(run_gait(request));
    produced(request.out);
  }
  report(DemoEvent::Phase::Done, step);
}

/// The motion within 0.01 cm (a guaranteed bound at virtual vertices 3 cm from every joint),
/// written as a .kmc.
void Demo::compression() {
  DemoCompression step{rq_.motion, output(stem_ + ".kmc"), {}};
  report(DemoEvent::Phase::Started, step);
  CompressedAnimation animation;
  animation.skeleton = motion_.skeleton;
  animation.source = fs::path(rq_.motion).filename().string();
  animation.source_unit_in_meters = motion_.source.unit_in_meters;
  animation.source_unit_name = motion_.source.unit_name;
  const CompressOptions options;
  animation.max_error = options.max_error;
  animation.vertex_distance = options.vertex_distance;
  animation.clips.push_back(compress(motion_.clips[0], motion_.skeleton, options, &step.stats));
  write_animation_file(animation, step.kmc);
  produced(step.kmc);
  report(DemoEvent::Phase::Done, step);
}

/// The walking character composited into a plate (DemoComposite).
void Demo::composite_shot() {
  if (!retargeted_ || retargeted_->meshes.empty() || retargeted_->clips.empty()) return;
  DemoComposite step;
  step.png = output("composite.png");
  step.exr = output("composite_cg.exr");
  step.k1 = -0.06;
  step.grain_sigma = 0.012f;
  report(DemoEvent::Phase::Started, step);
  const auto start = std::chrono::steady_clock::now();
  try {
    const CompositeShot shot =
        composite_into_plate(*retargeted_, retargeted_file_, step.k1, step.grain_sigma);
    step.gl_renderer = shot.gl_renderer;
    step.grain_measured = shot.grain_measured;
    write_file_atomically(step.png, shot.png);
    produced(step.png);
    write_file_atomically(step.exr, shot.exr);
    produced(step.exr);
  } catch (const Error& e) {
    // No OpenGL here (no EGL driver): the rest of the demo stands; say why there is no picture.
    step.skipped = e.what();
  }
  step.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  report(DemoEvent::Phase::Done, step);
}

std::vector<std::string> Demo::run() {
  std::error_code ec;
  fs::create_directories(out_dir_, ec);
  if (ec || !fs::is_directory(out_dir_))
    throw Error(rq_.out_dir, "", "cannot create the output folder: " + ec.message());
  if (bundled()) report(DemoEvent::Phase::Done, DemoBundledData{rq_.bundled_data});
  motion_ = load("motion", rq_.motion);
  if (motion_.clips.empty()) throw Error(rq_.motion, "", "has no animation to demonstrate");
  if (!rq_.character.empty()) character_ = load("character", rq_.character);
  stem_ = fs::path(rq_.motion).stem().string();

  round_trip();
  retarget();
  clean(retargeted_file_);
  if (bundled()) {
    graph();
    motion_matching();
    feet();
    cloth();
    liquid();
    smoke();
  }
  spring_bones();
  ragdoll();
  if (bundled()) {
    cape();
    bodies();
    crowd();
    gaits();
  }
  compression();
  render();
  if (bundled()) composite_shot();
  report(DemoEvent::Phase::Done, DemoProduced{out_dir_.string(), produced_});
  return produced_;
}

}  // namespace demo_detail

using demo_detail::Demo;

DemoRequest demo_on_bundled_data(const std::string& folder) {
  const fs::path dir(folder);
  DemoRequest request;
  request.bundled_data = folder;
  request.motion = (dir / "walk.bvh").string();
  std::error_code ec;
  if (!fs::is_regular_file(request.motion, ec))
    throw Error(request.motion, "", "demo motion not found (set KINEMA_DEMO_DATA to the folder)");
  for (const char* name : {"character.glb", "character.vrm", "character.gltf"})
    if (fs::is_regular_file(dir / name, ec)) {
      request.character = (dir / name).string();
      break;
    }
  return request;
}

std::vector<std::string> run_demo(const DemoRequest& request,
                                  const std::function<void(const DemoEvent&)>& observer,
                                  const Progress& progress) {
  return Demo(request, observer, progress).run();
}

}  // namespace kinema::pipeline
