// kinema/ik/look_at.h — turn a head (and the spine and neck under it) towards a target
// (look-at).
//
// The rotation from the head's forward direction f to the target direction d is the shortest
// arc: axis f × d (normalized), angle acos(f · d). Turning only the head looks robotic, so the
// rotation is spread over a chain by weights (e.g. spine 20 %, neck 30 %, head 50 % of 60° =
// 12°, 18°, 30°, each a slerp from identity), each joint's share clamped to a cone, and what the
// cones cut off is reported as the remainder so the caller can turn the body instead.
//
// Model space, metres, radians, right-handed, +Y up, +Z forward. Per-frame: never throws, never
// allocates, never writes NaN.
#pragma once

#include <span>

#include "kinema/math/quat.h"
#include "kinema/math/vec3.h"

namespace kinema {

/// Shortest rotation taking direction `forward` to direction `direction` (neither need be unit):
/// axis forward × direction, angle atan2(|f × d|, f · d) (= acos(f · d), but precise near 0 and
/// π). Parallel → identity. Antiparallel → a half turn about `up` made perpendicular to forward
/// (so a head turns round horizontally), or about any perpendicular when up is parallel too.
/// Zero or non-finite inputs give identity.
Quat look_rotation(const Vec3& forward, const Vec3& direction, const Vec3& up = {0, 1, 0});

/// What look_at did.
enum class LookAtStatus {
  kOk,            ///< every joint took its full share: the head faces the target
  kClamped,       ///< a cone cut a share off (or the weights sum to < 1): see remainder
  kTargetAtEye,   ///< target on the eye (no direction): identity deltas, zero remainder
  kInvalidInput,  ///< non-finite input, a weight < 0 or a weight sum > 1, a cone outside [0, π],
                  ///< or mismatched span sizes: identity deltas, zero remainder
};

/// Result of look_at. The full rotation and the remainder share one axis (f × d).
struct LookAtResult {
  LookAtStatus status = LookAtStatus::kInvalidInput;
  Quat full;                   ///< shortest rotation from forward to the target direction
  double angle = 0;            ///< its angle, radians in [0, π]
  Quat remainder;              ///< what is left after the chain's clamped shares
  double remainder_angle = 0;  ///< its angle, radians ≥ 0 (full angle − sum of the shares)
};

/// Spreads the look-at rotation over a chain of joints (e.g. spine, neck, head).
/// `eye`: the eye/head position; `forward`: the head's current forward direction (model space,
/// e.g. rotate(head_model_rotation, +Z)); `target`: the point to look at.
/// `weights[i]` ≥ 0 is joint i's share of the full angle (their sum ≤ 1; < 1 leaves the rest to
/// the remainder). `cone_half_angles[i]` (radians, [0, π]) bounds joint i's own rotation: its
/// share is projected into a circular swing cone about `forward` (SwingTwistLimit, joint_limits.h);
/// pass an empty span for no cones. `deltas[i]` receives joint i's own model-space delta,
/// slerp(identity, full, weights[i]) clamped: the deltas all turn about the same axis, so a
/// joint's total model delta is the product of its own and its chain ancestors' deltas, and the
/// head's total is full · remainder⁻¹. Pivot offsets between the joints are ignored (the
/// direction is taken from `eye`), which leaves a small parallax for near targets.
/// weights, deltas (and cone_half_angles when given) must have equal sizes.
LookAtResult look_at(const Vec3& eye, const Vec3& forward, const Vec3& target,
                     std::span<const double> weights, std::span<const double> cone_half_angles,
                     std::span<Quat> deltas);

}  // namespace kinema
