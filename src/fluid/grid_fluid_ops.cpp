// Grid fluid (kinema/fluid/grid_fluid.h): the operators of one substep — advection (semi-
// Lagrangian, Stam 1999; MacCormack with clamping, Selle et al. 2008), buoyancy and vorticity
// confinement (Fedkiw, Stam & Jensen 2001), implicit diffusion by Jacobi sweeps (Stam 1999), the
// projection (Bridson, ch. 4; the solver is in grid_fluid_pressure.cpp) and a simple fire
// reaction (after Nguyen, Fedkiw & Jensen 2002). All loops run over grid rows in parallel, each
// output written by one task from inputs nobody writes meanwhile, so the bits do not depend on
// the thread count.
#include <algorithm>
#include <cmath>

#include "grid_fluid_internal.h"
#include "kinema/fluid/grid_fluid.h"

namespace kinema {

using grid_fluid_detail::for_rows;
using grid_fluid_detail::Lattice;
using grid_fluid_detail::max_rows;
using grid_fluid_detail::Stencil;
using grid_fluid_detail::stencil;
using grid_fluid_detail::sum_rows;

namespace {

/// Advects nf fields living on lattice g through the velocity `vel(i, j, k)` at its nodes (cells
/// per unit of h, i.e. the trace is x − h·vel): dst = src(x − h·vel) (semi-Lagrangian), or with
/// MacCormack the forward result in tmp, then dst = clamp(tmp + ½(src − tmp(x + h·vel)), the
/// min/max of the nodes the forward trace read). src must not alias dst or tmp.
template <class Vel>
void advect_fields(const Lattice& g, int nf, const double* const* src, double* const* dst,
                   double* const* tmp, double h, bool maccormack, const Vel& vel) {
  double* const* first = maccormack ? tmp : dst;
  for_rows(g.rows(), [&](size_t row) {
    const int j = int(row % size_t(g.sy)), k = int(row / size_t(g.sy));
    const double y = j + g.oy, z = k + g.oz;
    for (int i = 0; i < g.sx; ++i) {
      const double x = i + g.ox;
      const Vec3 d = vel(i, j, k) * h;
      const size_t n = row * size_t(g.sx) + size_t(i);
      const Stencil s = stencil(g, x - d.x, y - d.y, z - d.z);
      for (int f = 0; f < nf; ++f) first[f][n] = s.eval(src[f]);
    }
  });
  if (!maccormack) return;
  for_rows(g.rows(), [&](size_t row) {
    const int j = int(row % size_t(g.sy)), k = int(row / size_t(g.sy));
    const double y = j + g.oy, z = k + g.oz;
    for (int i = 0; i < g.sx; ++i) {
      const double x = i + g.ox;
      const Vec3 d = vel(i, j, k) * h;
      const size_t n = row * size_t(g.sx) + size_t(i);
      const Stencil ahead = stencil(g, x + d.x, y + d.y, z + d.z);
      const Stencil behind = stencil(g, x - d.x, y - d.y, z - d.z);
      for (int f = 0; f < nf; ++f) {
        const double back = ahead.eval(tmp[f]);
        double lo, hi;
        behind.bounds(src[f], lo, hi);
        dst[f][n] = std::clamp(tmp[f][n] + 0.5 * (src[f][n] - back), lo, hi);
      }
    }
  });
}

/// Implicit diffusion (I − a·∇²)·x = x0, a = ν·h/dx², by `iterations` Jacobi sweeps on lattice g
/// (Neumann at the lattice's ends). x holds x0 on entry and the result on exit; x0 and ping are
/// scratch of the same size.
void diffuse_field(const Lattice& g, double a, int iterations, std::vector<double>& x,
                   std::vector<double>& x0, std::vector<double>& ping) {
  x0 = x;
  const size_t sx = size_t(g.sx), plane = sx * size_t(g.sy);
  for (int it = 0; it < iterations; ++it) {
    const double* in = x.data();
    double* out = ping.data();
    for_rows(g.rows(), [&](size_t row) {
      const int j = int(row % size_t(g.sy)), k = int(row / size_t(g.sy));
      for (int i = 0; i < g.sx; ++i) {
        const size_t c = row * sx + size_t(i);
        double s = 0;
        int n = 0;
        if (i > 0) s += in[c - 1], ++n;
        if (i + 1 < g.sx) s += in[c + 1], ++n;
        if (j > 0) s += in[c - sx], ++n;
        if (j + 1 < g.sy) s += in[c + sx], ++n;
        if (k > 0) s += in[c - plane], ++n;
        if (k + 1 < g.sz) s += in[c + plane], ++n;
        out[c] = (x0[c] + a * s) / (1 + a * n);
      }
    });
    x.swap(ping);
  }
}

}  // namespace

Vec3 GridFluid::curl_at(int i, int j, int k) const {
  const int nx = o_.nx, ny = o_.ny, nz = o_.nz;
  const size_t snx = size_t(nx);
  // Cell-centred velocity components: the mean of the two faces.
  auto uc = [&](int a, int b, int c) {
    const size_t f = size_t(a) + (snx + 1) * (size_t(b) + size_t(ny) * size_t(c));
    return 0.5 * (u_[f] + u_[f + 1]);
  };
  auto vc = [&](int a, int b, int c) {
    const size_t f = size_t(a) + snx * (size_t(b) + size_t(ny + 1) * size_t(c));
    return 0.5 * (v_[f] + v_[f + snx]);
  };
  auto wc = [&](int a, int b, int c) {
    if (!three_d_) return 0.0;
    const size_t f = cell_index(a, b, c);
    return 0.5 * (w_[f] + w_[f + snx * size_t(ny)]);
  };
  const int i0 = std::max(i - 1, 0), i1 = std::min(i + 1, nx - 1);
  const int j0 = std::max(j - 1, 0), j1 = std::min(j + 1, ny - 1);
  const int k0 = std::max(k - 1, 0), k1 = std::min(k + 1, nz - 1);
  const double sx = i1 > i0 ? 1 / ((i1 - i0) * o_.dx) : 0;
  const double sy = j1 > j0 ? 1 / ((j1 - j0) * o_.dx) : 0;
  const double sz = k1 > k0 ? 1 / ((k1 - k0) * o_.dx) : 0;
  const double dwdy = (wc(i, j1, k) - wc(i, j0, k)) * sy, dvdz = (vc(i, j, k1) - vc(i, j, k0)) * sz;
  const double dudz = (uc(i, j, k1) - uc(i, j, k0)) * sz, dwdx = (wc(i1, j, k) - wc(i0, j, k)) * sx;
  const double dvdx = (vc(i1, j, k) - vc(i0, j, k)) * sx, dudy = (uc(i, j1, k) - uc(i, j0, k)) * sy;
  return {dwdy - dvdz, dudz - dwdx, dvdx - dudy};
}

void GridFluid::advect(double h) {
  const int nx = o_.nx, ny = o_.ny, nz = o_.nz;
  const bool mac = o_.advection == FluidAdvection::MacCormack;
  const Lattice lc{nx, ny, nz, 0.5, 0.5, 0.5}, lu{nx + 1, ny, nz, 0, 0.5, 0.5},
      lv{nx, ny + 1, nz, 0.5, 0, 0.5}, lw{nx, ny, nz + 1, 0.5, 0.5, 0};
  const double inv_dx = 1 / o_.dx;
  // The velocity of the substep's start (cells per second) at the nodes of each lattice: what
  // trilinear sampling gives there (the node's own component, the mean of the 2 or 4 nearest faces
  // for the others, the nearest inside at the domain's edge), without the general sampler's work.
  const size_t snx = size_t(nx), uplane = (snx + 1) * size_t(ny), vrow = snx,
               vplane = snx * size_t(ny + 1), plane = snx * size_t(ny);
  auto U = [&](int i, int j, int k) { return u_[size_t(i) + (snx + 1) * size_t(j) + uplane * k]; };
  auto V = [&](int i, int j, int k) { return v_[size_t(i) + vrow * size_t(j) + vplane * k]; };
  auto W = [&](int i, int j, int k) { return w_[size_t(i) + snx * size_t(j) + plane * k]; };
  auto lo = [](int i) { return std::max(i - 1, 0); };
  auto hi = [](int i, int n) { return std::min(i, n - 1); };
  auto vel_cell = [&](int i, int j, int k) {
    return Vec3{U(i, j, k) + U(i + 1, j, k), V(i, j, k) + V(i, j + 1, k),
                three_d_ ? W(i, j, k) + W(i, j, k + 1) : 0.0} *
           (0.5 * inv_dx);
  };
  auto vel_u = [&](int i, int j, int k) {
    const int a = lo(i), b = hi(i, nx);
    const double v = V(a, j, k) + V(b, j, k) + V(a, j + 1, k) + V(b, j + 1, k);
    const double w = three_d_ ? W(a, j, k) + W(b, j, k) + W(a, j, k + 1) + W(b, j, k + 1) : 0.0;
    return Vec3{U(i, j, k), 0.25 * v, 0.25 * w} * inv_dx;
  };
  auto vel_v = [&](int i, int j, int k) {
    const int a = lo(j), b = hi(j, ny);
    const double u = U(i, a, k) + U(i + 1, a, k) + U(i, b, k) + U(i + 1, b, k);
    const double w = three_d_ ? W(i, a, k) + W(i, b, k) + W(i, a, k + 1) + W(i, b, k + 1) : 0.0;
    return Vec3{0.25 * u, V(i, j, k), 0.25 * w} * inv_dx;
  };
  auto vel_w = [&](int i, int j, int k) {
    const int a = lo(k), b = hi(k, nz);
    const double u = U(i, j, a) + U(i + 1, j, a) + U(i, j, b) + U(i + 1, j, b);
    const double v = V(i, j, a) + V(i, j + 1, a) + V(i, j, b) + V(i, j + 1, b);
    return Vec3{0.25 * u, 0.25 * v, W(i, j, k)} * inv_dx;
  };
  {
    const double* src[3] = {density_.data(), temperature_.data(), fuel_.data()};
    double* dst[3] = {s_new_[0].data(), s_new_[1].data(), s_new_[2].data()};
    double* tmp[3] = {s_tmp_[0].data(), s_tmp_[1].data(), s_tmp_[2].data()};
    advect_fields(lc, 3, src, dst, tmp, h, mac, vel_cell);
  }
  {
    const double* src[1] = {u_.data()};
    double* dst[1] = {u_new_.data()};
    double* tmp[1] = {u_tmp_.data()};
    advect_fields(lu, 1, src, dst, tmp, h, mac, vel_u);
  }
  {
    const double* src[1] = {v_.data()};
    double* dst[1] = {v_new_.data()};
    double* tmp[1] = {v_tmp_.data()};
    advect_fields(lv, 1, src, dst, tmp, h, mac, vel_v);
  }
  if (three_d_) {
    const double* src[1] = {w_.data()};
    double* dst[1] = {w_new_.data()};
    double* tmp[1] = {w_tmp_.data()};
    advect_fields(lw, 1, src, dst, tmp, h, mac, vel_w);
    w_.swap(w_new_);
  }
  u_.swap(u_new_);
  v_.swap(v_new_);
  density_.swap(s_new_[0]);
  temperature_.swap(s_new_[1]);
  fuel_.swap(s_new_[2]);
}

void GridFluid::add_forces(double h) {
  const int nx = o_.nx, ny = o_.ny, nz = o_.nz;
  const size_t snx = size_t(nx), plane = snx * size_t(ny);
  // Buoyancy on the inner y faces between two fluid cells (Fedkiw, Stam & Jensen 2001, eq. 8).
  const double alpha = o_.buoyancy_alpha, beta = o_.buoyancy_beta, ta = o_.ambient_temperature;
  if (alpha != 0 || beta != 0) {
    for_rows(size_t(ny + 1) * nz, [&](size_t row) {
      const int j = int(row % size_t(ny + 1)), k = int(row / size_t(ny + 1));
      if (j == 0 || j == ny) return;
      for (int i = 0; i < nx; ++i) {
        const size_t a = cell_index(i, j - 1, k), b = a + snx;
        if (solid_[a] || solid_[b]) continue;
        const double rho = 0.5 * (density_[a] + density_[b]);
        const double t = 0.5 * (temperature_[a] + temperature_[b]) - ta;
        v_[row * snx + size_t(i)] += h * (beta * t - alpha * rho);
      }
    });
  }
  if (!(o_.vorticity > 0)) return;
  // Vorticity confinement (Fedkiw, Stam & Jensen 2001, eq. 9–11): ω at the cells, N = ∇|ω| /
  // |∇|ω||, the force ε·dx·(N × ω) at the cells, then averaged onto the faces.
  auto& om = s_new_;
  auto& force = s_tmp_;
  for_rows(size_t(ny) * nz, [&](size_t row) {
    const int j = int(row % size_t(ny)), k = int(row / size_t(ny));
    for (int i = 0; i < nx; ++i) {
      const Vec3 w = curl_at(i, j, k);
      const size_t c = row * snx + size_t(i);
      om[0][c] = w.x, om[1][c] = w.y, om[2][c] = w.z;
    }
  });
  auto mag = [&](size_t c) {
    return std::sqrt(om[0][c] * om[0][c] + om[1][c] * om[1][c] + om[2][c] * om[2][c]);
  };
  const double eps_dx = o_.vorticity * o_.dx;
  for_rows(size_t(ny) * nz, [&](size_t row) {
    const int j = int(row % size_t(ny)), k = int(row / size_t(ny));
    for (int i = 0; i < nx; ++i) {
      const size_t c = row * snx + size_t(i);
      force[0][c] = force[1][c] = force[2][c] = 0;
      if (solid_[c]) continue;
      const int i0 = std::max(i - 1, 0), i1 = std::min(i + 1, nx - 1);
      const int j0 = std::max(j - 1, 0), j1 = std::min(j + 1, ny - 1);
      const int k0 = std::max(k - 1, 0), k1 = std::min(k + 1, nz - 1);
      // The grid spacing cancels in N; only the index distance of one-sided edges matters.
      const Vec3 eta{
          i1 > i0 ? (mag(cell_index(i1, j, k)) - mag(cell_index(i0, j, k))) / (i1 - i0) : 0.0,
          j1 > j0 ? (mag(cell_index(i, j1, k)) - mag(cell_index(i, j0, k))) / (j1 - j0) : 0.0,
          k1 > k0 ? (mag(cell_index(i, j, k1)) - mag(cell_index(i, j, k0))) / (k1 - k0) : 0.0};
      const double len = length(eta);
      if (!(len > 1e-300)) continue;
      const Vec3 f = cross(eta / len, Vec3{om[0][c], om[1][c], om[2][c]}) * eps_dx;
      force[0][c] = f.x, force[1][c] = f.y, force[2][c] = f.z;
    }
  });
  // Onto the inner faces between two fluid cells.
  for_rows(size_t(ny) * nz, [&](size_t row) {
    const size_t c0 = row * snx;
    for (int i = 1; i < nx; ++i) {
      const size_t a = c0 + size_t(i) - 1, b = a + 1;
      if (!solid_[a] && !solid_[b])
        u_[row * (snx + 1) + size_t(i)] += h * 0.5 * (force[0][a] + force[0][b]);
    }
  });
  for_rows(size_t(ny + 1) * nz, [&](size_t row) {
    const int j = int(row % size_t(ny + 1)), k = int(row / size_t(ny + 1));
    if (j == 0 || j == ny) return;
    for (int i = 0; i < nx; ++i) {
      const size_t a = cell_index(i, j - 1, k), b = a + snx;
      if (!solid_[a] && !solid_[b])
        v_[row * snx + size_t(i)] += h * 0.5 * (force[1][a] + force[1][b]);
    }
  });
  if (!three_d_) return;
  for_rows(size_t(ny) * (nz + 1), [&](size_t row) {
    const int k = int(row / size_t(ny));
    if (k == 0 || k == nz) return;
    for (int i = 0; i < nx; ++i) {
      const size_t f = row * snx + size_t(i), a = f - plane, b = f;  // cells below and above
      if (!solid_[a] && !solid_[b]) w_[f] += h * 0.5 * (force[2][a] + force[2][b]);
    }
  });
}

void GridFluid::diffuse(double h) {
  const int nx = o_.nx, ny = o_.ny, nz = o_.nz;
  const int iters = o_.diffusion_iterations;
  if (o_.viscosity > 0) {
    const double a = o_.viscosity * h / (o_.dx * o_.dx);
    diffuse_field({nx + 1, ny, nz, 0, 0.5, 0.5}, a, iters, u_, u_new_, u_tmp_);
    diffuse_field({nx, ny + 1, nz, 0.5, 0, 0.5}, a, iters, v_, v_new_, v_tmp_);
    if (three_d_) diffuse_field({nx, ny, nz + 1, 0.5, 0.5, 0}, a, iters, w_, w_new_, w_tmp_);
  }
  if (o_.scalar_diffusion > 0) {
    const double a = o_.scalar_diffusion * h / (o_.dx * o_.dx);
    const Lattice lc{nx, ny, nz, 0.5, 0.5, 0.5};
    diffuse_field(lc, a, iters, density_, s_new_[0], s_tmp_[0]);
    diffuse_field(lc, a, iters, temperature_, s_new_[1], s_tmp_[1]);
    diffuse_field(lc, a, iters, fuel_, s_new_[2], s_tmp_[2]);
  }
}

void GridFluid::react(double h) {
  if (!(o_.burn_rate > 0) && !(o_.cooling_rate > 0)) return;
  const double burnt_fraction = 1 - std::exp(-o_.burn_rate * h);
  const double keep_heat = std::exp(-o_.cooling_rate * h), ta = o_.ambient_temperature;
  const size_t snx = size_t(o_.nx);
  for_rows(size_t(o_.ny) * o_.nz, [&](size_t row) {
    for (size_t c = row * snx, e = c + snx; c < e; ++c) {
      const double burnt = fuel_[c] * burnt_fraction;
      fuel_[c] -= burnt;
      density_[c] += o_.smoke_per_fuel * burnt;
      temperature_[c] = ta + (temperature_[c] + o_.heat_release * burnt - ta) * keep_heat;
    }
  });
}

void GridFluid::project_now() {
  enforce_boundaries();
  const int nx = o_.nx, ny = o_.ny, nz = o_.nz;
  const size_t snx = size_t(nx), plane = snx * size_t(ny), rows = size_t(ny) * nz;
  const size_t urow = snx + 1;
  // The matrix and the right-hand side b = −(Σ outgoing face velocities) (= −dx·∇·u, m/s).
  auto fluid = [&](int i, int j, int k) { return !solid_[cell_index(i, j, k)]; };
  const bool any_open = open(0) || open(1) || open(2) || open(3) || open(4) || open(5);
  const double fluid_cells = sum_rows(rows, [&](size_t row) {
    const int j = int(row % size_t(ny)), k = int(row / size_t(ny));
    double count = 0;
    for (int i = 0; i < nx; ++i) {
      const size_t c = row * snx + size_t(i);
      adiag_[c] = ax_[c] = ay_[c] = az_[c] = 0;
      rhs_[c] = 0;
      if (solid_[c]) {
        psi_[c] = 0;
        continue;
      }
      count += 1;
      double d = 0;
      auto side = [&](bool inside, bool neighbour_fluid, int open_side) {
        if (inside ? neighbour_fluid : open(open_side)) d += 1;
      };
      side(i > 0, i > 0 && fluid(i - 1, j, k), 0);
      side(i + 1 < nx, i + 1 < nx && fluid(i + 1, j, k), 1);
      side(j > 0, j > 0 && fluid(i, j - 1, k), 2);
      side(j + 1 < ny, j + 1 < ny && fluid(i, j + 1, k), 3);
      side(k > 0, k > 0 && fluid(i, j, k - 1), 4);
      side(k + 1 < nz, k + 1 < nz && fluid(i, j, k + 1), 5);
      adiag_[c] = float(d);
      if (i + 1 < nx && fluid(i + 1, j, k)) ax_[c] = -1;
      if (j + 1 < ny && fluid(i, j + 1, k)) ay_[c] = -1;
      if (k + 1 < nz && fluid(i, j, k + 1)) az_[c] = -1;
      const size_t fu = row * urow + size_t(i),
                   fv = size_t(i) + snx * (size_t(j) + size_t(ny + 1) * k);
      double flux = u_[fu + 1] - u_[fu] + v_[fv + snx] - v_[fv];
      if (three_d_) flux += w_[c + plane] - w_[c];
      rhs_[c] = -flux;
    }
    return count;
  });
  if (!(fluid_cells > 0)) {
    max_divergence_ = pressure_residual_ = 0;
    pressure_iterations_ = 0;
    return;
  }
  if (!any_open) {
    // A closed domain: the Neumann problem is solvable only for Σb = 0, which holds up to
    // rounding (and solids' inflow); remove the mean so that CG sees a consistent system.
    const double mean = sum_rows(rows,
                                 [&](size_t row) {
                                   double s = 0;
                                   for (size_t c = row * snx, e = c + snx; c < e; ++c) s += rhs_[c];
                                   return s;
                                 }) /
                        fluid_cells;
    for_rows(rows, [&](size_t row) {
      for (size_t c = row * snx, e = c + snx; c < e; ++c)
        if (!solid_[c]) rhs_[c] -= mean;
    });
  }
  const grid_fluid_detail::PoissonMatrix A{nx, ny, nz, &adiag_, &ax_, &ay_, &az_};
  const grid_fluid_detail::Mic0Factor precon{&precon_, &pbx_, &pby_, &pbz_};
  grid_fluid_detail::build_mic0(A, precon);
  const auto result = grid_fluid_detail::solve_pcg(A, precon, rhs_, psi_, o_.pressure_tolerance,
                                                   o_.pressure_max_iterations, cg_r_, cg_z_, cg_s_,
                                                   cg_q_, o_.pressure_max_divergence * o_.dx);
  pressure_iterations_ = result.iterations;
  pressure_residual_ = result.residual;
  // u −= ∇ψ on every face with fluid on one side and fluid or an open side on the other.
  auto psi = [&](long c) { return c >= 0 ? psi_[size_t(c)] : 0.0; };  // −1: the open ghost
  auto update = [&](double& f, long a, long b, bool a_ok, bool b_ok) {
    if (a_ok && b_ok && (a < 0 || !solid_[size_t(a)]) && (b < 0 || !solid_[size_t(b)]) &&
        (a >= 0 || b >= 0))
      f -= psi(b) - psi(a);
  };
  for_rows(rows, [&](size_t row) {
    const long c0 = long(row * snx);
    for (int i = 0; i <= nx; ++i)
      update(u_[row * urow + size_t(i)], i > 0 ? c0 + i - 1 : -1, i < nx ? c0 + i : -1,
             i > 0 || open(0), i < nx || open(1));
  });
  for_rows(size_t(ny + 1) * nz, [&](size_t row) {
    const int j = int(row % size_t(ny + 1)), k = int(row / size_t(ny + 1));
    for (int i = 0; i < nx; ++i)
      update(v_[row * snx + size_t(i)], j > 0 ? long(cell_index(i, j - 1, k)) : -1,
             j < ny ? long(cell_index(i, j, k)) : -1, j > 0 || open(2), j < ny || open(3));
  });
  if (three_d_) {
    for_rows(size_t(ny) * (nz + 1), [&](size_t row) {
      const int j = int(row % size_t(ny)), k = int(row / size_t(ny));
      for (int i = 0; i < nx; ++i)
        update(w_[row * snx + size_t(i)], k > 0 ? long(cell_index(i, j, k - 1)) : -1,
               k < nz ? long(cell_index(i, j, k)) : -1, k > 0 || open(4), k < nz || open(5));
    });
  }
  max_divergence_ =
      max_rows(rows,
               [&](size_t row) {
                 const int j = int(row % size_t(ny)), k = int(row / size_t(ny));
                 double m = 0;
                 for (int i = 0; i < nx; ++i) {
                   const size_t c = row * snx + size_t(i);
                   if (solid_[c]) continue;
                   const size_t fu = row * urow + size_t(i),
                                fv = size_t(i) + snx * (size_t(j) + size_t(ny + 1) * k);
                   double flux = u_[fu + 1] - u_[fu] + v_[fv + snx] - v_[fv];
                   if (three_d_) flux += w_[c + plane] - w_[c];
                   m = std::max(m, std::abs(flux));
                 }
                 return m;
               }) /
      o_.dx;
}

}  // namespace kinema
