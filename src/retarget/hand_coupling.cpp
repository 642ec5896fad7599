// Clasped hands: coupling their pushes, parting interlacing fingers, and counting front/back
// switches (kinema/retarget/arm_clearance.h).
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>

#include "kinema/retarget/arm_clearance.h"
#include "kinema/retarget/bound_smoothing.h"

namespace kinema {

std::array<Vec3, 2> couple_pushes(const Vec3& left, const Vec3& right, double amount) {
  // The natural way out of a round body is straight out: the mean of the two pushes. Each hand
  // keeps its own distance, so neither is pushed less than its own surface asks.
  Vec3 shared = left + right;
  const double n = length(shared);
  shared = n > 1e-12 ? shared / n : Vec3{0, 0, 0};
  return {left + (shared * length(left) - left) * amount,
          right + (shared * length(right) - right) * amount};
}

namespace {

/// How far the fingertips of two hands pass the other wrist along the wrist line (metres; the
/// largest over both hands, negative when every tip stops short). A hand without fingertips uses
/// its hand tip.
double fingertip_pass(const ArmPose& left, const ArmPose& right) {
  const Vec3 line = right.wrist - left.wrist;
  const double len = length(line);
  if (len < 1e-9) return 0;
  const Vec3 u = line / len;
  double pass = -INFINITY;
  auto over = [&](const ArmPose& hand, const Vec3& other_wrist, const Vec3& towards) {
    if (hand.fingertips.empty()) pass = std::max(pass, dot(hand.hand_tip - other_wrist, towards));
    for (const Vec3& tip : hand.fingertips) pass = std::max(pass, dot(tip - other_wrist, towards));
  };
  over(left, right.wrist, u);
  over(right, left.wrist, u * -1.0);
  return pass;
}

/// The coupling wanted from the input wrists' distance: 1 when clasped, 0 when apart.
double wanted_coupling(const ArmPose& left, const ArmPose& right, const ArmClearanceOptions& o) {
  const double d = length(left.wrist - right.wrist);
  if (d <= o.couple_near_m) return 1;
  if (d >= o.couple_far_m) return 0;
  return (o.couple_far_m - d) / (o.couple_far_m - o.couple_near_m);
}

}  // namespace

std::vector<double> couple_hands(const ClearanceFieldAt& field_at,
                                 const std::array<const ArmTrack*, 2>& tracks,
                                 std::array<ArmTrackSolution*, 2> solutions,
                                 const ArmClearanceOptions& o) {
  const ArmTrack &L = *tracks[0], &R = *tracks[1];
  ArmTrackSolution &sl = *solutions[0], &sr = *solutions[1];
  const long n = static_cast<long>(L.frames.size());
  std::vector<double> amount(size_t(n), 0.0), part(size_t(n), 0.0);
  if (!o.couple_hands || n == 0) return amount;
  std::vector<double> wanted(static_cast<size_t>(n));
  for (long i = 0; i < n; ++i)
    wanted[size_t(i)] = wanted_coupling(L.frames[size_t(i)], R.frames[size_t(i)], o);

  // The largest coupling each frame accepts with both hands still out of the body (no deeper than
  // the uncoupled answer), searched from the wanted amount down.
  std::vector<double> allowed(size_t(n), 0.0);
  const int steps = std::max(1, o.couple_search_steps);
  tbb::parallel_for(0L, n, [&](long i) {
    const size_t k = size_t(i);
    if (wanted[k] <= 0) return;
    ClearanceField scratch;
    const ClearanceField& field = field_at(i, scratch);
    const ArmCandidate &cl = sl.chosen[k], &cr = sr.chosen[k];
    for (int s = steps; s > 0; --s) {
      const double a = wanted[k] * s / steps;
      const auto [wl, wr] = couple_pushes(cl.wrist_offset, cr.wrist_offset, a);
      const double dl = arm_depth(field, resolve_arm(L.frames[k], wl, cl.elbow_offset), L.radii, o);
      const double dr = arm_depth(field, resolve_arm(R.frames[k], wr, cr.elbow_offset), R.radii, o);
      if (dl <= std::max(o.inside_tolerance_m, cl.inside_m) &&
          dr <= std::max(o.inside_tolerance_m, cr.inside_m)) {
        allowed[k] = a;
        return;
      }
    }
  });
  amount = ease_upper_bound(allowed, o.ease_radius_frames);

  // Coupled wrists; then how far the hands must part for no fingertip to pass the other wrist
  // by more than the limit (a lower bound: held, never below it).
  std::vector<std::array<Vec3, 2>> wrists(static_cast<size_t>(n));
  for (long i = 0; i < n; ++i) {
    const size_t k = size_t(i);
    wrists[k] = couple_pushes(sl.chosen[k].wrist_offset, sr.chosen[k].wrist_offset, amount[k]);
    if (!o.part_fingers || wanted[k] <= 0) continue;
    const ArmPose pl = resolve_arm(L.frames[k], wrists[k][0], sl.chosen[k].elbow_offset);
    const ArmPose pr = resolve_arm(R.frames[k], wrists[k][1], sr.chosen[k].elbow_offset);
    part[k] = std::max(0.0, fingertip_pass(pl, pr) - o.finger_pass_limit_m);
  }
  part = hold_lower_bound(part, o.hold_radius_frames);

  tbb::parallel_for(0L, n, [&](long i) {
    const size_t k = size_t(i);
    if (amount[k] <= 0 && part[k] <= 0) return;
    Vec3 wl = wrists[k][0], wr = wrists[k][1];
    if (part[k] > 0) {  // symmetric: each hand half the way, along the line between the wrists
      const Vec3 line = (R.frames[k].wrist + wr) - (L.frames[k].wrist + wl);
      const double len = length(line);
      const Vec3 u = len > 1e-9 ? line / len : Vec3{1, 0, 0};
      wl = wl - u * (part[k] / 2);
      wr = wr + u * (part[k] / 2);
    }
    ClearanceField scratch;
    const ClearanceField& field = field_at(i, scratch);
    for (auto [track, solution, wrist] : {std::tuple{&L, &sl, wl}, std::tuple{&R, &sr, wr}}) {
      ArmCandidate& c = solution->chosen[k];
      c.pose = resolve_arm(track->frames[k], wrist, c.elbow_offset);
      c.wrist_offset = c.pose.wrist - track->frames[k].wrist;
      c.elbow_offset = c.pose.elbow - track->frames[k].elbow;
      c.inside_m = arm_depth(field, c.pose, track->radii, o);
    }
  });
  return amount;
}

int count_reverting_switches(std::span<const Vec3> wrist_offsets, std::span<const Vec3> forward,
                             int window) {
  // The sided frames: displaced at least 1 cm forwards or backwards (a sideways push has no
  // front or back, whatever its few millimetres along the forward axis say).
  std::vector<std::pair<long, int>> sided;
  for (size_t i = 0; i < wrist_offsets.size(); ++i) {
    const double a = dot(wrist_offsets[i], forward[i]);
    if (std::abs(a) < 0.01) continue;
    sided.emplace_back(static_cast<long>(i), a > 0 ? 1 : -1);
  }
  int count = 0;
  for (size_t e = 1; e < sided.size(); ++e) {
    if (sided[e].second == sided[e - 1].second) continue;  // not a switch
    // The next change of side after this switch: within the window, the switch reverted.
    for (size_t m = e + 1; m < sided.size(); ++m) {
      if (sided[m].first - sided[e].first > window) break;
      if (sided[m].second != sided[e].second) {
        ++count;
        break;
      }
    }
  }
  return count;
}

}  // namespace kinema
