// kinema/ik/locomotion_warp.cpp — stride and orientation warping of a locomotion pose.
#include "kinema/ik/locomotion_warp.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "hierarchy_walk.h"

namespace kinema {

namespace {

bool settings_ok(const StrideWarpSettings& s) {
  return std::isfinite(s.stride_scale) && s.stride_scale > 0 && is_finite(s.direction) &&
         is_finite(s.pelvis) && is_finite(s.forward) && std::isfinite(s.max_extension) &&
         s.max_extension > 0 && s.max_extension <= 1 && std::isfinite(s.max_pelvis_drop) &&
         s.max_pelvis_drop >= 0 && !std::isnan(s.release_half_life);
}

// The least drop h ≥ 0 of the hip that brings `target` within `reach` of it: with v = target −
// hip, the drop changes v.y into v.y + h, so h = −v.y − √(reach² − horizontal²) when that is
// positive. A target out of reach horizontally asks for the hip at its height (h = −v.y), the
// closest it can get; both branches meet at the boundary, so the drop stays continuous.
double drop_to_reach(const Vec3& hip, const Vec3& target, double reach) {
  const Vec3 v = target - hip;
  const double room = reach * reach - (v.x * v.x + v.z * v.z);
  const double h = room > 0 ? -v.y - std::sqrt(room) : -v.y;
  return std::max(h, 0.0);
}

}  // namespace

StrideWarpResult solve_stride_warp(std::span<const StrideWarpLeg> legs,
                                   const StrideWarpSettings& settings, double dt,
                                   StrideWarpState& state,
                                   std::span<StrideWarpLegResult> out) noexcept {
  StrideWarpResult result;
  for (StrideWarpLegResult& o : out) o = StrideWarpLegResult{};
  if (legs.size() != out.size() || legs.size() > static_cast<std::size_t>(kMaxStrideWarpLegs) ||
      !settings_ok(settings) || std::isnan(dt))
    return result;
  for (const StrideWarpLeg& leg : legs)
    if (!is_finite(leg.hip) || !is_finite(leg.knee) || !is_finite(leg.ankle) ||
        !is_finite(leg.ankle_rotation) || (leg.on_toe && !is_finite(leg.toe)))
      return result;
  const Vec3 flat{settings.direction.x, 0, settings.direction.z};
  const double flat_length = length(flat);
  if (!(flat_length > 1e-9)) return result;
  const Vec3 d = flat * (1.0 / flat_length);

  // 1. The ankles' targets, and the drop that lets every leg reach its own.
  double drop = 0;
  for (std::size_t i = 0; i < legs.size(); ++i) {
    const StrideWarpLeg& leg = legs[i];
    const double along = dot(leg.ankle - settings.pelvis, d);
    const Vec3 warped = leg.ankle + d * ((settings.stride_scale - 1) * along);
    Vec3& anchor = state.anchor[i];
    Vec3& release = state.release[i];
    Vec3& release_velocity = state.release_velocity[i];
    // Horizontal offset from the ankle to a support point.
    auto from_ankle = [&](bool toe) {
      const Vec3 p = toe ? leg.toe : leg.ankle;
      return Vec3{p.x - leg.ankle.x, 0, p.z - leg.ankle.z};
    };
    if (leg.planted) {
      if (!state.planted[i]) {
        // The plant begins where the target is: the support sits at it.
        anchor = warped + release + from_ankle(leg.on_toe);
      } else if (state.on_toe[i] != leg.on_toe) {
        // The support passes from ankle to toe (or back): the ankle stays where the old support
        // puts it this frame, the new support is anchored there.
        anchor = anchor - from_ankle(state.on_toe[i]) + from_ankle(leg.on_toe);
      }
      release = release_velocity = Vec3{};
      const Vec3 ankle = anchor - from_ankle(leg.on_toe);
      out[i].target = {ankle.x, warped.y, ankle.z};
    } else {
      if (state.planted[i]) {  // lift-off: from where the plant held it back to the warped stride
        const Vec3 held = anchor - from_ankle(state.on_toe[i]);
        release = Vec3{held.x - warped.x, 0, held.z - warped.z};
        release_velocity = Vec3{};
      } else {
        for (int a = 0; a < 3; ++a)
          critically_damped_spring(release[a], release_velocity[a], 0, settings.release_half_life,
                                   dt);
      }
      out[i].target = warped + release;
    }
    state.on_toe[i] = leg.planted && leg.on_toe;
    state.planted[i] = leg.planted;
    const double reach =
        settings.max_extension * (length(leg.knee - leg.hip) + length(leg.ankle - leg.knee));
    drop = std::max(drop, drop_to_reach(leg.hip, out[i].target, reach));
  }
  drop = std::min(drop, settings.max_pelvis_drop);

  // 2. Each leg from its lowered joints, knee pole forward.
  const Vec3 lowered{0, -drop, 0};
  for (std::size_t i = 0; i < legs.size(); ++i) {
    TwoBoneInput in;
    in.root = legs[i].hip + lowered;
    in.mid = legs[i].knee + lowered;
    in.end = legs[i].ankle + lowered;
    in.target = out[i].target;
    in.pole = in.mid + settings.forward;
    in.elbow_side = 1;
    in.match_end_rotation = settings.keep_foot_rotation;
    in.end_rotation = in.target_rotation = legs[i].ankle_rotation;
    out[i].ik = solve_two_bone(in);
  }
  result.pelvis_offset = -drop;
  result.status = StrideWarpStatus::kOk;
  return result;
}

bool apply_stride_warp(const StrideWarpResult& result, std::span<const StrideWarpLegResult> legs,
                       std::span<const StrideWarpJoints> joints, int pelvis,
                       std::span<const int> parents, std::span<Transform> local) noexcept {
  if (result.status != StrideWarpStatus::kOk || legs.size() != joints.size() ||
      legs.size() > static_cast<std::size_t>(kMaxStrideWarpLegs))
    return false;
  // The same application as foot placement's: the pelvis along +Y, then each leg's two-bone
  // solution (and no foot turn).
  FootPlacementResult placement;
  placement.status = FootPlacementStatus::kOk;
  placement.pelvis_offset = result.pelvis_offset;
  std::array<FootPlacementLegResult, kMaxStrideWarpLegs> placed{};
  for (std::size_t i = 0; i < legs.size(); ++i) {
    placed[i].ik = legs[i].ik;
    placed[i].foot_rotation = Quat::identity();
  }
  return apply_foot_placement(placement, std::span(placed.data(), legs.size()), joints, pelvis,
                              parents, local);
}

double orientation_warp_angle(const Vec3& facing, const Vec3& movement, double max_angle) noexcept {
  if (!is_finite(facing) || !is_finite(movement) || !std::isfinite(max_angle)) return 0;
  const double fx = facing.x, fz = facing.z, mx = movement.x, mz = movement.z;
  if (!(fx * fx + fz * fz > 1e-18) || !(mx * mx + mz * mz > 1e-18)) return 0;
  // About +Y a rotation takes +Z towards +X, so the angle from f to m is atan2((f × m)·Y, f·m)
  // with (f × m)·Y = fz·mx − fx·mz.
  const double angle = std::atan2(fz * mx - fx * mz, fx * mx + fz * mz);
  const double limit = std::abs(max_angle);
  return std::clamp(angle, -limit, limit);
}

bool apply_orientation_warp(double angle, int pelvis, std::span<const int> spine,
                            std::span<const int> parents, std::span<Transform> local) noexcept {
  const int n = static_cast<int>(parents.size());
  if (!std::isfinite(angle) || local.size() != parents.size() || pelvis < 0 || pelvis >= n)
    return false;
  for (int j = 0; j < n; ++j)
    if (parents[static_cast<std::size_t>(j)] >= j) return false;
  int above = pelvis;
  for (const int j : spine) {
    if (j < 0 || j >= n || parents[static_cast<std::size_t>(j)] != above) return false;
    above = j;
  }
  if (angle == 0) return true;
  const Vec3 up{0, 1, 0};
  // A joint whose total model delta goes from D_parent to D (both about +Y, the parent's old
  // model rotation P) gets local ← P⁻¹·(D_parent⁻¹·D)·P·local. The pelvis's parent does not
  // move, so the pelvis's step is the whole angle; each spine joint's is −angle/n, which brings
  // the last one's total back to zero.
  auto turn = [&](int j, double step) {
    const Quat p = ik_detail::model_rotation(parents, local, parents[static_cast<std::size_t>(j)]);
    Transform& t = local[static_cast<std::size_t>(j)];
    t.rotation = normalize(inverse(p) * Quat::from_axis_angle(up, step) * p * t.rotation);
  };
  // From the top down, so that each joint's ancestors still hold their old rotations.
  if (!spine.empty()) {
    const double share = -angle / static_cast<double>(spine.size());
    for (std::size_t k = spine.size(); k-- > 0;) turn(spine[k], share);
  }
  turn(pelvis, angle);
  return true;
}

}  // namespace kinema
