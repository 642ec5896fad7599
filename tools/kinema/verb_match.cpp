// tools/kinema/verb_match.cpp — `kinema match build CLIPS... -o DB.kmm [--tags TAGS.json]
// [--fps N] [--mirror] [--speeds LIST] [--trajectory LIST] [--skip-frames N] [--features-only]
// [--json]` and `kinema match run DB.kmm --path PATH.json -o OUT [options] [--json]`.
//
// Parses the options, runs the pipeline job (kinema/pipeline/match.h: build_match_database,
// run_match_along_path; docs/match.md) and prints its summary. TAGS.json and PATH.json are
// described in kinema/match/inputs.h.
//
// Exit codes: 1 for a command line that makes no sense (OUT not .kmm, OUT one of the inputs,
// bad lists, an unknown tag); 2 for bad input (unreadable or broken files, no humanoid legs, bad
// tags or path) or a write failure — OUT is then left as it was.
#include <iostream>
#include <memory>
#include <numbers>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "kinema/pipeline/match.h"
#include "match_summary.h"
#include "skate_report.h"

namespace kinema::cli {

void print_match_build(const pipeline::MatchBuildRequest& request,
                       const pipeline::MatchBuildResult& result, bool json, std::ostream& out) {
  if (json) {
    nlohmann::ordered_json j;
    j["out"] = request.out;
    j["clips"] = result.clip_count;
    j.update(database_json(result.database, result.file_bytes));
    out << j.dump(2) << '\n';
    return;
  }
  out << "kinema match build: " << result.clip_count << " clips from " << result.input_count
      << " files → " << request.out << "\n";
  print_database(result.database, result.file_bytes, false, out);
}

void print_match_run(const pipeline::MatchRunRequest& request,
                     const pipeline::MatchRunResult& result, bool json, std::ostream& out) {
  const match::PathRun& r = result.run;
  if (json) {
    nlohmann::ordered_json j;
    j["out"] = request.out;
    j["frames"] = r.frames;
    j["fps"] = result.fps;
    j["searches"] = r.searches;
    j["transitions"] = r.transitions;
    j["foot_skate"] = skate_json(result.foot_skate);
    j["trajectory_error_mean_m"] = r.trajectory_error_mean;
    j["trajectory_error_max_m"] = r.trajectory_error_max;
    j["speed_error_mean_m_per_s"] = r.speed_error_mean;
    out << j.dump(2) << '\n';
    return;
  }
  out << "kinema match run: " << request.database << " along " << request.path << " → "
      << request.out << "\n"
      << "  frames " << r.frames << " at " << format_number(result.fps) << " fps, " << r.searches
      << " searches, " << r.transitions << " transitions\n"
      << "  "
      << (result.foot_skate ? skate_text(*result.foot_skate) : "foot skate: no humanoid feet")
      << "\n"
      << "  trajectory error " << format_number(r.trajectory_error_mean, 3) << " m mean, "
      << format_number(r.trajectory_error_max, 3) << " m max (against the stick's path)\n";
}

nlohmann::ordered_json database_json(const match::Database& db, size_t file_bytes) {
  size_t searchable = 0;
  for (const uint8_t s : db.features.searchable) searchable += s != 0;
  nlohmann::ordered_json j;
  j["variants"] = db.clips.size();
  j["frames"] = db.frames();
  j["searchable_frames"] = searchable;
  j["features"] = db.dims();
  j["fps"] = db.fps;
  j["trajectory_times"] = db.trajectory_times;
  nlohmann::ordered_json groups = nlohmann::ordered_json::array();
  for (const match::FeatureGroup& g : db.groups)
    groups.push_back({{"name", g.name},
                      {"offset", g.offset},
                      {"dims", g.dims},
                      {"weight", g.weight},
                      {"scale", g.scale}});
  j["groups"] = std::move(groups);
  j["tags"] = db.tag_names;
  j["feature_bytes"] = db.feature_bytes();
  j["bytes_per_frame"] = db.frames() ? double(db.feature_bytes()) / double(db.frames()) : 0.0;
  j["poses"] = db.has_poses();
  j["joints"] = db.has_poses() ? db.skeleton.joint_count() : 0;
  j["file_bytes"] = file_bytes;
  nlohmann::ordered_json variants = nlohmann::ordered_json::array();
  for (const match::DatabaseClip& c : db.clips)
    variants.push_back({{"name", c.name},
                        {"mirrored", c.mirrored},
                        {"speed", c.speed},
                        {"start_time", c.start_time},
                        {"first_frame", c.first_frame},
                        {"frame_count", c.frame_count}});
  j["clip_variants"] = std::move(variants);
  return j;
}

void print_database(const match::Database& db, size_t file_bytes, bool clips, std::ostream& out) {
  size_t searchable = 0;
  for (const uint8_t s : db.features.searchable) searchable += s != 0;
  bool mirrored = false;
  for (const match::DatabaseClip& c : db.clips) mirrored = mirrored || c.mirrored;
  out << "  frames " << db.frames() << " (" << db.clips.size() << " variants"
      << (mirrored ? ", mirrored" : "") << ", " << format_number(db.fps) << " fps), " << searchable
      << " searchable\n"
      << "  features " << db.dims() << " a frame in " << db.groups.size() << " groups\n"
      << "  memory " << format_bytes(db.feature_bytes()) << " ("
      << format_number(db.frames() ? double(db.feature_bytes()) / double(db.frames()) : 0.0, 1)
      << " B a frame), file " << format_bytes(file_bytes) << "\n"
      << "  poses "
      << (db.has_poses() ? std::to_string(db.skeleton.joint_count()) + " joints a frame"
                         : std::string("not stored (--features-only)"))
      << "\n";
  if (!db.tag_names.empty()) {
    out << "  tags";
    for (const std::string& t : db.tag_names) out << ' ' << t;
    out << '\n';
  }
  if (!clips) return;
  for (const match::FeatureGroup& g : db.groups)
    out << "  group " << g.name << ": dimensions " << g.offset << "…" << g.offset + g.dims - 1
        << ", weight " << format_number(g.weight) << ", scale σ " << format_number(g.scale, 4)
        << '\n';
  out << "  clip variants: " << db.clips.size() << '\n';
  for (size_t i = 0; i < db.clips.size(); ++i) {
    const match::DatabaseClip& c = db.clips[i];
    out << "    [" << i << "] \"" << c.name << "\"" << (c.mirrored ? " mirrored" : "")
        << (c.speed != 1 ? " ×" + format_number(c.speed, 3) : std::string()) << ": frames "
        << c.first_frame << "…" << c.first_frame + c.frame_count - 1 << " (" << c.frame_count
        << ")\n";
  }
}

VerbRun register_match(CLI::App& app, const GlobalOptions& global) {
  struct BuildArgs {
    pipeline::MatchBuildRequest request;
    bool features_only = false, json = false;
  };
  struct RunArgs {
    pipeline::MatchRunRequest request;
    double clamp_angle_degrees = 30;
    bool json = false;
  };
  auto args = std::make_shared<BuildArgs>();
  pipeline::MatchBuildRequest& b = args->request;
  CLI::App* match = app.add_subcommand("match", "Motion matching: feature databases and search");
  match->require_subcommand(1);
  CLI::App* build = match->add_subcommand(
      "build",
      "Build a motion-matching database: per-frame trajectory and foot/hip features of every "
      "clip, normalized, tagged, written as .kmm");
  build->add_option("CLIPS", b.inputs, "Clip files (.bvh .glb .gltf .vrm .fbx .dae)")->required();
  build->add_option("-o,--out", b.out, "The database to write (.kmm)")->required();
  build->add_option("--tags", b.tags,
                    "JSON: {\"tags\": [{\"clip\", \"start\", \"end\", \"tag\"}]} (seconds)");
  build->add_option("--fps", b.database.fps, "Database frames per second")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 1000.0));
  build->add_flag("--mirror", b.database.mirror, "Also add every clip mirrored left ↔ right");
  build->add_option("--speeds", b.database.speeds, "Playback speeds of every clip, e.g. 0.8,1,1.2")
      ->delimiter(',')
      ->check(CLI::Range(0.05, 20.0));
  build
      ->add_option("--trajectory", b.database.trajectory_times,
                   "Future times of the trajectory features, seconds (increasing)")
      ->delimiter(',')
      ->check(CLI::Range(0.001, 60.0));
  build->add_option("--skip-frames", b.skip_frames,
                    "Source frames skipped at the start of every clip (e.g. 1 for an added "
                    "T-pose frame)");
  build->add_flag("--features-only", args->features_only,
                  "Store features but no poses (clips on different skeletons; search "
                  "benchmarks). Without it every clip must share one skeleton");
  build->add_flag("--json", args->json, "Print the summary as one JSON object");

  auto run_args = std::make_shared<RunArgs>();
  pipeline::MatchRunRequest& r = run_args->request;
  CLI::App* run = match->add_subcommand(
      "run",
      "Drive a character through a database along a scripted stick path: trajectory "
      "prediction, search, inertialized transitions, root motion; writes the animation and "
      "reports searches, transitions, foot sliding and trajectory error");
  run->add_option("DB", r.database, "The database (.kmm, built with poses)")->required();
  run->add_option("--path", r.path,
                  "JSON: {\"duration\": S, \"keys\": [{\"time\", \"direction\": [x, z], "
                  "\"speed\", \"facing\": [x, z]}]}")
      ->required();
  run->add_option("-o,--out", r.out, "The animation to write (.glb .gltf .bvh)")->required();
  run->add_option("--search-interval", r.controller.search_interval, "Seconds between searches")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 10.0));
  run->add_option("--blend-time", r.controller.blend_time, "Inertialization time, seconds")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 5.0));
  run->add_option("--clamp-distance", r.controller.clamp_distance,
                  "Metres the character may stray from the stick's path (0: pure root motion)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 100.0));
  run->add_option("--clamp-angle", run_args->clamp_angle_degrees,
                  "Degrees the character's facing may stray from the stick's (0: no clamp)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 180.0));
  run->add_option("--tags", r.tags, "Only frames with one of these tags (a,b,…)");
  run->add_option("--exclude", r.exclude, "Never frames with these tags (a,b,…)");
  run->add_flag("--foot-locking", r.controller.foot_locking,
                "Hold each ankle where its contact began (two-bone IK on hip, knee, ankle)");
  run->add_flag("--warp", r.controller.locomotion_warping,
                "Locomotion warping: scale the stride and turn the lower body where the "
                "character moves unlike the frame playing; holds planted feet (includes "
                "--foot-locking)");
  run->add_flag("--json", run_args->json, "Print the report as one JSON object");

  return [args, run_args, run, &global]() {
    JobProgress progress(global.progress_enabled());
    if (run->parsed()) {
      pipeline::MatchRunRequest request = run_args->request;
      request.controller.clamp_angle = run_args->clamp_angle_degrees * std::numbers::pi / 180;
      const pipeline::MatchRunResult result =
          pipeline::run_match_along_path(request, progress.callback());
      progress.done();
      if (run_args->json || !global.quiet)
        print_match_run(request, result, run_args->json, std::cout);
    } else {
      pipeline::MatchBuildRequest request = args->request;
      request.database.store_poses = !args->features_only;
      request.load = global.load;
      const pipeline::MatchBuildResult result =
          pipeline::build_match_database(request, progress.callback());
      progress.done();
      if (args->json || !global.quiet) print_match_build(request, result, args->json, std::cout);
    }
    return kExitOk;
  };
}

}  // namespace kinema::cli
