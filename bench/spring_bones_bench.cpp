// VRM spring bones: one 60 Hz step of Godette's 16 spring joints (4 sphere colliders) while she
// walks, the pose sampled beforehand so that only the simulation is timed; and the same avatar
// with 64 copies of its springs' settings on a long synthetic chain rig, to show the per-joint
// cost.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "bench_paths.h"
#include "kinema/io/asset_file.h"
#include "kinema/physics/spring_bones.h"

namespace kinema {
namespace {

void BM_SpringBonesGodetteWalkStep(benchmark::State& state) {
  const Asset a = load_asset(bench::test_data_dir() + "/vrm/godette_walk_springs_vrm0.glb");
  const int frames = 120;
  std::vector<std::vector<Transform>> poses(frames,
                                            std::vector<Transform>(a.skeleton.joint_count()));
  for (int k = 0; k < frames; ++k)
    sample_pose(a.clips[0], a.skeleton, k / 60.0, WrapMode::Loop, poses[static_cast<size_t>(k)]);
  SpringBoneSim sim(a.skeleton, a.spring_bones);
  std::vector<Transform> pose;
  int k = 0;
  for (auto _ : state) {
    pose = poses[static_cast<size_t>(k)];
    sim.step(pose, 1.0 / 60);
    benchmark::DoNotOptimize(sim.world().data());
    k = (k + 1) % frames;
  }
  state.counters["joints"] = static_cast<double>(a.spring_bones.joint_count());
  state.counters["ns_per_joint"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * static_cast<double>(a.spring_bones.joint_count()),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_SpringBonesGodetteWalkStep)->Unit(benchmark::kMicrosecond);

/// `chains` hair strands of 8 joints each hanging from one head joint, with 4 sphere colliders.
void BM_SpringBonesHairRigStep(benchmark::State& state) {
  const int chains = static_cast<int>(state.range(0));
  std::vector<Joint> joints{{"head", kNoParent, {}, {}}};
  SpringBones setup;
  for (int c = 0; c < 4; ++c) {
    SpringCollider col;
    col.joint = 0;
    col.offset = {0.05 * (c - 1.5), 0, 0.05};
    col.radius = 0.08;
    setup.colliders.push_back(col);
  }
  setup.collider_groups.push_back({0, 1, 2, 3});
  for (int c = 0; c < chains; ++c) {
    Spring s;
    s.collider_groups = {0};
    int parent = 0;
    for (int k = 0; k < 9; ++k) {
      Joint j{"h" + std::to_string(c) + "_" + std::to_string(k), parent, {}, {}};
      j.rest.translation =
          k == 0 ? Vec3{0.1 * std::cos(c), 0.1, 0.1 * std::sin(c)} : Vec3{0, -0.03, 0};
      joints.push_back(j);
      const int index = static_cast<int>(joints.size()) - 1;
      if (k > 0) {
        SpringJoint sj;
        sj.joint = parent;
        sj.child = index;
        sj.gravity_power = 1;
        sj.hit_radius = 0.01;
        s.joints.push_back(sj);
      }
      parent = index;
    }
    setup.springs.push_back(s);
  }
  const Skeleton skeleton = Skeleton::build(joints);
  SpringBoneSim sim(skeleton, setup);
  std::vector<Transform> pose = skeleton.rest_pose();
  double t = 0;
  for (auto _ : state) {
    pose[0].translation = {0.3 * std::sin(3 * t), 1.5, 0};  // the head sways
    sim.step(pose, 1.0 / 60);
    benchmark::DoNotOptimize(sim.world().data());
    t += 1.0 / 60;
  }
  const double n = static_cast<double>(setup.joint_count());
  state.counters["joints"] = n;
  state.counters["ns_per_joint"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * n,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_SpringBonesHairRigStep)->Arg(16)->Arg(128)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace kinema

BENCHMARK_MAIN();
