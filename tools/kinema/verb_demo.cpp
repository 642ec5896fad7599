// tools/kinema/verb_demo.cpp — `kinema demo [MOTION [CHARACTER]] [-o OUT_DIR]`.
//
// A tour of what kinema does today, on the bundled data (data/demo: a CMU walk and a small
// skinned character) or on the user's files: summarize both, convert the motion to GLB and back
// to BVH, measure the round trip (max joint world-position error over every frame), retarget
// the motion onto the character by humanoid bone names, blend the bundled walk and run through
// an animation graph (data/demo/locomotion.graph.json, as `kinema play` does), place the walk's
// feet on stairs and on a slope (data/demo/stairs.obj, slope.png, as `kinema ik feet` does),
// compress the motion within 0.01 cm (as `kinema compress` does), and list what was written.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <numbers>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli.h"
#include "kinema/character/humanoid.h"
#include "kinema/compress/compress.h"
#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/io/bvh.h"
#include "kinema/io/gltf.h"
#include "kinema/io/kmc.h"
#include "kinema/render/clip_render.h"
#include "kinema/retarget/retarget.h"
#include "kinema/skeleton/skeleton.h"

namespace kinema::cli {

namespace {

namespace fs = std::filesystem;

/// A round trip that moves a joint by more than this has lost something.
constexpr double kRoundTripTolerance = 1e-3;  // metres

struct DemoArgs {
  std::vector<std::string> files;
  std::string out_dir = "kinema-demo-out";
};

/// The folder with the bundled demo data: $KINEMA_DEMO_DATA, else the source tree's data/demo,
/// else the installed copy.
fs::path demo_data_dir() {
  if (const char* env = std::getenv("KINEMA_DEMO_DATA"); env && *env) return fs::path(env);
  std::error_code ec;
#ifdef KINEMA_DEMO_DATA_DIR
  if (fs::is_directory(KINEMA_DEMO_DATA_DIR, ec)) return fs::path(KINEMA_DEMO_DATA_DIR);
#endif
#ifdef KINEMA_INSTALLED_DEMO_DATA_DIR
  if (fs::is_directory(KINEMA_INSTALLED_DEMO_DATA_DIR, ec))
    return fs::path(KINEMA_INSTALLED_DEMO_DATA_DIR);
#endif
  throw Error("", "",
              "cannot find the demo data (data/demo); set KINEMA_DEMO_DATA to its folder or "
              "give files: kinema demo MOTION.bvh [CHARACTER.glb]");
}

/// Max distance, over every frame of clip `ca` and every joint both skeletons name alike,
/// between the joints' world positions. `matched` receives the number of joints compared.
double max_position_error(const Asset& a, int ca, const Asset& b, int cb, int* matched,
                          int* frames_out, const GlobalOptions& global, const std::string& label) {
  const Clip& clip_a = a.clips[static_cast<size_t>(ca)];
  const Clip& clip_b = b.clips[static_cast<size_t>(cb)];
  std::vector<std::pair<int, int>> pairs;
  for (int i = 0; i < a.skeleton.joint_count(); ++i)
    if (const int j = b.skeleton.find(a.skeleton.joint(i).name); j >= 0) pairs.emplace_back(i, j);
  *matched = static_cast<int>(pairs.size());
  const double rate = frame_rate_of(clip_a) > 0 ? frame_rate_of(clip_a) : 30.0;
  const int frames = std::max(1, static_cast<int>(std::lround(clip_a.duration * rate)) + 1);
  *frames_out = frames;

  std::vector<Transform> la(static_cast<size_t>(a.skeleton.joint_count()));
  std::vector<Transform> lb(static_cast<size_t>(b.skeleton.joint_count()));
  std::vector<Mat4> ma(la.size()), mb(lb.size());
  double worst = 0;
  Progress progress(label, frames, global.progress_enabled());
  for (int f = 0; f < frames; ++f) {
    const double t = std::min(clip_a.duration, f / rate);
    sample_pose(clip_a, a.skeleton, t, WrapMode::Clamp, la);
    sample_pose(clip_b, b.skeleton, t, WrapMode::Clamp, lb);
    local_to_model(a.skeleton.parents(), la, ma);
    local_to_model(b.skeleton.parents(), lb, mb);
    for (const auto& [i, j] : pairs) {
      const double d = distance(ma[static_cast<size_t>(i)].translation_part(),
                                mb[static_cast<size_t>(j)].translation_part());
      worst = std::isnan(d) ? INFINITY : std::max(worst, d);
    }
    progress.update(f + 1);
  }
  progress.done();
  return worst;
}

std::string error_text(double metres) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g m (%.3g mm)", metres, metres * 1000);
  return buf;
}

Asset load_step(const std::string& path, const std::string& role, const GlobalOptions& global) {
  if (!global.quiet) std::cout << "\n== " << role << ": " << path << '\n';
  Asset asset = load_input(path, global.load);
  if (!global.quiet) print_info(asset, path, std::cout, /*show_tree=*/false);
  return asset;
}

int demo(const DemoArgs& args, const GlobalOptions& global) {
  if (args.files.size() > 2) throw UsageError("demo takes at most two files: MOTION [CHARACTER]");
  std::string motion_path, character_path;
  if (args.files.empty()) {
    const fs::path dir = demo_data_dir();
    motion_path = (dir / "walk.bvh").string();
    std::error_code ec;
    if (!fs::is_regular_file(motion_path, ec))
      throw Error(motion_path, "", "demo motion not found (set KINEMA_DEMO_DATA to the folder)");
    for (const char* name : {"character.glb", "character.vrm", "character.gltf"})
      if (fs::is_regular_file(dir / name, ec)) {
        character_path = (dir / name).string();
        break;
      }
    if (!global.quiet) std::cout << "kinema demo on the bundled data in " << dir.string() << '\n';
  } else {
    motion_path = args.files[0];
    if (args.files.size() == 2) character_path = args.files[1];
  }

  const fs::path out_dir(args.out_dir);
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec || !fs::is_directory(out_dir))
    throw Error(args.out_dir, "", "cannot create the output folder: " + ec.message());
  // Never let an output land on an input (kinema demo walk.glb -o . would).
  const auto check_output = [&](const std::string& out) {
    for (const std::string& in : {motion_path, character_path})
      if (!in.empty() && same_file(in, out))
        throw UsageError("the demo would write " + out +
                         ", which is an input; choose another -o folder");
    return out;
  };

  std::vector<std::string> produced;
  const Asset motion = load_step(motion_path, "motion", global);
  if (motion.clips.empty()) throw Error(motion_path, "", "has no animation to demonstrate");
  std::optional<Asset> character;
  if (!character_path.empty()) character = load_step(character_path, "character", global);

  // 1. Convert the motion to GLB and back to BVH, then measure what the round trip moved.
  const std::string stem = fs::path(motion_path).stem().string();
  const std::string glb_path = check_output((out_dir / (stem + ".glb")).string());
  const std::string bvh_path = check_output((out_dir / (stem + "_roundtrip.bvh")).string());
  if (!global.quiet) std::cout << "\n== round trip: " << motion_path << " → GLB → BVH\n";
  GltfWriteOptions gltf_options;
  gltf_options.binary = true;
  gltf_options.clips = {0};
  write_gltf(motion, glb_path, gltf_options);
  produced.push_back(glb_path);
  const Asset via_glb = read_gltf(glb_path);
  if (via_glb.clips.empty()) throw Error(glb_path, "", "the written GLB has no animation");
  BvhWriteOptions bvh_options;
  if (motion.source.format == "bvh") bvh_options.unit_in_meters = motion.source.unit_in_meters;
  // GLB stores key times, not a rate: write the BVH at the rate of the keys (the motion's).
  bvh_options.frame_rate = frame_rate_of(via_glb.clips[0]);
  write_bvh(via_glb, bvh_path, bvh_options);
  produced.push_back(bvh_path);
  BvhReadOptions read_options;
  read_options.unit_in_meters = bvh_options.unit_in_meters;
  const Asset back = read_bvh(bvh_path, read_options);
  if (back.clips.empty()) throw Error(bvh_path, "", "the written BVH has no animation");

  int matched_glb = 0, matched_bvh = 0, frames = 0;
  const double err_glb =
      max_position_error(motion, 0, via_glb, 0, &matched_glb, &frames, global, "checking GLB");
  const double err_bvh =
      max_position_error(motion, 0, back, 0, &matched_bvh, &frames, global, "checking BVH");
  if (!global.quiet) {
    std::cout << "  " << glb_path << ": max joint position error " << error_text(err_glb)
              << " over " << frames << " frames × " << matched_glb << " joints\n";
    std::cout << "  " << bvh_path << ": max joint position error " << error_text(err_bvh)
              << " over " << frames << " frames × " << matched_bvh << " joints\n";
  }
  const int joints = motion.skeleton.joint_count();
  if (matched_glb < joints || matched_bvh < joints)
    throw Error(matched_glb < joints ? glb_path : bvh_path, "",
                "the round trip lost joints (" +
                    std::to_string(std::min(matched_glb, matched_bvh)) + " of " +
                    std::to_string(joints) + " found by name)");
  if (!(err_glb <= kRoundTripTolerance && err_bvh <= kRoundTripTolerance))
    throw Error(err_glb > kRoundTripTolerance ? glb_path : bvh_path, "",
                "round trip moved a joint by " + error_text(std::max(err_glb, err_bvh)) +
                    ", more than the 1 mm tolerance");
  if (!global.quiet) std::cout << "  round trip OK (tolerance 1 mm)\n";

  // 2. Retarget onto the character by humanoid bone names.
  std::optional<Asset> retargeted;  // kept for the render step
  if (character) {
    const std::string char_stem = fs::path(character_path).stem().string();
    const std::string out_path =
        check_output((out_dir / (char_stem + "_" + stem + ".glb")).string());
    if (!global.quiet)
      std::cout << "\n== retarget: " << motion_path << " → " << character_path << '\n';
    bool guessed_m = false, guessed_c = false;
    const auto hm = humanoid_of(motion, &guessed_m);
    const auto hc = humanoid_of(*character, &guessed_c);
    std::string why;
    if (!hm)
      why = motion_path + ": joint names do not map to humanoid bones";
    else if (!hc)
      why = character_path + ": no humanoid bone map (not a VRM) and names do not map";
    if (!why.empty()) {
      if (!global.quiet) std::cout << "  skipped: " << why << '\n';
    } else {
      if (!global.quiet)
        std::cout << "  humanoid bones: motion " << hm->bones.size()
                  << (guessed_m ? " (guessed)" : "") << ", character " << hc->bones.size()
                  << (guessed_c ? " (guessed)" : "") << '\n';
      Clip moved = retarget_humanoid(motion, 0, *character);
      if (moved.name.empty()) moved.name = stem;
      Asset result = *character;
      result.clips.clear();
      result.clips.push_back(std::move(moved));
      GltfWriteOptions options;
      options.binary = true;
      write_gltf(result, out_path, options);
      produced.push_back(out_path);
      retargeted = result;
      if (!global.quiet)
        std::cout << "  wrote " << out_path << ": " << result.skeleton.joint_count() << " joints, "
                  << describe_clip(result.clips[0]) << '\n';
      // A VRM character also goes out as a VRM 1.0 avatar with the motion on it.
      if (character->source.format.rfind("vrm", 0) == 0 && character->humanoid) {
        const std::string vrm_path =
            check_output((out_dir / (char_stem + "_" + stem + ".vrm")).string());
        GltfWriteOptions vrm_options;
        vrm_options.binary = true;
        vrm_options.vrm = true;
        write_gltf(result, vrm_path, vrm_options);
        produced.push_back(vrm_path);
        if (!global.quiet) std::cout << "  wrote " << vrm_path << " (VRM 1.0)\n";
      }
    }
  } else if (!global.quiet) {
    std::cout << "\n== retarget: skipped (no character given)\n";
  }

  // 3. Blend walk and run through an animation graph (bundled data only): the same code path
  // as `kinema play`, with the speed ramping from a walk to a run.
  if (args.files.empty()) {
    const fs::path graph = demo_data_dir() / "locomotion.graph.json";
    if (fs::is_regular_file(graph, ec)) {
      pipeline::PlayRequest play;
      play.graph = graph.string();
      play.out = check_output((out_dir / "locomotion.glb").string());
      play.params = {"speed=0:1.5,3:4.5"};
      play.seconds = 4;
      play.fps = 30;
      play.load = global.load;
      if (!global.quiet)
        std::cout << "\n== graph: " << play.graph
                  << "\n  walk/run blend space driven by speed, ramping 1.5 → 4.5 m/s over 3 s, "
                     "root motion baked\n  ";
      JobProgress progress(global.progress_enabled());
      const pipeline::PlayResult played = pipeline::play_graph_file(play, progress.callback());
      progress.done();
      if (!global.quiet) print_play(play, played, std::cout);
      produced.push_back(play.out);
    } else if (!global.quiet) {
      std::cout << "\n== graph: skipped (no locomotion.graph.json in " << demo_data_dir().string()
                << ")\n";
    }
  }

  // 3b. Motion matching on the same walk and run (bundled data only): a database of both clips,
  // mirrored and re-timed, then a scripted stick — walk, run, walk veering left — followed by
  // search, inertialized transitions and foot locking, as `kinema match build` / `match run`.
  if (args.files.empty()) {
    const fs::path walk = demo_data_dir() / "pab_walk.glb", run = demo_data_dir() / "pab_run.glb";
    if (fs::is_regular_file(walk, ec) && fs::is_regular_file(run, ec)) {
      pipeline::MatchBuildRequest build;
      build.inputs = {walk.string(), run.string()};
      build.out = check_output((out_dir / "locomotion.kmm").string());
      build.database.mirror = true;
      build.database.speeds = {0.9, 1.0, 1.1};
      build.load = global.load;
      if (!global.quiet)
        std::cout << "\n== motion matching: database of the walk and run, mirrored, at 0.9/1/1.1× "
                     "speed\n";
      JobProgress build_progress(global.progress_enabled());
      const pipeline::MatchBuildResult built =
          pipeline::build_match_database(build, build_progress.callback());
      build_progress.done();
      if (!global.quiet) print_match_build(build, built, false, std::cout);
      produced.push_back(build.out);
      const std::string path = check_output((out_dir / "stick_path.json").string());
      write_file_atomically(path, R"({"duration": 9, "keys": [
  {"time": 0, "direction": [0, 1], "speed": 1.5},
  {"time": 3, "direction": [0, 1], "speed": 4.0},
  {"time": 6, "direction": [0.7, 0.7], "speed": 1.5}]}
)");
      produced.push_back(path);
      pipeline::MatchRunRequest request;
      request.database = build.out;
      request.path = path;
      request.out = check_output((out_dir / "motion_matching.glb").string());
      request.controller.foot_locking = true;
      request.controller.clamp_angle = 30 * std::numbers::pi / 180;
      if (!global.quiet)
        std::cout << "\n== motion matching: a stick walks 1.5 m/s, runs 4 m/s, walks veering "
                     "45° left (stick_path.json), foot locking on\n";
      JobProgress run_progress(global.progress_enabled());
      const pipeline::MatchRunResult ran =
          pipeline::run_match_along_path(request, run_progress.callback());
      run_progress.done();
      if (!global.quiet) print_match_run(request, ran, false, std::cout);
      produced.push_back(request.out);
    }
  }

  // 4. Foot placement of the walk on stairs and on a slope (bundled data only: the terrain is
  // laid out along the bundled walk's path), as `kinema ik feet` does.
  if (args.files.empty()) {
    struct Terrain {
      const char* file;
      const char* out;
      const char* what;
    };
    const Terrain terrains[] = {
        {"stairs.obj", "walk_stairs.glb", "5 steps of 0.15 m rise and 0.30 m run (OBJ mesh)"},
        {"slope.png", "walk_slope.glb", "a 0.25 m ramp over 2 m (16-bit PNG height map)"}};
    for (const Terrain& t : terrains) {
      const fs::path ground = demo_data_dir() / t.file;
      if (!fs::is_regular_file(ground, ec)) {
        if (!global.quiet)
          std::cout << "\n== foot placement: skipped (no " << t.file << " in "
                    << demo_data_dir().string() << ")\n";
        continue;
      }
      pipeline::FeetRequest ik;
      ik.in = motion_path;
      ik.ground = ground.string();
      ik.out = check_output((out_dir / t.out).string());
      ik.options.follow_ground = true;
      ik.load = global.load;
      if (!global.quiet)
        std::cout << "\n== foot placement: " << motion_path << " on " << ik.ground << "\n  "
                  << t.what
                  << "; the body follows the ground, the pelvis drops for the lower foot, the "
                     "legs are solved\n";
      JobProgress progress(global.progress_enabled());
      const pipeline::FeetResult placed = pipeline::place_feet(ik, progress.callback());
      progress.done();
      if (!global.quiet) {
        print_feet(ik, placed, /*json=*/false, "  ", std::cout);
        note_feet_below_ground(ik, placed);
      }
      produced.push_back(ik.out);
    }
  }

  // 4b. Compression of the motion within 0.01 cm (a guaranteed bound at virtual vertices 3 cm
  // from every joint), written as a .kmc, as `kinema compress` does.
  {
    const std::string kmc_path = check_output((out_dir / (stem + ".kmc")).string());
    if (!global.quiet)
      std::cout << "\n== compression: " << motion_path
                << " within 0.01 cm at virtual vertices 3 cm from every joint\n";
    CompressedAnimation animation;
    animation.skeleton = motion.skeleton;
    animation.source = fs::path(motion_path).filename().string();
    animation.source_unit_in_meters = motion.source.unit_in_meters;
    animation.source_unit_name = motion.source.unit_name;
    const CompressOptions options;
    animation.max_error = options.max_error;
    animation.vertex_distance = options.vertex_distance;
    CompressionStats stats;
    animation.clips.push_back(compress(motion.clips[0], motion.skeleton, options, &stats));
    write_animation_file(animation, kmc_path);
    produced.push_back(kmc_path);
    if (!global.quiet)
      std::cout << "  " << kmc_path << ": " << stats.raw_bytes << " → " << stats.compressed_bytes
                << " bytes (" << format_number(stats.ratio, 2) << " : 1), max error "
                << format_number(stats.error.max * 100, 5) << " cm, 99th percentile "
                << format_number(stats.error.p99 * 100, 5) << " cm over every joint, frame and "
                << "midpoint\n";
  }

  // 5. Pictures: the skinned character walking (LBS and DQS) and the walk on the stairs, each a
  // contact sheet rendered headless (EGL: a GPU when there is one, else Mesa's llvmpipe).
  {
    struct Sheet {
      const Asset* asset;
      std::string name;
      SkinningMethod skinning;
      std::string what;
    };
    std::vector<Sheet> sheets;
    if (retargeted && !retargeted->meshes.empty()) {
      sheets.push_back({&*retargeted, "character_walk_lbs.png", SkinningMethod::Lbs,
                        "the character's skinned mesh, linear blend skinning"});
      sheets.push_back({&*retargeted, "character_walk_dqs.png", SkinningMethod::Dqs,
                        "the same frames, dual-quaternion skinning"});
    }
    std::optional<Asset> matched;
    const fs::path matched_path = out_dir / "motion_matching.glb";
    if (std::find(produced.begin(), produced.end(), matched_path.string()) != produced.end()) {
      matched = load_asset(matched_path.string());
      sheets.push_back({&*matched, "motion_matching.png", SkinningMethod::Lbs,
                        "the motion-matched walk and run, bones as capsules"});
    }
    std::optional<Asset> stairs;
    const fs::path stairs_path = out_dir / "walk_stairs.glb";
    if (std::find(produced.begin(), produced.end(), stairs_path.string()) != produced.end()) {
      stairs = load_asset(stairs_path.string());
      sheets.push_back({&*stairs, "walk_stairs.png", SkinningMethod::Lbs,
                        "the walk after foot placement on the stairs, bones as capsules"});
    }
    if (!sheets.empty() && !global.quiet)
      std::cout << "\n== render: contact sheets of 6 frames, 320×240 each\n";
    for (const Sheet& sheet : sheets) {
      if (sheet.asset->clips.empty()) continue;
      ClipRenderOptions options;
      options.target.width = 320;
      options.target.height = 240;
      options.camera = CameraMode::Follow;
      options.skinning = sheet.skinning;
      const std::string png = check_output((out_dir / sheet.name).string());
      try {
        const std::string gl = render_contact_sheet_to_png(*sheet.asset, 0, 6, options, png);
        produced.push_back(png);
        if (!global.quiet)
          std::cout << "  wrote " << png << ": " << sheet.what << " (" << gl << ")\n";
      } catch (const Error& e) {
        // No OpenGL here (no EGL driver): the rest of the demo stands; say why there is no picture.
        if (!global.quiet) std::cout << "  skipped " << sheet.name << ": " << e.what() << '\n';
      }
    }
  }

  if (!global.quiet) {
    std::cout << "\n== produced in " << out_dir.string() << ":\n";
    for (const std::string& p : produced) {
      const auto size = fs::file_size(p, ec);
      std::cout << "  " << fs::path(p).filename().string() << "  "
                << (ec ? std::string("?") : format_bytes(size)) << '\n';
    }
    std::cout << "Open the .glb/.vrm files in any glTF or VRM viewer or in Blender; the .bvh in "
                 "Blender or MotionBuilder; the .png in any image viewer.\n";
  }
  return kExitOk;
}

}  // namespace

VerbRun register_demo(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<DemoArgs>();
  CLI::App* sub = app.add_subcommand(
      "demo",
      "A tour on the bundled walk + character (or your MOTION [CHARACTER]): summaries, "
      "BVH → GLB → BVH round trip with its error, retarget by humanoid names, and (bundled data) "
      "a walk/run blend through an animation graph, motion matching along a scripted stick, "
      "foot placement on stairs and a slope, and compression within 0.01 cm");
  sub->add_option("FILES", args->files, "MOTION (any readable file) and optional CHARACTER");
  sub->add_option("-o,--out", args->out_dir, "Folder for the results (created if needed)")
      ->capture_default_str();
  return [args, &global]() { return demo(*args, global); };
}

}  // namespace kinema::cli
