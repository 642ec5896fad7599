// Pose-space deformation: RBF interpolation over example poses (Lewis et al. 2000).
#include "kinema/skin/psd.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <string>

#include "kinema/core/error.h"

namespace kinema {
namespace {

double kernel_value(RbfKernel kernel, double r, double sigma) {
  const double x = r / sigma;
  switch (kernel) {
    case RbfKernel::Gaussian:
      return std::exp(-x * x);
    case RbfKernel::InverseQuadratic:
      return 1.0 / (1.0 + x * x);
  }
  return 0;
}

Quat quat_at(std::span<const float> pose, size_t k) {
  return Quat{pose[4 * k], pose[4 * k + 1], pose[4 * k + 2], pose[4 * k + 3]};
}

double pose_distance(PoseMetric metric, size_t dims, std::span<const float> a,
                     std::span<const float> b) {
  double sum = 0;
  if (metric == PoseMetric::Euclidean) {
    for (size_t d = 0; d < dims; ++d) {
      const double x = double(a[d]) - double(b[d]);
      sum += x * x;
    }
  } else {
    for (size_t k = 0; k < dims; ++k) {
      const double angle = angle_between(quat_at(a, k), quat_at(b, k));
      sum += angle * angle;
    }
  }
  return std::sqrt(sum);
}

// x(θ) of the linear term: the floats themselves, or each quaternion's rotation vector.
template <class Out>
void features_of(PoseMetric metric, size_t dims, std::span<const float> pose, Out&& out) {
  if (metric == PoseMetric::Euclidean) {
    for (size_t d = 0; d < dims; ++d) out(d, double(pose[d]));
  } else {
    for (size_t k = 0; k < dims; ++k) {
      const Vec3 r = to_rotation_vector(quat_at(pose, k));
      out(3 * k, r.x);
      out(3 * k + 1, r.y);
      out(3 * k + 2, r.z);
    }
  }
}

bool pose_ok(PoseMetric metric, size_t dims, std::span<const float> pose) {
  for (float x : pose)
    if (!std::isfinite(x)) return false;
  if (metric == PoseMetric::Quaternion)
    for (size_t k = 0; k < dims; ++k) {
      const Quat q = quat_at(pose, k);
      if (!(dot(q, q) > 1e-12)) return false;
    }
  return true;
}

constexpr const char* kPlace = "RBF";

// Checks the settings and the examples (n poses of `ps` floats, n × outputs values, all finite).
// Returns n.
size_t check_examples(size_t dimensions, size_t ps, std::span<const float> example_poses,
                      std::span<const float> example_values, size_t outputs,
                      const RbfSettings& settings) {
  if (dimensions == 0) throw Error({}, kPlace, "poses have 0 dimensions");
  if (outputs == 0) throw Error({}, kPlace, "examples have 0 output values");
  if (!(settings.sigma > 0) || !std::isfinite(settings.sigma))
    throw Error({}, kPlace, "kernel width σ must be positive and finite");
  if (!(settings.regularization >= 0) || !std::isfinite(settings.regularization))
    throw Error({}, kPlace, "regularization must be ≥ 0 and finite");
  if (example_poses.empty()) throw Error({}, kPlace, "no example poses");
  if (example_poses.size() % ps != 0)
    throw Error({}, kPlace,
                std::to_string(example_poses.size()) + " pose floats is not a multiple of " +
                    std::to_string(ps) + " per pose");
  const size_t n = example_poses.size() / ps;
  if (example_values.size() != n * outputs)
    throw Error({}, kPlace,
                std::to_string(example_values.size()) + " example values for " + std::to_string(n) +
                    " examples × " + std::to_string(outputs) + " outputs");
  for (size_t i = 0; i < n; ++i) {
    const auto pose = example_poses.subspan(i * ps, ps);
    if (!pose_ok(settings.metric, dimensions, pose))
      throw Error({}, "example " + std::to_string(i),
                  settings.metric == PoseMetric::Quaternion
                      ? "pose is NaN, infinite or has a zero quaternion"
                      : "pose is NaN or infinite");
    for (size_t o = 0; o < outputs; ++o)
      if (!std::isfinite(example_values[i * outputs + o]))
        throw Error({}, "example " + std::to_string(i),
                    "value " + std::to_string(o) + " is NaN or infinite");
  }
  return n;
}

// The distances between the n example poses. Coincident centres make two identical rows: without
// regularization, say which, rather than "singular".
Eigen::MatrixXd example_distances(size_t dimensions, size_t n, size_t ps,
                                  std::span<const float> example_poses,
                                  const RbfSettings& settings) {
  Eigen::MatrixXd dist(n, n);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j <= i; ++j) {
      const double d = pose_distance(settings.metric, dimensions, example_poses.subspan(i * ps, ps),
                                     example_poses.subspan(j * ps, ps));
      dist(Eigen::Index(i), Eigen::Index(j)) = dist(Eigen::Index(j), Eigen::Index(i)) = d;
      if (j < i && d <= 1e-9 * settings.sigma && settings.regularization == 0)
        throw Error({}, "examples " + std::to_string(j) + " and " + std::to_string(i),
                    "the same pose twice (duplicate RBF centres make the system singular)");
    }
  return dist;
}

// The system matrix: the kernel values Φ (+ the ridge on the diagonal) and, with the linear term
// (lin = features + 1 > 0), the saddle-point border [1, x(θ_i)] on the right and below.
Eigen::MatrixXd rbf_matrix(const Eigen::MatrixXd& dist, size_t dimensions, size_t ps, size_t lin,
                           std::span<const float> example_poses, const RbfSettings& settings) {
  const size_t n = size_t(dist.rows());
  const Eigen::Index m = Eigen::Index(n + lin);
  Eigen::MatrixXd a = Eigen::MatrixXd::Zero(m, m);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j)
      a(Eigen::Index(i), Eigen::Index(j)) =
          kernel_value(settings.kernel, dist(Eigen::Index(i), Eigen::Index(j)), settings.sigma) +
          (i == j ? settings.regularization : 0.0);
  if (lin > 0)
    for (size_t i = 0; i < n; ++i) {
      const auto ii = Eigen::Index(i);
      a(ii, Eigen::Index(n)) = a(Eigen::Index(n), ii) = 1.0;
      features_of(settings.metric, dimensions, example_poses.subspan(i * ps, ps),
                  [&](size_t d, double x) {
                    const auto col = Eigen::Index(n + 1 + d);
                    a(ii, col) = a(col, ii) = x;
                  });
    }
  return a;
}

// Solves a x = rhs, refusing an ill-conditioned system (rcond: the reciprocal condition number
// estimate it was judged by).
Eigen::MatrixXd solve_rbf(const Eigen::MatrixXd& a, const Eigen::MatrixXd& rhs, size_t lin,
                          const RbfSettings& settings, double& rcond) {
  Eigen::MatrixXd x;
  if (lin == 0) {
    // Φ (+ ridge) is symmetric positive definite for distinct centres: LDLᵀ.
    Eigen::LDLT<Eigen::MatrixXd> ldlt(a);
    rcond = ldlt.info() == Eigen::Success ? ldlt.rcond() : 0.0;
    if (!(rcond >= settings.min_rcond) || !ldlt.isPositive())
      throw Error({}, kPlace,
                  "the kernel matrix is singular or ill-conditioned (reciprocal condition " +
                      std::to_string(rcond) +
                      "): examples too close for σ = " + std::to_string(settings.sigma) +
                      "; use a smaller σ, drop near-duplicate examples or add regularization");
    x = ldlt.solve(rhs);
  } else {
    // The saddle-point system is indefinite: LU with full pivoting (rank-revealing).
    Eigen::FullPivLU<Eigen::MatrixXd> lu(a);
    const Eigen::PartialPivLU<Eigen::MatrixXd> plu(a);
    rcond = lu.isInvertible() ? plu.rcond() : 0.0;
    if (!(rcond >= settings.min_rcond))
      throw Error({}, kPlace,
                  "the RBF system with the linear term is singular or ill-conditioned "
                  "(reciprocal condition " +
                      std::to_string(rcond) +
                      "): the example poses do not span the pose features (need " +
                      std::to_string(lin) + " in general position) or are too close");
    x = lu.solve(rhs);
  }
  if (!x.allFinite())
    throw Error({}, kPlace, "the RBF solve produced NaN or infinite coefficients");
  return x;
}

}  // namespace

size_t RbfInterpolator::pose_size() const {
  return settings_.metric == PoseMetric::Quaternion ? 4 * dimensions_ : dimensions_;
}

size_t RbfInterpolator::feature_count() const {
  if (!settings_.linear_term) return 0;
  return settings_.metric == PoseMetric::Quaternion ? 3 * dimensions_ : dimensions_;
}

double RbfInterpolator::distance(std::span<const float> a, std::span<const float> b) const {
  return pose_distance(settings_.metric, dimensions_, a, b);
}

RbfInterpolator RbfInterpolator::build(size_t dimensions, std::span<const float> example_poses,
                                       std::span<const float> example_values, size_t outputs,
                                       const RbfSettings& settings) {
  RbfInterpolator r;
  r.dimensions_ = dimensions;
  r.outputs_ = outputs;
  r.settings_ = settings;
  const size_t ps = r.pose_size();
  const size_t n = check_examples(dimensions, ps, example_poses, example_values, outputs, settings);
  r.examples_ = n;
  const Eigen::MatrixXd dist = example_distances(dimensions, n, ps, example_poses, settings);
  const size_t lin = settings.linear_term ? r.feature_count() + 1 : 0;
  if (settings.linear_term && n < lin)
    throw Error({}, kPlace,
                "the linear term needs at least " + std::to_string(lin) + " examples (" +
                    std::to_string(n) + " given)");
  const Eigen::MatrixXd a = rbf_matrix(dist, dimensions, ps, lin, example_poses, settings);
  Eigen::MatrixXd rhs = Eigen::MatrixXd::Zero(a.rows(), Eigen::Index(outputs));
  for (size_t i = 0; i < n; ++i)
    for (size_t o = 0; o < outputs; ++o)
      rhs(Eigen::Index(i), Eigen::Index(o)) = example_values[i * outputs + o];
  const Eigen::MatrixXd x = solve_rbf(a, rhs, lin, settings, r.rcond_);

  r.poses_.assign(example_poses.begin(), example_poses.end());
  r.coefficients_.resize(n * outputs);
  for (size_t i = 0; i < n; ++i)
    for (size_t o = 0; o < outputs; ++o)
      r.coefficients_[i * outputs + o] = float(x(Eigen::Index(i), Eigen::Index(o)));
  if (lin > 0) {
    r.linear_.resize(lin * outputs);
    for (size_t d = 0; d < lin; ++d)
      for (size_t o = 0; o < outputs; ++o)
        r.linear_[d * outputs + o] = float(x(Eigen::Index(n + d), Eigen::Index(o)));
  }
  return r;
}

template <class Accumulate>
bool RbfInterpolator::evaluate_impl(std::span<const float> pose, size_t out_size,
                                    Accumulate&& add) const {
  if (examples_ == 0 || pose.size() != pose_size() || out_size != outputs_) return false;
  if (!pose_ok(settings_.metric, dimensions_, pose)) return false;
  const size_t ps = pose_size();
  const std::span<const float> poses(poses_);
  for (size_t i = 0; i < examples_; ++i) {
    const double r = pose_distance(settings_.metric, dimensions_, pose, poses.subspan(i * ps, ps));
    const float phi = float(kernel_value(settings_.kernel, r, settings_.sigma));
    add(phi, &coefficients_[i * outputs_]);
  }
  if (!linear_.empty()) {
    add(1.0f, &linear_[0]);
    features_of(settings_.metric, dimensions_, pose,
                [&](size_t d, double x) { add(float(x), &linear_[(d + 1) * outputs_]); });
  }
  return true;
}

bool RbfInterpolator::evaluate_add(std::span<const float> pose, std::span<float> out) const {
  const size_t m = outputs_;
  return evaluate_impl(pose, out.size(), [&](float s, const float* c) {
    if (s == 0) return;
    for (size_t o = 0; o < m; ++o) out[o] += s * c[o];
  });
}

bool RbfInterpolator::evaluate_add(std::span<const float> pose, std::span<Vec3f> out) const {
  const size_t n = out.size();
  return evaluate_impl(pose, 3 * n, [&](float s, const float* c) {
    if (s == 0) return;
    for (size_t v = 0; v < n; ++v) out[v] += Vec3f{c[3 * v], c[3 * v + 1], c[3 * v + 2]} * s;
  });
}

bool RbfInterpolator::evaluate(std::span<const float> pose, std::span<float> out) const {
  if (examples_ == 0 || pose.size() != pose_size() || out.size() != outputs_ ||
      !pose_ok(settings_.metric, dimensions_, pose))
    return false;
  std::fill(out.begin(), out.end(), 0.0f);
  return evaluate_add(pose, out);
}

bool pose_from_rotations(std::span<const Quatf> local_rotations, std::span<const int> joints,
                         std::span<float> pose) {
  if (pose.size() != 4 * joints.size()) return false;
  for (int j : joints)
    if (j < 0 || static_cast<size_t>(j) >= local_rotations.size()) return false;
  for (size_t k = 0; k < joints.size(); ++k) {
    const Quatf& q = local_rotations[static_cast<size_t>(joints[k])];
    pose[4 * k] = q.x;
    pose[4 * k + 1] = q.y;
    pose[4 * k + 2] = q.z;
    pose[4 * k + 3] = q.w;
  }
  return true;
}

}  // namespace kinema
