// kinema/character/asset.h — what an importer produces and an exporter consumes.
//
// An Asset is a skeleton (every transform node of the source: joints, and for glTF also mesh
// and helper nodes, parents-first), zero or more clips on that skeleton, meshes with skin
// weights and morph targets, skins (which joints a mesh is bound to, with inverse bind
// matrices), an optional humanoid bone map (VRM), and a record of the source's units and axes.
// Importers convert to kinema's conventions — metres, right-handed, +Y up, +Z forward — and
// record what the source used in `source`.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kinema/character/material.h"
#include "kinema/character/spring_bones.h"
#include "kinema/clip/clip.h"
#include "kinema/math/euler.h"
#include "kinema/math/mat4.h"
#include "kinema/math/vec3.h"
#include "kinema/skeleton/skeleton.h"

namespace kinema {

/// What the importer found and what it converted.
struct SourceInfo {
  std::string path;
  std::string format;           ///< "bvh", "gltf", "glb", "vrm0", "vrm1", "fbx", "collada", …
  std::string generator;        ///< the writing tool, when the file says
  double unit_in_meters = 1.0;  ///< one source length unit, in metres (CMU ASF: 0.05644)
  std::string unit_name = "m";  ///< "m", "cm", "inch", "cmu-asf", …
  bool unit_detected = false;   ///< true when guessed from a plausible human height
  std::string up_axis = "+Y";   ///< the source's up axis before conversion
  std::string forward_axis = "+Z";
  std::vector<std::string> warnings;  ///< things accepted but worth knowing (shown by `info`)
};

struct MorphTarget {
  std::string name;
  std::vector<Vec3f> position_deltas;  ///< one per vertex, metres
  std::vector<Vec3f> normal_deltas;    ///< empty or one per vertex
};

/// A triangle mesh. Skinning influences are stored `influences` per vertex; joint indices refer
/// to Skin::joints of the mesh's skin (not to skeleton joints directly), as in glTF.
struct Mesh {
  std::string name;
  int node = -1;  ///< skeleton joint (node) the mesh hangs from; -1 for none
  int skin = -1;  ///< index into Asset::skins, -1 when rigid
  std::vector<Vec3f> positions;
  std::vector<Vec3f> normals;              ///< empty or one per vertex
  std::vector<Vec3f> tangents;             ///< empty or one per vertex: glTF TANGENT xyz
  std::vector<float> tangent_signs;        ///< with tangents: glTF TANGENT w (±1, handedness)
  std::vector<std::array<float, 2>> uvs;   ///< empty or one per vertex: TEXCOORD_0
  std::vector<std::array<float, 2>> uvs1;  ///< empty or one per vertex: TEXCOORD_1
  /// Empty or one per vertex: glTF COLOR_0 as linear RGBA (RGB files get alpha 1); multiplies
  /// the material's base colour.
  std::vector<std::array<float, 4>> colours;
  int material = -1;  ///< index into Asset::materials; −1: none (the renderer picks a colour)
  std::vector<uint32_t> indices;  ///< triangle list
  int influences = 0;             ///< 0 (rigid), 4 or 8
  std::vector<uint16_t> joints;   ///< influences × vertex count
  std::vector<float> weights;     ///< influences × vertex count, each vertex sums to 1
  std::vector<MorphTarget> morph_targets;
  std::vector<double> default_weights;  ///< one per morph target

  size_t vertex_count() const { return positions.size(); }
};

struct Skin {
  std::string name;
  std::vector<int> joints;         ///< skeleton joint indices
  std::vector<Mat4> inverse_bind;  ///< one per joint (identity when the file has none)
  int skeleton_root = -1;          ///< skeleton joint, or -1
};

/// VRM humanoid: VRM bone name (VRM 1.0 spelling, e.g. "hips", "leftUpperLeg") → skeleton joint.
struct Humanoid {
  std::vector<std::pair<std::string, int>> bones;
  /// Joint of a VRM bone name, or -1.
  int find(std::string_view bone) const {
    for (const auto& [name, joint] : bones)
      if (name == bone) return joint;
    return -1;
  }
};

/// Opaque copy of the source glTF document, kept so that a VRM/glTF round trip can preserve
/// what kinema does not model or rewrites (its own encoding of materials and textures, unknown
/// extensions).
struct GltfDocument;

/// How a BVH joint's position channels combine with its OFFSET. Both readings are in use and
/// neither is right for every file (see kinema/io/bvh.h):
enum class BvhTranslation {
  Auto,     ///< decide per joint from the data (a reading option only; never recorded)
  Replace,  ///< the channels are the joint's local translation and replace the OFFSET
            ///< (Blender, MotionBuilder; channels ≈ OFFSET at rest)
  Add,      ///< the channels are a displacement added to the OFFSET (three.js's BVHLoader;
            ///< channels ≈ 0 at rest)
};

/// Why a joint's position channels were read the way BvhJointLayout::translation says.
enum class BvhTranslationBasis {
  Requested,   ///< the caller chose the reading (BvhReadOptions::translation)
  OffsetZero,  ///< the OFFSET is zero on the channel axes: both readings give the same motion
  Measured,    ///< the channels sat near the OFFSET (Replace) or near zero (Add)
  Rule,        ///< neither fitted: roots add, other joints replace (reported in the warnings)
};

/// How a BVH joint's channels were laid out in the source, so a BVH written back keeps them.
struct BvhJointLayout {
  std::vector<std::string> channels;  ///< e.g. {"Xposition", …, "Zrotation", "Xrotation", …}
  bool has_end_site = false;
  Vec3 end_site{0, 0, 0};  ///< End Site offset, metres
  /// With position channels: how they were read (Replace or Add, never Auto) and why.
  BvhTranslation translation = BvhTranslation::Add;
  BvhTranslationBasis translation_basis = BvhTranslationBasis::Requested;
  /// With position channels and a non-zero OFFSET on their axes: the median over frames of
  /// (channels · OFFSET) / |OFFSET|², about 1 when the channels sit at the OFFSET and about 0
  /// when they sit at zero; NaN otherwise.
  double offset_ratio = std::numeric_limits<double>::quiet_NaN();
};

struct Asset {
  Skeleton skeleton;
  std::vector<Clip> clips;
  std::vector<Mesh> meshes;
  std::vector<Skin> skins;
  std::optional<Humanoid> humanoid;
  /// Spring bones (VRMC_springBone or VRM 0.x secondaryAnimation); empty when the file has none.
  SpringBones spring_bones;
  /// Materials and the textures they use (glTF/VRM; empty for formats kinema reads none from).
  std::vector<Material> materials;
  std::vector<Texture> textures;
  SourceInfo source;
  /// Per-joint BVH layout (empty unless read from BVH); indexed like the skeleton.
  std::vector<BvhJointLayout> bvh_layout;
  std::shared_ptr<const GltfDocument> gltf;
};

/// Index of the clip `name_or_index` names: a clip's name, else its index. Throws
/// kinema::UsageError naming `file` and listing the clips when there is no such clip.
int find_clip(const Asset& asset, const std::string& name_or_index, const std::string& file);

/// How much an asset holds: joints and roots of its skeleton, meshes with their vertices,
/// triangles and morph targets, skins.
struct AssetCounts {
  int joints = 0, roots = 0, meshes = 0, skins = 0, morph_targets = 0;
  unsigned long long vertices = 0, triangles = 0;
};
AssetCounts count_contents(const Asset& asset);

}  // namespace kinema
