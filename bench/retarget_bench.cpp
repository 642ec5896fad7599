// bench/retarget_bench.cpp — foot grounding of a long retargeted clip (BENCHMARKS.md,
// "Retargeting").
//
// Ground/: kinema::ground_feet on CMU 07_12 (brisk walk, Character Creator rig of 100 joints,
// tests/data/bvh/cmu_iclone_cc3/007_12.bvh) repeated end to end, each copy carried on by the
// walk's own travel, to 14,373 frames at 60 fps (the length of a four-minute dance): contact
// detection, the hips offsets, the locks and the leg IK, one core. Counter: frames per second.
// WithReport/ adds the before and after metrics (measure_motion twice).
#include <benchmark/benchmark.h>

#include <string>

#include "kinema/io/asset_file.h"
#include "kinema/retarget/ground.h"

namespace {

using namespace kinema;

constexpr int kFrames = 14'373;
constexpr double kRate = 60;

/// `clip` repeated until it lasts (frames − 1)/rate seconds; the hips' translation keys of each
/// copy are moved on by the clip's travel so the walk continues.
Clip repeated(const Clip& clip, int hips, int frames, double rate) {
  const double duration = (frames - 1) / rate;
  Clip out = clip;
  out.duration = duration;
  for (size_t j = 0; j < clip.tracks.size(); ++j) {
    const JointTrack& src = clip.tracks[j];
    JointTrack& dst = out.tracks[j];
    Vec3 travel{0, 0, 0};
    if (static_cast<int>(j) == hips && src.translation.key_count() > 1) {
      travel = src.translation.values.back() - src.translation.values.front();
      travel.y = 0;
    }
    for (int copy = 1; copy * clip.duration < duration; ++copy) {
      const double shift = copy * clip.duration;
      for (size_t k = 1; k < src.translation.key_count(); ++k) {
        dst.translation.times.push_back(src.translation.times[k] + shift);
        dst.translation.values.push_back(src.translation.values[k] + travel * copy);
      }
      for (size_t k = 1; k < src.rotation.key_count(); ++k) {
        dst.rotation.times.push_back(src.rotation.times[k] + shift);
        dst.rotation.values.push_back(src.rotation.values[k]);
      }
    }
  }
  return out;
}

struct LongWalk {
  Asset asset;
  HumanoidLegs legs;
  Clip clip;
};

const LongWalk& long_walk() {
  static const LongWalk w = [] {
    LongWalk l;
    const std::string file = std::string(KINEMA_TEST_DATA_DIR) + "/bvh/cmu_iclone_cc3/007_12.bvh";
    l.asset = load_asset(file);
    l.legs = humanoid_legs(l.asset, file);
    l.clip = repeated(l.asset.clips[0], l.legs.rig.pelvis, kFrames, kRate);
    return l;
  }();
  return w;
}

void BM_Ground(benchmark::State& state, bool with_report) {
  const LongWalk& w = long_walk();
  GroundingReport report;
  for (auto _ : state) {
    Clip out =
        ground_feet(w.asset.skeleton, w.legs, w.clip, kRate, {}, with_report ? &report : nullptr);
    benchmark::DoNotOptimize(out);
  }
  state.counters["frames"] = kFrames;
  state.counters["joints"] = w.asset.skeleton.joint_count();
  state.counters["frames_per_s"] = benchmark::Counter(
      static_cast<double>(kFrames), benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK_CAPTURE(BM_Ground, Ground, false)->Unit(benchmark::kMillisecond)->MinTime(2);
BENCHMARK_CAPTURE(BM_Ground, WithReport, true)->Unit(benchmark::kMillisecond)->MinTime(2);

}  // namespace

BENCHMARK_MAIN();
