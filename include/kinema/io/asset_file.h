// kinema/io/asset_file.h — assets as files: load_asset and save_asset choose the format by the
// file's extension. Reading whole files and writing them atomically: kinema/core/file.h.
#pragma once

#include <string>

#include "kinema/character/asset.h"
#include "kinema/core/file.h"
#include "kinema/io/bvh.h"

namespace kinema {

/// Options of the readers load_asset chooses from (the others have none).
struct LoadOptions {
  BvhReadOptions bvh;  ///< for .bvh files: unit and position-channel reading
};

/// Loads any supported file (.bvh, .gltf, .glb, .vrm, .vrma, .fbx, .dae, .kmc), chosen by extension
/// (case-insensitive). Throws kinema::Error; an unknown extension is an error too.
Asset load_asset(const std::string& path, const LoadOptions& options = {});

/// Saves by extension: .bvh, .gltf, .glb, .vrm (VRM 1.0), .vrma (the first clip with the asset's
/// humanoid, and its morph-weight tracks as the VRM's expressions: kinema/io/vrma.h), .fbx
/// (binary, kinema/io/fbx.h), .kmc (every clip compressed with the default bound,
/// kinema/io/kmc.h). Throws kinema::Error.
void save_asset(const Asset& asset, const std::string& path);

}  // namespace kinema
