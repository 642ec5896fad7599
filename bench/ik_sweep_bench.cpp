// bench/ik_sweep_bench.cpp — robustness of the IK solvers: a seeded randomized sweep.
//
// Not a Google Benchmark program: it runs every solver on the same seeded targets and prints one
// Markdown table (BENCHMARKS.md, "Inverse kinematics"). Usage:
//   kinema_ik_sweep_bench [--targets=N] [--seed=S]      (defaults: 100000 targets, seed 4)
//
// Problems (bench/ik_problems.h): two-bone on a leg (90 % reachable targets, 10 % 2–50 % beyond
// reach); CCD, FABRIK and the four Jacobian methods on a 10-joint ball-joint chain of 10 cm
// bones (90 % of targets are the end effector of a random pose, so known reachable; 10 % lie at
// 1.02–1.5 × the reach). Every solve starts from the same rest pose. The Jacobian methods run
// with Buss's 10 cm error clamp (kMaxErrorStep), with the library's default (automatic) clamp and,
// for DLS and adaptive DLS, with none.
//
// Per solver and target class: success (reachable: status kReached *and* an error ≤ 1e-4 m
// recomputed here by forward kinematics of the written pose; unreachable: status kUnreachable),
// mean iterations, worst error (reachable: the largest end-effector distance; unreachable: the
// largest excess over the best possible distance d − reach), the number of solves whose output
// holds a NaN / infinity or whose bone lengths moved by more than 1e-9 m, and the mean time per
// solve (a separate timed pass over the same targets, CPU time of the thread: the solves and
// the copy of the start pose, not the checks).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

#include "ik_problems.h"
#include "kinema/ik/ccd.h"
#include "kinema/ik/fabrik.h"
#include "kinema/ik/jacobian.h"
#include "kinema/ik/two_bone.h"

namespace {

using namespace kinema;
using namespace kinema::ik_bench;

/// What one solve left behind, checked outside the timed pass.
struct Outcome {
  IkResult result;
  Vec3 end{};             ///< end effector recomputed from the written pose
  bool finite = true;     ///< every written number finite
  double bone_error = 0;  ///< largest change of a bone length (metres)
};

struct Row {
  std::string solver, targets;
  bool analytic = false;  ///< no iterations to report
  std::size_t count = 0, success = 0, bad = 0;
  double iterations = 0, worst = 0, ns = 0;
};

// CPU time of this thread (seconds): unlike wall time, it does not count other programs' turns
// on a shared machine.
double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

template <class Solve>
double time_pass(const std::vector<ChainTarget>& targets, bool reachable, Solve&& solve) {
  std::size_t n = 0;
  double sink = 0;
  const double t0 = cpu_seconds();
  for (const ChainTarget& t : targets) {
    if (t.reachable != reachable) continue;
    sink += solve(t.target, false).result.error;
    ++n;
  }
  const double t1 = cpu_seconds();
  if (std::isnan(sink)) std::puts("");  // keeps the solves alive
  return n ? (t1 - t0) * 1e9 / static_cast<double>(n) : 0.0;
}

template <class Solve>
Row sweep(const char* name, const Vec3& base, double reach, const std::vector<ChainTarget>& targets,
          bool reachable, Solve&& solve) {
  Row row;
  row.solver = name;
  row.targets = reachable ? "reachable" : "unreachable";
  double iterations = 0;
  for (const ChainTarget& t : targets) {
    if (t.reachable != reachable) continue;
    const Outcome o = solve(t.target, true);
    ++row.count;
    iterations += o.result.iterations;
    const double err = distance(o.end, t.target);
    if (!o.finite || !std::isfinite(err) || o.bone_error > 1e-9) ++row.bad;
    if (reachable) {
      if (o.result.status == IkStatus::kReached && err <= kTolerance) ++row.success;
      row.worst = std::max(row.worst, err);
    } else {
      if (o.result.status == IkStatus::kUnreachable) ++row.success;
      row.worst = std::max(row.worst, err - (distance(base, t.target) - reach));
    }
  }
  row.iterations = row.count ? iterations / static_cast<double>(row.count) : 0;
  row.ns = time_pass(targets, reachable, solve);
  return row;
}

double bone_error(const Chain10& c, const std::array<Vec3, kChainJoints + 1>& p) {
  double worst = 0;
  for (std::size_t i = 0; i < kChainJoints; ++i)
    worst = std::max(worst, std::abs(distance(p[i], p[i + 1]) - length(c.offsets[i])));
  return worst;
}

bool finite_pose(const std::array<Quat, kChainJoints>& q) {
  return std::all_of(q.begin(), q.end(), [](const Quat& x) { return is_finite(x); });
}

std::vector<Row> two_bone_rows(std::size_t count, std::uint64_t seed) {
  const std::vector<LegTarget> legs = leg_targets(count, seed);
  std::vector<ChainTarget> targets;  // same shape as the chain's, for sweep()
  for (const LegTarget& t : legs) targets.push_back({t.target, t.reachable});
  const double l1 = leg_upper(), l2 = leg_lower();
  const auto solve = [&](const Vec3& target, bool check) {
    TwoBoneInput in;
    in.root = kHip;
    in.mid = kKnee;
    in.end = kAnkle;
    in.target = target;
    in.pole = kHip + kPoleDirection;
    const TwoBoneResult r = solve_two_bone(in);
    Outcome o;
    o.result.error = r.mid_bend;  // keeps the solve alive in the timed pass
    if (!check) return o;
    o.result.error = distance(r.end_position, target);
    o.result.iterations = 0;
    o.result.status = r.status == TwoBoneStatus::kReached       ? IkStatus::kReached
                      : r.status == TwoBoneStatus::kUnreachable ? IkStatus::kUnreachable
                                                                : IkStatus::kInvalidInput;
    // End effector from the deltas, as apply_two_bone would place it.
    const Vec3 mid = kHip + rotate(r.root_delta, kKnee - kHip);
    o.end = mid + rotate(r.mid_delta, kAnkle - kKnee);
    o.finite = is_finite(r.root_delta) && is_finite(r.mid_delta) && is_finite(r.end_delta) &&
               is_finite(r.mid_position) && is_finite(r.end_position);
    o.bone_error =
        std::max(std::abs(distance(kHip, mid) - l1), std::abs(distance(mid, o.end) - l2));
    return o;
  };
  std::vector<Row> rows;
  for (bool reachable : {true, false}) {
    rows.push_back(sweep("two-bone (leg)", kHip, l1 + l2, targets, reachable, solve));
    rows.back().analytic = true;
  }
  return rows;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t count = 100000;
  std::uint64_t seed = 4;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--targets=", 10) == 0) {
      count = std::strtoull(argv[i] + 10, nullptr, 10);
    } else if (std::strncmp(argv[i], "--seed=", 7) == 0) {
      seed = std::strtoull(argv[i] + 7, nullptr, 10);
    } else {
      std::fprintf(stderr, "usage: %s [--targets=N] [--seed=S]\n", argv[0]);
      return 2;
    }
  }

  const Chain10 c;
  const std::vector<ChainTarget> targets = chain_targets(c, count, seed, 0.1);
  std::vector<Row> rows = two_bone_rows(count, seed);

  const IkChain chain = c.chain();
  const Vec3 origin = chain.base_position;
  const double reach = c.reach();
  const auto ccd = [&](const Vec3& target, bool check) {
    Outcome o;
    std::array<Quat, kChainJoints> local = c.rest;
    CcdSettings s;
    s.settings = ik_settings(kCcdCap);
    o.result = ccd_solve(chain, local, target, s);
    if (!check) return o;
    const auto p = c.points(local);
    o.end = p[kChainJoints];
    o.finite = finite_pose(local);
    o.bone_error = bone_error(c, p);
    return o;
  };
  const std::array<Vec3, kChainJoints + 1> rest_points = c.points(c.rest);
  const auto fabrik = [&](const Vec3& target, bool check) {
    Outcome o;
    std::array<Vec3, kChainJoints + 1> p = rest_points;
    FabrikSettings s;
    s.settings = ik_settings(kFabrikCap);
    o.result = fabrik_solve_chain(p, target, s);
    if (!check) return o;
    o.end = p[kChainJoints];
    o.finite = std::all_of(p.begin(), p.end(), [](const Vec3& v) { return is_finite(v); });
    o.bone_error = bone_error(c, p);
    return o;
  };
  const auto jacobian = [&](JacobianMethod method, ErrorClamp clamp = ErrorClamp::kBuss) {
    return [&c, &chain, method, clamp](const Vec3& target, bool check) {
      Outcome o;
      std::array<Quat, kChainJoints> local = c.rest;
      o.result = jacobian_solve(chain, c.joints, local, target, jacobian_settings(method, clamp));
      if (!check) return o;
      const auto p = c.points(local);
      o.end = p[kChainJoints];
      o.finite = finite_pose(local);
      o.bone_error = bone_error(c, p);
      return o;
    };
  };
  for (bool reachable : {true, false}) {
    rows.push_back(sweep("CCD", origin, reach, targets, reachable, ccd));
    rows.push_back(sweep("FABRIK", origin, reach, targets, reachable, fabrik));
    rows.push_back(sweep("Jacobian transpose", origin, reach, targets, reachable,
                         jacobian(JacobianMethod::kTranspose)));
    rows.push_back(sweep("Jacobian pseudo-inverse", origin, reach, targets, reachable,
                         jacobian(JacobianMethod::kPseudoInverse)));
    rows.push_back(sweep("DLS (λ = 0.05)", origin, reach, targets, reachable,
                         jacobian(JacobianMethod::kDampedLeastSquares)));
    rows.push_back(sweep("adaptive DLS", origin, reach, targets, reachable,
                         jacobian(JacobianMethod::kAdaptiveDampedLeastSquares)));
    rows.push_back(sweep("Jacobian transpose, library defaults", origin, reach, targets, reachable,
                         jacobian(JacobianMethod::kTranspose, ErrorClamp::kDefault)));
    rows.push_back(sweep("pseudo-inverse, library defaults", origin, reach, targets, reachable,
                         jacobian(JacobianMethod::kPseudoInverse, ErrorClamp::kDefault)));
    rows.push_back(sweep("DLS, library defaults", origin, reach, targets, reachable,
                         jacobian(JacobianMethod::kDampedLeastSquares, ErrorClamp::kDefault)));
    rows.push_back(
        sweep("adaptive DLS, library defaults", origin, reach, targets, reachable,
              jacobian(JacobianMethod::kAdaptiveDampedLeastSquares, ErrorClamp::kDefault)));
    rows.push_back(sweep("DLS, no error clamp", origin, reach, targets, reachable,
                         jacobian(JacobianMethod::kDampedLeastSquares, ErrorClamp::kOff)));
    rows.push_back(sweep("adaptive DLS, no error clamp", origin, reach, targets, reachable,
                         jacobian(JacobianMethod::kAdaptiveDampedLeastSquares, ErrorClamp::kOff)));
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const Row& a, const Row& b) { return a.targets < b.targets; });

  std::printf(
      "seed %llu, %zu targets per solver (two-bone: leg; others: 10-joint chain), "
      "tolerance %g m\n\n",
      static_cast<unsigned long long>(seed), count, kTolerance);
  std::printf(
      "| solver | targets | count | success | mean iterations | worst error (m) | "
      "NaN / bone-length faults | time per solve |\n|---|---|---|---|---|---|---|---|\n");
  for (const Row& r : rows) {
    char iterations[32];
    std::snprintf(iterations, sizeof iterations, "%.2f", r.iterations);
    std::printf("| %s | %s | %zu | %.3f %% | %s | %.3g | %zu | %.0f ns |\n", r.solver.c_str(),
                r.targets.c_str(), r.count,
                r.count ? 100.0 * static_cast<double>(r.success) / static_cast<double>(r.count) : 0,
                r.analytic ? "— (analytic)" : iterations, r.worst, r.bad, r.ns);
  }
  std::printf(
      "\nunreachable: success = status kUnreachable; worst error = largest excess of the "
      "final distance over d − reach.\n");
  return 0;
}
