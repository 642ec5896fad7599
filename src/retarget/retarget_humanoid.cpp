// Humanoid retargeting by bone names (see kinema/retarget/retarget.h).
#include "kinema/retarget/retarget.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kinema/core/error.h"
#include "kinema/retarget/humanoid.h"

namespace kinema {
namespace {

/// Facing angle about +Y of a forward axis string ("+Z" → 0).
double facing(const std::string& axis) {
  if (axis == "-Z") return kPi;
  if (axis == "+X") return kPi / 2;
  if (axis == "-X") return -kPi / 2;
  return 0;
}

std::vector<Quat> world_rotations(const std::vector<Mat4>& model) {
  std::vector<Quat> q(model.size());
  for (size_t i = 0; i < model.size(); ++i) q[i] = rotation_of(model[i]);
  return q;
}

/// The asset's humanoid (its own map, or one guessed from its joint names); throws without one.
Humanoid humanoid_or_throw(const Asset& a) {
  std::optional<Humanoid> g = humanoid_of(a);
  if (!g)
    throw Error(a.source.path, "",
                "no humanoid bone map (not a VRM) and the joint names do not map to humanoid "
                "bones (hips, spine, head, arms and legs); retargeting needs a humanoid");
  return *g;
}

/// One side of a retarget: a skeleton, its humanoid map and its rest pose in model space.
struct Rig {
  const Skeleton& skeleton;
  Humanoid humanoid;
  std::vector<Mat4> rest;    ///< model-space rest matrices
  std::vector<Quat> rest_q;  ///< their rotations
  int hips = -1;
  int left_foot = -1, right_foot = -1;  ///< the ankles (-1 when not mapped)

  Rig(const Skeleton& s, Humanoid h)
      : skeleton(s),
        humanoid(std::move(h)),
        rest(rest_model_matrices(s)),
        rest_q(world_rotations(rest)),
        hips(humanoid.find("hips")),
        left_foot(humanoid.find("leftFoot")),
        right_foot(humanoid.find("rightFoot")) {}

  bool has_feet() const { return left_foot >= 0 && right_foot >= 0; }
  Vec3 rest_position(int joint) const {
    return rest[static_cast<size_t>(joint)].translation_part();
  }
};

/// For each target joint, the source joint of the same humanoid bone, or -1.
std::vector<int> joint_map(const Rig& src, const Rig& dst) {
  std::vector<int> map(static_cast<size_t>(dst.skeleton.joint_count()), -1);
  for (const auto& [bone, tj] : dst.humanoid.bones) {
    const int sj = src.humanoid.find(bone);
    if (sj >= 0 && sj < src.skeleton.joint_count() && tj >= 0 && tj < dst.skeleton.joint_count())
      map[static_cast<size_t>(tj)] = sj;
  }
  return map;
}

/// Thigh + shin length at rest, averaged over the sides the humanoid maps; 0 when neither is.
double leg_length(const Rig& rig) {
  double sum = 0;
  int n = 0;
  for (const char* side : {"left", "right"}) {
    const std::string sd = side;
    const Humanoid& h = rig.humanoid;
    const int u = h.find(sd + "UpperLeg"), l = h.find(sd + "LowerLeg"), f = h.find(sd + "Foot");
    const int count = static_cast<int>(rig.rest.size());
    if (u < 0 || l < 0 || f < 0 || u >= count || l >= count || f >= count) continue;
    sum += distance(rig.rest_position(u), rig.rest_position(l)) +
           distance(rig.rest_position(l), rig.rest_position(f));
    ++n;
  }
  return n > 0 ? sum / n : 0.0;
}

/// Target size over source size: the ratio of leg lengths, which does not depend on where each
/// rig puts its root or hip joints; the ratio of hip heights when the legs are not mapped.
double size_ratio(const Rig& src, const Rig& dst) {
  double src_leg = leg_length(src), dst_leg = leg_length(dst);
  if (!(src_leg > 1e-6) || !(dst_leg > 1e-6)) {
    src_leg = src.rest_position(src.hips).y;
    dst_leg = dst.rest_position(dst.hips).y;
  }
  return std::abs(src_leg) > 1e-6 ? dst_leg / src_leg : 1.0;
}

/// The times the result is sampled at: the clip's sample rate (30 fps without one) from 0, and
/// the end.
std::vector<double> sample_times(const Clip& clip) {
  const double rate = sample_rate_or(clip);
  const int frames = std::max(1, static_cast<int>(std::floor(clip.duration * rate + 1e-6)) + 1);
  std::vector<double> times;
  for (int f = 0; f < frames; ++f) times.push_back(std::min(f / rate, clip.duration));
  if (clip.duration - times.back() > 1e-9) times.push_back(clip.duration);
  return times;
}

/// The lowest height either ankle of `rig` reaches over `times` of `clip` (+inf without times).
double lowest_ankle(const Clip& clip, const Rig& rig, const std::vector<double>& times) {
  const Skeleton& sk = rig.skeleton;
  std::vector<Transform> local(static_cast<size_t>(sk.joint_count()));
  std::vector<Mat4> model(local.size());
  double lowest = std::numeric_limits<double>::infinity();
  for (double t : times) {
    sample_pose(clip, sk, t, WrapMode::Clamp, local);
    local_to_model(sk.parents(), local, model);
    lowest = std::min({lowest, model[static_cast<size_t>(rig.left_foot)].translation_part().y,
                       model[static_cast<size_t>(rig.right_foot)].translation_part().y});
  }
  return lowest;
}

/// How the source's hips translation becomes the target's.
struct HipsTransfer {
  Quat yaw;          ///< turns the source's facing into the target's
  double scale = 1;  ///< size_ratio
  Vec3 src_rest, dst_rest;
  /// The source's floor (the lowest its ankles get over the clip) is mapped onto the target's
  /// rest ankle height, so the target's feet touch its floor where the source's do (both 0
  /// when either rig has no ankles).
  double src_floor = 0, dst_floor = 0;
  Mat4 parent_inv = Mat4::identity();  ///< model → the target hips' parent space, at rest

  /// The target hips' local translation for the source hips at `src_hips` (model space).
  /// Horizontal: the source's displacement from its rest position, turned and scaled.
  /// Vertical: the source's height above its lowest ankle position, scaled.
  Vec3 local_translation(const Vec3& src_hips) const {
    Vec3 world = dst_rest + rotate(yaw, src_hips - src_rest) * scale;
    world.y = dst_floor + (src_hips.y - src_floor) * scale;
    return parent_inv.transform_point(world);
  }
};

HipsTransfer hips_transfer(const Rig& src, const Rig& dst, const Quat& yaw, const Clip& clip,
                           const std::vector<double>& times) {
  HipsTransfer h;
  h.yaw = yaw;
  h.scale = size_ratio(src, dst);
  h.src_rest = src.rest_position(src.hips);
  h.dst_rest = dst.rest_position(dst.hips);
  const int hp = dst.skeleton.parent(dst.hips);
  if (hp >= 0 && !inverse(dst.rest[static_cast<size_t>(hp)], h.parent_inv))
    h.parent_inv = Mat4::identity();
  if (src.has_feet() && dst.has_feet()) {
    h.src_floor = lowest_ankle(clip, src, times);
    h.dst_floor = std::min(dst.rest_position(dst.left_foot).y, dst.rest_position(dst.right_foot).y);
  }
  return h;
}

/// One frame's rotations: each mapped target joint takes the source bone's world rotation
/// relative to its rest (turned by `yaw`) on top of its own rest world rotation, keyed as a
/// local rotation at time t (on the hemisphere of the previous key); unmapped joints keep their
/// rest local rotation. `dst_world` holds the target's world rotations (scratch).
void transfer_rotations(const Rig& src, const Rig& dst, const std::vector<int>& map,
                        const Quat& yaw, const std::vector<Mat4>& src_model,
                        const std::vector<Transform>& dst_rest_local, double t,
                        std::vector<Quat>& dst_world, Clip& out) {
  const Skeleton& ts = dst.skeleton;
  for (int j = 0; j < ts.joint_count(); ++j) {
    const int p = ts.parent(j);
    const Quat parent_q = p >= 0 ? dst_world[static_cast<size_t>(p)] : Quat::identity();
    const int sj = map[static_cast<size_t>(j)];
    Quat w;
    if (sj >= 0) {
      const Quat delta = rotation_of(src_model[static_cast<size_t>(sj)]) *
                         conjugate(src.rest_q[static_cast<size_t>(sj)]);
      w = normalize(yaw * delta * conjugate(yaw) * dst.rest_q[static_cast<size_t>(j)]);
    } else {
      w = normalize(parent_q * dst_rest_local[static_cast<size_t>(j)].rotation);
    }
    dst_world[static_cast<size_t>(j)] = w;
    if (sj < 0) continue;
    Quat q = normalize(conjugate(parent_q) * w);
    auto& kf = out.tracks[static_cast<size_t>(j)].rotation;
    if (!kf.values.empty() && dot(kf.values.back(), q) < 0) q = -q;
    kf.times.push_back(t);
    kf.values.push_back(q);
  }
}

/// Shifts the target hips so the lowest the target's ankles get over the clip is their rest
/// height (the rigs' hip-to-thigh offsets differ, so the scaled source height alone can leave
/// the feet floating or sunk).
void ground_feet(const Rig& dst, const HipsTransfer& hips, const std::vector<double>& times,
                 Clip& out) {
  const double lowest = lowest_ankle(out, dst, times);
  if (!std::isfinite(lowest)) return;
  const Vec3 shift = hips.parent_inv.transform_vector(Vec3{0, hips.dst_floor - lowest, 0});
  for (auto& v : out.tracks[static_cast<size_t>(dst.hips)].translation.values) v += shift;
}

}  // namespace

Clip retarget_humanoid(const Asset& source, int clip_index, const Asset& target) {
  if (clip_index < 0 || clip_index >= static_cast<int>(source.clips.size()))
    throw Error(source.source.path, "clip " + std::to_string(clip_index), "no such clip");
  Humanoid hs = humanoid_or_throw(source), ht = humanoid_or_throw(target);
  const Rig src(source.skeleton, std::move(hs)), dst(target.skeleton, std::move(ht));
  if (src.hips < 0 || dst.hips < 0)
    throw Error(source.source.path, "humanoid", "both humanoids need hips");
  const Clip& clip = source.clips[static_cast<size_t>(clip_index)];

  const std::vector<int> map = joint_map(src, dst);
  const Quat yaw = Quat::from_axis_angle(
      Vec3::unit_y(), facing(target.source.forward_axis) - facing(source.source.forward_axis));
  const std::vector<double> times = sample_times(clip);
  const HipsTransfer hips = hips_transfer(src, dst, yaw, clip, times);

  Clip out;
  out.name = clip.name;
  out.duration = clip.duration;
  // Without a rate of its own the clip was sampled at kDefaultSampleRate (sample_times).
  out.sample_rate =
      clip.sample_rate > 0 ? clip.sample_rate : (times.size() > 1 ? kDefaultSampleRate : 0);
  out.tracks.resize(static_cast<size_t>(dst.skeleton.joint_count()));
  const Skeleton& ss = src.skeleton;
  std::vector<Transform> local(static_cast<size_t>(ss.joint_count()));
  std::vector<Mat4> model(local.size());
  std::vector<Quat> dst_world(static_cast<size_t>(dst.skeleton.joint_count()));
  const std::vector<Transform> dst_rest_local = dst.skeleton.rest_pose();
  for (double t : times) {
    sample_pose(clip, ss, t, WrapMode::Clamp, local);
    local_to_model(ss.parents(), local, model);
    transfer_rotations(src, dst, map, yaw, model, dst_rest_local, t, dst_world, out);
    auto& tr = out.tracks[static_cast<size_t>(dst.hips)].translation;
    tr.times.push_back(t);
    tr.values.push_back(
        hips.local_translation(model[static_cast<size_t>(src.hips)].translation_part()));
  }
  if (dst.has_feet()) ground_feet(dst, hips, times, out);
  return out;
}
}  // namespace kinema
