// bench/peers/ozz_skin_peer.cpp — ozz-animation 0.16's SkinningJob, the peer of kinema's
// skinning, in kinema_skin_bench on the same vertices, weights and matrices (the SkinMesh of
// bench/skin_bench.cpp: vertices grouped by influence count, one SkinningJob per group, as ozz's
// own samples partition their meshes). Compiled only when CMake is given -DKINEMA_OZZ_ROOT.
//
// Differences that favour ozz, kept to use its public API as documented: ozz writes each group
// contiguously (so do kinema's SkinMeshStored rows; SkinMesh scatters to the original vertex
// order), reads influences − 1 weights per
// vertex (the last is 1 − the others), transforms normals and tangents by the blended matrix
// (no inverse transpose unless given joint_inverse_transpose_matrices) and does not renormalize
// them (kinema renormalizes every normal and tangent).
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "ozz/base/maths/simd_math.h"
#include "ozz/base/span.h"
#include "ozz/geometry/runtime/skinning_job.h"
#include "skin_bench_mesh.h"

namespace {

using kinema::bench::SkinBenchMesh;

void ozz_skin(benchmark::State& state, int which, int attributes) {
  const SkinBenchMesh& b = kinema::bench::skin_bench_mesh(which);
  if (!b.error.empty()) {
    state.SkipWithError(b.error.c_str());
    return;
  }
  const kinema::SkinMesh& mesh = b.mesh;
  std::vector<ozz::math::Float4x4> matrices(b.palette.size());
  for (size_t j = 0; j < b.palette.size(); ++j)
    for (int c = 0; c < 4; ++c)
      matrices[j].cols[c] = ozz::math::simd_float4::Load(b.palette[j](0, c), b.palette[j](1, c),
                                                         b.palette[j](2, c), c == 3 ? 1.0f : 0.0f);
  const size_t n = mesh.vertex_count();
  std::vector<float> out_p(3 * n), out_n(3 * n), out_t(3 * n);
  std::vector<ozz::geometry::SkinningJob> jobs;
  for (const kinema::SkinMesh::Group& g : mesh.groups) {
    ozz::geometry::SkinningJob job;
    const size_t k = size_t(g.influences);
    job.vertex_count = int(g.count);
    job.influences_count = g.influences;
    job.joint_matrices = {matrices.data(), matrices.size()};
    job.joint_indices = {&mesh.joints[g.pair_begin], g.count * k};
    job.joint_indices_stride = k * sizeof(uint16_t);
    job.joint_weights = {&mesh.weights[g.pair_begin], g.count * k};
    job.joint_weights_stride = k * sizeof(float);
    const size_t v3 = 3 * g.begin, len = 3 * g.count, stride = 3 * sizeof(float);
    job.in_positions = {&mesh.positions[g.begin].x, len};
    job.in_positions_stride = stride;
    job.out_positions = {out_p.data() + v3, len};
    job.out_positions_stride = stride;
    if (attributes >= 2) {
      job.in_normals = {&mesh.normals[g.begin].x, len};
      job.in_normals_stride = stride;
      job.out_normals = {out_n.data() + v3, len};
      job.out_normals_stride = stride;
    }
    if (attributes >= 3) {
      job.in_tangents = {&mesh.tangents[g.begin].x, len};
      job.in_tangents_stride = stride;
      job.out_tangents = {out_t.data() + v3, len};
      job.out_tangents_stride = stride;
    }
    if (!job.Validate()) {
      state.SkipWithError("ozz SkinningJob::Validate failed");
      return;
    }
    jobs.push_back(job);
  }
  for (auto _ : state) {
    for (const ozz::geometry::SkinningJob& job : jobs) job.Run();
    benchmark::DoNotOptimize(out_p.data());
    benchmark::ClobberMemory();
  }
  const double vertices = double(n);
  state.counters["per_vertex"] = benchmark::Counter(
      vertices, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["vertices_per_s"] =
      benchmark::Counter(vertices, benchmark::Counter::kIsIterationInvariantRate);
  // Same traffic as kinema's SkinMesh path less the remap and one weight per vertex.
  state.counters["bytes_per_s"] = benchmark::Counter(
      vertices * (kinema::bench::skin_bytes_per_vertex(mesh, attributes, false) - 4.0),
      benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::OneK::kIs1024);
  state.counters["influences"] = mesh.mean_influences();
  // Check once that ozz and kinema skin the same thing: positions within 1e-4 m.
  std::vector<kinema::Vec3f> ref(n);
  kinema::skin_lbs(mesh, b.palette, {ref, {}, {}});
  float worst = 0;
  for (size_t i = 0; i < n; ++i) {
    const kinema::Vec3f o{out_p[3 * i], out_p[3 * i + 1], out_p[3 * i + 2]};
    worst = std::max(worst, kinema::distance(o, ref[mesh.order[i]]));
  }
  state.counters["max_diff_m"] = worst;
}

}  // namespace

void register_ozz_skin_benchmarks() {
  const char* attributes[] = {"", "P", "PN", "PNT"};
  for (const int which : {0, 1})
    for (int a = 1; a <= 3; ++a) {
      const std::string name = std::string("Ozz/LBS/") + (which == 0 ? "arnaud" : "arnaud_sub") +
                               "/" + attributes[a] + "/SkinningJob";
      benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& s) {
        ozz_skin(s, which, a);
      })->UseRealTime();
    }
}
