// Arm clearance on positions: samples, pushes, the two-bone re-solve, candidates, the Viterbi
// path and hand coupling (kinema/retarget/arm_clearance.h).
#include <tbb/parallel_for.h>
#include <tbb/parallel_invoke.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "kinema/retarget/arm_clearance.h"
#include "kinema/retarget/bound_smoothing.h"

namespace kinema {

namespace {

/// Frames per chunk of the sweeps: fields are built a chunk at a time, in parallel.
constexpr long kChunkFrames = 256;

const Vec3& largest(const Vec3& a, const Vec3& b) { return dot(b, b) > dot(a, a) ? b : a; }

/// The pushes of one arm pose: the largest of each segment's samples, and the deepest sample.
struct ArmPushes {
  Vec3 upper{0, 0, 0}, fore{0, 0, 0}, hand{0, 0, 0};
  double depth = 0;
  /// Is another round worth it: does the forearm or hand need to move by more than `tolerance`
  /// metres, or the upper arm while a sample is inside? (ArmClearanceOptions::push_tolerance_m)
  bool any(double tolerance) const {
    const double t2 = tolerance * tolerance;
    return (dot(upper, upper) > t2 && depth > 0) || dot(fore, fore) > t2 || dot(hand, hand) > t2;
  }
};

/// Samples a segment a → b at t values [t0, t1] (n points, both ends included when n ≥ 2).
template <class Visit>
void sample_segment(const Vec3& a, const Vec3& b, double t0, double t1, int n, Visit visit) {
  for (int i = 0; i < n; ++i) {
    const double t = n == 1 ? t1 : t0 + (t1 - t0) * i / (n - 1);
    visit(a + (b - a) * t, t);
  }
}

ArmPushes arm_pushes(const ClearanceField& field, const ArmPose& arm, const ArmRadii& radii,
                     const ArmClearanceOptions& o) {
  ArmPushes out;
  auto add = [&](Vec3& segment_push, const ClearancePush& c) {
    segment_push = largest(segment_push, c.push);
    out.depth = std::max(out.depth, c.depth);
  };
  // The elbow ends the upper arm (t = 1) and starts the forearm (t = 0 when it has ≥ 2 samples):
  // one search serves both clearances.
  const double upper_at_elbow = radii.upper.at(1.0) + o.margin_m;
  const double fore_at_elbow = radii.fore.at(0.0) + o.margin_m;
  const bool shared_elbow = o.fore_samples >= 2;
  ClearancePlane elbow;
  if (shared_elbow) elbow = field.plane(arm.elbow, std::max(upper_at_elbow, fore_at_elbow));
  sample_segment(
      arm.shoulder, arm.elbow, o.upper_t_min, 1.0, o.upper_samples, [&](const Vec3& p, double t) {
        add(out.upper, shared_elbow && t == 1.0 ? field.push_of(elbow, upper_at_elbow)
                                                : field.push(p, radii.upper.at(t) + o.margin_m));
      });
  sample_segment(arm.elbow, arm.wrist, 0.0, 1.0, o.fore_samples, [&](const Vec3& p, double t) {
    add(out.fore, shared_elbow && t == 0.0 ? field.push_of(elbow, fore_at_elbow)
                                           : field.push(p, radii.fore.at(t) + o.margin_m));
  });
  // The hand from just past the wrist (the forearm's last sample is the wrist) to its tip.
  const double first = o.hand_samples > 1 ? 1.0 / o.hand_samples : 1.0;
  sample_segment(arm.wrist, arm.hand_tip, first, 1.0, o.hand_samples, [&](const Vec3& p, double t) {
    add(out.hand, field.push(p, radii.hand.at(t) + o.margin_m));
  });
  return out;
}

}  // namespace

ArmPose resolve_arm(const ArmPose& arm, const Vec3& wrist_offset, const Vec3& elbow_offset) {
  const double l1 = length(arm.elbow - arm.shoulder), l2 = length(arm.wrist - arm.elbow);
  if (l1 < 1e-9 || l2 < 1e-9) return arm;
  const Vec3 target = arm.wrist + wrist_offset;
  Vec3 to_target = target - arm.shoulder;
  double d = length(to_target);
  const Vec3 dir = d > 1e-9 ? to_target / d : normalize(arm.wrist - arm.shoulder);
  d = std::clamp(d, std::abs(l1 - l2) + 1e-9, l1 + l2 - 1e-9);
  // The bend's side: the pole's component across the shoulder–target line (else the elbow's).
  auto across = [&](const Vec3& v) { return v - dir * dot(v, dir); };
  Vec3 side = across(arm.elbow + elbow_offset - arm.shoulder);
  if (length(side) < 1e-9) side = across(arm.elbow - arm.shoulder);
  side = length(side) < 1e-9 ? any_perpendicular(dir) : normalize(side);
  const double cos_a = std::clamp((l1 * l1 + d * d - l2 * l2) / (2 * l1 * d), -1.0, 1.0);
  const double sin_a = std::sqrt(std::max(0.0, 1 - cos_a * cos_a));

  ArmPose out = arm;
  out.elbow = arm.shoulder + dir * (l1 * cos_a) + side * (l1 * sin_a);
  out.wrist = arm.shoulder + dir * d;
  const Vec3 moved = out.wrist - arm.wrist;  // the hand keeps its orientation
  out.hand_tip = arm.hand_tip + moved;
  for (Vec3& tip : out.fingertips) tip = tip + moved;
  return out;
}

double arm_depth(const ClearanceField& field, const ArmPose& arm, const ArmRadii& radii,
                 const ArmClearanceOptions& options) {
  return arm_pushes(field, arm, radii, options).depth;
}

namespace {

/// push_arm_out, also giving the depth of the starting pose (the input's, from zero offsets).
ArmCandidate push_from(const ClearanceField& field, const ArmPose& arm, const ArmRadii& radii,
                       const Vec3& start_wrist_offset, const Vec3& start_elbow_offset,
                       const ArmClearanceOptions& options, double* start_depth) {
  Vec3 wrist_offset = start_wrist_offset, elbow_offset = start_elbow_offset;
  // The rounds move the joints the samples need; the fingertips follow once, at the end.
  ArmPose joints;
  joints.shoulder = arm.shoulder;
  joints.elbow = arm.elbow;
  joints.wrist = arm.wrist;
  joints.hand_tip = arm.hand_tip;
  ArmPose pose = resolve_arm(joints, wrist_offset, elbow_offset);
  ArmPushes pushes = arm_pushes(field, pose, radii, options);
  if (start_depth) *start_depth = pushes.depth;
  for (int round = 0; round < options.iterations && pushes.any(options.push_tolerance_m); ++round) {
    // The forearm moves both ends: the wrist alone would have to travel 1/t as far to clear a
    // forearm point at t from the elbow.
    wrist_offset = wrist_offset + largest(pushes.fore, pushes.hand);
    if (options.push_elbow_pole) elbow_offset = elbow_offset + largest(pushes.fore, pushes.upper);
    pose = resolve_arm(joints, wrist_offset, elbow_offset);
    pushes = arm_pushes(field, pose, radii, options);
  }
  ArmCandidate out;
  out.wrist_offset = pose.wrist - arm.wrist;
  out.elbow_offset = pose.elbow - arm.elbow;
  out.inside_m = pushes.depth;
  out.pose = resolve_arm(arm, wrist_offset, elbow_offset);  // the same joints, fingertips moved
  return out;
}

}  // namespace

ArmCandidate push_arm_out(const ClearanceField& field, const ArmPose& arm, const ArmRadii& radii,
                          const Vec3& start_wrist_offset, const Vec3& start_elbow_offset,
                          const ArmClearanceOptions& options) {
  return push_from(field, arm, radii, start_wrist_offset, start_elbow_offset, options, nullptr);
}

double candidate_unary_cost(const ArmCandidate& c, const Vec3* toward, double seen,
                            const ArmClearanceOptions& o) {
  double cost = dot(c.wrist_offset, c.wrist_offset) + dot(c.elbow_offset, c.elbow_offset) +
                o.inside_weight * c.inside_m;
  if (toward != nullptr && seen >= 0) {
    const double a = dot(c.wrist_offset, *toward);
    cost += o.side_weight * (seen * std::max(0.0, -a) + (1 - seen) * std::max(0.0, a));
  }
  return cost;
}

std::vector<int> choose_candidate_path(std::span<const std::vector<ArmCandidate>> candidates,
                                       std::span<const std::vector<double>> unary,
                                       double transition_weight) {
  const size_t n = candidates.size();
  std::vector<int> path(n, 0);
  if (n == 0) return path;
  std::vector<std::vector<int>> back(n);
  std::vector<double> cost(unary[0].begin(), unary[0].end()), next;
  for (size_t i = 1; i < n; ++i) {
    const auto& prev = candidates[i - 1];
    const auto& cur = candidates[i];
    next.assign(cur.size(), 0);
    back[i].assign(cur.size(), 0);
    for (size_t c = 0; c < cur.size(); ++c) {
      double best = std::numeric_limits<double>::infinity();
      for (size_t p = 0; p < prev.size(); ++p) {
        const Vec3 dw = cur[c].wrist_offset - prev[p].wrist_offset;
        const Vec3 dk = cur[c].elbow_offset - prev[p].elbow_offset;
        const double total = cost[p] + transition_weight * (dot(dw, dw) + dot(dk, dk));
        if (total < best) {  // strict: ties keep the lowest index
          best = total;
          back[i][c] = static_cast<int>(p);
        }
      }
      next[c] = best + unary[i][c];
    }
    cost.swap(next);
  }
  path[n - 1] = static_cast<int>(std::min_element(cost.begin(), cost.end()) - cost.begin());
  for (size_t i = n - 1; i > 0; --i) path[i - 1] = back[i][static_cast<size_t>(path[i])];
  return path;
}

namespace {

/// The candidates of one arm in one frame, by kind, before selection.
struct FrameCandidates {
  ArmCandidate input;                  // pushed from the input arm
  double depth_before = 0;             // the input arm's deepest sample
  std::optional<ArmCandidate> seeded;  // started past the body on the camera evidence's side
  std::optional<ArmCandidate> forward, backward;  // started from the neighbour's answer
};

bool same_answer(const ArmCandidate& a, const ArmCandidate& b) {
  const Vec3 dw = a.wrist_offset - b.wrist_offset, dk = a.elbow_offset - b.elbow_offset;
  return dot(dw, dw) + dot(dk, dk) < 1e-6;  // 1 mm
}

const Vec3* toward_at(const ArmTrack& t, size_t i) {
  return t.toward.empty() || t.seen.empty() ? nullptr : &t.toward[i];
}
double seen_at(const ArmTrack& t, size_t i) { return t.seen.empty() ? -1.0 : t.seen[i]; }

/// Keeps up to `keep` distinct candidates: the input's push, then the seeded one, then the
/// neighbours' by unary cost (one of each kind before a second of any).
void select_candidates(const FrameCandidates& f, const ArmTrack& track, size_t i,
                       const ArmClearanceOptions& o, std::vector<ArmCandidate>& kept,
                       std::vector<double>& unary) {
  kept.clear();
  unary.clear();
  auto add = [&](const ArmCandidate& c) {
    if (static_cast<int>(kept.size()) >= o.keep) return;
    for (const ArmCandidate& k : kept)
      if (same_answer(k, c)) return;
    kept.push_back(c);
    unary.push_back(candidate_unary_cost(c, toward_at(track, i), seen_at(track, i), o));
  };
  add(f.input);
  if (f.seeded) add(*f.seeded);
  const ArmCandidate* neighbours[2] = {f.forward ? &*f.forward : nullptr,
                                       f.backward ? &*f.backward : nullptr};
  if (neighbours[0] && neighbours[1] &&
      candidate_unary_cost(*neighbours[1], toward_at(track, i), seen_at(track, i), o) <
          candidate_unary_cost(*neighbours[0], toward_at(track, i), seen_at(track, i), o))
    std::swap(neighbours[0], neighbours[1]);
  for (const ArmCandidate* c : neighbours)
    if (c) add(*c);
}

/// Runs body(frame, field) for frames [begin, end) with each frame's field, in parallel.
template <class Body>
void for_frames_with_fields(const ClearanceFieldAt& field_at, long begin, long end,
                            std::vector<ClearanceField>& scratch,
                            std::vector<const ClearanceField*>& fields, Body body) {
  const long n = end - begin;
  scratch.resize(static_cast<size_t>(std::max(n, 0L)));
  fields.assign(static_cast<size_t>(std::max(n, 0L)), nullptr);
  tbb::parallel_for(begin, end, [&](long i) {
    const size_t k = static_cast<size_t>(i - begin);
    fields[k] = &field_at(i, scratch[k]);
    body(i, *fields[k]);
  });
}

}  // namespace

std::vector<ArmTrackSolution> solve_arm_tracks(const ClearanceFieldAt& field_at,
                                               std::span<const ArmTrack> tracks,
                                               const ArmClearanceOptions& o) {
  std::vector<ArmTrackSolution> out(tracks.size());
  if (tracks.empty()) return out;
  if (o.threads > 0) {  // the same answer with any thread count: only the arena differs
    ArmClearanceOptions one_arena = o;
    one_arena.threads = 0;
    tbb::task_arena arena(o.threads);
    return arena.execute([&] { return solve_arm_tracks(field_at, tracks, one_arena); });
  }
  const long frames = static_cast<long>(tracks[0].frames.size());
  std::vector<std::vector<FrameCandidates>> found(
      tracks.size(), std::vector<FrameCandidates>(static_cast<size_t>(frames)));
  auto carried = [&](const ArmCandidate& prev, const ArmTrack& track, long i,
                     const ClearanceField& field) {
    return push_arm_out(field, track.frames[size_t(i)], track.radii, prev.wrist_offset * o.carry,
                        prev.elbow_offset * o.carry, o);
  };

  // Per frame, the input's push and the seeded candidate, computed where the frame's field is
  // built anyway: the forward sweep's pass for the first half of the clip, the backward sweep's
  // for the second (two threads: one sweep each, evenly loaded).
  const long half = (frames + 1) / 2;
  auto per_frame_candidates = [&](long i, const ClearanceField& f) {
    for (size_t a = 0; a < tracks.size(); ++a) {
      const ArmTrack& t = tracks[a];
      FrameCandidates& fc = found[a][size_t(i)];
      double depth0 = 0;
      fc.input = push_from(f, t.frames[size_t(i)], t.radii, {0, 0, 0}, {0, 0, 0}, o, &depth0);
      fc.depth_before = depth0;
      if (toward_at(t, size_t(i)) && depth0 > 0) {
        const double sign = t.seen[size_t(i)] >= 0.5 ? 1.0 : -1.0;
        const Vec3 start = t.toward[size_t(i)] * (sign * (depth0 + o.seed_past_m));
        fc.seeded = push_arm_out(f, t.frames[size_t(i)], t.radii, start, start, o);
      }
    }
  };
  // Each sweep is sequential through the clip, a chunk at a time: the chunk's fields (and its
  // per-frame candidates) first, in parallel, then the sweep through it.
  auto forward_sweep = [&] {
    std::vector<ClearanceField> scratch;
    std::vector<const ClearanceField*> fields;
    for (long c0 = 0; c0 < frames; c0 += kChunkFrames) {
      const long c1 = std::min(frames, c0 + kChunkFrames);
      for_frames_with_fields(field_at, c0, c1, scratch, fields,
                             [&](long i, const ClearanceField& f) {
                               if (i < half) per_frame_candidates(i, f);
                             });
      for (long i = c0; i < c1; ++i)
        for (size_t a = 0; a < tracks.size(); ++a)
          found[a][size_t(i)].forward = i == 0 ? found[a][0].input
                                               : carried(*found[a][size_t(i - 1)].forward,
                                                         tracks[a], i, *fields[size_t(i - c0)]);
    }
  };
  auto backward_sweep = [&] {
    std::vector<ClearanceField> scratch;
    std::vector<const ClearanceField*> fields;
    for (long c1 = frames; c1 > 0; c1 -= kChunkFrames) {
      const long c0 = std::max(0L, c1 - kChunkFrames);
      for_frames_with_fields(field_at, c0, c1, scratch, fields,
                             [&](long i, const ClearanceField& f) {
                               if (i >= half) per_frame_candidates(i, f);
                             });
      for (long i = c1 - 1; i >= c0; --i)
        for (size_t a = 0; a < tracks.size(); ++a)
          found[a][size_t(i)].backward = i == frames - 1
                                             ? found[a][size_t(i)].input
                                             : carried(*found[a][size_t(i + 1)].backward, tracks[a],
                                                       i, *fields[size_t(i - c0)]);
    }
  };
  const auto t0 = std::chrono::steady_clock::now();
  tbb::parallel_invoke(forward_sweep, backward_sweep);
  const auto t1 = std::chrono::steady_clock::now();

  tbb::parallel_for(size_t(0), tracks.size(), [&](size_t a) {  // the arms are independent
    ArmTrackSolution& s = out[a];
    std::vector<std::vector<ArmCandidate>> kept(static_cast<size_t>(frames));
    std::vector<std::vector<double>> unary(static_cast<size_t>(frames));
    s.per_frame.resize(static_cast<size_t>(frames));
    s.depth_before.resize(static_cast<size_t>(frames));
    s.candidates.resize(static_cast<size_t>(frames));
    for (long i = 0; i < frames; ++i) {
      select_candidates(found[a][size_t(i)], tracks[a], size_t(i), o, kept[size_t(i)],
                        unary[size_t(i)]);
      s.per_frame[size_t(i)] = found[a][size_t(i)].input;
      s.depth_before[size_t(i)] = found[a][size_t(i)].depth_before;
      s.candidates[size_t(i)] = static_cast<int>(kept[size_t(i)].size());
    }
    const std::vector<int> path = choose_candidate_path(kept, unary, o.transition_weight);
    s.chosen.resize(static_cast<size_t>(frames));
    for (long i = 0; i < frames; ++i)
      s.chosen[size_t(i)] = std::move(kept[size_t(i)][size_t(path[size_t(i)])]);
  });
  const auto t2 = std::chrono::steady_clock::now();
  for (ArmTrackSolution& s : out) {
    s.candidates_s = std::chrono::duration<double>(t1 - t0).count();
    s.path_s = std::chrono::duration<double>(t2 - t1).count();
  }
  return out;
}

}  // namespace kinema
