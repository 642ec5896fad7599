// kinema/blend/transition.h — going from one pose source to another: crossfade and
// inertialization (Bollo, "Inertialization: High-Performance Animation Transitions in Gears of
// War", GDC 2018; worked numbers in docs/worked_examples.md).
//
// A *crossfade* from clip A to clip B over d seconds evaluates BOTH clips for the whole fade and
// blends them with a weight that ramps from 0 to 1 (twice the sampling cost during the fade, and
// the blend itself can mix two feet's contacts). *Inertialization* switches to B at once and hides
// the jump with an offset that decays to zero: at the switch it records, per joint and channel,
// the offset x0 = old − new and its velocity v0, and adds to B's pose the quintic
//
//   x(s) = x0 + V·s − (10·x0 + 6·V)·s³ + (15·x0 + 8·V)·s⁴ − (6·x0 + 3·V)·s⁵,   s = t/T, V = v0·T,
//
// which starts at x0 with velocity v0 and zero acceleration and lands on 0 at t = T with zero
// velocity and acceleration. Only B is evaluated. Poses are local SoA poses
// (kinema/math/soa_transform.h); times are seconds.
//
// Continuity (tested numerically in tests/blend/transition_test.cpp):
//  - Inertialization is C¹ at the switch (position and velocity equal the old source's, for the
//    translation/scale components and for the rotation's angle about the offset axis) and C²
//    at t = T, where the output becomes exactly the new source.
//  - A crossfade is C⁰ at both ends (weight 0 → exactly A, weight 1 → exactly B). It is C¹ at
//    both ends with FadeCurve::Smoothstep (w'(0) = w'(1) = 0), whether or not the clips move,
//    because both clips keep playing: d/dt lerp(A, B, w) = (1−w)·A' + w·B' + w'·(B − A). With
//    FadeCurve::Linear the velocity jumps by (B − A)/d at both ends (for static clips too).
#pragma once

#include <span>
#include <vector>

#include "kinema/math/soa_transform.h"
#include "kinema/math/vec3.h"

namespace kinema {

// ---- crossfade -----------------------------------------------------------------------------

/// Shape of a crossfade's weight ramp over the normalized time s ∈ [0, 1].
enum class FadeCurve {
  Linear,      ///< w = s: C⁰ at the ends
  Smoothstep,  ///< w = 3s² − 2s³: zero slope at both ends, so C¹ there
};

/// Weight of the destination pose at `t` seconds into a fade lasting `duration` seconds:
/// s = clamp(t / duration, 0, 1) shaped by `curve` (0 before the fade, 1 after it). A zero
/// duration is a hard cut (w = 1 from t = 0 on, 0 before). Returns false, writing nothing, when
/// `t` is NaN or `duration` is negative or not finite.
bool crossfade_weight(float t, float duration, FadeCurve curve, float& weight);

/// A crossfade's clock: start() it, advance() it by each frame's dt, read weight().
/// Both sources must be evaluated every frame until done().
struct CrossfadeRamp {
  float duration = 0;  ///< seconds
  FadeCurve curve = FadeCurve::Smoothstep;
  float elapsed = 0;  ///< seconds since start()

  /// Restarts the fade. Returns false (changing nothing) when `duration` is negative or not
  /// finite.
  bool start(float duration_s, FadeCurve shape = FadeCurve::Smoothstep);
  /// Moves the clock by dt seconds. Returns false (changing nothing) when dt is negative or not
  /// finite.
  bool advance(float dt);
  /// Destination weight now, in [0, 1].
  float weight() const;
  bool done() const { return !(elapsed < duration); }
};

/// The crossfade job: out = blend of `from` with weight 1 − w and `to` with weight w, per joint
/// in local space (translations and scales lerped, rotations nlerped in `from`'s hemisphere) —
/// kinema::blend from kinema/blend/pose_ops.h. `from`, `to` and `out` must all hold
/// soa_count(joint_count) elements; `out` must not alias an input. Returns false, writing
/// nothing, on a size mismatch or a weight outside [0, 1] (or NaN). Never allocates.
bool crossfade(std::span<const SoaTransform> from, std::span<const SoaTransform> to, float weight,
               int joint_count, std::span<SoaTransform> out);

// ---- inertialization: the scalar curve -----------------------------------------------------

/// The decaying offset of one channel. Units are the channel's (radians for a
/// rotation angle, metres for a translation, ratio for a scale), velocities per second.
struct InertializationCurve {
  double x0 = 0;          ///< offset at the switch
  double v0 = 0;          ///< offset velocity at the switch, after clamping (units / s)
  double blend_time = 0;  ///< T, seconds, after any shortening; 0: no offset at all
  /// x(s) = x0 + V·s + c3·s³ + c4·s⁴ + c5·s⁵, V = v0·T:
  /// c3 = −(10·x0 + 6·V), c4 = 15·x0 + 8·V, c5 = −(6·x0 + 3·V).
  double c3 = 0, c4 = 0, c5 = 0;

  /// Builds the curve for an offset x0 moving at v0 (units / s) that must vanish after
  /// `blend_time` seconds. Two guards keep the offset from overshooting zero (so it never
  /// changes sign):
  ///  - when v0 points away from zero or x0 is zero (x0·v0 ≥ 0), v0 is set to 0;
  ///  - when `shorten_blend` is true: a v0 toward zero faster than 2.5·|x0| / T would carry
  ///    the zero-acceleration quintic past zero, so T is shortened to 2.5·|x0 / v0| (the
  ///    largest T without a crossing; Bollo also shortens T). v0 is kept, so the start stays C¹.
  /// Throws kinema::Error when an input is not finite or blend_time is negative.
  static InertializationCurve make(double x0, double v0, double blend_time,
                                   bool shorten_blend = true);

  double velocity_scale() const { return v0 * blend_time; }  ///< V = v0·T
  /// Offset t seconds after the switch (0 for t ≥ T, x0 for t ≤ 0).
  double value(double t) const;
  /// Its time derivative (units / s); 0 for t ≥ T and v0 for t ≤ 0.
  double velocity(double t) const;
};

/// The quintic x(t) for one channel: InertializationCurve::make(x0, v0, blend_time,
/// shorten_blend).value(t). E.g. x0 = 20°, v0 = −60°/s, T = 0.3 s → x(0.15 s) = 7.1875°.
/// Throws kinema::Error on non-finite input or a negative blend time.
double inertialize_offset(double x0, double v0, double blend_time, double t,
                          bool shorten_blend = true);

// ---- inertialization: whole poses ----------------------------------------------------------

/// Per-frame inertialization of a pose source switch.
///
/// Channels: each joint's translation and scale are decayed per component (x, y, z
/// independently, in the joint's parent space). The rotation offset is the quaternion q_off with
/// old = q_off·new; it is decayed as its angle about a fixed axis: x0 = angle ∈ [0, π],
/// v0 = (old − new angular velocity, parent space) · axis. The velocity part perpendicular to
/// the axis is dropped (so the switch is C¹ in the angle about that axis only, exactly C¹ when
/// old and new turn about one axis). Output: t = t_new + x_t(t), s = s_new + x_s(t),
/// q = R(axis, x_q(t))·q_new.
///
/// Usage (`T` seconds of blend, frame step dt):
///   at the switch:  transition(old_prev, old_now, new_prev, new_now, dt, T);  apply(new_now, out);
///   every frame:    advance(dt); sample the new source; apply(new_pose, out);
/// old_prev / old_now are the two poses shown last (at the switch time minus dt and at the
/// switch time). When a transition is already running they are this Inertializer's own outputs
/// (apply() the current source at the switch time to get old_now), so the new offset is measured
/// against what is on screen and nothing pops. new_prev / new_now are the new source one dt
/// before the switch and at it. Only the new source is evaluated after the switch.
///
/// All poses hold soa_count(joint_count()) elements. Memory is allocated by reset() only; the
/// other members never allocate. One Inertializer per character; not shared by threads.
class Inertializer {
 public:
  Inertializer() = default;
  explicit Inertializer(int joint_count) { reset(joint_count); }

  /// Sizes the per-joint state for `joint_count` joints (allocates) and ends any transition.
  /// A negative count is treated as 0.
  void reset(int joint_count);
  int joint_count() const { return joint_count_; }

  /// Starts a transition of `blend_time` seconds (see the class comment). Returns false,
  /// changing nothing, when a pose has the wrong size or a non-finite value, dt is not positive
  /// and finite, or blend_time is negative or not finite. blend_time 0 is a hard cut.
  /// `shorten_blend` as in InertializationCurve::make, per channel.
  bool transition(std::span<const SoaTransform> old_previous,
                  std::span<const SoaTransform> old_current,
                  std::span<const SoaTransform> new_previous,
                  std::span<const SoaTransform> new_current, float dt, float blend_time,
                  bool shorten_blend = true);

  /// Moves the transition clock by dt seconds. Returns false (changing nothing) when dt is
  /// negative or not finite.
  bool advance(float dt);

  /// out = `new_pose` with the offsets at the current time applied (a plain copy when no
  /// transition is running). `out` may alias `new_pose`. Returns false, writing nothing, when a
  /// size differs from soa_count(joint_count()).
  bool apply(std::span<const SoaTransform> new_pose, std::span<SoaTransform> out) const;

  /// Seconds since the last transition().
  float elapsed() const { return elapsed_; }
  /// True while some offset is still non-zero (elapsed < the longest channel's blend time).
  bool active() const { return elapsed_ < longest_; }

  /// The curve of one channel of one joint, for tools and tests: channel 0 is the rotation
  /// angle (about rotation_axis()), 1–3 translation x, y, z, 4–6 scale x, y, z.
  InertializationCurve curve(int joint, int channel) const;
  /// The fixed rotation axis of a joint's offset (parent space, unit; +X when there is none).
  Vec3f rotation_axis(int joint) const;

 private:
  struct Channel {  // x(s) = x0 + V·s + c3·s³ + c4·s⁴ + c5·s⁵ for s = t/T < 1, else 0
    float x0 = 0, v = 0, c3 = 0, c4 = 0, c5 = 0, t = 0;
  };
  struct JointState {
    Vec3f axis{1, 0, 0};
    Channel ch[7];
  };
  int joint_count_ = 0;
  float elapsed_ = 0, longest_ = 0;
  std::vector<JointState> joints_;
};

}  // namespace kinema
