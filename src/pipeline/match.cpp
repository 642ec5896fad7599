// `kinema match build` and `kinema match run` as library calls (kinema/pipeline/match.h).
#include "kinema/pipeline/match.h"

#include <filesystem>
#include <sstream>

#include "kinema/core/error.h"
#include "kinema/core/file.h"
#include "kinema/match/inputs.h"

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

MatchRunResult run_match_along_path(const MatchRunRequest& request, const Progress& progress) {
  static constexpr std::string_view kAnimation[] = {"glb", "gltf", "bvh"};
  const NamedInput inputs[] = {{"the database", request.database},
                               {"the stick path", request.path}};
  check_output_file(request.out, inputs, kAnimation, "match run");
  const match::Database db =
      match::deserialize_database(read_file(request.database), request.database);
  if (!db.has_poses())
    throw Error(request.database, "", "the database has no poses (built with --features-only)");
  const match::StickPath path = match::read_stick_path(request.path);
  match::ControllerOptions options = request.controller;
  if (!request.tags.empty()) options.filter.require_any = tag_mask(db, request.tags);
  if (!request.exclude.empty()) options.filter.exclude = tag_mask(db, request.exclude);

  MatchRunResult result;
  result.fps = db.fps;
  result.run = match::run_along_path(db, path, options, [&](int done, int total) {
    report(progress, "motion matching", done, total);
  });
  Asset animation;
  animation.skeleton = db.skeleton;
  animation.clips.push_back(result.run.clip);
  result.foot_skate = humanoid_foot_skate(animation, result.run.clip, db.fps);
  save_asset(animation, request.out);
  return result;
}

}  // namespace kinema::pipeline
