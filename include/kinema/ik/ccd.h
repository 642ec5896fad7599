// kinema/ik/ccd.h — cyclic coordinate descent (Wang & Chen 1991).
//
// Each sweep visits the joints from the end effector back to the base and turns each one by
// the shortest-arc rotation that points the effector at the target, clamped to a per-joint
// maximum angle (damping) and projected through the joint-limit hook.
#pragma once

#include <span>

#include "kinema/ik/chain.h"

namespace kinema {

/// CCD parameters. `max_step` holds, per joint, the largest rotation (radians, > 0) one visit
/// may apply — smaller values spread the bend along the chain instead of curling the last
/// joint; empty means unlimited. `settings.max_iterations` counts sweeps.
struct CcdSettings {
  IkSettings settings{};
  std::span<const double> max_step;
};

/// Solves `local` (the chain's n local rotations, updated in place) so the end effector
/// reaches `target` (model space, metres). Bone lengths are untouched (only rotations change).
/// Returns kReached within tolerance; kUnreachable when the target is beyond the chain's reach
/// (the chain is turned towards it); kMaxIterations otherwise; kInvalidInput (local untouched)
/// for a non-finite target, an invalid chain (see ik_chain_valid), a max_step of the wrong
/// size or with a non-positive / NaN entry. Sweeps stop early, keeping the best pose seen, once
/// four in a row have gained nothing (≤ 1e-12 of the reach): an unreachable target or a limit.
/// Never throws, never allocates.
IkResult ccd_solve(const IkChain& chain, std::span<Quat> local, const Vec3& target,
                   const CcdSettings& settings = {}, IkLimitHook limits = {});

}  // namespace kinema
