// Arm clearance of a long take: the CMU walk (tests/data, 31 joints) looped to 14,373 frames at
// 30 fps — the length of the 8-minute dance take the clean-up blog series timed at 3 minutes in
// NumPy — retargeted onto Godette (71 joints), then both arms cleaned (`clear_arms`). The argument
// is the thread count (the result is the same for every count). Counters: frames per second and
// each stage's seconds from the last iteration.
#include <benchmark/benchmark.h>

#include <cmath>
#include <string>

#include "bench_paths.h"
#include "kinema/io/asset_file.h"
#include "kinema/retarget/arm_clearance.h"
#include "kinema/retarget/body_surface.h"
#include "kinema/retarget/humanoid.h"
#include "kinema/retarget/retarget.h"

namespace kinema {
namespace {

constexpr int kFrames = 14373;
constexpr double kRate = 30;

struct LongTakeOnGodette {
  Asset avatar;
  Humanoid avatar_map;
  Clip take;  ///< the walk looped to kFrames frames, retargeted onto Godette

  LongTakeOnGodette() {
    const std::string data = bench::test_data_dir();
    const Asset walk = load_asset(data + "/bvh/cmu_cgspeed_mb/02_01.bvh");
    avatar = load_asset(data + "/vrm/Godette_vrm_v4.vrm");
    const Humanoid walk_map = require_humanoid(walk, "02_01.bvh");
    avatar_map = require_humanoid(avatar, "Godette_vrm_v4.vrm");
    const Clip& src = walk.clips[0];
    const Skeleton& sk = walk.skeleton;
    Clip looped;
    looped.sample_rate = kRate;
    looped.duration = (kFrames - 1) / kRate;
    looped.tracks.resize(size_t(sk.joint_count()));
    std::vector<Transform> local(size_t(sk.joint_count()));
    for (int f = 0; f < kFrames; ++f) {
      const double t = f / kRate;
      sample_pose(src, sk, t, WrapMode::Loop, local);
      for (int j = 0; j < sk.joint_count(); ++j) {
        auto& track = looped.tracks[size_t(j)];
        track.rotation.times.push_back(t);
        track.rotation.values.push_back(local[size_t(j)].rotation);
        if (j == 0) {  // each loop continues from where the last one ended
          Vec3 p = local[0].translation;
          p.z += std::floor(t / src.duration) * 1.3;
          track.translation.times.push_back(t);
          track.translation.values.push_back(p);
        }
      }
    }
    take = retarget_clip(sk, walk_map, looped, avatar.skeleton, avatar_map);
  }
};

const LongTakeOnGodette& long_take() {
  static const LongTakeOnGodette take;
  return take;
}

void BM_ClearArms_LongTakeOnGodette(benchmark::State& state) {
  const LongTakeOnGodette& d = long_take();
  ArmClearanceOptions options;
  options.threads = int(state.range(0));
  ArmClearanceResult last;
  for (auto _ : state) {
    last = clear_arms(d.avatar, d.avatar_map, d.take, {}, options, "Godette_vrm_v4.vrm");
    benchmark::DoNotOptimize(last.clip.tracks.data());
  }
  state.counters["frames_per_s"] =
      benchmark::Counter(double(kFrames) * double(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["surface_s"] = last.timings.surface_s;
  state.counters["candidates_s"] = last.timings.candidates_s;
  state.counters["path_s"] = last.timings.path_s;
  state.counters["coupling_s"] = last.timings.coupling_s;
  state.counters["smoothing_s"] = last.timings.smoothing_s;
  state.counters["limit_s"] = last.timings.limit_s;
  state.counters["limited_frames"] =
      double(last.arms[0].limit.frames_changed + last.arms[1].limit.frames_changed);
  state.counters["write_s"] = last.timings.write_s;
  state.counters["total_s"] = last.timings.total_s;
  state.counters["inside_before"] =
      double(last.arms[0].frames_inside_before + last.arms[1].frames_inside_before);
  state.counters["inside_after"] =
      double(last.arms[0].frames_inside_after + last.arms[1].frames_inside_after);
}
BENCHMARK(BM_ClearArms_LongTakeOnGodette)
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

/// One push query against Godette's body at rest: points drawn in the body's bounds grown by
/// 10 cm (inside, near and far), the clearance of a forearm (3 cm + 6 mm).
void BM_ClearanceFieldPush_Godette(benchmark::State& state) {
  const LongTakeOnGodette& d = long_take();
  const BodySurfaceModel body(d.avatar, d.avatar_map, {}, "Godette_vrm_v4.vrm");
  BodySurface surface;
  body.surface(rest_model_matrices(d.avatar.skeleton), surface);
  ClearanceFieldOptions options;
  options.neighbours = int(state.range(0));
  ClearanceField field;
  field.build(surface.points, surface.normals, options, 0.06);
  Vec3 lo{1e9, 1e9, 1e9}, hi{-1e9, -1e9, -1e9};
  for (const Vec3f& p : surface.points) {
    lo = {std::min(lo.x, double(p.x)), std::min(lo.y, double(p.y)), std::min(lo.z, double(p.z))};
    hi = {std::max(hi.x, double(p.x)), std::max(hi.y, double(p.y)), std::max(hi.z, double(p.z))};
  }
  std::vector<Vec3> queries;
  uint32_t seed = 12345;
  auto next = [&] {
    seed = seed * 1664525u + 1013904223u;
    return (seed >> 8) / double(1 << 24);
  };
  for (int i = 0; i < 4096; ++i)
    queries.push_back({lo.x - 0.1 + next() * (hi.x - lo.x + 0.2),
                       lo.y - 0.1 + next() * (hi.y - lo.y + 0.2),
                       lo.z - 0.1 + next() * (hi.z - lo.z + 0.2)});
  size_t i = 0, near = 0;
  for (auto _ : state) {
    const ClearancePush p = field.push(queries[i++ & 4095], 0.036);
    near += p.near;
    benchmark::DoNotOptimize(p);
  }
  state.counters["near_fraction"] = double(near) / double(state.iterations());
  state.counters["points"] = double(surface.points.size());
}
BENCHMARK(BM_ClearanceFieldPush_Godette)->Arg(16)->Arg(1);

}  // namespace
}  // namespace kinema

BENCHMARK_MAIN();
