// The pressure solve of the grid fluid: MIC(0)-preconditioned conjugate gradients on the 7-point
// (5-point in 2-D) Laplacian of the fluid cells, after Bridson, "Fluid Simulation for Computer
// Graphics", ch. 4. Matrix–vector products and vector updates run in parallel over grid rows; dot
// products are summed per fixed block of rows (grid_fluid_internal.h), so the iterates are the
// same bits whatever the thread count. The triangular solves of the preconditioner run as
// wavefronts over the grid rows (rows with the same j + k are independent), each wavefront in
// parallel, with the arithmetic of plain grid order.
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cmath>

#include "grid_fluid_internal.h"

namespace kinema::grid_fluid_detail {

namespace {

constexpr double kTau = 0.97;    ///< MIC blend (1 would be full modified incomplete Cholesky)
constexpr double kSigma = 0.25;  ///< fall back to the diagonal when the pivot shrinks below this

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

/// Rows (j, k) of one wavefront, j + k = d: those rows depend only on rows of wavefront d − 1
/// (forward) or d + 1 (backward), so they may run in any order and in parallel.
struct Wavefront {
  int j_first, count;  ///< rows (j_first + t, d − j_first − t), t < count
};
inline Wavefront wavefront(int d, int ny, int nz) {
  const int j_first = std::max(0, d - (nz - 1)), j_last = std::min(ny - 1, d);
  return {j_first, j_last - j_first + 1};
}

constexpr int kGroup = 4;  ///< rows of a wavefront swept together: independent chains interleaved

/// Forward substitution on up to kGroup rows of one wavefront (rows t0 … t0 + m − 1 of w, plane
/// k = d − j): q[c] = (r[c] − bx[c−1]·q[c−1] − by[c−sx]·q[c−sx] − bz[c−plane]·q[c−plane])·p[c].
/// A neighbour outside the grid (j = 0, k = 0; i = 0 is peeled) reads 0·0 from `zeros`, which
/// subtracts an exact 0, as its zero coefficient would.
void forward_rows(int d, const Wavefront& w, int t0, int m, size_t sx, size_t plane, int ny,
                  const float* p, const float* bx, const float* by, const float* bz,
                  const double* r, double* q, const double* zeros, const float* zerof) {
  const float* cy[kGroup];
  const float* cz[kGroup];
  const double* qy[kGroup];
  const double* qz[kGroup];
  size_t base[kGroup];
  for (int g = 0; g < m; ++g) {
    const int j = w.j_first + t0 + g, k = d - j;
    base[g] = (size_t(k) * size_t(ny) + size_t(j)) * sx;
    cy[g] = j > 0 ? by + base[g] - sx : zerof;
    qy[g] = j > 0 ? q + base[g] - sx : zeros;
    cz[g] = k > 0 ? bz + base[g] - plane : zerof;
    qz[g] = k > 0 ? q + base[g] - plane : zeros;
  }
  for (int g = 0; g < m; ++g) {
    const size_t c = base[g];
    q[c] = (r[c] - cy[g][0] * qy[g][0] - cz[g][0] * qz[g][0]) * p[c];
  }
  for (size_t i = 1; i < sx; ++i)
    for (int g = 0; g < m; ++g) {
      const size_t c = base[g] + i;
      q[c] = (r[c] - bx[c - 1] * q[c - 1] - cy[g][i] * qy[g][i] - cz[g][i] * qz[g][i]) * p[c];
    }
}

/// Backward substitution, mirrored: q[c] = (q[c] − bx[c]·q[c+1] − by[c]·q[c+sx] −
/// bz[c]·q[c+plane])·p[c], i from the row's end (i = nx − 1 peeled: bx is 0 there); the row's
/// Σ q·r (in that order) goes to dots[row].
void backward_rows(int d, const Wavefront& w, int t0, int m, size_t sx, size_t plane, int ny,
                   int nz, const float* p, const float* bx, const float* by, const float* bz,
                   const double* r, double* q, const double* zeros, const float* zerof,
                   double* dots) {
  const float* cy[kGroup];
  const float* cz[kGroup];
  const double* qy[kGroup];
  const double* qz[kGroup];
  size_t base[kGroup];
  double dot[kGroup];
  for (int g = 0; g < m; ++g) {
    const int j = w.j_first + t0 + g, k = d - j;
    base[g] = (size_t(k) * size_t(ny) + size_t(j)) * sx;
    cy[g] = j + 1 < ny ? by + base[g] : zerof;
    qy[g] = j + 1 < ny ? q + base[g] + sx : zeros;
    cz[g] = k + 1 < nz ? bz + base[g] : zerof;
    qz[g] = k + 1 < nz ? q + base[g] + plane : zeros;
    const size_t c = base[g] + sx - 1, i = sx - 1;
    q[c] = (q[c] - cy[g][i] * qy[g][i] - cz[g][i] * qz[g][i]) * p[c];
    dot[g] = q[c] * r[c];
  }
  for (size_t i = sx - 1; i-- > 0;)
    for (int g = 0; g < m; ++g) {
      const size_t c = base[g] + i;
      q[c] = (q[c] - bx[c] * q[c + 1] - cy[g][i] * qy[g][i] - cz[g][i] * qz[g][i]) * p[c];
      dot[g] += q[c] * r[c];
    }
  for (int g = 0; g < m; ++g) dots[base[g] / sx] = dot[g];
}

/// z = M⁻¹ r with M = L·Lᵀ the MIC(0) factor: forward then backward substitution, in place in z;
/// returns z·r. Both sweeps go wavefront by wavefront over the rows (j + k = const), each
/// wavefront's rows in parallel, kGroup rows a task; every q[c] reads final values only, with the
/// arithmetic of plain grid order, so the bits do not depend on the thread count. z·r is summed
/// per row, then over the rows in order. Non-fluid cells have p = 0 and r = 0, so they give 0
/// without a test. `dots` (one per row) and `zeros` (nx doubles) are scratch.
double precondition(const PoissonMatrix& A, const Mic0Factor& m, const std::vector<double>& r,
                    std::vector<double>& z, std::vector<double>& dots, std::vector<double>& zeros,
                    std::vector<float>& zerof) {
  const int nx = A.nx, ny = A.ny, nz = A.nz;
  const size_t sx = size_t(nx), plane = size_t(nx) * ny, rows = size_t(ny) * nz;
  dots.assign(rows, 0.0);
  zeros.assign(sx, 0.0);
  zerof.assign(sx, 0.0f);
  const float* p = m.p->data();
  const float* bx = m.bx->data();
  const float* by = m.by->data();
  const float* bz = m.bz->data();
  const double* rp = r.data();
  double* q = z.data();
  const int fronts = ny + nz - 1;
  const bool serial = tbb::this_task_arena::max_concurrency() <= 1;
  auto sweep = [&](int d, const auto& rows_fn) {
    const Wavefront w = wavefront(d, ny, nz);
    const int groups = (w.count + kGroup - 1) / kGroup;
    auto group = [&](int gi) {
      const int t0 = gi * kGroup;
      rows_fn(w, t0, std::min(kGroup, w.count - t0));
    };
    if (serial || groups == 1) {
      for (int gi = 0; gi < groups; ++gi) group(gi);
    } else {
      tbb::parallel_for(0, groups, group);
    }
  };
  for (int d = 0; d < fronts; ++d)
    sweep(d, [&](const Wavefront& w, int t0, int count) {
      forward_rows(d, w, t0, count, sx, plane, ny, p, bx, by, bz, rp, q, zeros.data(),
                   zerof.data());
    });
  for (int d = fronts - 1; d >= 0; --d)
    sweep(d, [&](const Wavefront& w, int t0, int count) {
      backward_rows(d, w, t0, count, sx, plane, ny, nz, p, bx, by, bz, rp, q, zeros.data(),
                    zerof.data(), dots.data());
    });
  double dot = 0;
  for (double v : dots) dot += v;
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
                    std::vector<double>& q, double absolute) {
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
  const double target = std::max(tolerance * bnorm, absolute);
  if (rnorm <= target) {
    result.residual = rnorm / bnorm;
    return result;
  }
  std::vector<double> dots, zeros;
  std::vector<float> zerof;
  double sigma = precondition(A, precon, r, z, dots, zeros, zerof);
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
    const double sigma_new = precondition(A, precon, r, z, dots, zeros, zerof);
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
