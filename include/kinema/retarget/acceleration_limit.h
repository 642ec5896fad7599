// kinema/retarget/acceleration_limit.h — displacing a trajectory without making it rougher than a
// per-frame bound allows.
//
// A clean-up displaces a track (a wrist) by per-frame offsets. Where the offset must grow fast —
// a hand passing through a skirt needs a 17 cm push to clear a 12 mm penetration — the displaced
// track accelerates far harder than the input ever did. limit_acceleration returns the offsets
// nearest the wanted ones (least squares over all frames) whose displaced track keeps every
// frame's second difference within a bound:
//   minimize Σ_i |d_i − target_i|²  subject to  |base_{t−1} + d_{t−1} − 2(base_t + d_t) +
//   base_{t+1}
//   + d_{t+1}| ≤ bound_t  for t = 1 … n−2.
// Least squares leans: an 18 cm step allowed 5 mm/frame² swings 1.1 cm the other way before it
// and overshoots by as much after it, symmetrically, instead of ramping monotonically.
// The problem is convex and always feasible when every bound is ≥ |Δ²base_t| (no displacement, or
// any linear one, meets it). Only the stretches of frames within pad_frames of a violated bound
// are solved; each is an ADMM over the displaced accelerations (the d-step a banded, pentadiagonal
// solve), finished by projecting each still-violated bound in turn (moving its three frames the
// least). What is left over the bounds is returned (max_violation): with the defaults, under
// 1e-9 m/frame² on the tests' random tracks with 20 cm steps every 25 frames. Frames outside the
// stretches, and the two frames at each inner end of a stretch, keep their target.
//
// Units are the caller's (metres and frames: bounds in m/frame²).
#pragma once

#include <span>
#include <vector>

#include "kinema/math/vec3.h"

namespace kinema {

struct AccelerationLimitOptions {
  int pad_frames = 48;          ///< frames solved on each side of a violated bound
  int admm_iterations = 3000;   ///< at most, per stretch (it stops once the bounds are met)
  double admm_rho = 64;         ///< ADMM penalty, relative to the unit weight of each frame
  int projection_sweeps = 200;  ///< at most, per stretch, after ADMM
  double tolerance = 1e-9;      ///< a bound counts as met within this (same units as bounds)
};

struct AccelerationLimitResult {
  std::vector<Vec3> offsets;  ///< per frame, the limited displacement
  long frames_changed = 0;    ///< frames whose displacement differs from the target
  int stretches = 0;          ///< stretches of frames solved
  double max_violation = 0;   ///< largest |Δ²(base + offsets)_t| − bound_t left
};

/// The displacement nearest `target` (least squares) whose displaced track base + result has
/// |second difference| ≤ bound[t] at every frame t in 1 … n−2 (bound[0] and bound[n−1] are not
/// used). base, target and bound have one entry per frame; bounds must be ≥ 0. Throws
/// kinema::Error when the lengths differ or a bound is negative or not finite.
AccelerationLimitResult limit_acceleration(std::span<const Vec3> base, std::span<const Vec3> target,
                                           std::span<const double> bound,
                                           const AccelerationLimitOptions& options = {});

/// Per frame, |second difference| of a track (entries 0 and n−1 are 0).
std::vector<double> second_difference_norms(std::span<const Vec3> track);

}  // namespace kinema
