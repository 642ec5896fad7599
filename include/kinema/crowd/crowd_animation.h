// kinema/crowd/crowd_animation.h — the crowd's characters: a walk (and run) cycle per agent, in
// step with the ground, at the level of detail its distance from the camera allows.
//
// Every frame, each agent
//   - picks its clips from its speed through a 1-D blend space (kinema/blend/blend_space.h):
//     walk and run at their speeds, weights linear between them, the nearer alone outside;
//   - advances its gait phase by the distance it walked over the gait's stride: the cycle's
//     length is the distance its feet cover in one cycle (the blend space's stride,
//     Σ wᵢ·speedᵢ·durationᵢ), so a planted foot stays planted whatever speed the crowd gives it
//     (stride matching);
//   - turns its body toward its velocity at most `turn_rate` radians a second (+Z forward);
//   - is placed in a LOD tier by CrowdLod (kinema/crowd/crowd_lod.h): near agents evaluate the
//     whole skeleton every frame, mid agents a reduced skeleton (no fingers, toes or end sites:
//     `mid_min_reach`) at the mid rate, far and farthest agents no skeleton at all — their
//     vertex-animation texture or impostor flipbook is played at cycle_time() by the GPU.
// A skeleton update samples the walk and the run at the same normalized phase (RuntimeClip),
// blends them by speed (kinema/blend/pose_ops.h) and runs local → model with the agent's root
// transform. Between the walk's and the run's speeds the blend's feet slide (their stances differ
// in length), and the run clip slides by itself: near agents therefore lock their feet. A foot
// whose animated ankle is within lock_contact_height of its lowest height in the clips and moves
// slower than lock_contact_speed is pinned where it touched down, its leg solved by two-bone IK
// (kinema/ik/two_bone.h) with the knee toward the agent's heading; when the ankle lifts, the IK's
// weight falls to 0 over lock_release seconds and the foot rejoins the animation. Mid agents do
// no IK (the tier's rule).
//
// The clips are played in place: their root joint's horizontal travel is taken out (the agent
// moves the character) and measures their speed unless the gait gives it.
//
// Units: metres, seconds, radians; +Y up, +Z forward. An update is parallel (oneTBB) and gives
// the same bits whatever the thread count; it never allocates.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "kinema/clip/clip.h"
#include "kinema/crowd/crowd_lod.h"
#include "kinema/ik/foot_placement.h"
#include "kinema/math/mat4.h"
#include "kinema/math/vec2.h"
#include "kinema/math/vec3.h"
#include "kinema/skeleton/runtime_skeleton.h"
#include "kinema/skeleton/skeleton.h"

namespace kinema {

/// What the crowd's characters play: a looping walk cycle and, optionally, a run cycle
/// (duration 0: none) on one skeleton.
struct CrowdGait {
  Skeleton skeleton;
  Clip walk, run;
  int root_joint = 0;       ///< the joint whose horizontal travel is root motion
  float walk_speed = 0.0f;  ///< m/s of the walk's feet; 0: the root's travel over the cycle
  float run_speed = 0.0f;   ///< likewise for the run
  /// Hip, knee and ankle of each leg (skeleton indices, each below the last), for foot locking
  /// near the camera; empty: no locking.
  std::vector<FootPlacementJoints> legs;
};

struct CrowdAnimationSettings {
  /// The tiers' distances, rates and fades; their joint counts are replaced by the skeletons'
  /// (the full one near, the reduced one mid), so the accounting counts what is evaluated.
  CrowdLodSettings lod;
  /// m: the mid tier's skeleton keeps the joints whose chain reaches at least this much further
  /// down in the rest pose — legs, spine, arms, hands, head — and drops fingers, toes and end
  /// sites (their vertices follow the nearest kept joint).
  float mid_min_reach = 0.1f;
  float turn_rate = 6.0f;  ///< rad/s
  int threads = 0;         ///< 0: all cores; the result does not depend on it
  /// Foot locking of near agents (CrowdGait::legs): a foot is planted while its ankle is within
  /// lock_contact_height (m) of the lowest it gets in the clips and moves slower than
  /// lock_contact_speed (m/s, horizontal); once it lifts, the lock is released over lock_release
  /// seconds.
  bool foot_locking = true;
  float lock_contact_height = 0.05f;  // a run's heel lifts 3–4 cm while its toe is down
  float lock_contact_speed = 0.5f;
  float lock_release = 0.1f;
};

class CrowdAnimator {
 public:
  /// Validates and prepares the runtime clips of both skeletons. Throws kinema::Error for a
  /// walk that is empty or does not fit the skeleton, a root joint out of range, a leg whose
  /// joints are out of range or not a chain, a clip whose
  /// speed is neither given nor measurable (its root does not travel), a run no faster than the
  /// walk, settings out of range, or the LOD settings CrowdLod refuses.
  CrowdAnimator(const CrowdGait& gait, const CrowdAnimationSettings& settings, std::size_t agents);
  ~CrowdAnimator();
  CrowdAnimator(CrowdAnimator&&) noexcept;
  CrowdAnimator& operator=(CrowdAnimator&&) noexcept;

  /// One display frame of `dt` seconds (> 0) for the agents at `positions` moving at
  /// `velocities` on the ground plane (Vec2 (x, y) = world (x, z)), standing at `heights` (m; may
  /// be empty: 0), seen from `camera`. Spans shorter than the agent count leave the rest alone.
  void update(float dt, std::span<const Vec2f> positions, std::span<const Vec2f> velocities,
              std::span<const float> heights, const Vec3f& camera);

  std::size_t size() const noexcept;
  const CrowdLod& lod() const noexcept;
  /// The model-space pose agent i's skeleton update wrote last (world space: the root transform
  /// applied): full_skeleton() joints for near, mid_skeleton() joints for mid; empty before
  /// its first update.
  std::span<const Mat4f> pose(std::size_t agent) const noexcept;
  const RuntimeSkeleton& full_skeleton() const noexcept;
  const RuntimeSkeleton& mid_skeleton() const noexcept;
  /// Full-skeleton index of each mid-skeleton joint.
  std::span<const int> mid_joints() const noexcept;
  /// Where agent i is in its gait cycle: phase ∈ [0, 1), and the walk clip's time (s) for a VAT.
  float phase(std::size_t agent) const noexcept;
  float cycle_time(std::size_t agent) const noexcept;
  float heading(std::size_t agent) const noexcept;  ///< yaw, rad (0: +Z)
  float walk_speed() const noexcept;
  float run_speed() const noexcept;  ///< 0 without a run
  /// Agent i's last skeleton pose on the full skeleton (world space), for drawing: a mid pose's
  /// dropped joints follow the joint they hang from rigidly, at their rest offsets. Returns false
  /// (writing nothing) when it has none yet or `out` is not full_skeleton()'s size.
  bool full_pose(std::size_t agent, std::span<Mat4f> out) const noexcept;
  /// The full skeleton played in place at `phase` (wrapped into [0, 1)) with the run blended in
  /// by `run_weight` (0: the walk): model space, the character's root over the origin facing +Z
  /// — what pose() holds for an agent at the origin with heading 0, without foot locking. For
  /// baking the far tiers (kinema/render: vertex-animation textures, impostors). Allocates.
  /// Throws kinema::Error when `out` is not full_skeleton()'s size.
  void sample_in_place(float phase, float run_weight, std::span<Mat4f> out) const;
  float walk_duration() const noexcept;  ///< s, the walk cycle's
  float run_duration() const noexcept;   ///< s, the run cycle's (0 without a run)
  /// True while leg `leg` of agent i is pinned by foot locking (near agents only).
  bool foot_locked(std::size_t agent, std::size_t leg) const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kinema
