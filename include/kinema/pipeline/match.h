// kinema/pipeline/match.h — `kinema match build` and `kinema match run` as library calls:
// a motion-matching database built from clip files and written as .kmm, and a character driven
// through one along a scripted stick and written as an animation (docs/match.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kinema/io/asset_file.h"
#include "kinema/match/database.h"
#include "kinema/match/run_along_path.h"
#include "kinema/pipeline/job.h"
#include "kinema/retarget/metrics.h"

namespace kinema::pipeline {

struct MatchBuildRequest {
  std::vector<std::string> inputs;  ///< clip files; every clip of each becomes a source clip
  std::string out;                  ///< the .kmm to write
  std::string tags;                 ///< TAGS.json (kinema/match/inputs.h), or empty
  /// Source frames skipped at the start of every clip (an added T-pose frame, say): needs
  /// evenly spaced keys.
  int skip_frames = 0;
  match::DatabaseOptions database;
  LoadOptions load;
};

struct MatchBuildResult {
  match::Database database;
  size_t file_bytes = 0;   ///< of the .kmm written
  size_t clip_count = 0;   ///< source clips ("stem", or "stem:clip" when a file holds several)
  size_t input_count = 0;  ///< files read
};

/// Reads every input (a humanoid's hips and feet are found by name: match::feature_joints_of),
/// tags the clips, builds the database (match::build_database) and writes it atomically.
/// Progress stages: "loading clips" (files), "building features" (clips). Throws UsageError for
/// an OUT that is not a .kmm, is a folder or an input, or a negative skip_frames; kinema::Error
/// for unreadable inputs, clips without humanoid legs, bad tags, a write failure.
MatchBuildResult build_match_database(const MatchBuildRequest& request,
                                      const Progress& progress = {});

struct MatchRunRequest {
  std::string database;  ///< the .kmm (built with poses)
  std::string path;      ///< PATH.json, the scripted stick (kinema/match/inputs.h)
  std::string out;       ///< the animation to write: .glb .gltf .bvh
  match::ControllerOptions controller;
  /// Comma-separated tag lists: search only frames with one of `tags`, never frames with one of
  /// `exclude` (each tag must be in the database).
  std::string tags, exclude;
};

struct MatchRunResult {
  match::PathRun run;  ///< its clip is the one written
  double fps = 0;      ///< the database's frame rate
  /// How fast planted feet skate in run.clip (humanoid_foot_skate on the database's skeleton);
  /// unset when its joint names give no humanoid feet.
  std::optional<HumanoidFootSkate> foot_skate;
};

/// Loads the database and the stick path, runs the controller along it
/// (match::run_along_path) and writes the animation on the database's skeleton. Progress stage:
/// "motion matching" (frames). Throws UsageError for a bad OUT or an unknown tag; kinema::Error
/// for a database without poses, a bad path file, a write failure.
MatchRunResult run_match_along_path(const MatchRunRequest& request, const Progress& progress = {});

}  // namespace kinema::pipeline
