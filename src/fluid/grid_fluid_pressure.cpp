// The pressure solve of the grid fluid: MIC(0)-preconditioned conjugate gradients on the 7-point
// (5-point in 2-D) Laplacian of the fluid cells, after Bridson, "Fluid Simulation for Computer
// Graphics", ch. 4. Matrix–vector products and vector updates run in parallel over grid rows; dot
// products are summed per fixed block of rows (grid_fluid_internal.h), so the iterates are the
// same bits whatever the thread count. The triangular solves of the preconditioner are sequential
// by nature and run in grid order on the calling thread.
#include <algorithm>
#include <cmath>

#include "grid_fluid_internal.h"

namespace kinema::grid_fluid_detail {

namespace {

constexpr double kTau = 0.97;    ///< MIC blend (1 would be full modified incomplete Cholesky)
constexpr double kSigma = 0.25;  ///< fall back to the diagonal when the pivot shrinks below this
constexpr int kSkew = 4;         ///< rows interleaved in the triangular solves

/// (A s)_c over the cells of one row and Σ_c s_c·(A s)_c; out gets A s. Coefficients to cells
/// outside the grid are 0 (ax is 0 at i = nx − 1, ay at j = ny − 1, az at k = nz − 1), so away from
/// the first and last plane the neighbours can be read without index checks.
double multiply_row(const PoissonMatrix& A, const double* sp, double* o, size_t row) {
  const int nx = A.nx, ny = A.ny, nz = A.nz;
  const size_t sx = size_t(nx), plane = size_t(nx) * ny;
  const float* diag = A.diag->data();
  const float* ax = A.ax->data();
  const float* ay = A.ay->data();
  const float* az = A.az->data();
  const int j = int(row % size_t(ny)), k = int(row / size_t(ny));
  const size_t base = row * sx;
  double dot = 0;
  if (k > 0 && k + 1 < nz) {
    for (size_t c = base, e = base + sx; c < e; ++c) {
      const double v = diag[c] * sp[c] + ax[c - 1] * sp[c - 1] + ax[c] * sp[c + 1] +
                       ay[c - sx] * sp[c - sx] + ay[c] * sp[c + sx] +
                       az[c - plane] * sp[c - plane] + az[c] * sp[c + plane];
      o[c] = v;
      dot += v * sp[c];
    }
    return dot;
  }
  for (int i = 0; i < nx; ++i) {
    const size_t c = base + size_t(i);
    double v = diag[c] * sp[c];
    if (i > 0) v += ax[c - 1] * sp[c - 1];
    if (i + 1 < nx) v += ax[c] * sp[c + 1];
    if (j > 0) v += ay[c - sx] * sp[c - sx];
    if (j + 1 < ny) v += ay[c] * sp[c + sx];
    if (k > 0) v += az[c - plane] * sp[c - plane];
    if (k + 1 < nz) v += az[c] * sp[c + plane];
    o[c] = v;
    dot += v * sp[c];
  }
  return dot;
}

/// out = A s; returns s·(A s), summed per fixed block of rows.
double multiply(const PoissonMatrix& A, const std::vector<double>& s, std::vector<double>& out) {
  return sum_rows(size_t(A.ny) * A.nz,
                  [&](size_t row) { return multiply_row(A, s.data(), out.data(), row); });
}

/// z = M⁻¹ r with M = L·Lᵀ the MIC(0) factor: forward then backward substitution, in place in z;
/// returns z·r (summed in the sweep's order: sequential, so the same whatever the thread count).
/// Non-fluid cells have p = 0 and r = 0, so they give 0 without a test; products that reach past
/// a row's or plane's end are 0, so only the first (forward) and last (backward) plane need index
/// checks.
double precondition(const PoissonMatrix& A, const Mic0Factor& m, const std::vector<double>& r,
                    std::vector<double>& z) {
  const int nx = A.nx, ny = A.ny, nz = A.nz;
  const size_t sx = size_t(nx), plane = size_t(nx) * ny, n = plane * size_t(nz);
  const float* p = m.p->data();
  const float* bx = m.bx->data();
  const float* by = m.by->data();
  const float* bz = m.bz->data();
  const double* rp = r.data();
  double* q = z.data();
  for (size_t c = 0; c < std::min(plane, n); ++c) {
    const size_t i = c % sx;
    double t = rp[c];
    if (i > 0) t -= bx[c - 1] * q[c - 1];
    if (c >= sx) t -= by[c - sx] * q[c - sx];
    q[c] = t * p[c];
  }
  // Past the first plane: kSkew rows at a time, row r lagging r cells behind row 0, so that the
  // kSkew recurrences along x run interleaved (the chain q[c − 1] → q[c] is the bottleneck).
  // Every q[c] still reads final values only, so the bits are those of plain grid order. A read
  // past a row's start (i = 0) may see a value not yet final, but its coefficient is 0.
  for (int k = 1; k < nz; ++k)
    for (int j0 = 0; j0 < ny; j0 += kSkew) {
      const int rows = std::min(kSkew, ny - j0);
      const size_t first = size_t(j0) * sx + size_t(k) * plane;
      for (int t = 0; t < nx + rows - 1; ++t)
        for (int r = std::max(0, t - nx + 1); r < std::min(rows, t + 1); ++r) {
          const size_t c = first + size_t(r) * sx + size_t(t - r);
          q[c] = (rp[c] - bx[c - 1] * q[c - 1] - by[c - sx] * q[c - sx] -
                  bz[c - plane] * q[c - plane]) *
                 p[c];
        }
    }
  double dot = 0;
  const size_t last_plane = n - plane;
  for (size_t c = n; c-- > last_plane;) {
    const size_t i = c % sx;
    double t = q[c];
    if (i + 1 < sx) t -= bx[c] * q[c + 1];
    if (c + sx < n) t -= by[c] * q[c + sx];
    q[c] = t * p[c];
    dot += q[c] * rp[c];
  }
  // Below the last plane: skewed as the forward sweep, mirrored (rows from the top, x downwards).
  for (int k = nz - 2; k >= 0; --k)
    for (int jt = ny - 1; jt >= 0; jt -= kSkew) {
      const int rows = std::min(kSkew, jt + 1);
      const size_t last = size_t(nx - 1) + size_t(jt) * sx + size_t(k) * plane;
      for (int t = 0; t < nx + rows - 1; ++t)
        for (int r = std::max(0, t - nx + 1); r < std::min(rows, t + 1); ++r) {
          const size_t c = last - size_t(r) * sx - size_t(t - r);
          q[c] = (q[c] - bx[c] * q[c + 1] - by[c] * q[c + sx] - bz[c] * q[c + plane]) * p[c];
          dot += q[c] * rp[c];
        }
    }
  return dot;
}

double max_abs(size_t rows, size_t sx, const std::vector<double>& a) {
  return max_rows(rows, [&](size_t row) {
    double m = 0;
    for (size_t c = row * sx, e = c + sx; c < e; ++c) m = std::max(m, std::abs(a[c]));
    return m;
  });
}

}  // namespace

void build_mic0(const PoissonMatrix& A, const Mic0Factor& m) {
  const int nx = A.nx, ny = A.ny, nz = A.nz;
  const size_t sx = size_t(nx), plane = size_t(nx) * ny;
  const float* diag = A.diag->data();
  const float* ax = A.ax->data();
  const float* ay = A.ay->data();
  const float* az = A.az->data();
  float* p = m.p->data();
  size_t c = 0;
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i, ++c) {
        if (diag[c] == 0) {
          p[c] = 0;
          continue;
        }
        double e = diag[c];
        if (i > 0) {
          const size_t n = c - 1;
          const double a = ax[n] * p[n];
          e -= a * a + kTau * ax[n] * (ay[n] + az[n]) * p[n] * p[n];
        }
        if (j > 0) {
          const size_t n = c - sx;
          const double a = ay[n] * p[n];
          e -= a * a + kTau * ay[n] * (ax[n] + az[n]) * p[n] * p[n];
        }
        if (k > 0) {
          const size_t n = c - plane;
          const double a = az[n] * p[n];
          e -= a * a + kTau * az[n] * (ax[n] + ay[n]) * p[n] * p[n];
        }
        if (e < kSigma * diag[c]) e = diag[c];
        p[c] = float(1 / std::sqrt(e));
      }
  for_rows(size_t(ny) * nz, [&](size_t row) {
    for (size_t c = row * sx, e = c + sx; c < e; ++c) {
      (*m.bx)[c] = ax[c] * p[c];  // exact: ax is 0 or −1
      (*m.by)[c] = ay[c] * p[c];
      (*m.bz)[c] = az[c] * p[c];
    }
  });
}

PcgResult solve_pcg(const PoissonMatrix& A, const Mic0Factor& precon, const std::vector<double>& b,
                    std::vector<double>& x, double tolerance, int max_iterations,
                    std::vector<double>& r, std::vector<double>& z, std::vector<double>& s,
                    std::vector<double>& q) {
  const size_t rows = size_t(A.ny) * A.nz, sx = size_t(A.nx);
  PcgResult result;
  const double bnorm = max_abs(rows, sx, b);
  if (bnorm == 0) {
    std::fill(x.begin(), x.end(), 0.0);
    return result;
  }
  // Warm start from the previous pressure when it is closer than 0 (a smoke plume's pressure
  // changes little from step to step); otherwise start from 0 with r = b.
  (void)multiply(A, x, q);
  for_rows(rows, [&](size_t row) {
    for (size_t c = row * sx, e = c + sx; c < e; ++c) r[c] = b[c] - q[c];
  });
  double rnorm = max_abs(rows, sx, r);
  if (!(rnorm < bnorm)) {
    std::fill(x.begin(), x.end(), 0.0);
    r = b;
    rnorm = bnorm;
  }
  const double target = tolerance * bnorm;
  if (rnorm <= target) {
    result.residual = rnorm / bnorm;
    return result;
  }
  double sigma = precondition(A, precon, r, z);
  s = z;
  for (int it = 1; it <= max_iterations; ++it) {
    const double qs = multiply(A, s, q);
    result.iterations = it;
    if (!(qs > 0)) break;  // breakdown (only in exact arithmetic's null space): stop here
    const double alpha = sigma / qs;
    rnorm = max_rows(rows, [&](size_t row) {
      double m = 0;
      for (size_t c = row * sx, e = c + sx; c < e; ++c) {
        x[c] += alpha * s[c];
        r[c] -= alpha * q[c];
        m = std::max(m, std::abs(r[c]));
      }
      return m;
    });
    if (rnorm <= target) break;
    const double sigma_new = precondition(A, precon, r, z);
    const double beta = sigma_new / sigma;
    sigma = sigma_new;
    for_rows(rows, [&](size_t row) {
      for (size_t c = row * sx, e = c + sx; c < e; ++c) s[c] = z[c] + beta * s[c];
    });
  }
  result.residual = rnorm / bnorm;
  return result;
}

}  // namespace kinema::grid_fluid_detail
