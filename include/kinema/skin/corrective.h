// kinema/skin/corrective.h — pose-driven corrective shapes and the inversion of a sculpted posed
// delta to a bind-space ("pre-skinning") delta (Lewis, Cordner & Fong, SIGGRAPH 2000).
//
// A corrective shape is a blend shape whose weight comes from a joint angle instead of an
// animator: w(θ) = clamp((θ − θ0) / (θ1 − θ0), 0, 1). Its deltas live in the bind space and are
// added before skinning, so skinning carries them with the bones:
//
//     v' = Σ_j w_j S_j (v + Σ_k w_k(θ) d_k)
//
// Use apply_correctives to write the corrected bind-space positions into a buffer, then skin that
// buffer with skin_lbs / skin_dqs (kinema/skin/skinning.h). Deltas may be dense (one per vertex)
// or sparse (a vertex index list and one delta per listed vertex).
//
// Reading an angle from a joint's local rotation q (unit quaternion, x y z w), about a unit axis a
// given in the joint's local (parent) frame — swing/twist decomposition q = swing · twist with
// twist a rotation about a:
//   - Hinge: the signed twist angle about a, 2·atan2(q.vec·a, q.w) wrapped to (−π, π]. For a
//     pure rotation about a this is that rotation's angle (an elbow bent 90° about a reads π/2).
//   - Swing: the unsigned angle of the swing part, in [0, π]: how far a is tilted away from
//     itself, whatever the twist about it (a shoulder raised 60° reads π/3 about any twist).
//   - Total: the unsigned angle of the whole rotation, in [0, π].
// Angles are radians; q and −q give the same angle.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kinema/math/quat.h"
#include "kinema/math/vec3.h"
#include "kinema/skin/skinning.h"

namespace kinema {

/// How a driver reads an angle from a joint's local rotation (see the file comment).
enum class DriverAngle { Hinge, Swing, Total };

/// The angle (radians) of `local_rotation` read as `kind` about the unit `axis` (ignored for
/// Total). Returns 0 when the rotation is not finite or zero.
float driver_angle(const Quatf& local_rotation, DriverAngle kind, const Vec3f& axis);

/// The driver ramp w(θ) = clamp((θ − θ0) / (θ1 − θ0), 0, 1). θ1 < θ0 gives a falling ramp (full
/// below θ1). θ0 == θ1 or a NaN gives 0 (a step is not a ramp; builders reject it).
float driver_ramp(float theta, float theta0, float theta1);

/// A corrective shape driven by one joint's angle.
struct CorrectiveShape {
  std::string name;
  int joint = -1;  ///< index into the local rotations given at runtime
  DriverAngle angle = DriverAngle::Hinge;
  Vec3f axis{1, 0, 0};           ///< unit axis in the joint's local frame
  float theta0 = 0, theta1 = 1;  ///< radians; weight 0 at θ0, 1 at θ1
  /// Empty: `deltas` is dense (one per vertex). Else the vertices `deltas` moves (same count).
  std::vector<uint32_t> vertices;
  std::vector<Vec3f> deltas;  ///< bind space, metres
};

/// Checks a set of corrective shapes once (offline): a joint inside [0, joint_count), a unit
/// axis (within 1e-3) for Hinge/Swing, finite θ0 ≠ θ1, dense deltas of exactly `vertex_count`
/// or sparse vertices in range with as many deltas, finite deltas. Throws kinema::Error naming
/// the shape (`file` may be empty).
void validate_correctives(std::span<const CorrectiveShape> shapes, size_t vertex_count,
                          size_t joint_count, const std::string& file = {});

/// Runtime: the weight of every shape from the joints' local rotations. Returns false (writing
/// nothing) when `weights` does not have one entry per shape or a shape's joint is outside
/// `local_rotations`. Never allocates.
bool corrective_weights(std::span<const CorrectiveShape> shapes,
                        std::span<const Quatf> local_rotations, std::span<float> weights);

/// Runtime: out[v] = bind[v] + Σ_k weights[k] · d_k[v] (shapes with weight 0 are skipped).
/// `out` may be `bind` itself only when they are the same span (in place). Returns false (nothing
/// written) when sizes do not match, a weight is not finite, or a sparse vertex is out of range.
/// Never allocates.
bool apply_correctives(std::span<const Vec3f> bind, std::span<const CorrectiveShape> shapes,
                       std::span<const float> weights, std::span<Vec3f> out);

/// Options for invert_posed_sculpt.
struct CorrectiveInversionOptions {
  /// A vertex whose blended 3×3 part A has a smallest singular value below this (relative to
  /// max(1, largest)) is singular: A cannot be inverted there (e.g. an elbow at 180° under LBS).
  double min_singular_value = 1e-6;
  /// Throw kinema::Error at the first singular vertex instead of skipping it.
  bool throw_on_singular = false;
  /// Posed differences shorter than this (metres) are treated as no sculpt (delta 0, not listed
  /// in the sparse result).
  double ignore_below = 1e-7;
};

/// What invert_posed_sculpt found.
struct CorrectiveInversion {
  std::vector<Vec3f> deltas;              ///< dense, one per vertex (0 where skipped or unsculpted)
  std::vector<uint32_t> sparse_vertices;  ///< the vertices with a non-zero delta
  std::vector<Vec3f> sparse_deltas;       ///< their deltas
  std::vector<uint32_t> singular_vertices;  ///< sculpted vertices skipped (A singular)
  double max_residual = 0;  ///< largest |A·d − (sculpt − skinned)| over the solved vertices, m
};

/// Offline: turns a sculpt made on the posed (LBS-skinned) mesh into bind-space deltas. Per vertex
/// d = A⁻¹ · (sculpted_posed − skinned), with skinned = LBS of mesh.positions by `palette` and A
/// the blended linear part Σ_j w_j S_j. Exact for LBS (skinning is affine in the bind position):
/// skinning mesh.positions + d with the same palette lands on the sculpt. Throws kinema::Error on
/// mismatched sizes, non-finite sculpt positions, a mesh check_skin_mesh rejects, or (when
/// asked) a singular vertex; otherwise singular vertices are skipped and listed.
CorrectiveInversion invert_posed_sculpt(const SkinMeshView& mesh,
                                        std::span<const Affine3x4f> palette,
                                        std::span<const Vec3f> sculpted_posed,
                                        const CorrectiveInversionOptions& options = {});

}  // namespace kinema
