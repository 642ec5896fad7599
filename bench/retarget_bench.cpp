// Retargeting and foot grounding of a long clip: the CMU walk (tests/data, 31 joints) looped to
// 14,373 frames at 30 fps — the length of a 8-minute dance take — onto Godette (71 joints).
// Reports frames per second of clip processed.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "bench_paths.h"
#include "kinema/io/asset_file.h"
#include "kinema/retarget/body_surface.h"
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
    const std::string data = bench::test_data_dir();
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

// The body surface arm clearance needs per frame: Godette's kept body vertices skinned (positions
// and normals) and their inner faces dropped, cycling through the CMU walk retargeted onto her.
void BM_BodySurface_PerFrameOnGodette(benchmark::State& state) {
  const LongTake& d = long_take();
  const BodySurfaceModel model(d.avatar, d.avatar_map, {}, "Godette_vrm_v4.vrm");
  const Clip walk =
      retarget_clip(d.walk.skeleton, d.walk_map, d.walk.clips[0], d.avatar.skeleton, d.avatar_map);
  const Skeleton& sk = d.avatar.skeleton;
  std::vector<std::vector<Mat4>> poses;
  std::vector<Transform> local(size_t(sk.joint_count()));
  for (int f = 0; f < 120; ++f) {
    sample_pose(walk, sk, f / kRate, WrapMode::Loop, local);
    poses.emplace_back(local.size());
    local_to_model(sk.parents(), local, poses.back());
  }
  BodySurface surface;
  size_t frame = 0;
  for (auto _ : state) {
    model.surface(poses[frame], surface);
    benchmark::DoNotOptimize(surface.points.data());
    frame = frame + 1 == poses.size() ? 0 : frame + 1;
  }
  state.counters["vertices"] = double(model.vertex_count());
  state.counters["points"] = double(surface.points.size());
}
BENCHMARK(BM_BodySurface_PerFrameOnGodette)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace kinema

BENCHMARK_MAIN();
