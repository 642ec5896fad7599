// Retargeting and foot grounding of a long clip: the CMU walk (tests/data, 31 joints) looped to
// 14,373 frames at 30 fps — the length of a 8-minute dance take — onto Godette (71 joints).
// Reports frames per second of clip processed.
#include <benchmark/benchmark.h>

#include <string>

#include "kinema/io/asset_file.h"
#include "kinema/retarget/ground.h"
#include "kinema/retarget/humanoid.h"
#include "kinema/retarget/retarget.h"
#include "kinema/retarget/rig.h"

namespace kinema {
namespace {

constexpr int kFrames = 14373;
constexpr double kRate = 30;

struct LongTake {
  Asset walk, avatar;
  Humanoid walk_map, avatar_map;
  Clip take;  ///< the walk looped to kFrames keys per joint

  LongTake() {
    const std::string data = KINEMA_TEST_DATA_DIR;
    walk = load_asset(data + "/bvh/cmu_cgspeed_mb/02_01.bvh");
    avatar = load_asset(data + "/vrm/Godette_vrm_v4.vrm");
    walk_map = require_humanoid(walk, "02_01.bvh");
    avatar_map = require_humanoid(avatar, "Godette_vrm_v4.vrm");
    const Clip& src = walk.clips[0];
    const Skeleton& sk = walk.skeleton;
    take.name = "long take";
    take.sample_rate = kRate;
    take.duration = (kFrames - 1) / kRate;
    take.tracks.resize(size_t(sk.joint_count()));
    std::vector<Transform> local(size_t(sk.joint_count()));
    for (int f = 0; f < kFrames; ++f) {
      const double t = f / kRate;
      sample_pose(src, sk, t, WrapMode::Loop, local);
      for (int j = 0; j < sk.joint_count(); ++j) {
        auto& track = take.tracks[size_t(j)];
        track.rotation.times.push_back(t);
        track.rotation.values.push_back(local[size_t(j)].rotation);
        if (j == 0) {
          // Each loop continues from where the last one ended, as a long take would.
          const double loops = std::floor(t / src.duration);
          Vec3 p = local[0].translation;
          p.z += loops * 1.3;
          track.translation.times.push_back(t);
          track.translation.values.push_back(p);
        }
      }
    }
  }
};

const LongTake& long_take() {
  static const LongTake take;
  return take;
}

void BM_Retarget_LongTakeOntoGodette(benchmark::State& state) {
  const LongTake& d = long_take();
  RetargetOptions options;
  options.mode = state.range(0) ? RetargetMode::Direction : RetargetMode::Rotation;
  for (auto _ : state) {
    Clip out = retarget_clip(d.walk.skeleton, d.walk_map, d.take, d.avatar.skeleton, d.avatar_map,
                             options);
    benchmark::DoNotOptimize(out.tracks.data());
  }
  state.counters["frames_per_s"] =
      benchmark::Counter(double(kFrames) * double(state.iterations()), benchmark::Counter::kIsRate);
  state.SetLabel(state.range(0) ? "direction mode" : "rotation mode");
}
BENCHMARK(BM_Retarget_LongTakeOntoGodette)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_RetargetAndGround_LongTakeOntoGodette(benchmark::State& state) {
  const LongTake& d = long_take();
  Asset avatar = d.avatar;
  avatar.humanoid = d.avatar_map;
  const HumanoidLegs legs = humanoid_legs(avatar, "Godette_vrm_v4.vrm");
  for (auto _ : state) {
    Clip moved = retarget_clip(d.walk.skeleton, d.walk_map, d.take, avatar.skeleton, d.avatar_map);
    Clip grounded = ground_feet(avatar.skeleton, legs, std::move(moved), kRate);
    benchmark::DoNotOptimize(grounded.tracks.data());
  }
  state.counters["frames_per_s"] =
      benchmark::Counter(double(kFrames) * double(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_RetargetAndGround_LongTakeOntoGodette)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace kinema

BENCHMARK_MAIN();
