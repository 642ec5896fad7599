// kinema/pipeline/compress.h — `kinema compress` and `kinema decompress` as library calls:
// every clip of some files compressed within a guaranteed error bound into one .kmc per file
// (kinema/compress/compress.h, docs/compress.md), and a .kmc decoded back to glTF or BVH.
#pragma once

#include <string>
#include <vector>

#include "kinema/compress/compress.h"
#include "kinema/io/asset_file.h"
#include "kinema/pipeline/job.h"

namespace kinema::pipeline {

struct CompressRequest {
  std::vector<std::string> inputs;
  std::string out_dir;  ///< each input becomes OUT_DIR/<stem>.kmc (created when missing)
  CompressOptions options;
  LoadOptions load;
};

/// One compressed clip: its file, name, compression figures and compression time.
struct CompressedClipReport {
  std::string file, name;
  CompressionStats stats;
  double seconds = 0;
};

struct CompressResult {
  std::vector<CompressedClipReport> clips;  ///< in input order
  std::vector<std::string> outputs;         ///< the .kmc files written, one per input
  size_t file_bytes = 0;                    ///< of all outputs (skeletons included)
  /// Over every clip: bytes, ratio, the largest max and 99th-percentile errors, seconds.
  size_t raw_bytes = 0, compressed_bytes = 0;
  double ratio = 0, max_error = 0, p99_error = 0, seconds = 0;
};

/// Reads every input first (bad input fails before anything is written), then compresses each
/// clip (compress) and writes each .kmc atomically. Progress stage: "compressing" (clips). Throws
/// UsageError when OUT_DIR is a file, two inputs share a stem, or an output would be an input;
/// kinema::Error for unreadable inputs, a file without clips, a clip that cannot be compressed,
/// a write failure.
CompressResult compress_files(const CompressRequest& request, const Progress& progress = {});

struct DecompressRequest {
  std::string in;    ///< a .kmc
  std::string out;   ///< .glb .gltf .bvh
  std::string clip;  ///< keep only this clip (name or index); empty: all (a BVH takes the first)
};

struct DecompressResult {
  Asset written;             ///< the skeleton and the decoded clips kept
  size_t clips_written = 0;  ///< clips in OUT (1 for a BVH)
};

/// Decodes every frame of the .kmc's clips (read_kmc) and writes OUT atomically. Throws
/// UsageError for an IN that is not .kmc, a bad OUT, an unknown clip; kinema::Error for a broken
/// file or a write failure.
DecompressResult decompress_file(const DecompressRequest& request);

}  // namespace kinema::pipeline
