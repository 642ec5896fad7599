// bench/locomotion_warp_bench.cpp — stride and orientation warping (kinema/ik/locomotion_warp.h)
// per frame, on the CMU 02_01 walk of tests/data (31 joints, 120 fps):
//
// StrideWarp/Solve        solve_stride_warp on both legs (targets, pelvis drop, two two-bone
//                         solves), the pose's FK given; stride scale 1.3.
// StrideWarp/SolveApply   the same plus apply_stride_warp into the local transforms.
// StrideWarp/Frame        what a caller does per frame: FK of the pose, solve, apply.
// OrientationWarp/Apply   apply_orientation_warp by 30° over a three-joint spine.
//
// Frames cycle through the clip's poses (sampled beforehand), so the legs' reach changes as in
// playback. Run: build/release/bench/kinema_locomotion_warp_bench (docs/ik.md has the figures).
#include <benchmark/benchmark.h>

#include <array>
#include <string>
#include <vector>

#include "bench_paths.h"
#include "kinema/clip/clip.h"
#include "kinema/ik/locomotion_warp.h"
#include "kinema/io/asset_file.h"
#include "kinema/math/scalar.h"
#include "kinema/skeleton/skeleton.h"

namespace {

using namespace kinema;

struct Walk {
  Asset asset = load_asset(kinema::bench::test_data_dir() + "/bvh/cmu_cgspeed_mb/02_01.bvh");
  const Skeleton& sk = asset.skeleton;
  int hips = sk.find("Hips");
  std::array<StrideWarpJoints, 2> legs{
      StrideWarpJoints{sk.find("LeftUpLeg"), sk.find("LeftLeg"), sk.find("LeftFoot")},
      StrideWarpJoints{sk.find("RightUpLeg"), sk.find("RightLeg"), sk.find("RightFoot")}};
  std::array<int, 3> spine{sk.find("LowerBack"), sk.find("Spine"), sk.find("Spine1")};
  std::vector<std::vector<Transform>> poses;  // local transforms of every frame

  Walk() {
    const Clip& clip = asset.clips.at(0);
    const double rate = infer_frame_rate(clip);
    std::vector<Transform> local(static_cast<size_t>(sk.joint_count()));
    for (int i = 0; i < clip.frame_count(); ++i) {
      sample_pose(clip, sk, i / rate, WrapMode::Clamp, local);
      poses.push_back(local);
    }
  }

  void model_of(const std::vector<Transform>& local, std::vector<Transform>& model) const {
    for (size_t j = 0; j < local.size(); ++j) {
      const int p = sk.parents()[j];
      model[j] = p < 0 ? local[j] : model[static_cast<size_t>(p)] * local[j];
    }
  }

  std::array<StrideWarpLeg, 2> legs_of(const std::vector<Transform>& model) const {
    std::array<StrideWarpLeg, 2> out;
    for (size_t l = 0; l < 2; ++l) {
      out[l].hip = model[static_cast<size_t>(legs[l].hip)].translation;
      out[l].knee = model[static_cast<size_t>(legs[l].knee)].translation;
      out[l].ankle = model[static_cast<size_t>(legs[l].ankle)].translation;
      out[l].ankle_rotation = model[static_cast<size_t>(legs[l].ankle)].rotation;
    }
    return out;
  }

  StrideWarpSettings settings(const std::vector<Transform>& model) const {
    StrideWarpSettings s;
    s.stride_scale = 1.3;
    s.pelvis = model[static_cast<size_t>(hips)].translation;
    return s;
  }
};

const Walk& walk() {
  static const Walk w;
  return w;
}

void StrideWarp_Solve(benchmark::State& state) {
  const Walk& w = walk();
  // Every frame's legs and settings beforehand: only the solve is timed.
  std::vector<std::array<StrideWarpLeg, 2>> legs;
  std::vector<StrideWarpSettings> settings;
  std::vector<Transform> model(w.poses[0].size());
  for (const auto& pose : w.poses) {
    w.model_of(pose, model);
    legs.push_back(w.legs_of(model));
    settings.push_back(w.settings(model));
  }
  StrideWarpState warp;
  std::array<StrideWarpLegResult, 2> out;
  size_t i = 0;
  for (auto _ : state) {
    const StrideWarpResult r = solve_stride_warp(legs[i], settings[i], 1 / 120.0, warp, out);
    benchmark::DoNotOptimize(r);
    benchmark::DoNotOptimize(out);
    i = i + 1 == legs.size() ? 0 : i + 1;
  }
}
BENCHMARK(StrideWarp_Solve)->Name("StrideWarp/Solve");

void StrideWarp_SolveApply(benchmark::State& state, bool with_fk) {
  const Walk& w = walk();
  std::vector<Transform> local, model(w.poses[0].size());
  StrideWarpState warp;
  std::array<StrideWarpLegResult, 2> out;
  std::vector<std::array<StrideWarpLeg, 2>> legs;
  std::vector<StrideWarpSettings> settings;
  for (const auto& pose : w.poses) {
    w.model_of(pose, model);
    legs.push_back(w.legs_of(model));
    settings.push_back(w.settings(model));
  }
  size_t i = 0;
  for (auto _ : state) {
    local = w.poses[i];
    StrideWarpResult r;
    if (with_fk) {
      w.model_of(local, model);
      r = solve_stride_warp(w.legs_of(model), w.settings(model), 1 / 120.0, warp, out);
    } else {
      r = solve_stride_warp(legs[i], settings[i], 1 / 120.0, warp, out);
    }
    apply_stride_warp(r, out, w.legs, w.hips, w.sk.parents(), local);
    benchmark::DoNotOptimize(local.data());
    i = i + 1 == w.poses.size() ? 0 : i + 1;
  }
}
BENCHMARK_CAPTURE(StrideWarp_SolveApply, SolveApply, false)->Name("StrideWarp/SolveApply");
BENCHMARK_CAPTURE(StrideWarp_SolveApply, Frame, true)->Name("StrideWarp/Frame");

void OrientationWarp_Apply(benchmark::State& state) {
  const Walk& w = walk();
  std::vector<Transform> local;
  size_t i = 0;
  for (auto _ : state) {
    local = w.poses[i];
    apply_orientation_warp(radians(30.0), w.hips, w.spine, w.sk.parents(), local);
    benchmark::DoNotOptimize(local.data());
    i = i + 1 == w.poses.size() ? 0 : i + 1;
  }
}
BENCHMARK(OrientationWarp_Apply)->Name("OrientationWarp/Apply");

}  // namespace

BENCHMARK_MAIN();
