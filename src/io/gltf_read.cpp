// glTF 2.0 / GLB / VRM reading through tinygltf (see kinema/io/gltf.h).
//
// tinygltf parses the JSON/GLB container; everything it hands over is validated here before
// use (indices, accessor bounds in gltf_accessor.cpp, finite numbers), so a hostile file gives
// kinema::Error. read_gltf runs one stage per part of the document: parsing, document checks,
// nodes → skeleton, skins, materials and textures (gltf_material.cpp), meshes, animations, then
// the VRM humanoid (vrm.cpp).
// Mesh primitives: each primitive of a glTF mesh becomes one kinema Mesh (name
// "<mesh>" or "<mesh>/<k>" when the mesh has several primitives).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <set>

#include "gltf_accessor.h"
#include "gltf_internal.h"
#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/io/gltf.h"

namespace kinema {
namespace gltf_detail {

std::string pointer(std::string_view array, int index) {
  return "/" + std::string(array) + "/" + std::to_string(index);
}

bool keep_image_bytes(tinygltf::Image* image, int, std::string*, std::string*, int, int,
                      const unsigned char* bytes, int size, void*) {
  // Images stored in a bufferView stay there; data-URI and external images keep their bytes.
  if (image->bufferView < 0 && bytes != nullptr && size > 0)
    image->image.assign(bytes, bytes + size);
  image->width = image->height = -1;
  image->component = -1;
  return true;
}

bool write_image_passthrough(const std::string*, const std::string*, const tinygltf::Image*, bool,
                             std::string*, void*) {
  return false;  // never write image files: the writer puts images in buffers or data URIs
}

}  // namespace gltf_detail

namespace {

using gltf_detail::AccessorReader;
using gltf_detail::pointer;

// ---- the document ---------------------------------------------------------------------------

/// Parses the file's bytes (GLB when `binary`, else JSON) into `model` with tinygltf; external
/// buffers and images are looked up beside `path`. Parse failures become kinema::Error.
void parse_document(const std::string& path, const std::string& bytes, bool binary,
                    tinygltf::Model& model) {
  tinygltf::TinyGLTF loader;
  loader.SetImageLoader(&gltf_detail::keep_image_bytes, nullptr);
  loader.SetImageWriter(&gltf_detail::write_image_passthrough, nullptr);
  std::string err, warn;
  std::string base = path;
  const auto slash = base.find_last_of("/\\");
  base = slash == std::string::npos ? std::string(".") : base.substr(0, slash);
  bool ok = false;
  try {
    if (binary) {
      if (bytes.size() < 20) throw Error(path, "byte 0", "truncated GLB header");
      ok = loader.LoadBinaryFromMemory(&model, &err, &warn,
                                       reinterpret_cast<const unsigned char*>(bytes.data()),
                                       static_cast<unsigned int>(bytes.size()), base);
    } else {
      const size_t first = bytes.find_first_not_of(" \t\r\n\xEF\xBB\xBF");
      if (first == std::string::npos || bytes[first] != '{')
        throw Error(path, "", "not a glTF file (neither GLB magic nor a JSON object)");
      ok = loader.LoadASCIIFromString(&model, &err, &warn, bytes.data(),
                                      static_cast<unsigned int>(bytes.size()), base);
    }
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(path, "", std::string("cannot parse glTF: ") + e.what());
  }
  if (!ok) {
    while (!err.empty() && (err.back() == '\n' || err.back() == '\r')) err.pop_back();
    throw Error(path, "",
                "cannot parse glTF: " + (err.empty() ? std::string("unknown error") : err));
  }
}

/// Refuses a document that requires an extension kinema does not read, or whose buffers did
/// not load.
void check_document(const tinygltf::Model& m, const AccessorReader& r, const std::string& path) {
  for (const auto& ext : m.extensionsRequired)
    if (ext != "KHR_materials_unlit" && ext != "KHR_texture_transform" &&
        ext != "KHR_mesh_quantization" && ext.rfind("VRM", 0) != 0)
      throw Error(path, "/extensionsRequired", "required extension " + ext + " is not supported");
  for (size_t i = 0; i < m.buffers.size(); ++i)
    if (m.buffers[i].data.empty() && !m.bufferViews.empty())
      r.fail(pointer("buffers", static_cast<int>(i)),
             "buffer data missing" + (m.buffers[i].uri.empty()
                                          ? std::string()
                                          : " (cannot read '" + m.buffers[i].uri + "')"));
}

// ---- nodes → skeleton -----------------------------------------------------------------------

Transform node_rest(const tinygltf::Node& node, const AccessorReader& r, int index) {
  const std::string place = pointer("nodes", index);
  Transform t;
  if (!node.matrix.empty()) {
    if (node.matrix.size() != 16) r.fail(place + "/matrix", "matrix must have 16 numbers");
    t = Transform::from_matrix(Mat4::from_column_major(node.matrix.data()));
  } else {
    if (!node.translation.empty()) {
      if (node.translation.size() != 3) r.fail(place + "/translation", "needs 3 numbers");
      t.translation = {node.translation[0], node.translation[1], node.translation[2]};
    }
    if (!node.rotation.empty()) {
      if (node.rotation.size() != 4) r.fail(place + "/rotation", "needs 4 numbers");
      const Quat q{node.rotation[0], node.rotation[1], node.rotation[2], node.rotation[3]};
      if (!is_finite(q) || !(length(q) > 1e-6)) r.fail(place + "/rotation", "invalid quaternion");
      t.rotation = normalize(q);
    }
    if (!node.scale.empty()) {
      if (node.scale.size() != 3) r.fail(place + "/scale", "needs 3 numbers");
      t.scale = {node.scale[0], node.scale[1], node.scale[2]};
    }
  }
  if (!is_finite(t)) r.fail(place, "non-finite transform");
  return t;
}

/// The parent node of every node (kNoParent for roots), from the children lists: a child that
/// does not exist, a node that is its own child or has two parents, and cycles are refused.
std::vector<int> node_parents(const tinygltf::Model& m, const AccessorReader& r) {
  const int node_count = static_cast<int>(m.nodes.size());
  std::vector<int> parent(static_cast<size_t>(node_count), kNoParent);
  for (int i = 0; i < node_count; ++i)
    for (size_t k = 0; k < m.nodes[static_cast<size_t>(i)].children.size(); ++k) {
      const int c = m.nodes[static_cast<size_t>(i)].children[k];
      const std::string place = pointer("nodes", i) + "/children/" + std::to_string(k);
      if (c < 0 || c >= node_count) r.fail(place, "node " + std::to_string(c) + " does not exist");
      if (c == i) r.fail(place, "node is its own child (cycle)");
      if (parent[static_cast<size_t>(c)] != kNoParent)
        r.fail(pointer("nodes", c), "node has two parents (nodes " +
                                        std::to_string(parent[static_cast<size_t>(c)]) + " and " +
                                        std::to_string(i) + ")");
      parent[static_cast<size_t>(c)] = i;
    }
  for (int i = 0; i < node_count; ++i) {  // each node has ≤ 1 parent: a cycle has no root
    int p = i;
    for (int steps = 0; p != kNoParent; ++steps) {
      if (steps > node_count) r.fail(pointer("nodes", i), "node hierarchy has a cycle");
      p = parent[static_cast<size_t>(p)];
    }
  }
  return parent;
}

/// One joint per node, in node order (Skeleton::build sorts them parents-first): unnamed nodes
/// are "node_<i>", a duplicate name gets "_<i>" appended (with a warning).
Skeleton read_skeleton(const tinygltf::Model& m, const AccessorReader& r, const std::string& path,
                       std::vector<std::string>& warnings) {
  const std::vector<int> parent = node_parents(m, r);
  std::vector<Joint> joints(m.nodes.size());
  std::set<std::string> used;
  for (int i = 0; i < static_cast<int>(m.nodes.size()); ++i) {
    const auto& node = m.nodes[static_cast<size_t>(i)];
    std::string name = node.name.empty() ? "node_" + std::to_string(i) : node.name;
    if (used.count(name)) {
      const std::string base = name + "_" + std::to_string(i);
      name = base;
      for (int k = 2; used.count(name); ++k) name = base + "_" + std::to_string(k);
      warnings.push_back("node " + std::to_string(i) + " renamed to '" + name +
                         "' (duplicate name)");
    }
    used.insert(name);
    joints[static_cast<size_t>(i)].name = name;
    joints[static_cast<size_t>(i)].parent = parent[static_cast<size_t>(i)];
    joints[static_cast<size_t>(i)].rest = node_rest(node, r, i);
  }
  return Skeleton::build(std::move(joints), false, path);
}

/// The joint of node `node` (checked to exist; `place` names the reference).
int joint_of(const std::vector<int>& node_to_joint, int node, const AccessorReader& r,
             const std::string& place) {
  if (node < 0 || node >= static_cast<int>(node_to_joint.size()))
    r.fail(place, "node " + std::to_string(node) + " does not exist");
  return node_to_joint[static_cast<size_t>(node)];
}

// ---- skins ----------------------------------------------------------------------------------

/// Every skin: its joints and inverse bind matrices (identity when the file gives none), which
/// also become the skeleton's inverse binds where it has none yet.
void read_skins(const tinygltf::Model& m, const AccessorReader& r,
                const std::vector<int>& node_to_joint, Asset& asset) {
  for (size_t s = 0; s < m.skins.size(); ++s) {
    const auto& gs = m.skins[s];
    const std::string place = pointer("skins", static_cast<int>(s));
    Skin skin;
    skin.name = gs.name;
    if (gs.joints.empty()) r.fail(place + "/joints", "skin has no joints");
    for (size_t k = 0; k < gs.joints.size(); ++k)
      skin.joints.push_back(
          joint_of(node_to_joint, gs.joints[k], r, place + "/joints/" + std::to_string(k)));
    if (gs.skeleton >= 0)
      skin.skeleton_root = joint_of(node_to_joint, gs.skeleton, r, place + "/skeleton");
    if (gs.inverseBindMatrices >= 0) {
      size_t count = 0;
      const auto v = r.accessor(gs.inverseBindMatrices, TINYGLTF_TYPE_MAT4, false, &count);
      if (count < gs.joints.size())
        r.fail(pointer("accessors", gs.inverseBindMatrices),
               "inverseBindMatrices has " + std::to_string(count) + " matrices for " +
                   std::to_string(gs.joints.size()) + " joints");
      for (size_t k = 0; k < gs.joints.size(); ++k)
        skin.inverse_bind.push_back(Mat4::from_column_major(v.data() + 16 * k));
    } else {
      skin.inverse_bind.assign(gs.joints.size(), Mat4::identity());
    }
    for (size_t k = 0; k < skin.joints.size(); ++k)
      if (!asset.skeleton.joint(skin.joints[k]).inverse_bind)
        asset.skeleton.inverse_bind(skin.joints[k]) = skin.inverse_bind[k];
    asset.skins.push_back(std::move(skin));
  }
}

// ---- meshes: one kinema Mesh per primitive --------------------------------------------------

/// The node that instances each glTF mesh (-1: none). A mesh instanced by several nodes is
/// recorded at its first, with a warning. Out-of-range mesh and skin references are refused.
std::vector<int> mesh_nodes(const tinygltf::Model& m, const AccessorReader& r,
                            std::vector<std::string>& warnings) {
  std::vector<int> mesh_node(m.meshes.size(), -1);
  for (int i = 0; i < static_cast<int>(m.nodes.size()); ++i) {
    const auto& node = m.nodes[static_cast<size_t>(i)];
    if (node.mesh >= static_cast<int>(m.meshes.size()))
      r.fail(pointer("nodes", i) + "/mesh",
             "mesh " + std::to_string(node.mesh) + " does not exist");
    if (node.skin >= static_cast<int>(m.skins.size()))
      r.fail(pointer("nodes", i) + "/skin",
             "skin " + std::to_string(node.skin) + " does not exist");
    if (node.mesh >= 0) {
      auto& slot = mesh_node[static_cast<size_t>(node.mesh)];
      if (slot < 0)
        slot = i;
      else
        warnings.push_back("mesh " + std::to_string(node.mesh) +
                           " is instanced by several nodes; only node " + std::to_string(slot) +
                           " is recorded");
    }
  }
  return mesh_node;
}

/// The accessor of a primitive attribute, or -1.
int attribute(const tinygltf::Primitive& prim, const char* name) {
  auto it = prim.attributes.find(name);
  return it == prim.attributes.end() ? -1 : it->second;
}

/// Refuses a vertex attribute whose count differs from the primitive's `n` vertices.
void check_vertex_count(const AccessorReader& r, int accessor, size_t n, const std::string& what) {
  if (static_cast<size_t>(r.accessor_count(accessor)) != n)
    r.fail(pointer("accessors", accessor), what + " count differs from POSITION");
}

/// The VEC3 elements of a vertex attribute as floats (positions, normals, morph deltas).
std::vector<Vec3f> read_vec3f(const AccessorReader& r, int accessor) {
  size_t n = 0;
  const auto v = r.accessor(accessor, TINYGLTF_TYPE_VEC3, false, &n);
  std::vector<Vec3f> out(n);
  for (size_t k = 0; k < n; ++k)
    out[k] = Vec3f{float(v[3 * k]), float(v[3 * k + 1]), float(v[3 * k + 2])};
  return out;
}

/// TEXCOORD_0 or TEXCOORD_1 (`name`) of `n` vertices.
std::vector<std::array<float, 2>> read_uvs(const AccessorReader& r, int accessor, size_t n,
                                           const char* name) {
  check_vertex_count(r, accessor, n, name);
  const auto v = r.accessor(accessor, TINYGLTF_TYPE_VEC2);
  std::vector<std::array<float, 2>> uvs(n);
  for (size_t k = 0; k < n; ++k) uvs[k] = {float(v[2 * k]), float(v[2 * k + 1])};
  return uvs;
}

/// COLOR_0 of `n` vertices as RGBA (RGB gets alpha 1): float, or normalized unsigned byte/short.
std::vector<std::array<float, 4>> read_colours(const tinygltf::Model& m, const AccessorReader& r,
                                               int accessor, size_t n) {
  check_vertex_count(r, accessor, n, "COLOR_0");
  const auto& a = m.accessors[static_cast<size_t>(accessor)];
  if (a.type != TINYGLTF_TYPE_VEC3 && a.type != TINYGLTF_TYPE_VEC4)
    r.fail(pointer("accessors", accessor), "COLOR_0 must be VEC3 or VEC4");
  if (a.componentType != TINYGLTF_COMPONENT_TYPE_FLOAT &&
      a.componentType != TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE &&
      a.componentType != TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT)
    r.fail(pointer("accessors", accessor),
           "COLOR_0 must be float, unsigned byte or unsigned short");
  const size_t comps = a.type == TINYGLTF_TYPE_VEC4 ? 4 : 3;
  const auto v = r.accessor(accessor, a.type, true);
  std::vector<std::array<float, 4>> colours(n);
  for (size_t k = 0; k < n; ++k)
    colours[k] = {float(v[comps * k]), float(v[comps * k + 1]), float(v[comps * k + 2]),
                  comps == 4 ? float(v[comps * k + 3]) : 1.f};
  return colours;
}

/// POSITION (required), NORMAL, TANGENT, TEXCOORD_0, TEXCOORD_1 and COLOR_0 into `mesh`;
/// returns the vertex count.
size_t read_vertices(const tinygltf::Model& m, const tinygltf::Primitive& prim,
                     const AccessorReader& r, const std::string& place, Mesh& mesh) {
  const int pos = attribute(prim, "POSITION");
  if (pos < 0) r.fail(place + "/attributes", "primitive has no POSITION");
  mesh.positions = read_vec3f(r, pos);
  const size_t n = mesh.positions.size();
  if (const int nor = attribute(prim, "NORMAL"); nor >= 0) {
    check_vertex_count(r, nor, n, "NORMAL");
    mesh.normals = read_vec3f(r, nor);
  }
  if (const int tan = attribute(prim, "TANGENT"); tan >= 0) {
    check_vertex_count(r, tan, n, "TANGENT");
    const auto v = r.accessor(tan, TINYGLTF_TYPE_VEC4);
    mesh.tangents.resize(n);
    mesh.tangent_signs.resize(n);
    for (size_t k = 0; k < n; ++k) {
      mesh.tangents[k] = Vec3f{float(v[4 * k]), float(v[4 * k + 1]), float(v[4 * k + 2])};
      mesh.tangent_signs[k] = v[4 * k + 3] < 0 ? -1.0f : 1.0f;
    }
  }
  if (const int uv = attribute(prim, "TEXCOORD_0"); uv >= 0)
    mesh.uvs = read_uvs(r, uv, n, "TEXCOORD_0");
  if (const int uv = attribute(prim, "TEXCOORD_1"); uv >= 0)
    mesh.uvs1 = read_uvs(r, uv, n, "TEXCOORD_1");
  if (const int colour = attribute(prim, "COLOR_0"); colour >= 0)
    mesh.colours = read_colours(m, r, colour, n);
  return n;
}

/// The primitive's triangles as a list in `mesh.indices`: indices of any type (0..n-1 when the
/// primitive has none), strips and fans unrolled.
void read_triangles(const tinygltf::Primitive& prim, int mode, size_t n, const AccessorReader& r,
                    const std::string& place, Mesh& mesh) {
  std::vector<uint32_t> raw;
  if (prim.indices >= 0) {
    const auto v = r.accessor(prim.indices, TINYGLTF_TYPE_SCALAR);
    raw.reserve(v.size());
    for (size_t k = 0; k < v.size(); ++k) {
      if (v[k] < 0 || v[k] >= static_cast<double>(n))
        r.fail(pointer("accessors", prim.indices),
               "index " + std::to_string(static_cast<long long>(v[k])) + " at element " +
                   std::to_string(k) + " is not below the vertex count " + std::to_string(n));
      raw.push_back(static_cast<uint32_t>(v[k]));
    }
  } else {
    raw.resize(n);
    for (size_t k = 0; k < n; ++k) raw[k] = static_cast<uint32_t>(k);
  }
  if (mode == TINYGLTF_MODE_TRIANGLES) {
    if (raw.size() % 3 != 0) r.fail(place, "triangle index count is not a multiple of 3");
    mesh.indices = std::move(raw);
    return;
  }
  for (size_t k = 2; k < raw.size(); ++k) {
    if (mode == TINYGLTF_MODE_TRIANGLE_FAN) {
      mesh.indices.insert(mesh.indices.end(), {raw[0], raw[k - 1], raw[k]});
    } else if (k % 2 == 0) {
      mesh.indices.insert(mesh.indices.end(), {raw[k - 2], raw[k - 1], raw[k]});
    } else {
      mesh.indices.insert(mesh.indices.end(), {raw[k - 1], raw[k - 2], raw[k]});
    }
  }
}

/// JOINTS_0/WEIGHTS_0 and JOINTS_1/WEIGHTS_1 (up to 8 influences) into `mesh`, joints checked
/// against the skin's `skin_joints`, weights renormalized to sum to 1 (a vertex whose weights sum
/// to zero is bound to the skin's first joint, with a warning). Returns true when any vertex's
/// weights had to change.
bool read_skin_weights(const tinygltf::Primitive& prim, size_t n, size_t skin_joints,
                       const AccessorReader& r, const std::string& place, Mesh& mesh,
                       std::vector<std::string>& warnings) {
  const int sets = attribute(prim, "JOINTS_1") >= 0 && attribute(prim, "WEIGHTS_1") >= 0   ? 2
                   : attribute(prim, "JOINTS_0") >= 0 && attribute(prim, "WEIGHTS_0") >= 0 ? 1
                                                                                           : 0;
  if (sets == 0) return false;
  mesh.influences = sets == 2 ? 8 : 4;
  const auto influences = static_cast<size_t>(mesh.influences);
  mesh.joints.assign(n * influences, 0);
  mesh.weights.assign(n * influences, 0.f);
  for (int set = 0; set < sets; ++set) {
    const int ja = attribute(prim, set == 0 ? "JOINTS_0" : "JOINTS_1");
    const int wa = attribute(prim, set == 0 ? "WEIGHTS_0" : "WEIGHTS_1");
    check_vertex_count(r, ja, n, "JOINTS");
    check_vertex_count(r, wa, n, "WEIGHTS");
    const auto jv = r.accessor(ja, TINYGLTF_TYPE_VEC4);
    const auto wv = r.accessor(wa, TINYGLTF_TYPE_VEC4, true);
    for (size_t k = 0; k < n; ++k)
      for (int c = 0; c < 4; ++c) {
        const size_t dst = k * influences + static_cast<size_t>(set * 4 + c);
        const double j = jv[4 * k + static_cast<size_t>(c)];
        const double w = wv[4 * k + static_cast<size_t>(c)];
        if (w < 0)
          r.fail(pointer("accessors", wa), "negative weight at vertex " + std::to_string(k));
        if (w > 0 && (j < 0 || j >= static_cast<double>(skin_joints) || j > 65535))
          r.fail(pointer("accessors", ja), "joint " + std::to_string(static_cast<long long>(j)) +
                                               " at vertex " + std::to_string(k) +
                                               " is outside the skin");
        mesh.joints[dst] = static_cast<uint16_t>(w > 0 ? j : 0);
        mesh.weights[dst] = static_cast<float>(w);
      }
  }
  size_t zero = 0;
  bool renormalized = false;
  for (size_t k = 0; k < n; ++k) {
    float* w = mesh.weights.data() + k * influences;
    double sum = 0;
    for (int c = 0; c < mesh.influences; ++c) sum += w[c];
    if (!(sum > 0)) {
      ++zero;  // unweighted vertex: bind rigidly to the skin's first joint
      w[0] = 1.f;
      continue;
    }
    if (std::abs(sum - 1.0) > 1e-6) renormalized = true;
    for (int c = 0; c < mesh.influences; ++c) w[c] = static_cast<float>(w[c] / sum);
  }
  if (zero > 0)
    warnings.push_back(place + ": " + std::to_string(zero) +
                       " vertices had weights summing to zero (bound to the skin's first joint)");
  return zero > 0 || renormalized;
}

/// The names of a mesh's morph targets (extras.targetNames; "" where there is none).
std::vector<std::string> morph_target_names(const tinygltf::Mesh& gm) {
  std::vector<std::string> names;
  if (gm.extras.IsObject() && gm.extras.Has("targetNames")) {
    const auto& tn = gm.extras.Get("targetNames");
    for (size_t k = 0; k < tn.ArrayLen(); ++k)
      names.push_back(tn.Get(static_cast<int>(k)).IsString()
                          ? tn.Get(static_cast<int>(k)).Get<std::string>()
                          : std::string());
  }
  return names;
}

/// The primitive's morph targets (position deltas, zero when absent, and normal deltas) and the
/// mesh's default weights (zero unless the mesh gives one per target).
void read_morph_targets(const tinygltf::Primitive& prim, const tinygltf::Mesh& gm, size_t n,
                        const AccessorReader& r, Mesh& mesh) {
  const std::vector<std::string> names = morph_target_names(gm);
  for (size_t t = 0; t < prim.targets.size(); ++t) {
    MorphTarget target;
    target.name = t < names.size() && !names[t].empty() ? names[t] : "target_" + std::to_string(t);
    auto find = [&](const char* what) {
      auto it = prim.targets[t].find(what);
      return it == prim.targets[t].end() ? -1 : it->second;
    };
    if (const int a = find("POSITION"); a >= 0) {
      check_vertex_count(r, a, n, "target POSITION");
      target.position_deltas = read_vec3f(r, a);
    } else {
      target.position_deltas.assign(n, Vec3f{0, 0, 0});
    }
    if (const int a = find("NORMAL"); a >= 0) {
      check_vertex_count(r, a, n, "target NORMAL");
      target.normal_deltas = read_vec3f(r, a);
    }
    mesh.morph_targets.push_back(std::move(target));
  }
  mesh.default_weights.assign(mesh.morph_targets.size(), 0.0);
  if (gm.weights.size() == mesh.morph_targets.size())
    for (size_t t = 0; t < gm.weights.size(); ++t) mesh.default_weights[t] = gm.weights[t];
}

/// Every triangle primitive of every mesh as one kinema Mesh (points and lines are skipped with
/// a warning), recorded in `doc` (mesh_primitive, weights_renormalized, skin_fingerprint).
/// Returns the kinema meshes of each glTF mesh, for weights channels.
std::vector<std::vector<int>> read_meshes(const tinygltf::Model& m, const AccessorReader& r,
                                          GltfDocument& doc, Asset& asset) {
  const std::vector<int> mesh_node = mesh_nodes(m, r, asset.source.warnings);
  std::vector<std::vector<int>> mesh_outputs(m.meshes.size());
  for (size_t mi = 0; mi < m.meshes.size(); ++mi) {
    const auto& gm = m.meshes[mi];
    const int node = mesh_node[mi];
    const int gskin = node >= 0 ? m.nodes[static_cast<size_t>(node)].skin : -1;
    const size_t skin_joints = gskin >= 0 ? m.skins[static_cast<size_t>(gskin)].joints.size()
                                          : std::numeric_limits<size_t>::max();
    for (size_t pi = 0; pi < gm.primitives.size(); ++pi) {
      const auto& prim = gm.primitives[pi];
      const std::string place =
          pointer("meshes", static_cast<int>(mi)) + "/primitives/" + std::to_string(pi);
      const int mode = prim.mode < 0 ? TINYGLTF_MODE_TRIANGLES : prim.mode;
      if (mode != TINYGLTF_MODE_TRIANGLES && mode != TINYGLTF_MODE_TRIANGLE_STRIP &&
          mode != TINYGLTF_MODE_TRIANGLE_FAN) {
        asset.source.warnings.push_back(place + ": points/lines primitive skipped");
        continue;
      }
      Mesh mesh;
      mesh.name = gm.name.empty() ? "mesh_" + std::to_string(mi) : gm.name;
      if (gm.primitives.size() > 1) mesh.name += "/" + std::to_string(pi);
      mesh.node = node >= 0 ? doc.node_to_joint[static_cast<size_t>(node)] : -1;
      mesh.skin = gskin;
      if (prim.material < -1 || prim.material >= static_cast<int>(m.materials.size()))
        r.fail(place + "/material",
               "material " + std::to_string(prim.material) + " does not exist");
      mesh.material = prim.material;
      const size_t n = read_vertices(m, prim, r, place, mesh);
      read_triangles(prim, mode, n, r, place, mesh);
      const bool weights_renormalized =
          read_skin_weights(prim, n, skin_joints, r, place, mesh, asset.source.warnings);
      read_morph_targets(prim, gm, n, r, mesh);
      mesh_outputs[mi].push_back(static_cast<int>(asset.meshes.size()));
      doc.mesh_primitive.emplace_back(static_cast<int>(mi), static_cast<int>(pi));
      doc.weights_renormalized.push_back(weights_renormalized ? 1 : 0);
      doc.skin_fingerprint.push_back(skin_fingerprint(mesh));
      asset.meshes.push_back(std::move(mesh));
    }
  }
  return mesh_outputs;
}

// ---- animations -----------------------------------------------------------------------------

Interpolation interpolation_of(const std::string& s, const AccessorReader& r,
                               const std::string& place) {
  if (s == "LINEAR" || s.empty()) return Interpolation::Linear;
  if (s == "STEP") return Interpolation::Step;
  if (s == "CUBICSPLINE") return Interpolation::CubicSpline;
  r.fail(place + "/interpolation", "unknown interpolation '" + s + "'");
}

/// The key times of a sampler's input accessor: at least one, strictly increasing.
std::vector<double> read_key_times(const AccessorReader& r, int input) {
  auto times = r.accessor(input, TINYGLTF_TYPE_SCALAR);
  if (times.empty()) r.fail(pointer("accessors", input), "animation input has no keys");
  for (size_t k = 1; k < times.size(); ++k)
    if (!(times[k] > times[k - 1]))
      r.fail(pointer("accessors", input),
             "key times are not strictly increasing at key " + std::to_string(k));
  return times;
}

size_t values_per_key(Interpolation interp) { return interp == Interpolation::CubicSpline ? 3 : 1; }

/// Translation or scale keys: VEC3 output values for `times`.
Keyframes<Vec3> read_vec3_keys(const AccessorReader& r, int output, Interpolation interp,
                               const std::vector<double>& times) {
  const auto v = r.accessor(output, TINYGLTF_TYPE_VEC3);
  if (v.size() != 3 * times.size() * values_per_key(interp))
    r.fail(pointer("accessors", output), "output count does not match the input keys");
  Keyframes<Vec3> keys;
  keys.interpolation = interp;
  keys.times = times;
  keys.values.resize(times.size() * values_per_key(interp));
  for (size_t k = 0; k < keys.values.size(); ++k)
    keys.values[k] = {v[3 * k], v[3 * k + 1], v[3 * k + 2]};
  return keys;
}

/// Rotation keys: VEC4 output values for `times`, normalized (cubic-spline tangents as they
/// are); a zero quaternion is refused.
Keyframes<Quat> read_rotation_keys(const AccessorReader& r, int output, Interpolation interp,
                                   const std::vector<double>& times) {
  const size_t per_key = values_per_key(interp);
  const auto v = r.accessor(output, TINYGLTF_TYPE_VEC4);
  if (v.size() != 4 * times.size() * per_key)
    r.fail(pointer("accessors", output), "output count does not match the input keys");
  Keyframes<Quat> keys;
  keys.interpolation = interp;
  keys.times = times;
  keys.values.resize(times.size() * per_key);
  for (size_t k = 0; k < keys.values.size(); ++k) {
    Quat q{v[4 * k], v[4 * k + 1], v[4 * k + 2], v[4 * k + 3]};
    const bool tangent = per_key == 3 && k % 3 != 1;
    if (!tangent) {
      if (!(length(q) > 1e-6))
        r.fail(pointer("accessors", output),
               "zero quaternion at key " + std::to_string(k / per_key));
      q = normalize(q);
    }
    keys.values[k] = q;
  }
  return keys;
}

/// What animation channels refer to: nodes become joints, a glTF mesh became kinema meshes.
struct ChannelTargets {
  const std::vector<int>& node_to_joint;
  const std::vector<std::vector<int>>& mesh_outputs;  // glTF mesh → its kinema meshes
  const std::vector<Mesh>& meshes;
};

/// A weights channel of the node `node`: one MorphTrack for each kinema mesh of its glTF mesh.
void read_weights_channel(const tinygltf::Node& node, const tinygltf::AnimationSampler& smp,
                          Interpolation interp, const std::vector<double>& times,
                          const std::string& place, const AccessorReader& r,
                          const ChannelTargets& targets, Clip& clip) {
  const auto v = r.accessor(smp.output, TINYGLTF_TYPE_SCALAR);
  if (node.mesh < 0 || targets.mesh_outputs[static_cast<size_t>(node.mesh)].empty())
    r.fail(place + "/target", "weights channel targets a node without a morphed mesh");
  const std::vector<int>& outputs = targets.mesh_outputs[static_cast<size_t>(node.mesh)];
  const size_t morphs = targets.meshes[static_cast<size_t>(outputs.front())].morph_targets.size();
  const size_t expected = times.size() * values_per_key(interp) * morphs;
  if (morphs == 0 || v.size() != expected)
    r.fail(pointer("accessors", smp.output), "weights output has " + std::to_string(v.size()) +
                                                 " values, expected " + std::to_string(expected));
  for (int mesh : outputs) {
    MorphTrack track;
    track.mesh = mesh;
    track.target_count = static_cast<int>(morphs);
    track.interpolation = interp;
    track.times = times;
    track.values = v;
    clip.morph_tracks.push_back(std::move(track));
  }
}

/// Channel `ci` of animation `ga` into `clip` (channels without a target node, such as
/// KHR_animation_pointer ones, are not modelled and skipped).
void read_channel(const tinygltf::Model& m, const tinygltf::Animation& ga, size_t ci,
                  const std::string& animation_place, const AccessorReader& r,
                  const ChannelTargets& targets, Clip& clip, std::vector<std::string>& warnings) {
  const auto& ch = ga.channels[ci];
  const std::string place = animation_place + "/channels/" + std::to_string(ci);
  if (ch.target_node < 0) return;
  const int joint = joint_of(targets.node_to_joint, ch.target_node, r, place + "/target/node");
  if (ch.sampler < 0 || ch.sampler >= static_cast<int>(ga.samplers.size()))
    r.fail(place + "/sampler", "sampler " + std::to_string(ch.sampler) + " does not exist");
  const auto& smp = ga.samplers[static_cast<size_t>(ch.sampler)];
  const Interpolation interp = interpolation_of(
      smp.interpolation, r, animation_place + "/samplers/" + std::to_string(ch.sampler));
  const std::vector<double> times = read_key_times(r, smp.input);
  JointTrack& track = clip.tracks[static_cast<size_t>(joint)];
  const std::string& path = ch.target_path;
  bool replaced = false;
  if (path == "weights") {
    read_weights_channel(m.nodes[static_cast<size_t>(ch.target_node)], smp, interp, times, place, r,
                         targets, clip);
  } else if (path == "translation" || path == "scale") {
    Keyframes<Vec3>& keys = path == "translation" ? track.translation : track.scale;
    replaced = !keys.empty();
    keys = read_vec3_keys(r, smp.output, interp, times);
  } else if (path == "rotation") {
    replaced = !track.rotation.empty();
    track.rotation = read_rotation_keys(r, smp.output, interp, times);
  } else {
    r.fail(place + "/target/path", "unknown path '" + path + "'");
  }
  if (replaced) warnings.push_back(place + ": duplicate channel replaces an earlier one");
  clip.duration = std::max(clip.duration, times.back());
}

/// Animation `ai` as a clip of `skeleton`: duration the last key, frame rate inferred from the
/// key times (infer_frame_rate), validated.
Clip read_animation(const tinygltf::Model& m, size_t ai, const AccessorReader& r,
                    const ChannelTargets& targets, const Skeleton& skeleton,
                    const std::string& path, std::vector<std::string>& warnings) {
  const auto& ga = m.animations[ai];
  const std::string place = pointer("animations", static_cast<int>(ai));
  Clip clip;
  clip.name = ga.name.empty() ? "animation_" + std::to_string(ai) : ga.name;
  clip.tracks.resize(static_cast<size_t>(skeleton.joint_count()));
  for (size_t ci = 0; ci < ga.channels.size(); ++ci)
    read_channel(m, ga, ci, place, r, targets, clip, warnings);
  clip.sample_rate = infer_frame_rate(clip);
  clip.validate(skeleton.joint_count(), path);
  return clip;
}

}  // namespace

Asset read_gltf(const std::string& path) {
  const std::string bytes = read_file(path);
  const bool binary = bytes.size() >= 4 && std::memcmp(bytes.data(), "glTF", 4) == 0;
  if (bytes.size() > std::numeric_limits<unsigned int>::max())
    throw Error(path, "", "file too large for glTF (over 4 GiB)");
  auto doc = std::make_shared<GltfDocument>();
  parse_document(path, bytes, binary, doc->model);
  const tinygltf::Model& m = doc->model;
  const AccessorReader r(m, path);
  check_document(m, r, path);

  Asset asset;
  asset.source.path = path;
  asset.source.format = binary ? "glb" : "gltf";
  asset.source.generator = m.asset.generator;
  asset.skeleton = read_skeleton(m, r, path, asset.source.warnings);
  doc->node_to_joint = asset.skeleton.build_order();
  read_skins(m, r, doc->node_to_joint, asset);
  gltf_detail::read_materials(m, asset, path);
  const std::vector<std::vector<int>> mesh_outputs = read_meshes(m, r, *doc, asset);
  const ChannelTargets targets{doc->node_to_joint, mesh_outputs, asset.meshes};
  for (size_t ai = 0; ai < m.animations.size(); ++ai)
    asset.clips.push_back(
        read_animation(m, ai, r, targets, asset.skeleton, path, asset.source.warnings));
  gltf_detail::read_vrm(m, doc->node_to_joint, asset, path);
  gltf_detail::read_spring_bones(m, doc->node_to_joint, asset, path);
  asset.gltf = std::move(doc);
  return asset;
}

}  // namespace kinema
