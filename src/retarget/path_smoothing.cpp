// Smoothing the chosen arm paths where the body allows (kinema/retarget/arm_clearance.h).
#include <tbb/parallel_for.h>

#include <algorithm>

#include "box_blur.h"
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

}  // namespace kinema
