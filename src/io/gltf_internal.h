// src/io/gltf_internal.h — private glue shared by gltf_read.cpp, gltf_write.cpp, vrm.cpp and
// gltf_material.cpp.
//
// tinygltf is used as a JSON/GLB (de)serializer only: images are kept as their encoded bytes
// (no decoding, no re-encoding), so nothing is lost on a round trip.
#pragma once

#include <tiny_gltf.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kinema/character/asset.h"

namespace kinema {

/// The source document of an asset read from glTF/GLB/VRM (see Asset::gltf).
struct GltfDocument {
  tinygltf::Model model;
  std::vector<int> node_to_joint;  ///< glTF node index → skeleton joint index
  /// Per Asset::meshes entry: the glTF mesh and primitive it came from.
  std::vector<std::pair<int, int>> mesh_primitive;
  /// Per Asset::meshes entry: true when the file's weights did not sum to 1 and were
  /// renormalized on read (the writer then rewrites WEIGHTS_n from the asset).
  std::vector<char> weights_renormalized;
  /// Per Asset::meshes entry: skin_fingerprint() of the mesh as read. A mesh whose fingerprint
  /// differs at write time (new weights, e.g. `kinema skin bake-weights`) gets its JOINTS_n and
  /// WEIGHTS_n rewritten from the asset; everything else of the document is kept.
  std::vector<uint64_t> skin_fingerprint;
};

/// FNV-1a hash of a mesh's influence count, joint indices and weights.
inline uint64_t skin_fingerprint(const Mesh& mesh) {
  uint64_t h = 14695981039346656037ull;
  auto mix = [&h](const void* data, size_t bytes) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ull;
  };
  mix(&mesh.influences, sizeof mesh.influences);
  mix(mesh.joints.data(), mesh.joints.size() * sizeof(uint16_t));
  mix(mesh.weights.data(), mesh.weights.size() * sizeof(float));
  return h;
}

namespace gltf_detail {

/// "/accessors/3" and friends.
std::string pointer(std::string_view array, int index);

/// The member `key` of a JSON object value, or nullptr (not an object, or no such key).
inline const tinygltf::Value* member(const tinygltf::Value& v, const char* key) {
  if (!v.IsObject() || !v.Has(key)) return nullptr;
  return &v.Get(key);
}

/// The string `v` holds, or `fallback` when v is missing or not a string.
inline std::string str(const tinygltf::Value* v, const std::string& fallback = {}) {
  return v && v->IsString() ? v->Get<std::string>() : fallback;
}

/// tinygltf image callbacks: keep the encoded bytes, never decode or encode.
bool keep_image_bytes(tinygltf::Image* image, int index, std::string* err, std::string* warn,
                      int req_width, int req_height, const unsigned char* bytes, int size,
                      void* user);
bool write_image_passthrough(const std::string* basepath, const std::string* filename,
                             const tinygltf::Image* image, bool embed, std::string* out_uri,
                             void* user);

/// Reads VRM 0.x (`VRM`) / 1.0 (`VRMC_vrm`) humanoid bones into asset.humanoid and sets
/// asset.source.format / forward_axis. No-op for plain glTF. Throws kinema::Error.
void read_vrm(const tinygltf::Model& model, const std::vector<int>& node_to_joint, Asset& asset,
              const std::string& file);

/// Reads the document's textures (image bytes as stored, samplers) and materials (core factors
/// and textures, KHR_materials_unlit, KHR_texture_transform, VRMC_materials_mtoon 1.0, VRM 0.x
/// `materialProperties` converted to MToon 1.0 as three-vrm does) into asset.textures and
/// asset.materials (see gltf_material.cpp). Throws kinema::Error naming the JSON pointer of bad
/// data; a texture whose image kinema cannot draw gets no bytes and a warning.
void read_materials(const tinygltf::Model& model, Asset& asset, const std::string& file);

/// Reads VRMC_springBone 1.0, or else VRM 0.x `secondaryAnimation`, into asset.spring_bones
/// (see vrm_spring.cpp). Throws kinema::Error naming the JSON pointer of malformed data.
void read_spring_bones(const tinygltf::Model& model, const std::vector<int>& node_to_joint,
                       Asset& asset, const std::string& file);

/// Writes (replaces) the VRMC_vrm extension from asset.humanoid, converting (migrate_vrm0) and
/// dropping a VRM 0.x `VRM` extension when present. `joint_to_node` maps skeleton joints to nodes.
/// Throws kinema::Error when the humanoid lacks a bone VRM 1.0 requires.
void write_vrm1(tinygltf::Model& model, const Asset& asset, const std::vector<int>& joint_to_node,
                const std::string& file);

/// VRM 0.x → 1.0 migration of the parts of the `VRM` extension kinema does not model (see
/// vrm_migrate.cpp): adds `expressions`, `firstPerson` and `lookAt` to `vrm1` (the VRMC_vrm object
/// being written) where it has none, and VRMC_springBone to `model` (with extensionsUsed) where it
/// has none. `model`'s node, mesh and material indices must be the source's. Returns a note for
/// each thing skipped (the writer has no warning channel; tests look at them).
std::vector<std::string> migrate_vrm0(const tinygltf::Value& vrm0, tinygltf::Model& model,
                                      tinygltf::Value::Object& vrm1);

/// VRM 1.0 name of a VRM 0.x humanoid bone name (thumbs are renamed, the rest is identical).
std::string vrm0_to_vrm1_bone(std::string_view name);

}  // namespace gltf_detail
}  // namespace kinema
