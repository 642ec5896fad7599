// tools/kinema/match_summary.h — what `kinema match build` reports about the database it wrote
// and `kinema info DB.kmm` shows about one on disk: frames, features, groups, memory, tags; and
// what `kinema info MODEL.kml` shows about a learned model.
#pragma once

#include <cstddef>
#include <iosfwd>

#include <nlohmann/json.hpp>

#include "kinema/match/database.h"
#include "kinema/match/learned.h"
#include "kinema/pipeline/match.h"

namespace kinema::cli {

/// variants, frames, searchable_frames, features, fps, trajectory_times, groups, tags,
/// feature_bytes, bytes_per_frame, poses, joints, file_bytes and the clip variants.
nlohmann::ordered_json database_json(const match::Database& db, size_t file_bytes);

/// The same as indented text lines ("  frames …"); the clip variants only when `clips`.
void print_database(const match::Database& db, size_t file_bytes, bool clips, std::ostream& out);

/// features, latent, joints, fps, trajectory_times, trained_frames, model_bytes, file_bytes and
/// each network's name, widths (inputs, then each layer's outputs) and parameters.
nlohmann::ordered_json learned_model_json(const match::LearnedModel& model, size_t file_bytes);

/// The same as indented text lines ("  features …", a line per network).
void print_learned_model(const match::LearnedModel& model, size_t file_bytes, std::ostream& out);

/// `kinema match evaluate`'s report: one JSON object, or text lines.
void print_match_evaluate(const pipeline::MatchEvaluateRequest& request,
                          const match::LearnedEvaluation& result, bool json, std::ostream& out);

}  // namespace kinema::cli
