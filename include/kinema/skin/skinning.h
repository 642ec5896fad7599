// kinema/skin/skinning.h — skinning palettes, linear blend skinning (LBS) and dual-quaternion
// skinning (DQS, Kavan et al. 2008) of positions, normals and tangents.
//
// Conventions. A palette entry is the skinning matrix S_j = W_j · B_j⁻¹ of skin joint j (W_j: the
// joint's model matrix in the current pose, B_j⁻¹: its inverse bind matrix), stored as a 3×4
// affine matrix (the bottom row of a skinning matrix is always 0 0 0 1). In the bind pose every
// S_j is the identity, so the mesh stays where it was modelled whatever the weights. Vertices
// are in the mesh's bind space (metres); joint indices refer to palette entries (glTF's skin
// joints, not skeleton joints). Each vertex has `influences` (joint, weight) pairs; weights are
// non-negative and sum to 1 per vertex (padding pairs have weight 0).
//
// Runtime functions take spans in and write spans out, never allocate, never throw and are safe
// to call from many threads on distinct outputs. They check sizes and return false (writing
// nothing) on a mismatch; they do not re-check every vertex each frame. Check a mesh once when
// it is loaded with check_skin_mesh (or validate_skin_mesh, which throws kinema::Error).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kinema/math/dual_quat.h"
#include "kinema/math/mat4.h"
#include "kinema/math/vec3.h"

namespace kinema {

/// A 3×4 affine matrix, rows stored contiguously: m[r * 4 + c], column 3 is the translation.
/// Transforms a column vector: p' = M · (p, 1). 12 floats per joint instead of 16.
struct Affine3x4f {
  std::array<float, 12> m{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0};

  static constexpr Affine3x4f identity() { return {}; }
  constexpr float operator()(int row, int col) const { return m[size_t(row * 4 + col)]; }
  constexpr float& operator()(int row, int col) { return m[size_t(row * 4 + col)]; }

  constexpr Vec3f transform_point(const Vec3f& p) const {
    return {m[0] * p.x + m[1] * p.y + m[2] * p.z + m[3],
            m[4] * p.x + m[5] * p.y + m[6] * p.z + m[7],
            m[8] * p.x + m[9] * p.y + m[10] * p.z + m[11]};
  }
  /// Applies the 3×3 part only (directions, tangents).
  constexpr Vec3f transform_vector(const Vec3f& v) const {
    return {m[0] * v.x + m[1] * v.y + m[2] * v.z, m[4] * v.x + m[5] * v.y + m[6] * v.z,
            m[8] * v.x + m[9] * v.y + m[10] * v.z};
  }
};

/// The top three rows of a 4×4 matrix (whose bottom row is assumed to be 0 0 0 1).
Affine3x4f to_affine3x4(const Mat4& m);
Affine3x4f to_affine3x4(const Mat4f& m);
/// Back to a 4×4 matrix with bottom row 0 0 0 1.
Mat4 to_mat4(const Affine3x4f& a);

/// Skinning palette S_j = model[skin_joints[j]] · inverse_bind[j] for every skin joint j.
/// `model`: model-space matrices of the skeleton's joints (from FK); `skin_joints`: the skeleton
/// joint of each skin joint; `inverse_bind`: one per skin joint. Returns false (writing nothing)
/// when the sizes differ or a skin joint is outside `model`.
bool skinning_palette(std::span<const Mat4f> model, std::span<const int> skin_joints,
                      std::span<const Mat4f> inverse_bind, std::span<Affine3x4f> out);
/// Same, from double-precision (offline) model matrices.
bool skinning_palette(std::span<const Mat4> model, std::span<const int> skin_joints,
                      std::span<const Mat4> inverse_bind, std::span<Affine3x4f> out);

/// A skinned mesh as read-only spans (the caller owns the storage).
struct SkinMeshView {
  std::span<const Vec3f> positions;  ///< bind space, metres
  std::span<const Vec3f> normals;    ///< empty, or one unit normal per vertex
  /// Empty, or one per vertex: the xyz of glTF's TANGENT (its w, the handedness, is unchanged by
  /// skinning and stays with the caller).
  std::span<const Vec3f> tangents;
  int influences = 4;                ///< (joint, weight) pairs per vertex, 1…8
  std::span<const uint16_t> joints;  ///< influences × vertex count palette indices
  std::span<const float> weights;    ///< influences × vertex count, ≥ 0, each vertex sums to 1

  size_t vertex_count() const { return positions.size(); }
};

/// Where skinning writes. Each span is empty (skip that attribute) or one per vertex; normals and
/// tangents can only be written when the mesh has them. Outputs must not alias the inputs.
struct SkinOutputs {
  std::span<Vec3f> positions;
  std::span<Vec3f> normals;   ///< unit length on output (except LbsNormals::blended_matrix)
  std::span<Vec3f> tangents;  ///< unit length on output
};

/// What is wrong with a skinned mesh: the first bad vertex, and why.
struct SkinMeshIssue {
  size_t vertex = 0;
  std::string reason;  ///< e.g. "weights sum to 0", "joint 71 is outside the palette (68 joints)"
};

/// Checks a mesh once before skinning it every frame: attribute counts, 1…8 influences, finite
/// positions/normals/tangents, joint indices below `palette_size`, weights finite, ≥ 0 and summing
/// to 1 within 1e-3. Returns the first problem, or nothing when the mesh is fine.
std::optional<SkinMeshIssue> check_skin_mesh(const SkinMeshView& mesh, size_t palette_size);

/// check_skin_mesh that throws kinema::Error naming `file`, "mesh <name>, vertex <i>" and the
/// reason.
void validate_skin_mesh(const SkinMeshView& mesh, size_t palette_size, const std::string& file,
                        const std::string& mesh_name);

/// How LBS transforms normals and tangents. M = Σ w_j S_j is a vertex's blended 3×4 matrix.
enum class LbsNormals {
  /// Normals by M's inverse transpose (its cofactor matrix, the sign of det M folded in): the
  /// normal of the surface that M maps, right for scaled, sheared and blended bones alike.
  /// Tangents by M. Both renormalized to unit length. The default.
  inverse_transpose,
  /// ozz-animation's SkinningJob math, and that of most engines' GPU skinning: normals and
  /// tangents by M as they are, NOT renormalized (shaders normalize per pixel). Normals keep
  /// inverse_transpose's direction for one-influence vertices of rigid or uniformly scaled
  /// bones; where rotations blend or bones scale non-uniformly they lean towards the tangent
  /// plane and their length leaves 1 (docs/skin.md measures both on a real mesh). Faster: on
  /// AVX2 it takes the column kernel that positions alone take.
  blended_matrix,
};

/// Linear blend skinning: v' = Σ w_j S_j v. Normals and tangents as `normals`
/// says (by default normals by the blended 3×3 part's inverse transpose, tangents by the 3×3
/// part, both renormalized). Returns false when a span's size does not match (nothing written).
bool skin_lbs(const SkinMeshView& mesh, std::span<const Affine3x4f> palette, const SkinOutputs& out,
              LbsNormals normals = LbsNormals::inverse_transpose);

/// A skinning palette split for dual-quaternion skinning: S_j = [rigid_j] · prescale_j, with
/// rigid_j a rotation + translation (as a unit dual quaternion) and prescale_j the symmetric
/// scale/shear left over (the identity for rigid bones).
struct DqsPaletteView {
  std::span<const DualQuatf> dual_quats;  ///< one per palette entry
  /// Empty when every bone is rigid; else one per entry: the pre-scale stage, blended linearly
  /// and applied before the dual quaternions (scale first, then blend).
  std::span<const Affine3x4f> prescale;
};

/// Splits every S_j into a unit dual quaternion and a pre-scale matrix (polar decomposition:
/// S = R·K with R a rotation and K symmetric positive definite). Writes dual_quats[j] and, when
/// `prescale` is not empty, prescale[j]. Returns true when any K differs from the identity by
/// more than 1e-5 (the mesh then needs the pre-scale stage). A reflection (negative determinant)
/// is treated as a rotation times a negative scale on x. Sizes must match (else false, nothing
/// written).
bool dual_quat_palette(std::span<const Affine3x4f> palette, std::span<DualQuatf> dual_quats,
                       std::span<Affine3x4f> prescale, bool* any_scale = nullptr);

/// Dual-quaternion skinning (Kavan et al. 2008): the pre-scale stage (when given), then dual
/// quaternion linear blending with each influence's sign chosen against the vertex's first
/// influence (the short way round), normalization by the blended real part's length and the
/// translation from 2·q_d·q_r*. Normals and tangents are rotated by the blended real part (after
/// the pre-scale stage's inverse transpose / linear part). `dqs_amount` is empty (pure DQS) or
/// one value per vertex in [0, 1]: 0 gives LBS with `lbs_palette`, 1 DQS, in between a linear mix
/// of the two results (Maya's "weight blended"); `lbs_palette` is needed only then. Returns false
/// when a span's size does not match (nothing written).
bool skin_dqs(const SkinMeshView& mesh, const DqsPaletteView& palette, const SkinOutputs& out,
              std::span<const float> dqs_amount = {}, std::span<const Affine3x4f> lbs_palette = {});

// ---- Faster paths ------------------------------------------------------------------------------
//
// Three paths compute the same thing: the scalar reference above (skin_lbs, skin_dqs), a SIMD
// path (SSE4.2 on the default x86-64-v2 build, FMA when the compiler targets it, e.g.
// -march=native; plain C++ elsewhere) and a multi-threaded path (oneTBB parallel_for over blocks
// of vertices, each block on the SIMD path). The SIMD and scalar paths agree within 1e-5 m (they
// round differently: fused multiply-adds, an approximate reciprocal square root refined by one
// Newton step); the multi-threaded path gives the same bits as the SIMD path whatever the number
// of threads, because every vertex is computed on its own by the same code. The parallel path
// allocates nothing itself (oneTBB's scheduler may). With AVX2, LBS of positions alone (no
// normals, no tangents) copies the palette as columns to 16 KB of the calling thread's stack
// (palettes of up to 256 joints; larger ones take the general kernel). See docs/skin.md.

/// SIMD LBS; same contract as skin_lbs.
bool skin_lbs_simd(const SkinMeshView& mesh, std::span<const Affine3x4f> palette,
                   const SkinOutputs& out, LbsNormals normals = LbsNormals::inverse_transpose);
/// Multi-threaded LBS (oneTBB; blocks of `grain` vertices); same contract as skin_lbs.
bool skin_lbs_parallel(const SkinMeshView& mesh, std::span<const Affine3x4f> palette,
                       const SkinOutputs& out, size_t grain = 1024,
                       LbsNormals normals = LbsNormals::inverse_transpose);
/// SIMD DQS; same contract as skin_dqs.
bool skin_dqs_simd(const SkinMeshView& mesh, const DqsPaletteView& palette, const SkinOutputs& out,
                   std::span<const float> dqs_amount = {},
                   std::span<const Affine3x4f> lbs_palette = {});
/// Multi-threaded DQS; same contract as skin_dqs.
bool skin_dqs_parallel(const SkinMeshView& mesh, const DqsPaletteView& palette,
                       const SkinOutputs& out, std::span<const float> dqs_amount = {},
                       std::span<const Affine3x4f> lbs_palette = {}, size_t grain = 1024);

/// The SIMD and multi-threaded paths run AVX2 + FMA kernels (eight vertices at a time) on CPUs
/// that have them, chosen at the first call, else SSE4.1 kernels (four at a time; a portable
/// 4-vector off x86). skin_simd_kernels() names the set in use: "avx512", "avx2+fma", "sse4.1"
/// or "portable". The two sets round differently (fused multiply-adds), each within 1e-5 m of the
/// scalar reference; a process gets the same bits from every call with the same set.
const char* skin_simd_kernels();
/// Allows (true, the default) or forbids the AVX2 kernels — for tests and side-by-side
/// benchmarks. Returns whether they are now in use (false on CPUs without them whatever is
/// asked). Not to be called while another thread is skinning.
bool set_skin_simd_avx2(bool allowed);

/// Allows (true, the default) or forbids the AVX-512 build of the LBS kernel with normals by the
/// inverse transpose (the AVX2 kernel's source compiled for AVX-512 F, VL, DQ and BW: 32 vector
/// registers), which runs on CPUs that have them and whose OS saves the zmm state, when the AVX2
/// kernels are allowed too; skin_simd_kernels() then says "avx512". It gives the AVX2 set's
/// bits; the other kernels stay the AVX2 ones. Returns whether it is now in use. Not to be called
/// while another thread is skinning.
bool set_skin_simd_avx512(bool allowed);

/// Which path a SkinMesh call takes.
enum class SkinPath { scalar, simd, parallel };

/// Where a SkinMesh's outputs go: at the original vertex indices (index buffers stay valid), or
/// at the stored indices — ozz-animation's choice, about a quarter faster on the SIMD paths
/// because whole blocks are written at once instead of scattered; the application then draws with
/// stored_indices() and keeps its other vertex attributes in stored order (to_stored_order()).
enum class SkinOutputOrder { original, stored };

/// A skinned mesh prepared once for fast skinning (the idea of ozz-animation's partitions): the
/// vertices are grouped by how many influences they really have (weights > 0), and each group
/// stores exactly that many (joint, weight) pairs, so a mesh that averages 2 influences in a
/// 4-influence layout does half the blending work and reads half the weights. Inside a group
/// vertices are sorted by joint set, each joint sequence's whole blocks of eight first (so that
/// the 8-wide kernels get as many blocks sharing their joints as possible; the vertices of one
/// sequence keep their relative order); `order[i]` is the original index of stored vertex i, and
/// skinning writes outputs at the ORIGINAL indices (index buffers stay valid). Zero-weight pairs
/// are dropped; the remaining pairs keep their order (the first one anchors DQS's hemisphere
/// test, as in skin_dqs). Build it with make_skin_mesh (offline: allocates, throws).
struct SkinMesh {
  struct Group {
    int influences = 0;     ///< pairs per vertex in this group, 1…8
    size_t begin = 0;       ///< first stored vertex of the group
    size_t count = 0;       ///< vertices in the group
    size_t pair_begin = 0;  ///< first (joint, weight) pair of the group in joints/weights
  };
  std::vector<Group> groups;     ///< by increasing influence count; empty groups left out
  std::vector<uint32_t> order;   ///< stored vertex → original vertex index
  std::vector<Vec3f> positions;  ///< stored order, bind space, metres
  std::vector<Vec3f> normals;    ///< empty or stored order
  std::vector<Vec3f> tangents;   ///< empty or stored order
  std::vector<uint16_t> joints;  ///< the groups' pairs, one after another
  std::vector<float> weights;    ///< same layout as joints, all > 0
  size_t palette_size = 0;       ///< the palette size the mesh was checked against
  /// DQS's hemisphere links (built by make_skin_mesh; rebuild the mesh after editing `joints`):
  /// every distinct pair of palette joints that meet in a vertex, one of them its anchor (first
  /// pair). The first `dqs_tree_links` form a spanning forest in breadth-first order (each joins a
  /// joint already reached to a new one); the rest close cycles. With them the DQS kernels choose
  /// every joint's sign once per call, so that each vertex's influences already lie in its
  /// anchor's hemisphere and the per-influence sign test disappears; when the pose makes the
  /// signs inconsistent around a cycle, that call tests per influence as before (same result).
  std::vector<std::array<uint16_t, 2>> dqs_links;
  size_t dqs_tree_links = 0;
  bool dqs_links_built = false;  ///< false: no plan (a hand-made mesh), always test per influence
  /// positions, normals and tangents again as planes — every x, then every y, then every z
  /// (3 · vertex_count() floats each, stored order; empty: not built) — from which the 8-wide
  /// kernels read eight vertices with three loads instead of regrouping packed triples. Built by
  /// make_skin_mesh; rebuild the mesh after editing positions, normals or tangents.
  std::vector<float> planar_positions, planar_normals, planar_tangents;
  /// Where outputs (and dqs_amount) are indexed; set freely after make_skin_mesh.
  SkinOutputOrder output_order = SkinOutputOrder::original;
  /// How skin_lbs transforms normals; set freely after make_skin_mesh.
  LbsNormals lbs_normals = LbsNormals::inverse_transpose;

  size_t vertex_count() const { return positions.size(); }
  /// Mean number of influences per vertex (pairs / vertices).
  double mean_influences() const;
};

/// Builds a SkinMesh from a view. Throws kinema::Error (naming `file`/`mesh_name`) when
/// check_skin_mesh finds a problem with `palette_size`.
SkinMesh make_skin_mesh(const SkinMeshView& mesh, size_t palette_size,
                        const std::string& file = "<memory>",
                        const std::string& mesh_name = "mesh");

/// An index buffer in original vertex indices rewritten for stored order (for
/// SkinOutputOrder::stored). Throws kinema::Error on an index ≥ vertex_count().
std::vector<uint32_t> stored_indices(const SkinMesh& mesh, std::span<const uint32_t> indices);

/// A per-vertex attribute (UVs, colours…) in original order, permuted into stored order.
template <class T>
std::vector<T> to_stored_order(const SkinMesh& mesh, std::span<const T> original) {
  std::vector<T> stored;
  stored.reserve(mesh.order.size());
  for (const uint32_t o : mesh.order) stored.push_back(original[o]);
  return stored;
}

/// LBS of a prepared mesh; outputs are indexed as mesh.output_order says (original by default).
/// Returns false (nothing written) when a span's size does not match or the palette is smaller than
/// the one the mesh was built for.
bool skin_lbs(const SkinMesh& mesh, std::span<const Affine3x4f> palette, const SkinOutputs& out,
              SkinPath path = SkinPath::simd);
/// DQS of a prepared mesh (see skin_dqs); `dqs_amount` is indexed like the outputs.
bool skin_dqs(const SkinMesh& mesh, const DqsPaletteView& palette, const SkinOutputs& out,
              SkinPath path = SkinPath::simd, std::span<const float> dqs_amount = {},
              std::span<const Affine3x4f> lbs_palette = {});

}  // namespace kinema
