// Loading and saving assets by file extension (kinema/io/asset_file.h).
#include "kinema/io/asset_file.h"

#include "kinema/core/error.h"
#include "kinema/core/file.h"
#include "kinema/io/assimp_import.h"
#include "kinema/io/bvh.h"
#include "kinema/io/fbx.h"
#include "kinema/io/gltf.h"
#include "kinema/io/kmc.h"
#include "kinema/io/vrma.h"

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
  if (ext == "fbx") return write_fbx(asset, path);
  if (ext == "vrma") {
    if (!asset.humanoid) throw Error(path, "humanoid", "a .vrma needs a humanoid bone map");
    if (asset.clips.empty()) throw Error(path, "clips", "a .vrma needs a clip; there is none");
    VrmaWriteOptions options;
    options.expressions = vrma_expressions(asset, asset.clips.front());
    return write_vrma(asset.skeleton, *asset.humanoid, asset.clips.front(), path, options);
  }
  if (ext == "kmc") return write_animation_file(compress_asset(asset, asset.source.path), path);
  throw Error(
      path, "",
      "cannot write '." + ext + "' files (kinema writes .bvh .gltf .glb .vrm .vrma .fbx .kmc)");
}

}  // namespace kinema
