// tools/kinema/match_summary.h — what `kinema match build` reports about the database it wrote
// and `kinema info DB.kmm` shows about one on disk: frames, features, groups, memory, tags.
#pragma once

#include <cstddef>
#include <iosfwd>

#include <nlohmann/json.hpp>

#include "kinema/match/database.h"

namespace kinema::cli {

/// variants, frames, searchable_frames, features, fps, trajectory_times, groups, tags,
/// feature_bytes, bytes_per_frame, poses, joints, file_bytes and the clip variants.
nlohmann::ordered_json database_json(const match::Database& db, size_t file_bytes);

/// The same as indented text lines ("  frames …"); the clip variants only when `clips`.
void print_database(const match::Database& db, size_t file_bytes, bool clips, std::ostream& out);

}  // namespace kinema::cli
