// kinema/io/gltf.h — glTF 2.0 (.gltf, .glb) and VRM (.vrm, VRM 0.x and 1.0) through tinygltf.
//
// Reading keeps every node as a skeleton joint (parents-first), skins with inverse bind matrices
// and skeleton root, meshes with JOINTS_n/WEIGHTS_n (up to 8 influences), morph targets, and
// every animation sampler (STEP, LINEAR, CUBICSPLINE) and path (translation, rotation, scale,
// weights). VRM 0.x (`VRM` extension) and VRM 1.0 (`VRMC_vrm`) humanoid bone maps become
// Asset::humanoid with VRM 1.0 bone names. Materials and textures (core, KHR_materials_unlit,
// KHR_texture_transform, VRMC_materials_mtoon, VRM 0.x MToon converted as three-vrm does) become
// Asset::materials / Asset::textures, images kept as their encoded bytes (docs/formats.md).
// The whole source document is kept in Asset::gltf so that writing back preserves materials,
// textures, spring bones and unknown extensions.
//
// Choices worth knowing:
//  * Every node is a joint, named after the node ("node_<i>" when unnamed; a duplicate name gets
//    "_<i>" appended, with a warning). `matrix` nodes are decomposed into TRS.
//  * Each mesh primitive becomes one kinema Mesh ("<mesh>/<k>" when a mesh has several).
//    Strips and fans become triangle lists; points and lines are skipped with a warning.
//  * Skin weights are renormalized to sum to 1 (a vertex whose weights sum to zero is bound to
//    the skin's first joint, with a warning in SourceInfo::warnings).
//  * A clip's duration is its largest key time; sample_rate is 1/spacing when every key lies on
//    one uniform grid (at least 3 keys), else 0 (infer_frame_rate, kinema/clip/clip.h).
//  * VRM 0.x models face −Z: the data is not rotated on read (forward_axis "-Z" is recorded).
//    Writing such an asset as VRM 1.0 turns its scene roots 180° about +Y so it faces +Z.
//
// Writing produces files that pass the Khronos glTF Validator with no errors: one buffer (the
// GLB binary chunk, or a base64 data URI in a .gltf), images embedded with their original
// bytes; an external image the source referenced but that could not be read is replaced by a
// 1×1 PNG placeholder. From a glTF/VRM source, JOINTS_n/WEIGHTS_n are rewritten for meshes whose
// skin weights changed since reading or that the reader renormalized; the rest is kept.
#pragma once

#include <string>
#include <vector>

#include "kinema/character/asset.h"

namespace kinema {

struct GltfWriteOptions {
  /// true: .glb (one binary chunk); false: .gltf with the buffer embedded as a data URI.
  /// Writers choose from the file extension unless this is set explicitly by the caller.
  bool binary = true;
  /// Write VRM 1.0 (`VRMC_vrm`) humanoid data when the asset has a humanoid.
  bool vrm = false;
  /// Which clips to write (empty: all).
  std::vector<int> clips;
  /// Keep the source's spring bones (VRMC_springBone, VRM 0.x secondaryAnimation). false for
  /// clips with the secondary motion baked in, which a VRM viewer would otherwise simulate again.
  bool spring_bones = true;
};

/// Reads .gltf / .glb / .vrm. Throws kinema::Error naming the file, the JSON pointer or
/// accessor and the reason (missing buffers, out-of-range accessors, NaN data, cycles…).
Asset read_gltf(const std::string& path);

/// Writes an asset as glTF/GLB/VRM 1.0 atomically. When the asset came from glTF/VRM, the
/// source document is the starting point (so nothing kinema does not model is lost) and only
/// animations, skins, changed skin weights and the humanoid map are rewritten; writing VRM 1.0
/// from a VRM 0.x source also migrates expressions, first person, look-at and spring bones
/// (docs/formats.md).
void write_gltf(const Asset& asset, const std::string& path, const GltfWriteOptions& options);

}  // namespace kinema
