// Loading and saving assets by file extension (kinema/io/asset_file.h).
#include "kinema/io/asset_file.h"

#include "kinema/core/error.h"
#include "kinema/core/file.h"
#include "kinema/io/assimp_import.h"
#include "kinema/io/bvh.h"
#include "kinema/io/gltf.h"
#include "kinema/io/kmc.h"

namespace kinema {

Asset load_asset(const std::string& path, const LoadOptions& options) {
  const std::string ext = extension_of(path);
  if (ext == "bvh") return read_bvh(path, options.bvh);
  if (ext == "gltf" || ext == "glb" || ext == "vrm" || ext == "vrma") return read_gltf(path);
  if (ext == "fbx" || ext == "dae") return read_with_assimp(path);
  if (ext == "kmc") return read_kmc(path);
  throw Error(path, "",
              "unsupported file type '." + ext +
                  "' (kinema reads .bvh .gltf .glb .vrm .vrma .fbx .dae .kmc)");
}

void save_asset(const Asset& asset, const std::string& path) {
  const std::string ext = extension_of(path);
  if (ext == "bvh") return write_bvh(asset, path);
  if (ext == "gltf" || ext == "glb" || ext == "vrm") {
    GltfWriteOptions options;
    options.binary = ext != "gltf";
    options.vrm = ext == "vrm";
    return write_gltf(asset, path, options);
  }
  if (ext == "kmc") return write_animation_file(compress_asset(asset, asset.source.path), path);
  throw Error(path, "",
              "cannot write '." + ext + "' files (kinema writes .bvh .gltf .glb .vrm .kmc)");
}

}  // namespace kinema
