// Two assets as one (see kinema/character/merge.h).
#include "kinema/character/merge.h"

#include <algorithm>
#include <string>
#include <vector>

namespace kinema {
namespace {

/// Every texture reference of a material (core and MToon).
std::vector<TextureRef*> texture_refs(Material& m) {
  std::vector<TextureRef*> refs{&m.base_color_texture, &m.metallic_roughness_texture,
                                &m.normal_texture, &m.occlusion_texture, &m.emissive_texture};
  if (m.mtoon) {
    MToon& t = *m.mtoon;
    refs.insert(refs.end(),
                {&t.shade_multiply_texture, &t.shading_shift_texture, &t.matcap_texture,
                 &t.rim_multiply_texture, &t.outline_width_texture, &t.uv_animation_mask_texture});
  }
  return refs;
}

}  // namespace

Asset merge_assets(const Asset& a, int clip_a, const Asset& b, int clip_b) {
  const int na = a.skeleton.joint_count();
  std::vector<Joint> joints = a.skeleton.joints();
  for (int j = 0; j < b.skeleton.joint_count(); ++j) {
    Joint joint = b.skeleton.joint(j);
    if (joint.parent != kNoParent) joint.parent += na;
    if (a.skeleton.find(joint.name) >= 0) joint.name += "_" + std::to_string(j);
    joints.push_back(std::move(joint));
  }
  Asset out;
  out.skeleton = Skeleton::build(std::move(joints));
  out.humanoid = a.humanoid;
  out.spring_bones = a.spring_bones;
  out.source = a.source;
  out.meshes = a.meshes;
  out.skins = a.skins;
  out.materials = a.materials;
  out.textures = a.textures;
  const int meshes_a = static_cast<int>(a.meshes.size());
  const int skins_a = static_cast<int>(a.skins.size());
  const int materials_a = static_cast<int>(a.materials.size());
  const int textures_a = static_cast<int>(a.textures.size());
  for (Mesh mesh : b.meshes) {
    if (mesh.node >= 0) mesh.node += na;
    if (mesh.skin >= 0) mesh.skin += skins_a;
    if (mesh.material >= 0) mesh.material += materials_a;
    out.meshes.push_back(std::move(mesh));
  }
  out.textures.insert(out.textures.end(), b.textures.begin(), b.textures.end());
  for (Material material : b.materials) {
    for (TextureRef* ref : texture_refs(material))
      if (ref->texture >= 0) ref->texture += textures_a;
    out.materials.push_back(std::move(material));
  }
  for (Skin skin : b.skins) {
    for (int& j : skin.joints) j += na;
    if (skin.skeleton_root >= 0) skin.skeleton_root += na;
    out.skins.push_back(std::move(skin));
  }
  Clip clip;
  const Clip* ca = clip_a >= 0 ? &a.clips.at(static_cast<size_t>(clip_a)) : nullptr;
  const Clip* cb = clip_b >= 0 ? &b.clips.at(static_cast<size_t>(clip_b)) : nullptr;
  clip.name = ca ? ca->name : cb ? cb->name : "rest";
  clip.duration = std::max(ca ? ca->duration : 0.0, cb ? cb->duration : 0.0);
  clip.sample_rate = std::max(ca ? ca->sample_rate : 0.0, cb ? cb->sample_rate : 0.0);
  clip.tracks.resize(static_cast<size_t>(out.skeleton.joint_count()));
  if (ca) {
    std::copy(ca->tracks.begin(), ca->tracks.end(), clip.tracks.begin());
    clip.morph_tracks = ca->morph_tracks;
  }
  if (cb) {
    std::copy(cb->tracks.begin(), cb->tracks.end(), clip.tracks.begin() + na);
    for (MorphTrack track : cb->morph_tracks) {
      track.mesh += meshes_a;
      clip.morph_tracks.push_back(std::move(track));
    }
  }
  out.clips.push_back(std::move(clip));
  return out;
}

}  // namespace kinema
