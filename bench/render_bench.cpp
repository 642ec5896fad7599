// bench/render_bench.cpp — frames per second of the headless renderer (kinema_render) at 640×480
// for a skinned character and for a capsule skeleton, and GPU skinning with transform-feedback
// readback, on whatever EGL gives (a GPU, else Mesa's llvmpipe; the name is printed).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>
#include <vector>

#include "kinema/io/asset_file.h"
#include "kinema/render/clip_render.h"
#include "kinema/skeleton/skeleton.h"

namespace {

using namespace kinema;

const std::string kData = KINEMA_TEST_DATA_DIR;

// args: asset (0 Godette VRM, 1 RiggedFigure, 2 CMU BVH capsules), MSAA samples, skinning.
void BM_RenderFrame(benchmark::State& state) {
  const char* files[] = {"/vrm/Godette_vrm_v4.vrm", "/gltf/RiggedFigure.glb",
                         "/bvh/cmu_cgspeed_mb/02_01.bvh"};
  const Asset asset = load_asset(kData + files[state.range(0)]);
  ClipRenderOptions o;
  o.target.width = 640;
  o.target.height = 480;
  o.target.samples = int(state.range(1));
  o.skinning = state.range(2) ? SkinningMethod::Dqs : SkinningMethod::Lbs;
  ClipRenderer r(asset, asset.clips.empty() ? -1 : 0, o);
  const double duration = r.duration();
  size_t vertices = 0;
  for (size_t m = 0; m < r.renderer().mesh_count(); ++m) vertices += r.renderer().vertex_count(m);
  int frame = 0;
  for (auto _ : state) {
    const double t = duration > 0 ? duration * double(frame++ % 60) / 60.0 : 0.0;
    Image im = r.frame(t);
    benchmark::DoNotOptimize(im.rgba.data());
  }
  state.counters["fps"] =
      benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["vertices"] = double(vertices);
  state.SetLabel(r.renderer().gl_renderer());
}
BENCHMARK(BM_RenderFrame)
    ->ArgNames({"asset", "msaa", "dqs"})
    ->Args({0, 4, 0})
    ->Args({0, 4, 1})
    ->Args({0, 1, 0})
    ->Args({1, 4, 0})
    ->Args({2, 4, 0})
    ->Args({2, 1, 0})
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()
    ->UseRealTime();

// GPU skinning of every Godette mesh with readback (vertices per second).
void BM_GpuSkinReadback(benchmark::State& state) {
  const Asset asset = load_asset(kData + "/vrm/Godette_vrm_v4.vrm");
  Renderer r;
  r.set_asset(asset);
  const std::vector<Mat4> pose = rest_model_matrices(asset.skeleton);
  std::vector<std::vector<Vec3f>> out(r.mesh_count());
  size_t vertices = 0;
  for (size_t m = 0; m < r.mesh_count(); ++m) {
    out[m].resize(r.vertex_count(m));
    vertices += out[m].size();
  }
  const SkinningMethod method = state.range(0) ? SkinningMethod::Dqs : SkinningMethod::Lbs;
  for (auto _ : state)
    for (size_t m = 0; m < r.mesh_count(); ++m) r.gpu_skin(m, pose, method, out[m], {});
  state.counters["vertices/s"] =
      benchmark::Counter(double(state.iterations() * vertices), benchmark::Counter::kIsRate);
  state.SetLabel(r.gl_renderer());
}
BENCHMARK(BM_GpuSkinReadback)
    ->ArgName("dqs")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
