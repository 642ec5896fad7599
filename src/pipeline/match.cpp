// `kinema match build`, `kinema match learn` and `kinema match run` as library calls
// (kinema/pipeline/match.h).
#include "kinema/pipeline/match.h"

#include <filesystem>
#include <sstream>

#include "kinema/core/error.h"
#include "kinema/core/file.h"
#include "kinema/match/inputs.h"
#include "kinema/render/clip_render.h"
#include "kinema/render/plot.h"
#include "learn_plugin.h"

namespace kinema::pipeline {

namespace {

namespace fs = std::filesystem;

/// One loaded input: its asset and the joints features read.
struct LoadedInput {
  std::string path;
  Asset asset;
  match::FeatureJoints joints;
};

/// Every clip of every input as a database source: named after the file's stem ("stem:clip"
/// when the file holds several), starting `skip_frames` frames in.
std::vector<match::ClipSource> clip_sources(const std::vector<LoadedInput>& inputs,
                                            int skip_frames) {
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
      if (skip_frames > 0) {
        const double rate = infer_frame_rate(clip);
        if (rate <= 0)
          throw Error(in.path, "clip \"" + clip.name + "\"",
                      "--skip-frames needs evenly spaced keys (the clip has no frame rate)");
        s.start_time = skip_frames / rate;
      }
      clips.push_back(s);
    }
  }
  return clips;
}

/// The bits of a comma-separated tag list; every tag must be in the database.
uint64_t tag_mask(const match::Database& db, const std::string& list) {
  uint64_t mask = 0;
  std::stringstream ss(list);
  for (std::string tag; std::getline(ss, tag, ',');) {
    const uint64_t bit = db.tag_mask(tag);
    if (bit == 0) throw UsageError("the database has no tag \"" + tag + "\"");
    mask |= bit;
  }
  return mask;
}

}  // namespace

MatchBuildResult build_match_database(const MatchBuildRequest& request, const Progress& progress) {
  std::vector<NamedInput> named;
  for (const std::string& in : request.inputs) named.push_back({"the input " + in, in});
  static constexpr std::string_view kKmm[] = {"kmm"};
  check_output_file(request.out, named, kKmm, "match build");
  if (request.skip_frames < 0) throw UsageError("--skip-frames must be ≥ 0");

  std::vector<LoadedInput> inputs;
  for (const std::string& path : request.inputs) {
    LoadedInput in{path, load_asset(path, request.load), {}};
    if (in.asset.clips.empty()) throw Error(path, "", "no animation clip");
    in.joints = match::feature_joints_of(in.asset, path);
    inputs.push_back(std::move(in));
    report(progress, "loading clips", long(inputs.size()), long(request.inputs.size()));
  }
  std::vector<match::ClipSource> clips = clip_sources(inputs, request.skip_frames);
  if (!request.tags.empty()) {
    std::vector<std::string> names;
    for (const match::ClipSource& c : clips) names.push_back(c.name);
    const auto tags = match::read_tag_ranges(request.tags, names);
    for (match::ClipSource& c : clips)
      if (const auto it = tags.find(c.name); it != tags.end()) c.tags = it->second;
  }

  MatchBuildResult result;
  result.database = match::build_database(clips, request.database, [&](size_t done) {
    report(progress, "building features", long(done), long(clips.size()));
  });
  const std::string bytes = match::serialize_database(result.database);
  write_file_atomically(request.out, bytes);
  result.file_bytes = bytes.size();
  result.clip_count = clips.size();
  result.input_count = inputs.size();
  return result;
}

MatchLearnResult learn_match_model(const MatchLearnRequest& request, const Progress& progress) {
  const NamedInput db_input[] = {{"the database", request.database}};
  static constexpr std::string_view kKml[] = {"kml"};
  check_output_file(request.out, db_input, kKml, "match learn");
  MatchLearnResult result;
  result.plot = request.plot.empty()
                    ? fs::path(request.out).replace_extension(".losses.png").string()
                    : request.plot;
  const NamedInput plot_inputs[] = {{"the database", request.database}, {"the model", request.out}};
  static constexpr std::string_view kPng[] = {"png"};
  check_output_file(result.plot, plot_inputs, kPng, "match learn");
  const match::Database db =
      match::deserialize_database(read_file(request.database), request.database);
  if (!db.has_poses())
    throw Error(request.database, "", "the database has no poses (built with --features-only)");
  static constexpr const char* kStages[] = {"decompressor", "stepper", "projector"};
  result.model = train_with_plugin(db, request.train, &result.report,
                                   [&](int network, uint32_t done, uint32_t total) {
                                     report(progress, kStages[network], long(done), long(total));
                                   });
  result.frames = db.frames();
  result.database_bytes = db.feature_bytes() + db.roots.size() * sizeof(match::RootSample) +
                          db.poses.size() * sizeof(Transformf);
  // The loss curves, each network's normalized by its first value so the three share an axis.
  std::vector<PlotSeries> series;
  const Rgb colors[] = {{31, 119, 180}, {255, 127, 14}, {44, 160, 44}};
  for (size_t i = 0; i < result.report.curves.size(); ++i) {
    const match::LossCurve& c = result.report.curves[i];
    PlotSeries line;
    line.name = c.network;
    line.color = colors[i % 3];
    const double first = c.losses.empty() || !(c.losses.front() > 0) ? 1 : c.losses.front();
    for (const double l : c.losses) line.values.push_back(l / first);
    series.push_back(std::move(line));
  }
  PlotOptions plot;
  plot.title = "Learned motion matching: training loss";
  plot.x_label = "training progress (each network's iterations, 1/200 steps)";
  plot.y_label = "loss / first loss";
  const std::string bytes = match::serialize_learned_model(result.model);
  const Image image = plot_lines(series, plot);
  write_file_atomically(request.out, bytes);
  write_png(image, result.plot);
  result.file_bytes = bytes.size();
  return result;
}

match::LearnedEvaluation evaluate_match_model(const MatchEvaluateRequest& request) {
  const match::LearnedModel model =
      match::deserialize_learned_model(read_file(request.model), request.model);
  const match::Database db =
      match::deserialize_database(read_file(request.database), request.database);
  try {
    return match::evaluate_learned_model(model, db, request.noise);
  } catch (const Error& e) {
    throw Error(request.database, e.place(), e.reason());
  }
}

namespace {

/// Whether a file's bytes are a .kml model (else they are read as a .kmm database).
bool is_learned_model(std::string_view bytes) { return bytes.starts_with("KMLEARN"); }

/// At key `frame` of a run's clip (a key per frame): the hips' world position, and every joint's
/// position in the hips' frame (metres), so that two runs' poses compare whatever their headings.
void run_positions(const Skeleton& skeleton, const Clip& clip, int frame, int hips,
                   std::vector<Transform>& local, std::vector<Mat4>& model, Vec3& hips_position,
                   std::vector<Vec3>& out) {
  const size_t joints = size_t(skeleton.joint_count());
  local.resize(joints);
  model.resize(joints);
  out.resize(joints);
  for (size_t j = 0; j < joints; ++j) {
    const JointTrack& track = clip.tracks[j];
    local[j] =
        Transform{track.translation.values[size_t(frame)], track.rotation.values[size_t(frame)]};
  }
  local_to_model(skeleton.parents(), local, model);
  const Mat4& pelvis = model[size_t(hips)];
  hips_position = pelvis.translation_part();
  const Mat4 to_hips = rigid_inverse(pelvis);
  for (size_t j = 0; j < joints; ++j) out[j] = to_hips.transform_point(model[j].translation_part());
}

}  // namespace

MatchRunResult run_match_along_path(const MatchRunRequest& request, const Progress& progress) {
  static constexpr std::string_view kAnimation[] = {"glb", "gltf", "bvh"};
  const NamedInput inputs[] = {{"the database", request.database},
                               {"the stick path", request.path},
                               {"the compared database", request.compare}};
  check_output_file(request.out, std::span(inputs, request.compare.empty() ? 2 : 3), kAnimation,
                    "match run");
  const std::string bytes = read_file(request.database);
  MatchRunResult result;
  result.learned = is_learned_model(bytes);
  if (!request.compare.empty() && !result.learned)
    throw UsageError("--compare runs a learned model (.kml) against a database (.kmm): " +
                     request.database + " is not a learned model");
  if (result.learned && (!request.tags.empty() || !request.exclude.empty()))
    throw UsageError("--tags and --exclude need a database: a learned model has no tagged frames");
  match::Database db;
  match::LearnedModel model;
  if (result.learned) {
    model = match::deserialize_learned_model(bytes, request.database);
  } else {
    db = match::deserialize_database(bytes, request.database);
    if (!db.has_poses())
      throw Error(request.database, "", "the database has no poses (built with --features-only)");
  }
  const match::StickPath path = match::read_stick_path(request.path);
  match::ControllerOptions options = request.controller;
  if (!request.tags.empty()) options.filter.require_any = tag_mask(db, request.tags);
  if (!request.exclude.empty()) options.filter.exclude = tag_mask(db, request.exclude);
  const Skeleton& skeleton = result.learned ? model.skeleton : db.skeleton;
  result.fps = result.learned ? model.fps : db.fps;
  const int runs = request.compare.empty() ? 1 : 2;
  const auto frames_done = [&](int run) {
    return [&, run](int done, int total) {
      report(progress, "motion matching", long(run) * total + done, long(runs) * total);
    };
  };
  result.run = result.learned ? match::run_along_path(model, path, options, frames_done(0))
                              : match::run_along_path(db, path, options, frames_done(0));
  Asset animation;
  animation.skeleton = skeleton;
  animation.clips.push_back(result.run.clip);
  result.foot_skate = humanoid_foot_skate(animation, result.run.clip, result.fps);
  if (!request.compare.empty()) {
    const match::Database exact =
        match::deserialize_database(read_file(request.compare), request.compare);
    if (!exact.has_poses())
      throw Error(request.compare, "", "the database has no poses (built with --features-only)");
    if (exact.skeleton.joint_count() != skeleton.joint_count() || exact.fps != result.fps)
      throw UsageError("--compare " + request.compare +
                       ": the database's skeleton or frame rate is not the model's");
    MatchComparison c;
    c.exact = match::run_along_path(exact, path, options, frames_done(1));
    Asset exact_animation;
    exact_animation.skeleton = exact.skeleton;
    exact_animation.clips.push_back(c.exact.clip);
    c.foot_skate = humanoid_foot_skate(exact_animation, c.exact.clip, result.fps);
    std::vector<Transform> local;
    std::vector<Mat4> model_space;
    std::vector<Vec3> a, b;
    Vec3 hips_a, hips_b;
    double root_sum = 0, pose_sum = 0;
    const int frames = std::min(result.run.frames, c.exact.frames);
    const int hips = model.joints.hips;
    for (int f = 0; f < frames; ++f) {
      run_positions(skeleton, result.run.clip, f, hips, local, model_space, hips_a, a);
      run_positions(exact.skeleton, c.exact.clip, f, hips, local, model_space, hips_b, b);
      // The hips' horizontal distance; the poses with every joint in its hips' frame.
      const double root = std::hypot(hips_a.x - hips_b.x, hips_a.z - hips_b.z);
      root_sum += root;
      c.root_distance_max = std::max(c.root_distance_max, root);
      double pose = 0;
      for (size_t j = 0; j < a.size(); ++j) pose += distance(a[j], b[j]);
      pose = 100 * pose / double(a.size());
      pose_sum += pose;
      c.pose_distance_max_cm = std::max(c.pose_distance_max_cm, pose);
    }
    c.root_distance_mean = frames ? root_sum / frames : 0;
    c.pose_distance_mean_cm = frames ? pose_sum / frames : 0;
    result.comparison = std::move(c);
  }
  save_asset(animation, request.out);
  return result;
}

}  // namespace kinema::pipeline
