// Translation-only root motion (see ground_motion.h).
#include "ground_motion.h"

#include <algorithm>
#include <cmath>

#include "kinema/core/error.h"

namespace kinema {

namespace {

Vec3 rotate_y(double yaw, const Vec3& v) {
  const double c = std::cos(yaw), s = std::sin(yaw);
  return {c * v.x + s * v.z, v.y, -s * v.x + c * v.z};
}

}  // namespace

Vec3 ground_position(const RootMotion& motion, double t) {
  const RootDelta& start = motion.start();
  return start.translation + rotate_y(start.yaw, motion.at(t).translation);
}

bool ground_translation(const RootMotion& motion, double t0, double t1, bool loop, RootDelta& out) {
  if (!std::isfinite(t0) || !std::isfinite(t1) || motion.frame_count() < 2) return false;
  const double d = motion.duration();
  out = RootDelta{};
  if (!loop) {
    out.translation = ground_position(motion, std::clamp(t1, 0.0, d)) -
                      ground_position(motion, std::clamp(t0, 0.0, d));
    return true;
  }
  const double lap0 = std::floor(t0 / d), lap1 = std::floor(t1 / d);
  const double u0 = std::clamp(t0 - lap0 * d, 0.0, d), u1 = std::clamp(t1 - lap1 * d, 0.0, d);
  const Vec3 cycle = ground_position(motion, d) - ground_position(motion, 0);
  out.translation =
      ground_position(motion, u1) - ground_position(motion, u0) + cycle * (lap1 - lap0);
  return true;
}

Clip remove_ground_translation(const Clip& clip, const Skeleton& skeleton,
                               const RootMotion& motion) {
  const int joints = skeleton.joint_count();
  clip.validate(joints);
  const int joint = motion.joint();
  if (joint < 0 || joint >= joints) throw Error({}, "root motion", "no root-motion joint");
  Clip out = clip;
  if (out.tracks.size() < static_cast<size_t>(joints))
    out.tracks.resize(static_cast<size_t>(joints));
  Keyframes<Vec3> keys;
  keys.interpolation = Interpolation::Linear;
  std::vector<Transform> local(static_cast<size_t>(joints));
  std::vector<Mat4> model(local.size());
  for (int f = 0; f < motion.frame_count(); ++f) {
    const double t = motion.frame_time(f);
    sample_pose(clip, skeleton, t, WrapMode::Clamp, local);
    local_to_model(skeleton.parents(), local, model);
    Vec3 p = model[static_cast<size_t>(joint)].translation_part();
    p.x = 0;
    p.z = 0;
    // Back into the parent's space (identity for a root joint).
    const int parent = skeleton.parent(joint);
    Vec3 t_local = p;
    if (parent >= 0) {
      Mat4 inv;
      if (!inverse(model[static_cast<size_t>(parent)], inv))
        throw Error({}, "root motion", "the root-motion joint's parent is not invertible");
      t_local = inv.transform_point(p);
    }
    keys.times.push_back(t);
    keys.values.push_back(t_local);
  }
  out.tracks[static_cast<size_t>(joint)].translation = std::move(keys);
  return out;
}

}  // namespace kinema
