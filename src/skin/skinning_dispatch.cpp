// The entry points of the SIMD and multi-threaded skinning paths, on a SkinMeshView and on a
// SkinMesh: checks, then the kernels' arrays (skinning_kernels.h) handed to lbs_range/dqs_range
// (one thread) or lbs_parallel/dqs_parallel (oneTBB); a SkinMesh's scalar path, group by group.
#include <array>

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
