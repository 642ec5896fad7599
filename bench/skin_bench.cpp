// bench/skin_bench.cpp — skinning throughput: LBS and DQS, 4 influences, positions only /
// + normals / + normals + tangents, one thread (SIMD path) and all threads (oneTBB), on ozz's
// arnaud mesh and on arnaud subdivided once (kinema's real meshes all have < 10k vertices);
// the scalar reference and the padded 4-influence view for comparison; a copy loop for the
// memory bandwidth; the arithmetic floor of positions (Floor/: the mesh's floating-point
// operations alone, on 8 lanes); ozz-animation's SkinningJob on the same vertices when built with
// -DKINEMA_OZZ_ROOT (bench/peers/ozz_skin_peer.cpp).
//
// Counters: per_vertex (seconds per vertex: 1.70n = 1.70 ns), vertices_per_s, bytes_per_s
// (bytes read + written per second; compare with Copy/ bytes_per_s), influences (mean).
//
// Data: $KINEMA_SHARED_DATA/fbx/ozz_pab/arnaud.fbx (ozz-animation's sample, MIT; the folder as in
// bench/shared_data.h), or the file named by KINEMA_SKIN_MESH.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <utility>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "kinema/core/cpu_features.h"
#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/skeleton/skeleton.h"
#include "kinema/skin/skin_mesh.h"
#include "shared_data.h"
#include "skin_bench_mesh.h"

namespace kinema::bench {
namespace {

struct Influences {
  std::vector<std::pair<uint16_t, float>> pairs;
};

// Keeps the 4 largest weights, renormalized, as 4 (joint, weight) pairs (zero padding).
void push_top4(std::vector<std::pair<uint16_t, float>> pairs, std::vector<uint16_t>& joints,
               std::vector<float>& weights) {
  std::stable_sort(pairs.begin(), pairs.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  if (pairs.size() > 4) pairs.resize(4);
  float sum = 0;
  for (const auto& p : pairs) sum += p.second;
  for (size_t i = 0; i < 4; ++i) {
    joints.push_back(i < pairs.size() ? pairs[i].first : 0);
    weights.push_back(i < pairs.size() ? pairs[i].second / sum : 0.0f);
  }
}

Vec3f tangent_of(const Vec3f& n) {
  const Vec3f axis = std::abs(n.y) < 0.9f ? Vec3f{0, 1, 0} : Vec3f{1, 0, 0};
  return normalize(cross(n, axis));
}

void build(SkinBenchMesh& b, bool subdivide) {
  const char* env = std::getenv("KINEMA_SKIN_MESH");
  const std::string path = env && *env ? env : shared_data() + "/fbx/ozz_pab/arnaud.fbx";
  const Asset asset = load_asset(path);
  // The skinned meshes of the first skin, one after another.
  int skin = -1;
  std::vector<Vec3f> pos, nrm;
  std::vector<uint32_t> tri;
  std::vector<std::vector<std::pair<uint16_t, float>>> infl;
  for (const Mesh& m : asset.meshes) {
    if (m.skin < 0 || (skin >= 0 && m.skin != skin)) continue;
    skin = m.skin;
    const uint32_t base = uint32_t(pos.size());
    for (size_t v = 0; v < m.vertex_count(); ++v) {
      pos.push_back(m.positions[v]);
      nrm.push_back(m.normals.empty() ? Vec3f{0, 1, 0} : m.normals[v]);
      std::vector<std::pair<uint16_t, float>> p;
      for (int k = 0; k < m.influences; ++k) {
        const size_t i = v * size_t(m.influences) + size_t(k);
        if (m.weights[i] > 0) p.push_back({m.joints[i], m.weights[i]});
      }
      infl.push_back(std::move(p));
    }
    for (const uint32_t i : m.indices) tri.push_back(base + i);
  }
  if (skin < 0) throw Error(path, "meshes", "no skinned mesh");
  if (subdivide) {
    // Midpoint subdivision: one new vertex per edge, weights averaged over the edge's ends.
    std::map<std::pair<uint32_t, uint32_t>, uint32_t> mid;
    const auto midpoint = [&](uint32_t a, uint32_t c) {
      const auto key = std::minmax(a, c);
      if (const auto it = mid.find(key); it != mid.end()) return it->second;
      const uint32_t id = uint32_t(pos.size());
      pos.push_back((pos[a] + pos[c]) * 0.5f);
      nrm.push_back(normalize(nrm[a] + nrm[c]));
      std::map<uint16_t, float> sum;
      for (const auto& [j, w] : infl[a]) sum[j] += 0.5f * w;
      for (const auto& [j, w] : infl[c]) sum[j] += 0.5f * w;
      infl.push_back({sum.begin(), sum.end()});
      mid[key] = id;
      return id;
    };
    for (size_t t = 0; t + 2 < tri.size(); t += 3)
      midpoint(tri[t], tri[t + 1]), midpoint(tri[t + 1], tri[t + 2]), midpoint(tri[t + 2], tri[t]);
  }
  for (size_t v = 0; v < pos.size(); ++v) {
    b.positions.push_back(pos[v]);
    b.normals.push_back(normalize(nrm[v]));
    b.tangents.push_back(tangent_of(b.normals.back()));
    push_top4(infl[v], b.joints, b.weights);
  }
  b.padded = {b.positions, b.normals, b.tangents, 4, b.joints, b.weights};
  const size_t joints = asset.skins[size_t(skin)].joints.size();
  b.mesh = make_skin_mesh(b.padded, joints, path, b.name);
  b.stored = b.mesh;
  b.stored.output_order = SkinOutputOrder::stored;
  b.blended = b.mesh;
  b.blended.lbs_normals = LbsNormals::blended_matrix;
  b.stored_blended = b.stored;
  b.stored_blended.lbs_normals = LbsNormals::blended_matrix;
  // A pose: every joint's rest rotation turned by up to 0.5 rad about a random axis.
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-0.5, 0.5);
  std::vector<Transform> local = asset.skeleton.rest_pose();
  for (Transform& t : local)
    t.rotation = normalize(t.rotation * Quat::from_axis_angle({u(rng), u(rng), u(rng)}, u(rng)));
  std::vector<Mat4> model(local.size());
  local_to_model(asset.skeleton.parents(), local, model);
  b.palette.resize(joints);
  b.dual_quats.resize(joints);
  if (!asset_skin_palette(asset, skin, model, b.palette) ||
      !dual_quat_palette(b.palette, b.dual_quats, {}))
    throw Error(path, "skin", "cannot build the palette");
}

// Outputs in original vertex order.
struct Out {
  std::vector<Vec3f> p, n, t;
  SkinOutputs spans(size_t count, int attributes) {
    p.resize(count), n.resize(count), t.resize(count);
    return {p, attributes >= 2 ? std::span<Vec3f>(n) : std::span<Vec3f>{},
            attributes >= 3 ? std::span<Vec3f>(t) : std::span<Vec3f>{}};
  }
};

const char* kAttributes[] = {"", "P", "PN", "PNT"};

enum class Kind {
  reference,
  padded_simd,
  mesh_simd,
  mesh_parallel,
  stored_simd,
  stored_parallel,
  blended_simd,         // LBS only: LbsNormals::blended_matrix, original order
  stored_blended_simd,  // the same in stored order
};

void counters(benchmark::State& state, double n, double bytes_per_vertex, double influences) {
  state.counters["per_vertex"] = benchmark::Counter(
      n, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["vertices_per_s"] =
      benchmark::Counter(n, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["bytes_per_s"] =
      benchmark::Counter(n * bytes_per_vertex, benchmark::Counter::kIsIterationInvariantRate,
                         benchmark::Counter::OneK::kIs1024);
  state.counters["influences"] = influences;
}

// Forbids the AVX-512 kernel while it lives (the "/avx2" rows), then restores the choice.
struct WithoutAvx512 {
  explicit WithoutAvx512(bool forbid)
      : forbid(forbid), was(forbid && std::strcmp(kinema::skin_simd_kernels(), "avx512") == 0) {
    if (forbid) kinema::set_skin_simd_avx512(false);
  }
  ~WithoutAvx512() {
    if (forbid) kinema::set_skin_simd_avx512(was);
  }
  bool forbid, was;
};

void skin(benchmark::State& state, int which, bool dqs, int attributes, Kind kind,
          bool avx2 = false) {
  const SkinBenchMesh& b = skin_bench_mesh(which);
  if (!b.error.empty()) {
    state.SkipWithError(b.error.c_str());
    return;
  }
  const WithoutAvx512 isa(avx2);
  state.SetLabel(kinema::skin_simd_kernels());  // the kernel set that ran
  Out out;
  const SkinOutputs o = out.spans(b.mesh.vertex_count(), attributes);
  const DqsPaletteView dq{b.dual_quats, {}};
  for (auto _ : state) {
    bool ok = false;
    switch (kind) {
      case Kind::reference:
        ok = dqs ? skin_dqs(b.padded, dq, o) : skin_lbs(b.padded, b.palette, o);
        break;
      case Kind::padded_simd:
        ok = dqs ? skin_dqs_simd(b.padded, dq, o) : skin_lbs_simd(b.padded, b.palette, o);
        break;
      case Kind::mesh_simd:
      case Kind::mesh_parallel:
      case Kind::stored_simd:
      case Kind::stored_parallel:
      case Kind::blended_simd:
      case Kind::stored_blended_simd: {
        const bool simd = kind != Kind::mesh_parallel && kind != Kind::stored_parallel;
        const SkinPath path = simd ? SkinPath::simd : SkinPath::parallel;
        const SkinMesh& mesh = kind == Kind::stored_simd || kind == Kind::stored_parallel ? b.stored
                               : kind == Kind::blended_simd        ? b.blended
                               : kind == Kind::stored_blended_simd ? b.stored_blended
                                                                   : b.mesh;
        ok = dqs ? skin_dqs(mesh, dq, o, path) : skin_lbs(mesh, b.palette, o, path);
        break;
      }
    }
    if (!ok) state.SkipWithError("skinning refused the mesh");
    benchmark::DoNotOptimize(out.p.data());
    benchmark::ClobberMemory();
  }
  const double n = double(b.mesh.vertex_count());
  if (kind == Kind::reference || kind == Kind::padded_simd)
    counters(state, n, 24.0 * attributes + 6.0 * 4, 4);
  else
    counters(state, n,
             skin_bytes_per_vertex(b.mesh, attributes,
                                   kind == Kind::mesh_simd || kind == Kind::mesh_parallel ||
                                       kind == Kind::blended_simd),
             b.mesh.mean_influences());
}

// The arithmetic floor of LBS positions on 8 lanes, measured rather than estimated: per block of
// eight vertices with K influences the fewer of 12K + 12 eight-lane operations (blend the K
// matrices' 12 entries: 12 multiplies then 12(K − 1) multiply-adds; transform: 9 multiply-adds
// and 3 adds) and 15K (transform by each matrix, then 3 multiply-adds to weight it), issued here
// as independent 8-lane fused multiply-adds on ten register accumulators: no loads, gathers,
// transpositions or stores, so the time is the floating-point ports' alone. `influences` 0 takes
// each group's own count (the mesh's mix), 4 every vertex with four (the framing).
long floor_operations(const SkinMesh& mesh, int influences) {
  long operations = 0;
  for (const SkinMesh::Group& g : mesh.groups) {
    const long k = influences > 0 ? influences : g.influences;
    operations += long((g.count + 7) / 8) * std::min(12 * k + 12, 15 * k);
  }
  return operations;
}

#if defined(__x86_64__)
[[gnu::target("avx2,fma")]] float fused_multiply_adds(long operations) {
  __m256 a[10];
  for (int i = 0; i < 10; ++i) a[i] = _mm256_set1_ps(float(i));
  const __m256 m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
  long done = 0;
  for (; done + 10 <= operations; done += 10)
    for (int i = 0; i < 10; ++i) a[i] = _mm256_fmadd_ps(a[i], m, c);
  for (; done < operations; ++done) a[0] = _mm256_fmadd_ps(a[0], m, c);
  __m256 sum = a[0];
  for (int i = 1; i < 10; ++i) sum = _mm256_add_ps(sum, a[i]);
  return _mm256_cvtss_f32(sum);
}
#endif

void arithmetic_floor(benchmark::State& state, int which, int influences) {
  const SkinBenchMesh& b = skin_bench_mesh(which);
  if (!b.error.empty()) {
    state.SkipWithError(b.error.c_str());
    return;
  }
#if defined(__x86_64__)
  if (!kinema::cpu_features().avx2_fma()) {
    state.SkipWithError("no AVX2 + FMA on this CPU");
    return;
  }
  const long operations = floor_operations(b.mesh, influences);
  for (auto _ : state) {
    long count = operations;
    benchmark::DoNotOptimize(count);  // opaque, so the pure call is not hoisted out of the loop
    benchmark::DoNotOptimize(fused_multiply_adds(count));
  }
  counters(state, double(b.mesh.vertex_count()), 0,
           influences > 0 ? influences : b.mesh.mean_influences());
  state.counters["operations"] = double(operations);
#else
  state.SkipWithError("the floor row is written for x86-64 (AVX2 + FMA)");
#endif
}

// The machine's copy bandwidth: memcpy between two buffers, bytes read + written per second.
void copy(benchmark::State& state) {
  const size_t bytes = size_t(state.range(0));
  std::vector<char> a(bytes, 1), c(bytes);
  for (auto _ : state) {
    std::memcpy(c.data(), a.data(), bytes);
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  state.counters["bytes_per_s"] =
      benchmark::Counter(2.0 * double(bytes), benchmark::Counter::kIsIterationInvariantRate,
                         benchmark::Counter::OneK::kIs1024);
}

}  // namespace

const SkinBenchMesh& skin_bench_mesh(int which) {
  static SkinBenchMesh meshes[2];
  static bool built[2] = {false, false};
  SkinBenchMesh& b = meshes[which];
  if (!built[which]) {
    built[which] = true;
    b.name = which == 0 ? "arnaud" : "arnaud_sub";
    try {
      build(b, which == 1);
    } catch (const std::exception& e) {
      b.error = e.what();
    }
  }
  return b;
}

double skin_bytes_per_vertex(const SkinMesh& mesh, int attributes, bool remap) {
  // Per attribute 12 bytes read + 12 written; per pair a 2-byte joint and a 4-byte weight.
  return 24.0 * attributes + 6.0 * mesh.mean_influences() + (remap ? 4.0 : 0.0);
}

}  // namespace kinema::bench

#ifndef KINEMA_OZZ_SKIN_PEER
void register_ozz_skin_benchmarks() {}
#endif

int main(int argc, char** argv) {
  using namespace kinema::bench;
  const char* kinds[] = {"Reference",       "PaddedSimd",           "SkinMesh",
                         "SkinMeshThreads", "SkinMeshStored",       "SkinMeshStoredThreads",
                         "SkinMeshBlended", "SkinMeshStoredBlended"};
  const bool avx512 = std::strcmp(kinema::skin_simd_kernels(), "avx512") == 0;
  for (const int which : {0, 1}) {
    const std::string mesh = which == 0 ? "arnaud" : "arnaud_sub";
    for (const bool dqs : {false, true})
      for (int attributes = 1; attributes <= 3; ++attributes)
        for (int k = 0; k < 8; ++k) {
          // The normal mode is LBS's; positions alone do not depend on it.
          if (Kind(k) >= Kind::blended_simd && (dqs || attributes == 1)) continue;
          const std::string name = std::string(dqs ? "DQS/" : "LBS/") + mesh + "/" +
                                   kAttributes[attributes] + "/" + kinds[k];
          benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& s) {
            skin(s, which, dqs, attributes, Kind(k));
          })->UseRealTime();
          // Where the AVX-512 LBS kernel runs, the one-thread SkinMesh rows again on the AVX2
          // kernels ("…/avx2"), for the side-by-side.
          const bool one_thread_mesh = Kind(k) == Kind::mesh_simd || Kind(k) == Kind::stored_simd ||
                                       Kind(k) >= Kind::blended_simd;
          if (!dqs && one_thread_mesh && avx512)
            benchmark::RegisterBenchmark((name + "/avx2").c_str(), [=](benchmark::State& s) {
              skin(s, which, dqs, attributes, Kind(k), true);
            })->UseRealTime();
        }
  }
  for (const int which : {0, 1})
    for (const int influences : {0, 4}) {
      const std::string name = std::string("Floor/") + (which == 0 ? "arnaud" : "arnaud_sub") +
                               (influences ? "/P/4influences" : "/P");
      benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& s) {
        arithmetic_floor(s, which, influences);
      })->UseRealTime();
    }
  benchmark::RegisterBenchmark("Copy/bytes", copy)
      ->Arg(1 << 20)
      ->Arg(4 << 20)
      ->Arg(256 << 20)
      ->UseRealTime();
  register_ozz_skin_benchmarks();
  // --kinema_sse: run kinema's SSE4.1 kernels even where the CPU has AVX2 + FMA.
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--kinema_sse") == 0) {
      kinema::set_skin_simd_avx2(false);
      for (int j = i; j + 1 < argc; ++j) argv[j] = argv[j + 1];
      --argc;
      break;
    }
  std::printf("kinema SIMD kernels: %s\n", kinema::skin_simd_kernels());
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
