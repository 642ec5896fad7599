// bench/peers/ozz_anim_peer.cpp — ozz-animation's runtime jobs, the peer of kinema's runtime
// animation core, measured in the same program, on the same clip, machine and flags.
//
// Compiled into kinema_anim_bench only when CMake is given -DKINEMA_OZZ_ROOT (an ozz build tree
// or install prefix; BENCHMARKS.md has the commands that build ozz and produce the data). Nothing
// of ozz is part of kinema: this file only calls its public API.
//
// Data: $KINEMA_OZZ_DATA/skeleton.ozz and $KINEMA_OZZ_DATA/walk.ozz, made by ozz's gltf2ozz from
// the same GLB that kinema's side of the benchmark reads (the ProAnimationBank walk of
// tests/data/fbx/ozz_pab). Without them every Ozz/ benchmark of the walk reports an error and is
// skipped. The *100 rows need no files: a 100-joint skeleton (the CMU iClone CC3 BVH of
// tests/data, as kinema's *100 rows) is built in memory with ozz's offline SkeletonBuilder from
// kinema's reading of the BVH, and the blend and local → model inputs are kinema's sampled poses
// copied as they are (ozz's SoaTransform has kinema's layout: ten float[4] in the same order).
//
// One character on one core. Every benchmark reports, besides the time per call:
//   per_joint   seconds per joint (printed with an SI prefix: 4.87n = 4.87 ns per joint),
//   joints      joints in the skeleton,
// and the sampling ones the clip's memory: bytes (Animation::size()) and bytes_per_s (bytes per
// second of clip).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "bench_paths.h"
#include "kinema/clip/runtime_clip.h"
#include "kinema/io/asset_file.h"
#include "kinema/math/soa_transform.h"
#include "kinema/skeleton/skeleton.h"
#include "ozz/animation/offline/raw_skeleton.h"
#include "ozz/animation/offline/skeleton_builder.h"

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

// The 100-joint skeleton and three poses of its clip (10 %, 40 %, 70 %) and the pose at 25 % for
// local → model, all from kinema's reading of the BVH.
struct Ozz100Data {
  ozz::unique_ptr<ozz::animation::Skeleton> skeleton;
  std::vector<std::vector<ozz::math::SoaTransform>> poses;  // at 10 %, 40 %, 70 %, 25 %
  std::string error;
};

static_assert(sizeof(ozz::math::SoaTransform) == sizeof(kinema::SoaTransform));

const Ozz100Data& data100() {
  static const Ozz100Data* loaded = [] {
    auto* d = new Ozz100Data;  // lives until exit
    const kinema::Asset asset =
        kinema::load_asset(kinema::bench::test_data_dir() + "/bvh/cmu_iclone_cc3/007_12.bvh");
    const kinema::Skeleton& sk = asset.skeleton;
    // The raw hierarchy: children in kinema's order, so ozz's depth-first numbering is kinema's.
    ozz::animation::offline::RawSkeleton raw;
    std::vector<std::vector<int>> children(static_cast<size_t>(sk.joint_count()));
    std::vector<int> roots;
    for (int j = 0; j < sk.joint_count(); ++j)
      (sk.parent(j) < 0 ? roots : children[static_cast<size_t>(sk.parent(j))]).push_back(j);
    const std::function<void(int, ozz::animation::offline::RawSkeleton::Joint&)> fill =
        [&](int j, ozz::animation::offline::RawSkeleton::Joint& out) {
          const kinema::Transformf rest(sk.joint(j).rest);
          out.name = sk.joint(j).name.c_str();
          out.transform.translation = {rest.translation.x, rest.translation.y, rest.translation.z};
          out.transform.rotation = {rest.rotation.x, rest.rotation.y, rest.rotation.z,
                                    rest.rotation.w};
          out.transform.scale = {rest.scale.x, rest.scale.y, rest.scale.z};
          const std::vector<int>& c = children[static_cast<size_t>(j)];
          out.children.resize(c.size());
          for (size_t i = 0; i < c.size(); ++i) fill(c[i], out.children[i]);
        };
    raw.roots.resize(roots.size());
    for (size_t i = 0; i < roots.size(); ++i) fill(roots[i], raw.roots[i]);
    d->skeleton = ozz::animation::offline::SkeletonBuilder()(raw);
    if (!d->skeleton) {
      d->error = "SkeletonBuilder failed on the CC3 skeleton";
      return d;
    }
    const auto parents = d->skeleton->joint_parents();
    for (int j = 0; j < sk.joint_count(); ++j)
      if (parents[static_cast<size_t>(j)] != sk.parent(j) ||
          sk.joint(j).name != d->skeleton->joint_names()[static_cast<size_t>(j)]) {
        d->error = "ozz numbered the CC3 skeleton's joints differently from kinema";
        return d;
      }
    const kinema::RuntimeClip clip = kinema::RuntimeClip::build(asset.clips.at(0), sk);
    for (const float ratio : {0.1f, 0.4f, 0.7f, 0.25f}) {
      std::vector<kinema::SoaTransform> pose(static_cast<size_t>(clip.soa_count()));
      kinema::sample(clip, ratio * clip.duration(), pose);
      std::vector<ozz::math::SoaTransform>& out = d->poses.emplace_back(pose.size());
      std::memcpy(static_cast<void*>(out.data()), pose.data(),
                  pose.size() * sizeof(kinema::SoaTransform));
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
// per-joint weights, weights 1, 1/2, 1/3), as a locomotion blend does.
void OzzBlendRun(benchmark::State& state, const ozz::animation::Skeleton& skeleton,
                 const std::vector<std::vector<ozz::math::SoaTransform>>& inputs, int layers) {
  std::vector<ozz::animation::BlendingJob::Layer> job_layers(static_cast<size_t>(layers));
  for (int l = 0; l < layers; ++l) {
    job_layers[static_cast<size_t>(l)].weight = 1.0f / static_cast<float>(l + 1);
    job_layers[static_cast<size_t>(l)].transform = ozz::make_span(inputs[static_cast<size_t>(l)]);
  }
  std::vector<ozz::math::SoaTransform> pose(static_cast<size_t>(skeleton.num_soa_joints()));
  ozz::animation::BlendingJob job;
  job.layers = ozz::make_span(job_layers);
  job.rest_pose = skeleton.joint_rest_poses();
  job.output = ozz::make_span(pose);
  for (auto _ : state) {
    if (!job.Run()) {
      state.SkipWithError("BlendingJob failed");
      break;
    }
    benchmark::DoNotOptimize(pose.data());
    benchmark::ClobberMemory();
  }
}

// Local → model matrices of the whole skeleton, from a sampled pose.
void OzzLocalToModelRun(benchmark::State& state, const ozz::animation::Skeleton& skeleton,
                        const std::vector<ozz::math::SoaTransform>& local) {
  std::vector<ozz::math::Float4x4> model(static_cast<size_t>(skeleton.num_joints()));
  ozz::animation::LocalToModelJob job;
  job.skeleton = &skeleton;
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
}

void OzzBlend(benchmark::State& state, int layers) {
  const OzzData* d = data_or_skip(state);
  if (!d) return;
  std::vector<std::vector<ozz::math::SoaTransform>> inputs;
  for (int l = 0; l < layers; ++l) {
    inputs.push_back(sampled_pose(*d, (0.1f + 0.3f * static_cast<float>(l))));
    if (inputs.back().empty()) {
      state.SkipWithError("SamplingJob failed");
      return;
    }
  }
  OzzBlendRun(state, d->skeleton, inputs, layers);
  report(state, *d);
}

void OzzBlend2(benchmark::State& state) { OzzBlend(state, 2); }
void OzzBlend3(benchmark::State& state) { OzzBlend(state, 3); }

void OzzLocalToModel(benchmark::State& state) {
  const OzzData* d = data_or_skip(state);
  if (!d) return;
  const std::vector<ozz::math::SoaTransform> local = sampled_pose(*d, 0.25f);
  if (local.empty()) {
    state.SkipWithError("SamplingJob failed");
    return;
  }
  OzzLocalToModelRun(state, d->skeleton, local);
  report(state, *d);
}

/// The 100-joint data, or nullptr after marking the benchmark skipped.
const Ozz100Data* data100_or_skip(benchmark::State& state) {
  const Ozz100Data& d = data100();
  if (!d.error.empty()) {
    state.SkipWithError(d.error.c_str());
    return nullptr;
  }
  return &d;
}

void report100(benchmark::State& state, const ozz::animation::Skeleton& skeleton) {
  const double joints = skeleton.num_joints();
  state.counters["joints"] = joints;
  state.counters["per_joint"] = benchmark::Counter(
      joints, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.SetItemsProcessed(state.iterations() * skeleton.num_joints());
}

void OzzBlend100(benchmark::State& state, int layers) {
  const Ozz100Data* d = data100_or_skip(state);
  if (!d) return;
  OzzBlendRun(state, *d->skeleton, d->poses, layers);
  report100(state, *d->skeleton);
}
void OzzBlend2x100(benchmark::State& state) { OzzBlend100(state, 2); }
void OzzBlend3x100(benchmark::State& state) { OzzBlend100(state, 3); }

void OzzLocalToModel100(benchmark::State& state) {
  const Ozz100Data* d = data100_or_skip(state);
  if (!d) return;
  OzzLocalToModelRun(state, *d->skeleton, d->poses[3]);
  report100(state, *d->skeleton);
}

BENCHMARK(OzzSamplingForward)->Name("Ozz/Sampling/Forward");
BENCHMARK(OzzSamplingRandomSeek)->Name("Ozz/Sampling/RandomSeek");
BENCHMARK(OzzBlend2)->Name("Ozz/Blend/2");
BENCHMARK(OzzBlend3)->Name("Ozz/Blend/3");
BENCHMARK(OzzLocalToModel)->Name("Ozz/LocalToModel");
BENCHMARK(OzzBlend2x100)->Name("Ozz/Blend100/2");
BENCHMARK(OzzBlend3x100)->Name("Ozz/Blend100/3");
BENCHMARK(OzzLocalToModel100)->Name("Ozz/LocalToModel100");

}  // namespace
