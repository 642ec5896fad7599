// FBX and Collada import through assimp (see kinema/io/assimp_import.h).
//
// Conversion to kinema's conventions is a change of basis C = s·R, where s is the source unit in
// metres and R the rotation taking the source's (coord, up, front) axes to kinema's (+X, +Y, +Z).
// Every node's local matrix L becomes C·L·C⁻¹, so model matrices become C·M·C⁻¹ and points C·p:
// translations are scaled and rotated, rotations are conjugated by R, mesh vertices are C·v and
// inverse binds C·B⁻¹·C⁻¹ (W'·B'⁻¹·v' = C·W·B⁻¹·v, so skinning is unchanged up to C).
// assimp's own unit and axis handling is switched off or undone so that FBX and Collada go
// through the same path: FBX keeps the file's units and axes (only recorded in metadata), and
// the Collada loader's <unit> scale, multiplied into the root node, is divided out again.
#include "kinema/io/assimp_import.h"

#include <assimp/config.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

#include <assimp/Importer.hpp>

#include "kinema/core/error.h"

namespace kinema {
namespace {

// ---- basis change ----------------------------------------------------------------------------

struct Basis {
  double scale = 1.0;  // source unit in metres
  // rows[i] = the source axis (0..2) and sign that becomes kinema axis i.
  std::array<int, 3> axis{0, 1, 2};
  std::array<double, 3> sign{1, 1, 1};
  Mat4 rot;  // R
  Quat q_rot;

  void finish() {
    rot = Mat4::identity();
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        rot(i, j) = (axis[static_cast<size_t>(i)] == j) ? sign[static_cast<size_t>(i)] : 0.0;
    q_rot = rotation_of(rot);
  }
  Vec3 vector(const Vec3& v) const { return rot.transform_vector(v); }
  Vec3 point(const Vec3& p) const { return rot.transform_vector(p) * scale; }
  Quat rotation(const Quat& q) const { return normalize(q_rot * q * conjugate(q_rot)); }
  Vec3 scale_vector(const Vec3& s) const { return {s[axis[0]], s[axis[1]], s[axis[2]]}; }
  /// C·M·C⁻¹ for an affine matrix M.
  Mat4 matrix(const Mat4& m) const {
    Mat4 r = rot * m * transpose(rot);
    r(0, 3) *= scale;
    r(1, 3) *= scale;
    r(2, 3) *= scale;
    return r;
  }
  Transform transform(const Transform& t) const {
    return {point(t.translation), rotation(t.rotation), scale_vector(t.scale)};
  }
};

Mat4 to_mat4(const aiMatrix4x4& a) {
  Mat4 m;
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) m(r, c) = static_cast<double>(a[r][c]);
  return m;
}

Vec3 to_vec3(const aiVector3D& v) {
  return {static_cast<double>(v.x), static_cast<double>(v.y), static_cast<double>(v.z)};
}

Quat to_quat(const aiQuaternion& q) {
  return {static_cast<double>(q.x), static_cast<double>(q.y), static_cast<double>(q.z),
          static_cast<double>(q.w)};
}

bool near_identity(const Mat4& m, double eps = 1e-9) {
  const Mat4 id = Mat4::identity();
  for (int i = 0; i < 16; ++i)
    if (std::abs(m.m[static_cast<size_t>(i)] - id.m[static_cast<size_t>(i)]) > eps) return false;
  return true;
}

std::string axis_name(int axis, double sign) {
  std::string s = sign < 0 ? "-" : "+";
  return s + "XYZ"[axis];
}

// ---- metadata --------------------------------------------------------------------------------

bool meta_number(const aiScene* scene, const char* key, double& out) {
  const aiMetadata* md = scene->mMetaData;
  if (md == nullptr) return false;
  for (unsigned i = 0; i < md->mNumProperties; ++i) {
    if (std::string(md->mKeys[i].C_Str()) != key) continue;
    const aiMetadataEntry& e = md->mValues[i];
    if (e.mData == nullptr) return false;
    switch (e.mType) {
      case AI_INT32:
        out = *static_cast<const int32_t*>(e.mData);
        return true;
      case AI_UINT64:
        out = static_cast<double>(*static_cast<const uint64_t*>(e.mData));
        return true;
      case AI_FLOAT:
        out = *static_cast<const float*>(e.mData);
        return true;
      case AI_DOUBLE:
        out = *static_cast<const double*>(e.mData);
        return true;
      default:
        return false;
    }
  }
  return false;
}

std::string meta_string(const aiScene* scene, const char* key) {
  const aiMetadata* md = scene->mMetaData;
  if (md == nullptr) return {};
  for (unsigned i = 0; i < md->mNumProperties; ++i)
    if (std::string(md->mKeys[i].C_Str()) == key && md->mValues[i].mType == AI_AISTRING &&
        md->mValues[i].mData != nullptr)
      return static_cast<const aiString*>(md->mValues[i].mData)->C_Str();
  return {};
}

std::string fbx_unit_name(double cm) {
  struct Named {
    double cm;
    const char* name;
  };
  static constexpr Named kUnits[] = {{1.0, "cm"},    {100.0, "m"},   {0.1, "mm"},
                                     {2.54, "inch"}, {30.48, "ft"},  {100000.0, "km"},
                                     {10.0, "dm"},   {91.44, "yard"}};
  for (const auto& u : kUnits)
    if (std::abs(cm - u.cm) <= 1e-6 * u.cm) return u.name;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g cm", cm);
  return buf;
}

/// FBX: UnitScaleFactor is the file unit in centimetres; UpAxis/FrontAxis/CoordAxis (+ signs)
/// say which file axes are up, front and right.
Basis fbx_basis(const aiScene* scene, SourceInfo& info) {
  Basis b;
  double unit_cm = 1.0;
  if (!meta_number(scene, "UnitScaleFactor", unit_cm) || !(unit_cm > 0) ||
      !std::isfinite(unit_cm)) {
    unit_cm = 1.0;
    info.warnings.push_back("FBX UnitScaleFactor missing or invalid; assuming centimetres");
  }
  b.scale = unit_cm * 0.01;
  info.unit_in_meters = b.scale;
  info.unit_name = fbx_unit_name(unit_cm);

  double up = 1, up_sign = 1, front = 2, front_sign = 1, coord = 0, coord_sign = 1;
  meta_number(scene, "UpAxis", up);
  meta_number(scene, "UpAxisSign", up_sign);
  meta_number(scene, "FrontAxis", front);
  meta_number(scene, "FrontAxisSign", front_sign);
  meta_number(scene, "CoordAxis", coord);
  meta_number(scene, "CoordAxisSign", coord_sign);
  const int u = static_cast<int>(up), f = static_cast<int>(front), c = static_cast<int>(coord);
  const bool valid =
      u >= 0 && u < 3 && f >= 0 && f < 3 && c >= 0 && c < 3 && u != f && u != c && f != c;
  if (!valid) {
    info.warnings.push_back("FBX axis system invalid; assuming +Y up, +Z front");
  } else {
    b.axis = {c, u, f};
    b.sign = {coord_sign < 0 ? -1.0 : 1.0, up_sign < 0 ? -1.0 : 1.0, front_sign < 0 ? -1.0 : 1.0};
  }
  b.finish();
  if (determinant3(b.rot) < 0) {  // a left-handed axis description: keep up and front
    b.sign[0] = -b.sign[0];
    b.finish();
    info.warnings.push_back("FBX axis system is left-handed; mirrored the X axis");
  }
  info.up_axis = axis_name(b.axis[1], b.sign[1]);
  info.forward_axis = axis_name(b.axis[2], b.sign[2]);
  return b;
}

/// Value of attribute `attr` inside the first `<tag …>` of `text`, or "".
std::string xml_attribute(const std::string& text, const std::string& tag,
                          const std::string& attr) {
  const size_t open = text.find("<" + tag);
  if (open == std::string::npos) return {};
  const size_t close = text.find('>', open);
  const std::string element = text.substr(open, close == std::string::npos ? 256 : close - open);
  const size_t a = element.find(attr + "=");
  if (a == std::string::npos || a + attr.size() + 1 >= element.size()) return {};
  const char quote = element[a + attr.size() + 1];
  const size_t start = a + attr.size() + 2;
  const size_t end = element.find(quote, start);
  return end == std::string::npos ? std::string() : element.substr(start, end - start);
}

/// Collada: <asset><unit meter="…" name="…"/><up_axis>Z_UP</up_axis>. assimp does not keep them
/// in metadata, so they are read from the head of the file.
Basis collada_basis(const std::string& path, SourceInfo& info) {
  std::string head;
  {
    std::ifstream in(path, std::ios::binary);
    head.resize(1 << 16);
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<size_t>(std::max<std::streamsize>(0, in.gcount())));
  }
  const size_t asset_end = head.find("</asset>");
  if (asset_end != std::string::npos) head.resize(asset_end);
  Basis b;
  const std::string meter = xml_attribute(head, "unit", "meter");
  if (!meter.empty()) {
    char* end = nullptr;
    const double v = std::strtod(meter.c_str(), &end);
    if (v > 0 && std::isfinite(v))
      b.scale = v;
    else
      info.warnings.push_back("Collada <unit meter=\"" + meter + "\"> invalid; assuming metres");
  }
  info.unit_in_meters = b.scale;
  const std::string name = xml_attribute(head, "unit", "name");
  info.unit_name = name.empty() ? (b.scale == 1.0 ? "m" : "unit") : name;
  if (info.unit_name == "meter") info.unit_name = "m";
  if (info.unit_name == "centimeter") info.unit_name = "cm";

  std::string up = "Y_UP";
  const size_t u = head.find("<up_axis>");
  if (u != std::string::npos) {
    const size_t e = head.find("</up_axis>", u);
    if (e != std::string::npos) {
      up = head.substr(u + 9, e - u - 9);
      up.erase(0, up.find_first_not_of(" \t\r\n"));
      up.erase(up.find_last_not_of(" \t\r\n") + 1);
    }
  }
  if (up == "Z_UP") {  // (x, y, z) → (x, z, −y), as assimp's own Collada conversion
    b.axis = {0, 2, 1};
    b.sign = {1, 1, -1};
    info.up_axis = "+Z";
    info.forward_axis = "-Y";
  } else if (up == "X_UP") {  // (x, y, z) → (−y, x, z)
    b.axis = {1, 0, 2};
    b.sign = {-1, 1, 1};
    info.up_axis = "+X";
    info.forward_axis = "+Z";
  } else {
    if (up != "Y_UP")
      info.warnings.push_back("Collada <up_axis> '" + up + "' unknown; assuming Y_UP");
    info.up_axis = "+Y";
    info.forward_axis = "+Z";
  }
  b.finish();
  return b;
}

// ---- skeleton --------------------------------------------------------------------------------

struct NodeTable {
  std::vector<const aiNode*> nodes;  // skeleton order (before build)
  std::vector<Joint> joints;
  std::unordered_map<const aiNode*, int> index;
  std::unordered_map<std::string, int> by_name;  // original assimp name → first node
};

void collect(const aiNode* node, int parent, const Basis& basis, NodeTable& t,
             std::map<std::string, int>& used_names, SourceInfo& info) {
  const int self = static_cast<int>(t.nodes.size());
  std::string name = node->mName.C_Str();
  const std::string original = name;
  if (name.empty()) name = "node" + std::to_string(self);
  if (used_names.count(name) != 0) {
    std::string candidate;
    int k = used_names[name];
    do candidate = name + "_" + std::to_string(++k);
    while (used_names.count(candidate) != 0);
    used_names[name] = k;
    info.warnings.push_back("duplicate node name '" + name + "' renamed to '" + candidate + "'");
    name = candidate;
  }
  used_names.emplace(name, 0);
  Joint j;
  j.name = name;
  j.parent = parent;
  j.rest = Transform::from_matrix(basis.matrix(to_mat4(node->mTransformation)));
  t.nodes.push_back(node);
  t.joints.push_back(std::move(j));
  t.index.emplace(node, self);
  t.by_name.emplace(original, self);
  for (unsigned i = 0; i < node->mNumChildren; ++i)
    if (node->mChildren[i] != nullptr)
      collect(node->mChildren[i], self, basis, t, used_names, info);
}

// ---- animation -------------------------------------------------------------------------------

template <class Key, class V, class Convert>
Keyframes<V> read_keys(const Key* keys, unsigned count, double tps, Convert convert,
                       bool& dropped) {
  Keyframes<V> out;
  out.interpolation = Interpolation::Linear;
  if (keys == nullptr) return out;
  out.times.reserve(count);
  out.values.reserve(count);
  for (unsigned i = 0; i < count; ++i) {
    const double t = keys[i].mTime / tps;
    if (!out.times.empty() && !(t > out.times.back())) {
      dropped = true;
      continue;
    }
    out.times.push_back(t);
    out.values.push_back(convert(keys[i].mValue));
  }
  return out;
}

Clip read_animation(const aiAnimation& anim, int index, const Basis& basis, const NodeTable& t,
                    const std::vector<int>& old_to_new, int joint_count, SourceInfo& info) {
  Clip clip;
  clip.name = anim.mName.length > 0 ? anim.mName.C_Str() : "animation" + std::to_string(index);
  double tps = anim.mTicksPerSecond;
  if (!(tps > 0) || !std::isfinite(tps)) tps = 25.0;
  clip.tracks.resize(static_cast<size_t>(joint_count));
  double last_key = 0;
  bool dropped = false;
  for (unsigned c = 0; c < anim.mNumChannels; ++c) {
    const aiNodeAnim* ch = anim.mChannels[c];
    if (ch == nullptr) continue;
    const auto it = t.by_name.find(ch->mNodeName.C_Str());
    if (it == t.by_name.end()) {
      info.warnings.push_back("clip '" + clip.name + "': channel for unknown node '" +
                              std::string(ch->mNodeName.C_Str()) + "' ignored");
      continue;
    }
    JointTrack& track =
        clip.tracks[static_cast<size_t>(old_to_new[static_cast<size_t>(it->second)])];
    track.translation = read_keys<aiVectorKey, Vec3>(
        ch->mPositionKeys, ch->mNumPositionKeys, tps,
        [&](const aiVector3D& v) { return basis.point(to_vec3(v)); }, dropped);
    track.rotation = read_keys<aiQuatKey, Quat>(
        ch->mRotationKeys, ch->mNumRotationKeys, tps,
        [&](const aiQuaternion& q) { return basis.rotation(to_quat(q)); }, dropped);
    track.scale = read_keys<aiVectorKey, Vec3>(
        ch->mScalingKeys, ch->mNumScalingKeys, tps,
        [&](const aiVector3D& v) { return basis.scale_vector(to_vec3(v)); }, dropped);
    for (const auto* times : {&track.translation.times, &track.rotation.times, &track.scale.times})
      if (!times->empty()) last_key = std::max(last_key, times->back());
  }
  if (dropped)
    info.warnings.push_back("clip '" + clip.name + "': keys with non-increasing times dropped");
  clip.duration = std::max(anim.mDuration / tps, last_key);
  if (!std::isfinite(clip.duration) || clip.duration < 0) clip.duration = last_key;
  clip.sample_rate = infer_frame_rate(clip);  // 0 for adaptive keys (between frames)
  return clip;
}

// ---- meshes ----------------------------------------------------------------------------------

struct MeshContext {
  const Basis& basis;
  const NodeTable& table;
  const std::vector<int>& old_to_new;
  const std::vector<Mat4>& rest_model;  // converted, by new index
  Asset& asset;
  const std::string& path;
};

/// Influences of one vertex: (skin slot, weight) pairs.
using Influences = std::vector<std::pair<int, float>>;

/// Positions (moved by `to_model`), unit normals, the first two UV sets and the first vertex
/// colour set (as stored) of `src`.
void read_vertices(const aiMesh& src, const Basis& basis, const Mat4& to_model, Mesh& mesh) {
  const unsigned n = src.mNumVertices;
  const Mat4 normal_to_model = normal_matrix(to_model);
  mesh.positions.resize(n);
  for (unsigned v = 0; v < n; ++v)
    mesh.positions[v] = Vec3f(to_model.transform_point(basis.point(to_vec3(src.mVertices[v]))));
  if (src.mNormals != nullptr) {
    mesh.normals.resize(n);
    for (unsigned v = 0; v < n; ++v)
      mesh.normals[v] =
          Vec3f(normalize(normal_to_model.transform_vector(basis.vector(to_vec3(src.mNormals[v]))),
                          Vec3::unit_y()));
  }
  for (unsigned set = 0; set < 2; ++set) {
    if (src.mTextureCoords[set] == nullptr) continue;
    auto& uvs = set == 0 ? mesh.uvs : mesh.uvs1;
    uvs.resize(n);
    for (unsigned v = 0; v < n; ++v)
      uvs[v] = {static_cast<float>(src.mTextureCoords[set][v].x),
                static_cast<float>(src.mTextureCoords[set][v].y)};
  }
  if (src.mColors[0] != nullptr) {
    mesh.colours.resize(n);
    for (unsigned v = 0; v < n; ++v) {
      const aiColor4D& c = src.mColors[0][v];
      mesh.colours[v] = {static_cast<float>(c.r), static_cast<float>(c.g), static_cast<float>(c.b),
                         static_cast<float>(c.a)};
    }
  }
}

/// The triangles of `src` (points and lines are skipped); an index out of range is refused.
void read_triangles(const aiMesh& src, const std::string& path, Mesh& mesh) {
  for (unsigned f = 0; f < src.mNumFaces; ++f) {
    const aiFace& face = src.mFaces[f];
    if (face.mNumIndices != 3) continue;  // points and lines
    bool ok = true;
    for (unsigned k = 0; k < 3; ++k) ok = ok && face.mIndices[k] < src.mNumVertices;
    if (!ok)
      throw Error(path, "mesh '" + mesh.name + "' face " + std::to_string(f),
                  "vertex index out of range");
    for (unsigned k = 0; k < 3; ++k) mesh.indices.push_back(face.mIndices[k]);
  }
}

/// The bones of `src` as the joints of `skin` (inverse binds C·offset·C⁻¹·M_node⁻¹, which also
/// become the skeleton's where it has none) and each vertex's influences. Bones without a node
/// are dropped with a warning.
std::vector<Influences> read_bones(const aiMesh& src, const Mat4& from_model,
                                   const std::string& mesh_name, MeshContext& ctx, Skin& skin) {
  const unsigned n = src.mNumVertices;
  std::vector<Influences> influence(n);
  for (unsigned b = 0; b < src.mNumBones; ++b) {
    const aiBone* bone = src.mBones[b];
    if (bone == nullptr) continue;
    const auto it = ctx.table.by_name.find(bone->mName.C_Str());
    if (it == ctx.table.by_name.end()) {
      ctx.asset.source.warnings.push_back("mesh '" + mesh_name + "': bone '" +
                                          std::string(bone->mName.C_Str()) +
                                          "' has no node; its weights are dropped");
      continue;
    }
    const int joint = ctx.old_to_new[static_cast<size_t>(it->second)];
    const Mat4 ibm = ctx.basis.matrix(to_mat4(bone->mOffsetMatrix)) * from_model;
    if (!is_finite(ibm))
      throw Error(ctx.path, "bone '" + std::string(bone->mName.C_Str()) + "'",
                  "non-finite offset matrix");
    const int slot = static_cast<int>(skin.joints.size());
    skin.joints.push_back(joint);
    skin.inverse_bind.push_back(ibm);
    if (!ctx.asset.skeleton.joint(joint).inverse_bind) ctx.asset.skeleton.inverse_bind(joint) = ibm;
    for (unsigned w = 0; w < bone->mNumWeights; ++w) {
      const aiVertexWeight& vw = bone->mWeights[w];
      if (vw.mVertexId >= n || !std::isfinite(vw.mWeight))
        throw Error(ctx.path, "bone '" + std::string(bone->mName.C_Str()) + "'",
                    "bad vertex weight (index " + std::to_string(vw.mVertexId) + ")");
      if (vw.mWeight <= 0) continue;
      auto& list = influence[vw.mVertexId];
      auto same = std::find_if(list.begin(), list.end(), [&](auto& e) { return e.first == slot; });
      if (same != list.end())
        same->second += vw.mWeight;
      else
        list.emplace_back(slot, vw.mWeight);
    }
  }
  return influence;
}

/// Vertices no bone moves follow the mesh's own node (as they do in the source): one more skin
/// joint, bound at the node's rest, with a warning.
void bind_unweighted_to_node(std::vector<Influences>& influence, int node,
                             const std::string& mesh_name, MeshContext& ctx, Skin& skin) {
  size_t unweighted = 0;
  int own_slot = -1;
  for (auto& list : influence) {
    if (!list.empty()) continue;
    ++unweighted;
    if (own_slot < 0) {
      const int joint = node >= 0 ? node : skin.joints.empty() ? 0 : skin.joints.front();
      Mat4 inv = Mat4::identity();
      if (!inverse(ctx.rest_model[static_cast<size_t>(joint)], inv)) inv = Mat4::identity();
      own_slot = static_cast<int>(skin.joints.size());
      skin.joints.push_back(joint);
      skin.inverse_bind.push_back(inv);
    }
    list.emplace_back(own_slot, 1.0f);
  }
  if (unweighted > 0)
    ctx.asset.source.warnings.push_back("mesh '" + mesh_name + "': " + std::to_string(unweighted) +
                                        " vertices without weights bound to their mesh node");
}

/// The mesh's joints and weights: each vertex's strongest influences (8 at most; 4 per vertex
/// when no vertex has more), weights normalized to sum to 1.
void set_weights(std::vector<Influences>& influence, Mesh& mesh) {
  size_t most = 0;
  for (auto& list : influence) {
    std::stable_sort(list.begin(), list.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    if (list.size() > 8) list.resize(8);
    most = std::max(most, list.size());
  }
  mesh.influences = most <= 4 ? 4 : 8;
  const size_t k = static_cast<size_t>(mesh.influences);
  mesh.joints.assign(influence.size() * k, 0);
  mesh.weights.assign(influence.size() * k, 0.0f);
  for (size_t v = 0; v < influence.size(); ++v) {
    double sum = 0;
    for (const auto& e : influence[v]) sum += e.second;
    for (size_t i = 0; i < influence[v].size(); ++i) {
      mesh.joints[v * k + i] = static_cast<uint16_t>(influence[v][i].first);
      mesh.weights[v * k + i] = static_cast<float>(influence[v][i].second / sum);
    }
  }
}

/// One aiMesh carried by joint `node` (-1: none) as a kinema Mesh, and a Skin when it has bones.
void read_mesh(const aiMesh& src, int node, MeshContext& ctx) {
  Mesh mesh;
  mesh.name = src.mName.length > 0 ? src.mName.C_Str()
                                   : (node >= 0 ? ctx.asset.skeleton.joint(node).name : "mesh");
  mesh.node = node;
  if (src.mVertices == nullptr || src.mNumVertices == 0) return;
  // assimp keeps vertices in the mesh node's frame and its offset matrices map that frame to
  // bone space. Skinned meshes are moved into model space (as glTF stores them), so that the
  // inverse binds are inverses of model-space bind matrices: B⁻¹ = offset · M_node⁻¹.
  const bool skinned = src.mNumBones > 0 && src.mBones != nullptr;
  Mat4 to_model = Mat4::identity(), from_model = Mat4::identity();
  if (skinned && node >= 0) {
    to_model = ctx.rest_model[static_cast<size_t>(node)];
    if (!inverse(to_model, from_model))
      throw Error(ctx.path, "mesh '" + mesh.name + "'", "mesh node transform is singular");
  }
  read_vertices(src, ctx.basis, to_model, mesh);
  read_triangles(src, ctx.path, mesh);
  for (const auto& p : mesh.positions)
    if (!is_finite(p))
      throw Error(ctx.path, "mesh '" + mesh.name + "'", "non-finite vertex position");
  if (skinned) {
    Skin skin;
    skin.name = mesh.name;
    std::vector<Influences> influence = read_bones(src, from_model, mesh.name, ctx, skin);
    if (skin.joints.size() > 65535)
      throw Error(ctx.path, "mesh '" + mesh.name + "'", "more than 65535 bones");
    bind_unweighted_to_node(influence, node, mesh.name, ctx, skin);
    set_weights(influence, mesh);
    mesh.skin = static_cast<int>(ctx.asset.skins.size());
    ctx.asset.skins.push_back(std::move(skin));
  }
  ctx.asset.meshes.push_back(std::move(mesh));
}

void read_meshes(const aiScene& scene, const aiNode* node, int joint, MeshContext& ctx) {
  for (unsigned i = 0; i < node->mNumMeshes; ++i) {
    const unsigned m = node->mMeshes[i];
    if (m >= scene.mNumMeshes || scene.mMeshes[m] == nullptr)
      throw Error(ctx.path, "node '" + std::string(node->mName.C_Str()) + "'",
                  "mesh index out of range");
    read_mesh(*scene.mMeshes[m], joint, ctx);
  }
  for (unsigned c = 0; c < node->mNumChildren; ++c) {
    const aiNode* child = node->mChildren[c];
    if (child == nullptr) continue;
    const auto it = ctx.table.index.find(child);
    const int j =
        it == ctx.table.index.end() ? -1 : ctx.old_to_new[static_cast<size_t>(it->second)];
    read_meshes(scene, child, j, ctx);
  }
}

std::string lower_extension(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

/// assimp's scene of the file at `path` (owned by `importer`): no unit or axis conversion (done
/// here instead, the same way for FBX and Collada), triangulated, identical vertices joined.
const aiScene* import_scene(Assimp::Importer& importer, const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw Error(path, "",
                std::filesystem::exists(path, ec) ? "not a regular file" : "no such file");
  if (std::filesystem::file_size(path, ec) == 0 || ec) throw Error(path, "", "empty file");
  importer.SetPropertyBool(AI_CONFIG_IMPORT_FBX_PRESERVE_PIVOTS, false);
  importer.SetPropertyBool(AI_CONFIG_IMPORT_COLLADA_IGNORE_UP_DIRECTION, true);
  importer.SetPropertyBool(AI_CONFIG_FBX_CONVERT_TO_M, false);
  // No placeholder "skeleton meshes" for animation-only files: they are not in the source.
  importer.SetPropertyBool(AI_CONFIG_IMPORT_NO_SKELETON_MESHES, true);
  const unsigned flags = aiProcess_Triangulate | aiProcess_JoinIdenticalVertices |
                         aiProcess_FlipUVs | aiProcess_ValidateDataStructure;
  const aiScene* scene = nullptr;
  try {
    scene = importer.ReadFile(path, flags);
  } catch (const std::exception& e) {
    throw Error(path, "", std::string("assimp: ") + e.what());
  }
  if (scene == nullptr) {
    std::string msg = importer.GetErrorString();
    throw Error(path, "", "assimp: " + (msg.empty() ? std::string("cannot read file") : msg));
  }
  if (scene->mRootNode == nullptr) throw Error(path, "", "scene has no nodes");
  return scene;
}

/// The change of basis of the file's format (FBX, Collada, else metres and +Y up with a
/// warning), recorded in `info` (format, unit, axes, generator). `root` receives the root node's
/// transform with assimp's Collada unit scale divided out again.
Basis source_basis(const aiScene* scene, const std::string& path, SourceInfo& info, Mat4& root) {
  const std::string assimp_format = meta_string(scene, "SourceAsset_Format");
  const std::string ext = lower_extension(path);
  Basis basis;
  root = to_mat4(scene->mRootNode->mTransformation);
  if (ext == ".fbx" || assimp_format.find("FBX") != std::string::npos) {
    info.format = "fbx";
    basis = fbx_basis(scene, info);
  } else if (ext == ".dae" || assimp_format.find("Collada") != std::string::npos) {
    info.format = "collada";
    basis = collada_basis(path, info);
    root = root * Mat4::scaling(Vec3{1, 1, 1} * (1.0 / basis.scale));
  } else {
    info.format = ext.empty() ? "assimp" : ext.substr(1);
    basis.finish();
    info.warnings.push_back("format '" + info.format + "': units and axes taken as metres, +Y up");
  }
  info.generator = meta_string(scene, "SourceAsset_Generator");
  return basis;
}

/// Whether a bone or an animation channel names the root node (Collada skins may name the
/// visual scene itself as a joint).
bool root_is_referenced(const aiScene* scene) {
  const std::string root_name = scene->mRootNode->mName.C_Str();
  for (unsigned m = 0; m < scene->mNumMeshes; ++m)
    for (unsigned b = 0; scene->mMeshes[m] != nullptr && b < scene->mMeshes[m]->mNumBones; ++b)
      if (scene->mMeshes[m]->mBones[b] != nullptr &&
          root_name == scene->mMeshes[m]->mBones[b]->mName.C_Str())
        return true;
  for (unsigned a = 0; a < scene->mNumAnimations; ++a)
    for (unsigned c = 0;
         scene->mAnimations[a] != nullptr && c < scene->mAnimations[a]->mNumChannels; ++c)
      if (scene->mAnimations[a]->mChannels[c] != nullptr &&
          root_name == scene->mAnimations[a]->mChannels[c]->mNodeName.C_Str())
        return true;
  return false;
}

/// The skeleton: every node below the root, and the root itself when it transforms something
/// or is referenced. Fills `table` (nodes in collection order) and returns where each collected
/// node ended up in the built skeleton.
std::vector<int> read_skeleton(const aiScene* scene, const Basis& basis, const Mat4& root,
                               const std::string& path, NodeTable& table, Asset& asset) {
  std::map<std::string, int> used;
  const aiNode* root_node = scene->mRootNode;
  if (root_is_referenced(scene) || !near_identity(root, 1e-6)) {
    collect(root_node, kNoParent, basis, table, used, asset.source);
    table.joints[0].rest = Transform::from_matrix(basis.matrix(root));
  } else {
    for (unsigned i = 0; i < root_node->mNumChildren; ++i)
      if (root_node->mChildren[i] != nullptr)
        collect(root_node->mChildren[i], kNoParent, basis, table, used, asset.source);
  }
  if (table.joints.empty()) throw Error(path, "", "scene has no nodes");
  const size_t node_count = table.joints.size();
  asset.skeleton = Skeleton::build(std::move(table.joints), false, path);
  std::vector<int> old_to_new = asset.skeleton.build_order();
  if (old_to_new.size() != node_count) {  // build() kept the order
    old_to_new.resize(node_count);
    for (size_t i = 0; i < node_count; ++i) old_to_new[i] = static_cast<int>(i);
  }
  return old_to_new;
}

}  // namespace

Asset read_with_assimp(const std::string& path) {
  Assimp::Importer importer;
  const aiScene* scene = import_scene(importer, path);
  Asset asset;
  SourceInfo& info = asset.source;
  info.path = path;
  Mat4 root;
  const Basis basis = source_basis(scene, path, info, root);
  NodeTable table;
  const std::vector<int> old_to_new = read_skeleton(scene, basis, root, path, table, asset);

  // Meshes and skins.
  const std::vector<Mat4> rest_model = rest_model_matrices(asset.skeleton);
  MeshContext ctx{basis, table, old_to_new, rest_model, asset, path};
  {
    const auto it = table.index.find(scene->mRootNode);
    read_meshes(*scene, scene->mRootNode,
                it == table.index.end() ? -1 : old_to_new[static_cast<size_t>(it->second)], ctx);
  }

  // Animations.
  for (unsigned a = 0; a < scene->mNumAnimations; ++a) {
    if (scene->mAnimations[a] == nullptr) continue;
    Clip clip = read_animation(*scene->mAnimations[a], static_cast<int>(a), basis, table,
                               old_to_new, asset.skeleton.joint_count(), info);
    clip.validate(asset.skeleton.joint_count(), path);
    asset.clips.push_back(std::move(clip));
  }
  if (scene->mNumAnimations > 0)
    for (unsigned m = 0; m < scene->mNumMeshes; ++m)
      if (scene->mMeshes[m] != nullptr && scene->mMeshes[m]->mNumAnimMeshes > 0) {
        info.warnings.push_back("morph (mesh) animations are not imported");
        break;
      }
  return asset;
}

}  // namespace kinema
