// `kinema skin bake-weights` as a library call (kinema/pipeline/skin_weights.h).
#include "kinema/pipeline/skin_weights.h"

#include <random>

#include "kinema/core/error.h"
#include "kinema/skeleton/skeleton.h"

namespace kinema::pipeline {

std::vector<std::vector<Mat4>> sample_pose_models(const Skeleton& skeleton, const Clip* clip,
                                                  int count, double max_angle, unsigned seed) {
  std::vector<std::vector<Mat4>> models;
  std::vector<Transform> local(size_t(skeleton.joint_count()));
  if (clip) {
    for (int i = 0; i < count; ++i) {
      const double t = count == 1 ? 0 : clip->duration * i / double(count - 1);
      if (!sample_pose(*clip, skeleton, t, WrapMode::Clamp, local))
        throw Error("", "clip \"" + clip->name + "\"", "cannot sample the clip on this skeleton");
      models.emplace_back(local.size());
      local_to_model(skeleton.parents(), local, models.back());
    }
    return models;
  }
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int i = 0; i < count; ++i) {
    local = skeleton.rest_pose();
    for (Transform& t : local) {
      const Vec3 axis = normalize(Vec3{u(rng), u(rng), u(rng)});
      t.rotation = t.rotation * Quat::from_axis_angle(axis, max_angle * u(rng));
    }
    models.emplace_back(local.size());
    local_to_model(skeleton.parents(), local, models.back());
  }
  return models;
}

BakeWeightsResult bake_weights_file(const BakeWeightsRequest& request) {
  static constexpr std::string_view kWritable[] = {"glb", "gltf", "vrm"};
  const NamedInput inputs[] = {{"IN", request.in}};
  check_output_file(request.out, inputs, kWritable, "skin bake-weights");
  Asset asset = load_asset(request.in, request.load);
  const Clip* clip = nullptr;
  if (!request.clip.empty())
    clip = &asset.clips[size_t(find_clip(asset, request.clip, request.in))];
  std::vector<std::vector<Mat4>> models;
  try {
    models =
        sample_pose_models(asset.skeleton, clip, request.poses, request.max_angle, request.seed);
  } catch (const Error& e) {
    throw Error(request.in, e.place(), e.reason());
  }

  BakeWeightsResult result;
  result.poses = models.size();
  for (Mesh& mesh : asset.meshes) {
    if (mesh.skin < 0 || mesh.influences == 0 || mesh.indices.empty()) continue;
    const Skin& skin = asset.skins[size_t(mesh.skin)];
    std::vector<std::vector<Affine3x4f>> palettes;
    for (const auto& model : models) {
      palettes.emplace_back(skin.joints.size());
      if (!skinning_palette(model, skin.joints, skin.inverse_bind, palettes.back()))
        throw Error(request.in, "skin \"" + skin.name + "\"",
                    "a skin joint is outside the skeleton");
    }
    const SkinMeshView view{mesh.positions, {}, {}, mesh.influences, mesh.joints, mesh.weights};
    WeightBake baked;
    try {
      baked = bake_lbs_weights(view, mesh.indices, palettes, request.mush, request.bake);
    } catch (const Error& e) {
      throw Error(request.in, "mesh \"" + mesh.name + "\", " + e.place(), e.reason());
    }
    mesh.influences = baked.influences;
    mesh.joints = std::move(baked.joints);
    mesh.weights = std::move(baked.weights);
    result.meshes.push_back({mesh.name, mesh.vertex_count(), baked.rms_before, baked.rms_after,
                             baked.max_before, baked.max_after, baked.vertices_kept});
  }
  if (result.meshes.empty()) throw Error(request.in, "", "no skinned triangle mesh to bake");
  // A glTF/VRM source's document goes out with it: the writer rewrites JOINTS_n/WEIGHTS_n of
  // the meshes whose weights changed and keeps materials, textures and extensions.
  save_asset(asset, request.out);
  return result;
}

}  // namespace kinema::pipeline
