// bench/skin_bench_mesh.h — the meshes and poses of kinema_skin_bench, shared with the ozz peer
// (bench/peers/ozz_skin_peer.cpp) so that both skin the same vertices with the same matrices.
#pragma once

#include <string>
#include <vector>

#include "kinema/skin/skinning.h"

namespace kinema::bench {

struct SkinBenchMesh {
  std::string name;  ///< "arnaud" or "arnaud_sub" (one midpoint subdivision)
  SkinMesh mesh;     ///< 4-influence source, grouped by influence count
  SkinMesh stored;   ///< the same with SkinOutputOrder::stored (ozz's output layout)
  /// The same again with LbsNormals::blended_matrix (normals by the blended 3×3 part, as ozz).
  SkinMesh blended, stored_blended;
  SkinMeshView padded;  ///< the same vertices with 4 (padded) pairs each, source order
  std::vector<Vec3f> positions, normals, tangents;  ///< storage of `padded`
  std::vector<uint16_t> joints;
  std::vector<float> weights;
  std::vector<Affine3x4f> palette;  ///< a pose: rest pose with every joint turned up to 0.5 rad
  std::vector<DualQuatf> dual_quats;
  std::string error;  ///< empty when loaded
};

/// 0: arnaud.fbx as imported (≈3.7k vertices); 1: arnaud with each triangle midpoint-subdivided
/// once (new vertices: averaged weights of the edge's ends, top 4 renormalized).
const SkinBenchMesh& skin_bench_mesh(int which);

/// Bytes read and written per vertex by the SkinMesh path (inputs, pairs, remap, outputs).
double skin_bytes_per_vertex(const SkinMesh& mesh, int attributes, bool remap);

}  // namespace kinema::bench

/// Registers the ozz-animation SkinningJob benchmarks (defined in bench/peers/ozz_skin_peer.cpp
/// when CMake is given -DKINEMA_OZZ_ROOT).
void register_ozz_skin_benchmarks();
