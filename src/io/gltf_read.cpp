// glTF 2.0 / GLB / VRM reading through tinygltf (see kinema/io/gltf.h).
//
// tinygltf parses the JSON/GLB container; everything it hands over is validated here before
// use (indices, accessor bounds, finite numbers), so a hostile file gives kinema::Error.
// Mesh primitives: each primitive of a glTF mesh becomes one kinema Mesh (name
// "<mesh>" or "<mesh>/<k>" when the mesh has several primitives).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <set>

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

using gltf_detail::pointer;

int component_count(int type) {
  switch (type) {
    case TINYGLTF_TYPE_SCALAR:
      return 1;
    case TINYGLTF_TYPE_VEC2:
      return 2;
    case TINYGLTF_TYPE_VEC3:
      return 3;
    case TINYGLTF_TYPE_VEC4:
      return 4;
    case TINYGLTF_TYPE_MAT2:
      return 4;
    case TINYGLTF_TYPE_MAT3:
      return 9;
    case TINYGLTF_TYPE_MAT4:
      return 16;
    default:
      return 0;
  }
}

int component_size(int component_type) {
  switch (component_type) {
    case TINYGLTF_COMPONENT_TYPE_BYTE:
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE:
      return 1;
    case TINYGLTF_COMPONENT_TYPE_SHORT:
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT:
      return 2;
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT:
    case TINYGLTF_COMPONENT_TYPE_FLOAT:
      return 4;
    default:
      return 0;
  }
}

template <class T>
T load(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

double read_component(const unsigned char* p, int component_type, bool normalized) {
  switch (component_type) {
    case TINYGLTF_COMPONENT_TYPE_BYTE: {
      const double v = load<int8_t>(p);
      return normalized ? std::max(v / 127.0, -1.0) : v;
    }
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE: {
      const double v = load<uint8_t>(p);
      return normalized ? v / 255.0 : v;
    }
    case TINYGLTF_COMPONENT_TYPE_SHORT: {
      const double v = load<int16_t>(p);
      return normalized ? std::max(v / 32767.0, -1.0) : v;
    }
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT: {
      const double v = load<uint16_t>(p);
      return normalized ? v / 65535.0 : v;
    }
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT:
      return load<uint32_t>(p);
    default:
      return load<float>(p);
  }
}

class Reader {
 public:
  Reader(const tinygltf::Model& model, std::string file) : m_(model), file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& place, const std::string& reason) const {
    throw Error(file_, place, reason);
  }

  /// Bytes of a bufferView, checked against its buffer.
  std::pair<const unsigned char*, size_t> view_bytes(int view, const std::string& place) const {
    if (view < 0 || view >= static_cast<int>(m_.bufferViews.size()))
      fail(place, "bufferView " + std::to_string(view) + " does not exist");
    const auto& bv = m_.bufferViews[static_cast<size_t>(view)];
    const std::string bvp = pointer("bufferViews", view);
    if (bv.buffer < 0 || bv.buffer >= static_cast<int>(m_.buffers.size()))
      fail(bvp, "buffer " + std::to_string(bv.buffer) + " does not exist");
    const auto& buf = m_.buffers[static_cast<size_t>(bv.buffer)];
    if (buf.data.empty())
      fail(pointer("buffers", bv.buffer),
           "buffer has no data (missing or unreadable file" +
               (buf.uri.empty() ? std::string() : " '" + buf.uri + "'") + ")");
    if (bv.byteOffset > buf.data.size() || bv.byteLength > buf.data.size() - bv.byteOffset)
      fail(bvp, "byteOffset " + std::to_string(bv.byteOffset) + " + byteLength " +
                    std::to_string(bv.byteLength) + " exceeds buffer size " +
                    std::to_string(buf.data.size()));
    return {buf.data.data() + bv.byteOffset, bv.byteLength};
  }

  /// Reads accessor `index` as doubles (count × components), de-normalizing integer data when
  /// the accessor says `normalized` or when `force_normalize` (weights, colours). Applies sparse
  /// substitution. Checks bounds and, for floats, finiteness.
  std::vector<double> accessor(int index, int expected_type, bool force_normalize = false,
                               size_t* count_out = nullptr) const {
    const std::string place = pointer("accessors", index);
    if (index < 0 || index >= static_cast<int>(m_.accessors.size()))
      fail(place, "accessor does not exist");
    const auto& a = m_.accessors[static_cast<size_t>(index)];
    const int comps = component_count(a.type);
    const int csize = component_size(a.componentType);
    if (comps == 0) fail(place, "unknown accessor type " + std::to_string(a.type));
    if (csize == 0) fail(place, "unknown componentType " + std::to_string(a.componentType));
    if (expected_type >= 0 && a.type != expected_type)
      fail(place, "accessor type " + std::to_string(a.type) + " where " +
                      std::to_string(expected_type) + " is required");
    const size_t elem = static_cast<size_t>(comps) * static_cast<size_t>(csize);
    // No real file needs more than 2^28 elements; the byte check below bounds the rest.
    if (a.count > (size_t{1} << 28)) fail(place, "absurd count " + std::to_string(a.count));
    const bool normalized = a.normalized || force_normalize;
    std::vector<double> out;
    if (a.bufferView >= 0) {
      auto [bytes, length] = view_bytes(a.bufferView, place);
      const auto& bv = m_.bufferViews[static_cast<size_t>(a.bufferView)];
      const size_t stride = bv.byteStride != 0 ? bv.byteStride : elem;
      if (stride < elem) fail(place, "byteStride smaller than the element size");
      if (a.count > 0) {
        const size_t need = a.byteOffset + stride * (a.count - 1) + elem;
        if (a.byteOffset > length || need > length || need < a.byteOffset)
          fail(place, "count " + std::to_string(a.count) + " at byteOffset " +
                          std::to_string(a.byteOffset) + " needs " + std::to_string(need) +
                          " bytes but bufferView " + std::to_string(a.bufferView) + " has " +
                          std::to_string(length));
      }
      out.resize(a.count * static_cast<size_t>(comps));
      for (size_t i = 0; i < a.count; ++i) {
        const unsigned char* p = bytes + a.byteOffset + stride * i;
        for (int c = 0; c < comps; ++c)
          out[i * static_cast<size_t>(comps) + static_cast<size_t>(c)] =
              read_component(p + static_cast<size_t>(c * csize), a.componentType, normalized);
      }
    } else {
      if (!a.sparse.isSparse) fail(place, "accessor has neither bufferView nor sparse data");
      out.assign(a.count * static_cast<size_t>(comps), 0.0);
    }
    if (a.sparse.isSparse) apply_sparse(a, place, comps, csize, normalized, out);
    if (a.componentType == TINYGLTF_COMPONENT_TYPE_FLOAT)
      for (size_t i = 0; i < out.size(); ++i)
        if (!std::isfinite(out[i]))
          fail(place, "non-finite value (NaN or Inf) at element " +
                          std::to_string(i / static_cast<size_t>(comps)));
    if (count_out) *count_out = a.count;
    return out;
  }

  void apply_sparse(const tinygltf::Accessor& a, const std::string& place, int comps, int csize,
                    bool normalized, std::vector<double>& out) const {
    const std::string sp = place + "/sparse";
    const size_t n = static_cast<size_t>(std::max(a.sparse.count, 0));
    if (n > a.count) fail(sp, "sparse count exceeds the accessor count");
    const int isize = component_size(a.sparse.indices.componentType);
    if (isize == 0 || a.sparse.indices.componentType == TINYGLTF_COMPONENT_TYPE_BYTE ||
        a.sparse.indices.componentType == TINYGLTF_COMPONENT_TYPE_SHORT ||
        a.sparse.indices.componentType == TINYGLTF_COMPONENT_TYPE_FLOAT)
      fail(sp + "/indices", "invalid componentType");
    auto [ib, il] = view_bytes(a.sparse.indices.bufferView, sp + "/indices");
    auto [vb, vl] = view_bytes(a.sparse.values.bufferView, sp + "/values");
    const size_t ioff = static_cast<size_t>(std::max(a.sparse.indices.byteOffset, 0));
    const size_t voff = static_cast<size_t>(std::max(a.sparse.values.byteOffset, 0));
    const size_t elem = static_cast<size_t>(comps * csize);
    if (ioff > il || n * static_cast<size_t>(isize) > il - ioff)
      fail(sp + "/indices", "indices exceed their bufferView");
    if (voff > vl || n * elem > vl - voff) fail(sp + "/values", "values exceed their bufferView");
    for (size_t k = 0; k < n; ++k) {
      const size_t target = static_cast<size_t>(read_component(
          ib + ioff + k * static_cast<size_t>(isize), a.sparse.indices.componentType, false));
      if (target >= a.count) fail(sp + "/indices", "index " + std::to_string(target) + " >= count");
      for (int c = 0; c < comps; ++c)
        out[target * static_cast<size_t>(comps) + static_cast<size_t>(c)] = read_component(
            vb + voff + k * elem + static_cast<size_t>(c * csize), a.componentType, normalized);
    }
  }

  int accessor_count(int index) const {
    if (index < 0 || index >= static_cast<int>(m_.accessors.size()))
      fail(pointer("accessors", index), "accessor does not exist");
    return static_cast<int>(m_.accessors[static_cast<size_t>(index)].count);
  }

 private:
  const tinygltf::Model& m_;
  std::string file_;
};

bool has_prefix(const std::vector<unsigned char>& bytes, const char* magic) {
  return bytes.size() >= 4 && std::memcmp(bytes.data(), magic, 4) == 0;
}

Transform node_rest(const tinygltf::Node& node, const Reader& r, int index) {
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

Interpolation interpolation_of(const std::string& s, const Reader& r, const std::string& place) {
  if (s == "LINEAR" || s.empty()) return Interpolation::Linear;
  if (s == "STEP") return Interpolation::Step;
  if (s == "CUBICSPLINE") return Interpolation::CubicSpline;
  r.fail(place + "/interpolation", "unknown interpolation '" + s + "'");
}

}  // namespace

Asset read_gltf(const std::string& path) {
  const std::string bytes_str = read_file(path);
  const std::vector<unsigned char> bytes(bytes_str.begin(), bytes_str.end());
  const bool binary = has_prefix(bytes, "glTF");
  if (bytes.size() > std::numeric_limits<unsigned int>::max())
    throw Error(path, "", "file too large for glTF (over 4 GiB)");

  auto doc = std::make_shared<GltfDocument>();
  tinygltf::Model& m = doc->model;
  {
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
        ok = loader.LoadBinaryFromMemory(&m, &err, &warn, bytes.data(),
                                         static_cast<unsigned int>(bytes.size()), base);
      } else {
        const size_t first = bytes_str.find_first_not_of(" \t\r\n\xEF\xBB\xBF");
        if (first == std::string::npos || bytes_str[first] != '{')
          throw Error(path, "", "not a glTF file (neither GLB magic nor a JSON object)");
        ok = loader.LoadASCIIFromString(&m, &err, &warn, bytes_str.data(),
                                        static_cast<unsigned int>(bytes_str.size()), base);
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
  Reader r(m, path);
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

  Asset asset;
  asset.source.path = path;
  asset.source.format = binary ? "glb" : "gltf";
  asset.source.generator = m.asset.generator;

  // ---- nodes → joints ---------------------------------------------------------------------
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
  std::vector<Joint> joints(static_cast<size_t>(node_count));
  std::set<std::string> used;
  for (int i = 0; i < node_count; ++i) {
    const auto& node = m.nodes[static_cast<size_t>(i)];
    std::string name = node.name.empty() ? "node_" + std::to_string(i) : node.name;
    if (used.count(name)) {
      const std::string base = name + "_" + std::to_string(i);
      name = base;
      for (int k = 2; used.count(name); ++k) name = base + "_" + std::to_string(k);
      asset.source.warnings.push_back("node " + std::to_string(i) + " renamed to '" + name +
                                      "' (duplicate name)");
    }
    used.insert(name);
    joints[static_cast<size_t>(i)].name = name;
    joints[static_cast<size_t>(i)].parent = parent[static_cast<size_t>(i)];
    joints[static_cast<size_t>(i)].rest = node_rest(node, r, i);
  }
  asset.skeleton = Skeleton::build(std::move(joints), false, path);
  doc->node_to_joint = asset.skeleton.build_order();
  const auto& n2j = doc->node_to_joint;
  auto joint_of = [&](int node, const std::string& place) {
    if (node < 0 || node >= node_count)
      r.fail(place, "node " + std::to_string(node) + " does not exist");
    return n2j[static_cast<size_t>(node)];
  };

  // ---- skins ----------------------------------------------------------------------------------
  for (size_t s = 0; s < m.skins.size(); ++s) {
    const auto& gs = m.skins[s];
    const std::string place = pointer("skins", static_cast<int>(s));
    Skin skin;
    skin.name = gs.name;
    if (gs.joints.empty()) r.fail(place + "/joints", "skin has no joints");
    for (size_t k = 0; k < gs.joints.size(); ++k)
      skin.joints.push_back(joint_of(gs.joints[k], place + "/joints/" + std::to_string(k)));
    if (gs.skeleton >= 0) skin.skeleton_root = joint_of(gs.skeleton, place + "/skeleton");
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

  // ---- meshes: one kinema Mesh per primitive --------------------------------------------------
  std::vector<int> mesh_node(m.meshes.size(), -1);
  for (int i = 0; i < node_count; ++i) {
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
        asset.source.warnings.push_back("mesh " + std::to_string(node.mesh) +
                                        " is instanced by several nodes; only node " +
                                        std::to_string(slot) + " is recorded");
    }
  }
  std::vector<std::vector<int>> mesh_outputs(m.meshes.size());  // glTF mesh → kinema meshes
  for (size_t mi = 0; mi < m.meshes.size(); ++mi) {
    const auto& gm = m.meshes[mi];
    const std::string mplace = pointer("meshes", static_cast<int>(mi));
    const int node = mesh_node[mi];
    const int gskin = node >= 0 ? m.nodes[static_cast<size_t>(node)].skin : -1;
    std::vector<std::string> target_names;
    if (gm.extras.IsObject() && gm.extras.Has("targetNames")) {
      const auto& tn = gm.extras.Get("targetNames");
      for (size_t k = 0; k < tn.ArrayLen(); ++k)
        target_names.push_back(tn.Get(static_cast<int>(k)).IsString()
                                   ? tn.Get(static_cast<int>(k)).Get<std::string>()
                                   : std::string());
    }
    for (size_t pi = 0; pi < gm.primitives.size(); ++pi) {
      const auto& prim = gm.primitives[pi];
      const std::string pplace = mplace + "/primitives/" + std::to_string(pi);
      const int mode = prim.mode < 0 ? TINYGLTF_MODE_TRIANGLES : prim.mode;
      if (mode != TINYGLTF_MODE_TRIANGLES && mode != TINYGLTF_MODE_TRIANGLE_STRIP &&
          mode != TINYGLTF_MODE_TRIANGLE_FAN) {
        asset.source.warnings.push_back(pplace + ": points/lines primitive skipped");
        continue;
      }
      Mesh mesh;
      bool weights_renormalized = false;
      mesh.name = gm.name.empty() ? "mesh_" + std::to_string(mi) : gm.name;
      if (gm.primitives.size() > 1) mesh.name += "/" + std::to_string(pi);
      mesh.node = node >= 0 ? n2j[static_cast<size_t>(node)] : -1;
      mesh.skin = gskin;
      auto attr = [&](const char* name) {
        auto it = prim.attributes.find(name);
        return it == prim.attributes.end() ? -1 : it->second;
      };
      const int pos = attr("POSITION");
      if (pos < 0) r.fail(pplace + "/attributes", "primitive has no POSITION");
      size_t n = 0;
      {
        const auto v = r.accessor(pos, TINYGLTF_TYPE_VEC3, false, &n);
        mesh.positions.resize(n);
        for (size_t k = 0; k < n; ++k)
          mesh.positions[k] = Vec3f{float(v[3 * k]), float(v[3 * k + 1]), float(v[3 * k + 2])};
      }
      auto same_count = [&](int acc, const char* what) {
        if (static_cast<size_t>(r.accessor_count(acc)) != n)
          r.fail(pointer("accessors", acc), std::string(what) + " count differs from POSITION");
      };
      if (const int nor = attr("NORMAL"); nor >= 0) {
        same_count(nor, "NORMAL");
        const auto v = r.accessor(nor, TINYGLTF_TYPE_VEC3);
        mesh.normals.resize(n);
        for (size_t k = 0; k < n; ++k)
          mesh.normals[k] = Vec3f{float(v[3 * k]), float(v[3 * k + 1]), float(v[3 * k + 2])};
      }
      if (const int tan = attr("TANGENT"); tan >= 0) {
        same_count(tan, "TANGENT");
        const auto v = r.accessor(tan, TINYGLTF_TYPE_VEC4);
        mesh.tangents.resize(n);
        mesh.tangent_signs.resize(n);
        for (size_t k = 0; k < n; ++k) {
          mesh.tangents[k] = Vec3f{float(v[4 * k]), float(v[4 * k + 1]), float(v[4 * k + 2])};
          mesh.tangent_signs[k] = v[4 * k + 3] < 0 ? -1.0f : 1.0f;
        }
      }
      if (const int uv = attr("TEXCOORD_0"); uv >= 0) {
        same_count(uv, "TEXCOORD_0");
        const auto v = r.accessor(uv, TINYGLTF_TYPE_VEC2);
        mesh.uvs.resize(n);
        for (size_t k = 0; k < n; ++k) mesh.uvs[k] = {float(v[2 * k]), float(v[2 * k + 1])};
      }
      // Indices (any index type); non-indexed primitives get 0..n-1. Strips/fans → lists.
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
        if (raw.size() % 3 != 0) r.fail(pplace, "triangle index count is not a multiple of 3");
        mesh.indices = std::move(raw);
      } else {
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
      // Skinning: JOINTS_0/WEIGHTS_0 and JOINTS_1/WEIGHTS_1 (up to 8 influences).
      const int sets = attr("JOINTS_1") >= 0 && attr("WEIGHTS_1") >= 0   ? 2
                       : attr("JOINTS_0") >= 0 && attr("WEIGHTS_0") >= 0 ? 1
                                                                         : 0;
      if (sets > 0) {
        mesh.influences = sets == 2 ? 8 : 4;
        mesh.joints.assign(n * static_cast<size_t>(mesh.influences), 0);
        mesh.weights.assign(n * static_cast<size_t>(mesh.influences), 0.f);
        const size_t skin_joints = gskin >= 0 ? m.skins[static_cast<size_t>(gskin)].joints.size()
                                              : std::numeric_limits<size_t>::max();
        for (int set = 0; set < sets; ++set) {
          const int ja = attr(set == 0 ? "JOINTS_0" : "JOINTS_1");
          const int wa = attr(set == 0 ? "WEIGHTS_0" : "WEIGHTS_1");
          same_count(ja, "JOINTS");
          same_count(wa, "WEIGHTS");
          const auto jv = r.accessor(ja, TINYGLTF_TYPE_VEC4);
          const auto wv = r.accessor(wa, TINYGLTF_TYPE_VEC4, true);
          for (size_t k = 0; k < n; ++k)
            for (int c = 0; c < 4; ++c) {
              const size_t dst =
                  k * static_cast<size_t>(mesh.influences) + static_cast<size_t>(set * 4 + c);
              const double j = jv[4 * k + static_cast<size_t>(c)];
              const double w = wv[4 * k + static_cast<size_t>(c)];
              if (w < 0)
                r.fail(pointer("accessors", wa), "negative weight at vertex " + std::to_string(k));
              if (w > 0 && (j < 0 || j >= static_cast<double>(skin_joints) || j > 65535))
                r.fail(pointer("accessors", ja),
                       "joint " + std::to_string(static_cast<long long>(j)) + " at vertex " +
                           std::to_string(k) + " is outside the skin");
              mesh.joints[dst] = static_cast<uint16_t>(w > 0 ? j : 0);
              mesh.weights[dst] = static_cast<float>(w);
            }
        }
        size_t zero = 0;
        bool renormalized = false;
        for (size_t k = 0; k < n; ++k) {
          float* w = mesh.weights.data() + k * static_cast<size_t>(mesh.influences);
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
        if (zero > 0 || renormalized) weights_renormalized = true;
        if (zero > 0)
          asset.source.warnings.push_back(pplace + ": " + std::to_string(zero) +
                                          " vertices had weights summing to zero (bound to "
                                          "the skin's first joint)");
      }
      // Morph targets.
      for (size_t t = 0; t < prim.targets.size(); ++t) {
        MorphTarget target;
        target.name = t < target_names.size() && !target_names[t].empty()
                          ? target_names[t]
                          : "target_" + std::to_string(t);
        auto find = [&](const char* what) {
          auto it = prim.targets[t].find(what);
          return it == prim.targets[t].end() ? -1 : it->second;
        };
        auto read3 = [&](int acc, const char* what, std::vector<Vec3f>& out) {
          same_count(acc, what);
          const auto v = r.accessor(acc, TINYGLTF_TYPE_VEC3);
          out.resize(n);
          for (size_t k = 0; k < n; ++k)
            out[k] = Vec3f{float(v[3 * k]), float(v[3 * k + 1]), float(v[3 * k + 2])};
        };
        if (const int a = find("POSITION"); a >= 0)
          read3(a, "target POSITION", target.position_deltas);
        else
          target.position_deltas.assign(n, Vec3f{0, 0, 0});
        if (const int a = find("NORMAL"); a >= 0) read3(a, "target NORMAL", target.normal_deltas);
        mesh.morph_targets.push_back(std::move(target));
      }
      mesh.default_weights.assign(mesh.morph_targets.size(), 0.0);
      if (gm.weights.size() == mesh.morph_targets.size())
        for (size_t t = 0; t < gm.weights.size(); ++t) mesh.default_weights[t] = gm.weights[t];
      mesh_outputs[mi].push_back(static_cast<int>(asset.meshes.size()));
      doc->mesh_primitive.emplace_back(static_cast<int>(mi), static_cast<int>(pi));
      doc->weights_renormalized.push_back(weights_renormalized ? 1 : 0);
      asset.meshes.push_back(std::move(mesh));
    }
  }

  // ---- animations -------------------------------------------------------------------------
  for (size_t ai = 0; ai < m.animations.size(); ++ai) {
    const auto& ga = m.animations[ai];
    const std::string aplace = pointer("animations", static_cast<int>(ai));
    Clip clip;
    clip.name = ga.name.empty() ? "animation_" + std::to_string(ai) : ga.name;
    clip.tracks.resize(static_cast<size_t>(asset.skeleton.joint_count()));
    for (size_t ci = 0; ci < ga.channels.size(); ++ci) {
      const auto& ch = ga.channels[ci];
      const std::string cplace = aplace + "/channels/" + std::to_string(ci);
      if (ch.target_node < 0) continue;  // e.g. KHR_animation_pointer targets: not modelled
      const int joint = joint_of(ch.target_node, cplace + "/target/node");
      if (ch.sampler < 0 || ch.sampler >= static_cast<int>(ga.samplers.size()))
        r.fail(cplace + "/sampler", "sampler " + std::to_string(ch.sampler) + " does not exist");
      const auto& smp = ga.samplers[static_cast<size_t>(ch.sampler)];
      const std::string splace = aplace + "/samplers/" + std::to_string(ch.sampler);
      const Interpolation interp = interpolation_of(smp.interpolation, r, splace);
      const auto times = r.accessor(smp.input, TINYGLTF_TYPE_SCALAR);
      if (times.empty()) r.fail(pointer("accessors", smp.input), "animation input has no keys");
      for (size_t k = 1; k < times.size(); ++k)
        if (!(times[k] > times[k - 1]))
          r.fail(pointer("accessors", smp.input),
                 "key times are not strictly increasing at key " + std::to_string(k));
      const size_t keys = times.size();
      const size_t per_key = interp == Interpolation::CubicSpline ? 3 : 1;
      const auto& path = ch.target_path;
      if (path == "weights") {
        const auto v = r.accessor(smp.output, TINYGLTF_TYPE_SCALAR);
        const auto& node = m.nodes[static_cast<size_t>(ch.target_node)];
        if (node.mesh < 0 || mesh_outputs[static_cast<size_t>(node.mesh)].empty())
          r.fail(cplace + "/target", "weights channel targets a node without a morphed mesh");
        const int first = mesh_outputs[static_cast<size_t>(node.mesh)].front();
        const size_t targets = asset.meshes[static_cast<size_t>(first)].morph_targets.size();
        if (targets == 0 || v.size() != keys * per_key * targets)
          r.fail(pointer("accessors", smp.output),
                 "weights output has " + std::to_string(v.size()) + " values, expected " +
                     std::to_string(keys * per_key * targets));
        for (int km : mesh_outputs[static_cast<size_t>(node.mesh)]) {
          MorphTrack mt;
          mt.mesh = km;
          mt.target_count = static_cast<int>(targets);
          mt.interpolation = interp;
          mt.times = times;
          mt.values = v;
          clip.morph_tracks.push_back(std::move(mt));
        }
      } else if (path == "translation" || path == "scale") {
        const auto v = r.accessor(smp.output, TINYGLTF_TYPE_VEC3);
        if (v.size() != 3 * keys * per_key)
          r.fail(pointer("accessors", smp.output), "output count does not match the input keys");
        auto& kf = path == "translation" ? clip.tracks[static_cast<size_t>(joint)].translation
                                         : clip.tracks[static_cast<size_t>(joint)].scale;
        if (!kf.empty())
          asset.source.warnings.push_back(cplace + ": duplicate channel replaces an earlier one");
        kf.interpolation = interp;
        kf.times = times;
        kf.values.resize(keys * per_key);
        for (size_t k = 0; k < kf.values.size(); ++k)
          kf.values[k] = {v[3 * k], v[3 * k + 1], v[3 * k + 2]};
      } else if (path == "rotation") {
        const auto v = r.accessor(smp.output, TINYGLTF_TYPE_VEC4);
        if (v.size() != 4 * keys * per_key)
          r.fail(pointer("accessors", smp.output), "output count does not match the input keys");
        auto& kf = clip.tracks[static_cast<size_t>(joint)].rotation;
        if (!kf.empty())
          asset.source.warnings.push_back(cplace + ": duplicate channel replaces an earlier one");
        kf.interpolation = interp;
        kf.times = times;
        kf.values.resize(keys * per_key);
        for (size_t k = 0; k < kf.values.size(); ++k) {
          Quat q{v[4 * k], v[4 * k + 1], v[4 * k + 2], v[4 * k + 3]};
          const bool tangent = per_key == 3 && k % 3 != 1;
          if (!tangent) {
            if (!(length(q) > 1e-6))
              r.fail(pointer("accessors", smp.output),
                     "zero quaternion at key " + std::to_string(k / per_key));
            q = normalize(q);
          }
          kf.values[k] = q;
        }
      } else {
        r.fail(cplace + "/target/path", "unknown path '" + path + "'");
      }
      clip.duration = std::max(clip.duration, times.back());
    }
    clip.sample_rate = infer_frame_rate(clip);
    clip.validate(asset.skeleton.joint_count(), path);
    asset.clips.push_back(std::move(clip));
  }

  gltf_detail::read_vrm(m, n2j, asset, path);
  asset.gltf = std::move(doc);
  return asset;
}

}  // namespace kinema
