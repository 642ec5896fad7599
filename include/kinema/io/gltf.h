// kinema/io/gltf.h — glTF 2.0 (.gltf, .glb) and VRM (.vrm, VRM 0.x and 1.0) through tinygltf.
//
// Reading keeps every node as a skeleton joint (parents-first), skins with inverse bind matrices
// and skeleton root, meshes with JOINTS_n/WEIGHTS_n (up to 8 influences), morph targets, and
// every animation sampler (STEP, LINEAR, CUBICSPLINE) and path (translation, rotation, scale,
// weights). VRM 0.x (`VRM` extension) and VRM 1.0 (`VRMC_vrm`) humanoid bone maps become
// Asset::humanoid with VRM 1.0 bone names. The whole source document is kept in Asset::gltf so
// that writing back preserves materials, textures, spring bones and unknown extensions.
//
// Writing produces files that pass the Khronos glTF Validator with no errors.
#pragma once

#include <string>

#include "kinema/io/asset.h"

namespace kinema {

struct GltfWriteOptions {
  /// true: .glb (one binary chunk); false: .gltf with the buffer embedded as a data URI.
  /// Writers choose from the file extension unless this is set explicitly by the caller.
  bool binary = true;
  /// Write VRM 1.0 (`VRMC_vrm`) humanoid data when the asset has a humanoid.
  bool vrm = false;
  /// Which clips to write (empty: all).
  std::vector<int> clips;
};

/// Reads .gltf / .glb / .vrm. Throws kinema::Error naming the file, the JSON pointer or
/// accessor and the reason (missing buffers, out-of-range accessors, NaN data, cycles…).
Asset read_gltf(const std::string& path);

/// Writes an asset as glTF/GLB/VRM 1.0 atomically. When the asset came from glTF/VRM, the
/// source document is the starting point (so nothing kinema does not model is lost) and only
/// animations, skins, and the humanoid map are rewritten.
void write_gltf(const Asset& asset, const std::string& path, const GltfWriteOptions& options);

}  // namespace kinema
