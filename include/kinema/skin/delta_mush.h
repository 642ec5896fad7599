// kinema/skin/delta_mush.h — delta mush (Mancewicz et al., DigiPro 2014) and an offline bake of
// better LBS weights from it.
//
// Bind time (build_delta_mush): smooth the bind mesh with n iterations of
//     v ← v + λ (v̄ − v),   v̄ the mean of v's mesh neighbours (from the triangle list),
// and store each vertex's delta δ = v − s (s its smoothed position) in the smoothed surface's local
// frame at s. Runtime (delta_mush_deform): the caller deforms the mesh any way it likes (LBS, DQS,
// even a rigid one-joint binding), the deformed mesh is smoothed the same way, and each stored
// delta is rotated into the deformed smoothed frame and added back:
//     out = s' + δ_t t' + δ_b b' + δ_n n'.
//
// The frame at a smoothed vertex: n = the normalized sum of the (area-weighted) normals of the
// triangles around it; t = the edge to one fixed neighbour (chosen at bind time as the neighbour
// whose edge is the most perpendicular to n) projected onto the plane ⊥ n, normalized; b = n × t.
// (t, b, n) is right-handed and orthonormal. Where it is undefined (an isolated vertex, a zero-area
// fan, an edge along n) the identity frame is used, at bind time and at runtime alike.
//
// Vertices at the same bind position (glTF splits vertices along UV and normal seams) are welded
// into one smoothing node, so a seam is smoothed as one surface and does not open: the node's
// deformed position is the mean of its vertices' deformed positions.
//
// Properties: the bind pose reproduces the input mesh (up to float rounding); a rigid motion of the
// whole deformed mesh moves the output by the same rigid motion (smoothing, normals and edges all
// commute with it). The runtime path never allocates: the caller gives scratch space of
// delta_mush_scratch_size() Vec3f.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "kinema/math/vec3.h"
#include "kinema/skin/skinning.h"

namespace kinema {

struct DeltaMushSettings {
  int iterations = 10;  ///< smoothing passes, ≥ 0
  float lambda = 0.5f;  ///< step toward the neighbour mean per pass, in (0, 1]
  /// Vertices closer than this (metres) are welded into one smoothing node; < 0 disables welding.
  float weld_distance = 1e-6f;
};

/// Everything delta mush precomputes from the bind mesh.
struct DeltaMushBind {
  DeltaMushSettings settings;
  size_t vertex_count = 0;
  size_t node_count = 0;
  std::vector<uint32_t> node_of;            ///< vertex → smoothing node
  std::vector<uint32_t> node_vertex_start;  ///< node_count + 1 offsets into node_vertices
  std::vector<uint32_t> node_vertices;      ///< the vertices of each node
  std::vector<uint32_t> neighbour_start;    ///< node_count + 1 offsets into neighbours
  std::vector<uint32_t> neighbours;         ///< node neighbours (unique, sorted)
  std::vector<uint32_t> triangles;          ///< triangle list over nodes (degenerate ones dropped)
  std::vector<uint32_t> frame_neighbour;    ///< per node: the edge that fixes t, or UINT32_MAX
  std::vector<Vec3f> deltas;                ///< per vertex: (δ·t, δ·b, δ·n)
};

/// Bind time (offline): neighbours, welding, smoothed bind mesh, local frames and deltas. Throws
/// kinema::Error on an index count not a multiple of 3, an index out of range, non-finite
/// positions, iterations < 0 or λ outside (0, 1].
DeltaMushBind build_delta_mush(std::span<const Vec3f> bind_positions,
                               std::span<const uint32_t> indices,
                               const DeltaMushSettings& settings = {});

/// Vec3f of scratch space delta_mush_deform needs: 3 × node_count.
size_t delta_mush_scratch_size(const DeltaMushBind& bind);

/// Runtime: smooths `deformed` (the caller's skinned or otherwise deformed mesh) like the bind
/// mesh and adds the stored deltas back in the deformed smoothed frames. `out` must not overlap
/// `deformed` or `scratch`. Returns false (writing nothing) when sizes do not match or `bind` is
/// empty of frames (not built). Never allocates.
bool delta_mush_deform(const DeltaMushBind& bind, std::span<const Vec3f> deformed,
                       std::span<Vec3f> scratch, std::span<Vec3f> out);

/// One step of the runtime path, exposed for checking: the point p = s + δ_t t + δ_b b + δ_n n of a
/// local delta in the frame (t, n) (b = n × t). E.g. s = (5, 2), n turned 30° from +Y,
/// δ = 0.3 along n → (4.85, 2.26).
Vec3f delta_mush_frame_point(const Vec3f& smoothed, const Vec3f& tangent, const Vec3f& normal,
                             const Vec3f& local_delta);

/// Options for bake_lbs_weights.
struct WeightBakeSettings {
  int max_influences = 4;  ///< 1…8 influences per vertex in the result
  /// Candidate joints of a vertex: its own and those of its mesh neighbours up to this many rings.
  int candidate_rings = 1;
  /// Keep a vertex's original weights when the fit is not better on the sample poses (so the
  /// error after is never above the error before, vertex by vertex).
  bool keep_if_worse = true;
};

/// What bake_lbs_weights produced and measured (errors are over all sample poses and vertices,
/// distances in metres between LBS and the delta-mushed target).
struct WeightBake {
  int influences = 0;
  std::vector<uint16_t> joints;  ///< influences × vertex count
  std::vector<float> weights;    ///< influences × vertex count, ≥ 0, sum 1
  double rms_before = 0, rms_after = 0;
  double max_before = 0, max_after = 0;
  size_t vertices_kept = 0;  ///< vertices whose fit was not better (original weights kept)
};

/// Offline: fits per-vertex LBS weights that best reproduce delta mush over `poses` (each a full
/// skinning palette). For every pose the target is delta mush of the LBS result of `mesh`'s own
/// weights; each vertex's weights solve a non-negative least-squares problem over its candidate
/// joints with Σw = 1 (an exact equality constraint, eliminated), keeping the largest
/// max_influences and refitting. Throws kinema::Error on bad input (mesh check_skin_mesh rejects,
/// no poses, palettes of the wrong size or non-finite).
WeightBake bake_lbs_weights(const SkinMeshView& mesh, std::span<const uint32_t> indices,
                            std::span<const std::vector<Affine3x4f>> poses,
                            const DeltaMushSettings& mush = {},
                            const WeightBakeSettings& settings = {});

}  // namespace kinema
