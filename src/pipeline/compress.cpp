// `kinema compress` and `kinema decompress` as library calls (kinema/pipeline/compress.h).
#include "kinema/pipeline/compress.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>

#include "kinema/core/error.h"
#include "kinema/core/file.h"
#include "kinema/io/kmc.h"

namespace kinema::pipeline {

namespace {

namespace fs = std::filesystem;

/// OUT_DIR/<stem>.kmc for every input; refuses inputs that would write the same file or whose
/// output would be the input itself.
std::vector<std::string> output_paths(const CompressRequest& request) {
  std::error_code ec;
  if (fs::exists(request.out_dir, ec) && !fs::is_directory(request.out_dir, ec))
    throw UsageError("OUT_DIR " + request.out_dir + " is a file, not a folder");
  std::map<std::string, std::string> stems;
  std::vector<std::string> outputs;
  for (const std::string& in : request.inputs) {
    const std::string stem = fs::path(in).stem().string();
    if (auto [it, fresh] = stems.emplace(stem, in); !fresh)
      throw UsageError("two inputs would both write " + stem + ".kmc: " + it->second + " and " +
                       in);
    outputs.push_back((fs::path(request.out_dir) / (stem + ".kmc")).string());
    if (same_file(in, outputs.back())) throw UsageError("OUT_DIR would overwrite the input " + in);
  }
  return outputs;
}

/// Compresses every clip of `asset` (read from `file`) into one animation, adding a row per clip.
CompressedAnimation compress_clips(const Asset& asset, const std::string& file,
                                   const CompressOptions& options, CompressResult& result,
                                   const std::function<void()>& clip_done) {
  CompressedAnimation animation;
  animation.skeleton = asset.skeleton;
  animation.source = fs::path(file).filename().string();
  animation.source_unit_in_meters = asset.source.unit_in_meters;
  animation.source_unit_name = asset.source.unit_name;
  animation.max_error = options.max_error;
  animation.vertex_distance = options.vertex_distance;
  for (const Clip& clip : asset.clips) {
    CompressedClipReport row{file, clip.name, {}, 0};
    const auto t0 = std::chrono::steady_clock::now();
    try {
      animation.clips.push_back(compress(clip, asset.skeleton, options, &row.stats));
    } catch (const Error& e) {
      throw Error(file, "clip \"" + clip.name + "\"", e.reason());
    }
    row.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    result.clips.push_back(std::move(row));
    clip_done();
  }
  return animation;
}

}  // namespace

CompressResult compress_files(const CompressRequest& request, const Progress& progress) {
  CompressResult result;
  result.outputs = output_paths(request);

  // Everything is read first: bad input fails before any file is written.
  std::vector<Asset> assets;
  long clip_total = 0;
  for (const std::string& in : request.inputs) {
    assets.push_back(load_asset(in, request.load));
    if (assets.back().clips.empty()) throw Error(in, "", "no animation clip to compress");
    clip_total += long(assets.back().clips.size());
  }
  std::error_code ec;
  fs::create_directories(request.out_dir, ec);
  if (ec) throw Error(request.out_dir, "", "cannot create the folder: " + ec.message());

  long done = 0;
  for (size_t i = 0; i < assets.size(); ++i) {
    const CompressedAnimation animation =
        compress_clips(assets[i], request.inputs[i], request.options, result,
                       [&] { report(progress, "compressing", ++done, clip_total); });
    const std::string bytes = serialize_animation(animation);
    write_file_atomically(result.outputs[i], bytes);
    result.file_bytes += bytes.size();
  }
  for (const CompressedClipReport& r : result.clips) {
    result.raw_bytes += r.stats.raw_bytes;
    result.compressed_bytes += r.stats.compressed_bytes;
    result.max_error = std::max(result.max_error, r.stats.error.max);
    result.p99_error = std::max(result.p99_error, r.stats.error.p99);
    result.seconds += r.seconds;
  }
  result.ratio = double(result.raw_bytes) / double(std::max<size_t>(result.compressed_bytes, 1));
  return result;
}

DecompressResult decompress_file(const DecompressRequest& request) {
  if (extension_of(request.in) != "kmc")
    throw UsageError("IN must be a .kmc file (written by kinema compress), not " + request.in);
  static constexpr std::string_view kWritable[] = {"glb", "gltf", "bvh"};
  const NamedInput inputs[] = {{"IN", request.in}};
  check_output_file(request.out, inputs, kWritable, "decompress");
  DecompressResult result;
  result.written = read_kmc(request.in);
  Asset& asset = result.written;
  if (!request.clip.empty()) {
    const int keep = find_clip(asset, request.clip, request.in);
    Clip clip = std::move(asset.clips[size_t(keep)]);
    asset.clips.assign(1, std::move(clip));
  }
  if (asset.clips.empty()) throw Error(request.in, "", "no clip to decompress");
  save_asset(asset, request.out);
  result.clips_written = extension_of(request.out) == "bvh" ? 1 : asset.clips.size();
  return result;
}

}  // namespace kinema::pipeline
