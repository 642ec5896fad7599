// tools/kinema/verb_match.cpp — `kinema match build CLIPS... -o DB.kmm [--tags TAGS.json]
// [--fps N] [--mirror] [--speeds LIST] [--trajectory LIST] [--skip-frames N] [--features-only]
// [--json]`.
//
// Builds a motion-matching feature database (kinema/match/database.h, docs/match.md) from every
// clip of every input file (BVH, glTF/GLB/VRM, FBX, Collada): the feet, hips and upper legs are
// found by the humanoid mapping, features are computed per frame at --fps, optionally for
// mirrored and re-timed copies, normalized, tagged from TAGS.json and written atomically.
// Prints a progress bar per clip and a summary (frames, features, memory).
//
// TAGS.json: {"tags": [{"clip": "02_01", "start": 0.0, "end": 2.5, "tag": "walk"}, …]} with
// times in seconds of the source clip; "clip" is the clip's name in the database (the file's
// stem, or stem:clip when a file holds several clips).
//
// Exit codes: 1 for a command line that makes no sense (OUT not .kmm, OUT one of the inputs,
// bad lists); 2 for bad input (unreadable or broken files, no humanoid legs, bad tags) or a write
// failure — OUT is then left as it was.
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "kinema/core/error.h"
#include "kinema/io/file.h"
#include "kinema/io/humanoid.h"
#include "kinema/match/database.h"

namespace kinema::cli {

namespace {

namespace fs = std::filesystem;

struct MatchBuildArgs {
  std::vector<std::string> inputs;
  std::string out, tags;
  double fps = 30;
  bool mirror = false, json = false, features_only = false;
  std::vector<double> speeds{1.0}, trajectory{0.33, 0.67, 1.0};
  int skip_frames = 0;
};

/// One loaded input: its asset and the joints features read.
struct LoadedInput {
  std::string path;
  Asset asset;
  match::FeatureJoints joints;
};

match::FeatureJoints feature_joints(const Asset& asset, const std::string& path) {
  const auto human = humanoid_of(asset);
  const auto joint = [&](const char* bone) { return human ? human->find(bone) : -1; };
  match::FeatureJoints j{joint("hips"), joint("leftFoot"), joint("rightFoot"),
                         joint("leftUpperLeg"), joint("rightUpperLeg")};
  if (j.hips < 0 || j.left_foot < 0 || j.right_foot < 0)
    throw Error(path, "skeleton",
                "cannot find the hips and both feet (the humanoid mapping found " +
                    std::string(human ? "some bones but not these" : "no humanoid") +
                    "); motion matching reads their positions");
  if (j.left_upper_leg < 0 || j.right_upper_leg < 0) j.left_upper_leg = j.right_upper_leg = -1;
  return j;
}

/// Tag ranges from TAGS.json, by clip name.
std::map<std::string, std::vector<match::TagRange>> read_tags(
    const std::string& path, const std::vector<match::ClipSource>& clips) {
  std::map<std::string, std::vector<match::TagRange>> by_clip;
  if (path.empty()) return by_clip;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_file(path));
  } catch (const nlohmann::json::exception& e) {
    throw Error(path, "", std::string("not valid JSON: ") + e.what());
  }
  if (!j.is_object() || !j.contains("tags") || !j["tags"].is_array())
    throw Error(path, "/tags", "expected an object with a \"tags\" array");
  for (size_t i = 0; i < j["tags"].size(); ++i) {
    const nlohmann::json& t = j["tags"][i];
    const std::string at = "/tags/" + std::to_string(i);
    if (!t.is_object()) throw Error(path, at, "expected an object");
    for (const char* key : {"clip", "tag"})
      if (!t.contains(key) || !t[key].is_string() || t[key].get<std::string>().empty())
        throw Error(path, at + "/" + key, "expected a non-empty string");
    for (const char* key : {"start", "end"})
      if (!t.contains(key) || !t[key].is_number())
        throw Error(path, at + "/" + key, "expected a number of seconds");
    const std::string clip = t["clip"].get<std::string>();
    bool known = false;
    for (const match::ClipSource& c : clips) known = known || c.name == clip;
    if (!known) {
      std::string names;
      for (const match::ClipSource& c : clips) names += (names.empty() ? "" : ", ") + c.name;
      throw Error(path, at + "/clip", "no clip \"" + clip + "\" among the inputs (" + names + ")");
    }
    const double start = t["start"].get<double>(), end = t["end"].get<double>();
    if (!(start <= end)) throw Error(path, at, "start is after end");
    by_clip[clip].push_back({t["tag"].get<std::string>(), start, end});
  }
  return by_clip;
}

int run_match_build(const MatchBuildArgs& a, const GlobalOptions& global) {
  if (extension_of(a.out) != "kmm") throw UsageError("OUT must be a .kmm file, not " + a.out);
  std::error_code ec;
  if (fs::is_directory(a.out, ec)) throw UsageError("OUT " + a.out + " is a folder");
  for (const std::string& in : a.inputs)
    if (same_file(in, a.out)) throw UsageError("OUT is the same file as the input " + in);
  if (a.skip_frames < 0) throw UsageError("--skip-frames must be ≥ 0");

  std::vector<LoadedInput> inputs;
  {
    Progress progress("loading clips", long(a.inputs.size()), global.progress_enabled());
    for (const std::string& path : a.inputs) {
      LoadedInput in{path, load_input(path), {}};
      if (in.asset.clips.empty()) throw Error(path, "", "no animation clip");
      in.joints = feature_joints(in.asset, path);
      inputs.push_back(std::move(in));
      progress.update(long(inputs.size()));
    }
  }
  std::vector<match::ClipSource> clips;
  for (const LoadedInput& in : inputs) {
    const std::string stem = fs::path(in.path).stem().string();
    for (size_t c = 0; c < in.asset.clips.size(); ++c) {
      const Clip& clip = in.asset.clips[c];
      match::ClipSource s;
      s.name = in.asset.clips.size() == 1
                   ? stem
                   : stem + ":" + (clip.name.empty() ? std::to_string(c) : clip.name);
      s.skeleton = &in.asset.skeleton;
      s.clip = &clip;
      s.joints = in.joints;
      const double rate = frame_rate_of(clip);
      if (a.skip_frames > 0) {
        if (rate <= 0)
          throw Error(in.path, "clip \"" + clip.name + "\"",
                      "--skip-frames needs evenly spaced keys (the clip has no frame rate)");
        s.start_time = a.skip_frames / rate;
      }
      clips.push_back(s);
    }
  }
  const auto tags = read_tags(a.tags, clips);
  for (match::ClipSource& c : clips)
    if (const auto it = tags.find(c.name); it != tags.end()) c.tags = it->second;

  match::DatabaseOptions options;
  options.fps = a.fps;
  options.mirror = a.mirror;
  options.store_poses = !a.features_only;
  options.speeds = a.speeds;
  options.trajectory_times = a.trajectory;
  match::Database db;
  {
    Progress progress("building features", long(clips.size()), global.progress_enabled());
    db = match::build_database(clips, options, [&](size_t done) { progress.update(long(done)); });
  }
  const std::string bytes = match::serialize_database(db);
  write_file_atomically(a.out, bytes);

  size_t searchable = 0;
  for (const uint8_t s : db.features.searchable) searchable += s != 0;
  if (a.json) {
    nlohmann::ordered_json j;
    j["out"] = a.out;
    j["clips"] = clips.size();
    j["variants"] = db.clips.size();
    j["frames"] = db.frames();
    j["searchable_frames"] = searchable;
    j["features"] = db.dims();
    j["fps"] = db.fps;
    j["tags"] = db.tag_names;
    j["feature_bytes"] = db.feature_bytes();
    j["bytes_per_frame"] = double(db.feature_bytes()) / double(db.frames());
    j["poses"] = db.has_poses();
    j["joints"] = db.has_poses() ? db.skeleton.joint_count() : 0;
    j["file_bytes"] = bytes.size();
    std::cout << j.dump(2) << '\n';
  } else if (!global.quiet) {
    std::cout << "kinema match build: " << clips.size() << " clips from " << inputs.size()
              << " files → " << a.out << "\n"
              << "  frames " << db.frames() << " (" << db.clips.size() << " variants"
              << (a.mirror ? ", mirrored" : "") << ", " << format_number(db.fps) << " fps), "
              << searchable << " searchable\n"
              << "  features " << db.dims() << " a frame in " << db.groups.size() << " groups\n"
              << "  memory " << format_bytes(db.feature_bytes()) << " ("
              << format_number(double(db.feature_bytes()) / double(db.frames()), 1)
              << " B a frame), file " << format_bytes(bytes.size()) << "\n"
              << "  poses "
              << (db.has_poses() ? std::to_string(db.skeleton.joint_count()) + " joints a frame"
                                 : std::string("not stored (--features-only)"))
              << "\n";
    if (!db.tag_names.empty()) {
      std::cout << "  tags";
      for (const std::string& t : db.tag_names) std::cout << ' ' << t;
      std::cout << '\n';
    }
  }
  return kExitOk;
}

}  // namespace

VerbRun register_match(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<MatchBuildArgs>();
  CLI::App* match = app.add_subcommand("match", "Motion matching: feature databases and search");
  match->require_subcommand(1);
  CLI::App* build = match->add_subcommand(
      "build",
      "Build a motion-matching database: per-frame trajectory and foot/hip features of every "
      "clip, normalized, tagged, written as .kmm");
  build->add_option("CLIPS", args->inputs, "Clip files (.bvh .glb .gltf .vrm .fbx .dae)")
      ->required();
  build->add_option("-o,--out", args->out, "The database to write (.kmm)")->required();
  build->add_option("--tags", args->tags,
                    "JSON: {\"tags\": [{\"clip\", \"start\", \"end\", \"tag\"}]} (seconds)");
  build->add_option("--fps", args->fps, "Database frames per second")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 1000.0));
  build->add_flag("--mirror", args->mirror, "Also add every clip mirrored left ↔ right");
  build->add_option("--speeds", args->speeds, "Playback speeds of every clip, e.g. 0.8,1,1.2")
      ->delimiter(',')
      ->check(CLI::Range(0.05, 20.0));
  build
      ->add_option("--trajectory", args->trajectory,
                   "Future times of the trajectory features, seconds (increasing)")
      ->delimiter(',')
      ->check(CLI::Range(0.001, 60.0));
  build->add_option("--skip-frames", args->skip_frames,
                    "Source frames skipped at the start of every clip (e.g. 1 for an added "
                    "T-pose frame)");
  build->add_flag("--features-only", args->features_only,
                  "Store features but no poses (clips on different skeletons; search "
                  "benchmarks). Without it every clip must share one skeleton");
  build->add_flag("--json", args->json, "Print the summary as one JSON object");
  return [args, &global]() { return run_match_build(*args, global); };
}

}  // namespace kinema::cli
