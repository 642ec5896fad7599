// kinema/ik/chain.h — the joint chain the iterative IK solvers (CCD, Jacobian) work on, and
// what every solver returns.
//
// Conventions: right-handed, +Y up, metres, radians. Quaternions (x, y, z, w), `a * b` applies
// b first. A chain of n joints is described by a base (model-space position and rotation of
// joint 0's parent frame), n local rotations and n bone offsets: joint i sits at p_i, has
// model rotation R_i = R_{i-1} · local_i (R_{-1} = base rotation), and the next joint (or, for
// the last joint, the end effector) sits at p_{i+1} = p_i + R_i · offsets[i]. So the chain has
// n + 1 points and bone i has length |offsets[i]|.
//
// Per-frame solvers never throw and never allocate: they validate their inputs, return an
// IkResult, and leave the output untouched (never NaN) when the input is invalid.
#pragma once

#include <cstddef>
#include <span>

#include "kinema/math/quat.h"
#include "kinema/math/vec3.h"

namespace kinema {

/// Longest chain the CCD and Jacobian solvers accept (their scratch lives on the stack).
inline constexpr std::size_t kMaxIkChainJoints = 32;

/// How a solve ended.
enum class IkStatus {
  kReached,        ///< end effector within tolerance of the target
  kUnreachable,    ///< target farther than the chain reaches; the chain points at it
  kMaxIterations,  ///< iteration cap hit before the tolerance (the best pose so far is written)
  kInvalidInput,   ///< non-finite or inconsistent input; outputs left untouched
};

/// Outcome of a solve. `error` is the final end-effector distance to the target (metres), or,
/// with several effectors, the largest one; NaN only when status is kInvalidInput.
struct IkResult {
  IkStatus status = IkStatus::kInvalidInput;
  int iterations = 0;  ///< full sweeps / passes / steps taken
  double error = 0;
};

/// Stops an iterative solver: done when the error is at most `tolerance` (metres) or after
/// `max_iterations` iterations.
struct IkSettings {
  double tolerance = 1e-4;
  int max_iterations = 32;
};

/// Joint-limit hook: maps joint `joint`'s local rotation to the nearest allowed one (for
/// example a hinge clamp or a swing-twist cone projection). Solvers call it after every change
/// of a local rotation, so a pose written by a solver always satisfies it. A default-constructed
/// hook (null function) means no limits. `context` is passed through untouched.
struct IkLimitHook {
  Quat (*project)(const void* context, std::size_t joint, const Quat& local) = nullptr;
  const void* context = nullptr;

  /// True when a projection function is set.
  explicit operator bool() const { return project != nullptr; }
  /// Applies the hook (identity when unset).
  Quat operator()(std::size_t joint, const Quat& local) const {
    return project ? project(context, joint, local) : local;
  }
};

/// Fixed description of a chain: where it hangs and its bone offsets (see the file comment).
struct IkChain {
  Vec3 base_position{};                   ///< model-space position of joint 0 (metres)
  Quat base_rotation = Quat::identity();  ///< model rotation of joint 0's parent frame
  std::span<const Vec3> offsets;          ///< per joint, the next point in the joint's frame
};

/// Forward kinematics of a chain: writes model rotations (n) and points (n + 1, the last one
/// the end effector). Returns false (writing nothing) when sizes disagree or n is 0 or above
/// kMaxIkChainJoints.
bool ik_chain_fk(const IkChain& chain, std::span<const Quat> local, std::span<Quat> model,
                 std::span<Vec3> points);

/// True when the chain's base, offsets and local rotations are finite, the local rotations are
/// non-zero and the joint count is in [1, kMaxIkChainJoints].
bool ik_chain_valid(const IkChain& chain, std::span<const Quat> local);

/// Sum of the bone lengths |offsets[i]| (metres).
double ik_chain_reach(const IkChain& chain);

/// How an iterative chain solve ended: reached when `error` ≤ `tolerance`, else unreachable when
/// the target lies beyond the chain's reach from its base, else the iteration cap stopped it.
IkStatus ik_chain_status(const IkChain& chain, const Vec3& target, double error, double tolerance);

}  // namespace kinema
