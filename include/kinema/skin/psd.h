// kinema/skin/psd.h — pose-space deformation (Lewis, Cordner, Fong, SIGGRAPH 2000) with radial
// basis function (RBF) interpolation.
//
// An artist sculpts a correction at a few example poses θ_i; between them the correction is
//
//     f(θ) = Σ_i a_i φ(‖θ − θ_i‖)   [+ b_0 + Σ_d b_d x_d(θ)   with the optional linear term]
//
// with the coefficients chosen so that f passes exactly through every example's value. The
// values may be one scalar (a corrective weight) or whole delta fields (N vertices × 3 floats per
// example): every output component is interpolated with the same kernel matrix.
//
// Kernels: Gaussian φ(r) = exp(−(r/σ)²), inverse quadratic φ(r) = 1 / (1 + (r/σ)²).
// Both give a positive definite kernel matrix for distinct examples. Far from every example a pure
// RBF falls back to 0 (the classic pitfall: an elbow bent past its last example loses its
// correction); the linear term makes f extrapolate linearly instead. With the linear term the
// system is the usual saddle point [Φ P; Pᵀ 0][a; b] = [y; 0] with P = [1 x(θ_i)], which needs
// at least (features + 1) examples in general position.
//
// Pose metrics (a pose is a span of floats):
//   - Euclidean: a pose is `dimensions` floats (joint angles in radians, or any features); the
//     distance is the Euclidean norm; the linear term uses the floats themselves.
//   - Quaternion: a pose is `dimensions` unit quaternions, 4 floats each (x y z w); the distance
//     is sqrt(Σ_k α_k²) with α_k = 2·acos(min(1, |q_k · p_k|)) ∈ [0, π] the angle between the
//     two rotations (|dot| because q and −q are the same rotation; computed with atan2 on the
//     relative rotation, which stays precise near 0); the linear term uses each
//     quaternion's rotation vector (log map, hemisphere w ≥ 0), 3 floats per quaternion.
//
// Building (RbfInterpolator::build) is offline: it throws kinema::Error on bad input (NaN,
// mismatched sizes, no examples, coincident example poses, a singular or hopelessly
// ill-conditioned system). Evaluation is runtime: no allocation, no throw, false on a size
// mismatch or a non-finite pose.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "kinema/math/quat.h"
#include "kinema/math/vec3.h"

namespace kinema {

enum class RbfKernel { Gaussian, InverseQuadratic };
enum class PoseMetric { Euclidean, Quaternion };

struct RbfSettings {
  RbfKernel kernel = RbfKernel::Gaussian;
  /// Kernel width σ, in the metric's unit (radians for joint angles and quaternion distance).
  double sigma = 1.0;
  PoseMetric metric = PoseMetric::Euclidean;
  bool linear_term = false;
  /// Added to the kernel matrix's diagonal (ridge): 0 interpolates exactly, > 0 smooths.
  double regularization = 0;
  /// Systems whose reciprocal condition number (LU estimate) is below this are rejected.
  double min_rcond = 1e-13;
};

class RbfInterpolator {
 public:
  RbfInterpolator() = default;

  /// Builds the interpolator. `dimensions`: pose dimensions (angles for Euclidean, quaternions
  /// for Quaternion). `example_poses`: examples × pose_size() floats, row by row.
  /// `example_values`: examples × `outputs` floats, row by row. Throws kinema::Error (naming the
  /// example or the pair of coincident examples) on bad input; see the file comment.
  static RbfInterpolator build(size_t dimensions, std::span<const float> example_poses,
                               std::span<const float> example_values, size_t outputs,
                               const RbfSettings& settings);

  /// Runtime: out = f(pose). `pose`: pose_size() floats; `out`: output_size() floats. Returns
  /// false (nothing written) on a size mismatch, a non-finite pose or an unbuilt interpolator.
  /// Never allocates.
  bool evaluate(std::span<const float> pose, std::span<float> out) const;
  /// Runtime: out += f(pose) (same rules). Adding a delta field to positions: give the
  /// positions as Vec3f (output_size() must be 3 × positions).
  bool evaluate_add(std::span<const float> pose, std::span<float> out) const;
  bool evaluate_add(std::span<const float> pose, std::span<Vec3f> out) const;

  /// The distance between two poses under this interpolator's metric (no checks).
  double distance(std::span<const float> a, std::span<const float> b) const;

  size_t example_count() const { return examples_; }
  size_t dimensions() const { return dimensions_; }
  size_t pose_size() const;      ///< floats per pose
  size_t feature_count() const;  ///< floats of the linear term's x(θ) (0 without linear term)
  size_t output_size() const { return outputs_; }
  const RbfSettings& settings() const { return settings_; }
  /// Reciprocal condition number estimate of the solved system (1 is perfect, ~1e-16 singular).
  double rcond() const { return rcond_; }
  /// RBF coefficient a_i of output o.
  float coefficient(size_t example, size_t output) const {
    return coefficients_[example * outputs_ + output];
  }
  /// Linear-term coefficient b_0 (feature 0, constant) … b_F of output o; empty without the term.
  float linear_coefficient(size_t feature, size_t output) const {
    return linear_[feature * outputs_ + output];
  }

 private:
  template <class Accumulate>
  bool evaluate_impl(std::span<const float> pose, size_t out_size, Accumulate&& add) const;

  size_t dimensions_ = 0, examples_ = 0, outputs_ = 0;
  RbfSettings settings_;
  double rcond_ = 0;
  std::vector<float> poses_;         ///< examples × pose_size()
  std::vector<float> coefficients_;  ///< examples × outputs
  std::vector<float> linear_;        ///< (features + 1) × outputs, or empty
};

/// Runtime helper: the pose of a Quaternion-metric interpolator from the local rotations of the
/// given joints (4 floats per joint, x y z w). Returns false on a size mismatch or a joint
/// outside `local_rotations`.
bool pose_from_rotations(std::span<const Quatf> local_rotations, std::span<const int> joints,
                         std::span<float> pose);

}  // namespace kinema
