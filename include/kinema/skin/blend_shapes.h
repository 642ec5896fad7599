// kinema/skin/blend_shapes.h — blend shapes (morph targets): weighted sums of per-vertex deltas
// added to a mesh's bind-space positions and normals before skinning.
//
// Conventions. Position deltas are in the mesh's bind space, metres, one per vertex (glTF morph
// targets, io Mesh::morph_targets). A morphed position is p = p₀ + Σₖ wₖ·Δpₖ and a morphed normal
// n = normalize(n₀ + Σₖ wₖ·Δnₖ) (the base normal is kept where that sum vanishes). Weights are
// usually in [0, 1] but any finite value is applied as given (glTF allows negative weights).
// Targets whose weight is exactly 0 are skipped. Morphing happens in bind space, before
// skin_lbs / skin_dqs (include/kinema/skin/skinning.h): morph into a scratch buffer, then skin a
// SkinMeshView whose positions/normals point at that buffer.
//
// Two representations: dense views (MorphTargetView, one delta per vertex, straight from the
// asset) and a sparse set (BlendShapeSet, built once: only the vertices a target moves), which
// is what a face rig wants — a facial shape moves a few hundred of many thousand vertices.
//
// Runtime functions take spans, never allocate, never throw, and return false (writing nothing)
// when sizes do not match.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kinema/character/asset.h"
#include "kinema/math/vec3.h"

namespace kinema {

/// One morph target as read-only spans (the caller owns the storage).
struct MorphTargetView {
  std::span<const Vec3f> position_deltas;  ///< empty (no position change) or one per vertex
  std::span<const Vec3f> normal_deltas;    ///< empty (no normal change) or one per vertex
};

/// Dense blend shapes: out_positions = base_positions + Σ weights[k]·targets[k].position_deltas,
/// out_normals = normalize(base_normals + Σ weights[k]·targets[k].normal_deltas). `weights` has
/// one entry per target; out spans have the base's sizes; `out_normals` may be empty (normals
/// skipped) and must be empty when `base_normals` is. Outputs must not alias the inputs.
bool apply_blend_shapes(std::span<const Vec3f> base_positions, std::span<const Vec3f> base_normals,
                        std::span<const MorphTargetView> targets, std::span<const float> weights,
                        std::span<Vec3f> out_positions, std::span<Vec3f> out_normals);

/// A sparse morph target: the vertices it moves and their deltas (same order).
struct SparseMorphTarget {
  std::string name;
  std::vector<uint32_t> vertices;      ///< increasing vertex indices
  std::vector<Vec3f> position_deltas;  ///< one per listed vertex
  std::vector<Vec3f> normal_deltas;    ///< empty, or one per listed vertex
};

/// The sparse morph targets of one mesh.
struct BlendShapeSet {
  size_t vertex_count = 0;
  std::vector<SparseMorphTarget> targets;

  size_t target_count() const { return targets.size(); }
  /// Index of the target named `name` (exact match), or -1.
  int find(const std::string& name) const;
  /// Total listed (vertex, target) pairs: the work of applying every target.
  size_t nonzero_count() const;
};

/// Builds the sparse set of `mesh`'s morph targets, listing a vertex when its position delta or
/// normal delta has a component larger than `epsilon` in magnitude (0: any non-zero delta, which
/// makes the sparse result identical to the dense one). Throws kinema::Error (naming `file`, the
/// mesh and the target) when a target's delta count does not match the vertex count or a delta is
/// not finite.
BlendShapeSet make_blend_shape_set(const Mesh& mesh, float epsilon = 0.0f,
                                   const std::string& file = {});

/// Dense views of `mesh`'s morph targets (valid while `mesh` lives and is not resized).
std::vector<MorphTargetView> morph_target_views(const Mesh& mesh);

/// Sparse blend shapes: the same result as the dense function with the same weights (one per
/// target of `set`). base spans have set.vertex_count entries. Cost: one copy of the base, the
/// listed vertices of each target with a non-zero weight, and a renormalization of the normals.
bool apply_blend_shapes(const BlendShapeSet& set, std::span<const Vec3f> base_positions,
                        std::span<const Vec3f> base_normals, std::span<const float> weights,
                        std::span<Vec3f> out_positions, std::span<Vec3f> out_normals);

}  // namespace kinema
