// kinema/skin/skin_mesh.h — glue between imported assets (character/asset.h) and the skinning core
// (skin/skinning.h): a SkinMeshView over an imported Mesh, and skinning palettes of an Asset's
// skin from the skeleton's model matrices.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "kinema/character/asset.h"
#include "kinema/skin/skinning.h"

namespace kinema {

/// The skinned attributes of `mesh` (positions, normals, tangents, joints, weights) as a view
/// (spans into the mesh's vectors: keep the mesh alive and unchanged while the view is used).
/// Throws kinema::Error naming `file` when the mesh is rigid (no skin or no influences); does not
/// check the weights (check_skin_mesh does).
SkinMeshView skin_mesh_view(const Mesh& mesh, const std::string& file = "<memory>");

/// Skinning palette of `asset.skins[skin]`: S_j = model[skin.joints[j]] · skin.inverse_bind[j].
/// `model`: one model-space matrix per skeleton joint (from local_to_model). Returns false when
/// `skin` is out of range or a size does not match (nothing written).
bool asset_skin_palette(const Asset& asset, int skin, std::span<const Mat4> model,
                        std::span<Affine3x4f> out);

/// The palette of `asset.skins[skin]` in the skeleton's rest pose (FK of the rest transforms).
/// For a file whose inverse bind matrices match its rest pose every entry is the identity.
/// Throws kinema::Error when `skin` is out of range.
std::vector<Affine3x4f> rest_pose_skin_palette(const Asset& asset, int skin);

/// A SkinMesh (vertices grouped by influence count) of an imported skinned mesh, checked against
/// its skin's joint count; throws kinema::Error naming `file` on a bad mesh.
SkinMesh make_skin_mesh(const Asset& asset, const Mesh& mesh, const std::string& file = "<memory>");

}  // namespace kinema
