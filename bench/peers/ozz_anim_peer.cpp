// bench/peers/ozz_anim_peer.cpp — ozz-animation's runtime jobs, the peer of kinema's runtime
// animation core, measured in the same program, on the same clip, machine and flags.
//
// Compiled into kinema_anim_bench only when CMake is given -DKINEMA_OZZ_ROOT (an ozz build tree
// or install prefix; BENCHMARKS.md has the commands that build ozz and produce the data). Nothing
// of ozz is part of kinema: this file only calls its public API.
//
// Data: $KINEMA_OZZ_DATA/skeleton.ozz and $KINEMA_OZZ_DATA/walk.ozz, made by ozz's gltf2ozz from
// the same GLB that kinema's side of the benchmark reads (the ProAnimationBank walk of
// tests/data/fbx/ozz_pab). Without them every Ozz/ benchmark reports an error and is skipped.
//
// One character on one core. Every benchmark reports, besides the time per call:
//   per_joint   seconds per joint (printed with an SI prefix: 4.87n = 4.87 ns per joint),
//   joints      joints in the skeleton,
// and the sampling ones the clip's memory: bytes (Animation::size()) and bytes_per_s (bytes per
// second of clip).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "ozz/animation/runtime/animation.h"
#include "ozz/animation/runtime/blending_job.h"
#include "ozz/animation/runtime/local_to_model_job.h"
#include "ozz/animation/runtime/sampling_job.h"
#include "ozz/animation/runtime/skeleton.h"
#include "ozz/base/io/archive.h"
#include "ozz/base/io/stream.h"
#include "ozz/base/maths/simd_math.h"
#include "ozz/base/maths/soa_transform.h"

namespace {

struct OzzData {
  ozz::animation::Skeleton skeleton;
  ozz::animation::Animation animation;
  std::string error;  // empty when loaded
};

template <typename T>
bool load_archive(const std::string& path, T& object) {
  ozz::io::File file(path.c_str(), "rb");
  if (!file.opened()) return false;
  ozz::io::IArchive archive(&file);
  if (!archive.TestTag<T>()) return false;
  archive >> object;
  return true;
}

const OzzData& data() {
  static const OzzData* loaded = [] {
    auto* d = new OzzData;  // lives until exit, like the benchmarks that use it
    const char* dir = std::getenv("KINEMA_OZZ_DATA");
    if (!dir || !*dir) {
      d->error = "KINEMA_OZZ_DATA is not set (folder with skeleton.ozz and walk.ozz)";
    } else if (!load_archive(std::string(dir) + "/skeleton.ozz", d->skeleton)) {
      d->error = std::string("cannot read ") + dir + "/skeleton.ozz";
    } else if (!load_archive(std::string(dir) + "/walk.ozz", d->animation)) {
      d->error = std::string("cannot read ") + dir + "/walk.ozz";
    } else if (d->animation.num_tracks() != d->skeleton.num_joints()) {
      d->error = "walk.ozz does not animate skeleton.ozz (track and joint counts differ)";
    }
    return d;
  }();
  return *loaded;
}

/// The data, or nullptr after marking the benchmark skipped.
const OzzData* data_or_skip(benchmark::State& state) {
  const OzzData& d = data();
  if (!d.error.empty()) {
    state.SkipWithError(d.error.c_str());
    return nullptr;
  }
  return &d;
}

void report(benchmark::State& state, const OzzData& d) {
  const double joints = d.skeleton.num_joints();
  state.counters["joints"] = joints;
  state.counters["per_joint"] = benchmark::Counter(
      joints, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.SetItemsProcessed(state.iterations() * d.skeleton.num_joints());
}

void report_memory(benchmark::State& state, const OzzData& d) {
  const double bytes = static_cast<double>(d.animation.size());
  state.counters["bytes"] = bytes;
  state.counters["bytes_per_s"] = bytes / d.animation.duration();
}

/// A local pose sampled at `ratio` of the clip (a fresh context: exact, whatever came before).
std::vector<ozz::math::SoaTransform> sampled_pose(const OzzData& d, float ratio) {
  std::vector<ozz::math::SoaTransform> pose(static_cast<size_t>(d.skeleton.num_soa_joints()));
  ozz::animation::SamplingJob::Context context(d.animation.num_tracks());
  ozz::animation::SamplingJob job;
  job.animation = &d.animation;
  job.context = &context;
  job.ratio = ratio;
  job.output = ozz::make_span(pose);
  if (!job.Run()) pose.clear();
  return pose;
}

// Playback: the time advances 1/60 s per call and loops, with one persistent context, as a
// character playing the clip at 60 Hz does.
void OzzSamplingForward(benchmark::State& state) {
  const OzzData* d = data_or_skip(state);
  if (!d) return;
  std::vector<ozz::math::SoaTransform> pose(static_cast<size_t>(d->skeleton.num_soa_joints()));
  ozz::animation::SamplingJob::Context context(d->animation.num_tracks());
  ozz::animation::SamplingJob job;
  job.animation = &d->animation;
  job.context = &context;
  job.output = ozz::make_span(pose);
  const float duration = d->animation.duration();
  float time = 0;
  for (auto _ : state) {
    job.ratio = time / duration;
    if (!job.Run()) {
      state.SkipWithError("SamplingJob failed");
      break;
    }
    benchmark::DoNotOptimize(pose.data());
    benchmark::ClobberMemory();
    time += 1.0f / 60.0f;
    if (time > duration) time -= duration;
  }
  report(state, *d);
  report_memory(state, *d);
}

// Random access: pre-generated random times, one reused context (each jump away from the cached
// keys makes the job seek, through the clip's iframes).
void OzzSamplingRandomSeek(benchmark::State& state) {
  const OzzData* d = data_or_skip(state);
  if (!d) return;
  std::vector<float> ratios(4096);
  uint64_t s = 0x9E3779B97F4A7C15ull;
  for (float& r : ratios) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    r = static_cast<float>(static_cast<double>(s >> 11) / static_cast<double>(1ull << 53));
  }
  std::vector<ozz::math::SoaTransform> pose(static_cast<size_t>(d->skeleton.num_soa_joints()));
  ozz::animation::SamplingJob::Context context(d->animation.num_tracks());
  ozz::animation::SamplingJob job;
  job.animation = &d->animation;
  job.context = &context;
  job.output = ozz::make_span(pose);
  size_t i = 0;
  for (auto _ : state) {
    job.ratio = ratios[i];
    i = (i + 1) & (ratios.size() - 1);
    if (!job.Run()) {
      state.SkipWithError("SamplingJob failed");
      break;
    }
    benchmark::DoNotOptimize(pose.data());
    benchmark::ClobberMemory();
  }
  report(state, *d);
  report_memory(state, *d);
}

// Blending of `layers` full-body layers (poses of the clip sampled at different times, no
// per-joint weights), as a locomotion blend does.
void OzzBlend(benchmark::State& state, int layers) {
  const OzzData* d = data_or_skip(state);
  if (!d) return;
  std::vector<std::vector<ozz::math::SoaTransform>> inputs;
  inputs.reserve(static_cast<size_t>(layers));  // the layers point into these
  std::vector<ozz::animation::BlendingJob::Layer> job_layers(static_cast<size_t>(layers));
  for (int l = 0; l < layers; ++l) {
    inputs.push_back(sampled_pose(*d, (0.1f + 0.3f * static_cast<float>(l))));
    if (inputs.back().empty()) {
      state.SkipWithError("SamplingJob failed");
      return;
    }
    job_layers[static_cast<size_t>(l)].weight = 1.0f / static_cast<float>(l + 1);
    job_layers[static_cast<size_t>(l)].transform = ozz::make_span(inputs.back());
  }
  std::vector<ozz::math::SoaTransform> pose(static_cast<size_t>(d->skeleton.num_soa_joints()));
  ozz::animation::BlendingJob job;
  job.layers = ozz::make_span(job_layers);
  job.rest_pose = d->skeleton.joint_rest_poses();
  job.output = ozz::make_span(pose);
  for (auto _ : state) {
    if (!job.Run()) {
      state.SkipWithError("BlendingJob failed");
      break;
    }
    benchmark::DoNotOptimize(pose.data());
    benchmark::ClobberMemory();
  }
  report(state, *d);
}

void OzzBlend2(benchmark::State& state) { OzzBlend(state, 2); }
void OzzBlend3(benchmark::State& state) { OzzBlend(state, 3); }

// Local → model matrices of the whole skeleton, from a sampled pose.
void OzzLocalToModel(benchmark::State& state) {
  const OzzData* d = data_or_skip(state);
  if (!d) return;
  const std::vector<ozz::math::SoaTransform> local = sampled_pose(*d, 0.25f);
  if (local.empty()) {
    state.SkipWithError("SamplingJob failed");
    return;
  }
  std::vector<ozz::math::Float4x4> model(static_cast<size_t>(d->skeleton.num_joints()));
  ozz::animation::LocalToModelJob job;
  job.skeleton = &d->skeleton;
  job.input = ozz::make_span(local);
  job.output = ozz::make_span(model);
  for (auto _ : state) {
    if (!job.Run()) {
      state.SkipWithError("LocalToModelJob failed");
      break;
    }
    benchmark::DoNotOptimize(model.data());
    benchmark::ClobberMemory();
  }
  report(state, *d);
}

BENCHMARK(OzzSamplingForward)->Name("Ozz/Sampling/Forward");
BENCHMARK(OzzSamplingRandomSeek)->Name("Ozz/Sampling/RandomSeek");
BENCHMARK(OzzBlend2)->Name("Ozz/Blend/2");
BENCHMARK(OzzBlend3)->Name("Ozz/Blend/3");
BENCHMARK(OzzLocalToModel)->Name("Ozz/LocalToModel");

}  // namespace
