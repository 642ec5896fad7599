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
#include "kinema/match/training.h"
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

struct MatchLearnRequest {
  std::string database;  ///< the .kmm (built with poses) to learn from
  std::string out;       ///< the .kml to write
  /// The loss curves as a PNG line plot; empty: OUT with ".losses.png" for ".kml".
  std::string plot;
  match::TrainOptions train;
};

struct MatchLearnResult {
  match::LearnedModel model;
  match::TrainReport report;
  size_t file_bytes = 0;      ///< of the .kml written
  size_t database_bytes = 0;  ///< what the model replaces: features, root frames and poses
  uint64_t frames = 0;        ///< database frames
  std::string plot;           ///< the PNG written
};

/// Reads the database, trains the three networks (learn::train_learned_model, run from the learn
/// plugin that links libtorch: pipeline/learn_plugin.h), writes the model and the loss-curve plot
/// atomically. Progress stages: "decompressor", "stepper", "projector" (iterations). Throws
/// UsageError for an OUT that is not a .kml or is the database, a PLOT that is not a .png;
/// kinema::Error for an unreadable database, one without poses, a write failure.
MatchLearnResult learn_match_model(const MatchLearnRequest& request, const Progress& progress = {});

struct MatchEvaluateRequest {
  std::string model;     ///< the .kml
  std::string database;  ///< a .kmm with poses on the model's skeleton (e.g. held-back clips)
  double noise = 0.1;    ///< σ of the queries' noise, normalized feature units
};

/// Loads both and measures the model on the database (match::evaluate_learned_model). Throws
/// kinema::Error for unreadable or broken files, a database that does not fit the model.
match::LearnedEvaluation evaluate_match_model(const MatchEvaluateRequest& request);

struct MatchRunRequest {
  /// The .kmm (built with poses), or a .kml learned model (the learned backend).
  std::string database;
  /// With a .kml: a .kmm (the one it was trained on) also run along the same path with the same
  /// options, and both reported (the exact-search run is not written).
  std::string compare;
  std::string path;  ///< PATH.json, the scripted stick (kinema/match/inputs.h)
  std::string out;   ///< the animation to write: .glb .gltf .bvh
  match::ControllerOptions controller;
  /// Comma-separated tag lists: search only frames with one of `tags`, never frames with one of
  /// `exclude` (each tag must be in the database).
  std::string tags, exclude;
};

/// How the learned run compares with the exact-search run on the same path.
struct MatchComparison {
  match::PathRun exact;
  std::optional<HumanoidFootSkate> foot_skate;  ///< of the exact run
  /// The two characters' hips, horizontal distance (metres), and their poses: the mean distance
  /// of the joints, each expressed in its own hips' frame (centimetres), per frame.
  double root_distance_mean = 0, root_distance_max = 0;
  double pose_distance_mean_cm = 0, pose_distance_max_cm = 0;
};

struct MatchRunResult {
  bool learned = false;  ///< ran a .kml
  match::PathRun run;    ///< its clip is the one written
  double fps = 0;        ///< the database's frame rate
  /// How fast planted feet skate in run.clip (humanoid_foot_skate on the database's skeleton);
  /// unset when its joint names give no humanoid feet.
  std::optional<HumanoidFootSkate> foot_skate;
  std::optional<MatchComparison> comparison;  ///< with `compare`
};

/// Loads the database (a .kmm, or a .kml learned model: told apart by their first bytes) and the
/// stick path, runs the controller along it (match::run_along_path) and writes the animation on
/// the database's skeleton. With `compare`, also runs that .kmm along the path and measures the
/// two runs against each other. Progress stage: "motion matching" (frames; both runs with
/// `compare`). Throws UsageError for a bad OUT, an unknown tag, tags with a learned model,
/// `compare` without a learned model or with another skeleton; kinema::Error for a database
/// without poses, a broken file, a bad path file, a write failure.
MatchRunResult run_match_along_path(const MatchRunRequest& request, const Progress& progress = {});

}  // namespace kinema::pipeline
