// FBX writing through assimp's exporter (see kinema/io/fbx.h).
//
// The asset becomes an aiScene (nodes for joints, meshes with bones, one material, animations);
// assimp's FBX exporter writes it to a temporary file beside the output, kinema repairs what
// assimp 5.2 gets wrong (repair_null_records) and writes the result atomically. Lengths
// are written in centimetres, FBX's default unit (UnitScaleFactor 1), so that readers that honour
// the unit (kinema, Blender, Unity) get metres back.
#include <assimp/scene.h>
#include <assimp/Exporter.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>

#include "kinema/core/error.h"
#include "kinema/core/file.h"
#include "kinema/io/fbx.h"

namespace kinema {
namespace {

constexpr double kCentimetres = 100.0;  // kinema metres → FBX centimetres

aiMatrix4x4 to_ai(const Mat4& m) {
  aiMatrix4x4 a;  // row-major: a.a4 is the x translation
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c)
      a[static_cast<unsigned>(r)][static_cast<unsigned>(c)] = static_cast<ai_real>(m(r, c));
  return a;
}

/// A TRS transform in centimetres as an assimp matrix.
aiMatrix4x4 trs_cm(const Transform& t) {
  return to_ai(Transform{t.translation * kCentimetres, t.rotation, t.scale}.to_matrix());
}

/// An affine matrix with its translation in centimetres (inverse binds: rotation and scale are
/// unit-free, translation is a length).
Mat4 in_cm(Mat4 m) {
  const Vec3 t = m.translation_part() * kCentimetres;
  m(0, 3) = t.x;
  m(1, 3) = t.y;
  m(2, 3) = t.z;
  return m;
}

template <class T>
T* new_array(size_t n) {
  return n == 0 ? nullptr : new T[n];
}

/// One aiNode per joint under a scene root (the skeleton may be a forest), plus a node per mesh
/// under the root. Returns the root.
aiNode* build_nodes(const Asset& asset) {
  const int nj = asset.skeleton.joint_count();
  auto* root = new aiNode("kinema_root");
  std::vector<aiNode*> nodes(static_cast<size_t>(nj));
  std::vector<std::vector<aiNode*>> children(static_cast<size_t>(nj) + 1);
  for (int j = 0; j < nj; ++j) {
    nodes[static_cast<size_t>(j)] = new aiNode(asset.skeleton.joint(j).name);
    nodes[static_cast<size_t>(j)]->mTransformation = trs_cm(asset.skeleton.joint(j).rest);
    const int p = asset.skeleton.parent(j);
    children[static_cast<size_t>(p < 0 ? nj : p)].push_back(nodes[static_cast<size_t>(j)]);
  }
  for (size_t m = 0; m < asset.meshes.size(); ++m) {
    auto* node = new aiNode(asset.meshes[m].name.empty() ? "mesh_" + std::to_string(m)
                                                         : asset.meshes[m].name + "_mesh");
    node->mNumMeshes = 1;
    node->mMeshes = new unsigned[1]{static_cast<unsigned>(m)};
    // A skinned mesh's vertices are in model space; a rigid one hangs from its joint.
    const int at = asset.meshes[m].skin < 0 ? asset.meshes[m].node : -1;
    children[static_cast<size_t>(at >= 0 && at < nj ? at : nj)].push_back(node);
  }
  auto attach = [](aiNode* parent, std::vector<aiNode*>& kids) {
    if (kids.empty()) return;
    parent->mNumChildren = static_cast<unsigned>(kids.size());
    parent->mChildren = new aiNode*[kids.size()];
    for (size_t k = 0; k < kids.size(); ++k) {
      parent->mChildren[k] = kids[k];
      kids[k]->mParent = parent;
    }
  };
  for (int j = 0; j < nj; ++j)
    attach(nodes[static_cast<size_t>(j)], children[static_cast<size_t>(j)]);
  attach(root, children[static_cast<size_t>(nj)]);
  return root;
}

/// The bones (one per skin joint that weights a vertex) of `mesh`.
void add_bones(const Asset& asset, const Mesh& mesh, aiMesh& out, const std::string& path) {
  if (mesh.skin < 0 || mesh.influences == 0) return;
  const std::string place = "mesh '" + mesh.name + "'";
  if (mesh.skin >= static_cast<int>(asset.skins.size()))
    throw Error(path, place, "skin " + std::to_string(mesh.skin) + " does not exist");
  const Skin& skin = asset.skins[static_cast<size_t>(mesh.skin)];
  const auto inf = static_cast<size_t>(mesh.influences);
  if (mesh.joints.size() != inf * mesh.vertex_count() || mesh.weights.size() != mesh.joints.size())
    throw Error(path, place, "skin joints/weights do not match the vertex count");
  std::map<int, std::vector<aiVertexWeight>> per_joint;  // skin joint slot → weights
  for (size_t v = 0; v < mesh.vertex_count(); ++v)
    for (size_t c = 0; c < inf; ++c) {
      const float w = mesh.weights[v * inf + c];
      if (!(w > 0)) continue;
      const int slot = mesh.joints[v * inf + c];
      if (slot >= static_cast<int>(skin.joints.size()))
        throw Error(path, place + ", vertex " + std::to_string(v),
                    "skin joint " + std::to_string(slot) + " does not exist");
      per_joint[slot].push_back(aiVertexWeight(static_cast<unsigned>(v), w));
    }
  out.mNumBones = static_cast<unsigned>(per_joint.size());
  out.mBones = new_array<aiBone*>(per_joint.size());
  unsigned b = 0;
  for (auto& [slot, weights] : per_joint) {
    auto* bone = new aiBone;
    const int joint = skin.joints[static_cast<size_t>(slot)];
    bone->mName = aiString(asset.skeleton.joint(joint).name);
    const Mat4 ib = static_cast<size_t>(slot) < skin.inverse_bind.size()
                        ? skin.inverse_bind[static_cast<size_t>(slot)]
                        : Mat4::identity();
    bone->mOffsetMatrix = to_ai(in_cm(ib));
    bone->mNumWeights = static_cast<unsigned>(weights.size());
    bone->mWeights = new aiVertexWeight[weights.size()];
    std::copy(weights.begin(), weights.end(), bone->mWeights);
    out.mBones[b++] = bone;
  }
}

aiMesh* build_mesh(const Asset& asset, const Mesh& mesh, const std::string& path) {
  auto* out = new aiMesh;
  out->mName = aiString(mesh.name);
  out->mPrimitiveTypes = aiPrimitiveType_TRIANGLE;
  out->mMaterialIndex = 0;
  const size_t nv = mesh.vertex_count();
  out->mNumVertices = static_cast<unsigned>(nv);
  out->mVertices = new aiVector3D[nv];
  for (size_t v = 0; v < nv; ++v) {
    const Vec3f& p = mesh.positions[v];
    out->mVertices[v] = aiVector3D(p.x, p.y, p.z) * static_cast<ai_real>(kCentimetres);
  }
  if (mesh.normals.size() == nv) {
    out->mNormals = new aiVector3D[nv];
    for (size_t v = 0; v < nv; ++v)
      out->mNormals[v] = aiVector3D(mesh.normals[v].x, mesh.normals[v].y, mesh.normals[v].z);
  }
  if (mesh.uvs.size() == nv) {
    out->mTextureCoords[0] = new aiVector3D[nv];
    out->mNumUVComponents[0] = 2;
    for (size_t v = 0; v < nv; ++v)  // kinema's origin is top-left, FBX's bottom-left
      out->mTextureCoords[0][v] = aiVector3D(mesh.uvs[v][0], 1.f - mesh.uvs[v][1], 0);
  }
  const size_t nf = mesh.indices.size() / 3;
  out->mNumFaces = static_cast<unsigned>(nf);
  out->mFaces = new_array<aiFace>(nf);
  for (size_t f = 0; f < nf; ++f) {
    for (size_t k = 0; k < 3; ++k)
      if (mesh.indices[3 * f + k] >= nv)
        throw Error(path, "mesh '" + mesh.name + "', triangle " + std::to_string(f),
                    "vertex index out of range");
    out->mFaces[f].mNumIndices = 3;
    out->mFaces[f].mIndices =
        new unsigned[3]{mesh.indices[3 * f], mesh.indices[3 * f + 1], mesh.indices[3 * f + 2]};
  }
  add_bones(asset, mesh, *out, path);
  return out;
}

/// A channel for every joint the clip animates: a key per frame of the resampled clip on each
/// of position, rotation and scale (the exporter writes all three curves of a node).
aiAnimation* build_animation(const Skeleton& skeleton, const Clip& source) {
  const double rate = sample_rate_or(source, kDefaultSampleRate);
  const Clip clip = resample(source, skeleton, rate);
  auto* anim = new aiAnimation;
  anim->mName = aiString(clip.name);
  // assimp 5.2's FBX writer takes key times as seconds whatever mTicksPerSecond says: one tick
  // per second keeps readers of the aiScene and of the file in agreement.
  anim->mTicksPerSecond = 1;
  anim->mDuration = clip.duration;
  std::vector<aiNodeAnim*> channels;
  for (size_t j = 0; j < clip.tracks.size(); ++j) {
    const JointTrack& track = clip.tracks[j];
    if (track.empty()) continue;
    const Transform rest = skeleton.joint(static_cast<int>(j)).rest;
    std::vector<double> times = track.rotation.times;  // resampled: one shared frame grid
    if (times.empty())
      times = track.translation.empty() ? track.scale.times : track.translation.times;
    auto* ch = new aiNodeAnim;
    ch->mNodeName = aiString(skeleton.joint(static_cast<int>(j)).name);
    const auto n = static_cast<unsigned>(times.size());
    ch->mNumPositionKeys = ch->mNumRotationKeys = ch->mNumScalingKeys = n;
    ch->mPositionKeys = new aiVectorKey[n];
    ch->mRotationKeys = new aiQuatKey[n];
    ch->mScalingKeys = new aiVectorKey[n];
    for (unsigned k = 0; k < n; ++k) {
      const double t = times[k];
      const double tick = t;
      const Vec3 p = sample(track.translation, t, rest.translation) * kCentimetres;
      const Quat q = normalize(sample(track.rotation, t, rest.rotation));
      const Vec3 s = sample(track.scale, t, rest.scale);
      ch->mPositionKeys[k] =
          aiVectorKey(tick, aiVector3D(ai_real(p.x), ai_real(p.y), ai_real(p.z)));
      ch->mRotationKeys[k] =
          aiQuatKey(tick, aiQuaternion(ai_real(q.w), ai_real(q.x), ai_real(q.y), ai_real(q.z)));
      ch->mScalingKeys[k] = aiVectorKey(tick, aiVector3D(ai_real(s.x), ai_real(s.y), ai_real(s.z)));
    }
    channels.push_back(ch);
  }
  anim->mNumChannels = static_cast<unsigned>(channels.size());
  anim->mChannels = new_array<aiNodeAnim*>(channels.size());
  std::copy(channels.begin(), channels.end(), anim->mChannels);
  return anim;
}

std::unique_ptr<aiScene> build_scene(const Asset& asset, const std::vector<int>& clips,
                                     const std::string& path) {
  auto scene = std::make_unique<aiScene>();
  scene->mRootNode = build_nodes(asset);
  scene->mNumMaterials = 1;  // the exporter needs one; meshes all use it
  scene->mMaterials = new aiMaterial*[1];
  scene->mMaterials[0] = new aiMaterial;
  const aiString material_name("default");
  scene->mMaterials[0]->AddProperty(&material_name, AI_MATKEY_NAME);
  const aiColor4D grey(0.8f, 0.8f, 0.8f, 1.f);
  scene->mMaterials[0]->AddProperty(&grey, 1, AI_MATKEY_COLOR_DIFFUSE);
  scene->mNumMeshes = static_cast<unsigned>(asset.meshes.size());
  scene->mMeshes = new_array<aiMesh*>(asset.meshes.size());
  for (size_t m = 0; m < asset.meshes.size(); ++m)
    scene->mMeshes[m] = build_mesh(asset, asset.meshes[m], path);
  scene->mNumAnimations = static_cast<unsigned>(clips.size());
  scene->mAnimations = new_array<aiAnimation*>(clips.size());
  for (size_t c = 0; c < clips.size(); ++c)
    scene->mAnimations[c] =
        build_animation(asset.skeleton, asset.clips[static_cast<size_t>(clips[c])]);
  return scene;
}

// ---- repairing assimp 5.2's binary FBX ------------------------------------------------------
//
// assimp 5.2's binary writer means to end every node that has nested nodes (and the top-level
// list) with a NULL record, 25 zero bytes (13 before FBX 7.5), but writes it as an empty string:
// the file then has no such terminators and neither assimp nor Blender reads it ("failed to read
// nested block sentinel"; assimp issue #4686). The end offsets it wrote are right for the bytes
// it wrote, so the node tree can be parsed from them and written again with the terminators.

struct FbxNode {
  std::string head_tail;  // name length, name and property bytes (after the three counts)
  uint64_t property_count = 0, property_bytes = 0;
  std::vector<FbxNode> children;
};

struct FbxReader {
  const std::string& bytes;
  bool wide;  // FBX ≥ 7.5: 64-bit counts and offsets

  uint64_t number(size_t at) const {
    uint64_t v = 0;
    const size_t n = wide ? 8 : 4;
    for (size_t i = 0; i < n; ++i)
      v |= uint64_t(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
    return v;
  }
  size_t header_size() const { return wide ? 25 : 13; }

  /// The node at `at`, or false when there is none (a NULL record, the footer, the end).
  bool read(size_t& at, size_t limit, FbxNode& node) const {
    if (at + header_size() > limit) return false;
    const uint64_t end = number(at);
    if (end == 0 || end <= at || end > limit) return false;
    const size_t w = wide ? 8 : 4;
    node.property_count = number(at + w);
    node.property_bytes = number(at + 2 * w);
    const size_t name_length = static_cast<unsigned char>(bytes[at + 3 * w]);
    const size_t children_at = at + 3 * w + 1 + name_length + node.property_bytes;
    if (children_at > end) return false;
    node.head_tail = bytes.substr(at + 3 * w, children_at - (at + 3 * w));
    for (size_t child = children_at; child < end;) {
      FbxNode c;
      if (!read(child, end, c)) break;  // an existing terminator, or padding
      node.children.push_back(std::move(c));
    }
    at = end;
    return true;
  }
};

void put_number(std::string& out, uint64_t v, bool wide) {
  for (size_t i = 0; i < (wide ? 8u : 4u); ++i)
    out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void write_node(std::string& out, const FbxNode& node, bool wide) {
  const size_t start = out.size();
  put_number(out, 0, wide);  // end offset, patched below
  put_number(out, node.property_count, wide);
  put_number(out, node.property_bytes, wide);
  out += node.head_tail;
  for (const FbxNode& c : node.children) write_node(out, c, wide);
  if (!node.children.empty()) out.append(wide ? 25 : 13, '\0');
  std::string end;
  put_number(end, out.size(), wide);
  out.replace(start, end.size(), end);
}

/// The binary FBX `bytes` with the NULL records the writer left out put back; unchanged when it
/// is no binary FBX.
std::string repair_null_records(const std::string& bytes) {
  constexpr size_t kHeader = 27;  // "Kaydara FBX Binary  \0", 0x1a 0x00, u32 version
  if (bytes.size() < kHeader || bytes.compare(0, 18, "Kaydara FBX Binary") != 0) return bytes;
  const FbxReader reader{bytes, FbxReader{bytes, true}.number(23) % (uint64_t(1) << 32) >= 7500};
  std::vector<FbxNode> top;
  size_t at = kHeader;
  for (FbxNode node; reader.read(at, bytes.size(), node); node = FbxNode{}) top.push_back(node);
  // Skip a NULL record the writer may have put (a fixed assimp); the footer follows.
  if (at + reader.header_size() <= bytes.size() &&
      bytes.find_first_not_of('\0', at) >= at + reader.header_size())
    at += reader.header_size();
  std::string out = bytes.substr(0, kHeader);
  for (const FbxNode& node : top) write_node(out, node, reader.wide);
  out.append(reader.header_size(), '\0');
  out += bytes.substr(at);
  return out;
}

}  // namespace

void write_fbx(const Asset& asset, const std::string& path, const FbxWriteOptions& options) {
  asset.skeleton.validate(false, path);
  std::vector<int> clips = options.clips;
  if (clips.empty())
    for (size_t c = 0; c < asset.clips.size(); ++c) clips.push_back(static_cast<int>(c));
  for (int c : clips) {
    if (c < 0 || c >= static_cast<int>(asset.clips.size()))
      throw Error(path, "clip " + std::to_string(c), "no such clip");
    asset.clips[static_cast<size_t>(c)].validate(asset.skeleton.joint_count(), path);
  }
  const std::unique_ptr<aiScene> scene = build_scene(asset, clips, path);
  // assimp writes the file itself (its in-memory stream cannot seek back as the binary writer
  // does); kinema reads it, repairs it and writes it atomically.
  const std::string temporary = path + ".assimp-tmp";
  Assimp::Exporter exporter;
  const aiReturn exported = exporter.Export(scene.get(), "fbx", temporary);
  std::string bytes;
  if (exported == AI_SUCCESS) bytes = read_file(temporary);
  std::filesystem::remove(temporary);
  if (exported != AI_SUCCESS)
    throw Error(path, "", std::string("assimp cannot export FBX: ") + exporter.GetErrorString());
  write_file_atomically(path, repair_null_records(bytes));
}

}  // namespace kinema
