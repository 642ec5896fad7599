// kinema/io/file.h — loading by extension and failure-safe writing.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kinema/io/asset.h"
#include "kinema/io/bvh.h"

namespace kinema {

/// Options of the readers load_asset chooses from (the others have none).
struct LoadOptions {
  BvhReadOptions bvh;  ///< for .bvh files: unit and position-channel reading
};

/// Loads any supported file (.bvh, .gltf, .glb, .vrm, .vrma, .fbx, .dae, .kmc), chosen by extension
/// (case-insensitive). Throws kinema::Error; an unknown extension is an error too.
Asset load_asset(const std::string& path, const LoadOptions& options = {});

/// Saves by extension: .bvh, .gltf, .glb, .vrm (VRM 1.0), .kmc (every clip compressed with the
/// default bound, kinema/io/kmc.h). Throws kinema::Error.
void save_asset(const Asset& asset, const std::string& path);

/// Reads a whole file; throws kinema::Error (file, reason) if it cannot.
std::string read_file(const std::string& path);

/// Writes `bytes` to `path` through a temporary file in the same folder, then renames it over
/// the target, so a failure never leaves a half-written file. Throws kinema::Error.
void write_file_atomically(const std::string& path, std::string_view bytes);

/// Lower-case extension without the dot ("bvh"), or "" when there is none.
std::string extension_of(const std::string& path);

}  // namespace kinema
