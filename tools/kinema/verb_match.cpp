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
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <numbers>
#include <sstream>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "kinema/blend/root_motion.h"
#include "kinema/character/humanoid.h"
#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/match/controller.h"
#include "kinema/match/database.h"
#include "kinema/skeleton/skeleton.h"
#include "match_summary.h"

namespace kinema::cli {

namespace {

namespace fs = std::filesystem;

/// One loaded input: its asset and the joints features read.
struct LoadedInput {
  std::string path;
  Asset asset;
  match::FeatureJoints joints;
};

match::FeatureJoints feature_joints(const Asset& asset, const std::string& path) {
  const auto human = humanoid_of(asset);
  const auto joint = [&](const char* bone) { return human ? human->find(bone) : -1; };
  match::FeatureJoints j{joint("hips"),         joint("leftFoot"),      joint("rightFoot"),
                         joint("leftUpperLeg"), joint("rightUpperLeg"), joint("leftLowerLeg"),
                         joint("rightLowerLeg")};
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

}  // namespace

void run_match_build(const MatchBuildRequest& a, const GlobalOptions& global) {
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
      LoadedInput in{path, load_input(path, global.load), {}};
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

  if (a.json) {
    nlohmann::ordered_json j;
    j["out"] = a.out;
    j["clips"] = clips.size();
    j.update(database_json(db, bytes.size()));
    std::cout << j.dump(2) << '\n';
  } else if (!global.quiet) {
    std::cout << "kinema match build: " << clips.size() << " clips from " << inputs.size()
              << " files → " << a.out << "\n";
    print_database(db, bytes.size(), false, std::cout);
  }
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

namespace {

/// The scripted stick: keys held until the next one.
struct StickKey {
  double time = 0;
  Vec3 velocity{0, 0, 0};
  Vec3 facing{0, 0, 0};
};

struct StickPath {
  double duration = 0;
  std::vector<StickKey> keys;

  match::ControllerInput at(double t) const {
    const StickKey* k = &keys.front();
    for (const StickKey& key : keys)
      if (key.time <= t + 1e-9) k = &key;
    return {k->velocity, k->facing};
  }
};

/// PATH.json: {"duration": S, "keys": [{"time": T, "direction": [x, z], "speed": V,
/// "facing": [x, z]}, …]} — direction and facing are horizontal world directions (normalized
/// here), facing optional (default: the direction).
StickPath read_path(const std::string& file) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_file(file));
  } catch (const nlohmann::json::exception& e) {
    throw Error(file, "", std::string("not valid JSON: ") + e.what());
  }
  StickPath p;
  if (!j.is_object() || !j.contains("duration") || !j["duration"].is_number())
    throw Error(file, "/duration", "expected a number of seconds");
  p.duration = j["duration"].get<double>();
  if (!(p.duration > 0) || !(p.duration <= 3600))
    throw Error(file, "/duration", "must be > 0 and at most an hour");
  if (!j.contains("keys") || !j["keys"].is_array() || j["keys"].empty())
    throw Error(file, "/keys", "expected a non-empty array of keys");
  double previous = -1;
  for (size_t i = 0; i < j["keys"].size(); ++i) {
    const nlohmann::json& k = j["keys"][i];
    const std::string at = "/keys/" + std::to_string(i);
    if (!k.is_object()) throw Error(file, at, "expected an object");
    StickKey key;
    if (!k.contains("time") || !k["time"].is_number())
      throw Error(file, at + "/time", "expected a number of seconds");
    key.time = k["time"].get<double>();
    if (!(key.time > previous) || !std::isfinite(key.time))
      throw Error(file, at + "/time", "times must increase");
    previous = key.time;
    const auto direction = [&](const char* name, bool required) -> Vec3 {
      if (!k.contains(name)) {
        if (required) throw Error(file, at + "/" + name, "expected [x, z]");
        return {0, 0, 0};
      }
      const nlohmann::json& d = k[name];
      if (!d.is_array() || d.size() != 2 || !d[0].is_number() || !d[1].is_number())
        throw Error(file, at + "/" + name, "expected [x, z]");
      const Vec3 v{d[0].get<double>(), 0, d[1].get<double>()};
      const double len = std::hypot(v.x, v.z);
      if (!(len > 1e-9) || !std::isfinite(len))
        throw Error(file, at + "/" + name, "a direction needs a non-zero length");
      return v / len;
    };
    double speed = 0;
    if (k.contains("speed")) {
      if (!k["speed"].is_number() || !(k["speed"].get<double>() >= 0) ||
          !(k["speed"].get<double>() < 100))
        throw Error(file, at + "/speed", "expected metres per second, 0 to 100");
      speed = k["speed"].get<double>();
    }
    key.velocity = speed > 0 ? direction("direction", true) * speed : Vec3{0, 0, 0};
    key.facing = direction("facing", false);
    if (speed == 0 && k.contains("direction") && !k.contains("facing"))
      key.facing = direction("direction", true);
    p.keys.push_back(key);
  }
  return p;
}

}  // namespace

void run_match_run(const MatchRunRequest& a, const GlobalOptions& global) {
  const std::string ext = extension_of(a.out);
  if (ext != "glb" && ext != "gltf" && ext != "bvh")
    throw UsageError("OUT must be .glb, .gltf or .bvh, not " + a.out);
  if (same_file(a.db, a.out) || same_file(a.path, a.out))
    throw UsageError("OUT is the same file as an input");
  const match::Database db = match::deserialize_database(read_file(a.db), a.db);
  if (!db.has_poses())
    throw Error(a.db, "", "the database has no poses (built with --features-only)");
  const StickPath path = read_path(a.path);
  match::ControllerOptions options;
  options.search_interval = a.search_interval;
  options.blend_time = a.blend_time;
  options.clamp_distance = a.clamp_distance;
  options.foot_locking = a.foot_locking;
  options.clamp_angle = a.clamp_angle * std::numbers::pi / 180;
  const auto mask = [&](const std::string& list) {
    uint64_t m = 0;
    std::stringstream ss(list);
    for (std::string tag; std::getline(ss, tag, ',');) {
      const uint64_t bit = db.tag_mask(tag);
      if (bit == 0) throw UsageError("the database has no tag \"" + tag + "\"");
      m |= bit;
    }
    return m;
  };
  if (!a.tags.empty()) options.filter.require_any = mask(a.tags);
  if (!a.exclude.empty()) options.filter.exclude = mask(a.exclude);
  match::Controller controller(db, options);

  const double dt = 1.0 / db.fps;
  const int frames = int(std::floor(path.duration * db.fps + 1e-9)) + 1;
  const int joints = db.skeleton.joint_count();
  Clip clip;
  clip.name = "motion_matching";
  clip.duration = (frames - 1) * dt;
  clip.sample_rate = db.fps;
  clip.tracks.resize(size_t(joints));
  std::vector<Vec3> feet;
  std::vector<Transform> local(static_cast<size_t>(joints));
  std::vector<Mat4> model(static_cast<size_t>(joints));
  // Trajectory error: the root's distance to the simulation, where the stick's springs say the
  // character should be.
  double error_sum = 0, error_max = 0, speed_error_sum = 0;
  int settled = 0;
  Progress progress("motion matching", frames, global.progress_enabled());
  for (int f = 0; f < frames; ++f) {
    const double t = f * dt;
    const match::ControllerInput input = path.at(t);
    if (f == 0) controller.reset(0);
    controller.update(input);
    const Vec3 pos = controller.root_position(), ideal = controller.simulation_position();
    const double err = std::hypot(pos.x - ideal.x, pos.z - ideal.z);
    error_sum += err;
    error_max = std::max(error_max, err);
    const double speed = std::hypot(controller.root_velocity().x, controller.root_velocity().z);
    if (f > 0) {
      speed_error_sum += std::abs(speed - std::hypot(input.velocity.x, input.velocity.z));
      ++settled;
    }
    const std::span<const Transformf> pose = controller.pose();
    for (int j = 0; j < joints; ++j) {
      const Transform x(pose[size_t(j)]);
      local[size_t(j)] = x;
      JointTrack& track = clip.tracks[size_t(j)];
      track.translation.times.push_back(t);
      track.translation.values.push_back(x.translation);
      track.rotation.times.push_back(t);
      track.rotation.values.push_back(x.rotation);
    }
    local_to_model(db.skeleton.parents(), local, model);
    feet.push_back(model[size_t(db.joints.left_foot)].translation_part());
    feet.push_back(model[size_t(db.joints.right_foot)].translation_part());
    progress.update(f + 1);
  }
  progress.done();
  Asset result;
  result.skeleton = db.skeleton;
  result.clips.push_back(std::move(clip));
  save_asset(result, a.out);

  const FootSlidingReport sliding = measure_foot_sliding(feet, 2, dt);
  const double mean_error = error_sum / frames;
  if (a.json) {
    nlohmann::ordered_json j;
    j["out"] = a.out;
    j["frames"] = frames;
    j["fps"] = db.fps;
    j["searches"] = controller.searches();
    j["transitions"] = controller.transitions();
    j["foot_sliding_mean_m_per_s"] = sliding.total.mean_speed;
    j["foot_sliding_max_m_per_s"] = sliding.total.max_speed;
    j["foot_drift_m"] = sliding.total.drift_distance;
    j["trajectory_error_mean_m"] = mean_error;
    j["trajectory_error_max_m"] = error_max;
    j["speed_error_mean_m_per_s"] = settled ? speed_error_sum / settled : 0;
    std::cout << j.dump(2) << '\n';
  } else if (!global.quiet) {
    std::cout << "kinema match run: " << a.db << " along " << a.path << " → " << a.out << "\n"
              << "  frames " << frames << " at " << format_number(db.fps) << " fps, "
              << controller.searches() << " searches, " << controller.transitions()
              << " transitions\n"
              << "  foot sliding " << format_number(sliding.total.mean_speed, 3) << " m/s mean, "
              << format_number(sliding.total.max_speed, 3) << " m/s max ("
              << format_number(sliding.total.drift_distance, 3) << " m drift in contact)\n"
              << "  trajectory error " << format_number(mean_error, 3) << " m mean, "
              << format_number(error_max, 3) << " m max (against the stick's path)\n";
  }
}

namespace {}  // namespace

VerbRun register_match(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<MatchBuildRequest>();
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

  auto run_args = std::make_shared<MatchRunRequest>();
  CLI::App* run = match->add_subcommand(
      "run",
      "Drive a character through a database along a scripted stick path: trajectory "
      "prediction, search, inertialized transitions, root motion; writes the animation and "
      "reports searches, transitions, foot sliding and trajectory error");
  run->add_option("DB", run_args->db, "The database (.kmm, built with poses)")->required();
  run->add_option("--path", run_args->path,
                  "JSON: {\"duration\": S, \"keys\": [{\"time\", \"direction\": [x, z], "
                  "\"speed\", \"facing\": [x, z]}]}")
      ->required();
  run->add_option("-o,--out", run_args->out, "The animation to write (.glb .gltf .bvh)")
      ->required();
  run->add_option("--search-interval", run_args->search_interval, "Seconds between searches")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 10.0));
  run->add_option("--blend-time", run_args->blend_time, "Inertialization time, seconds")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 5.0));
  run->add_option("--clamp-distance", run_args->clamp_distance,
                  "Metres the character may stray from the stick's path (0: pure root motion)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 100.0));
  run->add_option("--clamp-angle", run_args->clamp_angle,
                  "Degrees the character's facing may stray from the stick's (0: no clamp)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 180.0));
  run->add_option("--tags", run_args->tags, "Only frames with one of these tags (a,b,…)");
  run->add_option("--exclude", run_args->exclude, "Never frames with these tags (a,b,…)");
  run->add_flag("--foot-locking", run_args->foot_locking,
                "Hold each ankle where its contact began (two-bone IK on hip, knee, ankle)");
  run->add_flag("--json", run_args->json, "Print the report as one JSON object");

  return [args, run_args, run, &global]() {
    if (run->parsed())
      run_match_run(*run_args, global);
    else
      run_match_build(*args, global);
    return kExitOk;
  };
}

}  // namespace kinema::cli
