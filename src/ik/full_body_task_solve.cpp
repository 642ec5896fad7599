// The full-body solver's task-space solve: damped least squares on the Gram matrix of a few
// dozen rows at most (adaptive damping from the smallest singular value, a Cholesky solve, the
// eigen decomposition when undamped and singular) and the orthonormal basis of the kHigh rows
// that the kNormal rows are projected away from. See full_body_internal.h.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "full_body_internal.h"

namespace kinema {

// The damping λ² for rows whose Gram matrix is gram(0:m, 0:m): `lambda` while the smallest
// non-zero singular value σ of the rows is at least the threshold, growing towards
// `lambda_max` as σ falls to zero (eigenvalues below 1e-12 of the largest count as zero).
double FullBodySolver::Impl::damping(int m, const FullBodySettings& s) {
  const double floor2 = s.lambda * s.lambda;
  const double threshold2 = s.singular_threshold * s.singular_threshold;
  if (!(s.singular_threshold > 0) || !(s.lambda_max > s.lambda)) return floor2;
  // Every eigenvalue above the threshold (G − threshold²·I is positive definite): no growth,
  // and no eigenvalues to compute.
  if (cholesky(m, -threshold2)) return floor2;
  // Otherwise the smallest eigenvalue above the floor, by bisection on Sturm counts of the
  // tridiagonal form (the damping is linear in it: 2⁻³² of threshold² is plenty).
  tridiagonal.compute(gram.topLeftCorner(m, m));
  std::array<double, kMaxRows> d{}, e2{};
  double upper = 0, largest_e2 = 0;  // Gershgorin bound of the largest eigenvalue
  for (int i = 0; i < m; ++i) {
    d[static_cast<std::size_t>(i)] = tridiagonal.diagonal()(i);
    const double left = i > 0 ? std::abs(tridiagonal.subDiagonal()(i - 1)) : 0.0;
    const double right = i + 1 < m ? std::abs(tridiagonal.subDiagonal()(i)) : 0.0;
    if (i + 1 < m) {
      e2[static_cast<std::size_t>(i)] = right * right;
      largest_e2 = std::max(largest_e2, right * right);
    }
    upper = std::max(upper, d[static_cast<std::size_t>(i)] + left + right);
  }
  const double pivot_min = std::numeric_limits<double>::min() * std::max(1.0, largest_e2);
  auto count_below = [&](double x) {  // eigenvalues below x
    int count = 0;
    double q = 1;
    for (std::size_t i = 0; i < static_cast<std::size_t>(m); ++i) {
      q = d[i] - x - (i > 0 ? e2[i - 1] / q : 0.0);
      if (std::abs(q) < pivot_min) q = -pivot_min;
      if (q < 0) ++count;
    }
    return count;
  };
  const double mu_floor = 1e-12 * upper;
  const int zero = count_below(mu_floor);
  const double grown2 = s.lambda_max * s.lambda_max;
  if (!(upper > 0) || zero >= m) return std::max(floor2, grown2);  // no rows: σ = 0
  if (count_below(threshold2) <= zero) return floor2;
  double lo = mu_floor, hi = threshold2;
  for (int k = 0; k < 32; ++k) {
    const double mid = 0.5 * (lo + hi);
    (count_below(mid) > zero ? hi : lo) = mid;
  }
  const double mu = 0.5 * (lo + hi);  // σ_min²
  return std::max(floor2, grown2 * (1 - mu / threshold2));
}

// Cholesky factor L (lower, row-major in `factor`) of gram(0:m, 0:m) + shift·I; false when
// that matrix is not numerically positive definite.
bool FullBodySolver::Impl::cholesky(int m, double shift) {
  for (int j = 0; j < m; ++j) {
    double* lj = &factor[static_cast<std::size_t>(j) * kMaxRows];
    double d = gram(j, j) + shift;
    for (int k = 0; k < j; ++k) d -= lj[k] * lj[k];
    if (!(d > 0)) return false;
    const double ljj = std::sqrt(d);
    lj[j] = ljj;
    for (int i = j + 1; i < m; ++i) {
      double* li = &factor[static_cast<std::size_t>(i) * kMaxRows];
      double v = gram(i, j);
      for (int k = 0; k < j; ++k) v -= li[k] * lj[k];
      li[j] = v / ljj;
    }
  }
  return true;
}

// x = (gram(0:m, 0:m) + λ²I)⁻¹ x, by Cholesky; the damping λ² comes from damping().
void FullBodySolver::Impl::damped_solve(int m, const FullBodySettings& s, TaskVector& x) {
  const double lambda2 = damping(m, s);
  if (lambda2 > 0 && cholesky(m, lambda2)) {
    for (int i = 0; i < m; ++i) {  // L y = x
      const double* li = &factor[static_cast<std::size_t>(i) * kMaxRows];
      double v = x(i);
      for (int k = 0; k < i; ++k) v -= li[k] * x(k);
      x(i) = v / li[i];
    }
    for (int i = m; i-- > 0;) {  // Lᵀ x = y
      double v = x(i);
      for (int k = i + 1; k < m; ++k)
        v -= factor[static_cast<std::size_t>(k) * kMaxRows + i] * x(k);
      x(i) = v / factor[static_cast<std::size_t>(i) * kMaxRows + i];
    }
    return;
  }
  // No damping and a singular matrix: the eigen decomposition, zero eigenvalues dropped.
  eigen.compute(gram.topLeftCorner(m, m));
  const auto& mu = eigen.eigenvalues();
  const auto& v = eigen.eigenvectors();
  scratch_rows.resize(m);
  scratch_rows.noalias() = v.transpose().lazyProduct(x.head(m));
  for (int k = 0; k < m; ++k) {
    const double d = std::max(0.0, mu(k)) + lambda2;
    scratch_rows(k) *= d > 0 ? 1.0 / d : 0.0;
  }
  x.head(m).noalias() = v.lazyProduct(scratch_rows);
}

// basis(0:r) = an orthonormal basis of the row space of a(0:m) (Gram–Schmidt, a row whose
// part left outside the others' span has a squared norm below 1e-12 of the largest row's
// counting as dependent); returns r.
int FullBodySolver::Impl::orthonormal_rows(const JacobianMatrix& a, int m) {
  double scale = 0;
  for (int i = 0; i < m; ++i) scale = std::max(scale, a.row(i).squaredNorm());
  const double floor = 1e-12 * scale;
  int r = 0;
  for (int i = 0; i < m; ++i) {
    auto v = basis.row(r);
    v = a.row(i);
    double before = v.squaredNorm();
    double after = before;
    // Twice is enough: orthogonalize again when most of the row cancelled.
    for (int pass = 0; pass < 2 && r > 0; ++pass) {
      for (int k = 0; k < r; ++k) v -= v.dot(basis.row(k)) * basis.row(k);
      after = v.squaredNorm();
      if (after > 0.25 * before) break;
      before = after;
    }
    if (!(after > floor)) continue;
    v /= std::sqrt(after);
    ++r;
  }
  return r;
}

}  // namespace kinema
