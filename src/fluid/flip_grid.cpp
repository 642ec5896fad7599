// The grid operators of the FLIP liquid (kinema/fluid/flip.h): particles → grid by a coloured
// scatter, cell marking, extrapolation, wall and solid faces, gravity, and the pressure projection
// (the MIC(0)/CG solver of grid_fluid_pressure.cpp on the free-surface matrix). Every loop writes
// disjoint faces or cells: grid rows in parallel, or the particle slabs of one colour.
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>

#include "flip_internal.h"
#include "kinema/fluid/flip.h"

namespace kinema {

using flip_detail::face_lattice;
using grid_fluid_detail::for_rows;
using grid_fluid_detail::Lattice;
using grid_fluid_detail::max_rows;

namespace {

/// Passes of extrapolation: a particle moves at most cfl cells in a substep and reads faces up to
/// one cell around it, so cfl + 2 layers of air faces beyond the fluid are enough.
int extrapolation_layers(double cfl) { return int(std::ceil(cfl)) + 2; }

}  // namespace

void FlipLiquid::particles_to_grid() {
  // Scatter, race-free and in a fixed order: the particles of one slab of cells (a plane of
  // constant k; in 2-D a row of constant j) reach only the faces of that slab and its two
  // neighbours, so slabs k ≡ 0, 1, 2 (mod 3) are done in three passes, the slabs of a pass in
  // parallel, each slab's particles in slot order. Every face thus adds its contributions in the
  // same order whatever the thread count. u*, v*, w* hold the weight sums meanwhile.
  const int dims = three_d_ ? 3 : 2;
  const int nslab = three_d_ ? o_.nz : o_.ny;
  const size_t slab_cells = three_d_ ? size_t(o_.nx) * size_t(o_.ny) : size_t(o_.nx);
  const Lattice lat[3] = {face_lattice(o_, 0), face_lattice(o_, 1), face_lattice(o_, 2)};
  double* vel[3] = {u_.data(), v_.data(), w_.data()};
  double* wsum[3] = {u_star_.data(), v_star_.data(), w_star_.data()};
  const double* pos[3] = {sx_.data(), sy_.data(), sz_.data()};
  const double* pvel[3] = {svx_.data(), svy_.data(), svz_.data()};
  for (auto* a : {&u_, &v_, &w_, &u_star_, &v_star_, &w_star_})
    std::fill(a->begin(), a->end(), 0.0);
  for (int pass = 0; pass < 3; ++pass) {
    const int slabs = (nslab - pass + 2) / 3;
    tbb::parallel_for(0, std::max(slabs, 0), [&](int q) {
      const size_t slab = size_t(pass + 3 * q);
      for (std::uint32_t s = cell_start_[slab * slab_cells],
                         e = cell_start_[(slab + 1) * slab_cells];
           s < e; ++s) {
        for (int a = 0; a < dims; ++a) {
          const Lattice& L = lat[a];
          // The two faces around the particle on each axis (one in 2-D's z) and the upper one's
          // weight: faces sit at integers along their normal, at half-integers across it.
          int f0[3] = {0, 0, 0};
          double t[3] = {0, 0, 0};
          for (int b = 0; b < dims; ++b) {
            const double x = pos[b][s] - (b == a ? 0.0 : 0.5);
            const double fl = std::floor(x);
            f0[b] = int(fl);
            t[b] = x - fl;
          }
          const int nk = three_d_ ? 2 : 1;
          const double v = pvel[a][s];
          for (int dk = 0; dk < nk; ++dk) {
            const int k = f0[2] + dk;
            if (k < 0 || k >= L.sz) continue;
            const double wk = three_d_ ? (dk ? t[2] : 1 - t[2]) : 1.0;
            for (int dj = 0; dj < 2; ++dj) {
              const int j = f0[1] + dj;
              if (j < 0 || j >= L.sy) continue;
              const double wjk = wk * (dj ? t[1] : 1 - t[1]);
              for (int di = 0; di < 2; ++di) {
                const int i = f0[0] + di;
                if (i < 0 || i >= L.sx) continue;
                const double wgt = wjk * (di ? t[0] : 1 - t[0]);
                const size_t f = L.index(i, j, k);
                wsum[a][f] += wgt;
                vel[a][f] += wgt * v;
              }
            }
          }
        }
      }
    });
  }
  for (int a = 0; a < dims; ++a) {
    std::vector<std::uint8_t>& known = a == 0 ? u_known_ : (a == 1 ? v_known_ : w_known_);
    const Lattice& L = lat[a];
    for_rows(L.rows(), [&](size_t row) {
      for (size_t f = row * size_t(L.sx), e = f + size_t(L.sx); f < e; ++f) {
        const double sw = wsum[a][f];
        vel[a][f] = sw > 0 ? vel[a][f] / sw : 0.0;
        known[f] = sw > 0;
      }
    });
  }
}

void FlipLiquid::mark_cells() {
  for_rows(size_t(o_.ny) * o_.nz, [&](size_t row) {
    for (size_t c = row * size_t(o_.nx), e = c + size_t(o_.nx); c < e; ++c)
      cell_[c] = solid_[c] ? 2 : (cell_start_[c + 1] > cell_start_[c] ? 1 : 0);
  });
}

void FlipLiquid::extrapolate() {
  const int layers = extrapolation_layers(o_.cfl);
  for (int a = 0; a < (three_d_ ? 3 : 2); ++a) {
    const Lattice L = face_lattice(o_, a);
    std::vector<double>& vel = a == 0 ? u_ : (a == 1 ? v_ : w_);
    std::vector<std::uint8_t>& known = a == 0 ? u_known_ : (a == 1 ? v_known_ : w_known_);
    const size_t sx = size_t(L.sx), plane = sx * size_t(L.sy);
    for (int layer = 0; layer < layers; ++layer) {
      // Jacobi-style: read last pass's flags, so a face set in this pass feeds only the next one
      // (and its value, unknown until now, is read by no one in this pass).
      std::copy(known.begin(), known.end(), known_tmp_.begin());
      const std::uint8_t* old = known_tmp_.data();
      for_rows(L.rows(), [&](size_t row) {
        const int j = int(row % size_t(L.sy)), k = int(row / size_t(L.sy));
        for (int i = 0; i < L.sx; ++i) {
          const size_t f = L.index(i, j, k);
          if (old[f]) continue;
          double sum = 0;
          int n = 0;
          const auto take = [&](size_t g) {
            if (old[g]) {
              sum += vel[g];
              ++n;
            }
          };
          if (i > 0) take(f - 1);
          if (i + 1 < L.sx) take(f + 1);
          if (j > 0) take(f - sx);
          if (j + 1 < L.sy) take(f + sx);
          if (k > 0) take(f - plane);
          if (k + 1 < L.sz) take(f + plane);
          if (n > 0) {
            vel[f] = sum / n;
            known[f] = 1;
          }
        }
      });
    }
  }
}

void FlipLiquid::enforce_solid_faces() {
  // A face on the domain's border or touching a solid cell carries the wall's velocity, 0.
  for (int a = 0; a < (three_d_ ? 3 : 2); ++a) {
    const Lattice L = face_lattice(o_, a);
    std::vector<double>& vel = a == 0 ? u_ : (a == 1 ? v_ : w_);
    const int n = a == 0 ? o_.nx : (a == 1 ? o_.ny : o_.nz);
    for_rows(L.rows(), [&](size_t row) {
      const int j = int(row % size_t(L.sy)), k = int(row / size_t(L.sy));
      for (int i = 0; i < L.sx; ++i) {
        int c[3] = {i, j, k};
        const int along = c[a];
        bool wall = along == 0 || along == n;
        if (!wall) {
          const size_t hi = size_t(c[0]) + size_t(o_.nx) * (size_t(c[1]) + size_t(o_.ny) * c[2]);
          c[a] -= 1;
          const size_t lo = size_t(c[0]) + size_t(o_.nx) * (size_t(c[1]) + size_t(o_.ny) * c[2]);
          wall = solid_[lo] || solid_[hi];
        }
        if (wall) vel[L.index(i, j, k)] = 0;
      }
    });
  }
}

void FlipLiquid::add_gravity(double h) {
  for (int a = 0; a < (three_d_ ? 3 : 2); ++a) {
    const Lattice L = face_lattice(o_, a);
    std::vector<double>& vel = a == 0 ? u_ : (a == 1 ? v_ : w_);
    const double dv = h * o_.gravity[a];
    if (dv == 0) continue;
    const int n = a == 0 ? o_.nx : (a == 1 ? o_.ny : o_.nz);
    for_rows(L.rows(), [&](size_t row) {
      const int j = int(row % size_t(L.sy)), k = int(row / size_t(L.sy));
      for (int i = 0; i < L.sx; ++i) {
        int c[3] = {i, j, k};
        if (c[a] == 0 || c[a] == n) continue;
        const size_t hi = size_t(c[0]) + size_t(o_.nx) * (size_t(c[1]) + size_t(o_.ny) * c[2]);
        c[a] -= 1;
        const size_t lo = size_t(c[0]) + size_t(o_.nx) * (size_t(c[1]) + size_t(o_.ny) * c[2]);
        if (cell_[lo] == 2 || cell_[hi] == 2) continue;
        if (cell_[lo] == 1 || cell_[hi] == 1) vel[L.index(i, j, k)] += dv;
      }
    });
  }
}

void FlipLiquid::project() {
  const int nx = o_.nx, ny = o_.ny, nz = o_.nz;
  const size_t sx = size_t(nx), plane = sx * size_t(ny), rows = size_t(ny) * nz;
  const size_t usx = sx + 1, vplane = sx * size_t(ny + 1);
  // The matrix on the fluid cells (Bridson ch. 5): diag counts the neighbours that are not solid
  // or wall — air neighbours too, their ψ being 0 — and the coupling to a fluid neighbour is −1.
  // The right-hand side is −(net outflow), the divergence × dx.
  for_rows(rows, [&](size_t row) {
    const int j = int(row % size_t(ny)), k = int(row / size_t(ny));
    for (int i = 0; i < nx; ++i) {
      const size_t c = row * sx + size_t(i);
      adiag_[c] = ax_[c] = ay_[c] = az_[c] = 0;
      rhs_[c] = 0;
      if (cell_[c] != 1) {
        psi_[c] = 0;
        continue;
      }
      int diag = 0;
      if (i > 0) diag += cell_[c - 1] != 2;
      if (i + 1 < nx) {
        diag += cell_[c + 1] != 2;
        if (cell_[c + 1] == 1) ax_[c] = -1;
      }
      if (j > 0) diag += cell_[c - sx] != 2;
      if (j + 1 < ny) {
        diag += cell_[c + sx] != 2;
        if (cell_[c + sx] == 1) ay_[c] = -1;
      }
      if (k > 0) diag += cell_[c - plane] != 2;
      if (k + 1 < nz) {
        diag += cell_[c + plane] != 2;
        if (cell_[c + plane] == 1) az_[c] = -1;
      }
      adiag_[c] = float(diag);
      const size_t fu = size_t(i) + usx * row, fv = size_t(i) + sx * (size_t(j) + (ny + 1) * k);
      double div = u_[fu + 1] - u_[fu] + v_[fv + sx] - v_[fv];
      if (three_d_) div += w_[c + plane] - w_[c];
      rhs_[c] = -div;
    }
  });
  grid_fluid_detail::PoissonMatrix A{nx, ny, nz, &adiag_, &ax_, &ay_, &az_};
  grid_fluid_detail::build_mic0(A, {&precon_, &pbx_, &pby_, &pbz_});
  const grid_fluid_detail::PcgResult pcg = grid_fluid_detail::solve_pcg(
      A, {&precon_, &pbx_, &pby_, &pbz_}, rhs_, psi_, o_.pressure_tolerance,
      o_.pressure_max_iterations, cg_r_, cg_z_, cg_s_, cg_q_);
  pressure_iterations_ = pcg.iterations;
  pressure_residual_ = pcg.residual;
  // Subtract the gradient on the faces touching fluid whose sides are both open (ψ = 0 in air).
  const auto open_pair = [&](size_t lo, size_t hi) {
    return cell_[lo] != 2 && cell_[hi] != 2 && (cell_[lo] == 1 || cell_[hi] == 1);
  };
  for_rows(rows, [&](size_t row) {
    const int j = int(row % size_t(ny)), k = int(row / size_t(ny));
    for (int i = 1; i < nx; ++i) {
      const size_t c = row * sx + size_t(i);
      if (open_pair(c - 1, c)) u_[size_t(i) + usx * row] -= psi_[c] - psi_[c - 1];
    }
    if (j > 0)
      for (int i = 0; i < nx; ++i) {
        const size_t c = row * sx + size_t(i);
        if (open_pair(c - sx, c))
          v_[size_t(i) + sx * size_t(j) + vplane * k] -= psi_[c] - psi_[c - sx];
      }
    if (three_d_ && k > 0)
      for (int i = 0; i < nx; ++i) {
        const size_t c = row * sx + size_t(i);
        if (open_pair(c - plane, c)) w_[c] -= psi_[c] - psi_[c - plane];
      }
  });
  // The divergence left in the fluid cells, 1/s.
  const double inv = 1 / o_.dx;
  max_divergence_ = max_rows(rows, [&](size_t row) {
    const int j = int(row % size_t(ny)), k = int(row / size_t(ny));
    double m = 0;
    for (int i = 0; i < nx; ++i) {
      const size_t c = row * sx + size_t(i);
      if (cell_[c] != 1) continue;
      const size_t fu = size_t(i) + usx * row, fv = size_t(i) + sx * (size_t(j) + (ny + 1) * k);
      double div = u_[fu + 1] - u_[fu] + v_[fv + sx] - v_[fv];
      if (three_d_) div += w_[c + plane] - w_[c];
      m = std::max(m, std::abs(div) * inv);
    }
    return m;
  });
}

}  // namespace kinema
