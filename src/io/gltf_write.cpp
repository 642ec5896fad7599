// glTF 2.0 / GLB / VRM 1.0 writing through tinygltf (see kinema/io/gltf.h).
//
// Two modes:
//  * source mode (the asset came from glTF/VRM and its skeleton still matches the document):
//    the source model is copied; animations and skins' inverse bind matrices are rebuilt from
//    the asset; changed rest transforms and changed skin weights (JOINTS_n/WEIGHTS_n) are
//    written back; everything else (materials,
//    textures, images, spring bones, unknown extensions) is kept. Accessors and bufferViews
//    only the old animations/skins used are dropped, and all data is repacked into one buffer.
//  * fresh mode: nodes from the skeleton (TRS), one glTF mesh and node per kinema Mesh (with a
//    default material, double-sided), skins, animations.
// Data is always one buffer: the GLB binary chunk, or a base64 data URI in a .gltf.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <sstream>

#include "gltf_buffer.h"
#include "gltf_internal.h"
#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/io/gltf.h"

namespace kinema {
namespace {

std::string base64(const unsigned char* p, size_t n) {
  static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((n + 2) / 3 * 4);
  for (size_t i = 0; i < n; i += 3) {
    const unsigned v = unsigned(p[i]) << 16 | (i + 1 < n ? unsigned(p[i + 1]) << 8 : 0u) |
                       (i + 2 < n ? unsigned(p[i + 2]) : 0u);
    out += k[(v >> 18) & 63];
    out += k[(v >> 12) & 63];
    out += i + 1 < n ? k[(v >> 6) & 63] : '=';
    out += i + 2 < n ? k[v & 63] : '=';
  }
  return out;
}

std::string sniff_mime(const std::vector<unsigned char>& b) {
  if (b.size() >= 8 && b[0] == 0x89 && b[1] == 'P' && b[2] == 'N' && b[3] == 'G')
    return "image/png";
  if (b.size() >= 3 && b[0] == 0xFF && b[1] == 0xD8) return "image/jpeg";
  if (b.size() >= 12 && std::memcmp(b.data() + 8, "WEBP", 4) == 0) return "image/webp";
  return "image/png";
}

using gltf_detail::add_channel;
using gltf_detail::Builder;
using gltf_detail::quat_floats;
using gltf_detail::vec3_floats;

void set_node_trs(tinygltf::Node& n, const Transform& t) {
  n.matrix.clear();
  n.translation.clear();
  n.rotation.clear();
  n.scale.clear();
  if (t.translation != Vec3{0, 0, 0})
    n.translation = {t.translation.x, t.translation.y, t.translation.z};
  const Quat q = normalize(t.rotation);
  if (q != Quat::identity()) n.rotation = {q.x, q.y, q.z, q.w};
  if (t.scale != Vec3{1, 1, 1}) n.scale = {t.scale.x, t.scale.y, t.scale.z};
}

Transform node_trs(const tinygltf::Node& n) {
  if (n.matrix.size() == 16)
    return Transform::from_matrix(Mat4::from_column_major(n.matrix.data()));
  Transform t;
  if (n.translation.size() == 3)
    t.translation = {n.translation[0], n.translation[1], n.translation[2]};
  if (n.rotation.size() == 4)
    t.rotation = normalize(Quat{n.rotation[0], n.rotation[1], n.rotation[2], n.rotation[3]});
  if (n.scale.size() == 3) t.scale = {n.scale[0], n.scale[1], n.scale[2]};
  return t;
}

bool near(const Transform& a, const Transform& b) {
  return length(a.translation - b.translation) < 1e-9 && length(a.scale - b.scale) < 1e-9 &&
         angle_between(a.rotation, b.rotation) < 1e-9;
}

/// Drops accessors no mesh uses (the old animations' and skins'), then bufferViews nothing uses,
/// and repacks every kept bufferView and every image into the builder's single buffer.
void compact(tinygltf::Model& m, Builder& b, bool binary) {
  std::vector<char> used_acc(m.accessors.size(), 0);
  auto mark = [&](int a) {
    if (a >= 0 && a < static_cast<int>(used_acc.size())) used_acc[static_cast<size_t>(a)] = 1;
  };
  for (const auto& mesh : m.meshes)
    for (const auto& p : mesh.primitives) {
      mark(p.indices);
      for (const auto& [k, a] : p.attributes) mark(a);
      for (const auto& t : p.targets)
        for (const auto& [k, a] : t) mark(a);
    }
  std::vector<int> acc_map(m.accessors.size(), -1);
  std::vector<tinygltf::Accessor> accessors;
  for (size_t i = 0; i < m.accessors.size(); ++i)
    if (used_acc[i]) {
      acc_map[i] = static_cast<int>(accessors.size());
      accessors.push_back(m.accessors[i]);
    }
  auto remap = [&](int& a) {
    a = a >= 0 && a < static_cast<int>(acc_map.size()) ? acc_map[static_cast<size_t>(a)] : -1;
  };
  for (auto& mesh : m.meshes)
    for (auto& p : mesh.primitives) {
      remap(p.indices);
      for (auto& [k, a] : p.attributes) remap(a);
      for (auto& t : p.targets)
        for (auto& [k, a] : t) remap(a);
    }
  m.accessors = std::move(accessors);

  const auto old_views = std::move(m.bufferViews);
  const auto old_buffers = std::move(m.buffers);
  m.bufferViews.clear();
  std::map<int, int> view_map;
  auto move_view = [&](int v) -> int {
    if (v < 0 || v >= static_cast<int>(old_views.size())) return -1;
    if (auto it = view_map.find(v); it != view_map.end()) return it->second;
    const auto& ov = old_views[static_cast<size_t>(v)];
    const auto& data = old_buffers[static_cast<size_t>(ov.buffer)].data;
    const int nv = b.view(data.data() + ov.byteOffset, ov.byteLength, ov.target);
    auto& bv = m.bufferViews[static_cast<size_t>(nv)];
    bv.byteStride = ov.byteStride;
    bv.name = ov.name;
    view_map[v] = nv;
    return nv;
  };
  for (auto& a : m.accessors) {
    if (a.bufferView >= 0) a.bufferView = move_view(a.bufferView);
    if (a.sparse.isSparse) {
      a.sparse.indices.bufferView = move_view(a.sparse.indices.bufferView);
      a.sparse.values.bufferView = move_view(a.sparse.values.bufferView);
    }
  }
  for (auto& img : m.images) {
    if (img.bufferView >= 0) {
      img.bufferView = move_view(img.bufferView);
      if (img.mimeType.empty()) img.mimeType = "image/png";
    } else if (!img.image.empty()) {
      if (img.mimeType.empty()) img.mimeType = sniff_mime(img.image);
      if (binary) {
        img.bufferView = b.view(img.image.data(), img.image.size(), 0);
        img.uri.clear();
      } else {
        img.uri = "data:" + img.mimeType + ";base64," + base64(img.image.data(), img.image.size());
      }
      img.image.clear();
    } else if (!img.uri.empty() && img.uri.rfind("data:", 0) != 0) {
      // An external image the source referenced but could not be read (missing file): the
      // output lives elsewhere, so the reference would dangle; embed a 1×1 placeholder PNG.
      static const unsigned char kPng[] = {
          0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48,
          0x44, 0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00,
          0x00, 0x1f, 0x15, 0xc4, 0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78,
          0xda, 0x63, 0x64, 0x60, 0xf8, 0x5f, 0x0f, 0x00, 0x02, 0x87, 0x01, 0x80, 0xeb, 0x47,
          0xba, 0x92, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82};
      img.mimeType = "image/png";
      if (binary) {
        img.bufferView = b.view(kPng, sizeof(kPng), 0);
        img.uri.clear();
      } else {
        img.uri = "data:image/png;base64," + base64(kPng, sizeof(kPng));
      }
    }
  }
}

struct Target {
  std::vector<int> joint_to_node;
  std::vector<int> mesh_node;  // kinema mesh → node that carries it (for weights channels)
};

void write_animations(tinygltf::Model& m, Builder& b, const std::vector<Clip>& clips,
                      const std::vector<int>& which, const Target& t, const std::string& file) {
  for (int ci : which) {
    if (ci < 0 || ci >= static_cast<int>(clips.size()))
      throw Error(file, "clip " + std::to_string(ci), "no such clip");
    const Clip& clip = clips[static_cast<size_t>(ci)];
    tinygltf::Animation anim;
    anim.name = clip.name;
    for (size_t j = 0; j < clip.tracks.size() && j < t.joint_to_node.size(); ++j) {
      const auto& tr = clip.tracks[j];
      const int node = t.joint_to_node[j];
      if (!tr.translation.empty())
        add_channel(anim, b.times(tr.translation.times),
                    b.floats(vec3_floats(tr.translation.values), TINYGLTF_TYPE_VEC3, 3, 0, false),
                    tr.translation.interpolation, node, "translation");
      if (!tr.rotation.empty())
        add_channel(anim, b.times(tr.rotation.times),
                    b.floats(quat_floats(tr.rotation), TINYGLTF_TYPE_VEC4, 4, 0, false),
                    tr.rotation.interpolation, node, "rotation");
      if (!tr.scale.empty())
        add_channel(anim, b.times(tr.scale.times),
                    b.floats(vec3_floats(tr.scale.values), TINYGLTF_TYPE_VEC3, 3, 0, false),
                    tr.scale.interpolation, node, "scale");
    }
    std::vector<int> weight_nodes;
    for (const auto& mt : clip.morph_tracks) {
      if (mt.mesh < 0 || mt.mesh >= static_cast<int>(t.mesh_node.size()) || mt.times.empty())
        continue;
      const int node = t.mesh_node[static_cast<size_t>(mt.mesh)];
      if (node < 0 || std::count(weight_nodes.begin(), weight_nodes.end(), node)) continue;
      weight_nodes.push_back(node);
      std::vector<float> v(mt.values.begin(), mt.values.end());
      add_channel(anim, b.times(mt.times), b.floats(v, TINYGLTF_TYPE_SCALAR, 1, 0, false),
                  mt.interpolation, node, "weights");
    }
    if (!anim.channels.empty()) m.animations.push_back(std::move(anim));
  }
}

int write_skin_ibm(Builder& b, const Skin& s) {
  std::vector<float> f;
  for (size_t k = 0; k < s.joints.size(); ++k) {
    const Mat4 ib = k < s.inverse_bind.size() ? s.inverse_bind[k] : Mat4::identity();
    for (double v : ib.m) f.push_back(float(v));
  }
  return b.floats(f, TINYGLTF_TYPE_MAT4, 16, 0, false);
}

/// One node per joint (TRS rest, children as the skeleton's), joint j being node j. Returns
/// the root nodes.
std::vector<int> add_joint_nodes(tinygltf::Model& m, const Skeleton& skeleton, Target& t) {
  const int n = skeleton.joint_count();
  for (int j = 0; j < n; ++j) {
    tinygltf::Node node;
    node.name = skeleton.joint(j).name;
    set_node_trs(node, skeleton.joint(j).rest);
    m.nodes.push_back(node);
    t.joint_to_node.push_back(j);
  }
  std::vector<int> roots;
  for (int j = 0; j < n; ++j) {
    const int p = skeleton.parent(j);
    if (p >= 0)
      m.nodes[static_cast<size_t>(p)].children.push_back(j);
    else
      roots.push_back(j);
  }
  return roots;
}

void add_skins(tinygltf::Model& m, Builder& b, const std::vector<Skin>& skins) {
  for (const auto& s : skins) {
    tinygltf::Skin gs;
    gs.name = s.name;
    gs.joints = s.joints;
    gs.skeleton = s.skeleton_root;
    gs.inverseBindMatrices = write_skin_ibm(b, s);
    m.skins.push_back(gs);
  }
}

/// POSITION (with min/max), NORMAL (unit length) and TEXCOORD_0 of a mesh.
void add_vertex_attributes(Builder& b, const Mesh& mesh, tinygltf::Primitive& p) {
  const size_t nv = mesh.vertex_count();
  std::vector<float> f;
  for (const auto& v : mesh.positions) f.insert(f.end(), {v.x, v.y, v.z});
  p.attributes["POSITION"] = b.floats(f, TINYGLTF_TYPE_VEC3, 3, TINYGLTF_TARGET_ARRAY_BUFFER, true);
  if (mesh.normals.size() == nv) {
    f.clear();
    for (const auto& v : mesh.normals) {
      const Vec3f u = normalize(v, Vec3f{0, 1, 0});
      f.insert(f.end(), {u.x, u.y, u.z});
    }
    p.attributes["NORMAL"] =
        b.floats(f, TINYGLTF_TYPE_VEC3, 3, TINYGLTF_TARGET_ARRAY_BUFFER, false);
  }
  if (mesh.uvs.size() == nv) {
    f.clear();
    for (const auto& v : mesh.uvs) f.insert(f.end(), {v[0], v[1]});
    p.attributes["TEXCOORD_0"] =
        b.floats(f, TINYGLTF_TYPE_VEC2, 2, TINYGLTF_TARGET_ARRAY_BUFFER, false);
  }
}

/// The triangle indices as 16-bit (up to 65535 vertices) or 32-bit integers; -1 when none.
int add_indices(Builder& b, const Mesh& mesh) {
  if (mesh.indices.empty()) return -1;
  if (mesh.vertex_count() <= 65535) {
    std::vector<uint16_t> idx(mesh.indices.begin(), mesh.indices.end());
    return b.accessor(b.view(idx.data(), idx.size() * 2, TINYGLTF_TARGET_ELEMENT_ARRAY_BUFFER),
                      TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT, TINYGLTF_TYPE_SCALAR, idx.size());
  }
  return b.accessor(
      b.view(mesh.indices.data(), mesh.indices.size() * 4, TINYGLTF_TARGET_ELEMENT_ARRAY_BUFFER),
      TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT, TINYGLTF_TYPE_SCALAR, mesh.indices.size());
}

/// JOINTS_n / WEIGHTS_n, four influences per set, weights normalized to sum to 1 (a vertex
/// without weight gets its first joint at 1).
void add_skin_attributes(Builder& b, const Mesh& mesh, tinygltf::Primitive& p) {
  const size_t nv = mesh.vertex_count();
  const size_t inf = static_cast<size_t>(mesh.influences);
  for (size_t set = 0; set * 4 < inf; ++set) {
    std::vector<uint16_t> jj;
    std::vector<float> ww;
    for (size_t v = 0; v < nv; ++v) {
      float sum = 0;
      for (size_t c = 0; c < inf; ++c) sum += mesh.weights[v * inf + c];
      for (size_t c = 0; c < 4; ++c) {
        const size_t k = v * inf + set * 4 + c;
        const float w = sum > 0 ? mesh.weights[k] / sum : (set == 0 && c == 0 ? 1.f : 0.f);
        jj.push_back(w > 0 ? mesh.joints[k] : 0);
        ww.push_back(w);
      }
    }
    p.attributes[set == 0 ? "JOINTS_0" : "JOINTS_1"] =
        b.accessor(b.view(jj.data(), jj.size() * 2, TINYGLTF_TARGET_ARRAY_BUFFER),
                   TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT, TINYGLTF_TYPE_VEC4, nv);
    p.attributes[set == 0 ? "WEIGHTS_0" : "WEIGHTS_1"] =
        b.floats(ww, TINYGLTF_TYPE_VEC4, 4, TINYGLTF_TARGET_ARRAY_BUFFER, false);
  }
}

/// The morph targets of `mesh` on primitive `p`, and their default weights and names
/// (extras.targetNames) on the glTF mesh `gm`.
void add_morph_targets(Builder& b, const Mesh& mesh, tinygltf::Primitive& p, tinygltf::Mesh& gm) {
  const size_t nv = mesh.vertex_count();
  tinygltf::Value::Array names;
  std::vector<float> f;
  for (const auto& target : mesh.morph_targets) {
    std::map<std::string, int> attrs;
    f.clear();
    for (const auto& v : target.position_deltas) f.insert(f.end(), {v.x, v.y, v.z});
    if (f.size() == 3 * nv)
      attrs["POSITION"] = b.floats(f, TINYGLTF_TYPE_VEC3, 3, TINYGLTF_TARGET_ARRAY_BUFFER, true);
    f.clear();
    for (const auto& v : target.normal_deltas) f.insert(f.end(), {v.x, v.y, v.z});
    if (f.size() == 3 * nv)
      attrs["NORMAL"] = b.floats(f, TINYGLTF_TYPE_VEC3, 3, TINYGLTF_TARGET_ARRAY_BUFFER, false);
    p.targets.push_back(attrs);
    names.push_back(tinygltf::Value(target.name));
  }
  if (!mesh.morph_targets.empty()) {
    gm.weights = mesh.default_weights;
    gm.weights.resize(mesh.morph_targets.size(), 0.0);
    gm.extras = tinygltf::Value(tinygltf::Value::Object{{"targetNames", tinygltf::Value(names)}});
  }
}

/// A kinema Mesh as a glTF mesh of one triangle primitive (material 0) and the node that
/// carries it: a root for skinned meshes (glTF ignores their node transform), else a child of
/// its joint's node (a root when it has none). Returns the node.
int add_mesh(tinygltf::Model& m, Builder& b, const Mesh& mesh, int joint_count,
             std::vector<int>& roots) {
  tinygltf::Primitive p;
  p.mode = TINYGLTF_MODE_TRIANGLES;
  p.material = 0;
  add_vertex_attributes(b, mesh, p);
  p.indices = add_indices(b, mesh);
  const bool skinned =
      mesh.skin >= 0 && mesh.influences > 0 &&
      mesh.joints.size() == mesh.vertex_count() * static_cast<size_t>(mesh.influences);
  if (skinned) add_skin_attributes(b, mesh, p);
  tinygltf::Mesh gm;
  gm.name = mesh.name;
  add_morph_targets(b, mesh, p, gm);
  gm.primitives.push_back(p);
  m.meshes.push_back(gm);
  tinygltf::Node node;
  node.name = mesh.name;
  node.mesh = static_cast<int>(m.meshes.size()) - 1;
  const int idx = static_cast<int>(m.nodes.size());
  if (skinned) {
    node.skin = mesh.skin;
    roots.push_back(idx);
  } else if (mesh.node >= 0 && mesh.node < joint_count) {
    m.nodes[static_cast<size_t>(mesh.node)].children.push_back(idx);
  } else {
    roots.push_back(idx);
  }
  m.nodes.push_back(node);
  return idx;
}

/// Fresh model from the asset: joint nodes, skins, a default material, one mesh and node per
/// kinema Mesh, one scene.
Target build_fresh(tinygltf::Model& m, Builder& b, const Asset& a) {
  Target t;
  std::vector<int> roots = add_joint_nodes(m, a.skeleton, t);
  add_skins(m, b, a.skins);
  if (!a.meshes.empty()) {
    tinygltf::Material mat;
    mat.name = "default";
    mat.pbrMetallicRoughness.baseColorFactor = {0.8, 0.8, 0.8, 1.0};
    mat.pbrMetallicRoughness.metallicFactor = 0.0;
    // Both sides: without a source material nothing says which side shows (a simulated cloth,
    // a scan), and a viewer that culls back faces would show nothing from behind.
    mat.doubleSided = true;
    m.materials.push_back(mat);
  }
  for (const auto& mesh : a.meshes)
    t.mesh_node.push_back(add_mesh(m, b, mesh, a.skeleton.joint_count(), roots));
  tinygltf::Scene scene;
  scene.nodes = roots;
  m.scenes.push_back(scene);
  m.defaultScene = 0;
  return t;
}

/// The asset's meshes whose skin weights must be rewritten: those the reader renormalized and
/// those whose joints or weights changed since reading (skin_fingerprint). Their JOINTS_n and
/// WEIGHTS_n accessors are dropped from the source model `m` (to be rewritten by write_weights).
std::vector<size_t> drop_changed_weights(tinygltf::Model& m, const Asset& asset,
                                         const GltfDocument& doc) {
  std::vector<size_t> rewrite;
  for (size_t i = 0; i < asset.meshes.size(); ++i) {
    const bool renormalized = i < doc.weights_renormalized.size() && doc.weights_renormalized[i];
    const bool changed = i < doc.skin_fingerprint.size() &&
                         doc.skin_fingerprint[i] != skin_fingerprint(asset.meshes[i]);
    if (!renormalized && !changed) continue;
    const auto [gm, gp] = doc.mesh_primitive[i];
    auto& attrs = m.meshes[static_cast<size_t>(gm)].primitives[static_cast<size_t>(gp)].attributes;
    for (const char* name : {"JOINTS_0", "JOINTS_1", "WEIGHTS_0", "WEIGHTS_1"}) attrs.erase(name);
    rewrite.push_back(i);
  }
  return rewrite;
}

/// JOINTS_n and WEIGHTS_n of the asset meshes `rewrite`, from the asset.
void write_weights(tinygltf::Model& m, Builder& b, const Asset& asset, const GltfDocument& doc,
                   const std::vector<size_t>& rewrite) {
  for (size_t i : rewrite) {
    const Mesh& mesh = asset.meshes[i];
    const auto [gm, gp] = doc.mesh_primitive[i];
    auto& prim = m.meshes[static_cast<size_t>(gm)].primitives[static_cast<size_t>(gp)];
    if (mesh.influences > 0 &&
        mesh.joints.size() == mesh.vertex_count() * static_cast<size_t>(mesh.influences))
      add_skin_attributes(b, mesh, prim);
  }
}

/// Inverse bind matrices of every source skin: the asset's when its skin has the same joints,
/// else the inverses of the skeleton's rest pose.
void write_skin_binds(tinygltf::Model& m, Builder& b, const Asset& asset, const GltfDocument& doc) {
  for (size_t s = 0; s < m.skins.size(); ++s) {
    if (s < asset.skins.size() && asset.skins[s].joints.size() == m.skins[s].joints.size()) {
      m.skins[s].inverseBindMatrices = write_skin_ibm(b, asset.skins[s]);
    } else {
      Skin fallback;
      for (int node : m.skins[s].joints)
        fallback.joints.push_back(doc.node_to_joint[static_cast<size_t>(node)]);
      const auto ibm = inverse_bind_from_rest(asset.skeleton);
      for (int j : fallback.joints) fallback.inverse_bind.push_back(ibm[static_cast<size_t>(j)]);
      m.skins[s].inverseBindMatrices = write_skin_ibm(b, fallback);
    }
  }
}

/// VRM 0.x → 1.0: turns the scene roots (and their keys in `clips`) 180° about +Y so the avatar
/// faces +Z.
void face_plus_z(tinygltf::Model& m, const Asset& asset, const Target& t,
                 std::vector<Clip>& clips) {
  const Quat yaw{0, 1, 0, 0};
  for (int j = 0; j < asset.skeleton.joint_count(); ++j) {
    if (asset.skeleton.parent(j) != kNoParent) continue;
    auto& node = m.nodes[static_cast<size_t>(t.joint_to_node[static_cast<size_t>(j)])];
    if (node.skin >= 0 && node.children.empty()) continue;  // its transform is ignored
    Transform r = asset.skeleton.joint(j).rest;
    set_node_trs(node, Transform{rotate(yaw, r.translation), yaw * r.rotation, r.scale});
    for (auto& c : clips) {
      if (static_cast<size_t>(j) >= c.tracks.size()) continue;
      for (auto& v : c.tracks[static_cast<size_t>(j)].translation.values) v = rotate(yaw, v);
      for (auto& q : c.tracks[static_cast<size_t>(j)].rotation.values) q = yaw * q;
    }
  }
}

/// Source mode: the source model with its animations dropped, data repacked (compact), skin
/// weights that changed since reading (or that the reader renormalized) rewritten, changed rest
/// transforms and every skin's inverse binds written from the asset, and, for VRM output of a VRM
/// 0.x source, the avatar turned to +Z.
Target adapt_source(tinygltf::Model& m, Builder& b, const Asset& asset, const GltfDocument& doc,
                    bool binary, bool vrm, std::vector<Clip>& clips) {
  const int nj = asset.skeleton.joint_count();
  m = doc.model;
  m.animations.clear();
  for (auto& s : m.skins) s.inverseBindMatrices = -1;
  const std::vector<size_t> rewrite = drop_changed_weights(m, asset, doc);
  compact(m, b, binary);
  write_weights(m, b, asset, doc, rewrite);
  Target t;
  t.joint_to_node.assign(static_cast<size_t>(nj), -1);
  for (int node = 0; node < nj; ++node)
    t.joint_to_node[static_cast<size_t>(doc.node_to_joint[static_cast<size_t>(node)])] = node;
  for (int j = 0; j < nj; ++j) {
    auto& node = m.nodes[static_cast<size_t>(t.joint_to_node[static_cast<size_t>(j)])];
    if (!near(node_trs(node), asset.skeleton.joint(j).rest))
      set_node_trs(node, asset.skeleton.joint(j).rest);
  }
  write_skin_binds(m, b, asset, doc);
  for (const auto& mesh : asset.meshes)
    t.mesh_node.push_back(mesh.node >= 0 ? t.joint_to_node[static_cast<size_t>(mesh.node)] : -1);
  if (vrm && m.extensions.count("VRM") && !m.extensions.count("VRMC_vrm"))
    face_plus_z(m, asset, t, clips);
  return t;
}

/// Removes VRMC_springBone and VRM 0.x secondaryAnimation (an optional member of the 0.x schema).
void drop_spring_bones(tinygltf::Model& m) {
  m.extensions.erase("VRMC_springBone");
  for (auto* list : {&m.extensionsUsed, &m.extensionsRequired})
    list->erase(std::remove(list->begin(), list->end(), "VRMC_springBone"), list->end());
  if (auto it = m.extensions.find("VRM"); it != m.extensions.end() && it->second.IsObject()) {
    auto object = it->second.Get<tinygltf::Value::Object>();
    if (object.erase("secondaryAnimation")) it->second = tinygltf::Value(std::move(object));
  }
}

}  // namespace

void write_gltf(const Asset& asset, const std::string& path, const GltfWriteOptions& options) {
  const std::string ext = extension_of(path);
  const bool binary = ext == "gltf"                    ? false
                      : (ext == "glb" || ext == "vrm") ? true
                                                       : options.binary;
  const bool vrm = options.vrm || ext == "vrm";
  std::vector<int> which = options.clips;
  if (which.empty())
    for (size_t i = 0; i < asset.clips.size(); ++i) which.push_back(static_cast<int>(i));

  const int nj = asset.skeleton.joint_count();
  const GltfDocument* doc = asset.gltf.get();
  const bool source_mode = doc && static_cast<int>(doc->model.nodes.size()) == nj &&
                           static_cast<int>(doc->node_to_joint.size()) == nj &&
                           doc->mesh_primitive.size() == asset.meshes.size();

  tinygltf::Model m;
  Builder b(m);
  std::vector<Clip> clips = asset.clips;
  const Target t =
      source_mode ? adapt_source(m, b, asset, *doc, binary, vrm, clips) : build_fresh(m, b, asset);
  write_animations(m, b, clips, which, t, path);
  if (vrm) gltf_detail::write_vrm1(m, asset, t.joint_to_node, path);
  if (!options.spring_bones) drop_spring_bones(m);
  m.asset.version = "2.0";
  if (!source_mode || m.asset.generator.empty()) m.asset.generator = "kinema";
  m.buffers.clear();
  if (!b.bin.empty()) {
    while (b.bin.size() % 4) b.bin.push_back(0);
    tinygltf::Buffer buf;
    buf.data = std::move(b.bin);
    m.buffers.push_back(std::move(buf));
  }

  tinygltf::TinyGLTF writer;
  writer.SetImageWriter(&gltf_detail::write_image_passthrough, nullptr);
  std::ostringstream out;
  if (!writer.WriteGltfSceneToStream(&m, out, !binary, binary))
    throw Error(path, "", "tinygltf failed to serialize the model");
  write_file_atomically(path, out.str());
}

}  // namespace kinema
