// The entry points of the SIMD and multi-threaded paths, and SkinMesh (vertices grouped by
// influence count).
#include <algorithm>
#include <array>
#include <string>

#include "kinema/core/error.h"
#include "kinema/skin/skinning.h"
#include "skinning_kernels.h"

namespace kinema {

using skin_detail::DqsKernelPalette;
using skin_detail::KernelGroup;
using skin_detail::KernelMesh;
using skin_detail::KernelOut;

namespace {

KernelOut kernel_out(const SkinOutputs& out) {
  return {out.positions.empty() ? nullptr : out.positions.data(),
          out.normals.empty() ? nullptr : out.normals.data(),
          out.tangents.empty() ? nullptr : out.tangents.data()};
}

// A view as one group; `group` must outlive the returned mesh.
KernelMesh kernel_mesh(const SkinMeshView& mesh, const SkinOutputs& out, KernelGroup& group) {
  group = {mesh.influences, 0, mesh.vertex_count(), 0};
  KernelMesh k;
  k.positions = mesh.positions.data();
  k.normals = out.normals.empty() ? nullptr : mesh.normals.data();
  k.tangents = out.tangents.empty() ? nullptr : mesh.tangents.data();
  k.joints = mesh.joints.data();
  k.weights = mesh.weights.data();
  k.groups = {&group, 1};
  k.vertex_count = mesh.vertex_count();
  return k;
}

bool dqs_palette_ok(const DqsPaletteView& palette, size_t vertices,
                    std::span<const float> dqs_amount, std::span<const Affine3x4f> lbs_palette) {
  const size_t joints = palette.dual_quats.size();
  if (!palette.prescale.empty() && palette.prescale.size() != joints) return false;
  if (!dqs_amount.empty() && (dqs_amount.size() != vertices || lbs_palette.size() != joints))
    return false;
  return true;
}

DqsKernelPalette kernel_dqs(const DqsPaletteView& palette, std::span<const float> dqs_amount,
                            std::span<const Affine3x4f> lbs_palette) {
  return {palette.dual_quats.data(), palette.prescale.empty() ? nullptr : palette.prescale.data(),
          dqs_amount.empty() ? nullptr : dqs_amount.data(),
          dqs_amount.empty() ? nullptr : lbs_palette.data()};
}

bool lbs_view(const SkinMeshView& mesh, std::span<const Affine3x4f> palette, const SkinOutputs& out,
              bool parallel, size_t grain, LbsNormals normals) {
  if (!skin_detail::sizes_ok(mesh, out) || !skin_detail::joints_in_range(mesh, palette.size()))
    return false;
  if (mesh.vertex_count() == 0) return true;
  KernelGroup group;
  KernelMesh k = kernel_mesh(mesh, out, group);
  k.palette_size = palette.size();
  k.blended_matrix_normals = normals == LbsNormals::blended_matrix;
  if (parallel)
    skin_detail::lbs_parallel(k, palette.data(), kernel_out(out), grain);
  else
    skin_detail::lbs_range(k, palette.data(), kernel_out(out), 0, mesh.vertex_count());
  return true;
}

bool dqs_view(const SkinMeshView& mesh, const DqsPaletteView& palette, const SkinOutputs& out,
              std::span<const float> dqs_amount, std::span<const Affine3x4f> lbs_palette,
              bool parallel, size_t grain) {
  if (!skin_detail::sizes_ok(mesh, out) ||
      !skin_detail::joints_in_range(mesh, palette.dual_quats.size()) ||
      !dqs_palette_ok(palette, mesh.vertex_count(), dqs_amount, lbs_palette))
    return false;
  if (mesh.vertex_count() == 0) return true;
  KernelGroup group;
  KernelMesh k = kernel_mesh(mesh, out, group);
  k.palette_size = palette.dual_quats.size();
  const DqsKernelPalette p = kernel_dqs(palette, dqs_amount, lbs_palette);
  if (parallel)
    skin_detail::dqs_parallel(k, p, kernel_out(out), grain);
  else
    skin_detail::dqs_range(k, p, kernel_out(out), 0, mesh.vertex_count());
  return true;
}

// A SkinMesh as kernel arrays; the groups are copied into `groups` (at most 8).
KernelMesh kernel_mesh(const SkinMesh& mesh, const SkinOutputs& out,
                       std::array<KernelGroup, 8>& groups) {
  size_t count = 0;
  for (const SkinMesh::Group& g : mesh.groups)
    groups[count++] = {g.influences, g.begin, g.begin + g.count, g.pair_begin};
  KernelMesh k;
  k.positions = mesh.positions.data();
  k.normals = out.normals.empty() ? nullptr : mesh.normals.data();
  k.tangents = out.tangents.empty() ? nullptr : mesh.tangents.data();
  k.joints = mesh.joints.data();
  k.weights = mesh.weights.data();
  k.order = mesh.output_order == SkinOutputOrder::stored ? nullptr : mesh.order.data();
  k.groups = {groups.data(), count};
  k.vertex_count = mesh.vertex_count();
  k.blended_matrix_normals = mesh.lbs_normals == LbsNormals::blended_matrix;
  const size_t planes = 3 * mesh.vertex_count();
  if (mesh.planar_positions.size() == planes) k.planar_positions = mesh.planar_positions.data();
  if (mesh.planar_normals.size() == planes && k.normals)
    k.planar_normals = mesh.planar_normals.data();
  if (mesh.planar_tangents.size() == planes && k.tangents)
    k.planar_tangents = mesh.planar_tangents.data();
  k.positive_weights = true;  // make_skin_mesh keeps only pairs with weight > 0
  k.palette_size = mesh.palette_size;
  if (mesh.dqs_links_built) {
    k.dqs_links = mesh.dqs_links.data();
    k.dqs_tree_links = mesh.dqs_tree_links;
    k.dqs_link_count = mesh.dqs_links.size();
    k.has_dqs_links = true;
  }
  return k;
}

bool sizes_ok(const SkinMesh& mesh, const SkinOutputs& out) {
  const size_t n = mesh.vertex_count();
  if (!out.positions.empty() && out.positions.size() != n) return false;
  if (!out.normals.empty() && (out.normals.size() != n || mesh.normals.empty())) return false;
  if (!out.tangents.empty() && (out.tangents.size() != n || mesh.tangents.empty())) return false;
  return mesh.groups.size() <= 8;
}

// The scalar reference on a SkinMesh: its stored arrays as a 1-group view per group, outputs
// gathered into place through `order` one vertex at a time.
template <class Skin>
void scalar_groups(const SkinMesh& mesh, const SkinOutputs& out, Skin&& skin) {
  for (const SkinMesh::Group& g : mesh.groups) {
    for (size_t v = g.begin; v < g.begin + g.count; ++v) {
      const size_t pair = g.pair_begin + (v - g.begin) * size_t(g.influences);
      const SkinMeshView one{
          {&mesh.positions[v], 1},
          out.normals.empty() ? std::span<const Vec3f>{} : std::span{&mesh.normals[v], 1},
          out.tangents.empty() ? std::span<const Vec3f>{} : std::span{&mesh.tangents[v], 1},
          g.influences,
          {&mesh.joints[pair], size_t(g.influences)},
          {&mesh.weights[pair], size_t(g.influences)}};
      const size_t o = mesh.output_order == SkinOutputOrder::stored ? v : mesh.order[v];
      const SkinOutputs dst{
          out.positions.empty() ? std::span<Vec3f>{} : std::span{&out.positions[o], 1},
          out.normals.empty() ? std::span<Vec3f>{} : std::span{&out.normals[o], 1},
          out.tangents.empty() ? std::span<Vec3f>{} : std::span{&out.tangents[o], 1}};
      skin(one, dst, o);
    }
  }
}

// DQS's hemisphere links of a grouped mesh: the distinct (anchor, other) joint pairs, as a
// breadth-first spanning forest followed by the pairs that close cycles.
void build_dqs_links(SkinMesh& mesh) {
  std::vector<std::array<uint16_t, 2>> pairs;
  for (const SkinMesh::Group& g : mesh.groups)
    for (size_t v = 0; v < g.count; ++v) {
      const uint16_t* joints = &mesh.joints[g.pair_begin + v * size_t(g.influences)];
      for (int i = 1; i < g.influences; ++i)
        if (joints[i] != joints[0])
          pairs.push_back({std::min(joints[0], joints[i]), std::max(joints[0], joints[i])});
    }
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  // Adjacency in compressed rows: the neighbours of joint j are next[first[j] .. first[j + 1]).
  const size_t n = mesh.palette_size;
  std::vector<size_t> first(n + 1, 0);
  for (const auto& p : pairs) ++first[p[0] + 1], ++first[p[1] + 1];
  for (size_t j = 0; j < n; ++j) first[j + 1] += first[j];
  std::vector<uint16_t> next(first[n]);
  std::vector<size_t> fill(first.begin(), first.end() - 1);
  for (const auto& p : pairs) next[fill[p[0]]++] = p[1], next[fill[p[1]]++] = p[0];
  std::vector<uint8_t> reached(n, 0);
  std::vector<std::array<uint16_t, 2>> tree;
  std::vector<uint16_t> queue;
  for (size_t root = 0; root < n; ++root) {
    if (reached[root] || first[root] == first[root + 1]) continue;
    reached[root] = 1;
    queue.assign(1, uint16_t(root));
    for (size_t q = 0; q < queue.size(); ++q)
      for (size_t e = first[queue[q]]; e < first[queue[q] + 1]; ++e)
        if (!reached[next[e]]) {
          reached[next[e]] = 1;
          tree.push_back({queue[q], next[e]});
          queue.push_back(next[e]);
        }
  }
  // The pairs not in the forest are the checks.
  std::vector<std::array<uint16_t, 2>> sorted_tree;
  for (const auto& t : tree) sorted_tree.push_back({std::min(t[0], t[1]), std::max(t[0], t[1])});
  std::sort(sorted_tree.begin(), sorted_tree.end());
  mesh.dqs_links = tree;
  mesh.dqs_tree_links = tree.size();
  for (const auto& p : pairs)
    if (!std::binary_search(sorted_tree.begin(), sorted_tree.end(), p)) mesh.dqs_links.push_back(p);
  mesh.dqs_links_built = true;
}

}  // namespace

bool skin_lbs_simd(const SkinMeshView& mesh, std::span<const Affine3x4f> palette,
                   const SkinOutputs& out, LbsNormals normals) {
  return lbs_view(mesh, palette, out, false, 0, normals);
}

bool skin_lbs_parallel(const SkinMeshView& mesh, std::span<const Affine3x4f> palette,
                       const SkinOutputs& out, size_t grain, LbsNormals normals) {
  return lbs_view(mesh, palette, out, true, grain, normals);
}

bool skin_dqs_simd(const SkinMeshView& mesh, const DqsPaletteView& palette, const SkinOutputs& out,
                   std::span<const float> dqs_amount, std::span<const Affine3x4f> lbs_palette) {
  return dqs_view(mesh, palette, out, dqs_amount, lbs_palette, false, 0);
}

bool skin_dqs_parallel(const SkinMeshView& mesh, const DqsPaletteView& palette,
                       const SkinOutputs& out, std::span<const float> dqs_amount,
                       std::span<const Affine3x4f> lbs_palette, size_t grain) {
  return dqs_view(mesh, palette, out, dqs_amount, lbs_palette, true, grain);
}

double SkinMesh::mean_influences() const {
  return positions.empty() ? 0.0 : double(joints.size()) / double(positions.size());
}

SkinMesh make_skin_mesh(const SkinMeshView& view, size_t palette_size, const std::string& file,
                        const std::string& mesh_name) {
  validate_skin_mesh(view, palette_size, file, mesh_name);
  const size_t n = view.vertex_count(), k = size_t(view.influences);
  if (n > 0xFFFFFFFFu) throw Error(file, "mesh \"" + mesh_name + "\"", "more than 2³² vertices");
  std::vector<uint8_t> used(n);
  std::array<size_t, 9> per_count{};
  for (size_t v = 0; v < n; ++v) {
    for (size_t i = v * k; i < v * k + k; ++i) used[v] += view.weights[i] > 0.0f ? 1 : 0;
    ++per_count[used[v]];
  }
  SkinMesh mesh;
  mesh.palette_size = palette_size;
  mesh.order.reserve(n);
  mesh.positions.reserve(n);
  if (!view.normals.empty()) mesh.normals.reserve(n);
  if (!view.tangents.empty()) mesh.tangents.reserve(n);
  for (int c = 1; c <= 8; ++c) {
    if (per_count[size_t(c)] == 0) continue;
    mesh.groups.push_back({c, mesh.positions.size(), per_count[size_t(c)], mesh.joints.size()});
    for (size_t v = 0; v < n; ++v) {
      if (used[v] != c) continue;
      mesh.order.push_back(static_cast<uint32_t>(v));
      mesh.positions.push_back(view.positions[v]);
      if (!view.normals.empty()) mesh.normals.push_back(view.normals[v]);
      if (!view.tangents.empty()) mesh.tangents.push_back(view.tangents[v]);
      for (size_t i = v * k; i < v * k + k; ++i)
        if (view.weights[i] > 0.0f) {
          mesh.joints.push_back(view.joints[i]);
          mesh.weights.push_back(view.weights[i]);
        }
    }
  }
  build_dqs_links(mesh);
  const auto planes = [n](const std::vector<Vec3f>& packed, std::vector<float>& planar) {
    if (packed.empty()) return;
    planar.resize(3 * n);
    for (size_t v = 0; v < n; ++v) {
      planar[v] = packed[v].x;
      planar[n + v] = packed[v].y;
      planar[2 * n + v] = packed[v].z;
    }
  };
  planes(mesh.positions, mesh.planar_positions);
  planes(mesh.normals, mesh.planar_normals);
  planes(mesh.tangents, mesh.planar_tangents);
  return mesh;
}

std::vector<uint32_t> stored_indices(const SkinMesh& mesh, std::span<const uint32_t> indices) {
  std::vector<uint32_t> stored_of(mesh.order.size());
  for (size_t v = 0; v < mesh.order.size(); ++v) stored_of[mesh.order[v]] = uint32_t(v);
  std::vector<uint32_t> out;
  out.reserve(indices.size());
  for (size_t i = 0; i < indices.size(); ++i) {
    if (indices[i] >= stored_of.size())
      throw Error("<memory>", "index " + std::to_string(i),
                  "vertex " + std::to_string(indices[i]) + " of a " +
                      std::to_string(stored_of.size()) + "-vertex mesh");
    out.push_back(stored_of[indices[i]]);
  }
  return out;
}

bool skin_lbs(const SkinMesh& mesh, std::span<const Affine3x4f> palette, const SkinOutputs& out,
              SkinPath path) {
  if (!sizes_ok(mesh, out) || palette.size() < mesh.palette_size) return false;
  if (mesh.vertex_count() == 0) return true;
  if (path == SkinPath::scalar) {
    scalar_groups(mesh, out, [&](const SkinMeshView& one, const SkinOutputs& dst, size_t) {
      skin_lbs(one, palette, dst, mesh.lbs_normals);
    });
    return true;
  }
  std::array<KernelGroup, 8> groups;
  const KernelMesh k = kernel_mesh(mesh, out, groups);
  if (path == SkinPath::parallel)
    skin_detail::lbs_parallel(k, palette.data(), kernel_out(out), 1024);
  else
    skin_detail::lbs_range(k, palette.data(), kernel_out(out), 0, mesh.vertex_count());
  return true;
}

bool skin_dqs(const SkinMesh& mesh, const DqsPaletteView& palette, const SkinOutputs& out,
              SkinPath path, std::span<const float> dqs_amount,
              std::span<const Affine3x4f> lbs_palette) {
  if (!sizes_ok(mesh, out) || palette.dual_quats.size() < mesh.palette_size ||
      !dqs_palette_ok(palette, mesh.vertex_count(), dqs_amount, lbs_palette))
    return false;
  if (mesh.vertex_count() == 0) return true;
  if (path == SkinPath::scalar) {
    scalar_groups(mesh, out, [&](const SkinMeshView& one, const SkinOutputs& dst, size_t o) {
      skin_dqs(one, palette, dst,
               dqs_amount.empty() ? std::span<const float>{} : dqs_amount.subspan(o, 1),
               lbs_palette);
    });
    return true;
  }
  std::array<KernelGroup, 8> groups;
  const KernelMesh k = kernel_mesh(mesh, out, groups);
  const DqsKernelPalette p = kernel_dqs(palette, dqs_amount, lbs_palette);
  if (path == SkinPath::parallel)
    skin_detail::dqs_parallel(k, p, kernel_out(out), 1024);
  else
    skin_detail::dqs_range(k, p, kernel_out(out), 0, mesh.vertex_count());
  return true;
}

}  // namespace kinema
