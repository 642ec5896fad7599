// bench/full_body_bench.cpp — full-body IK (issue 4 items 8 and 10): one FullBodySolver::solve
// on the pab character of data/demo/pab_walk.glb (76 nodes: 68 body joints, 8 camera helpers;
// 21 joints free: 17 ball joints, 4 hinges, plus the pelvis translation, so 58 DOF), from the rest
// pose to goals read off a reachable target pose: both hands and feet (position), head aim, and the
// centre of mass over the target's feet. Feet and COM are kHigh, the rest kNormal. The
// `iterations` counter is the mean iterations per solve; ns per solve is the reported time.
// A second case adds an unreachable right hand (3 m too far), so every solve runs to the cap.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bench_paths.h"
#include "kinema/ik/full_body.h"
#include "kinema/io/asset_file.h"

namespace {

using namespace kinema;

constexpr double kDeg = kPi / 180.0;

struct Body {
  Skeleton skeleton;
  std::vector<Transform> rest;
  std::vector<FullBodyJoint> joints;
  std::unique_ptr<FullBodySolver> solver;
  std::vector<Vec3> polygon;
  std::vector<FullBodyGoal> goals;
};

std::vector<Transform> model_of(const Skeleton& s, std::span<const Transform> local) {
  std::vector<Transform> model(local.size());
  for (std::size_t j = 0; j < local.size(); ++j) {
    const int p = s.parent(static_cast<int>(j));
    model[j] = p < 0 ? local[j] : model[static_cast<std::size_t>(p)] * local[j];
  }
  return model;
}

// Deterministic pseudo-random numbers in [-1, 1) (as in skeleton_bench.cpp).
struct Lcg {
  uint64_t s = 0x9E3779B97F4A7C15ull;
  double next() {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>(s >> 11) / static_cast<double>(1ull << 52) - 1.0;
  }
};

// How far (x, z) of q lies inside the polygon (negative outside, or −1 when the polygon is not
// strictly convex).
double inset(std::span<const Vec3> poly, const Vec3& q) {
  const std::size_t n = poly.size();
  int sign = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const Vec3 &a = poly[k], &b = poly[(k + 1) % n], &c = poly[(k + 2) % n];
    const double t = (b.x - a.x) * (c.z - b.z) - (b.z - a.z) * (c.x - b.x);
    const int s = t > 1e-6 ? 1 : t < -1e-6 ? -1 : 0;
    if (s == 0 || (sign != 0 && s != sign)) return -1;
    sign = s;
  }
  double d = 1e300;
  for (std::size_t k = 0; k < n; ++k) {
    const Vec3 &a = poly[k], &b = poly[(k + 1) % n];
    const double ex = b.x - a.x, ez = b.z - a.z;
    d = std::min(d, sign * (ex * (q.z - a.z) - ez * (q.x - a.x)) / std::hypot(ex, ez));
  }
  return d;
}

bool below(const Skeleton& s, int joint, int ancestor) {
  for (int j = joint; j >= 0; j = s.parent(j))
    if (j == ancestor) return true;
  return false;
}

Vec3 bone_axis(const Body& b, int j) {
  for (int c = j + 1; c < b.skeleton.joint_count(); ++c)
    if (b.skeleton.parent(c) == j && length(b.rest[static_cast<std::size_t>(c)].translation) > 1e-6)
      return normalize(b.rest[static_cast<std::size_t>(c)].translation);
  return Vec3::unit_x();
}

// The same rig as tests/ik/full_body_test.cpp.
Body make_body() {
  Body b;
  b.skeleton = load_asset(kinema::bench::source_dir() + "/data/demo/pab_walk.glb").skeleton;
  b.rest = b.skeleton.rest_pose();
  const std::size_t n = b.rest.size();
  const int hips = b.skeleton.find("Hips"), footsteps = b.skeleton.find("Bip01 Footsteps");
  const int lf = b.skeleton.find("LeftFoot"), rf = b.skeleton.find("RightFoot");
  const int lt = b.skeleton.find("Bip01LToe0Nub"), rt = b.skeleton.find("Bip01RToe0Nub");
  const std::vector<Transform> rest_model = model_of(b.skeleton, b.rest);
  const Vec3 toe = rest_model[static_cast<std::size_t>(lt)].translation -
                   rest_model[static_cast<std::size_t>(lf)].translation;
  const Vec3 forward = normalize(Vec3{toe.x, 0, toe.z});
  b.joints.assign(n, FullBodyJoint{FullBodyJointKind::kLocked, {1, 0, 0}, {}, 0.0});
  for (int j = 0; j < static_cast<int>(n); ++j)
    if (below(b.skeleton, j, hips) && !below(b.skeleton, j, footsteps))
      b.joints[static_cast<std::size_t>(j)].mass = -1;
  auto ball = [&](const char* name, double cone, double twist) {
    const int j = b.skeleton.find(name);
    FullBodyJoint& joint = b.joints[static_cast<std::size_t>(j)];
    joint.kind = FullBodyJointKind::kBall;
    joint.limit = JointLimit::of(make_swing_twist_limit(bone_axis(b, j), cone, -twist, twist));
  };
  auto hinge = [&](const char* name, const Vec3& towards) {
    const int j = b.skeleton.find(name);
    const Quat r = rest_model[static_cast<std::size_t>(j)].rotation;
    const Vec3 axis = rotate(conjugate(r), normalize(cross(rotate(r, bone_axis(b, j)), towards)));
    FullBodyJoint& joint = b.joints[static_cast<std::size_t>(j)];
    joint.kind = FullBodyJointKind::kHinge;
    joint.hinge_axis = axis;
    joint.limit = JointLimit::of(make_hinge_limit(axis, 0, 150 * kDeg));
  };
  for (const char* name : {"Pelvis", "Spine", "Spine1", "Spine2", "Spine3", "Neck", "Head"})
    ball(name, 30 * kDeg, 30 * kDeg);
  ball("LeftShoulder", 20 * kDeg, 20 * kDeg);
  ball("RightShoulder", 20 * kDeg, 20 * kDeg);
  ball("LeftArm", 100 * kDeg, kPi / 2);
  ball("RightArm", 100 * kDeg, kPi / 2);
  ball("LeftUpLeg", 80 * kDeg, 45 * kDeg);
  ball("RightUpLeg", 80 * kDeg, 45 * kDeg);
  ball("Lefthand", 60 * kDeg, 60 * kDeg);
  ball("RightHand", 60 * kDeg, 60 * kDeg);
  ball("LeftFoot", 40 * kDeg, 20 * kDeg);
  ball("RightFoot", 40 * kDeg, 20 * kDeg);
  hinge("LeftForeArm", forward);
  hinge("RightForeArm", forward);
  hinge("LeftLeg", -forward);
  hinge("RightLeg", -forward);
  b.solver =
      std::make_unique<FullBodySolver>(FullBodyRig{b.skeleton.parents(), b.rest, b.joints, hips});

  // The target: the first pose of a fixed pseudo-random sequence (each free joint turned by up
  // to 0.5 rad, then limited; hinges bent 5°–70°; the pelvis moved a few cm) whose feet make a
  // convex support polygon with the centre of mass at least 2 cm inside, as in the tests'
  // randomized sweep.
  Lcg rng;
  std::vector<Transform> target;
  for (;;) {
    target = b.rest;
    for (std::size_t j = 0; j < n; ++j) {
      const FullBodyJoint& joint = b.joints[j];
      if (joint.kind == FullBodyJointKind::kBall) {
        const Vec3 rv = Vec3{rng.next(), rng.next(), rng.next()} * 0.5;
        target[j].rotation =
            normalize(b.rest[j].rotation * project(joint.limit, from_rotation_vector(rv)));
      } else if (joint.kind == FullBodyJointKind::kHinge) {
        const double angle = (5 + 65 * (0.5 + 0.5 * rng.next())) * kDeg;
        target[j].rotation =
            normalize(b.rest[j].rotation * Quat::from_axis_angle(joint.hinge_axis, angle));
      }
    }
    const auto h = static_cast<std::size_t>(hips);
    target[h].translation = target[h].translation +
                            Vec3{0.08 * rng.next(), -0.08 + 0.06 * rng.next(), 0.08 * rng.next()};
    const std::vector<Transform> tm = model_of(b.skeleton, target);
    auto q = [&](int j) { return tm[static_cast<std::size_t>(j)].translation; };
    const std::vector<Vec3> poly{q(lf), q(lt), q(rt), q(rf)};
    if (inset(poly, b.solver->center_of_mass(target)) > 0.02) break;
  }
  const std::vector<Transform> m = model_of(b.skeleton, target);
  auto p = [&](int j) { return m[static_cast<std::size_t>(j)].translation; };
  b.polygon = {p(lf), p(lt), p(rt), p(rf)};
  const int head = b.skeleton.find("Head");
  const Vec3 side = normalize(cross(bone_axis(b, head), Vec3::unit_z()), Vec3::unit_y());
  const Transform& hm = m[static_cast<std::size_t>(head)];
  FullBodyGoal left_foot = FullBodyGoal::position(lf, p(lf));
  FullBodyGoal right_foot = FullBodyGoal::position(rf, p(rf));
  FullBodyGoal com = FullBodyGoal::center_of_mass(b.polygon, 0.01);
  left_foot.priority = right_foot.priority = com.priority = FullBodyPriority::kHigh;
  const int lh = b.skeleton.find("Lefthand"), rh = b.skeleton.find("RightHand");
  b.goals = {FullBodyGoal::position(lh, p(lh)),
             FullBodyGoal::position(rh, p(rh)),
             left_foot,
             right_foot,
             FullBodyGoal::aim(head, side, hm.translation + rotate(hm.rotation, side)),
             com};
  return b;
}

Body& body() {
  static Body b = make_body();
  return b;
}

void run(benchmark::State& state, std::span<const FullBodyGoal> goals) {
  Body& b = body();
  std::vector<Transform> pose = b.rest;
  long iterations = 0, solves = 0, met = 0;
  for (auto _ : state) {
    std::copy(b.rest.begin(), b.rest.end(), pose.begin());
    const FullBodyResult r = b.solver->solve(pose, goals);
    benchmark::DoNotOptimize(pose.data());
    iterations += r.iterations;
    met += r.all_met() ? 1 : 0;
    ++solves;
  }
  state.counters["iterations"] = static_cast<double>(iterations) / static_cast<double>(solves);
  state.counters["all_met"] = static_cast<double>(met) / static_cast<double>(solves);
  state.counters["joints"] = static_cast<double>(b.rest.size());
}

void BM_FullBody_HandsFeetHeadAimCom(benchmark::State& state) { run(state, body().goals); }
BENCHMARK(BM_FullBody_HandsFeetHeadAimCom)->Unit(benchmark::kMicrosecond);

void BM_FullBody_UnreachableHandToCap(benchmark::State& state) {
  std::vector<FullBodyGoal> goals = body().goals;
  goals[1].target = goals[1].target + Vec3{0, 0, 3};
  run(state, goals);
}
BENCHMARK(BM_FullBody_UnreachableHandToCap)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
