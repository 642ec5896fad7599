// Contact and pose metrics of a humanoid clip (kinema/retarget/metrics.h).
#include "kinema/retarget/metrics.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "kinema/blend/root_motion.h"
#include "kinema/core/error.h"
#include "kinema/math/scalar.h"
#include "kinema/retarget/humanoid.h"
#include "leg_samples.h"

namespace kinema {

using namespace retarget_detail;

namespace {

const std::string kPlace = "motion metrics";

/// Largest | |joint − parent| − rest length | over the joints of one frame.
double bone_length_error(const Skeleton& skeleton, std::span<const Mat4> model,
                         std::span<const double> rest_lengths) {
  double worst = 0;
  for (int j = 0; j < skeleton.joint_count(); ++j) {
    const int p = skeleton.parent(j);
    if (p < 0 || rest_lengths[static_cast<size_t>(j)] < 0) continue;
    const double len = length(model[static_cast<size_t>(j)].translation_part() -
                              model[static_cast<size_t>(p)].translation_part());
    worst = std::max(worst, std::abs(len - rest_lengths[static_cast<size_t>(j)]));
  }
  return worst;
}

/// Rest distance of each joint to its parent; −1 (not a bone to check) for roots and for joints
/// whose translation the clip animates, or whose parent's scale it animates (the hips move away
/// from their parent by design).
std::vector<double> rest_bone_lengths(const Skeleton& skeleton, std::span<const Mat4> rest,
                                      const Clip& clip) {
  std::vector<double> lengths(static_cast<size_t>(skeleton.joint_count()), -1.0);
  auto animated = [&](int j, bool translation) {
    if (static_cast<size_t>(j) >= clip.tracks.size()) return false;
    const JointTrack& t = clip.tracks[static_cast<size_t>(j)];
    return translation ? !t.translation.empty() : !t.scale.empty();
  };
  for (int j = 0; j < skeleton.joint_count(); ++j) {
    const int p = skeleton.parent(j);
    if (p >= 0 && !animated(j, true) && !animated(p, false))
      lengths[static_cast<size_t>(j)] = length(rest[static_cast<size_t>(j)].translation_part() -
                                               rest[static_cast<size_t>(p)].translation_part());
  }
  return lengths;
}

double rest_height(std::span<const Mat4> rest) {
  double lo = INFINITY, hi = -INFINITY;
  for (const Mat4& m : rest) {
    lo = std::min(lo, m.translation_part().y);
    hi = std::max(hi, m.translation_part().y);
  }
  return hi - lo;
}

/// Penetration, float, knee flexion and jumps of leg l.
void contact_metrics(const LegSamples& s, const FootPlants& plants, const StanceHeights& h,
                     double floor, int l, LegMetrics& m) {
  double pen_sum = 0, float_sum = 0, previous = 0;
  for (int f = 0; f < s.frames; ++f) {
    const size_t k = s.at(f, l);
    const double flexion = degrees(knee_flexion(s.hip[k], s.knee[k], s.ankle[k]));
    m.knee_flexion_max = std::max(m.knee_flexion_max, flexion);
    if (f > 0) m.knee_jump_max = std::max(m.knee_jump_max, std::abs(flexion - previous));
    previous = flexion;
    const double clearance = 100 * std::min(s.ankle[k].y - floor - h.ankle[static_cast<size_t>(l)],
                                            s.toe[k].y - floor - h.toe[static_cast<size_t>(l)]);
    m.penetration_max = std::max(m.penetration_max, -clearance);
    if (!plants.is_planted(f, l)) continue;
    ++m.planted_frames;
    pen_sum += std::max(0.0, -clearance);
    float_sum += std::max(0.0, clearance);
    m.float_max = std::max(m.float_max, clearance);
  }
  if (m.planted_frames > 0) {
    m.penetration_mean = pen_sum / m.planted_frames;
    m.float_mean = float_sum / m.planted_frames;
  }
}

}  // namespace

StanceHeights rest_foot_heights(const Skeleton& skeleton, const HumanoidLegs& legs) {
  check_legs(skeleton, legs, kPlace);
  const std::vector<Mat4> rest = rest_model_matrices(skeleton);
  const auto y = [&](int j) { return rest[static_cast<size_t>(j)].translation_part().y; };
  StanceHeights h;
  double lowest = 0;
  for (size_t l = 0; l < legs.rig.legs.size(); ++l) {
    const int ankle = legs.rig.legs[l].ankle, toe = toe_of(legs, l);
    h.ankle.push_back(y(ankle));
    h.toe.push_back(toe >= 0 ? y(toe) : y(ankle));
    lowest = std::min({lowest, h.ankle.back(), h.toe.back()});
  }
  for (double& a : h.ankle) a -= lowest;
  for (double& t : h.toe) t -= lowest;
  return h;
}

bool rest_pose_stands(const Skeleton& skeleton, const HumanoidLegs& legs) {
  check_legs(skeleton, legs, kPlace);
  const std::vector<Mat4> rest = rest_model_matrices(skeleton);
  const auto at = [&](int j) { return rest[static_cast<size_t>(j)].translation_part(); };
  for (const FootPlacementJoints& j : legs.rig.legs) {
    const double reach = length(at(j.knee) - at(j.hip)) + length(at(j.ankle) - at(j.knee));
    if (!(at(j.hip).y - at(j.ankle).y >= 0.9 * reach)) return false;
  }
  return true;
}

MotionMetrics measure_motion(const Skeleton& skeleton, const HumanoidLegs& legs, const Clip& clip,
                             double rate, const MotionMetricsOptions& options,
                             const Clip* reference) {
  check_legs(skeleton, legs, kPlace);
  check_rate(rate, kPlace);
  clip.validate(skeleton.joint_count(), clip.name);
  if (reference) reference->validate(skeleton.joint_count(), reference->name);
  const std::vector<Mat4> rest = rest_model_matrices(skeleton);
  const std::vector<double> rest_lengths = rest_bone_lengths(skeleton, rest, clip);

  const FrameTimes times = frame_times(clip, rate);
  MotionMetrics r;
  std::vector<Transform> ref_local(rest.size());
  std::vector<Mat4> ref_model(rest.size());
  double squared_sum = 0, error_sum = 0;
  const LegSamples s = sample_legs(
      skeleton, legs, clip, rate,
      [&](int f, std::span<const Transform>, std::span<const Mat4> model) {
        r.bone_length_error_max =
            std::max(r.bone_length_error_max, bone_length_error(skeleton, model, rest_lengths));
        if (!reference) return;
        sample_pose(*reference, skeleton, times.times[static_cast<size_t>(f)], WrapMode::Clamp,
                    ref_local);
        local_to_model(skeleton.parents(), ref_local, ref_model);
        for (size_t j = 0; j < rest.size(); ++j) {
          const double e = length(model[j].translation_part() - ref_model[j].translation_part());
          squared_sum += e * e;
          error_sum += e;
        }
      });
  r.frames = s.frames;
  r.rate = rate;
  const FootPlants plants = detect_foot_plants(s.ankle, s.toe, s.legs, s.dt, options.contacts);
  r.stance = resolve_heights(skeleton, legs, options, plants);
  const FootSkateReport skate = measure_foot_skate(s.ankle, s.toe, s.legs, s.dt, plants);
  r.skate = skate.total;
  for (int l = 0; l < s.legs; ++l) {
    LegMetrics m;
    m.skate = skate.feet[static_cast<size_t>(l)];
    contact_metrics(s, plants, r.stance, options.floor_height, l, m);
    r.penetration_max = std::max(r.penetration_max, m.penetration_max);
    r.float_max = std::max(r.float_max, m.float_max);
    r.knee_jump_max = std::max(r.knee_jump_max, m.knee_jump_max);
    r.legs.push_back(m);
  }
  if (reference) {
    PoseError e;
    e.height = rest_height(rest);
    const double samples = static_cast<double>(s.frames) * static_cast<double>(rest.size());
    e.mean_joint_error = error_sum / samples;
    e.mse_over_height_squared = e.height > 0 ? squared_sum / samples / (e.height * e.height) : 0;
    r.pose_error = e;
  }
  return r;
}

std::optional<HumanoidFootSkate> humanoid_foot_skate(const Asset& character, const Clip& clip,
                                                     double rate, const FootPlantOptions& options) {
  const std::optional<Humanoid> humanoid = humanoid_of(character);
  if (!humanoid || !(clip.duration > 0)) return std::nullopt;
  const int ankles[] = {humanoid->find("leftFoot"), humanoid->find("rightFoot")};
  const int toes[] = {humanoid->find("leftToes"), humanoid->find("rightToes")};
  if (ankles[0] < 0 || ankles[1] < 0) return std::nullopt;
  clip.validate(character.skeleton.joint_count(), clip.name);
  HumanoidFootSkate r;
  r.with_toes = toes[0] >= 0 && toes[1] >= 0;
  const std::vector<Vec3> ankle = foot_world_positions(clip, character.skeleton, ankles, rate);
  const std::vector<Vec3> toe =
      r.with_toes ? foot_world_positions(clip, character.skeleton, toes, rate) : ankle;
  const double dt = clip.duration / (sampled_frame_count(clip, rate) - 1);
  r.skate = measure_foot_skate(ankle, toe, 2, dt, options).total;
  return r;
}

}  // namespace kinema
