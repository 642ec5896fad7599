// Foot grounding of a retargeted humanoid clip by the hips first, leg IK second
// (kinema/retarget/ground.h).
#include "kinema/retarget/ground.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "kinema/core/error.h"
#include "kinema/ik/two_bone.h"
#include "kinema/math/scalar.h"
#include "leg_samples.h"

namespace kinema {

using namespace retarget_detail;

namespace {

const std::string kPlace = "foot grounding";

void check_options(const GroundingOptions& o) {
  const auto non_negative = [](double v) { return std::isfinite(v) && v >= 0; };
  if (!non_negative(o.ramp) || !non_negative(o.drift_limit) || !non_negative(o.turn_limit) ||
      !non_negative(o.hips_smoothing) || !non_negative(o.max_hips_offset))
    throw Error({}, kPlace,
                "ramp, drift_limit, turn_limit, hips_smoothing and max_hips_offset must be finite "
                "and ≥ 0");
  if (o.bisection_steps < 1 || o.bisection_steps > 200)
    throw Error({}, kPlace, "bisection_steps must be in [1, 200]");
}

double smoothstep(double x) {
  x = std::clamp(x, 0.0, 1.0);
  return x * x * (3 - 2 * x);
}

Vec3 horizontal(const Vec3& v) { return {v.x, 0, v.z}; }

/// Heading of the foot, radians: its rest-pose forward (towards the toe, or +Z) turned by the
/// foot's rotation since the rest pose, flattened.
double foot_heading(const Quat& rotation, const Vec3& forward_in_foot) {
  const Vec3 f = rotate(rotation, forward_in_foot);
  return std::atan2(f.x, f.z);
}

double wrapped(double radians) { return std::remainder(radians, 2 * kPi); }

/// The lock of one leg: per frame, the weight and the ankle's correction at full weight.
struct LegLock {
  std::vector<double> weight;
  std::vector<Vec3> correction;
  std::vector<uint8_t> full;  ///< inside a (possibly shortened) plant: weight 1
};

/// What the grounding needs besides the legs' positions.
struct Context {
  const LegSamples& s;
  const FootPlants& plants;
  const StanceHeights& heights;
  double floor;
  const GroundingOptions& options;
  std::vector<Vec3> forward_in_foot;  ///< per leg
};

double clearance(const Context& c, int f, int l) {
  const size_t k = c.s.at(f, l);
  return std::min(c.s.ankle[k].y - c.floor - c.heights.ankle[static_cast<size_t>(l)],
                  c.s.toe[k].y - c.floor - c.heights.toe[static_cast<size_t>(l)]);
}

/// Adds a lock of weight w to frame f. Inside a plant (full weight) it stays as it is; where the
/// ramps of two plants overlap, their corrections are averaged by weight (taking the stronger
/// one alone would switch corrections in one frame: a knee pop).
void put(LegLock& lock, int f, double w, const Vec3& correction) {
  const size_t i = static_cast<size_t>(f);
  if (lock.full[i] || !(w > 0)) return;
  const double old = lock.weight[i];
  if (w >= 1.0) {
    lock.correction[i] = correction;
  } else if (old > 0) {
    lock.correction[i] = (lock.correction[i] * old + correction * w) * (1.0 / (old + w));
  } else {
    lock.correction[i] = correction;
  }
  lock.weight[i] = std::max(old, w);
}

/// Locks one plant: returns false when it was released early.
bool lock_plant(const Context& c, const FootPlant& p, LegLock& lock) {
  const int l = p.foot;
  const LegSamples& s = c.s;
  const Vec3& forward = c.forward_in_foot[static_cast<size_t>(l)];
  const double start_heading = foot_heading(s.foot_rotation[s.at(p.first, l)], forward);
  std::vector<Vec3> drift{Vec3{0, 0, 0}};
  int last = p.first;
  bool released = false;
  for (int f = p.first + 1; f <= p.last; ++f) {
    // The slower point at f carries the drift from f − 1 to f (heel first, then the toe).
    const bool on_toe = c.plants.toe_support[s.at(f, l)] != 0;
    const std::vector<Vec3>& point = on_toe ? s.toe : s.ankle;
    const Vec3 d = drift.back() + horizontal(point[s.at(f, l)] - point[s.at(f - 1, l)]);
    const double turn =
        std::abs(wrapped(foot_heading(s.foot_rotation[s.at(f, l)], forward) - start_heading));
    if (length(d) > c.options.drift_limit || turn > radians(c.options.turn_limit)) {
      released = true;
      break;
    }
    drift.push_back(d);
    last = f;
  }
  Vec3 mean{0, 0, 0};
  for (const Vec3& d : drift) mean = mean + d;
  mean = mean * (1.0 / static_cast<double>(drift.size()));
  for (int f = p.first; f <= last; ++f) {
    const Vec3 corr = mean - drift[static_cast<size_t>(f - p.first)];
    put(lock, f, 1.0, {corr.x, -clearance(c, f, l), corr.z});
    lock.full[static_cast<size_t>(f)] = 1;
  }
  // Ramps: the correction at the plant's edge, faded by smoothstep over ramp frames.
  const int ramp = static_cast<int>(std::llround(c.options.ramp / s.dt));
  const Vec3 in = lock.correction[static_cast<size_t>(p.first)];
  const Vec3 out = lock.correction[static_cast<size_t>(last)];
  for (int i = 1; i <= ramp; ++i) {
    const double w = smoothstep(1.0 - static_cast<double>(i) / (ramp + 1));
    if (p.first - i >= 0) put(lock, p.first - i, w, in);
    if (last + i < s.frames) put(lock, last + i, w, out);
  }
  return !released;
}

/// Knee flexion, radians, of a two-bone leg whose hip and ankle are d apart (law of cosines).
double flexion_at_distance(double l1, double l2, double d) {
  const double c = (d * d - l1 * l1 - l2 * l2) / (2 * l1 * l2);
  return std::acos(std::clamp(c, -1.0, 1.0));
}

/// The vertical hips offset at which leg l, re-solved to reach `target`, bends its knee as much
/// as the clip had it at frame f: bisection on the offset, the hips above the target.
double hips_offset_for(const Context& c, int f, int l, const Vec3& target) {
  const size_t k = c.s.at(f, l);
  const Vec3 hip = c.s.hip[k], knee = c.s.knee[k], ankle = c.s.ankle[k];
  const double l1 = length(knee - hip), l2 = length(ankle - knee);
  const double wanted = knee_flexion(hip, knee, ankle);
  const double limit = c.options.max_hips_offset;
  double lo = std::max(-limit, target.y - hip.y), hi = limit;
  if (!(l1 > 0) || !(l2 > 0) || lo >= hi) return std::clamp(0.0, lo, hi);
  const auto flexion = [&](double offset) {
    return flexion_at_distance(l1, l2, length(hip + Vec3{0, offset, 0} - target));
  };
  // Raising the hips straightens the re-solved knee: flexion falls as the offset grows. The
  // answer is the lowest offset whose flexion is no more than the clip's (a straight knee stays
  // straight: the hips stop where the leg just reaches).
  if (flexion(hi) > wanted) return hi;
  if (flexion(lo) <= wanted) return lo;
  for (int i = 0; i < c.options.bisection_steps; ++i) {
    const double mid = 0.5 * (lo + hi);
    (flexion(mid) > wanted ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

/// Linear across frames without a value (NaN), held at the ends; 0 everywhere when none has one.
void fill_gaps(std::vector<double>& v) {
  int previous = -1;
  const int n = static_cast<int>(v.size());
  for (int i = 0; i <= n; ++i) {
    if (i < n && std::isnan(v[static_cast<size_t>(i)])) continue;
    const double a =
        previous >= 0 ? v[static_cast<size_t>(previous)] : (i < n ? v[static_cast<size_t>(i)] : 0);
    const double b = i < n ? v[static_cast<size_t>(i)] : a;
    for (int g = previous + 1; g < i; ++g)
      v[static_cast<size_t>(g)] = a + (b - a) * (g - previous) / static_cast<double>(i - previous);
    previous = i;
  }
}

std::vector<double> gaussian_smooth(const std::vector<double>& v, double sigma_frames) {
  if (!(sigma_frames > 0)) return v;
  const int radius = static_cast<int>(std::ceil(3 * sigma_frames));
  std::vector<double> kernel(static_cast<size_t>(radius) + 1);
  for (int i = 0; i <= radius; ++i)
    kernel[static_cast<size_t>(i)] = std::exp(-0.5 * i * i / (sigma_frames * sigma_frames));
  const int n = static_cast<int>(v.size());
  std::vector<double> out(v.size());
  for (int i = 0; i < n; ++i) {
    double sum = 0, weight = 0;
    for (int j = std::max(0, i - radius); j <= std::min(n - 1, i + radius); ++j) {
      const double w = kernel[static_cast<size_t>(std::abs(j - i))];
      sum += w * v[static_cast<size_t>(j)];
      weight += w;
    }
    out[static_cast<size_t>(i)] = sum / weight;
  }
  return out;
}

/// One-sided smoothing of an upper bound: erode (the minimum over ±2σ), blur (Gaussian σ), then
/// the minimum with the bound itself. A plain blur would lift the hips above what a planted leg
/// can reach next to a dip, and that leg would snap straight for a frame (a knee pop); the
/// eroded blur never exceeds the bound.
std::vector<double> smooth_below(const std::vector<double>& bound, double sigma_frames) {
  if (!(sigma_frames > 0)) return bound;
  const int r = static_cast<int>(std::ceil(2 * sigma_frames));
  const int n = static_cast<int>(bound.size());
  std::vector<double> eroded(bound.size());
  for (int f = 0; f < n; ++f) {
    double m = bound[static_cast<size_t>(f)];
    for (int k = std::max(0, f - r); k <= std::min(n - 1, f + r); ++k)
      m = std::min(m, bound[static_cast<size_t>(k)]);
    eroded[static_cast<size_t>(f)] = m;
  }
  std::vector<double> out = gaussian_smooth(eroded, sigma_frames);
  for (size_t f = 0; f < out.size(); ++f) out[f] = std::min(out[f], bound[f]);
  return out;
}

/// The smoothed hips offset per frame: on each frame with a locked foot, the lowest offset any
/// locked foot asks for.
std::vector<double> hips_offsets(const Context& c, const std::vector<LegLock>& locks) {
  std::vector<double> offset(static_cast<size_t>(c.s.frames), NAN);
  for (int f = 0; f < c.s.frames; ++f)
    for (int l = 0; l < c.s.legs; ++l) {
      const LegLock& lock = locks[static_cast<size_t>(l)];
      // Ramping feet count too: their lock pulls as soon as it starts, and a leg that cannot
      // reach snaps straight, while one a little lower only bends the knee a little more.
      if (!(lock.weight[static_cast<size_t>(f)] > 0)) continue;
      const Vec3 target = c.s.ankle[c.s.at(f, l)] + lock.correction[static_cast<size_t>(f)];
      const double o = hips_offset_for(c, f, l, target);
      double& slot = offset[static_cast<size_t>(f)];
      slot = std::isnan(slot) ? o : std::min(slot, o);
    }
  fill_gaps(offset);
  return smooth_below(offset, c.options.hips_smoothing / c.s.dt);
}

/// The pole for leg IK: beyond the current knee, away from the hip–ankle line (the foot's
/// forward when the leg is straight), so the leg keeps its bend plane.
Vec3 pole_of(const Vec3& hip, const Vec3& knee, const Vec3& ankle, const Vec3& foot_forward) {
  const Vec3 axis = ankle - hip;
  const double reach = length(knee - hip) + length(ankle - knee);
  const double axis_len2 = dot(axis, axis);
  Vec3 out = knee - hip;
  if (axis_len2 > 0) out = out - axis * (dot(out, axis) / axis_len2);
  if (length(out) <= 1e-6 * reach) out = foot_forward;
  const double len = length(out);
  return len > 0 ? knee + out * (reach / len) : knee + Vec3{0, 0, reach};
}

/// The clip's keys for the joints grounding changes, filled frame by frame.
struct GroundedKeys {
  std::vector<int> rotated;  ///< the legs' joints, hip, knee, ankle per leg
  std::vector<Keyframes<Quat>> rotations;
  Keyframes<Vec3> hips_translation;

  void add(double t, int hips, std::span<const Transform> local) {
    hips_translation.times.push_back(t);
    hips_translation.values.push_back(local[static_cast<size_t>(hips)].translation);
    for (size_t i = 0; i < rotated.size(); ++i) {
      Quat q = local[static_cast<size_t>(rotated[i])].rotation;
      Keyframes<Quat>& keys = rotations[i];
      if (!keys.values.empty() && dot(q, keys.values.back()) < 0) q = -q;
      keys.times.push_back(t);
      keys.values.push_back(q);
    }
  }
};

/// Solves leg l at frame f towards its lock (model positions after the hips offset in `model`).
void solve_leg(const Context& c, const LegLock& lock, int f, int l, const Skeleton& skeleton,
               const FootPlacementJoints& j, std::span<const Mat4> model,
               std::span<Transform> local) {
  const size_t i = static_cast<size_t>(f);
  const double w = lock.weight[i];
  if (!(w > 0)) return;
  const auto pos = [&](int joint) { return model[static_cast<size_t>(joint)].translation_part(); };
  const Vec3 hip = pos(j.hip), knee = pos(j.knee), ankle = pos(j.ankle);
  const Vec3 locked = c.s.ankle[c.s.at(f, l)] + lock.correction[i];
  const Quat foot = rotation_of_matrix(model[static_cast<size_t>(j.ankle)]);
  TwoBoneInput in;
  in.root = hip;
  in.mid = knee;
  in.end = ankle;
  in.target = ankle + (locked - ankle) * w;
  in.pole = pole_of(hip, knee, ankle, horizontal(rotate(foot, c.forward_in_foot[size_t(l)])));
  in.match_end_rotation = true;
  in.end_rotation = foot;
  in.target_rotation = foot;
  const TwoBoneResult r = solve_two_bone(in);
  const TwoBoneCorrections corr =
      two_bone_local_corrections(r, rotation_of_matrix(model[static_cast<size_t>(j.hip)]),
                                 rotation_of_matrix(model[static_cast<size_t>(j.knee)]), foot);
  (void)skeleton;
  local[static_cast<size_t>(j.hip)].rotation =
      normalize(local[static_cast<size_t>(j.hip)].rotation * corr.root);
  local[static_cast<size_t>(j.knee)].rotation =
      normalize(local[static_cast<size_t>(j.knee)].rotation * corr.mid);
  local[static_cast<size_t>(j.ankle)].rotation =
      normalize(local[static_cast<size_t>(j.ankle)].rotation * corr.end);
}

/// Each leg's rest-pose forward in the foot joint's own frame: towards the toe, or +Z.
std::vector<Vec3> forwards_in_feet(const Skeleton& skeleton, const HumanoidLegs& legs) {
  const std::vector<Mat4> rest = rest_model_matrices(skeleton);
  std::vector<Vec3> out;
  for (size_t l = 0; l < legs.rig.legs.size(); ++l) {
    const int ankle = legs.rig.legs[l].ankle, toe = toe_of(legs, l);
    const Mat4& a = rest[static_cast<size_t>(ankle)];
    Vec3 forward{0, 0, 1};
    if (toe >= 0) {
      const Vec3 d =
          horizontal(rest[static_cast<size_t>(toe)].translation_part() - a.translation_part());
      if (length(d) > 1e-9) forward = d;
    }
    out.push_back(rotate(conjugate(rotation_of_matrix(a)), forward));
  }
  return out;
}

}  // namespace

Clip ground_feet(const Skeleton& skeleton, const HumanoidLegs& legs, const Clip& clip, double rate,
                 const GroundingOptions& options, GroundingReport* report) {
  return ground_feet(skeleton, legs, Clip(clip), rate, options, report);
}

Clip ground_feet(const Skeleton& skeleton, const HumanoidLegs& legs, Clip&& clip, double rate,
                 const GroundingOptions& options, GroundingReport* report) {
  check_legs(skeleton, legs, kPlace);
  check_options(options);
  check_rate(rate, kPlace);
  clip.validate(skeleton.joint_count(), clip.name);
  MotionMetricsOptions metric_options;
  metric_options.contacts = options.contacts;
  metric_options.floor_height = options.floor_height;
  metric_options.ankle_heights = options.ankle_heights;
  metric_options.toe_heights = options.toe_heights;
  if (report) report->before = measure_motion(skeleton, legs, clip, rate, metric_options);

  const LegSamples s = sample_legs(skeleton, legs, clip, rate);
  const FootPlants plants = detect_foot_plants(s.ankle, s.toe, s.legs, s.dt, options.contacts);
  const StanceHeights heights = resolve_heights(skeleton, legs, metric_options, plants);
  const Context c{
      s, plants, heights, options.floor_height, options, forwards_in_feet(skeleton, legs)};
  const size_t frames = static_cast<size_t>(s.frames);
  std::vector<LegLock> locks(
      static_cast<size_t>(s.legs),
      LegLock{std::vector<double>(frames, 0.0), std::vector<Vec3>(frames, Vec3{0, 0, 0}),
              std::vector<uint8_t>(frames, 0)});
  GroundingReport r;
  r.plants.assign(static_cast<size_t>(s.legs), 0);
  r.planted_frames.assign(static_cast<size_t>(s.legs), 0);
  r.early_releases.assign(static_cast<size_t>(s.legs), 0);
  for (const FootPlant& p : plants.plants) {
    ++r.plants[static_cast<size_t>(p.foot)];
    if (!lock_plant(c, p, locks[static_cast<size_t>(p.foot)]))
      ++r.early_releases[static_cast<size_t>(p.foot)];
  }
  const std::vector<double> offsets = hips_offsets(c, locks);

  const int hips = legs.rig.pelvis;
  GroundedKeys keys;
  for (const FootPlacementJoints& j : legs.rig.legs)
    keys.rotated.insert(keys.rotated.end(), {j.hip, j.knee, j.ankle});
  keys.rotations.resize(keys.rotated.size());
  std::vector<Transform> local(static_cast<size_t>(skeleton.joint_count()));
  std::vector<Mat4> model(local.size());
  const int parent = skeleton.parent(hips);
  for (int f = 0; f < s.frames; ++f) {
    sample_pose(clip, skeleton, s.times[static_cast<size_t>(f)], WrapMode::Clamp, local);
    const Vec3 lift{0, offsets[static_cast<size_t>(f)], 0};
    if (parent < 0) {
      local[static_cast<size_t>(hips)].translation =
          local[static_cast<size_t>(hips)].translation + lift;
    } else {
      // The hips' parent in model space: only its own chain of ancestors is needed.
      Mat4 parent_model = Mat4::identity(), parent_inverse;
      for (int a = parent; a >= 0; a = skeleton.parent(a))
        parent_model = local[static_cast<size_t>(a)].to_matrix() * parent_model;
      if (inverse(parent_model, parent_inverse))
        local[static_cast<size_t>(hips)].translation =
            local[static_cast<size_t>(hips)].translation + parent_inverse.transform_vector(lift);
    }
    local_to_model(skeleton.parents(), local, model);
    for (int l = 0; l < s.legs; ++l)
      solve_leg(c, locks[static_cast<size_t>(l)], f, l, skeleton,
                legs.rig.legs[static_cast<size_t>(l)], model, local);
    keys.add(s.times[static_cast<size_t>(f)], hips, local);
    if (options.progress) options.progress(f + 1, s.frames);
  }

  Clip out = std::move(clip);
  if (out.tracks.size() < static_cast<size_t>(skeleton.joint_count()))
    out.tracks.resize(static_cast<size_t>(skeleton.joint_count()));
  out.tracks[static_cast<size_t>(hips)].translation = std::move(keys.hips_translation);
  for (size_t i = 0; i < keys.rotated.size(); ++i)
    out.tracks[static_cast<size_t>(keys.rotated[i])].rotation = std::move(keys.rotations[i]);
  if (report) {
    r.frames = s.frames;
    r.rate = rate;
    for (int l = 0; l < s.legs; ++l)
      r.planted_frames[static_cast<size_t>(l)] = static_cast<int>(std::count(
          locks[static_cast<size_t>(l)].full.begin(), locks[static_cast<size_t>(l)].full.end(), 1));
    const auto [lo, hi] = std::minmax_element(offsets.begin(), offsets.end());
    r.hips_offset_min = *lo;
    r.hips_offset_max = *hi;
    r.before = std::move(report->before);
    // The result measured against the same stance heights as the input.
    metric_options.ankle_heights = heights.ankle;
    metric_options.toe_heights = heights.toe;
    r.after = measure_motion(skeleton, legs, out, rate, metric_options);
    r.after.stance.source = heights.source;
    *report = std::move(r);
  }
  return out;
}

}  // namespace kinema
