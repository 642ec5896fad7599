// The locomotion warp node's pose work (see graph_instance_internal.h): SoA floats to double
// local transforms, kinema/ik/locomotion_warp.h's orientation and stride warps, and back.
#include <algorithm>
#include <array>
#include <cmath>

#include "graph_instance_internal.h"
#include "kinema/math/scalar.h"

namespace kinema {

void warp_locomotion(const LocomotionWarpNode& w, float stride_scale, float direction_degrees,
                     std::vector<Transform>& local, std::vector<Transform>& model,
                     StrideWarpState& state, std::span<SoaTransform> pose) {
  if (!(stride_scale > 0) || !std::isfinite(stride_scale) || !std::isfinite(direction_degrees))
    return;
  const double direction = radians(static_cast<double>(direction_degrees));
  const double limit = radians(static_cast<double>(w.max_angle));
  const double turn = w.spine.empty() ? 0.0 : std::clamp(direction, -limit, limit);
  const bool scale_stride = stride_scale != 1;
  if (turn == 0 && !scale_stride) return;

  const int joints = static_cast<int>(local.size());
  for (int j = 0; j < joints; ++j) local[static_cast<size_t>(j)] = Transform(get_joint(pose, j));
  const Vec3 up{0, 1, 0};
  if (turn != 0) apply_orientation_warp(turn, w.pelvis, w.spine, w.parents, local);
  if (scale_stride) {
    for (size_t j = 0; j < local.size(); ++j) {
      const int p = w.parents[j];
      model[j] = p < 0 ? local[j] : model[static_cast<size_t>(p)] * local[j];
    }
    std::array<StrideWarpLeg, kMaxStrideWarpLegs> legs;
    std::array<StrideWarpLegResult, kMaxStrideWarpLegs> solved;
    for (size_t i = 0; i < w.legs.size(); ++i) {
      const StrideWarpJoints& l = w.legs[i];
      legs[i].hip = model[static_cast<size_t>(l.hip)].translation;
      legs[i].knee = model[static_cast<size_t>(l.knee)].translation;
      legs[i].ankle = model[static_cast<size_t>(l.ankle)].translation;
      legs[i].ankle_rotation = model[static_cast<size_t>(l.ankle)].rotation;
    }
    StrideWarpSettings s = w.settings;
    s.stride_scale = stride_scale;
    // The stride runs along the movement; the knees point where the pelvis now faces.
    s.direction = rotate(Quat::from_axis_angle(up, direction), w.facing);
    s.forward = rotate(Quat::from_axis_angle(up, turn), w.facing);
    s.pelvis = model[static_cast<size_t>(w.pelvis)].translation;
    const size_t n = w.legs.size();
    const StrideWarpResult r =
        solve_stride_warp(std::span(legs.data(), n), s, 0, state, std::span(solved.data(), n));
    apply_stride_warp(r, std::span(solved.data(), n), w.legs, w.pelvis, w.parents, local);
  }
  for (int j = 0; j < joints; ++j)
    set_joint(pose, j, static_cast<Transformf>(local[static_cast<size_t>(j)]));
}

}  // namespace kinema
