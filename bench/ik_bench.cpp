// bench/ik_bench.cpp — time per solve of the IK solvers (BENCHMARKS.md, "Inverse kinematics").
//
// TwoBone/: kinema's solve_two_bone on a leg (bench/ik_problems.h), cycling through 1024 seeded
// targets of which 10 % are beyond reach; SolveApply adds apply_two_bone to the local transforms
// of a five-joint skeleton root → pelvis → hip → knee → ankle (reset from the animated pose
// first, as a new frame would); FkSolveApply starts from the local transforms alone
// (local_to_model for the solve's positions, then the same) and LocalSolveApply does that with
// solve_two_bone_local (FK along the chain's ancestors only). When CMake is
// given -DKINEMA_OZZ_ROOT, bench/peers/ozz_ik_peer.cpp adds ozz-animation's IKTwoBoneJob on the
// same leg and targets (Ozz/TwoBone/...) to this program.
//
// Chain10/: CCD, FABRIK and the Jacobian methods on the 10-joint chain to 1e-4 m, cycling through
// 1024 seeded reachable targets (end effectors of random poses); every solve starts from the
// same rest pose. Counters: iterations (mean per solve) and reached (fraction of solves that
// ended kReached). The iteration caps are those of bench/ik_problems.h.
#include <benchmark/benchmark.h>

#include <array>
#include <vector>

#include "ik_problems.h"
#include "kinema/ik/ccd.h"
#include "kinema/ik/fabrik.h"
#include "kinema/ik/jacobian.h"
#include "kinema/ik/two_bone.h"
#include "kinema/math/transform.h"
#include "kinema/skeleton/skeleton.h"

namespace {

using namespace kinema;
using namespace kinema::ik_bench;

constexpr std::size_t kTargets = 1024;  // a power of two: the index wraps with a mask

const std::vector<LegTarget>& leg() {
  static const std::vector<LegTarget> t = leg_targets(kTargets, 1);
  return t;
}

TwoBoneInput leg_input() {
  TwoBoneInput in;
  in.root = kHip;
  in.mid = kKnee;
  in.end = kAnkle;
  in.pole = kHip + kPoleDirection;
  return in;
}

// The leg's skeleton (kLegParents, kLegOffsets): the animated pose every frame starts from.
const std::array<Transform, 5>& leg_pose() {
  static const std::array<Transform, 5> pose = [] {
    std::array<Transform, 5> p;
    for (std::size_t j = 0; j < p.size(); ++j)
      p[j] = Transform{kLegOffsets[j], Quat::identity(), {1, 1, 1}};
    return p;
  }();
  return pose;
}

void TwoBone_Solve(benchmark::State& state) {
  const std::vector<LegTarget>& targets = leg();
  TwoBoneInput in = leg_input();
  std::size_t i = 0;
  for (auto _ : state) {
    in.target = targets[i++ & (kTargets - 1)].target;
    TwoBoneResult r = solve_two_bone(in);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(TwoBone_Solve)->Name("TwoBone/Solve");

void TwoBone_SolveApply(benchmark::State& state) {
  const std::vector<LegTarget>& targets = leg();
  TwoBoneInput in = leg_input();
  // apply_two_bone walks up the leg's skeleton to the root as it would in a character.
  const std::array<int, 5>& parents = kLegParents;
  const std::array<Transform, 5>& animated = leg_pose();
  std::array<Transform, 5> local;
  std::size_t i = 0;
  for (auto _ : state) {
    local = animated;
    in.target = targets[i++ & (kTargets - 1)].target;
    const TwoBoneResult r = solve_two_bone(in);
    apply_two_bone(r, parents, 2, 3, 4, local);
    benchmark::DoNotOptimize(local);
  }
}
BENCHMARK(TwoBone_SolveApply)->Name("TwoBone/SolveApply");

// From local transforms alone, both sides doing their FK (the peer of Ozz/TwoBone/FkRunApply):
// local_to_model over the five joints gives the solve its hip, knee and ankle, then SolveApply's
// steps. SolveApply above is handed those three positions, as ozz's RunApply is its matrices.
void TwoBone_FkSolveApply(benchmark::State& state) {
  const std::vector<LegTarget>& targets = leg();
  TwoBoneInput in = leg_input();
  const std::array<int, 5>& parents = kLegParents;
  const std::array<Transform, 5>& animated = leg_pose();
  std::array<Transform, 5> local;
  std::array<Mat4, 5> model;
  const auto position = [&](int j) { return model[static_cast<size_t>(j)].translation_part(); };
  // The FK must give the positions SolveApply is handed.
  local_to_model(parents, animated, model);
  if (distance(position(2), kHip) > 1e-12 || distance(position(3), kKnee) > 1e-12 ||
      distance(position(4), kAnkle) > 1e-12) {
    state.SkipWithError("the leg's FK does not reproduce the solve's positions");
    return;
  }
  std::size_t i = 0;
  for (auto _ : state) {
    local = animated;
    local_to_model(parents, local, model);
    in.root = position(2);
    in.mid = position(3);
    in.end = position(4);
    in.pole = in.root + kPoleDirection;
    in.target = targets[i++ & (kTargets - 1)].target;
    const TwoBoneResult r = solve_two_bone(in);
    apply_two_bone(r, parents, 2, 3, 4, local);
    benchmark::DoNotOptimize(local);
  }
}
BENCHMARK(TwoBone_FkSolveApply)->Name("TwoBone/FkSolveApply");

// The same from local transforms, by solve_two_bone_local: FK along the chain's ancestors only.
void TwoBone_LocalSolveApply(benchmark::State& state) {
  const std::vector<LegTarget>& targets = leg();
  TwoBoneInput in = leg_input();
  const std::array<int, 5>& parents = kLegParents;
  const std::array<Transform, 5>& animated = leg_pose();
  std::array<Transform, 5> local;
  in.pole = kHip + kPoleDirection;
  std::size_t i = 0;
  for (auto _ : state) {
    local = animated;
    in.target = targets[i++ & (kTargets - 1)].target;
    const TwoBoneResult r = solve_two_bone_local(in, parents, 2, 3, 4, local);
    benchmark::DoNotOptimize(r);
    benchmark::DoNotOptimize(local);
  }
}
BENCHMARK(TwoBone_LocalSolveApply)->Name("TwoBone/LocalSolveApply");

// What ozz's IKTwoBoneJob user does: the joints' model rotations come from the FK the caller
// already ran; the solve's local corrections are multiplied into the local rotations.
void TwoBone_SolveCorrect(benchmark::State& state) {
  const std::vector<LegTarget>& targets = leg();
  TwoBoneInput in = leg_input();
  const std::array<Quat, 3> animated{Quat::identity(), Quat::identity(), Quat::identity()};
  // Opaque to the optimizer (DoNotOptimize clobbers memory), as ozz's input matrices are.
  std::array<Quat, 3> model{Quat::identity(), Quat::identity(), Quat::identity()};
  benchmark::DoNotOptimize(model.data());
  std::array<Quat, 3> local;
  std::size_t i = 0;
  for (auto _ : state) {
    local = animated;
    in.target = targets[i++ & (kTargets - 1)].target;
    const TwoBoneResult r = solve_two_bone(in);
    const TwoBoneCorrections c = two_bone_local_corrections(r, model[0], model[1], model[2]);
    local[0] = local[0] * c.root;
    local[1] = local[1] * c.mid;
    local[2] = local[2] * c.end;
    benchmark::DoNotOptimize(local);
  }
}
BENCHMARK(TwoBone_SolveCorrect)->Name("TwoBone/SolveCorrect");

// ---- The 10-joint chain ------------------------------------------------------------------------

const Chain10& chain10() {
  static const Chain10 c;
  return c;
}

const std::vector<ChainTarget>& chain_set() {
  static const std::vector<ChainTarget> t = chain_targets(chain10(), kTargets, 2);
  return t;
}

void report(benchmark::State& state, long iterations, long reached) {
  state.counters["iterations"] =
      benchmark::Counter(static_cast<double>(iterations), benchmark::Counter::kAvgIterations);
  state.counters["reached"] =
      benchmark::Counter(static_cast<double>(reached), benchmark::Counter::kAvgIterations);
}

void Chain10_Ccd(benchmark::State& state) {
  const Chain10& c = chain10();
  const IkChain chain = c.chain();
  const std::vector<ChainTarget>& targets = chain_set();
  CcdSettings s;
  s.settings = ik_settings(kCcdCap);
  std::array<Quat, kChainJoints> local;
  std::size_t i = 0;
  long iterations = 0, reached = 0;
  for (auto _ : state) {
    local = c.rest;
    const IkResult r = ccd_solve(chain, local, targets[i++ & (kTargets - 1)].target, s);
    benchmark::DoNotOptimize(local);
    iterations += r.iterations;
    reached += r.status == IkStatus::kReached;
  }
  report(state, iterations, reached);
}
BENCHMARK(Chain10_Ccd)->Name("Chain10/CCD");

void Chain10_Fabrik(benchmark::State& state) {
  const Chain10& c = chain10();
  const std::array<Vec3, kChainJoints + 1> rest = c.points(c.rest);
  const std::vector<ChainTarget>& targets = chain_set();
  FabrikSettings s;
  s.settings = ik_settings(kFabrikCap);
  std::array<Vec3, kChainJoints + 1> points;
  std::size_t i = 0;
  long iterations = 0, reached = 0;
  for (auto _ : state) {
    points = rest;
    const IkResult r = fabrik_solve_chain(points, targets[i++ & (kTargets - 1)].target, s);
    benchmark::DoNotOptimize(points);
    iterations += r.iterations;
    reached += r.status == IkStatus::kReached;
  }
  report(state, iterations, reached);
}
BENCHMARK(Chain10_Fabrik)->Name("Chain10/FABRIK");

void Chain10_Jacobian(benchmark::State& state, JacobianMethod method) {
  const Chain10& c = chain10();
  const IkChain chain = c.chain();
  const std::vector<ChainTarget>& targets = chain_set();
  const JacobianSettings s = jacobian_settings(method);
  std::array<Quat, kChainJoints> local;
  std::size_t i = 0;
  long iterations = 0, reached = 0;
  for (auto _ : state) {
    local = c.rest;
    const IkResult r =
        jacobian_solve(chain, c.joints, local, targets[i++ & (kTargets - 1)].target, s);
    benchmark::DoNotOptimize(local);
    iterations += r.iterations;
    reached += r.status == IkStatus::kReached;
  }
  report(state, iterations, reached);
}
BENCHMARK_CAPTURE(Chain10_Jacobian, Transpose, JacobianMethod::kTranspose)
    ->Name("Chain10/JacobianTranspose");
BENCHMARK_CAPTURE(Chain10_Jacobian, PseudoInverse, JacobianMethod::kPseudoInverse)
    ->Name("Chain10/JacobianPseudoInverse");
BENCHMARK_CAPTURE(Chain10_Jacobian, Dls, JacobianMethod::kDampedLeastSquares)
    ->Name("Chain10/JacobianDLS");
BENCHMARK_CAPTURE(Chain10_Jacobian, AdaptiveDls, JacobianMethod::kAdaptiveDampedLeastSquares)
    ->Name("Chain10/JacobianAdaptiveDLS");

}  // namespace

BENCHMARK_MAIN();
