// src/render/render_mesh.cpp — asset meshes → GPU-ready vertex data (8 influences), and the
// capsule skeleton drawn for assets without a mesh.
#include "render_mesh.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>

#include "kinema/character/asset.h"
#include "kinema/core/error.h"
#include "kinema/skeleton/skeleton.h"
#include "kinema/skin/skinning.h"

namespace kinema::render_detail {

std::vector<Vec3f> smooth_normals(const std::vector<Vec3f>& positions,
                                  const std::vector<uint32_t>& indices) {
  std::vector<Vec3f> n(positions.size(), Vec3f{0, 0, 0});
  for (size_t t = 0; t + 2 < indices.size(); t += 3) {
    const Vec3f a = positions[indices[t]], b = positions[indices[t + 1]],
                c = positions[indices[t + 2]];
    const Vec3f face = cross(b - a, c - a);  // length = 2 · area
    for (size_t k = 0; k < 3; ++k) n[indices[t + k]] += face;
  }
  for (Vec3f& v : n) {
    const float len = length(v);
    v = len > 1e-20f ? v * (1.0f / len) : Vec3f{0, 1, 0};
  }
  return n;
}

std::vector<MeshData> meshes_for_asset(const Asset& asset, const std::string& file) {
  std::vector<MeshData> out;
  const int joint_count = asset.skeleton.joint_count();
  for (size_t mi = 0; mi < asset.meshes.size(); ++mi) {
    const Mesh& mesh = asset.meshes[mi];
    const std::string place = "mesh " + (mesh.name.empty() ? std::to_string(mi) : mesh.name);
    const size_t n = mesh.positions.size();
    if (n < 3) continue;
    MeshData d;
    d.name = mesh.name;
    d.source_mesh = int(mi);
    d.positions = mesh.positions;
    if (mesh.indices.empty()) {
      if (n % 3 != 0) continue;
      d.indices.resize(n);
      for (size_t i = 0; i < n; ++i) d.indices[i] = uint32_t(i);
    } else {
      if (mesh.indices.size() % 3 != 0)
        throw Error(file, place, "the index count is not a multiple of 3 (triangles)");
      for (size_t i = 0; i < mesh.indices.size(); ++i)
        if (mesh.indices[i] >= n)
          throw Error(file, place + ", index " + std::to_string(i),
                      "vertex " + std::to_string(mesh.indices[i]) + " does not exist (" +
                          std::to_string(n) + " vertices)");
      d.indices = mesh.indices;
    }
    if (!mesh.normals.empty() && mesh.normals.size() != n)
      throw Error(file, place, "the normal count differs from the vertex count");

    const bool skinned = mesh.skin >= 0 && mesh.influences > 0;
    std::vector<uint16_t> joints;
    std::vector<float> weights;
    int influences = 1;
    if (skinned) {
      if (size_t(mesh.skin) >= asset.skins.size())
        throw Error(file, place, "skin " + std::to_string(mesh.skin) + " does not exist");
      const Skin& skin = asset.skins[size_t(mesh.skin)];
      if (skin.inverse_bind.size() != skin.joints.size())
        throw Error(file, place, "the skin's inverse bind count differs from its joint count");
      for (const int j : skin.joints)
        if (j < 0 || j >= joint_count)
          throw Error(file, place, "skin joint " + std::to_string(j) + " is not a joint");
      d.skin_joints = skin.joints;
      d.inverse_bind = skin.inverse_bind;
      influences = mesh.influences;
      joints = mesh.joints;
      weights = mesh.weights;
    } else {
      if (mesh.node >= joint_count)
        throw Error(file, place, "node " + std::to_string(mesh.node) + " is not a joint");
      if (mesh.node >= 0) {
        d.skin_joints = {mesh.node};
        d.inverse_bind = {Mat4::identity()};
      }
      joints.assign(n, 0);
      weights.assign(n, 1.0f);
    }
    const SkinMeshView view{mesh.positions, mesh.normals, {}, influences, joints, weights};
    validate_skin_mesh(view, std::max<size_t>(1, d.skin_joints.size()), file, d.name);
    if (influences > 8) throw Error(file, place, "more than 8 influences per vertex");
    d.normals = mesh.normals.empty() ? smooth_normals(d.positions, d.indices) : mesh.normals;
    const auto per_vertex = [&](const auto& values, const char* what) {
      if (!values.empty() && values.size() != n)
        throw Error(file, place,
                    std::string("the ") + what + " count differs from the vertex count");
      return !values.empty();
    };
    d.uv0 = per_vertex(mesh.uvs, "TEXCOORD_0") ? mesh.uvs : std::vector<std::array<float, 2>>(n);
    d.uv1 = per_vertex(mesh.uvs1, "TEXCOORD_1") ? mesh.uvs1 : std::vector<std::array<float, 2>>(n);
    d.colours = per_vertex(mesh.colours, "COLOR_0")
                    ? mesh.colours
                    : std::vector<std::array<float, 4>>(n, std::array<float, 4>{1, 1, 1, 1});
    if (mesh.material >= int(asset.materials.size()))
      throw Error(file, place, "material " + std::to_string(mesh.material) + " does not exist");
    d.material = mesh.material;
    d.joints8.assign(n * 8, 0);
    d.weights8.assign(n * 8, 0.0f);
    for (size_t v = 0; v < n; ++v)
      for (int k = 0; k < influences; ++k) {
        d.joints8[v * 8 + size_t(k)] = joints[v * size_t(influences) + size_t(k)];
        d.weights8[v * 8 + size_t(k)] = weights[v * size_t(influences) + size_t(k)];
      }
    out.push_back(std::move(d));
  }
  return out;
}

namespace {

// Appends a capsule from a to b (radius r) bound to palette entry `joint`.
void add_capsule(MeshData& d, const Vec3f& a, const Vec3f& b, float r, uint16_t joint,
                 const CapsuleDetail& detail) {
  const int kAround = std::clamp(detail.sides, 3, 64),
            kCapRings = std::clamp(detail.cap_rings, 1, 32);
  const Vec3f axis_full = b - a;
  const float len = length(axis_full);
  const Vec3f axis = axis_full * (1.0f / len);
  const Vec3f helper = std::abs(axis.y) < 0.9f ? Vec3f{0, 1, 0} : Vec3f{1, 0, 0};
  const Vec3f u = normalize(cross(helper, axis)), w = cross(axis, u);
  const uint32_t base = uint32_t(d.positions.size());
  // Latitude rings from the bottom pole to the top pole; the equator appears twice (both ends
  // of the cylinder).
  int rings = 0;
  for (int half = 0; half < 2; ++half) {
    for (int i = 0; i <= kCapRings; ++i) {
      const float lat = (half == 0 ? -1.0f + float(i) / kCapRings : float(i) / kCapRings) *
                        std::numbers::pi_v<float> / 2;
      const float offset = half == 0 ? 0.0f : len;
      for (int k = 0; k < kAround; ++k) {
        const float lon = 2 * std::numbers::pi_v<float> * float(k) / kAround;
        const Vec3f nrm = u * (std::cos(lat) * std::cos(lon)) + axis * std::sin(lat) +
                          w * (std::cos(lat) * std::sin(lon));
        d.positions.push_back(a + axis * offset + nrm * r);
        d.normals.push_back(nrm);
        for (int e = 0; e < 8; ++e) {
          d.joints8.push_back(e == 0 ? joint : 0);
          d.weights8.push_back(e == 0 ? 1.0f : 0.0f);
        }
      }
      ++rings;
    }
  }
  for (int ring = 0; ring + 1 < rings; ++ring)
    for (int k = 0; k < kAround; ++k) {
      const uint32_t i0 = base + uint32_t(ring * kAround + k);
      const uint32_t i1 = base + uint32_t(ring * kAround + (k + 1) % kAround);
      const uint32_t i2 = i0 + kAround, i3 = i1 + kAround;
      d.indices.insert(d.indices.end(), {i0, i2, i1, i1, i2, i3});
    }
}

}  // namespace

MeshData capsule_mesh(const Asset& asset, const CapsuleDetail& detail) {
  const Skeleton& skeleton = asset.skeleton;
  MeshData d;
  d.name = "capsules";
  const std::vector<Mat4> rest = rest_model_matrices(skeleton);
  const int n = skeleton.joint_count();
  d.skin_joints.resize(size_t(n));
  d.inverse_bind.resize(size_t(n));
  // The character's size from its largest joint tree: helper nodes beside it (a glTF's camera and
  // light nodes) would otherwise make every capsule fat.
  std::vector<int> tree(size_t(n), 0), tree_size(size_t(n), 0);
  for (int j = 0; j < n; ++j) {  // parents first
    const int p = skeleton.parent(j);
    tree[size_t(j)] = p >= 0 ? tree[size_t(p)] : j;
    ++tree_size[size_t(tree[size_t(j)])];
  }
  const int largest =
      n > 0 ? int(std::max_element(tree_size.begin(), tree_size.end()) - tree_size.begin()) : 0;
  Vec3f lo{1e30f, 1e30f, 1e30f}, hi{-1e30f, -1e30f, -1e30f};
  std::vector<Vec3f> at(static_cast<size_t>(n));
  for (int j = 0; j < n; ++j) {
    d.skin_joints[size_t(j)] = j;
    Mat4 inv;
    d.inverse_bind[size_t(j)] = inverse(rest[size_t(j)], inv) ? inv : Mat4::identity();
    at[size_t(j)] = Vec3f(rest[size_t(j)].translation_part());
    if (tree[size_t(j)] != largest) continue;
    for (int c = 0; c < 3; ++c) {
      lo[c] = std::min(lo[c], at[size_t(j)][c]);
      hi[c] = std::max(hi[c], at[size_t(j)][c]);
    }
  }
  if (n == 0) return d;
  const float size = std::max({hi.x - lo.x, hi.y - lo.y, hi.z - lo.z, 0.1f});
  auto add_bone = [&](const Vec3f& a, const Vec3f& b, int joint) {
    const float len = length(b - a);
    if (!(len > std::max(1e-4f, detail.min_bone_fraction) * size) || !std::isfinite(len)) return;
    const float r = std::clamp(0.2f * len, 0.006f * size, 0.025f * size);
    add_capsule(d, a, b, r, uint16_t(joint), detail);
  };
  for (int j = 0; j < n; ++j) {
    const int p = skeleton.parent(j);
    if (p >= 0) add_bone(at[size_t(p)], at[size_t(j)], p);
    if (size_t(j) < asset.bvh_layout.size() && asset.bvh_layout[size_t(j)].has_end_site) {
      const Vec3f tip =
          Vec3f(rest[size_t(j)].transform_point(asset.bvh_layout[size_t(j)].end_site));
      add_bone(at[size_t(j)], tip, j);
    }
  }
  return d;
}

}  // namespace kinema::render_detail
