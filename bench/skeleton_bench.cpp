// bench/skeleton_bench.cpp — forward kinematics and pose sampling cost per joint.
//
// FK (local → model matrices) from Mat4 locals and from TRS Transform locals, on a synthetic
// 60-joint humanoid-like tree (fingers, twist bones, face) and on real skeletons: the CMU
// cgspeed walk (31 joints), the Reallusion CC3 rig (100 joints) and the Quaternius robot (glTF,
// 58 nodes). sample_pose() cost on the real clips (LINEAR keys at 120/60 fps). items_per_second
// counts joints, so 1e9 / items_per_second is nanoseconds per joint.
// Real files come from $KINEMA_SHARED_DATA (default ../shared/data beside the checkout); the
// tests/data copies are used when the shared folder is absent.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "bench_paths.h"
#include "kinema/clip/clip.h"
#include "kinema/io/asset_file.h"
#include "kinema/skeleton/skeleton.h"
#include "shared_data.h"

namespace {

namespace fs = std::filesystem;
using namespace kinema;

using kinema::bench::shared_data;

/// Deterministic pseudo-random numbers (no <random> distribution differences across libstdc++).
struct Lcg {
  uint64_t s = 0x9E3779B97F4A7C15ull;
  double next() {  // [-1, 1)
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>(s >> 11) / static_cast<double>(1ull << 52) - 1.0;
  }
};

/// A 60-joint humanoid-like tree: root, hips, 3 spine, neck, head, jaw, 2 eyes, per arm
/// shoulder/upper/upper-twist/lower/lower-twist/hand + 5 fingers × 3, per leg
/// upper/lower/foot/toes.
Skeleton synthetic_humanoid() {
  std::vector<Joint> joints;
  auto add = [&](const std::string& name, int parent, Vec3 offset) {
    Joint j;
    j.name = name;
    j.parent = parent;
    j.rest.translation = offset;
    joints.push_back(j);
    return static_cast<int>(joints.size()) - 1;
  };
  const int root = add("Root", -1, {0, 0, 0});
  const int hips = add("Hips", root, {0, 1.0, 0});
  int spine = hips;
  for (const char* n : {"Spine", "Chest", "UpperChest"}) spine = add(n, spine, {0, 0.12, 0});
  const int neck = add("Neck", spine, {0, 0.15, 0});
  const int head = add("Head", neck, {0, 0.1, 0});
  add("Jaw", head, {0, -0.03, 0.05});
  add("LeftEye", head, {0.03, 0.07, 0.08});
  add("RightEye", head, {-0.03, 0.07, 0.08});
  for (const double side : {1.0, -1.0}) {
    const std::string s = side > 0 ? "Left" : "Right";
    const int shoulder = add(s + "Shoulder", spine, {side * 0.05, 0.1, 0});
    const int upper = add(s + "UpperArm", shoulder, {side * 0.12, 0, 0});
    add(s + "UpperArmTwist", upper, {side * 0.14, 0, 0});
    const int lower = add(s + "LowerArm", upper, {side * 0.28, 0, 0});
    add(s + "LowerArmTwist", lower, {side * 0.13, 0, 0});
    const int hand = add(s + "Hand", lower, {side * 0.26, 0, 0});
    const char* fingers[] = {"Thumb", "Index", "Middle", "Ring", "Little"};
    for (int f = 0; f < 5; ++f) {
      int parent = hand;
      for (int k = 1; k <= 3; ++k)
        parent = add(s + fingers[f] + std::to_string(k), parent,
                     {side * (k == 1 ? 0.08 : 0.03), 0, 0.02 * (2 - f) * (k == 1)});
    }
    const int leg = add(s + "UpperLeg", hips, {side * 0.09, -0.05, 0});
    const int knee = add(s + "LowerLeg", leg, {0, -0.42, 0});
    const int foot = add(s + "Foot", knee, {0, -0.42, 0});
    add(s + "Toes", foot, {0, -0.05, 0.12});
  }
  return Skeleton::build(std::move(joints), true, "synthetic");
}

struct Subject {
  std::string name;
  Skeleton skeleton;
  std::vector<Clip> clips;
};

std::vector<std::unique_ptr<Subject>>& subjects() {
  static std::vector<std::unique_ptr<Subject>> s;
  return s;
}

/// Random local poses (small rotations about the rest) for one skeleton.
std::vector<Transform> random_pose(const Skeleton& sk, Lcg& rng) {
  std::vector<Transform> pose = sk.rest_pose();
  for (Transform& t : pose)
    t.rotation = normalize(t.rotation *
                           from_rotation_vector(Vec3{rng.next(), rng.next(), rng.next()} * 0.5));
  return pose;
}

void fk_transform(benchmark::State& state, const Subject* s) {
  Lcg rng;
  const std::vector<Transform> local = random_pose(s->skeleton, rng);
  std::vector<Mat4> model(local.size());
  for (auto _ : state) {
    local_to_model(s->skeleton.parents(), local, model);
    benchmark::DoNotOptimize(model.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(local.size()));
  state.counters["joints"] = static_cast<double>(local.size());
}

void fk_mat4(benchmark::State& state, const Subject* s) {
  Lcg rng;
  const std::vector<Transform> pose = random_pose(s->skeleton, rng);
  std::vector<Mat4> local(pose.size()), model(pose.size());
  for (size_t i = 0; i < pose.size(); ++i) local[i] = pose[i].to_matrix();
  for (auto _ : state) {
    local_to_model(s->skeleton.parents(), local, model);
    benchmark::DoNotOptimize(model.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(local.size()));
  state.counters["joints"] = static_cast<double>(local.size());
}

void sample_bench(benchmark::State& state, const Subject* s, RotationInterp interp) {
  const Clip& clip = s->clips.front();
  std::vector<Transform> pose(static_cast<size_t>(s->skeleton.joint_count()));
  // Step through the clip at an odd rate so every iteration lands between keys.
  const double step = 1.0 / 97.0;
  double t = 0;
  for (auto _ : state) {
    sample_pose(clip, s->skeleton, t, WrapMode::Loop, pose, interp);
    benchmark::DoNotOptimize(pose.data());
    benchmark::ClobberMemory();
    t += step;
    if (t > clip.duration) t -= clip.duration;
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(pose.size()));
  state.counters["joints"] = static_cast<double>(pose.size());
  state.counters["keys"] = static_cast<double>(clip.key_count());
}

void load(const std::string& name, const std::vector<std::string>& candidates) {
  for (const std::string& path : candidates) {
    if (!fs::exists(path)) continue;
    Asset asset = load_asset(path);
    auto s = std::make_unique<Subject>();
    s->name = name;
    s->skeleton = std::move(asset.skeleton);
    s->clips = std::move(asset.clips);
    subjects().push_back(std::move(s));
    return;
  }
  std::fprintf(stderr, "skeleton_bench: no file for %s (set KINEMA_SHARED_DATA), skipped\n",
               name.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  const std::string shared = shared_data();
  const std::string tests = kinema::bench::test_data_dir();
  {
    auto s = std::make_unique<Subject>();
    s->name = "synthetic60";
    s->skeleton = synthetic_humanoid();
    subjects().push_back(std::move(s));
  }
  load("cmu_walk31",
       {shared + "/bvh/cmu_cgspeed_mb/02_01.bvh", tests + "/bvh/cmu_cgspeed_mb/02_01.bvh"});
  load("cc3_rig100",
       {shared + "/bvh/cmu_iclone_cc3/002_01.bvh", tests + "/bvh/cmu_iclone_cc3/007_12.bvh"});
  load("quaternius_robot", {shared + "/gltf/quaternius_robot/robot.glb"});

  for (const auto& s : subjects()) {
    benchmark::RegisterBenchmark(("FK_Transform/" + s->name).c_str(), fk_transform, s.get());
    benchmark::RegisterBenchmark(("FK_Mat4/" + s->name).c_str(), fk_mat4, s.get());
  }
  for (const auto& s : subjects()) {
    if (s->clips.empty()) continue;
    benchmark::RegisterBenchmark(("SamplePose_Slerp/" + s->name).c_str(), sample_bench, s.get(),
                                 RotationInterp::Slerp);
    benchmark::RegisterBenchmark(("SamplePose_Nlerp/" + s->name).c_str(), sample_bench, s.get(),
                                 RotationInterp::Nlerp);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
