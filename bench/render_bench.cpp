// bench/render_bench.cpp — frames per second of the headless renderer (kinema_render) at 640×480
// for a skinned character and for a capsule skeleton, GPU skinning with transform-feedback
// readback, and particles drawn as billboards, on whatever EGL gives (a GPU, else Mesa's
// llvmpipe; the name is printed).
#include <benchmark/benchmark.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "bench_paths.h"
#include "kinema/io/asset_file.h"
#include "kinema/render/clip_render.h"
#include "kinema/render/environment.h"
#include "kinema/skeleton/skeleton.h"

namespace {

using namespace kinema;

const std::string kData = kinema::bench::test_data_dir();

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
  // The first frames compile the shaders for this state (llvmpipe: about a second); not timed.
  for (int warm = 0; warm < 2; ++warm) r.frame(0);
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

// xorshift64*, in [0, 1).
float uniform(std::uint64_t& seed) {
  seed ^= seed >> 12, seed ^= seed << 25, seed ^= seed >> 27;
  return float((seed * 2685821657736338717ull) >> 40) / float(1 << 24);
}

// Particles as billboards: a frame of N sprites (2–5 cm, random colours, 80 % opaque) in a 2 m
// cloud in front of the camera, drawn (alpha: sorted back to front each frame; or additive) and
// read back, at 640×480 with 4× MSAA. args: count, renderer (0 software: llvmpipe; 1 GPU: skipped
// when EGL has none), additive.
void BM_RenderBillboards(benchmark::State& state) {
  RendererOptions o;
  o.prefer_gpu = state.range(1) != 0;
  Renderer r(o);
  if (state.range(1) != 0 && r.software()) {
    state.SkipWithError("no GPU: EGL gave the software rasterizer");
    return;
  }
  std::vector<Billboard> particles(size_t(state.range(0)));
  std::uint64_t seed = 12345;
  auto next = [&seed] { return uniform(seed); };
  for (Billboard& b : particles) {
    b.position = {2 * next() - 1, 2 * next(), 2 * next() - 1};
    b.size = 0.02f + 0.03f * next();
    b.colour = {next(), next(), next()};
    b.opacity = 0.8f;
  }
  DrawOptions d;
  d.billboards = particles;
  d.billboard_blend = state.range(2) ? BillboardBlend::Additive : BillboardBlend::Alpha;
  const Camera camera;  // from (0, 1, 4) towards (0, 1, 0)
  for (auto _ : state) {
    Image im = r.render({}, camera, d);
    benchmark::DoNotOptimize(im.rgba.data());
  }
  state.counters["fps"] =
      benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["particles/s"] = benchmark::Counter(
      double(state.iterations()) * double(particles.size()), benchmark::Counter::kIsRate);
  state.SetLabel(r.gl_renderer());
}
BENCHMARK(BM_RenderBillboards)
    ->ArgNames({"particles", "gpu", "additive"})
    ->Args({0, 0, 0})
    ->Args({10000, 0, 0})
    ->Args({10000, 0, 1})
    ->Args({100000, 0, 0})
    ->Args({0, 1, 0})
    ->Args({10000, 1, 0})
    ->Args({10000, 1, 1})
    ->Args({100000, 1, 0})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Hair: `strands` strands of 16 segments hanging from the top of a 0.1 m sphere of roots at 1.6 m
// (a head's worth, 30 cm long, wavy), drawn as camera-facing ribbons (one draw call) and read
// back, at 640×480 with 4× MSAA. args: strands, renderer (0 software: llvmpipe; 1 GPU: skipped
// when EGL has none).
void BM_RenderStrands(benchmark::State& state) {
  RendererOptions o;
  o.prefer_gpu = state.range(1) != 0;
  Renderer r(o);
  if (state.range(1) != 0 && r.software()) {
    state.SkipWithError("no GPU: EGL gave the software rasterizer");
    return;
  }
  constexpr int kPoints = 17;
  const auto strands = size_t(state.range(0));
  std::vector<Vec3f> points;
  std::vector<std::array<uint32_t, 2>> segments;
  std::uint64_t seed = 12345;
  for (size_t s = 0; s < strands; ++s) {
    const float azimuth = 6.2831853f * uniform(seed), polar = 1.2f * uniform(seed);
    const Vec3f out{std::sin(polar) * std::cos(azimuth), std::cos(polar),
                    std::sin(polar) * std::sin(azimuth)};
    const Vec3f root = Vec3f{0, 1.6f, 0} + out * 0.1f;
    const float phase = 6.2831853f * uniform(seed);
    for (int k = 0; k < kPoints; ++k) {
      const float u = float(k) / float(kPoints - 1);
      const float wave = 0.01f * std::sin(phase + 12 * u);
      points.push_back(root + Vec3f{out.x * 0.05f * u + wave, -0.3f * u, out.z * 0.05f * u});
      if (k > 0) segments.push_back({uint32_t(points.size() - 2), uint32_t(points.size() - 1)});
    }
  }
  DrawOptions d;
  d.strands.positions = points;
  d.strands.segments = segments;
  Camera camera;
  camera.eye = {0, 1.5f, 1.2f};
  camera.target = {0, 1.45f, 0};
  for (auto _ : state) {
    Image im = r.render({}, camera, d);
    benchmark::DoNotOptimize(im.rgba.data());
  }
  state.counters["fps"] =
      benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["segments/s"] = benchmark::Counter(
      double(state.iterations()) * double(segments.size()), benchmark::Counter::kIsRate);
  state.SetLabel(r.gl_renderer());
}
BENCHMARK(BM_RenderStrands)
    ->ArgNames({"strands", "gpu"})
    ->Args({1000, 0})
    ->Args({10000, 0})
    ->Args({1000, 1})
    ->Args({10000, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

// What the look costs: Godette at 640×480, 4× MSAA, LBS. args: materials, shadows, a light probe
// (the default sky, prefiltered, as set_environment uploads it).
void BM_RenderLook(benchmark::State& state) {
  const Asset asset = load_asset(kData + "/vrm/Godette_vrm_v4.vrm");
  ClipRenderOptions o;
  o.target.width = 640;
  o.target.height = 480;
  o.materials = state.range(0) != 0;
  o.shadows = state.range(1) != 0;
  ClipRenderer r(asset, asset.clips.empty() ? -1 : 0, o);
  if (state.range(2)) r.renderer().set_environment(default_sky());
  const double duration = r.duration();
  // The first frames compile the shaders for this state (llvmpipe: about a second); not timed.
  for (int warm = 0; warm < 2; ++warm) r.frame(0);
  int frame = 0;
  for (auto _ : state) {
    const double t = duration > 0 ? duration * double(frame++ % 60) / 60.0 : 0.0;
    Image im = r.frame(t);
    benchmark::DoNotOptimize(im.rgba.data());
  }
  state.counters["fps"] =
      benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
  state.SetLabel(r.renderer().gl_renderer());
}
BENCHMARK(BM_RenderLook)
    ->ArgNames({"materials", "shadows", "probe"})
    ->Args({0, 0, 0})
    ->Args({1, 0, 0})
    ->Args({1, 1, 0})
    ->Args({1, 1, 1})
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()
    ->UseRealTime();

// A light probe made ready: irradiance_sh9 and a 6-level prefilter_specular chain, for a map of
// 256×128 (the default sky) and 1,024×512.
void BM_EnvironmentPrepare(benchmark::State& state) {
  const Environment sky = default_sky();
  const Environment probe = state.range(0) == 256 ? sky
                                                  : resample_environment(sky, int(state.range(0)),
                                                                         int(state.range(0)) / 2);
  for (auto _ : state) {
    const auto sh = irradiance_sh9(probe);
    const auto chain = prefilter_specular(probe, 6);
    benchmark::DoNotOptimize(sh.data());
    benchmark::DoNotOptimize(chain.data());
  }
}
BENCHMARK(BM_EnvironmentPrepare)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond);

// Render passes of a Godette frame at 640×480 (beauty, shadow-only, depth, normals, motion).
void BM_RenderPasses(benchmark::State& state) {
  const Asset asset = load_asset(kData + "/vrm/Godette_vrm_v4.vrm");
  ClipRenderOptions o;
  o.target.width = 640;
  o.target.height = 480;
  ClipRenderer r(asset, asset.clips.empty() ? -1 : 0, o);
  const std::vector<Mat4> pose = r.pose_at(0);
  const Camera camera = r.camera_at(0);
  for (int warm = 0; warm < 2; ++warm) r.renderer().render_passes(pose, camera, {}, pose, &camera);
  for (auto _ : state) {
    RenderPasses p = r.renderer().render_passes(pose, camera, {}, pose, &camera);
    benchmark::DoNotOptimize(p.depth.data());
  }
  state.SetLabel(r.renderer().gl_renderer());
}
BENCHMARK(BM_RenderPasses)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();

BENCHMARK_MAIN();
