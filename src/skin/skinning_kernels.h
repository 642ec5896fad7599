// Internal: the SIMD skinning kernels shared by the SIMD, multi-threaded and SkinMesh paths.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "kinema/skin/skinning.h"

// Forces the small vector helpers of the kernel files inline: GCC otherwise keeps some that
// return several vectors out of line and passes them through memory (≈ 8 % of the SSE normals
// kernel's time on arnaud).
#if defined(__GNUC__)
#define KINEMA_SKIN_INLINE __attribute__((always_inline)) inline
#else
#define KINEMA_SKIN_INLINE inline
#endif

namespace kinema::skin_detail {

/// One run of vertices with the same number of (joint, weight) pairs.
struct KernelGroup {
  int influences = 0;
  size_t begin = 0, end = 0;  ///< stored vertices [begin, end)
  size_t pair_begin = 0;      ///< pair index of vertex `begin`
};

/// A mesh as raw arrays (input order may differ from output order through `order`).
struct KernelMesh {
  const Vec3f* positions = nullptr;
  const Vec3f* normals = nullptr;   ///< null unless normals are written
  const Vec3f* tangents = nullptr;  ///< null unless tangents are written
  const uint16_t* joints = nullptr;
  const float* weights = nullptr;
  const uint32_t* order = nullptr;  ///< null: stored index = output index
  /// SkinMesh::planar_* (null when absent): x of vertex v at [v], y at [n + v], z at [2n + v]
  /// with n = vertex_count.
  const float* planar_positions = nullptr;
  const float* planar_normals = nullptr;
  const float* planar_tangents = nullptr;
  bool positive_weights = false;  ///< every pair's weight > 0 (SkinMesh): DQS anchors on pair 0
  /// LBS normals by the blended 3×3 part, like tangents (LbsNormals::blended_matrix).
  bool blended_matrix_normals = false;
  std::span<const KernelGroup> groups;
  size_t vertex_count = 0;
  size_t palette_size = 0;  ///< joints in the palette (0: unknown)
  /// SkinMesh::dqs_links (a SkinMesh built by make_skin_mesh only; see there).
  const std::array<uint16_t, 2>* dqs_links = nullptr;
  size_t dqs_tree_links = 0, dqs_link_count = 0;
  bool has_dqs_links = false;
};

struct KernelOut {
  Vec3f* positions = nullptr;
  Vec3f* normals = nullptr;
  Vec3f* tangents = nullptr;
};

struct DqsKernelPalette {
  const DualQuatf* dual_quats = nullptr;
  const Affine3x4f* prescale = nullptr;  ///< null: rigid bones
  const float* amount = nullptr;         ///< null: pure DQS; else per output vertex
  const Affine3x4f* lbs = nullptr;       ///< needed with amount
  /// Pure DQS of positions alone (AVX2): dq_column_palette_avx2's rigid matrices, for the
  /// one-influence vertices (null: they take the DQS kernel).
  const float* rigid_columns = nullptr;
};

/// The per-call palette copies of the AVX2 kernels (LBS positions by columns, DQS with signed
/// dual quaternions) live on the caller's stack, so palettes of at most this many joints.
inline constexpr size_t column_palette_joints = 256;

/// Calls `f.template operator()<K>()` with K = `influences` where the kernels have a loop
/// specialized for it (1, 2, 3, 4 and 8), else with K = 0 (the count read at run time).
template <class F>
inline void with_influence_count(int influences, F& f) {
  switch (influences) {
    case 1:
      f.template operator()<1>();
      break;
    case 2:
      f.template operator()<2>();
      break;
    case 3:
      f.template operator()<3>();
      break;
    case 4:
      f.template operator()<4>();
      break;
    case 8:
      f.template operator()<8>();
      break;
    default:
      f.template operator()<0>();
      break;
  }
}

/// Skins stored vertices [begin, end) (they may span several groups).
void lbs_range(const KernelMesh& mesh, const Affine3x4f* palette, const KernelOut& out,
               size_t begin, size_t end);
void dqs_range(const KernelMesh& mesh, const DqsKernelPalette& palette, const KernelOut& out,
               size_t begin, size_t end);

/// Runs `lbs_range`/`dqs_range` over [0, vertex_count) with oneTBB in blocks of `grain`.
void lbs_parallel(const KernelMesh& mesh, const Affine3x4f* palette, const KernelOut& out,
                  size_t grain);
void dqs_parallel(const KernelMesh& mesh, const DqsKernelPalette& palette, const KernelOut& out,
                  size_t grain);

#if KINEMA_SKIN_AVX2
/// The AVX2 + FMA kernels (skinning_lbs_avx2.cpp, skinning_dqs_avx2.cpp), eight vertices at a
/// time, for stored vertices [begin, end) of group `g`; only on CPUs with AVX2 and FMA. DQS: pure
/// (no pre-scale, no mix).
void lbs_group_avx2(const KernelMesh& mesh, const Affine3x4f* palette, const KernelOut& out,
                    const KernelGroup& g, size_t begin, size_t end);
void dqs_group_avx2(const KernelMesh& mesh, const DualQuatf* dual_quats, const KernelOut& out,
                    const KernelGroup& g, size_t begin, size_t end);

/// LBS of positions alone, or with normals and tangents by the blended matrix, has its own AVX2
/// kernel (skinning_columns_avx2.cpp): one vertex per step in AoS from a copy of the palette as
/// columns (ozz's layout), which needs no transposition. 16 floats per joint (`columns` 32-byte
/// aligned, room for `joints` · 16 floats).
void column_palette_avx2(const Affine3x4f* palette, size_t joints, float* columns);
/// Skins stored vertices [begin, end) (any groups) from column_palette_avx2's copy: positions,
/// and normals and tangents by the blended 3×3 part as they are (LbsNormals::blended_matrix).
void lbs_columns_avx2(const KernelMesh& mesh, const float* columns, const KernelOut& out,
                      size_t begin, size_t end);
/// Pure DQS from a copy of the palette whose dual quaternions were negated where needed so that
/// every vertex's influences lie in its anchor's hemisphere (signed_dual_quats): a blend is plain
/// fused multiply-adds, one 8-float load per influence, no sign test. Same results as
/// dqs_group_avx2. `dual_quats`: 32-byte aligned, 8 floats per joint.
void dqs_signed_avx2(const KernelMesh& mesh, const float* dual_quats, const KernelOut& out,
                     size_t begin, size_t end, const float* rigid_columns);
/// DQS of positions alone for one-influence vertices: each is its joint's rigid transform, so
/// they take the positions-only column kernel (weights ignored: DQS normalizes them away) from
/// dq_column_palette_avx2's copy of the palette as rigid 3×4 matrices (layout of
/// column_palette_avx2). Stored vertices [begin, end) of group g (g.influences == 1).
void dq_column_palette_avx2(const DualQuatf* dual_quats, size_t joints, float* columns);
void dqs_rigid_positions_avx2(const KernelMesh& mesh, const float* columns, const KernelOut& out,
                              const KernelGroup& g, size_t begin, size_t end);
#endif

#if KINEMA_SKIN_AVX512
/// lbs_group_avx2 compiled for AVX-512 (skinning_lbs_avx512.cpp): the same results, on CPUs with
/// AVX-512 F, VL, DQ and BW whose OS saves the zmm state.
void lbs_group_avx512(const KernelMesh& mesh, const Affine3x4f* palette, const KernelOut& out,
                      const KernelGroup& g, size_t begin, size_t end);
#endif

/// Copies the mesh's palette into `signed_quats` (8 floats per joint), each dual quaternion
/// negated or not so that every hemisphere link's dot product of real parts is ≥ 0 (the sign the
/// per-influence test would choose). Returns false, leaving `signed_quats` partly written, when
/// the links' signs are inconsistent around a cycle in this pose.
bool signed_dual_quats(const KernelMesh& mesh, const DualQuatf* dual_quats, float* signed_quats);

#if KINEMA_SKIN_AVX2
/// The per-call palette copies of pure DQS on AVX2 (dqs_by_call_copies), on this stack: the
/// signed dual quaternions, and for positions alone the rigid column matrices of the
/// one-influence vertices. Calls run(signed, palette): `signed` null when the links' signs
/// disagree in this pose (then test per influence), `palette` with rigid_columns set or not.
template <class Run>
void with_dqs_call_copies(const KernelMesh& mesh, const DqsKernelPalette& palette,
                          const KernelOut& out, Run&& run) {
  alignas(32) float signed_quats[column_palette_joints * 8];
  alignas(32) float rigid_columns[column_palette_joints * 16];
  DqsKernelPalette p = palette;
  if (out.positions && !out.normals && !out.tangents) {
    dq_column_palette_avx2(palette.dual_quats, mesh.palette_size, rigid_columns);
    p.rigid_columns = rigid_columns;
  }
  const bool consistent =
      mesh.has_dqs_links && signed_dual_quats(mesh, palette.dual_quats, signed_quats);
  run(consistent ? static_cast<const float*>(signed_quats) : nullptr, p);
}
#endif

/// DQS of stored vertices [begin, end) without the per-call copies (uses palette.rigid_columns
/// when set).
void dqs_range_direct(const KernelMesh& mesh, const DqsKernelPalette& palette, const KernelOut& out,
                      size_t begin, size_t end);

/// Whether pure DQS of this mesh takes with_dqs_call_copies: AVX2 in use, a palette of
/// 1…column_palette_joints joints, and hemisphere links (a SkinMesh) or positions alone.
bool dqs_by_call_copies(const KernelMesh& mesh, const DqsKernelPalette& palette,
                        const KernelOut& out);

/// Whether LBS of `out` takes the AVX2 column kernels (AVX2 in use, a palette of
/// 1…column_palette_joints joints, positions, and no normals or normals by the blended matrix).
bool lbs_by_columns(const KernelMesh& mesh, const KernelOut& out);

/// Size checks shared with the scalar path (skinning.cpp).
bool sizes_ok(const SkinMeshView& mesh, const SkinOutputs& out);
bool joints_in_range(const SkinMeshView& mesh, size_t palette_size);

}  // namespace kinema::skin_detail
