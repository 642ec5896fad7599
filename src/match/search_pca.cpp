// src/match/search_pca.cpp — the principal axes BoundedTreeSearch bounds its boxes in, and the
// slack that keeps those bounds below the float costs (search_internal.h).
//
// Error analysis (u = 2^-24, float rounding; costs as search_kernels.h computes them). For a
// frame x, a query q, the float centre c and the kept float rows R (K × n, n = dims):
//  1. The computed cost C(x) ≥ ‖x − q‖² (1 − γ), γ = (n + 6) u: one rounding per difference,
//     square and addition along each of the four accumulator chains and the final combination.
//  2. R is not exactly orthonormal once rounded. With G = R Rᵀ = I + E, g = ‖E‖_F (computed in
//     double), and for any v, a = RᵀR v and b = v − a: ‖a‖² ≥ (1 − g) ‖R v‖², |a·b| ≤ g ‖R v‖²,
//     so ‖v‖² ≥ (1 − 3g)(‖R v‖² + ‖b‖²). b is linear in v, so ‖b(x − q)‖ ≥ |r_x − r_q| with
//     r = ‖b(· − c)‖, the residual coordinate (kept when K < n; with K = n it is left out, the
//     bound is then (1 − 3g) ‖R v‖² alone, still a lower bound).
//  3. A box holds the double coordinates of its frames, rounded outward to float; they differ
//     from the exact (R (x − c), r_x) by at most about (n + K + 4) 2^-53 ‖x − c‖ per coordinate
//     (products of two floats are exact in double; n + K further operations). The query's
//     coordinates are computed the same way and rounded to nearest float: at most u |q̃ᵢ| more.
//     So the distance from the box to the exact query coordinates is at least the distance D
//     from the box to the float ones minus
//       δ = 2u ‖q̃‖ + 4 (√(K + 1) + 1)(n + K + 4) 2^-52 (‖q − c‖ + X),
//     X = max over frames of ‖x − c‖ (both terms with a factor 2 or more to spare).
//  4. The computed bound B ≤ D² (1 + (K + 7) u)²: one rounding per term's difference, square
//     and sum, K + 1 terms along four chains.
// Hence ‖x − q‖ ≥ √(1 − 3g) (√B / (1 + (K + 7) u) − δ), and B > t with
//   √t = (√best / √((1 − 3g)(1 − γ)) + δ) · (1 + (K + 7) u) · (1 + 1e-6)
// gives ‖x − q‖² > best / (1 − γ), so C(x) > best: the frame cannot be the answer (nor tie with
// it). The final factor 1 + 1e-6 absorbs the double rounding of this formula with a wide margin;
// prune_threshold also adds the absolute errors of gradual underflow, and gives up (+inf) near
// overflow. On the real databases of BENCHMARKS.md (27 dims, all 27 axes kept, g ≈ 1e-7) √t
// exceeds √best by about 1e-6 relative plus 1e-6 absolute: the bound loses nothing measurable.
// (tests/match/search_test.cpp checks B ≤ t on one-frame and 8-frame boxes; a threshold 1e-4
// below t already fails it.)
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cfloat>
#include <cmath>

#include "search_internal.h"
#include "search_kernels.h"

namespace kinema::match::detail {

namespace {

constexpr double kU = 0x1p-24;
constexpr double kExtra = 1e-6;

}  // namespace

PcaBasis build_pca(const FeatureMatrix& m, std::span<const uint32_t> frames, size_t max_axes) {
  PcaBasis p;
  const size_t n = m.dims;
  p.dims = n;
  p.axes = std::min({n, max_axes, kMaxPcaAxes});
  p.centre.assign(n, 0.0f);
  Eigen::MatrixXd cov = Eigen::MatrixXd::Zero(long(n), long(n));
  if (!frames.empty()) {
    std::vector<double> mean(n, 0.0);
    for (const uint32_t f : frames)
      for (size_t d = 0; d < n; ++d) mean[d] += m.values[size_t(f) * n + d];
    for (size_t d = 0; d < n; ++d) p.centre[d] = float(mean[d] / double(frames.size()));
    std::vector<double> v(n);
    for (const uint32_t f : frames) {
      for (size_t d = 0; d < n; ++d) v[d] = double(m.values[size_t(f) * n + d]) - p.centre[d];
      for (size_t i = 0; i < n; ++i)
        for (size_t j = 0; j <= i; ++j) cov(long(i), long(j)) += v[i] * v[j];
    }
    for (size_t i = 0; i < n; ++i)
      for (size_t j = 0; j < i; ++j) cov(long(j), long(i)) = cov(long(i), long(j));
    p.mean_square = cov.trace() / double(frames.size());
    // Overflowing features (|x| near FLT_MAX) make an infinite covariance: any orthonormal
    // basis is as exact, the identity is one.
    if (!cov.allFinite()) cov.setZero();
  }
  // Eigenvalues in increasing order: the kept axes are the last columns, largest first.
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(cov);
  Eigen::MatrixXd vecs = Eigen::MatrixXd::Identity(long(n), long(n));
  if (eig.info() == Eigen::Success) vecs = eig.eigenvectors();
  // g = ‖R Rᵀ − I‖_F of the float rows R taken from `basis`.
  auto take_rows = [&](const Eigen::MatrixXd& basis) {
    p.rows.resize(p.axes * n);
    for (size_t i = 0; i < p.axes; ++i)
      for (size_t d = 0; d < n; ++d)
        p.rows[d * p.axes + i] = float(basis(long(d), long(n - 1 - i)));
    double g2 = 0;
    for (size_t i = 0; i < p.axes; ++i)
      for (size_t j = 0; j < p.axes; ++j) {
        double s = 0;
        for (size_t d = 0; d < n; ++d)
          s += double(p.rows[d * p.axes + i]) * double(p.rows[d * p.axes + j]);
        g2 += std::pow(s - (i == j ? 1.0 : 0.0), 2);
      }
    return std::sqrt(g2) + 1e-12;
  };
  double g = take_rows(vecs);
  // An inaccurate eigensolver (never seen: g is about 1e-7 in float) would only loosen the
  // bounds; past 1e-3 the identity (exactly orthonormal in float) bounds better.
  if (!(g < 1e-3)) g = take_rows(Eigen::MatrixXd::Identity(long(n), long(n)));
  const double gamma = double(n + 6) * kU;
  p.rel = 1 / std::sqrt((1 - 3 * g) * (1 - gamma)) - 1;
  for (const uint32_t f : frames) {
    double s = 0;
    for (size_t d = 0; d < n; ++d)
      s += std::pow(double(m.values[size_t(f) * n + d]) - p.centre[d], 2);
    p.frame_extent = std::max(p.frame_extent, std::sqrt(s));
  }
  return p;
}

void pca_coords(const PcaBasis& p, const float* x, double* out) {
  const size_t n = p.dims, k = p.axes;
  for (size_t i = 0; i < k; ++i) {
    double s = 0;
    for (size_t d = 0; d < n; ++d) s += double(p.rows[d * k + i]) * (double(x[d]) - p.centre[d]);
    out[i] = s;
  }
  if (k == n) return;  // no residual
  double r2 = 0;
  for (size_t d = 0; d < n; ++d) {
    double b = double(x[d]) - p.centre[d];
    for (size_t i = 0; i < k; ++i) b -= double(p.rows[d * k + i]) * out[i];
    r2 += b * b;
  }
  out[k] = std::sqrt(r2);
}

double project_query(const PcaBasis& p, const float* q, float* out) {
  return project_query_with(p, q, out);
}

float prune_threshold(const PcaBasis& p, float best, double delta) {
  if (!(best < INFINITY)) return INFINITY;
  const double bound_err = 1 + double(p.axes + 7) * kU;
  // Gradual underflow: below FLT_MIN a rounding error is absolute, up to half of 2^-149 per
  // operation; the cost loses at most (n + 8) 2^-149, the bound gains at most (K + 9) 2^-149.
  const double cost_floor = double(p.dims + 8) * 0x1p-149;
  const double bound_floor = std::sqrt(double(p.coords() + 8) * 0x1p-149);
  const double s = (std::sqrt(double(best) + cost_floor) * (1 + p.rel) + delta + bound_floor) *
                   bound_err * (1 + kExtra);
  const double t = s * s;
  // Near overflow the relative analysis does not hold (a sum that overflows is +inf): no pruning.
  if (t > 0.5 * double(FLT_MAX)) return INFINITY;
  float f = float(t);
  if (double(f) < t) f = std::nextafter(f, INFINITY);
  return std::max(f, best);
}

}  // namespace kinema::match::detail

// Test helpers (tests/match/search_test.cpp): the search's own kernels on one frame / 8 boxes,
// compiled with the same flags.

namespace kinema::match::detail {

float frame_cost(const float* x, const float* q, size_t dims) {
  std::vector<float> block(dims * kLanes, 0.0f);
  for (size_t d = 0; d < dims; ++d) block[d * kLanes] = x[d];
  Acc acc;
  add_costs(block.data(), q, 0, dims, acc);
  alignas(32) float out[kLanes];
  total(acc, out);
  return out[0];
}

void box_bounds(const float* lo, const float* hi, const float* qp, size_t axes, float* out) {
  Acc acc;
  add_bounds(lo, hi, qp, 0, axes, acc);
  total(acc, out);
}

}  // namespace kinema::match::detail
