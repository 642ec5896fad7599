// kinema/pipeline/inspect.h — `kinema info` as a library call: whatever kinema reads, loaded for
// a report — an asset (any animation or character file), a compressed animation (.kmc, also as
// an asset), a motion-matching database (.kmm) or a learned motion-matching model (.kml).
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "kinema/compress/compressed_animation.h"
#include "kinema/io/asset_file.h"
#include "kinema/match/database.h"
#include "kinema/match/learned.h"

namespace kinema::pipeline {

struct FileContents {
  std::optional<Asset> asset;                     ///< every file but a .kmm or .kml
  std::optional<CompressedAnimation> compressed;  ///< a .kmc as stored
  std::optional<match::Database> database;        ///< a .kmm
  std::optional<match::LearnedModel> model;       ///< a .kml
  size_t file_bytes = 0;                          ///< of a .kmm or .kml
};

/// Reads `path` by its extension. Throws kinema::Error for a folder, an unknown extension or a
/// file that does not read.
FileContents inspect_file(const std::string& path, const LoadOptions& load = {});

/// load_asset with a clearer message when `path` is a folder.
Asset load_input(const std::string& path, const LoadOptions& load = {});

}  // namespace kinema::pipeline
