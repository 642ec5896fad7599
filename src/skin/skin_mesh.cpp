// Glue between imported assets and the skinning core.
#include "kinema/skin/skin_mesh.h"

#include "kinema/core/error.h"
#include "kinema/skeleton/skeleton.h"

namespace kinema {

SkinMeshView skin_mesh_view(const Mesh& mesh, const std::string& file) {
  if (mesh.skin < 0 || mesh.influences <= 0)
    throw Error(file, "mesh \"" + mesh.name + "\"", "the mesh has no skin (it is rigid)");
  SkinMeshView view;
  view.positions = mesh.positions;
  view.normals = mesh.normals;
  view.tangents = mesh.tangents;
  view.influences = mesh.influences;
  view.joints = mesh.joints;
  view.weights = mesh.weights;
  return view;
}

bool asset_skin_palette(const Asset& asset, int skin, std::span<const Mat4> model,
                        std::span<Affine3x4f> out) {
  if (skin < 0 || static_cast<size_t>(skin) >= asset.skins.size()) return false;
  if (model.size() != static_cast<size_t>(asset.skeleton.joint_count())) return false;
  const Skin& s = asset.skins[static_cast<size_t>(skin)];
  return skinning_palette(model, s.joints, s.inverse_bind, out);
}

std::vector<Affine3x4f> rest_pose_skin_palette(const Asset& asset, int skin) {
  if (skin < 0 || static_cast<size_t>(skin) >= asset.skins.size())
    throw Error(asset.source.path, "skin " + std::to_string(skin),
                "no such skin (the asset has " + std::to_string(asset.skins.size()) + ")");
  const std::vector<Mat4> model = rest_model_matrices(asset.skeleton);
  std::vector<Affine3x4f> palette(asset.skins[static_cast<size_t>(skin)].joints.size());
  if (!asset_skin_palette(asset, skin, model, palette))
    throw Error(asset.source.path, "skin " + std::to_string(skin),
                "a skin joint is outside the skeleton or the inverse bind matrices are missing");
  return palette;
}

SkinMesh make_skin_mesh(const Asset& asset, const Mesh& mesh, const std::string& file) {
  const SkinMeshView view = skin_mesh_view(mesh, file);
  if (static_cast<size_t>(mesh.skin) >= asset.skins.size())
    throw Error(file, "mesh \"" + mesh.name + "\"",
                "skin " + std::to_string(mesh.skin) + " does not exist");
  return make_skin_mesh(view, asset.skins[static_cast<size_t>(mesh.skin)].joints.size(), file,
                        mesh.name);
}

}  // namespace kinema
