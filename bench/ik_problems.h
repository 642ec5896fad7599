// bench/ik_problems.h — the IK problems that kinema_ik_bench, kinema_ik_sweep_bench and the ozz
// peer (bench/peers/ozz_ik_peer.cpp) share: a leg for two-bone IK, a 10-joint chain for the
// iterative solvers, and seeded target sets for both.
//
// Targets come from a small self-contained generator (SplitMix64 and 53-bit doubles), so a seed
// gives the same targets with every compiler and standard library.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kinema/ik/chain.h"
#include "kinema/ik/jacobian.h"
#include "kinema/math/quat.h"
#include "kinema/math/vec3.h"

namespace kinema::ik_bench {

/// SplitMix64: deterministic, and good enough for sampling targets.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  /// Uniform on the unit sphere.
  Vec3 direction() {
    const double z = uniform(-1.0, 1.0), phi = uniform(0.0, 2.0 * kPi);
    const double r = std::sqrt(std::max(0.0, 1.0 - z * z));
    return {r * std::cos(phi), r * std::sin(phi), z};
  }

 private:
  std::uint64_t state_;
};

// ---- Two-bone: a left leg, model space, metres (hip 0.95 m high, knee bent slightly forward) --

inline constexpr Vec3 kHip{0.1, 0.95, 0.0};
inline constexpr Vec3 kKnee{0.1, 0.52, 0.04};
inline constexpr Vec3 kAnkle{0.1, 0.1, 0.0};
/// The knee points forward: a pole *direction* (ozz's pole_vector); kinema's pole is the point
/// hip + kPoleDirection (its solve plane contains hip, target and pole, the knee on the pole side).
inline constexpr Vec3 kPoleDirection{0.0, 0.0, 1.0};

/// The leg in a skeleton, root 0 → pelvis 1 → hip 2 → knee 3 → ankle 4 with identity rotations
/// (the root at the origin, the pelvis 10 cm inward and 5 cm above the hip): each joint's
/// translation from its parent, so the hip, knee and ankle land on kHip, kKnee and kAnkle.
inline constexpr Vec3 kPelvis = kHip + Vec3{-0.1, 0.05, 0.0};
inline constexpr std::array<Vec3, 5> kLegOffsets{Vec3{0.0, 0.0, 0.0}, kPelvis, kHip - kPelvis,
                                                 kKnee - kHip, kAnkle - kKnee};
inline constexpr std::array<int, 5> kLegParents{-1, 0, 1, 2, 3};

inline double leg_upper() { return length(kKnee - kHip); }
inline double leg_lower() { return length(kAnkle - kKnee); }

/// A leg target and whether it is within the leg's reach.
struct LegTarget {
  Vec3 target;
  bool reachable = true;
};

/// `count` leg targets: a fraction `unreachable` (every k-th one) lies 2–50 % beyond the leg's
/// reach, the others at a distance from the hip uniform in [|l1 − l2| + 1 cm, l1 + l2 − 1 mm];
/// directions within 75° of straight down, so the pole (forward) is never on the line hip–target.
inline std::vector<LegTarget> leg_targets(std::size_t count, std::uint64_t seed,
                                          double unreachable = 0.1) {
  Rng rng(seed);
  const double l1 = leg_upper(), l2 = leg_lower();
  const double lo = std::abs(l1 - l2) + 0.01, hi = l1 + l2 - 0.001;
  const std::size_t every = unreachable > 0 ? static_cast<std::size_t>(1.0 / unreachable + 0.5) : 0;
  std::vector<LegTarget> out;
  out.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    Vec3 dir;
    do {
      dir = rng.direction();
    } while (dot(dir, Vec3{0, -1, 0}) < std::cos(75.0 * kPi / 180.0));
    const bool reach = every == 0 || i % every != every - 1;
    const double d = reach ? rng.uniform(lo, hi) : (l1 + l2) * rng.uniform(1.02, 1.5);
    out.push_back({kHip + dir * d, reach});
  }
  return out;
}

// ---- The 10-joint chain: 10 bones of 10 cm (reach 1 m) hanging from the origin along +Y -------

inline constexpr std::size_t kChainJoints = 10;
inline constexpr double kChainBone = 0.1;

struct Chain10 {
  std::array<Vec3, kChainJoints> offsets{};
  std::array<Quat, kChainJoints> rest{};  ///< start pose of every solve: a gentle curve
  std::array<IkJoint, kChainJoints> joints{};

  Chain10() {
    for (std::size_t i = 0; i < kChainJoints; ++i) {
      offsets[i] = {0, kChainBone, 0};
      // 0.15 rad about Z and 0.05 rad about X per joint: bent, so no solver starts singular.
      rest[i] = normalize(Quat::from_axis_angle({0, 0, 1}, 0.15) *
                          Quat::from_axis_angle({1, 0, 0}, 0.05));
      joints[i] = IkJoint{IkJointType::kBall, Vec3::unit_z()};
    }
  }
  IkChain chain() const { return IkChain{{0, 0, 0}, Quat::identity(), offsets}; }
  double reach() const { return kChainBone * static_cast<double>(kChainJoints); }
  /// Joint positions (11 points, the last the end effector) of a pose.
  std::array<Vec3, kChainJoints + 1> points(const std::array<Quat, kChainJoints>& local) const {
    std::array<Quat, kChainJoints> model;
    std::array<Vec3, kChainJoints + 1> p;
    ik_chain_fk(chain(), local, model, p);
    return p;
  }
};

/// A chain target and whether it is within the chain's reach.
struct ChainTarget {
  Vec3 target;
  bool reachable = true;
};

/// `count` chain targets. Reachable ones are the end effector of a random pose (every joint
/// turned by a uniformly random axis and an angle uniform in [0, 1.2] rad), so they are known
/// to be reachable; a fraction `unreachable` (every k-th one) lies in a uniformly random direction
/// at 1.02–1.5 × the reach.
inline std::vector<ChainTarget> chain_targets(const Chain10& c, std::size_t count,
                                              std::uint64_t seed, double unreachable = 0) {
  Rng rng(seed);
  const std::size_t every = unreachable > 0 ? static_cast<std::size_t>(1.0 / unreachable + 0.5) : 0;
  std::vector<ChainTarget> out;
  out.reserve(count);
  std::array<Quat, kChainJoints> pose;
  for (std::size_t i = 0; i < count; ++i) {
    if (every != 0 && i % every == every - 1) {
      out.push_back({rng.direction() * (c.reach() * rng.uniform(1.02, 1.5)), false});
      continue;
    }
    for (Quat& q : pose) q = Quat::from_axis_angle(rng.direction(), rng.uniform(0.0, 1.2));
    out.push_back({c.points(pose)[kChainJoints], true});
  }
  return out;
}

}  // namespace kinema::ik_bench

namespace kinema::ik_bench {

// ---- Solver settings used by both the timing benchmark and the sweep ---------------------------

/// Tolerance of every iterative solve (metres).
inline constexpr double kTolerance = 1e-4;

/// Iteration caps (sweeps for CCD, backward+forward passes for FABRIK, steps for the Jacobian
/// methods). CCD and FABRIK get 256 (CCD still misses ~1.5 % of the chain's targets at 256; at 64
/// it missed ~22 %), the Jacobian transpose 1000 (its steps are short), the other Jacobian
/// methods 64.
inline constexpr int kCcdCap = 256;
inline constexpr int kFabrikCap = 256;
inline constexpr int kTransposeCap = 1000;
inline constexpr int kJacobianCap = 64;

/// Buss's error clamp for the Jacobian methods: at most 10 cm (a tenth of the chain's reach) of
/// error is handed to one step. The library's default (kJacobianAutoErrorStep) is 20 % of the
/// reach, 20 cm here; without any clamp DLS and adaptive DLS overshoot on far targets (see the
/// "no error clamp" rows of the sweep).
inline constexpr double kMaxErrorStep = 0.1;

/// Which error clamp a Jacobian solve uses.
enum class ErrorClamp {
  kBuss,     ///< kMaxErrorStep
  kDefault,  ///< the library's default (automatic: a fraction of the reach)
  kOff,      ///< none (max_error_step = 1e300)
};

inline IkSettings ik_settings(int cap) { return IkSettings{kTolerance, cap}; }

/// The Jacobian methods on the chain: ball joints, the default damping (λ = 5 cm, adaptive up to
/// 50 cm below σ_min = 10 cm: the defaults suit a chain of about 1 m), the error clamped as
/// `clamp` says, no joint-step clamp.
inline JacobianSettings jacobian_settings(JacobianMethod method,
                                          ErrorClamp clamp = ErrorClamp::kBuss) {
  JacobianSettings s;
  s.method = method;
  if (clamp == ErrorClamp::kBuss) s.max_error_step = kMaxErrorStep;
  if (clamp == ErrorClamp::kOff) s.max_error_step = 1e300;
  s.settings = ik_settings(method == JacobianMethod::kTranspose ? kTransposeCap : kJacobianCap);
  return s;
}

}  // namespace kinema::ik_bench
