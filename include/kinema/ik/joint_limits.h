// kinema/ik/joint_limits.h — joint limits for IK solvers.
//
// A limit constrains a joint's rotation q *relative to its reference orientation*: usually the
// joint's bind-pose local rotation, so q_rel = conjugate(rest_local) * local and identity means
// "as in the bind pose". Axes are unit vectors in that reference frame (the frame the joint's
// local rotation maps from: the child side). Angles are radians; right-handed, +Y up; a positive
// angle about an axis turns counter-clockwise when the axis points at the viewer.
//
// Two kinds, as iterative solvers need them (CCD, FABRIK, Jacobian):
//  - HingeLimit: rotation about one axis only, with the angle clamped to [min, max]
//    (e.g. a knee asked for 160° with max 150° gets 150°).
//  - SwingTwistLimit: q = swing · twist (math swing_twist), twist about the bone axis limited to
//    [twist_min, twist_max]; swing limited to a cone, circular or elliptical.
//
// Every function here is per-frame: none throws, none allocates, and none returns NaN (a
// non-finite input rotation is treated as identity). The make_* builders validate user input and
// throw kinema::Error.
#pragma once

#include <cstdint>

#include "kinema/math/quat.h"
#include "kinema/math/vec3.h"

namespace kinema {

/// A hinge (knee, elbow, finger joint): only rotation about `axis`, by an angle in
/// [min_angle, max_angle] radians (−π ≤ min ≤ max ≤ π). Build with make_hinge_limit.
struct HingeLimit {
  Vec3 axis{1, 0, 0};  ///< unit hinge axis in the joint's reference frame
  double min_angle = -kPi;
  double max_angle = kPi;
};

/// A ball joint (shoulder, hip, neck): q = swing · twist about `twist_axis` (the bone direction).
/// The swing's rotation vector s (axis × angle, perpendicular to twist_axis) is written
/// s = u·swing_axis_a + v·swing_axis_b with swing_axis_b = twist_axis × swing_axis_a, and must
/// satisfy (u / swing_a)² + (v / swing_b)² ≤ 1: swing_a is the largest swing angle *about*
/// swing_axis_a, swing_b the largest about swing_axis_b (equal for a circular cone of that
/// half-angle). A half-angle of 0 forbids swinging about that axis. The twist angle (signed, about
/// twist_axis, in (−π, π]) must lie in [twist_min, twist_max]. Build with make_swing_twist_limit.
struct SwingTwistLimit {
  Vec3 twist_axis{0, 1, 0};     ///< unit bone axis in the joint's reference frame
  Vec3 swing_axis_a{1, 0, 0};   ///< unit, perpendicular to twist_axis
  Vec3 swing_axis_b{0, 0, -1};  ///< twist_axis × swing_axis_a (filled in by the builder)
  double swing_a = kPi;         ///< half-angle about swing_axis_a, radians in [0, π]
  double swing_b = kPi;         ///< half-angle about swing_axis_b, radians in [0, π]
  double twist_min = -kPi;      ///< radians, −π ≤ twist_min ≤ twist_max ≤ π
  double twist_max = kPi;
};

/// Validated hinge limit: `axis` is normalized; throws kinema::Error when the axis is zero or not
/// finite, or the angles are not finite, not in [−π, π], or min > max.
HingeLimit make_hinge_limit(const Vec3& axis, double min_angle, double max_angle);

/// Validated swing-twist limit with a circular swing cone of `cone_half_angle` radians.
/// `twist_axis` is normalized; swing_axis_a is any unit vector perpendicular to it.
/// Throws kinema::Error on a zero/non-finite axis or angles out of range (see SwingTwistLimit).
SwingTwistLimit make_swing_twist_limit(const Vec3& twist_axis, double cone_half_angle,
                                       double twist_min, double twist_max);

/// Validated swing-twist limit with an elliptical swing cone: `swing_a` radians about
/// `swing_axis_a` (made perpendicular to twist_axis by Gram-Schmidt and normalized), `swing_b`
/// about twist_axis × swing_axis_a. Throws kinema::Error when an axis is zero or not finite,
/// swing_axis_a is parallel to twist_axis, or an angle is out of range.
SwingTwistLimit make_swing_twist_limit(const Vec3& twist_axis, const Vec3& swing_axis_a,
                                       double swing_a, double swing_b, double twist_min,
                                       double twist_max);

/// Signed rotation angle of q about unit `axis`, in (−π, π]: the angle of q's twist about that
/// axis (swing-twist decomposition); the swing part is ignored.
double twist_angle(const Quat& q, const Vec3& axis);

/// Clamps `angle` (radians, any value; wrapped to (−π, π] first) into [min_angle, max_angle]. An
/// angle outside goes to the nearer end measured around the circle, so a range [−10°, 170°]
/// sends −170° to 170° (20° away), not to −10°. A knee asked for 160° with max 150° → 150°.
double clamp_angle(double angle, double min_angle, double max_angle);

/// Closest rotation allowed by the hinge: q's twist about the axis (the rotation about that axis
/// nearest to q), with its angle clamped by clamp_angle. Returns normalize(q) unchanged when
/// within(limit, q, 1e-12), so projecting twice gives the same rotation.
Quat project(const HingeLimit& limit, const Quat& q);

/// True when q is (up to `tolerance` radians) a rotation about the hinge axis with an angle in
/// [min_angle − tolerance, max_angle + tolerance]. The off-axis part is measured as the swing
/// angle.
bool within(const HingeLimit& limit, const Quat& q, double tolerance = 1e-9);

/// Swing and twist of q against a swing-twist limit, as the limit measures them.
struct SwingTwistAngles {
  double u = 0;      ///< swing rotation vector component along swing_axis_a, radians
  double v = 0;      ///< swing rotation vector component along swing_axis_b, radians
  double twist = 0;  ///< signed twist angle about twist_axis, radians in (−π, π]
};

/// Decomposes q = swing · twist about limit.twist_axis and returns the swing rotation vector's
/// components and the twist angle (hemisphere-normalized, so q and −q give the same answer).
SwingTwistAngles measure(const SwingTwistLimit& limit, const Quat& q);

/// Projects q into the allowed set: the twist angle is clamped with clamp_angle and the swing
/// is brought inside the cone, separately (swing and twist are treated as independent).
/// Circular cone: the swing axis is kept and the swing angle reduced to the half-angle — the
/// closest allowed swing. Elliptical cone: the swing rotation vector (u, v) goes to the closest
/// point of the ellipse in the (u, v) plane (exact to rounding, Eberly's bisection). That is the
/// closest allowed swing in the log-map (rotation-vector) metric, an approximation of the
/// geodesic-closest rotation: the two agree for a circle and differ slightly for an eccentric
/// ellipse at large angles. A zero half-angle clamps the other component to its range.
/// Returns normalize(q) unchanged when within(limit, q, 1e-12), so projection is idempotent.
Quat project(const SwingTwistLimit& limit, const Quat& q);

/// True when q's swing is inside the cone grown by `tolerance` radians on each half-angle and its
/// twist is in [twist_min − tolerance, twist_max + tolerance].
bool within(const SwingTwistLimit& limit, const Quat& q, double tolerance = 1e-9);

/// One limit of either kind (or none), for solvers that carry a span of per-joint limits.
struct JointLimit {
  enum class Kind : std::uint8_t { kNone, kHinge, kSwingTwist };
  Kind kind = Kind::kNone;
  HingeLimit hinge;             ///< used when kind == kHinge
  SwingTwistLimit swing_twist;  ///< used when kind == kSwingTwist

  static JointLimit none() { return {}; }
  static JointLimit of(const HingeLimit& h) { return {Kind::kHinge, h, {}}; }
  static JointLimit of(const SwingTwistLimit& s) { return {Kind::kSwingTwist, {}, s}; }
};

/// Dispatches to the kind's project (kNone returns q, normalized; non-finite q gives identity).
Quat project(const JointLimit& limit, const Quat& q);

/// Dispatches to the kind's within (kNone: always true).
bool within(const JointLimit& limit, const Quat& q, double tolerance = 1e-9);

}  // namespace kinema
