// Blendshape solve: box-constrained, optionally L1-penalized least squares by a primal
// active-set method with Cholesky solves of the free subproblem (see face_solve.h).
#include "kinema/skin/face_solve.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>

#include "kinema/core/error.h"

namespace kinema {

namespace {

enum class Bound : unsigned char { Free, Lower, Upper };

using Index = ptrdiff_t;

/// A column-major matrix in one vector.
struct Mat {
  Index rows = 0, cols = 0;
  std::vector<double> v;
  void resize(Index r, Index c) {
    rows = r;
    cols = c;
    v.assign(static_cast<size_t>(r * c), 0.0);
  }
  double& operator()(Index r, Index c) { return v[static_cast<size_t>(c * rows + r)]; }
  double operator()(Index r, Index c) const { return v[static_cast<size_t>(c * rows + r)]; }
  const double* col(Index c) const { return v.data() + c * rows; }
};

struct Vec {
  std::vector<double> v;
  void resize(Index n) { v.assign(static_cast<size_t>(n), 0.0); }
  double& operator()(Index i) { return v[static_cast<size_t>(i)]; }
  double operator()(Index i) const { return v[static_cast<size_t>(i)]; }
  Index size() const { return static_cast<Index>(v.size()); }
};

double dot(const double* a, const double* b, Index n) {
  double s = 0;
  for (Index i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

/// out = Aᵀ x (A column-major m × n, x m values).
void mul_transpose(const Mat& A, const Vec& x, Vec& out) {
  for (Index c = 0; c < A.cols; ++c) out(c) = dot(A.col(c), x.v.data(), A.rows);
}
/// out = A x (x n values, out m values).
void mul(const Mat& A, const Vec& x, Vec& out) {
  std::fill(out.v.begin(), out.v.end(), 0.0);
  for (Index c = 0; c < A.cols; ++c) {
    const double xc = x(c);
    if (xc == 0.0) continue;
    const double* a = A.col(c);
    for (Index r = 0; r < A.rows; ++r) out.v[static_cast<size_t>(r)] += a[r] * xc;
  }
}

}  // namespace

struct BlendshapeSolver::Impl {
  size_t m = 0, n = 0;
  BlendshapeSolveOptions options;
  Mat B;  // m × n (per-frame code uses plain loops: no Eigen temporaries, no allocation)
  Mat H;  // n × n: BᵀB + εI (Eigen forms BᵀB once at setup)
  std::vector<double> gram;  // BᵀB, row-major
  double scale = 1;          // max diag of BᵀB
  // Scratch (sized once).
  Vec d, g, w, r, z, rhs, resid;
  Mat L;  // Cholesky factor of H_FF (top-left |F|×|F| used)
  std::vector<int> free_idx;
  std::vector<Bound> state;
  bool have_previous = false;
  int max_iterations = 0;

  /// Cholesky of H_FF into L and solve for z_F (stored in z[0..f)); rhs in rhs[0..f).
  void solve_free(size_t f) {
    const double floor = 1e-14 * std::max(scale, 1e-300);
    for (size_t a = 0; a < f; ++a) {
      const Index ia = static_cast<Index>(a);
      const Index ga = free_idx[a];
      for (size_t b = 0; b <= a; ++b) {
        const Index ib = static_cast<Index>(b);
        double s = H(ga, free_idx[b]);
        for (Index k = 0; k < ib; ++k) s -= L(ia, k) * L(ib, k);
        if (a == b) {
          L(ia, ia) = std::sqrt(std::max(s, floor));
        } else {
          L(ia, ib) = s / L(ib, ib);
        }
      }
    }
    // Forward then backward substitution.
    for (size_t a = 0; a < f; ++a) {
      const Index ia = static_cast<Index>(a);
      double s = rhs(ia);
      for (Index k = 0; k < ia; ++k) s -= L(ia, k) * z(k);
      z(ia) = s / L(ia, ia);
    }
    for (size_t a = f; a-- > 0;) {
      const Index ia = static_cast<Index>(a);
      double s = z(ia);
      for (Index k = ia + 1; k < static_cast<Index>(f); ++k) s -= L(k, ia) * z(k);
      z(ia) = s / L(ia, ia);
    }
  }

  /// One solve from g (already Bᵀd − λ) into w; returns iterations and convergence.
  void run(int* iterations, bool* converged) {
    double gmax = 0;
    for (double x : g.v) gmax = std::max(gmax, std::fabs(x));
    const double tau = options.tolerance * std::max({1.0, scale, gmax});
    if (!have_previous || !options.warm_start) {
      std::fill(state.begin(), state.end(), Bound::Lower);
      std::fill(w.v.begin(), w.v.end(), 0.0);
    }
    int it = 0;
    bool ok = false;
    while (true) {
      size_t f = 0;
      for (size_t k = 0; k < n; ++k)
        if (state[k] == Bound::Free) free_idx[f++] = static_cast<int>(k);
      if (f > 0) {
        for (size_t a = 0; a < f; ++a) {
          const Index ga = free_idx[a];
          double s = g(ga);
          for (size_t k = 0; k < n; ++k)
            if (state[k] == Bound::Upper) s -= H(ga, static_cast<Index>(k));
          rhs(static_cast<Index>(a)) = s;
        }
        solve_free(f);
        // Largest feasible step from w_F toward z_F; `block` is the weight that stops it.
        double alpha = 1.0;
        size_t block = f;
        for (size_t a = 0; a < f; ++a) {
          const double wk = w(free_idx[a]), zk = z(static_cast<Index>(a));
          if (zk < 0.0 && wk / (wk - zk) < alpha) alpha = wk / (wk - zk), block = a;
          if (zk > 1.0 && (1.0 - wk) / (zk - wk) < alpha) alpha = (1.0 - wk) / (zk - wk), block = a;
        }
        alpha = std::clamp(alpha, 0.0, 1.0);
        for (size_t a = 0; a < f; ++a) {
          const Index ga = free_idx[a];
          const double zk = z(static_cast<Index>(a));
          const double v = block < f ? w(ga) + alpha * (zk - w(ga)) : zk;
          // Pin the blocking weight exactly, and any other that reached its bound too.
          if (block < f && zk < 0.0 && (a == block || v <= 1e-12)) {
            w(ga) = 0.0;
            state[static_cast<size_t>(ga)] = Bound::Lower;
          } else if (block < f && zk > 1.0 && (a == block || v >= 1.0 - 1e-12)) {
            w(ga) = 1.0;
            state[static_cast<size_t>(ga)] = Bound::Upper;
          } else {
            w(ga) = std::clamp(v, 0.0, 1.0);
          }
        }
        if (block < f) {
          if (++it > max_iterations) break;
          continue;
        }
      }
      for (size_t k = 0; k < n; ++k) {
        if (state[k] == Bound::Lower) w(static_cast<Index>(k)) = 0.0;
        if (state[k] == Bound::Upper) w(static_cast<Index>(k)) = 1.0;
      }
      // KKT on the bound variables: r = H w − g.
      mul(H, w, r);
      for (Index k = 0; k < r.size(); ++k) r(k) -= g(k);
      double worst = tau;
      size_t release = n;
      for (size_t k = 0; k < n; ++k) {
        const double rk = r(static_cast<Index>(k));
        const double violation = state[k] == Bound::Lower   ? -rk
                                 : state[k] == Bound::Upper ? rk
                                                            : 0.0;
        if (violation > worst) worst = violation, release = k;
      }
      if (release == n) {
        ok = true;
        break;
      }
      state[release] = Bound::Free;
      if (++it > max_iterations) break;
    }
    *iterations = it;
    *converged = ok;
    have_previous = ok;  // a failed solve does not seed the next one
  }
};

BlendshapeSolver::BlendshapeSolver(std::span<const float> basis, size_t rows, size_t cols,
                                   const BlendshapeSolveOptions& options)
    : impl_(std::make_unique<Impl>()) {
  const std::string place = "blendshape basis";
  if (rows == 0 || cols == 0)
    throw Error({}, place,
                "empty basis (" + std::to_string(rows) + " × " + std::to_string(cols) + ")");
  if (basis.size() != rows * cols)
    throw Error({}, place,
                std::to_string(basis.size()) + " values for " + std::to_string(rows) + " × " +
                    std::to_string(cols));
  if (!(options.sparsity >= 0) || !std::isfinite(options.sparsity))
    throw Error({}, "options", "sparsity must be finite and ≥ 0");
  if (!(options.ridge >= 0) || !std::isfinite(options.ridge))
    throw Error({}, "options", "ridge must be finite and ≥ 0");
  if (!(options.tolerance > 0) || !std::isfinite(options.tolerance))
    throw Error({}, "options", "tolerance must be finite and > 0");
  if (options.max_iterations < 0) throw Error({}, "options", "max_iterations must be ≥ 0");
  Impl& s = *impl_;
  s.m = rows;
  s.n = cols;
  s.options = options;
  const Index m = static_cast<Index>(rows), n = static_cast<Index>(cols);
  s.B.resize(m, n);
  for (Index c = 0; c < n; ++c) {
    bool nonzero = false;
    for (Index r = 0; r < m; ++r) {
      const float v = basis[static_cast<size_t>(c * m + r)];
      if (!std::isfinite(v))
        throw Error({}, place + ", row " + std::to_string(r) + ", column " + std::to_string(c),
                    "value is not finite");
      nonzero = nonzero || v != 0.0f;
      s.B(r, c) = v;
    }
    if (!nonzero)
      throw Error({}, place + ", column " + std::to_string(c),
                  "the column is all zeros (the shape moves none of the tracked points)");
  }
  s.H.resize(n, n);
  {
    const Eigen::Map<const Eigen::MatrixXd> b(s.B.v.data(), m, n);
    Eigen::Map<Eigen::MatrixXd> h(s.H.v.data(), n, n);
    h.noalias() = b.transpose() * b;
  }
  s.gram.resize(cols * cols);
  s.scale = 0;
  for (Index i = 0; i < n; ++i) {
    for (Index j = 0; j < n; ++j) s.gram[static_cast<size_t>(i * n + j)] = s.H(i, j);
    s.scale = std::max(s.scale, s.H(i, i));
  }
  for (Index i = 0; i < n; ++i) s.H(i, i) += options.ridge * s.scale;
  s.d.resize(m);
  s.resid.resize(m);
  s.g.resize(n);
  s.w.resize(n);
  s.r.resize(n);
  s.z.resize(n);
  s.rhs.resize(n);
  s.L.resize(n, n);
  s.free_idx.assign(cols, 0);
  s.state.assign(cols, Bound::Lower);
  s.max_iterations =
      options.max_iterations > 0 ? options.max_iterations : 4 * static_cast<int>(cols) + 20;
}

BlendshapeSolver::~BlendshapeSolver() = default;
BlendshapeSolver::BlendshapeSolver(BlendshapeSolver&&) noexcept = default;
BlendshapeSolver& BlendshapeSolver::operator=(BlendshapeSolver&&) noexcept = default;

size_t BlendshapeSolver::rows() const { return impl_->m; }
size_t BlendshapeSolver::cols() const { return impl_->n; }
std::span<const double> BlendshapeSolver::gram() const { return impl_->gram; }

bool BlendshapeSolver::project(std::span<const float> d, std::span<double> out) const {
  Impl& s = *impl_;
  if (d.size() != s.m || out.size() != s.n) return false;
  for (size_t i = 0; i < s.m; ++i) s.d(static_cast<Index>(i)) = d[i];
  for (size_t c = 0; c < s.n; ++c)
    out[c] = dot(s.B.col(static_cast<Index>(c)), s.d.v.data(), s.B.rows);
  return true;
}

bool BlendshapeSolver::solve(std::span<const float> d, std::span<float> w,
                             BlendshapeSolveReport* report) {
  Impl& s = *impl_;
  if (d.size() != s.m || w.size() != s.n) return false;
  for (size_t i = 0; i < s.m; ++i) {
    if (!std::isfinite(d[i])) return false;
    s.d(static_cast<Index>(i)) = d[i];
  }
  mul_transpose(s.B, s.d, s.g);
  for (double& x : s.g.v) x -= s.options.sparsity;
  int iterations = 0;
  bool converged = false;
  s.run(&iterations, &converged);
  for (size_t k = 0; k < s.n; ++k) w[k] = static_cast<float>(s.w(static_cast<Index>(k)));
  if (report) {
    mul(s.B, s.w, s.resid);
    double r2 = 0;
    for (Index i = 0; i < s.resid.size(); ++i) r2 += (s.resid(i) - s.d(i)) * (s.resid(i) - s.d(i));
    report->iterations = iterations;
    report->converged = converged;
    report->residual = std::sqrt(r2);
    report->at_lower = report->at_upper = 0;
    for (size_t k = 0; k < s.n; ++k) {
      report->at_lower += s.state[k] == Bound::Lower ? 1 : 0;
      report->at_upper += s.state[k] == Bound::Upper ? 1 : 0;
    }
  }
  return true;
}

void BlendshapeSolver::reset() {
  impl_->have_previous = false;
  std::fill(impl_->w.v.begin(), impl_->w.v.end(), 0.0);
  std::fill(impl_->state.begin(), impl_->state.end(), Bound::Lower);
}

std::vector<float> solve_blendshape_weights(std::span<const float> basis, size_t rows, size_t cols,
                                            std::span<const float> d,
                                            const BlendshapeSolveOptions& options,
                                            BlendshapeSolveReport* report) {
  BlendshapeSolver solver(basis, rows, cols, options);
  if (d.size() != rows)
    throw Error(
        {}, "displacements",
        std::to_string(d.size()) + " values for a basis of " + std::to_string(rows) + " rows");
  for (size_t i = 0; i < d.size(); ++i)
    if (!std::isfinite(d[i]))
      throw Error({}, "displacements, value " + std::to_string(i), "not finite");
  std::vector<float> w(cols);
  solver.solve(d, w, report);
  return w;
}

}  // namespace kinema
