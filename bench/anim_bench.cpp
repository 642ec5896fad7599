// bench/anim_bench.cpp — the runtime animation core, per character-frame and per joint.
//
// The ProAnimationBank "pab" walk (ozz-animation's own sample data, tests/data/fbx/ozz_pab):
// sampling (60 Hz forward playback with a cache; random seeks), 2- and 3-layer blends, additive
// (exact slerp and the cheaper nlerp), local → model, and a crowd of 1,000 characters per frame
// on all cores; the blends and local → model again on a 100-joint skeleton (rows *100, the CMU
// iClone CC3 BVH of tests/data). When $KINEMA_OZZ_DATA holds pab_walk.glb (the GLB that ozz's
// gltf2ozz converted for bench/peers/ozz_anim_peer.cpp) kinema reads that same file, so both sides
// play the same skeleton and clip; otherwise it reads the FBX.
//
// KINEMA_ANIM_SSE=1 runs blend and local → model on their SSE4.1 kernels instead of AVX2 + FMA.
//
// Counters: per_joint (seconds per joint), joints, and for sampling the clip's bytes and
// bytes_per_s (bytes per second of clip). Kinema/SamplingCompact: the same clip in the Compact
// layout (RuntimeClipFormat::Compact), the one to hold against ozz's memory. The Ozz/ benchmarks of
// the same names run in the same program when it is built with -DKINEMA_OZZ_ROOT (see
// BENCHMARKS.md).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "bench_paths.h"
#include "kinema/blend/pose_ops.h"
#include "kinema/clip/runtime_clip.h"
#include "kinema/graph/graph.h"
#include "kinema/graph/graph_instance.h"
#include "kinema/io/asset_file.h"
#include "kinema/io/graph_file.h"
#include "kinema/skeleton/runtime_skeleton.h"
#include "kinema/skeleton/skeleton.h"

namespace {

using namespace kinema;

// KINEMA_ANIM_SSE=1 forbids the AVX2 + FMA kernels of blend and local → model (the SSE4.1 ones run,
// as on CPUs without AVX2), to measure what they add.
const bool kSseOnly = [] {
  const char* env = std::getenv("KINEMA_ANIM_SSE");
  const bool sse = env && std::string(env) == "1";
  if (sse) set_blend_avx2(false), set_local_to_model_avx2(false);
  return sse;
}();

struct Data {
  RuntimeSkeleton skeleton;
  RuntimeClip clip;
  std::string source;
};

const Data& data() {
  static const Data* loaded = [] {
    auto* d = new Data;  // lives until exit
    std::string path = kinema::bench::test_data_dir() + "/fbx/ozz_pab/walk.fbx";
    if (const char* dir = std::getenv("KINEMA_OZZ_DATA"); dir && *dir) {
      const std::string glb = std::string(dir) + "/pab_walk.glb";
      if (std::filesystem::exists(glb)) path = glb;
    }
    const Asset asset = load_asset(path);
    d->skeleton = RuntimeSkeleton::build(asset.skeleton);
    d->clip = RuntimeClip::build(asset.clips.at(0), asset.skeleton);
    d->source = path;
    return d;
  }();
  return *loaded;
}

// A 100-joint skeleton: the CMU iClone CC3 retarget of motion 07_12 (Reallusion's CC3 rig with
// finger, twist and facial-bone joints), from the repository's test data. bench/peers/
// ozz_anim_peer.cpp builds ozz's skeleton and inputs from the same file (its *100 rows).
const Data& data100() {
  static const Data* loaded = [] {
    auto* d = new Data;  // lives until exit
    d->source = kinema::bench::test_data_dir() + "/bvh/cmu_iclone_cc3/007_12.bvh";
    const Asset asset = load_asset(d->source);
    d->skeleton = RuntimeSkeleton::build(asset.skeleton);
    d->clip = RuntimeClip::build(asset.clips.at(0), asset.skeleton);
    return d;
  }();
  return *loaded;
}

void report(benchmark::State& state, const Data& d) {
  const double joints = d.skeleton.joint_count();
  state.counters["joints"] = joints;
  if (kSseOnly) state.SetLabel("sse4.1 kernels");
  state.counters["per_joint"] = benchmark::Counter(
      joints, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.SetItemsProcessed(state.iterations() * d.skeleton.joint_count());
}

// The largest distance (mm) between a joint's model-space position sampled from `clip` and from
// the raw clip (double precision), at every frame and midpoint: the error that goes with the
// clip's bytes.
double max_model_error_mm(const RuntimeClip& clip) {
  static const Asset asset = load_asset(data().source);
  const Skeleton& skeleton = asset.skeleton;
  const size_t n = static_cast<size_t>(skeleton.joint_count());
  std::vector<Transform> raw(n), runtime(n);
  std::vector<Mat4> raw_model(n), runtime_model(n);
  std::vector<SoaTransform> pose(static_cast<size_t>(clip.soa_count()));
  double worst = 0;
  for (int i = 0; i <= 2 * (clip.frame_count() - 1); ++i) {
    const double t = std::min<double>(clip.duration(), i / (2.0 * clip.sample_rate()));
    sample_pose(asset.clips.at(0), skeleton, t, WrapMode::Clamp, raw);
    sample(clip, static_cast<float>(t), pose);
    for (size_t j = 0; j < n; ++j) runtime[j] = Transform(get_joint(pose, static_cast<int>(j)));
    local_to_model(skeleton.parents(), raw, raw_model);
    local_to_model(skeleton.parents(), runtime, runtime_model);
    for (size_t j = 0; j < n; ++j)
      worst = std::max(
          worst, length(raw_model[j].translation_part() - runtime_model[j].translation_part()));
  }
  return worst * 1000;  // the pab walk is in metres
}

void report_memory(benchmark::State& state, const RuntimeClip& clip) {
  const double bytes = static_cast<double>(clip.memory_bytes());
  state.counters["bytes"] = bytes;
  state.counters["bytes_per_s"] = bytes / clip.duration();
  state.counters["max_error_mm"] = max_model_error_mm(clip);
}

// The pab walk in the Compact layout (RuntimeClipFormat::Compact: only the joints that move,
// rotations as their smallest three components), for the Kinema/SamplingCompact rows. A channel
// that moves less than the layout's own precision (1e-4: 0.1 mm, 2e-4 rad) is stored once.
constexpr RuntimeClipOptions kCompactOptions{.constant_tolerance = 1e-4,
                                             .format = RuntimeClipFormat::Compact};
const RuntimeClip& compact_clip() {
  static const RuntimeClip* clip = [] {
    const Asset asset = load_asset(data().source);
    return new RuntimeClip(RuntimeClip::build(asset.clips.at(0), asset.skeleton, kCompactOptions));
  }();
  return *clip;
}

std::vector<SoaTransform> sampled_pose(const Data& d, float ratio) {
  std::vector<SoaTransform> pose(static_cast<size_t>(d.clip.soa_count()));
  sample(d.clip, ratio * d.clip.duration(), pose);
  return pose;
}

// 60 Hz playback with a per-instance cache, looping (as ozz's forward benchmark does).
void KinemaSamplingForward(benchmark::State& state, const RuntimeClip& clip) {
  std::vector<SoaTransform> pose(static_cast<size_t>(clip.soa_count()));
  SamplingCache cache(clip);
  const float duration = clip.duration();
  float time = 0;
  for (auto _ : state) {
    sample(clip, time, cache, pose);
    benchmark::DoNotOptimize(pose.data());
    benchmark::ClobberMemory();
    time += 1.0f / 60.0f;
    if (time > duration) time -= duration;
  }
  report(state, data());
  report_memory(state, clip);
}

// Random times, one reused cache (every call misses it and decodes both frames).
void KinemaSamplingRandomSeek(benchmark::State& state, const RuntimeClip& clip) {
  std::vector<float> times(4096);
  uint64_t s = 0x9E3779B97F4A7C15ull;
  for (float& t : times) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    t = static_cast<float>(static_cast<double>(s >> 11) / static_cast<double>(1ull << 53)) *
        clip.duration();
  }
  std::vector<SoaTransform> pose(static_cast<size_t>(clip.soa_count()));
  SamplingCache cache(clip);
  size_t i = 0;
  for (auto _ : state) {
    sample(clip, times[i], cache, pose);
    i = (i + 1) & (times.size() - 1);
    benchmark::DoNotOptimize(pose.data());
    benchmark::ClobberMemory();
  }
  report(state, data());
  report_memory(state, clip);
}

void KinemaSamplingForwardFast(benchmark::State& state) {
  KinemaSamplingForward(state, data().clip);
}
void KinemaSamplingRandomSeekFast(benchmark::State& state) {
  KinemaSamplingRandomSeek(state, data().clip);
}
void KinemaSamplingForwardCompact(benchmark::State& state) {
  KinemaSamplingForward(state, compact_clip());
}
void KinemaSamplingRandomSeekCompact(benchmark::State& state) {
  KinemaSamplingRandomSeek(state, compact_clip());
}

// `layers` full-body layers of the clip at different times, weights 1, 1/2, 1/3, no masks.
void KinemaBlend(benchmark::State& state, const Data& d, int layers) {
  std::vector<std::vector<SoaTransform>> inputs;
  std::vector<BlendLayer> job(static_cast<size_t>(layers));
  inputs.reserve(static_cast<size_t>(layers));
  for (int l = 0; l < layers; ++l) {
    inputs.push_back(sampled_pose(d, 0.1f + 0.3f * static_cast<float>(l)));
    job[static_cast<size_t>(l)] = {inputs.back(), 1.0f / static_cast<float>(l + 1)};
  }
  std::vector<SoaTransform> pose(inputs[0].size());
  for (auto _ : state) {
    blend(job, d.skeleton.rest_pose(), d.skeleton.joint_count(), pose);
    benchmark::DoNotOptimize(pose.data());
    benchmark::ClobberMemory();
  }
  report(state, d);
}
void KinemaBlend2(benchmark::State& state) { KinemaBlend(state, data(), 2); }
void KinemaBlend3(benchmark::State& state) { KinemaBlend(state, data(), 3); }
void KinemaBlend2x100(benchmark::State& state) { KinemaBlend(state, data100(), 2); }
void KinemaBlend3x100(benchmark::State& state) { KinemaBlend(state, data100(), 3); }

// An additive pose (clip at 0.6 minus its first frame) applied at weight 0.7 on the clip at 0.2.
void KinemaAdditive(benchmark::State& state, AdditiveRotation mode) {
  const Data& d = data();
  const auto base = sampled_pose(d, 0.2f), reference = sampled_pose(d, 0.0f);
  auto additive = sampled_pose(d, 0.6f);
  make_additive(additive, reference, additive);
  std::vector<SoaTransform> pose(base.size());
  for (auto _ : state) {
    apply_additive(base, additive, 0.7f, {}, d.skeleton.joint_count(), pose, mode);
    benchmark::DoNotOptimize(pose.data());
    benchmark::ClobberMemory();
  }
  report(state, d);
}
void KinemaAdditiveSlerp(benchmark::State& state) {
  KinemaAdditive(state, AdditiveRotation::Slerp);
}
void KinemaAdditiveNlerp(benchmark::State& state) {
  KinemaAdditive(state, AdditiveRotation::Nlerp);
}

void KinemaLocalToModel(benchmark::State& state, const Data& d) {
  const auto local = sampled_pose(d, 0.25f);
  std::vector<Mat4f> model(static_cast<size_t>(d.skeleton.joint_count()));
  for (auto _ : state) {
    local_to_model(d.skeleton, local, model);
    benchmark::DoNotOptimize(model.data());
    benchmark::ClobberMemory();
  }
  state.SetLabel(local_to_model_kernel());
  report(state, d);
}

void KinemaLocalToModel67(benchmark::State& state) { KinemaLocalToModel(state, data()); }
void KinemaLocalToModel100(benchmark::State& state) { KinemaLocalToModel(state, data100()); }

// A crowd: 1,000 characters, each sampling two clips (walk at two phases, own caches),
// blending them and computing model matrices, on all hardware threads. Time per crowd frame.
void KinemaCrowd1000(benchmark::State& state) {
  const Data& d = data();
  constexpr int kCharacters = 1000;
  const size_t soa = static_cast<size_t>(d.clip.soa_count());
  const size_t joints = static_cast<size_t>(d.skeleton.joint_count());
  struct Character {
    SamplingCache a, b;
    float time = 0;
    std::vector<SoaTransform> pa, pb, blended;
    std::vector<Mat4f> model;
  };
  std::vector<Character> crowd(kCharacters);
  for (int i = 0; i < kCharacters; ++i) {
    Character& c = crowd[static_cast<size_t>(i)];
    c.a.reset(d.clip), c.b.reset(d.clip);
    c.time = d.clip.duration() * static_cast<float>(i) / kCharacters;
    c.pa.resize(soa), c.pb.resize(soa), c.blended.resize(soa), c.model.resize(joints);
  }
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  auto update = [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      Character& c = crowd[i];
      Playback p{c.time, 1.0f, true};
      p.advance(1.0f / 60.0f, d.clip.duration());
      c.time = p.time;
      sample(d.clip, c.time, c.a, c.pa);
      sample(d.clip, std::fmod(c.time + 0.5f * d.clip.duration(), d.clip.duration()), c.b, c.pb);
      const BlendLayer layers[] = {{c.pa, 0.7f}, {c.pb, 0.3f}};
      blend(layers, d.skeleton.rest_pose(), d.skeleton.joint_count(), c.blended);
      local_to_model(d.skeleton, c.blended, c.model);
    }
  };
  for (auto _ : state) {
    std::vector<std::thread> pool;
    const size_t chunk = (kCharacters + threads - 1) / threads;
    for (unsigned t = 1; t < threads; ++t)
      pool.emplace_back(update, std::min<size_t>(kCharacters, t * chunk),
                        std::min<size_t>(kCharacters, (t + 1) * chunk));
    update(0, std::min<size_t>(kCharacters, chunk));
    for (std::thread& t : pool) t.join();
    benchmark::ClobberMemory();
  }
  state.counters["threads"] = threads;
  state.counters["characters"] = kCharacters;
}

// A whole animation graph per character-frame: the demo's locomotion graph (a state machine
// whose state is a phase-synchronized, speed-matched walk/run blend space with root motion),
// speed sweeping 1.5 → 4.5 m/s; update(1/60 s) + evaluate() into a local pose.
void KinemaGraphLocomotion(benchmark::State& state) {
  static const BuiltGraph built =
      load_anim_graph(kinema::bench::source_dir() + "/data/demo/locomotion.graph.json");
  const AnimGraph& graph = built.graph;
  GraphInstance instance(graph);
  const ParamHandle speed = instance.parameter("speed");
  std::vector<SoaTransform> pose(static_cast<size_t>(graph.soa_count()));
  int frame = 0;
  for (auto _ : state) {
    instance.set_float(speed, 1.5f + 3.0f * static_cast<float>(frame % 600) / 600.0f);
    instance.update(1.0f / 60.0f);
    instance.evaluate(pose);
    benchmark::DoNotOptimize(pose.data());
    benchmark::ClobberMemory();
    ++frame;
  }
  const double joints = graph.joint_count();
  state.counters["joints"] = joints;
  state.counters["per_joint"] = benchmark::Counter(
      joints, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

BENCHMARK(KinemaSamplingForwardFast)->Name("Kinema/Sampling/Forward");
BENCHMARK(KinemaSamplingRandomSeekFast)->Name("Kinema/Sampling/RandomSeek");
BENCHMARK(KinemaSamplingForwardCompact)->Name("Kinema/SamplingCompact/Forward");
BENCHMARK(KinemaSamplingRandomSeekCompact)->Name("Kinema/SamplingCompact/RandomSeek");
BENCHMARK(KinemaBlend2)->Name("Kinema/Blend/2");
BENCHMARK(KinemaBlend3)->Name("Kinema/Blend/3");
BENCHMARK(KinemaAdditiveSlerp)->Name("Kinema/Additive/Slerp");
BENCHMARK(KinemaAdditiveNlerp)->Name("Kinema/Additive/Nlerp");
BENCHMARK(KinemaLocalToModel67)->Name("Kinema/LocalToModel");
BENCHMARK(KinemaBlend2x100)->Name("Kinema/Blend100/2");
BENCHMARK(KinemaBlend3x100)->Name("Kinema/Blend100/3");
BENCHMARK(KinemaLocalToModel100)->Name("Kinema/LocalToModel100");
BENCHMARK(KinemaGraphLocomotion)->Name("Kinema/Graph/Locomotion");
BENCHMARK(KinemaCrowd1000)->Name("Kinema/Crowd1000")->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
BENCHMARK_MAIN();
