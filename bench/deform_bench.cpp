// Deformers on top of skinning: delta mush per frame on a real mesh, RBF
// (pose-space deformation) evaluation, corrective shapes, and the offline weight bake.
//
//   ./build/native/kinema_deform_bench --benchmark_counters_tabular=true
//
// Meshes: Godette's body (VRM, tests/data/vrm, 2,479 vertices) and RiggedFigure (glTF, 370).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "bench_paths.h"
#include "kinema/io/asset_file.h"
#include "kinema/skeleton/skeleton.h"
#include "kinema/skin/corrective.h"
#include "kinema/skin/delta_mush.h"
#include "kinema/skin/psd.h"
#include "kinema/skin/skinning.h"

namespace kinema {
namespace {

struct Loaded {
  Asset asset;
  size_t mesh = 0;
  const Mesh& m() const { return asset.meshes[mesh]; }
  SkinMeshView view() const {
    return {m().positions, m().normals, {}, m().influences, m().joints, m().weights};
  }
  std::vector<Affine3x4f> palette(std::mt19937& rng, double max_rad) const {
    std::uniform_real_distribution<double> u(-1, 1);
    auto local = asset.skeleton.rest_pose();
    for (auto& t : local)
      t.rotation = t.rotation *
                   Quat::from_axis_angle(normalize(Vec3{u(rng), u(rng), u(rng)}), max_rad * u(rng));
    std::vector<Mat4> model(local.size());
    local_to_model(asset.skeleton.parents(), local, model);
    const Skin& skin = asset.skins[size_t(m().skin)];
    std::vector<Affine3x4f> out(skin.joints.size());
    skinning_palette(model, skin.joints, skin.inverse_bind, out);
    return out;
  }
};

// Godette's body: its three primitives share one vertex buffer; their triangles are merged so
// every vertex is part of the smoothed surface.
const Loaded& godette() {
  static const Loaded l = [] {
    Loaded g{load_asset(bench::test_data_dir() + "/vrm/Godette_vrm_v4.vrm"), 1};
    Mesh& body = g.asset.meshes[1];
    for (size_t i = 2; i < g.asset.meshes.size(); ++i)
      if (g.asset.meshes[i].positions == body.positions)
        body.indices.insert(body.indices.end(), g.asset.meshes[i].indices.begin(),
                            g.asset.meshes[i].indices.end());
    return g;
  }();
  return l;
}
const Loaded& figure() {
  static const Loaded l{load_asset(bench::test_data_dir() + "/gltf/RiggedFigure.glb"), 0};
  return l;
}

// Delta mush of an LBS-skinned frame (smoothing, frames, deltas), arg = smoothing iterations.
void BM_DeltaMushFrame(benchmark::State& state) {
  const Loaded& g = godette();
  DeltaMushSettings settings;
  settings.iterations = int(state.range(0));
  const DeltaMushBind bind = build_delta_mush(g.m().positions, g.m().indices, settings);
  std::mt19937 rng(1);
  const auto palette = g.palette(rng, 0.5);
  const size_t n = g.m().positions.size();
  std::vector<Vec3f> lbs(n), scratch(delta_mush_scratch_size(bind)), out(n);
  skin_lbs({g.m().positions, {}, {}, g.m().influences, g.m().joints, g.m().weights}, palette,
           {lbs, {}, {}});
  for (auto _ : state) {
    delta_mush_deform(bind, lbs, scratch, out);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * int64_t(n));
  state.counters["vertices"] = double(n);
  state.counters["triangles"] = double(g.m().indices.size() / 3);
}
BENCHMARK(BM_DeltaMushFrame)->Arg(5)->Arg(10)->Arg(20);

// The whole frame: LBS positions, then delta mush (10 iterations).
void BM_LbsPlusDeltaMush(benchmark::State& state) {
  const Loaded& g = godette();
  const DeltaMushBind bind = build_delta_mush(g.m().positions, g.m().indices);
  std::mt19937 rng(2);
  const auto palette = g.palette(rng, 0.5);
  const size_t n = g.m().positions.size();
  std::vector<Vec3f> lbs(n), scratch(delta_mush_scratch_size(bind)), out(n);
  const SkinMeshView view{g.m().positions, {}, {}, g.m().influences, g.m().joints, g.m().weights};
  for (auto _ : state) {
    skin_lbs(view, palette, {lbs, {}, {}});
    delta_mush_deform(bind, lbs, scratch, out);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * int64_t(n));
}
BENCHMARK(BM_LbsPlusDeltaMush);

// LBS alone on the same mesh, for scale.
void BM_LbsOnly(benchmark::State& state) {
  const Loaded& g = godette();
  std::mt19937 rng(2);
  const auto palette = g.palette(rng, 0.5);
  const size_t n = g.m().positions.size();
  std::vector<Vec3f> lbs(n);
  const SkinMeshView view{g.m().positions, {}, {}, g.m().influences, g.m().joints, g.m().weights};
  for (auto _ : state) {
    skin_lbs(view, palette, {lbs, {}, {}});
    benchmark::DoNotOptimize(lbs.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * int64_t(n));
}
BENCHMARK(BM_LbsOnly);

// One corrective weight from an RBF over 3 joint angles; arg = examples.
void BM_RbfScalar(benchmark::State& state) {
  const size_t examples = size_t(state.range(0)), dims = 3;
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1.5f, 1.5f);
  std::vector<float> poses(examples * dims), values(examples);
  for (auto& x : poses) x = u(rng);
  for (auto& x : values) x = u(rng);
  RbfSettings s;
  s.sigma = 1.0;
  s.linear_term = true;
  const RbfInterpolator rbf = RbfInterpolator::build(dims, poses, values, 1, s);
  std::vector<float> pose{0.1f, -0.4f, 0.7f};
  float out = 0;
  for (auto _ : state) {
    rbf.evaluate(pose, std::span<float>(&out, 1));
    benchmark::DoNotOptimize(out);
    pose[0] += 1e-7f;
  }
  state.SetItemsProcessed(int64_t(state.iterations()));
}
BENCHMARK(BM_RbfScalar)->Arg(4)->Arg(16)->Arg(64);

// A whole delta field (every Godette body vertex × 3) from 8 shoulder examples (quaternions).
void BM_RbfDeltaField(benchmark::State& state) {
  const Loaded& g = godette();
  const size_t n = g.m().positions.size(), examples = 8;
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> poses, values(examples * 3 * n);
  for (size_t i = 0; i < examples; ++i) {
    const Quatf q = Quatf::from_axis_angle(normalize(Vec3f{u(rng), u(rng), u(rng)}), 1.2f * u(rng));
    poses.insert(poses.end(), {q.x, q.y, q.z, q.w});
  }
  for (auto& x : values) x = 0.01f * u(rng);
  RbfSettings s;
  s.metric = PoseMetric::Quaternion;
  s.sigma = 1.0;
  const RbfInterpolator rbf = RbfInterpolator::build(1, poses, values, 3 * n, s);
  std::vector<Vec3f> out(n);
  const Quatf q = Quatf::from_axis_angle({0, 0, 1}, 0.4f);
  const std::vector<float> pose{q.x, q.y, q.z, q.w};
  for (auto _ : state) {
    std::copy(g.m().positions.begin(), g.m().positions.end(), out.begin());
    rbf.evaluate_add(pose, out);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * int64_t(n));
}
BENCHMARK(BM_RbfDeltaField);

// Corrective weights from joint angles and four shapes applied in bind space (two dense, two
// sparse with a tenth of the vertices), then LBS.
void BM_CorrectivesPlusLbs(benchmark::State& state) {
  const Loaded& g = godette();
  const size_t n = g.m().positions.size();
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-0.01f, 0.01f);
  std::vector<CorrectiveShape> shapes;
  for (int k = 0; k < 4; ++k) {
    CorrectiveShape s{
        "c" + std::to_string(k), k + 1, DriverAngle::Swing, {1, 0, 0}, 0.1f, 1.2f, {}, {}};
    for (size_t v = 0; v < n; ++v)
      if (k < 2 || v % 10 == 0) {
        if (k >= 2) s.vertices.push_back(uint32_t(v));
        s.deltas.push_back({u(rng), u(rng), u(rng)});
      }
    shapes.push_back(std::move(s));
  }
  std::vector<Quatf> local(size_t(g.asset.skeleton.joint_count()));
  for (size_t j = 0; j < local.size(); ++j)
    local[j] = Quatf::from_axis_angle({0, 1, 0}, 0.3f + 0.1f * float(j % 7));
  std::mt19937 prng(6);
  const auto palette = g.palette(prng, 0.5);
  std::vector<float> w(shapes.size());
  std::vector<Vec3f> corrected(n), skinned(n);
  for (auto _ : state) {
    corrective_weights(shapes, local, w);
    apply_correctives(g.m().positions, shapes, w, corrected);
    skin_lbs({corrected, {}, {}, g.m().influences, g.m().joints, g.m().weights}, palette,
             {skinned, {}, {}});
    benchmark::DoNotOptimize(skinned.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * int64_t(n));
}
BENCHMARK(BM_CorrectivesPlusLbs);

// Offline: baking LBS weights from delta mush over 12 random poses of RiggedFigure.
void BM_WeightBake(benchmark::State& state) {
  const Loaded& f = figure();
  std::mt19937 rng(7);
  std::vector<std::vector<Affine3x4f>> poses;
  for (int i = 0; i < 12; ++i) poses.push_back(f.palette(rng, 0.6));
  const SkinMeshView view{f.m().positions, {}, {}, f.m().influences, f.m().joints, f.m().weights};
  WeightBake bake;
  for (auto _ : state) {
    bake = bake_lbs_weights(view, f.m().indices, poses);
    benchmark::DoNotOptimize(bake.weights.data());
  }
  state.counters["rms_before_mm"] = bake.rms_before * 1e3;
  state.counters["rms_after_mm"] = bake.rms_after * 1e3;
  state.SetItemsProcessed(int64_t(state.iterations()) * int64_t(f.m().positions.size()));
}
BENCHMARK(BM_WeightBake)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace kinema

BENCHMARK_MAIN();
