// `kinema info` as a library call (kinema/pipeline/inspect.h).
#include "kinema/pipeline/inspect.h"

#include <filesystem>

#include "kinema/core/error.h"
#include "kinema/core/file.h"
#include "kinema/io/kmc.h"

namespace kinema::pipeline {

Asset load_input(const std::string& path, const LoadOptions& load) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw Error(path, "", "is a folder; give a .bvh .gltf .glb .vrm .fbx or .dae file");
  return load_asset(path, load);
}

FileContents inspect_file(const std::string& path, const LoadOptions& load) {
  FileContents contents;
  if (extension_of(path) == "kmm") {  // a motion-matching database, not an asset
    const std::string bytes = read_file(path);
    contents.database = match::deserialize_database(bytes, path);
    contents.file_bytes = bytes.size();
    return contents;
  }
  if (extension_of(path) == "kml") {  // a learned motion-matching model
    const std::string bytes = read_file(path);
    contents.model = match::deserialize_learned_model(bytes, path);
    contents.file_bytes = bytes.size();
    return contents;
  }
  contents.asset = load_input(path, load);
  if (extension_of(path) == "kmc") contents.compressed = read_animation_file(path);
  return contents;
}

}  // namespace kinema::pipeline
