// kinema/ik/foot_placement_clip.cpp — foot placement over a whole clip, with contact metrics.
#include "kinema/ik/foot_placement_clip.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "hierarchy_walk.h"
#include "kinema/core/error.h"
#include "kinema/math/scalar.h"

namespace kinema {

namespace {

bool finite(double v) { return std::isfinite(v); }

[[noreturn]] void fail(const std::string& place, const std::string& reason) {
  throw Error("", place, reason);
}

using ik_detail::is_ancestor;
using ik_detail::model_rotation;

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

// Where leg `leg` of frame `frame` sits in a frame-major list (legs per frame).
std::size_t slot(int frame, int leg, int legs) {
  return static_cast<size_t>(frame) * static_cast<size_t>(legs) + static_cast<size_t>(leg);
}

// Throws when the rig or the options cannot be used on this clip and skeleton (see
// place_feet_on_ground).
void validate(const Clip& clip, const Skeleton& skeleton, const FootPlacementRig& rig,
              const ClipFootPlacementOptions& options) {
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
}

// The times the clip is played at: every 1/fps seconds from 0, the last frame at the end.
std::vector<double> frame_times(double duration, double fps) {
  const long long frame_count_ll = std::llround(duration * fps) + 1;
  if (frame_count_ll > 10'000'000) fail("fps", "too many frames (duration × fps)");
  const int n = static_cast<int>(frame_count_ll);
  std::vector<double> times(static_cast<size_t>(n));
  for (int f = 0; f < n; ++f) times[static_cast<size_t>(f)] = f == n - 1 ? duration : f / fps;
  if (n == 1) times[0] = 0;
  return times;
}

// The clip's pose at one time: local transforms and model matrices.
struct ClipPose {
  ClipPose(const Clip& clip, const Skeleton& skeleton)
      : clip(clip),
        skeleton(skeleton),
        local(static_cast<size_t>(skeleton.joint_count())),
        model(static_cast<size_t>(skeleton.joint_count())) {}

  void sample(double time) {
    sample_pose(clip, skeleton, time, WrapMode::Clamp, local);
    update_model();
  }
  void update_model() { local_to_model(skeleton.parents(), local, model); }
  Vec3 position(int joint) const { return model[static_cast<size_t>(joint)].translation_part(); }
  LegFrame leg(const FootPlacementJoints& j) const {
    return {position(j.hip), position(j.knee), position(j.ankle)};
  }

  const Clip& clip;
  const Skeleton& skeleton;
  std::vector<Transform> local;
  std::vector<Mat4> model;
};

// The input animation as foot placement sees it before changing anything.
struct InputContacts {
  std::vector<LegFrame> legs;  // frame-major, legs per frame
  double floor = 0;
  std::vector<double> ankle_heights;
  std::vector<uint8_t> planted;  // per slot: the animated foot stands on its floor
};

// Every frame's leg positions, and the floor: the lowest height a foot joint (ankle or toe)
// reaches. Throws on a frame whose legs are not finite.
void sample_legs(ClipPose& pose, std::span<const double> times, const FootPlacementRig& rig,
                 InputContacts& in) {
  const int n = static_cast<int>(times.size()), legs = static_cast<int>(rig.legs.size());
  in.legs.resize(times.size() * rig.legs.size());
  in.floor = std::numeric_limits<double>::infinity();
  for (int f = 0; f < n; ++f) {
    pose.sample(times[static_cast<size_t>(f)]);
    for (int l = 0; l < legs; ++l) {
      LegFrame& lf = in.legs[slot(f, l, legs)];
      lf = pose.leg(rig.legs[static_cast<size_t>(l)]);
      if (!is_finite(lf.hip) || !is_finite(lf.knee) || !is_finite(lf.ankle))
        fail("frame " + std::to_string(f), "the pose is not finite");
      in.floor = std::min(in.floor, lf.ankle.y);
      if (!rig.toes.empty() && rig.toes[static_cast<size_t>(l)] >= 0)
        in.floor = std::min(in.floor, pose.position(rig.toes[static_cast<size_t>(l)]).y);
    }
  }
}

// Each ankle's lowest height above the floor over the clip (≥ 0).
std::vector<double> lowest_ankle_heights(const InputContacts& in, int legs) {
  std::vector<double> heights(static_cast<size_t>(legs), std::numeric_limits<double>::infinity());
  for (size_t k = 0; k < in.legs.size(); ++k) {
    double& h = heights[k % static_cast<size_t>(legs)];
    h = std::min(h, in.legs[k].ankle.y - in.floor);
  }
  for (double& h : heights) h = std::max(0.0, h);
  return heights;
}

// The planted slots: sole at most contact_height above the floor and the ankle's horizontal
// speed (central difference) at most contact_speed.
std::vector<uint8_t> planted_frames(const InputContacts& in, std::span<const double> times,
                                    int legs, const ClipFootPlacementOptions& options) {
  const int n = static_cast<int>(times.size());
  std::vector<uint8_t> planted(in.legs.size(), 0);
  for (int f = 0; f < n; ++f)
    for (int l = 0; l < legs; ++l) {
      const auto at = [&](int g) -> const Vec3& { return in.legs[slot(g, l, legs)].ankle; };
      const int a = std::max(0, f - 1), b = std::min(n - 1, f + 1);
      const double span = times[static_cast<size_t>(b)] - times[static_cast<size_t>(a)];
      const Vec3 d = at(b) - at(a);
      const double speed = span > 0 ? std::sqrt(d.x * d.x + d.z * d.z) / span : 0.0;
      const double height = at(f).y - in.ankle_heights[static_cast<size_t>(l)] - in.floor;
      planted[slot(f, l, legs)] =
          height <= options.contact_height && speed <= options.contact_speed;
    }
  return planted;
}

InputContacts analyse_input(ClipPose& pose, std::span<const double> times,
                            const FootPlacementRig& rig, const ClipFootPlacementOptions& options) {
  const int legs = static_cast<int>(rig.legs.size());
  InputContacts in;
  sample_legs(pose, times, rig, in);
  if (options.floor_height) in.floor = *options.floor_height;
  in.ankle_heights = options.ankle_heights;
  if (in.ankle_heights.empty()) in.ankle_heights = lowest_ankle_heights(in, legs);
  in.planted = planted_frames(in, times, legs, options);
  return in;
}

// follow_ground: the height the whole character is carried at, the ground under the pelvis
// followed by a critically damped spring (0 throughout when off).
struct GroundFollow {
  double height = 0, velocity = 0;
  double min = 0, max = 0;  // over the frames so far

  // Frame `f`, `dt` seconds after the previous one, with the pelvis at `pelvis` (the clip's
  // model space, before any lift).
  void update(int f, double dt, const Vec3& pelvis, const Ground& ground, double floor,
              double ray_down, double half_life, FootPlacementState& state, int legs) {
    GroundHit hit;
    // Ground under the pelvis, from the pelvis down to well below the floor; none: stay.
    double goal = height;
    if (ground.ray_down({pelvis.x, pelvis.y + height, pelvis.z},
                        pelvis.y + height - floor + ray_down + std::abs(height), hit))
      goal = hit.point.y - floor;
    if (f == 0) {
      height = goal;
    } else {
      const double previous = height;
      critically_damped_spring(height, velocity, goal, half_life, dt);
      // The springs of foot placement hold offsets from the floor, which just moved with the
      // body: shift them so that the pelvis and the feet stay where they were in the world and
      // only their world targets move them (else a spring lagging behind the moving floor
      // leaves the feet hovering).
      const double moved = height - previous;
      state.pelvis_offset -= moved;
      for (int l = 0; l < legs; ++l) state.foot_offset[static_cast<size_t>(l)] -= moved;
    }
    min = f == 0 ? height : std::min(min, height);
    max = f == 0 ? height : std::max(max, height);
  }
};

// The pelvis heading at a pose: `forward_local` (the pelvis direction that is +Z at rest) turned
// with the pelvis and flattened onto the ground; +Z when it points straight up or down.
Vec3 pelvis_heading(std::span<const int> parents, std::span<const Transform> local, int pelvis,
                    const Vec3& forward_local) {
  Vec3 forward = rotate(model_rotation(parents, local, pelvis), forward_local);
  forward.y = 0;
  return length(forward) > 1e-6 ? normalize(forward) : Vec3{0, 0, 1};
}

// What placing every frame produced.
struct PlacedFrames {
  Keyframes<Vec3> pelvis_keys;
  std::vector<Keyframes<Quat>> rotation_keys;  // per leg: hip, knee, ankle
  std::vector<LegFrame> legs;                  // frame-major, legs per frame
  std::vector<uint8_t> reached;
  double pelvis_min = 0;  // lowest offset foot placement gave the pelvis
  GroundFollow follow;
};

// Keys frame `f` of the placed pose and records where its legs ended.
void record_frame(int f, const ClipPose& pose, const FootPlacementRig& rig,
                  std::span<const FootPlacementLegResult> leg_out, PlacedFrames& out) {
  const int legs = static_cast<int>(rig.legs.size());
  out.pelvis_keys.values.push_back(pose.local[static_cast<size_t>(rig.pelvis)].translation);
  for (int l = 0; l < legs; ++l) {
    const FootPlacementJoints& j = rig.legs[static_cast<size_t>(l)];
    out.legs[slot(f, l, legs)] = pose.leg(j);
    out.reached[slot(f, l, legs)] = leg_out[static_cast<size_t>(l)].ik.reached;
    const int chain[3] = {j.hip, j.knee, j.ankle};
    for (int c = 0; c < 3; ++c) {
      auto& keys = out.rotation_keys[static_cast<size_t>(3 * l + c)];
      Quat q = pose.local[static_cast<size_t>(chain[c])].rotation;
      if (!keys.values.empty() && dot(q, keys.values.back()) < 0) q = -q;
      keys.values.push_back(q);
    }
  }
}

// Foot placement frame by frame, the springs carried from one frame to the next.
PlacedFrames place_frames(ClipPose& pose, std::span<const double> times,
                          const FootPlacementRig& rig, const Ground& ground,
                          const ClipFootPlacementOptions& options, const InputContacts& in) {
  const Skeleton& skeleton = pose.skeleton;
  const std::span<const int> parents = skeleton.parents();
  const int n = static_cast<int>(times.size()), legs = static_cast<int>(rig.legs.size());
  FootPlacementSettings settings = options.settings;
  settings.floor_height = in.floor;
  std::vector<Transform> rest(static_cast<size_t>(skeleton.joint_count()));
  for (int j = 0; j < skeleton.joint_count(); ++j)
    rest[static_cast<size_t>(j)] = skeleton.joint(j).rest;
  const Vec3 forward_local = rotate(inverse(model_rotation(parents, rest, rig.pelvis)), {0, 0, 1});

  PlacedFrames out;
  out.pelvis_keys.times.assign(times.begin(), times.end());
  out.rotation_keys.resize(static_cast<size_t>(3 * legs));
  for (auto& k : out.rotation_keys) k.times.assign(times.begin(), times.end());
  out.legs.resize(in.legs.size());
  out.reached.assign(in.legs.size(), 0);
  FootPlacementState state;
  std::vector<FootPlacementLeg> leg_in(static_cast<size_t>(legs));
  std::vector<FootPlacementLegResult> leg_out(static_cast<size_t>(legs));
  if (options.follow_ground && !(options.follow_half_life >= 0))
    fail("follow_half_life", "must be ≥ 0");
  for (int f = 0; f < n; ++f) {
    pose.sample(times[static_cast<size_t>(f)]);
    const double dt =
        f == 0 ? 0.0 : times[static_cast<size_t>(f)] - times[static_cast<size_t>(f - 1)];
    if (options.follow_ground)
      out.follow.update(f, dt, pose.position(rig.pelvis), ground, in.floor, settings.ray_down,
                        options.follow_half_life, state, legs);
    const Vec3 lift{0, out.follow.height, 0};
    settings.floor_height = in.floor + out.follow.height;
    for (int l = 0; l < legs; ++l) {
      const LegFrame& lf = in.legs[slot(f, l, legs)];
      leg_in[static_cast<size_t>(l)] = {lf.hip + lift, lf.knee + lift, lf.ankle + lift,
                                        in.ankle_heights[static_cast<size_t>(l)]};
    }
    settings.forward = pelvis_heading(parents, pose.local, rig.pelvis, forward_local);
    FootPlacementResult result =
        update_foot_placement(leg_in, ground, settings, dt, state, leg_out);
    if (result.status != FootPlacementStatus::kOk)
      fail("frame " + std::to_string(f), "foot placement rejected the input (not finite?)");
    out.pelvis_min = std::min(out.pelvis_min, result.pelvis_offset);
    result.pelvis_offset += out.follow.height;  // the whole body moves with the followed ground
    apply_foot_placement(result, leg_out, rig.legs, rig.pelvis, parents, pose.local);
    pose.update_model();
    record_frame(f, pose, rig, leg_out, out);
    if (options.progress) options.progress(f + 1, n);
  }
  return out;
}

}  // namespace

Clip place_feet_on_ground(const Clip& clip, const Skeleton& skeleton, const FootPlacementRig& rig,
                          const Ground& ground, const ClipFootPlacementOptions& options,
                          ClipFootPlacementReport* report) {
  validate(clip, skeleton, rig, options);
  const std::vector<double> times = frame_times(clip.duration, options.fps);
  ClipPose pose(clip, skeleton);
  const InputContacts in = analyse_input(pose, times, rig, options);
  PlacedFrames placed = place_frames(pose, times, rig, ground, options, in);

  // A copy of the clip with the placed pelvis translation and leg rotations.
  Clip out = clip;
  out.tracks.resize(static_cast<size_t>(skeleton.joint_count()));
  out.tracks[static_cast<size_t>(rig.pelvis)].translation = std::move(placed.pelvis_keys);
  for (size_t l = 0; l < rig.legs.size(); ++l) {
    const FootPlacementJoints& j = rig.legs[l];
    const int chain[3] = {j.hip, j.knee, j.ankle};
    for (size_t c = 0; c < 3; ++c)
      out.tracks[static_cast<size_t>(chain[c])].rotation =
          std::move(placed.rotation_keys[3 * l + c]);
  }

  if (report) {
    const int legs = static_cast<int>(rig.legs.size());
    report->frames = static_cast<int>(times.size());
    report->fps = options.fps;
    report->floor_height = in.floor;
    report->ankle_heights = in.ankle_heights;
    report->pelvis_offset_min = placed.pelvis_min;
    report->follow_min = placed.follow.min;
    report->follow_max = placed.follow.max;
    report->on_floor =
        measure(in.legs, legs, in.ankle_heights, in.planted, nullptr, nullptr, in.floor);
    report->before =
        measure(in.legs, legs, in.ankle_heights, in.planted, nullptr, &ground, in.floor);
    report->after = measure(placed.legs, legs, in.ankle_heights, in.planted, &placed.reached,
                            &ground, in.floor);
  }
  return out;
}

}  // namespace kinema
