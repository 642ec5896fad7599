// Humanoid retargeting, per frame (see kinema/retarget/retarget.h; the rest analysis is in
// retarget_plan.cpp).
#include "kinema/retarget/retarget.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kinema/core/error.h"
#include "kinema/retarget/humanoid.h"
#include "retarget_plan.h"

namespace kinema {
namespace {

using retarget_detail::chain_segment;
using retarget_detail::Drive;
using retarget_detail::JointPlan;
using retarget_detail::RestSide;
using retarget_detail::RetargetPlan;
using retarget_detail::SpineChain;

/// The source pose at one time, as the transfer needs it.
struct SourceFrame {
  std::vector<Transform> local;
  std::vector<Mat4> model;
  std::vector<Quat> delta;  ///< Δ per source joint: Y · S · S₀⁻¹ · Y⁻¹ (only where used)
};

/// Keys times: i / rate from 0, and the clip's end.
std::vector<double> sample_times(double duration, double rate) {
  const int frames = std::max(1, static_cast<int>(std::floor(duration * rate + 1e-6)) + 1);
  std::vector<double> times;
  times.reserve(size_t(frames) + 1);
  for (int f = 0; f < frames; ++f) times.push_back(std::min(f / rate, duration));
  if (duration - times.back() > 1e-9) times.push_back(duration);
  return times;
}

/// The source joints whose motion the transfer reads: Bone sources and the spine chain.
std::vector<int> used_source_joints(const RetargetPlan& plan) {
  std::vector<int> used = plan.source_spine.joints;
  for (const JointPlan& p : plan.joints) {
    if (p.source >= 0 && p.drive != Drive::Copy) used.push_back(p.source);
    if (p.source_child >= 0) used.push_back(p.source_child);
  }
  std::sort(used.begin(), used.end());
  used.erase(std::unique(used.begin(), used.end()), used.end());
  return used;
}

/// Samples the source at t into `frame`; throws naming the joint and time when a joint the
/// transfer reads is not finite.
void sample_source(const Clip& clip, const RestSide& src, const RetargetPlan& plan,
                   const std::vector<int>& used, double t, const std::string& file,
                   SourceFrame& frame) {
  sample_pose(clip, src.skeleton, t, WrapMode::Clamp, frame.local);
  local_to_model(src.skeleton.parents(), frame.local, frame.model);
  for (int j : used) {
    const Mat4& m = frame.model[size_t(j)];
    const Quat s = rotation_of(m);
    if (!is_finite(s) || !is_finite(m.translation_part()))
      throw Error(file, "clip '" + clip.name + "' at t = " + std::to_string(t) + " s",
                  "joint '" + src.skeleton.joint(j).name + "' is not finite");
    frame.delta[size_t(j)] =
        normalize(plan.yaw * s * conjugate(src.rest_q[size_t(j)]) * conjugate(plan.yaw));
  }
}

/// A point of the source spine polyline at parameter s, in the source's current pose.
Vec3 chain_point(const SpineChain& chain, const SourceFrame& frame, double s) {
  const auto [i, f] = chain_segment(chain, s);
  const Vec3 a = frame.model[size_t(chain.joints[i])].translation_part();
  if (f == 0.0) return a;
  return lerp(a, frame.model[size_t(chain.joints[i + 1])].translation_part(), f);
}

/// The source spine's world motion Δ at parameter s (slerp between its joints).
Quat chain_delta(const SpineChain& chain, const SourceFrame& frame, double s) {
  const auto [i, f] = chain_segment(chain, s);
  const Quat a = frame.delta[size_t(chain.joints[i])];
  if (f == 0.0) return a;
  return slerp(a, frame.delta[size_t(chain.joints[i + 1])], f);
}

/// Direction mode: the source segment a driven joint should point along (0 when it has none).
Vec3 source_segment(const RetargetPlan& plan, const JointPlan& p, const SourceFrame& frame) {
  if (p.rest_direction == Vec3{0, 0, 0}) return {0, 0, 0};
  if (p.drive == Drive::Bone)
    return rotate(plan.yaw, frame.model[size_t(p.source_child)].translation_part() -
                                frame.model[size_t(p.source)].translation_part());
  return rotate(plan.yaw, chain_point(plan.source_spine, frame, p.chain_next_s) -
                              chain_point(plan.source_spine, frame, p.chain_s));
}

/// World rotations of every target joint for one source frame.
void target_world(const RetargetPlan& plan, const RestSide& dst, const RetargetOptions& options,
                  const std::vector<Transform>& rest_local, const SourceFrame& frame,
                  std::vector<Quat>& world) {
  const Skeleton& sk = dst.skeleton;
  for (int j = 0; j < sk.joint_count(); ++j) {
    const JointPlan& p = plan.joints[size_t(j)];
    const int parent = sk.parent(j);
    Quat w;
    if (p.drive == Drive::Rest || p.drive == Drive::Copy) {
      const Quat local = p.drive == Drive::Copy ? frame.local[size_t(p.source)].rotation
                                                : rest_local[size_t(j)].rotation;
      w = (parent >= 0 ? world[size_t(parent)] : Quat::identity()) * local;
    } else {
      const Quat delta = p.drive == Drive::Bone ? frame.delta[size_t(p.source)]
                                                : chain_delta(plan.source_spine, frame, p.chain_s);
      w = delta * p.align * dst.rest_q[size_t(j)];
      if (options.mode == RetargetMode::Direction) {
        const Vec3 want = source_segment(plan, p, frame);
        if (length_squared(want) > 0)
          w = from_to(rotate(w, rotate(conjugate(dst.rest_q[size_t(j)]), p.rest_direction)), want) *
              w;
      }
    }
    world[size_t(j)] = normalize(w);
  }
}

/// Moves `fraction` of each hand's twist about its forearm (relative to rest) into the lower
/// arm: the lower arm turns about its own axis, so no position and no hand rotation changes.
void spread_forearm_twist(const RetargetPlan& plan, const RestSide& dst, double fraction,
                          std::vector<Quat>& world) {
  for (const auto& [lower, hand] : plan.forearms) {
    const Quat wl = world[size_t(lower)], wh = world[size_t(hand)];
    const Quat rest_rel = conjugate(dst.rest_q[size_t(lower)]) * dst.rest_q[size_t(hand)];
    const Quat motion = conjugate(wl) * wh * conjugate(rest_rel);  // in the lower arm's frame
    const Vec3 axis = normalize(rotate(conjugate(dst.rest_q[size_t(lower)]),
                                       dst.rest_pos[size_t(hand)] - dst.rest_pos[size_t(lower)]));
    Quat swing, twist;
    swing_twist(motion, axis, swing, twist);
    world[size_t(lower)] = normalize(wl * slerp(Quat::identity(), twist, fraction));
  }
}

/// Undriven joints follow their parents again (after spread_forearm_twist turned a lower arm,
/// the twist bones under it turn with it; driven joints keep their world rotations).
void follow_parents(const RetargetPlan& plan, const Skeleton& sk,
                    const std::vector<Transform>& rest_local, const SourceFrame& frame,
                    std::vector<Quat>& world) {
  for (int j = 0; j < sk.joint_count(); ++j) {
    const JointPlan& p = plan.joints[size_t(j)];
    if (sk.parent(j) < 0 || (p.drive != Drive::Rest && p.drive != Drive::Copy)) continue;
    const Quat local = p.drive == Drive::Copy ? frame.local[size_t(p.source)].rotation
                                              : rest_local[size_t(j)].rotation;
    world[size_t(j)] = normalize(world[size_t(sk.parent(j))] * local);
  }
}

/// True for the target joints that get rotation keys.
std::vector<bool> keyed_joints(const RetargetPlan& plan) {
  std::vector<bool> keyed(plan.joints.size());
  for (size_t j = 0; j < plan.joints.size(); ++j) keyed[j] = plan.joints[j].drive != Drive::Rest;
  return keyed;
}

/// The source's hips position and lower ankle height at each frame, recorded as the frames are
/// sampled: the hips track is written from them once the floor is known.
struct SourceHipsPath {
  std::vector<Vec3> hips;
  std::vector<double> lower_ankle;

  void record(const RetargetPlan& plan, const SourceFrame& frame) {
    hips.push_back(frame.model[size_t(plan.source_hips)].translation_part());
    double ankle = std::numeric_limits<double>::infinity();
    for (int a : plan.source_ankles)
      ankle = std::min(ankle, frame.model[size_t(a)].translation_part().y);
    lower_ankle.push_back(ankle);
  }
};

/// The source's floor and standing height where its rest pose does not say (see retarget.h):
/// the lowest its ankles get over the clip, and the 90th percentile over the clip of the hips'
/// height above the lower ankle (a walk's straight-legged mid-stance, a standing take's stance).
/// Sets plan.vertical_scale from that stance when the rest pose does not stand; returns the
/// floor height (0 when the rest pose stands on y = 0).
double source_floor(const SourceHipsPath& path, RetargetPlan& plan) {
  if (plan.source_rest_on_floor && plan.source_rest_stands) return 0;
  const double lowest = *std::min_element(path.lower_ankle.begin(), path.lower_ankle.end());
  if (!plan.source_rest_stands && plan.target_stand_height > 0) {
    std::vector<double> stance(path.hips.size());
    for (size_t f = 0; f < stance.size(); ++f) stance[f] = path.hips[f].y - path.lower_ankle[f];
    const size_t k = static_cast<size_t>(0.9 * double(stance.size() - 1));
    std::nth_element(stance.begin(), stance.begin() + long(k), stance.end());
    if (stance[k] > 0) plan.vertical_scale = plan.target_stand_height / stance[k];
  }
  if (plan.source_rest_on_floor) return 0;
  return lowest - plan.target_ankle_height / plan.vertical_scale;
}

/// The target hips' translation track: the source's horizontal displacement from rest and its
/// height above the floor, both scaled, in the hips' parent space.
Keyframes<Vec3> hips_track(const RetargetPlan& plan, const SourceHipsPath& path, double floor,
                           const std::vector<double>& times) {
  Keyframes<Vec3> track;
  track.times = times;
  track.values.reserve(times.size());
  for (const Vec3& src_hips : path.hips) {
    Vec3 p =
        plan.target_hips_rest + rotate(plan.yaw, src_hips - plan.source_hips_rest) * plan.scale;
    p.y = (src_hips.y - floor) * plan.vertical_scale;
    track.values.push_back(plan.target_hips_parent_inv.transform_point(p));
  }
  return track;
}

/// Appends one frame's rotation keys: local rotations of keyed joints (on the hemisphere of the
/// previous key).
void append_keys(const RestSide& dst, const std::vector<bool>& keyed,
                 const std::vector<Quat>& world, double t, Clip& out) {
  const Skeleton& sk = dst.skeleton;
  for (int j = 0; j < sk.joint_count(); ++j) {
    if (!keyed[size_t(j)]) continue;
    const int parent = sk.parent(j);
    Quat q = parent >= 0 ? normalize(conjugate(world[size_t(parent)]) * world[size_t(j)])
                         : world[size_t(j)];
    auto& kf = out.tracks[size_t(j)].rotation;
    if (!kf.values.empty() && dot(kf.values.back(), q) < 0) q = -q;
    kf.times.push_back(t);
    kf.values.push_back(q);
  }
}

/// A non-finite key would be normalized away by sampling: name it (joint name and key time).
template <class V>
void check_keys(const Keyframes<V>& keys, const Clip& clip, const Skeleton& sk, int joint,
                const char* what, const std::string& file) {
  const size_t per_key = keys.interpolation == Interpolation::CubicSpline ? 3 : 1;
  for (size_t i = 0; i < keys.values.size(); ++i)
    if (!is_finite(keys.values[i]))
      throw Error(file,
                  "clip '" + clip.name + "', joint '" + sk.joint(joint).name + "', " + what +
                      " key at t = " +
                      std::to_string(keys.times[std::min(i / per_key, keys.times.size() - 1)]) +
                      " s",
                  "value is not finite");
}

void check_source(const Clip& clip, const Skeleton& sk, const std::string& file) {
  const int tracks = std::min(static_cast<int>(clip.tracks.size()), sk.joint_count());
  for (int j = 0; j < tracks; ++j) {
    check_keys(clip.tracks[size_t(j)].translation, clip, sk, j, "translation", file);
    check_keys(clip.tracks[size_t(j)].rotation, clip, sk, j, "rotation", file);
    check_keys(clip.tracks[size_t(j)].scale, clip, sk, j, "scale", file);
  }
  clip.validate(sk.joint_count(), file);
}

void check_options(const RetargetOptions& o) {
  if (o.sample_rate != 0 && !(std::isfinite(o.sample_rate) && o.sample_rate > 0))
    throw UsageError("the retarget frame rate must be positive and finite (0: the source's)");
  if (!(o.forearm_twist >= 0 && o.forearm_twist <= 1))
    throw UsageError("the forearm twist fraction must be within [0, 1]");
}

}  // namespace

Clip retarget_clip(const Skeleton& source, const Humanoid& source_map, const Clip& clip,
                   const Skeleton& target, const Humanoid& target_map,
                   const RetargetOptions& options, const std::string& source_file,
                   const std::string& target_file) {
  check_options(options);
  check_source(clip, source, source_file);
  const RestSide src(source, source_map), dst(target, target_map);
  RetargetPlan plan = retarget_detail::plan_retarget(src, dst, options, source_file, target_file);
  const double rate = options.sample_rate > 0 ? options.sample_rate : sample_rate_or(clip);
  const std::vector<double> times = sample_times(clip.duration, rate);
  const std::vector<int> used = used_source_joints(plan);
  const std::vector<bool> keyed = keyed_joints(plan);
  const std::vector<Transform> rest_local = target.rest_pose();

  Clip out;
  out.name = clip.name;
  out.duration = clip.duration;
  out.sample_rate = times.size() > 1 ? rate : 0;
  out.tracks.resize(size_t(target.joint_count()));
  for (size_t j = 0; j < keyed.size(); ++j)
    if (keyed[j]) {
      out.tracks[j].rotation.times.reserve(times.size());
      out.tracks[j].rotation.values.reserve(times.size());
    }

  SourceFrame frame;
  frame.local.resize(size_t(source.joint_count()));
  frame.model.resize(frame.local.size());
  frame.delta.assign(frame.local.size(), Quat::identity());
  std::vector<Quat> world(size_t(target.joint_count()));
  SourceHipsPath path;
  path.hips.reserve(times.size());
  path.lower_ankle.reserve(times.size());
  const long frame_count = static_cast<long>(times.size());
  for (long f = 0; f < frame_count; ++f) {
    const double t = times[size_t(f)];
    if (options.progress && f % 256 == 0) options.progress(f, frame_count);
    sample_source(clip, src, plan, used, t, source_file, frame);
    path.record(plan, frame);
    target_world(plan, dst, options, rest_local, frame, world);
    if (options.forearm_twist > 0) {
      spread_forearm_twist(plan, dst, options.forearm_twist, world);
      follow_parents(plan, target, rest_local, frame, world);
    }
    append_keys(dst, keyed, world, t, out);
  }
  // The floor (and a non-standing source's stance) comes from the whole clip, so the hips
  // track is written last, from the path recorded on the way.
  const double floor = source_floor(path, plan);
  out.tracks[size_t(plan.target_hips)].translation = hips_track(plan, path, floor, times);
  if (options.progress) options.progress(frame_count, frame_count);
  return out;
}

Clip retarget_humanoid(const Asset& source, int clip_index, const Asset& target,
                       const RetargetOptions& options) {
  if (clip_index < 0 || clip_index >= static_cast<int>(source.clips.size()))
    throw Error(source.source.path, "clip " + std::to_string(clip_index), "no such clip");
  const Humanoid hs = require_humanoid(source, source.source.path);
  const Humanoid ht = require_humanoid(target, target.source.path);
  return retarget_clip(source.skeleton, hs, source.clips[size_t(clip_index)], target.skeleton, ht,
                       options, source.source.path, target.source.path);
}

}  // namespace kinema
