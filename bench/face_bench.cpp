// bench/face_bench.cpp — faces and crowds: blend shapes on Godette's face
// (15 targets, dense and sparse), the FACS combination evaluation, the bounded blendshape solve
// per frame (52 shapes × 300 tracked points from a random basis, and Godette's 15 real targets),
// float → half conversion and a whole VAT bake of RiggedFigure's clip.
//
// items_per_second: vertices for blend shapes, frames for solves, values for half conversion,
// frames for the VAT bake.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "bench_paths.h"
#include "kinema/io/asset_file.h"
#include "kinema/skin/blend_shapes.h"
#include "kinema/skin/face_solve.h"
#include "kinema/skin/facs.h"
#include "kinema/skin/vat.h"

namespace {

using namespace kinema;

const std::string kData = kinema::bench::test_data_dir();

const Mesh& godette_face() {
  static const Asset a = load_asset(kData + "/vrm/Godette_vrm_v4.vrm");
  for (const Mesh& m : a.meshes)
    if (m.morph_targets.size() == 15) return m;
  std::abort();
}

/// Weights: all 15 non-zero (range(0) = 15) or the first `range(0)` non-zero.
std::vector<float> face_weights(int nonzero) {
  std::vector<float> w(15, 0.0f);
  for (int k = 0; k < nonzero; ++k) w[size_t(k)] = 0.3f + 0.04f * float(k);
  return w;
}

void BM_BlendShapesGodetteDense(benchmark::State& state) {
  const Mesh& face = godette_face();
  const auto views = morph_target_views(face);
  const std::vector<float> w = face_weights(int(state.range(0)));
  std::vector<Vec3f> p(face.vertex_count()), n(face.vertex_count());
  for (auto _ : state) {
    apply_blend_shapes(face.positions, face.normals, views, w, p, n);
    benchmark::DoNotOptimize(p.data());
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * int64_t(face.vertex_count()));
}
BENCHMARK(BM_BlendShapesGodetteDense)->Arg(3)->Arg(15);

void BM_BlendShapesGodetteSparse(benchmark::State& state) {
  const Mesh& face = godette_face();
  const BlendShapeSet set = make_blend_shape_set(face);
  const std::vector<float> w = face_weights(int(state.range(0)));
  std::vector<Vec3f> p(face.vertex_count()), n(face.vertex_count());
  for (auto _ : state) {
    apply_blend_shapes(set, face.positions, face.normals, w, p, n);
    benchmark::DoNotOptimize(p.data());
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * int64_t(face.vertex_count()));
}
BENCHMARK(BM_BlendShapesGodetteSparse)->Arg(3)->Arg(15);

void BM_FacsEvaluate52Plus40Combinations(benchmark::State& state) {
  std::vector<std::string> names;
  for (int i = 0; i < 52; ++i) names.push_back("s" + std::to_string(i));
  FacsRig rig(names);
  for (int c = 0; c < 40; ++c) {
    std::vector<std::string> d{names[size_t(c)], names[size_t(c + 5)]};
    if (c % 4 == 0) d.push_back(names[size_t(c + 11)]);
    rig.add_combination("c" + std::to_string(c), d);
  }
  std::vector<float> base(52, 0.5f), out(rig.shape_count());
  for (auto _ : state) {
    rig.evaluate(base, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(int64_t(state.iterations()));
}
BENCHMARK(BM_FacsEvaluate52Plus40Combinations);

/// A random 52-shape basis over 300 tracked points (900 rows), and frames of displacements from
/// slowly drifting weights (about a third of them outside [0, 1], so the bounds are active).
struct Synthetic {
  size_t rows = 900, cols = 52;
  std::vector<float> B;
  std::vector<std::vector<float>> frames;
  Synthetic() {
    std::mt19937 rng(42);
    std::normal_distribution<float> g(0.0f, 0.01f);
    std::uniform_real_distribution<float> u(-0.3f, 1.3f);
    B.resize(rows * cols);
    for (float& x : B) x = g(rng);
    std::vector<float> w(cols);
    for (float& x : w) x = u(rng);
    for (int f = 0; f < 64; ++f) {
      for (float& x : w) x += 0.05f * (u(rng) - 0.5f);
      std::vector<float> d(rows, 0.0f);
      for (size_t k = 0; k < cols; ++k)
        for (size_t i = 0; i < rows; ++i) d[i] += B[k * rows + i] * w[k];
      frames.push_back(std::move(d));
    }
  }
};

void BM_Solve52Shapes300Points(benchmark::State& state) {
  static const Synthetic s;
  BlendshapeSolveOptions o;
  o.warm_start = state.range(0) != 0;
  o.sparsity = state.range(1) != 0 ? 1e-5 : 0.0;
  BlendshapeSolver solver(s.B, s.rows, s.cols, o);
  std::vector<float> w(s.cols);
  size_t f = 0;
  int64_t iterations = 0;
  BlendshapeSolveReport report;
  for (auto _ : state) {
    solver.solve(s.frames[f], w, &report);
    iterations += report.iterations;
    f = (f + 1) % s.frames.size();
    benchmark::DoNotOptimize(w.data());
  }
  state.SetItemsProcessed(int64_t(state.iterations()));
  state.counters["active_set_changes"] =
      benchmark::Counter(double(iterations), benchmark::Counter::kAvgIterations);
}
BENCHMARK(BM_Solve52Shapes300Points)
    ->ArgNames({"warm", "sparse"})
    ->Args({0, 0})
    ->Args({1, 0})
    ->Args({1, 1});

void BM_SolveGodette15Shapes(benchmark::State& state) {
  const Mesh& face = godette_face();
  std::vector<size_t> used;
  for (size_t i = 0; i < face.vertex_count(); ++i)
    for (const MorphTarget& t : face.morph_targets)
      if (length(t.position_deltas[i]) > 0) {
        used.push_back(i);
        break;
      }
  const size_t rows = used.size() * 3, cols = 15;
  std::vector<float> B(rows * cols);
  for (size_t k = 0; k < cols; ++k)
    for (size_t j = 0; j < used.size(); ++j)
      for (int c = 0; c < 3; ++c)
        B[k * rows + j * 3 + size_t(c)] = face.morph_targets[k].position_deltas[used[j]][c];
  std::vector<float> d(rows, 0.0f), w(cols);
  for (size_t k = 0; k < cols; ++k)
    for (size_t i = 0; i < rows; ++i) d[i] += B[k * rows + i] * (0.1f + 0.05f * float(k));
  BlendshapeSolver solver(B, rows, cols);
  for (auto _ : state) {
    solver.solve(d, w);
    benchmark::DoNotOptimize(w.data());
  }
  state.SetItemsProcessed(int64_t(state.iterations()));
  state.counters["rows"] = double(rows);
}
BENCHMARK(BM_SolveGodette15Shapes);

void BM_FloatToHalf(benchmark::State& state) {
  std::vector<float> in(4096);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  for (float& x : in) x = u(rng);
  std::vector<uint16_t> out(in.size());
  for (auto _ : state) {
    for (size_t i = 0; i < in.size(); ++i) out[i] = float_to_half(in[i]);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * int64_t(in.size()));
}
BENCHMARK(BM_FloatToHalf);

void BM_VatBakeRiggedFigure(benchmark::State& state) {
  static const Asset a = load_asset(kData + "/gltf/RiggedFigure.glb");
  VatBakeOptions o;
  o.skinning = state.range(0) ? VatSkinning::Dqs : VatSkinning::Lbs;
  uint32_t frames = 0;
  for (auto _ : state) {
    const VatBake bake = bake_vat(a, o);
    frames = bake.frame_count;
    benchmark::DoNotOptimize(bake.texels.data());
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * frames);
}
BENCHMARK(BM_VatBakeRiggedFigure)->ArgName("dqs")->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
