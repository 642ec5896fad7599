// Smoothing the chosen arm paths where the body allows (kinema/retarget/arm_clearance.h).
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>

#include "box_blur.h"
#include "kinema/retarget/acceleration_limit.h"
#include "kinema/retarget/arm_clearance.h"
#include "kinema/retarget/bound_smoothing.h"

namespace kinema {

using retarget_detail::box_blur;

std::array<std::vector<double>, 2> smooth_arm_paths(const ClearanceFieldAt& field_at,
                                                    const std::array<const ArmTrack*, 2>& tracks,
                                                    std::array<ArmTrackSolution*, 2> solutions,
                                                    const ArmClearanceOptions& o) {
  std::array<std::vector<double>, 2> shares;
  const long n = static_cast<long>(tracks[0]->frames.size());
  if (o.smooth_radius_frames <= 0 || n < 3) return shares;
  std::array<std::vector<Vec3>, 2> wrist_goal, elbow_goal;
  for (size_t a = 0; a < 2; ++a) {
    std::vector<Vec3> w(static_cast<size_t>(n)), k(static_cast<size_t>(n));
    for (long i = 0; i < n; ++i) {
      w[size_t(i)] = solutions[a]->chosen[size_t(i)].wrist_offset;
      k[size_t(i)] = solutions[a]->chosen[size_t(i)].elbow_offset;
    }
    wrist_goal[a] = box_blur(box_blur(w, o.smooth_radius_frames), o.smooth_radius_frames);
    elbow_goal[a] = box_blur(box_blur(k, o.smooth_radius_frames), o.smooth_radius_frames);
    shares[a].assign(static_cast<size_t>(n), 0.0);
  }
  // The largest share of the blurred path each frame accepts (searched, both arms at once so the
  // frame's field is built once).
  const int steps = std::max(1, o.smooth_search_steps);
  auto candidate = [&](size_t a, size_t i, double share) {
    const ArmCandidate& c = solutions[a]->chosen[i];
    return resolve_arm(tracks[a]->frames[i],
                       c.wrist_offset + (wrist_goal[a][i] - c.wrist_offset) * share,
                       c.elbow_offset + (elbow_goal[a][i] - c.elbow_offset) * share);
  };
  auto changes = [&](size_t a, size_t i) {
    const ArmCandidate& c = solutions[a]->chosen[i];
    return length(wrist_goal[a][i] - c.wrist_offset) + length(elbow_goal[a][i] - c.elbow_offset) >
           1e-6;
  };
  tbb::parallel_for(0L, n, [&](long i) {
    const size_t k = size_t(i);
    if (!changes(0, k) && !changes(1, k)) {
      shares[0][k] = shares[1][k] = 1;  // nothing to move: any share is allowed
      return;
    }
    ClearanceField scratch;
    const ClearanceField& field = field_at(i, scratch);
    for (size_t a = 0; a < 2; ++a) {
      if (!changes(a, k)) {
        shares[a][k] = 1;
        continue;
      }
      const double allowed = std::max(o.inside_tolerance_m, solutions[a]->chosen[k].inside_m);
      for (int s = steps; s > 0; --s) {
        const double share = double(s) / steps;
        if (arm_depth(field, candidate(a, k, share), tracks[a]->radii, o) <= allowed) {
          shares[a][k] = share;
          break;
        }
      }
    }
  });
  for (size_t a = 0; a < 2; ++a) {
    shares[a] = ease_upper_bound(shares[a], o.smooth_radius_frames);
    tbb::parallel_for(0L, n, [&](long i) {
      const size_t k = size_t(i);
      if (shares[a][k] <= 0 || !changes(a, k)) return;
      ArmCandidate& c = solutions[a]->chosen[k];
      c.pose = candidate(a, k, shares[a][k]);
      c.wrist_offset = c.pose.wrist - tracks[a]->frames[k].wrist;
      c.elbow_offset = c.pose.elbow - tracks[a]->frames[k].elbow;
    });
  }
  return shares;
}

namespace {

/// The limit's bounds are met within 0.1 µm/frame². Frames it moves by less than 10 µm keep their
/// pose (and depth) as they were: half the frames it moves on the 14,373-frame benchmark move
/// that little, and leaving them costs at most 4 · 10 µm = 0.04 mm/frame² over the bound (within
/// the 0.5 mm/frame² allowance; reported as max_violation_m) where re-solving them and measuring
/// their depth again would cost a field per frame.
constexpr double kLimitTolerance = 1e-7;
constexpr double kKeepBelow_m = 1e-5;
constexpr int kLimitRounds = 3;  ///< limit → re-solve rounds (see limit_arm_accelerations)

/// Per frame, the acceleration a joint may have after the clean-up: max(its input |second
/// difference| there, the clip's p99 + allowance). The p99 is the lower order statistic at rank
/// 0.99·(m − 1) of the m interior frames, so a track kept under these bounds has a 99th
/// percentile (interpolated) no higher than the input's + allowance. Returns the bounds and the
/// clip-wide part.
std::pair<std::vector<double>, double> acceleration_bounds(std::span<const Vec3> track,
                                                           double allowance) {
  std::vector<double> norms = second_difference_norms(track);
  std::vector<double> interior(norms.begin() + 1, norms.end() - 1);
  const size_t lo = size_t(std::floor(0.99 * double(interior.size() - 1)));
  std::nth_element(interior.begin(), interior.begin() + std::ptrdiff_t(lo), interior.end());
  const double clip_wide = interior[lo] + allowance;
  for (double& b : norms) b = std::max(b, clip_wide);
  return {std::move(norms), clip_wide};
}

}  // namespace

std::array<ArmAccelerationLimit, 2> limit_arm_accelerations(
    const ClearanceFieldAt& field_at, const std::array<const ArmTrack*, 2>& tracks,
    std::array<ArmTrackSolution*, 2> solutions, const ArmClearanceOptions& o) {
  std::array<ArmAccelerationLimit, 2> out;
  const long n = static_cast<long>(tracks[0]->frames.size());
  if (!o.limit_acceleration || n < 3) return out;
  std::array<std::vector<char>, 2> moved;
  tbb::parallel_for(0, 2, [&](int arm) {
    const size_t a = size_t(arm);
    const std::vector<ArmPose>& frames = tracks[a]->frames;
    std::vector<ArmCandidate>& chosen = solutions[a]->chosen;
    const size_t count = static_cast<size_t>(n);
    std::vector<Vec3> wrist(count), elbow(count), wrist_offset(count), elbow_offset(count);
    for (size_t i = 0; i < size_t(n); ++i) {
      wrist[i] = frames[i].wrist;
      elbow[i] = frames[i].elbow;
      wrist_offset[i] = chosen[i].pose.wrist - frames[i].wrist;
      elbow_offset[i] = chosen[i].pose.elbow - frames[i].elbow;
    }
    const auto [wrist_bound, wrist_clip_wide] =
        acceleration_bounds(wrist, o.acceleration_allowance_m);
    const auto [elbow_bound, elbow_clip_wide] =
        acceleration_bounds(elbow, o.acceleration_allowance_m);
    AccelerationLimitOptions limit;
    limit.tolerance = kLimitTolerance;
    out[a].bound_m = wrist_clip_wide;
    moved[a].assign(count, 0);
    // The wrist lands where the limit puts it unless that is out of the arm's reach (a straight
    // arm pushed along its length): the re-solve clamps it, which adds a little acceleration of
    // its own. A few rounds, each limiting what the re-solve realized, take that out.
    // clang before 16 cannot capture structured bindings in a lambda (C++20's P1091).
    auto realized_excess = [&, &wrist_bound = wrist_bound] {
      std::vector<Vec3> track(count);
      for (size_t i = 0; i < count; ++i) track[i] = chosen[i].pose.wrist;
      const std::vector<double> norms = second_difference_norms(track);
      double excess = 0;
      for (size_t t = 1; t + 1 < count; ++t) excess = std::max(excess, norms[t] - wrist_bound[t]);
      return excess;
    };
    for (int round = 0; round < kLimitRounds; ++round) {
      const AccelerationLimitResult w = limit_acceleration(wrist, wrist_offset, wrist_bound, limit);
      const AccelerationLimitResult k = limit_acceleration(elbow, elbow_offset, elbow_bound, limit);
      for (size_t i = 0; i < count; ++i) {
        if (length(w.offsets[i] - wrist_offset[i]) <= kKeepBelow_m &&
            length(k.offsets[i] - elbow_offset[i]) <= kKeepBelow_m)
          continue;
        ArmCandidate& c = chosen[i];
        c.pose = resolve_arm(frames[i], w.offsets[i], k.offsets[i]);
        c.wrist_offset = wrist_offset[i] = c.pose.wrist - frames[i].wrist;
        c.elbow_offset = elbow_offset[i] = c.pose.elbow - frames[i].elbow;
        moved[a][i] = 1;
      }
      out[a].max_violation_m = std::max(0.0, realized_excess());
      if (out[a].max_violation_m <= 4 * kKeepBelow_m) break;
    }
    out[a].frames_changed = std::count(moved[a].begin(), moved[a].end(), 1);
  });
  // The moved frames' depth, measured again (both arms share a frame's field).
  tbb::parallel_for(0L, n, [&](long i) {
    const size_t k = size_t(i);
    if (!moved[0][k] && !moved[1][k]) return;
    ClearanceField scratch;
    const ClearanceField& field = field_at(i, scratch);
    for (size_t a = 0; a < 2; ++a)
      if (moved[a][k]) {
        ArmCandidate& c = solutions[a]->chosen[k];
        c.inside_m = arm_depth(field, c.pose, tracks[a]->radii, o);
      }
  });
  return out;
}

}  // namespace kinema
