// kinema/ik/foot_placement_clip.cpp — foot placement over a whole clip, with contact metrics.
#include "kinema/ik/foot_placement_clip.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "kinema/core/error.h"
#include "kinema/math/scalar.h"

namespace kinema {

namespace {

bool finite(double v) { return std::isfinite(v); }

[[noreturn]] void fail(const std::string& place, const std::string& reason) {
  throw Error("", place, reason);
}

bool is_ancestor(std::span<const int> parents, int a, int j) {
  for (j = parents[static_cast<size_t>(j)]; j >= 0; j = parents[static_cast<size_t>(j)])
    if (j == a) return true;
  return false;
}

Quat model_rotation(std::span<const int> parents, std::span<const Transform> local, int j) {
  Quat q = Quat::identity();
  for (; j >= 0; j = parents[static_cast<size_t>(j)])
    q = local[static_cast<size_t>(j)].rotation * q;
  return normalize(q);
}

// Positions of one leg at one frame.
struct LegFrame {
  Vec3 hip, knee, ankle;
};

double knee_bend_degrees(const LegFrame& f) {
  const Vec3 thigh = f.knee - f.hip, shin = f.ankle - f.knee;
  const double lt = length(thigh), ls = length(shin);
  if (!(lt > 0) || !(ls > 0)) return 0;
  return std::acos(std::clamp(dot(thigh, shin) / (lt * ls), -1.0, 1.0)) * 180.0 / kPi;
}

// Ground height below (x, z): cast from well above the sole so that a sole under the surface
// still finds it. The flat floor of the capture when `ground` is null.
bool ground_height(const Ground* ground, double floor, const Vec3& sole, double& h) {
  if (!ground) {
    h = floor;
    return true;
  }
  constexpr double kAbove = 5.0, kRange = 10.0;  // metres
  GroundHit hit;
  if (!ground->ray_down({sole.x, sole.y + kAbove, sole.z}, kRange, hit)) return false;
  h = hit.point.y;
  return true;
}

// Metrics of leg positions `frames` (frame-major, legs per frame) on a ground.
FootContactReport measure(const std::vector<LegFrame>& frames, int legs,
                          const std::vector<double>& ankle_heights,
                          const std::vector<uint8_t>& planted, const std::vector<uint8_t>* reached,
                          const Ground* ground, double floor) {
  FootContactReport r;
  r.legs.resize(static_cast<size_t>(legs));
  const size_t n = frames.size() / static_cast<size_t>(legs);
  std::vector<double> pen_sum(static_cast<size_t>(legs)), float_sum(static_cast<size_t>(legs));
  for (int l = 0; l < legs; ++l) {
    FootContactMetrics& m = r.legs[static_cast<size_t>(l)];
    double prev_bend = 0;
    for (size_t f = 0; f < n; ++f) {
      const size_t k = f * static_cast<size_t>(legs) + static_cast<size_t>(l);
      const LegFrame& lf = frames[k];
      const double bend = knee_bend_degrees(lf);
      if (f > 0) m.knee_jump_max = std::max(m.knee_jump_max, std::abs(bend - prev_bend));
      prev_bend = bend;
      if (reached && !(*reached)[k]) ++m.reach_failures;
      const Vec3 sole = lf.ankle - Vec3{0, ankle_heights[static_cast<size_t>(l)], 0};
      double h = 0;
      if (!ground_height(ground, floor, sole, h)) continue;
      ++m.frames;
      const double below = std::max(0.0, h - sole.y), above = std::max(0.0, sole.y - h);
      m.penetration_max = std::max(m.penetration_max, below);
      if (!planted[k]) continue;
      ++m.planted_frames;
      pen_sum[static_cast<size_t>(l)] += below;
      float_sum[static_cast<size_t>(l)] += above;
      m.float_max = std::max(m.float_max, above);
    }
  }
  FootContactMetrics& o = r.overall;
  double pen_total = 0, float_total = 0;
  for (int l = 0; l < legs; ++l) {
    FootContactMetrics& m = r.legs[static_cast<size_t>(l)];
    if (m.planted_frames > 0) {
      m.penetration_mean = pen_sum[static_cast<size_t>(l)] / m.planted_frames;
      m.float_mean = float_sum[static_cast<size_t>(l)] / m.planted_frames;
    }
    o.penetration_max = std::max(o.penetration_max, m.penetration_max);
    o.float_max = std::max(o.float_max, m.float_max);
    o.knee_jump_max = std::max(o.knee_jump_max, m.knee_jump_max);
    o.reach_failures += m.reach_failures;
    o.planted_frames += m.planted_frames;
    o.frames += m.frames;
    pen_total += pen_sum[static_cast<size_t>(l)];
    float_total += float_sum[static_cast<size_t>(l)];
  }
  if (o.planted_frames > 0) {
    o.penetration_mean = pen_total / o.planted_frames;
    o.float_mean = float_total / o.planted_frames;
  }
  return r;
}

}  // namespace

Clip place_feet_on_ground(const Clip& clip, const Skeleton& skeleton, const FootPlacementRig& rig,
                          const Ground& ground, const ClipFootPlacementOptions& options,
                          ClipFootPlacementReport* report) {
  const int joints = skeleton.joint_count();
  clip.validate(joints, clip.name);
  const std::span<const int> parents = skeleton.parents();
  const int legs = static_cast<int>(rig.legs.size());
  if (legs < 1 || legs > kMaxFootPlacementLegs)
    fail("legs", "foot placement needs 1 to " + std::to_string(kMaxFootPlacementLegs) +
                     " legs, got " + std::to_string(legs));
  if (rig.pelvis < 0 || rig.pelvis >= joints) fail("pelvis", "joint index out of range");
  for (int l = 0; l < legs; ++l) {
    const FootPlacementJoints& j = rig.legs[static_cast<size_t>(l)];
    const std::string place = "legs[" + std::to_string(l) + "]";
    for (int x : {j.hip, j.knee, j.ankle})
      if (x < 0 || x >= joints) fail(place, "joint index out of range");
    if (!is_ancestor(parents, rig.pelvis, j.hip) || !is_ancestor(parents, j.hip, j.knee) ||
        !is_ancestor(parents, j.knee, j.ankle))
      fail(place, "joints are not a pelvis → hip → knee → ankle chain");
  }
  if (!rig.toes.empty() && rig.toes.size() != rig.legs.size())
    fail("toes", "needs one toe joint (or -1) per leg");
  for (int t : rig.toes)
    if (t < -1 || t >= joints) fail("toes", "joint index out of range");
  if (!finite(options.fps) || !(options.fps > 0)) fail("fps", "must be finite and > 0");
  if (!finite(options.contact_height) || !(options.contact_height > 0) ||
      !finite(options.contact_speed) || !(options.contact_speed > 0))
    fail("contact", "contact thresholds must be finite and > 0");
  if (options.floor_height && !finite(*options.floor_height))
    fail("floor_height", "must be finite");
  if (!options.ankle_heights.empty()) {
    if (options.ankle_heights.size() != rig.legs.size()) fail("ankle_heights", "needs one per leg");
    for (double h : options.ankle_heights)
      if (!finite(h) || h < 0) fail("ankle_heights", "must be finite and ≥ 0");
  }
  if (!finite(clip.duration) || clip.duration < 0) fail("duration", "must be finite and ≥ 0");

  const double rate = options.fps;
  const long long frame_count_ll = std::llround(clip.duration * rate) + 1;
  if (frame_count_ll > 10'000'000) fail("fps", "too many frames (duration × fps)");
  const int n = static_cast<int>(frame_count_ll);
  std::vector<double> times(static_cast<size_t>(n));
  for (int f = 0; f < n; ++f) times[static_cast<size_t>(f)] = f == n - 1 ? clip.duration : f / rate;
  if (n == 1) times[0] = 0;

  std::vector<Transform> local(static_cast<size_t>(joints));
  std::vector<Mat4> model(static_cast<size_t>(joints));
  const auto pos = [&](int j) { return model[static_cast<size_t>(j)].translation_part(); };

  // 1. The input: leg positions, the floor and the ankle heights, the planted frames.
  const size_t slots = static_cast<size_t>(n) * static_cast<size_t>(legs);
  std::vector<LegFrame> input(slots);
  double floor = std::numeric_limits<double>::infinity();
  for (int f = 0; f < n; ++f) {
    sample_pose(clip, skeleton, times[static_cast<size_t>(f)], WrapMode::Clamp, local);
    local_to_model(parents, local, model);
    for (int l = 0; l < legs; ++l) {
      const FootPlacementJoints& j = rig.legs[static_cast<size_t>(l)];
      LegFrame& lf =
          input[static_cast<size_t>(f) * static_cast<size_t>(legs) + static_cast<size_t>(l)];
      lf = {pos(j.hip), pos(j.knee), pos(j.ankle)};
      if (!is_finite(lf.hip) || !is_finite(lf.knee) || !is_finite(lf.ankle))
        fail("frame " + std::to_string(f), "the pose is not finite");
      floor = std::min(floor, lf.ankle.y);
      if (!rig.toes.empty() && rig.toes[static_cast<size_t>(l)] >= 0)
        floor = std::min(floor, pos(rig.toes[static_cast<size_t>(l)]).y);
    }
  }
  if (options.floor_height) floor = *options.floor_height;
  std::vector<double> ankle_heights = options.ankle_heights;
  if (ankle_heights.empty()) {
    ankle_heights.assign(static_cast<size_t>(legs), std::numeric_limits<double>::infinity());
    for (size_t k = 0; k < slots; ++k) {
      double& h = ankle_heights[k % static_cast<size_t>(legs)];
      h = std::min(h, input[k].ankle.y - floor);
    }
    for (double& h : ankle_heights) h = std::max(0.0, h);
  }
  std::vector<uint8_t> planted(slots, 0);
  for (int f = 0; f < n; ++f)
    for (int l = 0; l < legs; ++l) {
      const auto at = [&](int g) -> const Vec3& {
        return input[static_cast<size_t>(g) * static_cast<size_t>(legs) + static_cast<size_t>(l)]
            .ankle;
      };
      const int a = std::max(0, f - 1), b = std::min(n - 1, f + 1);
      const double span = times[static_cast<size_t>(b)] - times[static_cast<size_t>(a)];
      const Vec3 d = at(b) - at(a);
      const double speed = span > 0 ? std::sqrt(d.x * d.x + d.z * d.z) / span : 0.0;
      const double height = at(f).y - ankle_heights[static_cast<size_t>(l)] - floor;
      planted[static_cast<size_t>(f) * static_cast<size_t>(legs) + static_cast<size_t>(l)] =
          height <= options.contact_height && speed <= options.contact_speed;
    }

  // 2. Foot placement, frame by frame.
  FootPlacementSettings settings = options.settings;
  settings.floor_height = floor;
  std::vector<Transform> rest(static_cast<size_t>(joints));
  for (int j = 0; j < joints; ++j) rest[static_cast<size_t>(j)] = skeleton.joint(j).rest;
  const Vec3 forward_local = rotate(inverse(model_rotation(parents, rest, rig.pelvis)), {0, 0, 1});

  Clip out = clip;
  out.tracks.resize(static_cast<size_t>(joints));
  Keyframes<Vec3> pelvis_keys;
  pelvis_keys.times = times;
  std::vector<Keyframes<Quat>> rotation_keys(static_cast<size_t>(3 * legs));
  for (auto& k : rotation_keys) k.times = times;
  std::vector<LegFrame> placed(slots);
  std::vector<uint8_t> reached(slots, 0);
  FootPlacementState state;
  std::vector<FootPlacementLeg> leg_in(static_cast<size_t>(legs));
  std::vector<FootPlacementLegResult> leg_out(static_cast<size_t>(legs));
  double pelvis_min = 0;
  double follow = 0, follow_velocity = 0;  // the character's height from follow_ground
  double follow_min = 0, follow_max = 0;
  if (options.follow_ground && !(options.follow_half_life >= 0))
    fail("follow_half_life", "must be ≥ 0");
  for (int f = 0; f < n; ++f) {
    sample_pose(clip, skeleton, times[static_cast<size_t>(f)], WrapMode::Clamp, local);
    local_to_model(parents, local, model);
    const double dt =
        f == 0 ? 0.0 : times[static_cast<size_t>(f)] - times[static_cast<size_t>(f - 1)];
    if (options.follow_ground) {
      const Vec3 p = pos(rig.pelvis);
      GroundHit hit;
      // Ground under the pelvis, from the pelvis down to well below the floor; none: stay.
      double goal = follow;
      if (ground.ray_down({p.x, p.y + follow, p.z},
                          p.y + follow - floor + settings.ray_down + std::abs(follow), hit))
        goal = hit.point.y - floor;
      if (f == 0) {
        follow = goal;
      } else {
        const double previous = follow;
        critically_damped_spring(follow, follow_velocity, goal, options.follow_half_life, dt);
        // The springs of foot placement hold offsets from the floor, which just moved with the
        // body: shift them so that the pelvis and the feet stay where they were in the world and
        // only their world targets move them (else a spring lagging behind the moving floor
        // leaves the feet hovering).
        const double moved = follow - previous;
        state.pelvis_offset -= moved;
        for (int l = 0; l < legs; ++l) state.foot_offset[static_cast<size_t>(l)] -= moved;
      }
      follow_min = f == 0 ? follow : std::min(follow_min, follow);
      follow_max = f == 0 ? follow : std::max(follow_max, follow);
    }
    const Vec3 lift{0, follow, 0};
    settings.floor_height = floor + follow;
    for (int l = 0; l < legs; ++l) {
      const LegFrame& lf =
          input[static_cast<size_t>(f) * static_cast<size_t>(legs) + static_cast<size_t>(l)];
      leg_in[static_cast<size_t>(l)] = {lf.hip + lift, lf.knee + lift, lf.ankle + lift,
                                        ankle_heights[static_cast<size_t>(l)]};
    }
    Vec3 forward = rotate(model_rotation(parents, local, rig.pelvis), forward_local);
    forward.y = 0;
    settings.forward = length(forward) > 1e-6 ? normalize(forward) : Vec3{0, 0, 1};
    FootPlacementResult result =
        update_foot_placement(leg_in, ground, settings, dt, state, leg_out);
    if (result.status != FootPlacementStatus::kOk)
      fail("frame " + std::to_string(f), "foot placement rejected the input (not finite?)");
    pelvis_min = std::min(pelvis_min, result.pelvis_offset);
    result.pelvis_offset += follow;  // the whole body moves with the followed ground
    apply_foot_placement(result, leg_out, rig.legs, rig.pelvis, parents, local);
    local_to_model(parents, local, model);
    pelvis_keys.values.push_back(local[static_cast<size_t>(rig.pelvis)].translation);
    for (int l = 0; l < legs; ++l) {
      const FootPlacementJoints& j = rig.legs[static_cast<size_t>(l)];
      const size_t k = static_cast<size_t>(f) * static_cast<size_t>(legs) + static_cast<size_t>(l);
      placed[k] = {pos(j.hip), pos(j.knee), pos(j.ankle)};
      reached[k] = leg_out[static_cast<size_t>(l)].ik.reached;
      const int chain[3] = {j.hip, j.knee, j.ankle};
      for (int c = 0; c < 3; ++c) {
        auto& keys = rotation_keys[static_cast<size_t>(3 * l + c)];
        Quat q = local[static_cast<size_t>(chain[c])].rotation;
        if (!keys.values.empty() && dot(q, keys.values.back()) < 0) q = -q;
        keys.values.push_back(q);
      }
    }
    if (options.progress) options.progress(f + 1, n);
  }
  out.tracks[static_cast<size_t>(rig.pelvis)].translation = std::move(pelvis_keys);
  for (int l = 0; l < legs; ++l) {
    const FootPlacementJoints& j = rig.legs[static_cast<size_t>(l)];
    const int chain[3] = {j.hip, j.knee, j.ankle};
    for (int c = 0; c < 3; ++c)
      out.tracks[static_cast<size_t>(chain[c])].rotation =
          std::move(rotation_keys[static_cast<size_t>(3 * l + c)]);
  }

  if (report) {
    report->frames = n;
    report->fps = rate;
    report->floor_height = floor;
    report->ankle_heights = ankle_heights;
    report->pelvis_offset_min = pelvis_min;
    report->follow_min = follow_min;
    report->follow_max = follow_max;
    report->on_floor = measure(input, legs, ankle_heights, planted, nullptr, nullptr, floor);
    report->before = measure(input, legs, ankle_heights, planted, nullptr, &ground, floor);
    report->after = measure(placed, legs, ankle_heights, planted, &reached, &ground, floor);
  }
  return out;
}

}  // namespace kinema
