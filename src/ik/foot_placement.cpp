// kinema/ik/foot_placement.cpp — foot placement on uneven ground.
#include "kinema/ik/foot_placement.h"

#include <algorithm>
#include <cmath>

#include "hierarchy_walk.h"

namespace kinema {

using ik_detail::is_ancestor;
using ik_detail::model_rotation;
using ik_detail::model_uniform_scale;

namespace {

constexpr double kHalfLifeRate = 1.678346990016661;  // (1 + u)·e^(−u) = 1/2

bool finite(double v) { return std::isfinite(v); }

bool settings_ok(const FootPlacementSettings& s) {
  return finite(s.floor_height) && is_finite(s.forward) && finite(s.ray_up) && s.ray_up >= 0 &&
         finite(s.ray_down) && s.ray_down >= 0 && finite(s.max_tilt) &&
         !std::isnan(s.pelvis_half_life) && !std::isnan(s.foot_half_life) &&
         finite(s.soft_distance) && s.soft_distance >= 0;
}

}  // namespace

void critically_damped_spring(double& x, double& velocity, double goal, double half_life,
                              double dt) noexcept {
  if (!finite(dt) || dt <= 0) return;
  if (!finite(half_life) || half_life <= 0) {
    x = goal;
    velocity = 0;
    return;
  }
  const double w = kHalfLifeRate / half_life;
  const double j0 = x - goal;
  const double j1 = velocity + j0 * w;
  const double e = std::exp(-w * dt);
  x = goal + e * (j0 + j1 * dt);
  velocity = e * (velocity - j1 * w * dt);
}

FootPlacementResult update_foot_placement(std::span<const FootPlacementLeg> legs,
                                          const Ground& ground,
                                          const FootPlacementSettings& settings, double dt,
                                          FootPlacementState& state,
                                          std::span<FootPlacementLegResult> out) noexcept {
  FootPlacementResult result;
  for (FootPlacementLegResult& o : out) o = FootPlacementLegResult{};
  if (legs.size() != out.size() || legs.size() > static_cast<std::size_t>(kMaxFootPlacementLegs) ||
      !settings_ok(settings) || std::isnan(dt))
    return result;
  for (const FootPlacementLeg& leg : legs)
    if (!is_finite(leg.hip) || !is_finite(leg.knee) || !is_finite(leg.ankle) ||
        !finite(leg.ankle_height))
      return result;

  const Vec3 up{0, 1, 0};
  const bool snap = !state.started;
  const double step = snap ? 0.0 : dt;

  // 1. Ground under each foot.
  double pelvis_target = 0;
  for (std::size_t i = 0; i < legs.size(); ++i) {
    const FootPlacementLeg& leg = legs[i];
    FootPlacementLegResult& o = out[i];
    const Vec3 sole = leg.ankle - up * leg.ankle_height;
    const Vec3 origin{sole.x, std::max(sole.y, settings.floor_height) + settings.ray_up, sole.z};
    const double reach = origin.y - (settings.floor_height - settings.ray_down);
    GroundHit hit;
    if (ground.ray_down(origin, reach, hit) && is_finite(hit.point) && is_finite(hit.normal)) {
      o.ground_found = true;
      o.ground = hit;
      o.target_offset = hit.point.y - settings.floor_height;
    } else {
      o.ground = GroundHit{};
      o.ground.point = {sole.x, settings.floor_height, sole.z};
      o.target_offset = 0;
    }
    pelvis_target = std::min(pelvis_target, o.target_offset);
  }
  result.target_pelvis_offset = pelvis_target;

  // 2. Smooth the pelvis and the feet.
  if (snap) {
    state.pelvis_offset = pelvis_target;
    state.pelvis_velocity = 0;
  } else {
    critically_damped_spring(state.pelvis_offset, state.pelvis_velocity, pelvis_target,
                             settings.pelvis_half_life, step);
  }
  result.pelvis_offset = state.pelvis_offset;
  const Vec3 pelvis = up * state.pelvis_offset;

  for (std::size_t i = 0; i < legs.size(); ++i) {
    const FootPlacementLeg& leg = legs[i];
    FootPlacementLegResult& o = out[i];
    double& off = state.foot_offset[i];
    double& vel = state.foot_velocity[i];
    Vec3& n = state.normal[i];
    Vec3& nv = state.normal_velocity[i];
    const Vec3 target_normal = o.ground_found ? o.ground.normal : up;
    if (snap) {
      off = o.target_offset;
      vel = 0;
      n = target_normal;
      nv = Vec3{};
    } else {
      critically_damped_spring(off, vel, o.target_offset, settings.foot_half_life, step);
      for (int a = 0; a < 3; ++a)
        critically_damped_spring(n[a], nv[a], target_normal[a], settings.foot_half_life, step);
    }
    o.offset = off;
    o.target = leg.ankle + up * off;

    // 3. Two-bone IK from the lowered hip, knee pole forward.
    TwoBoneInput in;
    in.root = leg.hip + pelvis;
    in.mid = leg.knee + pelvis;
    in.end = leg.ankle + pelvis;
    in.target = o.target;
    in.pole = in.mid + settings.forward;
    in.elbow_side = 1;
    in.soft_distance = settings.soft_distance;
    o.ik = solve_two_bone(in);

    // 4. Foot alignment: up → smoothed normal, clamped to max_tilt.
    const Vec3 nn = normalize(n, up);
    const double angle = std::acos(std::clamp(dot(up, nn), -1.0, 1.0));
    if (settings.max_tilt >= 0 && angle > settings.max_tilt) {
      const Vec3 axis = cross(up, nn);
      o.foot_rotation = length_squared(axis) > 1e-24
                            ? Quat::from_axis_angle(axis, settings.max_tilt)
                            : Quat::identity();
    } else {
      o.foot_rotation = from_to(up, nn);
    }
    if (!is_finite(o.foot_rotation)) o.foot_rotation = Quat::identity();
  }
  state.started = true;
  result.status = FootPlacementStatus::kOk;
  return result;
}

bool apply_foot_placement(const FootPlacementResult& result,
                          std::span<const FootPlacementLegResult> legs,
                          std::span<const FootPlacementJoints> joints, int pelvis,
                          std::span<const int> parents, std::span<Transform> local) noexcept {
  if (result.status != FootPlacementStatus::kOk || legs.size() != joints.size() ||
      parents.size() != local.size() || !finite(result.pelvis_offset))
    return false;
  const int n = static_cast<int>(parents.size());
  for (int j = 0; j < n; ++j)
    if (parents[static_cast<std::size_t>(j)] >= j) return false;
  if (pelvis < 0 || pelvis >= n) return false;
  for (const FootPlacementJoints& jt : joints) {
    if (jt.hip < 0 || jt.knee < 0 || jt.ankle < 0 || jt.hip >= n || jt.knee >= n || jt.ankle >= n)
      return false;
    if (!is_ancestor(parents, jt.hip, jt.knee) || !is_ancestor(parents, jt.knee, jt.ankle))
      return false;
  }
  // Pelvis: the model-space offset along +Y, in the parent's space.
  Transform& pl = local[static_cast<std::size_t>(pelvis)];
  const int pp = parents[static_cast<std::size_t>(pelvis)];
  const Vec3 d{0, result.pelvis_offset, 0};
  if (pp < 0) {
    pl.translation += d;
  } else {
    const double s = model_uniform_scale(parents, local, pp);
    if (s != 0 && finite(s))
      pl.translation += rotate(inverse(model_rotation(parents, local, pp)), d) * (1.0 / s);
  }
  for (std::size_t i = 0; i < legs.size(); ++i) {
    const FootPlacementJoints& jt = joints[i];
    if (!apply_two_bone(legs[i].ik, parents, jt.hip, jt.knee, jt.ankle, local)) continue;
    const int ap = parents[static_cast<std::size_t>(jt.ankle)];
    const Quat p = model_rotation(parents, local, ap);
    Transform& al = local[static_cast<std::size_t>(jt.ankle)];
    al.rotation = normalize(inverse(p) * legs[i].foot_rotation * p * al.rotation);
  }
  return true;
}

}  // namespace kinema
