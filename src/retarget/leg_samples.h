// Playing a humanoid clip at a fixed rate and collecting its legs (retarget module private).
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "kinema/clip/clip.h"
#include "kinema/math/mat4.h"
#include "kinema/math/quat.h"
#include "kinema/retarget/metrics.h"
#include "kinema/retarget/rig.h"
#include "kinema/skeleton/skeleton.h"

namespace kinema::retarget_detail {

/// The frames a clip is played at: n = sampled_frame_count(clip, rate), times i·duration/(n − 1).
struct FrameTimes {
  std::vector<double> times;
  double dt = 0;
};
FrameTimes frame_times(const Clip& clip, double rate);

/// Throws kinema::Error (place `place`) unless the legs are pelvis → hip → knee → ankle chains of
/// the skeleton with toes (−1 or below the ankle) and there is at least one leg.
void check_legs(const Skeleton& skeleton, const HumanoidLegs& legs, const std::string& place);

/// The stance heights of `options` where given, else the rest pose's when it stands, else the
/// clip's own (plants' floors less the floor height). Throws kinema::Error when a height is not
/// finite or the counts do not match the legs.
StanceHeights resolve_heights(const Skeleton& skeleton, const HumanoidLegs& legs,
                              const MotionMetricsOptions& options, const FootPlants& plants);

/// Throws kinema::Error (place `place`) unless rate is finite and positive.
void check_rate(double rate, const std::string& place);

/// The toe joint of leg l, or −1.
int toe_of(const HumanoidLegs& legs, size_t l);

/// Model-space leg positions per frame, frame-major (frames × legs); the toe is the ankle where a
/// leg has no toe joint.
struct LegSamples {
  int frames = 0, legs = 0;
  double dt = 0;
  std::vector<double> times;
  std::vector<Vec3> hip, knee, ankle, toe;
  std::vector<Quat> foot_rotation;  ///< the ankle joint's model rotation (unit)
  size_t at(int frame, int leg) const {
    return static_cast<size_t>(frame) * static_cast<size_t>(legs) + static_cast<size_t>(leg);
  }
};

/// Called per frame with (frame, local pose, model matrices) after the legs were collected.
using FrameVisitor = std::function<void(int, std::span<const Transform>, std::span<const Mat4>)>;

/// Plays `clip` at `rate` (the caller validated clip and legs) and collects the legs; `visit`
/// (may be empty) sees every frame. Throws kinema::Error when a position is not finite.
LegSamples sample_legs(const Skeleton& skeleton, const HumanoidLegs& legs, const Clip& clip,
                       double rate, const FrameVisitor& visit = {});

/// Knee flexion, radians: the angle between hip→knee and knee→ankle (0 straight).
double knee_flexion(const Vec3& hip, const Vec3& knee, const Vec3& ankle);

/// Unit model rotation of a model matrix (scale removed).
Quat rotation_of_matrix(const Mat4& m);

}  // namespace kinema::retarget_detail
