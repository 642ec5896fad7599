// Playing a humanoid clip at a fixed rate and collecting its legs (leg_samples.h).
#include "leg_samples.h"

#include <algorithm>
#include <cmath>

#include "kinema/blend/root_motion.h"
#include "kinema/core/error.h"
#include "kinema/math/transform.h"

namespace kinema::retarget_detail {

namespace {

const std::string kPlace = "motion metrics";

void check_heights(const std::vector<double>& heights, size_t legs, const char* what) {
  if (heights.empty()) return;
  if (heights.size() != legs)
    throw Error({}, kPlace, std::string(what) + " needs one height per leg");
  for (double h : heights)
    if (!std::isfinite(h)) throw Error({}, kPlace, std::string(what) + " must be finite");
}

bool is_ancestor(std::span<const int> parents, int a, int j) {
  for (j = parents[static_cast<size_t>(j)]; j >= 0; j = parents[static_cast<size_t>(j)])
    if (j == a) return true;
  return false;
}

}  // namespace

StanceHeights resolve_heights(const Skeleton& skeleton, const HumanoidLegs& legs,
                              const MotionMetricsOptions& o, const FootPlants& plants) {
  check_heights(o.ankle_heights, legs.rig.legs.size(), "ankle_heights");
  check_heights(o.toe_heights, legs.rig.legs.size(), "toe_heights");
  if (!std::isfinite(o.floor_height)) throw Error({}, kPlace, "floor_height must be finite");
  StanceHeights h;
  if (rest_pose_stands(skeleton, legs)) {
    h = rest_foot_heights(skeleton, legs);
  } else {
    h.source = StanceHeightSource::Clip;
    for (size_t l = 0; l < legs.rig.legs.size(); ++l) {
      h.ankle.push_back(plants.ankle_floor[l] - o.floor_height);
      h.toe.push_back(plants.toe_floor[l] - o.floor_height);
    }
  }
  if (!o.ankle_heights.empty()) h.ankle = o.ankle_heights;
  if (!o.toe_heights.empty()) h.toe = o.toe_heights;
  if (!o.ankle_heights.empty() || !o.toe_heights.empty()) h.source = StanceHeightSource::Options;
  return h;
}

void check_rate(double rate, const std::string& place) {
  if (!std::isfinite(rate) || rate <= 0)
    throw Error({}, place, "the sample rate must be finite and positive");
}

FrameTimes frame_times(const Clip& clip, double rate) {
  const int n = sampled_frame_count(clip, rate);
  FrameTimes t;
  t.dt = clip.duration / (n - 1);
  t.times.resize(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i)
    t.times[static_cast<size_t>(i)] = i == n - 1 ? clip.duration : i * t.dt;
  return t;
}

void check_legs(const Skeleton& skeleton, const HumanoidLegs& legs, const std::string& place) {
  const int joints = skeleton.joint_count();
  const std::span<const int> parents = skeleton.parents();
  const auto in_range = [&](int j) { return j >= 0 && j < joints; };
  if (legs.rig.legs.empty()) throw Error({}, place, "no legs");
  if (!in_range(legs.rig.pelvis)) throw Error({}, place, "the hips joint is out of range");
  if (!legs.rig.toes.empty() && legs.rig.toes.size() != legs.rig.legs.size())
    throw Error({}, place, "needs one toe joint (or -1) per leg");
  for (size_t l = 0; l < legs.rig.legs.size(); ++l) {
    const FootPlacementJoints& j = legs.rig.legs[l];
    const std::string leg = place + ", leg " + std::to_string(l);
    if (!in_range(j.hip) || !in_range(j.knee) || !in_range(j.ankle))
      throw Error({}, leg, "a joint index is out of range");
    if (!is_ancestor(parents, legs.rig.pelvis, j.hip) || !is_ancestor(parents, j.hip, j.knee) ||
        !is_ancestor(parents, j.knee, j.ankle))
      throw Error({}, leg, "the joints are not a hips → upper leg → lower leg → foot chain");
    const int toe = toe_of(legs, l);
    if (toe != -1 && (!in_range(toe) || !is_ancestor(parents, j.ankle, toe)))
      throw Error({}, leg, "the toe joint is not below the foot");
  }
}

int toe_of(const HumanoidLegs& legs, size_t l) {
  return l < legs.rig.toes.size() ? legs.rig.toes[l] : -1;
}

Quat rotation_of_matrix(const Mat4& m) { return normalize(Transform::from_matrix(m).rotation); }

double knee_flexion(const Vec3& hip, const Vec3& knee, const Vec3& ankle) {
  const Vec3 thigh = knee - hip, shin = ankle - knee;
  const double lt = length(thigh), ls = length(shin);
  if (!(lt > 0) || !(ls > 0)) return 0;
  return std::acos(std::clamp(dot(thigh, shin) / (lt * ls), -1.0, 1.0));
}

LegSamples sample_legs(const Skeleton& skeleton, const HumanoidLegs& legs, const Clip& clip,
                       double rate, const FrameVisitor& visit) {
  const FrameTimes ft = frame_times(clip, rate);
  LegSamples s;
  s.frames = static_cast<int>(ft.times.size());
  s.legs = static_cast<int>(legs.rig.legs.size());
  s.dt = ft.dt;
  s.times = ft.times;
  const size_t slots = static_cast<size_t>(s.frames) * static_cast<size_t>(s.legs);
  for (auto* v : {&s.hip, &s.knee, &s.ankle, &s.toe}) v->resize(slots);
  s.foot_rotation.resize(slots);
  std::vector<Transform> local(static_cast<size_t>(skeleton.joint_count()));
  std::vector<Mat4> model(local.size());
  const auto position = [&](int j) { return model[static_cast<size_t>(j)].translation_part(); };
  for (int f = 0; f < s.frames; ++f) {
    sample_pose(clip, skeleton, s.times[static_cast<size_t>(f)], WrapMode::Clamp, local);
    local_to_model(skeleton.parents(), local, model);
    for (int l = 0; l < s.legs; ++l) {
      const FootPlacementJoints& j = legs.rig.legs[static_cast<size_t>(l)];
      const int toe = toe_of(legs, static_cast<size_t>(l));
      const size_t k = s.at(f, l);
      s.hip[k] = position(j.hip);
      s.knee[k] = position(j.knee);
      s.ankle[k] = position(j.ankle);
      s.toe[k] = toe >= 0 ? position(toe) : s.ankle[k];
      s.foot_rotation[k] = rotation_of_matrix(model[static_cast<size_t>(j.ankle)]);
      if (!is_finite(s.hip[k]) || !is_finite(s.knee[k]) || !is_finite(s.toe[k]) ||
          !is_finite(s.ankle[k]) || !is_finite(s.foot_rotation[k]))
        throw Error(
            clip.name, "frame " + std::to_string(f),
            "leg " + std::to_string(l) + " has a non-finite position (NaN or infinite keys)");
    }
    if (visit) visit(f, local, model);
  }
  return s;
}

}  // namespace kinema::retarget_detail
