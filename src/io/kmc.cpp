// .kmc files on disk and as assets (kinema/io/kmc.h).
#include "kinema/io/kmc.h"

#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"

namespace kinema {

CompressedAnimation read_animation_file(const std::string& path) {
  return deserialize_animation(read_file(path), path);
}

void write_animation_file(const CompressedAnimation& animation, const std::string& path) {
  write_file_atomically(path, serialize_animation(animation));
}

Asset read_kmc(const std::string& path) {
  const CompressedAnimation a = read_animation_file(path);
  Asset asset;
  asset.skeleton = a.skeleton;
  for (const CompressedClip& c : a.clips) asset.clips.push_back(decompress_clip(c, a.skeleton));
  asset.source.path = path;
  asset.source.format = "kmc";
  asset.source.generator = "kinema compress (from " + a.source + ")";
  asset.source.unit_in_meters = 1.0;  // kinema stores metres; the original unit is reported
  asset.source.unit_name = "m";
  if (a.source_unit_name != "m")
    asset.source.warnings.push_back("compressed from " + a.source + " in " + a.source_unit_name +
                                    " units, stored in metres");
  return asset;
}

CompressedAnimation compress_asset(const Asset& asset, const std::string& source,
                                   const CompressOptions& options) {
  if (asset.clips.empty()) throw Error(source, "", "no animation clip to compress");
  CompressedAnimation a;
  a.skeleton = asset.skeleton;
  a.source = source;
  a.source_unit_in_meters = asset.source.unit_in_meters;
  a.source_unit_name = asset.source.unit_name;
  a.max_error = options.max_error;
  a.vertex_distance = options.vertex_distance;
  for (const Clip& clip : asset.clips) a.clips.push_back(compress(clip, asset.skeleton, options));
  return a;
}

}  // namespace kinema
