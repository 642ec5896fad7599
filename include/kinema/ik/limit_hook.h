// kinema/ik/limit_hook.h — joint limits (kinema/ik/joint_limits.h) as the limit hook the CCD
// and Jacobian solvers take.
#pragma once

#include <span>

#include "kinema/ik/chain.h"
#include "kinema/ik/joint_limits.h"

namespace kinema {

/// Per-joint limits for a chain and the reference rotations they are measured from: a limit
/// constrains q_rel = conjugate(reference[i]) · local[i] (usually reference = the bind-pose
/// local rotation). `limits` has one entry per chain joint (JointLimit::none() for a free
/// joint); `reference` is empty (identity references) or has one entry per joint.
struct IkJointLimits {
  std::span<const JointLimit> limits;
  std::span<const Quat> reference;
};

/// A hook that replaces local[i] with reference[i] · project(limits[i], q_rel). The hook points
/// at `limits`, which must outlive every solve that uses it. Joints past the end of the span
/// are left free.
IkLimitHook make_limit_hook(const IkJointLimits& limits);

}  // namespace kinema
