// Humanoid retargeting by bone names (see kinema/retarget/retarget.h).
#include "kinema/retarget/retarget.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kinema/character/humanoid.h"
#include "kinema/core/error.h"

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

}  // namespace

Clip retarget_humanoid(const Asset& source, int clip_index, const Asset& target) {
  if (clip_index < 0 || clip_index >= static_cast<int>(source.clips.size()))
    throw Error(source.source.path, "clip " + std::to_string(clip_index), "no such clip");
  auto humanoid_or_throw = [](const Asset& a) {
    std::optional<Humanoid> g = humanoid_of(a);
    if (!g)
      throw Error(a.source.path, "",
                  "no humanoid bone map (not a VRM) and the joint names do not map to humanoid "
                  "bones (hips, spine, head, arms and legs); retargeting needs a humanoid");
    return *g;
  };
  const Humanoid hs = humanoid_or_throw(source), ht = humanoid_or_throw(target);
  const Skeleton& ss = source.skeleton;
  const Skeleton& ts = target.skeleton;
  const int sh = hs.find("hips"), th = ht.find("hips");
  if (sh < 0 || th < 0) throw Error(source.source.path, "humanoid", "both humanoids need hips");
  const Clip& clip = source.clips[static_cast<size_t>(clip_index)];

  const auto src_rest = rest_model_matrices(ss);
  const auto dst_rest = rest_model_matrices(ts);
  const auto src_rest_q = world_rotations(src_rest);
  const auto dst_rest_q = world_rotations(dst_rest);
  std::vector<int> map(static_cast<size_t>(ts.joint_count()), -1);  // target joint → source joint
  for (const auto& [bone, tj] : ht.bones) {
    const int sj = hs.find(bone);
    if (sj >= 0 && sj < ss.joint_count() && tj >= 0 && tj < ts.joint_count())
      map[static_cast<size_t>(tj)] = sj;
  }
  const Quat yaw = Quat::from_axis_angle(
      Vec3::unit_y(), facing(target.source.forward_axis) - facing(source.source.forward_axis));
  // Scale: ratio of leg lengths (thigh + shin bone lengths at rest, both sides averaged), which
  // does not depend on where each rig puts its root or hip joints; the hip heights otherwise.
  auto leg = [](const Humanoid& h, const std::vector<Mat4>& rest) {
    double sum = 0;
    int n = 0;
    for (const char* side : {"left", "right"}) {
      const std::string sd = side;
      const int u = h.find(sd + "UpperLeg"), l = h.find(sd + "LowerLeg"), f = h.find(sd + "Foot");
      const int count = static_cast<int>(rest.size());
      if (u < 0 || l < 0 || f < 0 || u >= count || l >= count || f >= count) continue;
      auto p = [&](int j) { return rest[static_cast<size_t>(j)].translation_part(); };
      sum += distance(p(u), p(l)) + distance(p(l), p(f));
      ++n;
    }
    return n > 0 ? sum / n : 0.0;
  };
  double src_leg = leg(hs, src_rest), dst_leg = leg(ht, dst_rest);
  if (!(src_leg > 1e-6) || !(dst_leg > 1e-6)) {
    src_leg = src_rest[static_cast<size_t>(sh)].translation_part().y;
    dst_leg = dst_rest[static_cast<size_t>(th)].translation_part().y;
  }
  const double scale = std::abs(src_leg) > 1e-6 ? dst_leg / src_leg : 1.0;
  const Vec3 src_hips_rest = src_rest[static_cast<size_t>(sh)].translation_part();
  const Vec3 dst_hips_rest = dst_rest[static_cast<size_t>(th)].translation_part();
  const int hp = ts.parent(th);
  Mat4 hips_parent_inv = Mat4::identity();
  if (hp >= 0 && !inverse(dst_rest[static_cast<size_t>(hp)], hips_parent_inv))
    hips_parent_inv = Mat4::identity();

  const double rate = clip.sample_rate > 0 ? clip.sample_rate : 30.0;
  const int frames = std::max(1, static_cast<int>(std::floor(clip.duration * rate + 1e-6)) + 1);
  std::vector<double> times;
  for (int f = 0; f < frames; ++f) times.push_back(std::min(f / rate, clip.duration));
  if (clip.duration - times.back() > 1e-9) times.push_back(clip.duration);

  Clip out;
  out.name = clip.name;
  out.duration = clip.duration;
  out.sample_rate = clip.sample_rate > 0 ? clip.sample_rate : (times.size() > 1 ? rate : 0);
  out.tracks.resize(static_cast<size_t>(ts.joint_count()));
  std::vector<Transform> local(static_cast<size_t>(ss.joint_count()));
  std::vector<Mat4> model(local.size());
  std::vector<Quat> dst_world(static_cast<size_t>(ts.joint_count()));
  const auto dst_rest_local = ts.rest_pose();
  // The source's floor: the lowest its feet (ankles) get over the clip is mapped onto the
  // target's rest ankle height, so the target's feet touch its floor where the source's do.
  const int slf = hs.find("leftFoot"), srf = hs.find("rightFoot");
  const int tlf = ht.find("leftFoot"), trf = ht.find("rightFoot");
  double src_floor = 0, dst_floor = 0;
  if (slf >= 0 && srf >= 0 && tlf >= 0 && trf >= 0) {
    src_floor = std::numeric_limits<double>::infinity();
    for (double t : times) {
      sample_pose(clip, ss, t, WrapMode::Clamp, local);
      local_to_model(ss.parents(), local, model);
      src_floor = std::min({src_floor, model[static_cast<size_t>(slf)].translation_part().y,
                            model[static_cast<size_t>(srf)].translation_part().y});
    }
    dst_floor = std::min(dst_rest[static_cast<size_t>(tlf)].translation_part().y,
                         dst_rest[static_cast<size_t>(trf)].translation_part().y);
  }
  for (double t : times) {
    sample_pose(clip, ss, t, WrapMode::Clamp, local);
    local_to_model(ss.parents(), local, model);
    for (int j = 0; j < ts.joint_count(); ++j) {
      const int p = ts.parent(j);
      const Quat parent_q = p >= 0 ? dst_world[static_cast<size_t>(p)] : Quat::identity();
      const int sj = map[static_cast<size_t>(j)];
      Quat w;
      if (sj >= 0) {
        const Quat delta = rotation_of(model[static_cast<size_t>(sj)]) *
                           conjugate(src_rest_q[static_cast<size_t>(sj)]);
        w = normalize(yaw * delta * conjugate(yaw) * dst_rest_q[static_cast<size_t>(j)]);
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
    // Horizontal: the source's displacement from its rest position, turned and scaled.
    // Vertical: the source's height above its lowest ankle position, scaled.
    const Vec3 src_hips = model[static_cast<size_t>(sh)].translation_part();
    Vec3 world = dst_hips_rest + rotate(yaw, src_hips - src_hips_rest) * scale;
    world.y = dst_floor + (src_hips.y - src_floor) * scale;
    auto& tr = out.tracks[static_cast<size_t>(th)].translation;
    tr.times.push_back(t);
    tr.values.push_back(hips_parent_inv.transform_point(world));
  }
  // Ground the feet: shift the hips so the lowest the target's ankles get over the clip is
  // their rest height (the rigs' hip-to-thigh offsets differ, so the scaled source height alone
  // can leave the feet floating or sunk).
  if (tlf >= 0 && trf >= 0) {
    std::vector<Transform> tl(static_cast<size_t>(ts.joint_count()));
    std::vector<Mat4> tm(tl.size());
    double lowest = std::numeric_limits<double>::infinity();
    for (double t : times) {
      sample_pose(out, ts, t, WrapMode::Clamp, tl);
      local_to_model(ts.parents(), tl, tm);
      lowest = std::min({lowest, tm[static_cast<size_t>(tlf)].translation_part().y,
                         tm[static_cast<size_t>(trf)].translation_part().y});
    }
    if (std::isfinite(lowest)) {
      const Vec3 shift = hips_parent_inv.transform_vector(Vec3{0, dst_floor - lowest, 0});
      for (auto& v : out.tracks[static_cast<size_t>(th)].translation.values) v += shift;
    }
  }
  return out;
}
}  // namespace kinema
