// Module-private helpers of the grid fluid (kinema/fluid/grid_fluid.h): parallel loops over grid
// rows with deterministic reductions, trilinear sampling on a staggered grid, the pressure solve.
#pragma once

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace kinema::grid_fluid_detail {

/// Rows (one j, k pair; i runs along the row) per reduction block. Fixed, so that the blocks —
/// and the order their partial sums are added in — do not depend on the thread count.
constexpr size_t kRowsPerBlock = 8;

/// f(row) for every row in [0, rows), in parallel. Rows are independent, so any split is fine.
template <class F>
void for_rows(size_t rows, const F& f) {
  tbb::parallel_for(tbb::blocked_range<size_t>(0, rows, kRowsPerBlock),
                    [&](const tbb::blocked_range<size_t>& r) {
                      for (size_t row = r.begin(); row < r.end(); ++row) f(row);
                    });
}

/// Σ f(row) over [0, rows): each fixed block of rows summed in order, then the blocks in order.
template <class F>
double sum_rows(size_t rows, const F& f) {
  const size_t blocks = (rows + kRowsPerBlock - 1) / kRowsPerBlock;
  std::vector<double> partial(blocks, 0.0);
  tbb::parallel_for(size_t(0), blocks, [&](size_t b) {
    double s = 0;
    const size_t end = std::min(rows, (b + 1) * kRowsPerBlock);
    for (size_t row = b * kRowsPerBlock; row < end; ++row) s += f(row);
    partial[b] = s;
  });
  double total = 0;
  for (double p : partial) total += p;
  return total;
}

/// max f(row) over [0, rows) (max is exact, so no ordering is needed beyond the blocks).
template <class F>
double max_rows(size_t rows, const F& f) {
  const size_t blocks = (rows + kRowsPerBlock - 1) / kRowsPerBlock;
  std::vector<double> partial(blocks, 0.0);
  tbb::parallel_for(size_t(0), blocks, [&](size_t b) {
    double m = 0;
    const size_t end = std::min(rows, (b + 1) * kRowsPerBlock);
    for (size_t row = b * kRowsPerBlock; row < end; ++row) m = std::max(m, f(row));
    partial[b] = m;
  });
  double m = 0;
  for (double p : partial) m = std::max(m, p);
  return m;
}

/// A grid of samples: node (i, j, k) of sx × sy × sz sits at cell coordinates (i + ox, j + oy,
/// k + oz), i.e. at origin + that·dx. Cells: offset ½ on every axis; u faces: (0, ½, ½); etc.
struct Lattice {
  int sx, sy, sz;
  double ox, oy, oz;
  size_t size() const { return size_t(sx) * size_t(sy) * size_t(sz); }
  size_t rows() const { return size_t(sy) * size_t(sz); }
  size_t index(int i, int j, int k) const {
    return size_t(i) + size_t(sx) * (size_t(j) + size_t(sy) * size_t(k));
  }
};

/// The two nodes around coordinate x on an axis of n nodes and the weight of the upper one;
/// outside [0, n − 1] (and for NaN) the nearest end. On a node both are that node: a node of
/// weight 0 must not widen the MacCormack clamp (axis-aligned flow lands on nodes all the time).
inline void bracket(double x, int n, int& i0, int& i1, double& t) {
  if (!(x > 0)) x = 0;
  if (x >= n - 1) {
    i0 = i1 = n - 1;
    t = 0;
    return;
  }
  i0 = int(x);
  t = x - i0;
  i1 = t > 0 ? i0 + 1 : i0;
}

/// The nodes and weights of trilinear interpolation at cell coordinates (x, y, z) on lattice g,
/// found once and applied to any number of fields on that lattice (advection samples three scalar
/// fields at one point, and MacCormack's clamp reads the nodes of the forward trace again). eval()
/// does sample()'s arithmetic, in the same order, so the bits are the same.
struct Stencil {
  size_t c000, c100, c010, c110, c001, c101, c011, c111;  ///< in 2-D only the first four
  double tx, ty, tz;
  bool flat;  ///< 2-D: bilinear

  double eval(const double* d) const {
    if (flat) {
      const double a = d[c000], b = d[c100], c = d[c010], e = d[c110];
      return (a + (b - a) * tx) + ((c + (e - c) * tx) - (a + (b - a) * tx)) * ty;
    }
    const double v000 = d[c000], v100 = d[c100], v010 = d[c010], v110 = d[c110];
    const double v001 = d[c001], v101 = d[c101], v011 = d[c011], v111 = d[c111];
    const double x00 = v000 + (v100 - v000) * tx, x10 = v010 + (v110 - v010) * tx;
    const double x01 = v001 + (v101 - v001) * tx, x11 = v011 + (v111 - v011) * tx;
    const double y0 = x00 + (x10 - x00) * ty, y1 = x01 + (x11 - x01) * ty;
    return y0 + (y1 - y0) * tz;
  }
  /// min and max of the nodes read (the MacCormack clamp of Selle 2008).
  void bounds(const double* d, double& lo, double& hi) const {
    if (flat) {
      const double a = d[c000], b = d[c100], c = d[c010], e = d[c110];
      lo = std::min({a, b, c, e});
      hi = std::max({a, b, c, e});
      return;
    }
    const double v000 = d[c000], v100 = d[c100], v010 = d[c010], v110 = d[c110];
    const double v001 = d[c001], v101 = d[c101], v011 = d[c011], v111 = d[c111];
    lo = std::min({v000, v100, v010, v110, v001, v101, v011, v111});
    hi = std::max({v000, v100, v010, v110, v001, v101, v011, v111});
  }
};

inline Stencil stencil(const Lattice& g, double x, double y, double z) {
  Stencil s;
  int i0, i1, j0, j1, k0 = 0, k1 = 0;
  bracket(x - g.ox, g.sx, i0, i1, s.tx);
  bracket(y - g.oy, g.sy, j0, j1, s.ty);
  s.tz = 0;
  s.flat = g.sz == 1;
  if (!s.flat) bracket(z - g.oz, g.sz, k0, k1, s.tz);
  const size_t r00 = size_t(g.sx) * j0, r10 = size_t(g.sx) * j1;
  const size_t plane = size_t(g.sx) * g.sy;
  const size_t p0 = plane * k0, p1 = plane * k1;
  s.c000 = p0 + r00 + i0, s.c100 = p0 + r00 + i1, s.c010 = p0 + r10 + i0, s.c110 = p0 + r10 + i1;
  s.c001 = p1 + r00 + i0, s.c101 = p1 + r00 + i1, s.c011 = p1 + r10 + i0, s.c111 = p1 + r10 + i1;
  return s;
}

/// Trilinear interpolation of d (on lattice g) at cell coordinates (x, y, z). When lo and hi are
/// given they receive the min and max of the nodes read (the MacCormack clamp of Selle 2008).
inline double sample(const Lattice& g, const double* d, double x, double y, double z,
                     double* lo = nullptr, double* hi = nullptr) {
  const Stencil s = stencil(g, x, y, z);
  if (lo) s.bounds(d, *lo, *hi);
  return s.eval(d);
}

/// The pressure Poisson matrix on the cells (Bridson's layout; stored in float, which holds its
/// small integers exactly and halves the memory traffic of the memory-bound CG): diag = the number
/// of neighbours that are not solid or wall (open-boundary ghosts count: their pressure is 0); ax,
/// ay, az = the coefficient to the +x, +y, +z neighbour (−1 when both cells are fluid, else 0).
/// Non-fluid cells have diag 0 and are left out.
struct PoissonMatrix {
  int nx, ny, nz;
  std::vector<float>* diag;
  std::vector<float>* ax;
  std::vector<float>* ay;
  std::vector<float>* az;
};

/// The MIC(0) factor L = (the lower triangle of A)·diag(p) + diag(1/p), stored as p and the
/// products bx = ax·p, by = ay·p, bz = az·p that both triangular solves use. In float: the
/// preconditioner need only be close to A⁻¹ (the iterates and the residual stay double).
struct Mic0Factor {
  std::vector<float>* p;
  std::vector<float>* bx;
  std::vector<float>* by;
  std::vector<float>* bz;
};

/// Builds the MIC(0) preconditioner (Bridson, "Fluid Simulation for Computer Graphics",
/// fig. 4.2: τ = 0.97, safety σ = 0.25), in grid order.
void build_mic0(const PoissonMatrix& A, const Mic0Factor& m);

struct PcgResult {
  int iterations = 0;
  double residual = 0;  ///< max |r| / max |b| (0 when b = 0)
};

/// Solves A x = b by MIC(0)-preconditioned conjugate gradients, starting from x when that start
/// has a smaller residual than 0, else from 0; stops when max |r| ≤ max(tolerance · max |b|,
/// absolute) or after max_iterations. r, z, s, q: scratch of the cell count.
PcgResult solve_pcg(const PoissonMatrix& A, const Mic0Factor& precon, const std::vector<double>& b,
                    std::vector<double>& x, double tolerance, int max_iterations,
                    std::vector<double>& r, std::vector<double>& z, std::vector<double>& s,
                    std::vector<double>& q, double absolute = 0);

}  // namespace kinema::grid_fluid_detail
