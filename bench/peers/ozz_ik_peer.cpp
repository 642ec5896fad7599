// bench/peers/ozz_ik_peer.cpp — ozz-animation's IKTwoBoneJob, the peer of kinema's
// solve_two_bone, measured in the same program on the same leg, targets and pole.
//
// Compiled into kinema_ik_bench only when CMake is given -DKINEMA_OZZ_ROOT (an ozz build tree or
// install prefix; BENCHMARKS.md has the commands that build ozz). Nothing of ozz is part of
// kinema: this file only calls its public API. No data files are needed.
//
// The leg (bench/ik_problems.h): hip, knee and ankle joints with identity rotations, so their
// model-space matrices are translations and the knee's local rotation axis is its model axis.
//   Ozz/TwoBone/Run        IKTwoBoneJob::Run with the target set (the job's other inputs — the
//                          three model matrices, pole vector, knee axis, weight 1, soften 1 (off)
//                          — stay as set up, as kinema's TwoBoneInput does), `reached` requested.
//   Ozz/TwoBone/RunApply   the same, then the two corrections multiplied into the local rotations
//                          of hip and knee in their SoaTransform (transpose to AoS, multiply,
//                          transpose back: what ozz's two-bone sample does), in the five-joint
//                          skeleton root → pelvis → hip → knee → ankle of kinema's SolveApply, the
//                          locals reset from the animated pose first.
//   Ozz/TwoBone/FkRunApply RunApply from local transforms only, as kinema's apply_two_bone starts:
//                          LocalToModelJob over that skeleton gives the job its three model
//                          matrices first (the caller's FK), then the same steps.
// Before timing, every target is solved once by both libraries and the knee and ankle positions
// compared: counter max_diff_m is the largest distance between ozz's and kinema's (ozz works in
// float, kinema in double); above 1 mm the benchmark reports an error instead of a time.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "ik_problems.h"
#include "kinema/ik/two_bone.h"
#include "ozz/animation/offline/raw_skeleton.h"
#include "ozz/animation/offline/skeleton_builder.h"
#include "ozz/animation/runtime/ik_two_bone_job.h"
#include "ozz/animation/runtime/local_to_model_job.h"
#include "ozz/animation/runtime/skeleton.h"
#include "ozz/base/maths/simd_math.h"
#include "ozz/base/maths/simd_quaternion.h"
#include "ozz/base/maths/soa_transform.h"

namespace {

using namespace kinema;
using namespace kinema::ik_bench;
namespace om = ozz::math;

constexpr std::size_t kTargets = 1024;  // same set as TwoBone/ in ik_bench.cpp (seed 1)

om::SimdFloat4 load(const Vec3& v) {
  return om::simd_float4::Load(static_cast<float>(v.x), static_cast<float>(v.y),
                               static_cast<float>(v.z), 0.f);
}

Quat to_quat(const om::SimdQuaternion& q) {
  float f[4];
  om::StorePtrU(q.xyzw, f);
  return Quat{f[0], f[1], f[2], f[3]};
}

struct OzzLeg {
  om::Float4x4 hip, knee, ankle;     // model space
  om::SimdFloat4 targets[kTargets];  // (a vector would drop SimdFloat4's alignment attribute)
  om::SimdFloat4 mid_axis, pole;
  double max_diff = 0;  // largest knee/ankle distance to kinema's solution (metres)

  OzzLeg()
      : hip(om::Float4x4::Translation(load(kHip))),
        knee(om::Float4x4::Translation(load(kKnee))),
        ankle(om::Float4x4::Translation(load(kAnkle))),
        // A positive turn about the knee axis opens the knee: (hip − knee) × (ankle − knee).
        mid_axis(load(normalize(cross(kHip - kKnee, kAnkle - kKnee)))),
        pole(load(kPoleDirection)) {
    const std::vector<LegTarget> legs = leg_targets(kTargets, 1);
    for (std::size_t i = 0; i < kTargets; ++i) targets[i] = load(legs[i].target);
    // Cross-check against kinema on every target.
    for (std::size_t i = 0; i < kTargets; ++i) {
      om::SimdQuaternion start_correction, mid_correction;
      bool reached = false;
      ozz::animation::IKTwoBoneJob job = make_job();
      job.target = targets[i];
      job.start_joint_correction = &start_correction;
      job.mid_joint_correction = &mid_correction;
      job.reached = &reached;
      if (!job.Run()) {
        max_diff = 1e30;
        return;
      }
      // Identity joint rotations: the hip's new model rotation is its correction, the knee's
      // the product of both.
      const Quat hip_rotation = to_quat(start_correction);
      const Quat knee_rotation = hip_rotation * to_quat(mid_correction);
      const Vec3 knee_position = kHip + rotate(hip_rotation, kKnee - kHip);
      const Vec3 ankle_position = knee_position + rotate(knee_rotation, kAnkle - kKnee);

      TwoBoneInput in;
      in.root = kHip;
      in.mid = kKnee;
      in.end = kAnkle;
      in.pole = kHip + kPoleDirection;
      in.target = legs[i].target;
      const TwoBoneResult r = solve_two_bone(in);
      max_diff = std::max({max_diff, distance(knee_position, r.mid_position),
                           distance(ankle_position, r.end_position)});
      if (reached != r.reached) max_diff = 1e30;
    }
  }

  ozz::animation::IKTwoBoneJob make_job() const {
    ozz::animation::IKTwoBoneJob job;
    job.start_joint = &hip;
    job.mid_joint = &knee;
    job.end_joint = &ankle;
    job.mid_axis = mid_axis;
    job.pole_vector = pole;
    job.weight = 1.f;
    job.soften = 1.f;  // no softening, as kinema's soft_distance = 0
    return job;
  }
};

const OzzLeg& leg() {
  static const OzzLeg* l = new OzzLeg;  // lives until exit, like the benchmarks that use it
  return *l;
}

bool checked(benchmark::State& state, const OzzLeg& l) {
  state.counters["max_diff_m"] = l.max_diff;
  if (l.max_diff > 1e-3) {
    state.SkipWithError("ozz's and kinema's solutions differ by more than 1 mm");
    return false;
  }
  return true;
}

void Ozz_TwoBone_Run(benchmark::State& state) {
  const OzzLeg& l = leg();
  if (!checked(state, l)) return;
  om::SimdQuaternion start_correction, mid_correction;
  bool reached = false;
  ozz::animation::IKTwoBoneJob job = l.make_job();
  job.start_joint_correction = &start_correction;
  job.mid_joint_correction = &mid_correction;
  job.reached = &reached;
  std::size_t i = 0;
  for (auto _ : state) {
    job.target = l.targets[i++ & (kTargets - 1)];
    benchmark::DoNotOptimize(job.Run());
    benchmark::DoNotOptimize(start_correction);
    benchmark::DoNotOptimize(mid_correction);
    benchmark::DoNotOptimize(reached);
  }
}
BENCHMARK(Ozz_TwoBone_Run)->Name("Ozz/TwoBone/Run");

// Multiplies joint `index`'s local rotation by `q` in place (ozz's two-bone sample does this with
// its MultiplySoATransformQuaternion helper, the same steps).
void multiply_local_rotation(int index, const om::SimdQuaternion& q, om::SoaTransform* locals) {
  om::SoaTransform& soa = locals[index / 4];
  om::SimdQuaternion aos[4];
  om::Transpose4x4(&soa.rotation.x, &aos->xyzw);
  aos[index & 3] = aos[index & 3] * q;
  om::Transpose4x4(&aos->xyzw, &soa.rotation.x);
}

void Ozz_TwoBone_RunApply(benchmark::State& state) {
  const OzzLeg& l = leg();
  if (!checked(state, l)) return;
  om::SimdQuaternion start_correction, mid_correction;
  bool reached = false;
  ozz::animation::IKTwoBoneJob job = l.make_job();
  job.start_joint_correction = &start_correction;
  job.mid_joint_correction = &mid_correction;
  job.reached = &reached;
  // The leg in a skeleton as kinema's TwoBone/SolveApply has it: root 0 → pelvis 1 → hip 2 →
  // knee 3 → ankle 4, two SoA groups of four joints (identity rotations).
  const auto group = [](const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d) {
    const auto f = [](double v) { return static_cast<float>(v); };
    om::SoaTransform t = om::SoaTransform::identity();
    t.translation = om::SoaFloat3::Load(om::simd_float4::Load(f(a.x), f(b.x), f(c.x), f(d.x)),
                                        om::simd_float4::Load(f(a.y), f(b.y), f(c.y), f(d.y)),
                                        om::simd_float4::Load(f(a.z), f(b.z), f(c.z), f(d.z)));
    return t;
  };
  const om::SoaTransform animated[2] = {
      group(kLegOffsets[0], kLegOffsets[1], kLegOffsets[2], kLegOffsets[3]),
      group(kLegOffsets[4], {}, {}, {})};
  om::SoaTransform locals[2];
  std::size_t i = 0;
  for (auto _ : state) {
    locals[0] = animated[0];
    locals[1] = animated[1];
    job.target = l.targets[i++ & (kTargets - 1)];
    benchmark::DoNotOptimize(job.Run());
    multiply_local_rotation(2, start_correction, locals);
    multiply_local_rotation(3, mid_correction, locals);
    benchmark::DoNotOptimize(locals);
  }
}
BENCHMARK(Ozz_TwoBone_RunApply)->Name("Ozz/TwoBone/RunApply");

// The same leg given as kinema's apply_two_bone is, by its local transforms only: ozz's caller
// first runs LocalToModelJob over the five-joint skeleton for the three model matrices the job
// reads, then RunApply's steps. (The FK that places the corrected leg afterwards is left out of
// both sides: each library's user runs it once the locals are written.)
void Ozz_TwoBone_FkRunApply(benchmark::State& state) {
  const OzzLeg& l = leg();
  if (!checked(state, l)) return;
  const auto f = [](double v) { return static_cast<float>(v); };
  namespace offline = ozz::animation::offline;
  offline::RawSkeleton raw;
  const std::array<Vec3, 5>& offsets = kLegOffsets;
  raw.roots.resize(1);
  offline::RawSkeleton::Joint* joint = &raw.roots[0];
  for (int j = 0; j < 5; ++j) {
    joint->name = "joint" + std::to_string(j);
    joint->transform = ozz::math::Transform::identity();
    joint->transform.translation = {f(offsets[j].x), f(offsets[j].y), f(offsets[j].z)};
    if (j < 4) {
      joint->children.resize(1);
      joint = &joint->children[0];
    }
  }
  const ozz::unique_ptr<ozz::animation::Skeleton> skeleton = offline::SkeletonBuilder()(raw);
  if (!skeleton || skeleton->num_joints() != 5) {
    state.SkipWithError("SkeletonBuilder failed on the five-joint leg");
    return;
  }
  om::SoaTransform locals[2];
  const ozz::span<const om::SoaTransform> animated = skeleton->joint_rest_poses();
  om::Float4x4 models[5];
  ozz::animation::LocalToModelJob fk;
  fk.skeleton = skeleton.get();
  fk.input = ozz::make_span(locals);
  fk.output = ozz::make_span(models);
  om::SimdQuaternion start_correction, mid_correction;
  bool reached = false;
  ozz::animation::IKTwoBoneJob job = l.make_job();
  job.start_joint = &models[2];
  job.mid_joint = &models[3];
  job.end_joint = &models[4];
  job.start_joint_correction = &start_correction;
  job.mid_joint_correction = &mid_correction;
  job.reached = &reached;
  // The FK must give the matrices the other rows are handed (within float rounding).
  std::copy(animated.begin(), animated.end(), locals);
  if (!fk.Run()) {
    state.SkipWithError("LocalToModelJob failed");
    return;
  }
  const om::Float4x4* expected[3] = {&l.hip, &l.knee, &l.ankle};
  for (int j = 0; j < 3; ++j) {
    float got[4], want[4];
    om::StorePtrU(models[2 + j].cols[3], got);
    om::StorePtrU(expected[j]->cols[3], want);
    for (int c = 0; c < 3; ++c)
      if (std::abs(got[c] - want[c]) > 1e-6f) {
        state.SkipWithError("the leg's FK does not reproduce the job's model matrices");
        return;
      }
  }
  std::size_t i = 0;
  for (auto _ : state) {
    std::copy(animated.begin(), animated.end(), locals);
    benchmark::DoNotOptimize(fk.Run());
    job.target = l.targets[i++ & (kTargets - 1)];
    benchmark::DoNotOptimize(job.Run());
    multiply_local_rotation(2, start_correction, locals);
    multiply_local_rotation(3, mid_correction, locals);
    benchmark::DoNotOptimize(locals);
  }
}
BENCHMARK(Ozz_TwoBone_FkRunApply)->Name("Ozz/TwoBone/FkRunApply");

}  // namespace
