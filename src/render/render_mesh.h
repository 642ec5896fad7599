// src/render/render_mesh.h — an asset's meshes prepared for the GPU, and the capsule skeleton
// (internal).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "kinema/math/mat4.h"
#include "kinema/math/vec3.h"
#include "kinema/render/renderer.h"

namespace kinema {
struct Asset;
class Skeleton;
}  // namespace kinema

namespace kinema::render_detail {

/// One drawable mesh: bind-space vertices with exactly 8 influences (padded with weight 0), and
/// the palette recipe S_j = model[skin_joints[j]] · inverse_bind[j]. A rigid mesh has one
/// palette entry (its node, inverse bind identity) or none (drawn where it was modelled).
struct MeshData {
  std::string name;
  int source_mesh = -1;  ///< index in Asset::meshes, -1 for capsules
  std::vector<Vec3f> positions, normals;
  std::vector<uint16_t> joints8;
  std::vector<float> weights8;
  std::vector<uint32_t> indices;
  /// Per vertex: TEXCOORD_0 and _1 (zero when the mesh has none) and COLOR_0 (one when none).
  std::vector<std::array<float, 2>> uv0, uv1;
  std::vector<std::array<float, 4>> colours;
  int material = -1;  ///< index into Asset::materials; −1: the renderer's flat colour
  std::vector<int> skin_joints;
  std::vector<Mat4> inverse_bind;
};

/// The asset's triangle meshes, checked (validate_skin_mesh, index ranges, skins); throws
/// kinema::Error naming `file`. Meshes without triangles are left out.
std::vector<MeshData> meshes_for_asset(const Asset& asset, const std::string& file);

/// One capsule per bone (parent → child joint in the rest pose, and joint → BVH End Site), bound
/// to the parent joint.
MeshData capsule_mesh(const Asset& asset, const CapsuleDetail& detail);

/// Smooth per-vertex normals from triangles (area weighted); +Y where a vertex has none.
std::vector<Vec3f> smooth_normals(const std::vector<Vec3f>& positions,
                                  const std::vector<uint32_t>& indices);

}  // namespace kinema::render_detail
