// SphFluid's substeps: the weakly compressible one (Müller et al. 2003 forces, symplectic Euler)
// and the position-based one (Macklin & Müller 2013). See kinema/fluid/sph.h for the method.
// Every pass runs over blocks of particles; a particle's sums are accumulated by the one thread
// that owns it, in its neighbour list's fixed (cell-sorted) order, so the bits do not depend on
// the thread count.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "kinema/core/error.h"
#include "sph_impl.h"
#include "sph_parallel.h"

namespace kinema {

using sph_detail::for_blocks;

namespace {

constexpr std::size_t kBlock = 256;
constexpr double kInf = std::numeric_limits<double>::infinity();

double sq(double x) { return x * x; }

// Normal velocity v_n → −e·v_n when moving into the surface; the tangential part loses
// friction·|Δv_n| (Coulomb) and stops rather than reverses.
void respond(Vec3& v, const Vec3& n, double restitution, double friction) {
  const double vn = dot(v, n);
  if (vn >= 0) return;
  const double dvn = -(1 + restitution) * vn;
  Vec3 vt = v - n * vn;
  const double t = length(vt);
  vt = t <= friction * dvn ? Vec3{0, 0, 0} : vt * (1 - friction * dvn / t);
  v = vt - n * (restitution * vn);
}

// The domain as the last container: x clamped into [lo, hi] on each axis, v responding (no
// bounce, no friction).
void keep_inside(const Vec3& lo, const Vec3& hi, int dims, Vec3& x, Vec3* v) {
  for (int a = 0; a < dims; ++a) {
    Vec3 n{0, 0, 0};
    if (x[a] < lo[a]) {
      x = a == 0 ? Vec3{lo.x, x.y, x.z} : a == 1 ? Vec3{x.x, lo.y, x.z} : Vec3{x.x, x.y, lo.z};
      n = a == 0 ? Vec3{1, 0, 0} : a == 1 ? Vec3{0, 1, 0} : Vec3{0, 0, 1};
    } else if (x[a] > hi[a]) {
      x = a == 0 ? Vec3{hi.x, x.y, x.z} : a == 1 ? Vec3{x.x, hi.y, x.z} : Vec3{x.x, x.y, hi.z};
      n = a == 0 ? Vec3{-1, 0, 0} : a == 1 ? Vec3{0, -1, 0} : Vec3{0, 0, -1};
    } else {
      continue;
    }
    if (v) respond(*v, n, 0, 0);
  }
}

}  // namespace

void SphFluid::Impl::collide(std::size_t i, double* x, double* y, double* z, double* u, double* v,
                             double* w) const {
  Vec3 p{x[i], y[i], z[i]};
  Vec3 vel = u ? Vec3{u[i], v[i], w[i]} : Vec3{0, 0, 0};
  for (const Collider& c : colliders) {
    Vec3 surface, normal;
    if (!collider_contact(c, p, 0, surface, normal)) continue;
    p = surface;
    if (o.dimensions == 2) p.z = 0, normal.z = 0;
    if (u) respond(vel, normal, c.restitution, c.friction);
  }
  keep_inside(o.domain_min, o.domain_max, o.dimensions, p, u ? &vel : nullptr);
  x[i] = p.x, y[i] = p.y, z[i] = o.dimensions == 3 ? p.z : 0.0;
  if (u) u[i] = vel.x, v[i] = vel.y, w[i] = o.dimensions == 3 ? vel.z : 0.0;
}

void SphFluid::Impl::sort_particles(bool predicted) {
  const std::size_t n = px.size();
  grid.sort(predicted ? sx.data() : px.data(), predicted ? sy.data() : py.data(),
            predicted ? sz.data() : pz.data(), n, order, key);
  tmp.resize(n);
  const auto permute = [&](std::vector<double>& a) {
    for (std::size_t k = 0; k < n; ++k) tmp[k] = a[order[k]];
    a.swap(tmp);
  };
  for (auto* a : {&px, &py, &pz, &vx, &vy, &vz}) permute(*a);
  if (predicted)
    for (auto* a : {&sx, &sy, &sz}) permute(*a);
  std::vector<std::uint32_t> ids(n);
  for (std::size_t k = 0; k < n; ++k) ids[k] = id[order[k]];
  id.swap(ids);
}

void SphFluid::Impl::find_all(const double* qx, const double* qy, const double* qz) {
  const std::size_t n = px.size();
  sph_detail::find_neighbours(grid, qx, qy, qz, n, qx, qy, qz, k.h, nb, arena_ptr(), threads());
  sph_detail::find_neighbours(bgrid, qx, qy, qz, n, bx.data(), by.data(), bz.data(), k.h, nbb,
                              arena_ptr(), threads());
}

void SphFluid::Impl::density_pass(const double* qx, const double* qy, const double* qz) {
  for_blocks(arena_ptr(), threads(), px.size(), kBlock, [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) {
      double s = 0;
      for (std::uint32_t q = nb.start[i]; q < nb.start[i + 1]; ++q) {
        const std::uint32_t j = nb.index[q];
        s += mass * k.w(sq(qx[i] - qx[j]) + sq(qy[i] - qy[j]) + sq(qz[i] - qz[j]));
      }
      for (std::uint32_t q = nbb.start[i]; q < nbb.start[i + 1]; ++q) {
        const std::uint32_t j = nbb.index[q];
        s += bpsi[j] * k.w(sq(qx[i] - bx[j]) + sq(qy[i] - by[j]) + sq(qz[i] - bz[j]));
      }
      rho[i] = s;
      p[i] = std::max(0.0, tait_b * (std::pow(s / o.rest_density, o.tait_gamma) - 1));
    }
  });
}

// XSPH: v_i += ε Σ_j (m/ρ_j)(v_j − v_i) W_ij, read from v, written through w, copied back.
void SphFluid::Impl::xsph_pass() {
  if (o.xsph <= 0) return;
  const std::size_t n = px.size();
  wx.resize(n), wy.resize(n), wz.resize(n);
  for_blocks(arena_ptr(), threads(), n, kBlock, [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) {
      double sx_ = 0, sy_ = 0, sz_ = 0;
      for (std::uint32_t q = nb.start[i]; q < nb.start[i + 1]; ++q) {
        const std::uint32_t j = nb.index[q];
        const double f =
            mass / rho[j] * k.w(sq(px[i] - px[j]) + sq(py[i] - py[j]) + sq(pz[i] - pz[j]));
        sx_ += f * (vx[j] - vx[i]), sy_ += f * (vy[j] - vy[i]), sz_ += f * (vz[j] - vz[i]);
      }
      wx[i] = vx[i] + o.xsph * sx_, wy[i] = vy[i] + o.xsph * sy_, wz[i] = vz[i] + o.xsph * sz_;
    }
  });
  vx.swap(wx), vy.swap(wy), vz.swap(wz);
}

double SphFluid::Impl::substep_wcsph(double remaining) {
  const std::size_t n = px.size();
  if (n == 0) return remaining;
  sort_particles(false);
  find_all(px.data(), py.data(), pz.data());
  density_pass(px.data(), py.data(), pz.data());
  ax.resize(n), ay.resize(n), az.resize(n);
  const std::size_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<double> amax(blocks, 0), vmax(blocks, 0);
  const double st_threshold = 0.2 / k.h;                   // |∇c| of a surface is about 1/h
  const double av = 2 * o.artificial_viscosity * c * k.h;  // 2: ρ̄ = (ρ_i + ρ_j)/2
  for_blocks(arena_ptr(), threads(), n, kBlock, [&](std::size_t b, std::size_t e) {
    double am = 0, vm = 0;
    for (std::size_t i = b; i < e; ++i) {
      const double pi = p[i] / (rho[i] * rho[i]);
      double fx = 0, fy = 0, fz = 0;           // pressure + viscosity, per unit mass
      double nx = 0, ny = 0, nz = 0, lap = 0;  // colour field gradient and Laplacian
      for (std::uint32_t q = nb.start[i]; q < nb.start[i + 1]; ++q) {
        const std::uint32_t j = nb.index[q];
        const double dx = px[i] - px[j], dy = py[i] - py[j], dz = pz[i] - pz[j];
        const double r2 = dx * dx + dy * dy + dz * dz;
        if (o.surface_tension > 0) {
          const double vj = mass / rho[j], g6 = vj * k.poly6_grad(r2);
          nx += g6 * dx, ny += g6 * dy, nz += g6 * dz;
          lap += vj * k.poly6_lap(r2);
        }
        if (j == i) continue;
        const double r = std::sqrt(r2);
        const double g = -mass * (pi + p[j] / (rho[j] * rho[j])) * k.grad_over_r(r);
        const double visc = o.viscosity * mass / (rho[i] * rho[j]) * k.visc_lap * (k.h - r);
        // Monaghan's artificial viscosity, approaching pairs only: Π = −α c h (v_ij·x_ij) /
        // (ρ̄ (r² + 0.01h²)), a_i −= m Π ∇W.
        const double vr = (vx[i] - vx[j]) * dx + (vy[i] - vy[j]) * dy + (vz[i] - vz[j]) * dz;
        const double art =
            vr < 0 ? mass * av * vr / ((rho[i] + rho[j]) * (r2 + 0.01 * k.h2)) * k.grad_over_r(r)
                   : 0.0;
        fx += (g + art) * dx + visc * (vx[j] - vx[i]);
        fy += (g + art) * dy + visc * (vy[j] - vy[i]);
        fz += (g + art) * dz + visc * (vz[j] - vz[i]);
      }
      // Boundary particles: the pressure mirrored (p_b = p_i, ρ_b = ρ_i), mass Ψ_b.
      for (std::uint32_t q = nbb.start[i]; q < nbb.start[i + 1]; ++q) {
        const std::uint32_t j = nbb.index[q];
        const double dx = px[i] - bx[j], dy = py[i] - by[j], dz = pz[i] - bz[j];
        const double g = -bpsi[j] * 2 * pi * k.grad_over_r(std::sqrt(dx * dx + dy * dy + dz * dz));
        fx += g * dx, fy += g * dy, fz += g * dz;
      }
      const double nn = std::sqrt(nx * nx + ny * ny + nz * nz);
      if (o.surface_tension > 0 && nn > st_threshold) {
        const double s = -o.surface_tension * lap / (nn * rho[i]);
        fx += s * nx, fy += s * ny, fz += s * nz;
      }
      ax[i] = fx + o.gravity.x, ay[i] = fy + o.gravity.y, az[i] = fz + o.gravity.z;
      am = std::max(am, ax[i] * ax[i] + ay[i] * ay[i] + az[i] * az[i]);
      vm = std::max(vm, vx[i] * vx[i] + vy[i] * vy[i] + vz[i] * vz[i]);
      if (!std::isfinite(ax[i] + ay[i] + az[i])) am = kInf;
    }
    amax[b / kBlock] = am, vmax[b / kBlock] = vm;
  });
  const double a_max = std::sqrt(*std::max_element(amax.begin(), amax.end()));
  const double v_max = std::sqrt(*std::max_element(vmax.begin(), vmax.end()));
  if (!std::isfinite(a_max) || !std::isfinite(v_max))
    throw Error("sph", "step",
                "the simulation diverged (a non-finite acceleration or velocity) at t = " +
                    std::to_string(time));
  double dt_max = o.cfl * k.h / (c + v_max);
  if (a_max > 0) dt_max = std::min(dt_max, 0.25 * std::sqrt(k.h / a_max));
  const double steps = std::ceil(remaining / dt_max * (1 - 1e-12));
  if (steps > 1e9) throw Error("sph", "step", "the time step rule asks for over 10^9 substeps");
  const double dt = remaining / std::max(1.0, steps);
  for_blocks(arena_ptr(), threads(), n, kBlock, [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i)
      vx[i] += dt * ax[i], vy[i] += dt * ay[i], vz[i] += dt * az[i];
  });
  xsph_pass();
  for_blocks(arena_ptr(), threads(), n, kBlock, [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) {
      px[i] += dt * vx[i], py[i] += dt * vy[i], pz[i] += dt * vz[i];
      collide(i, px.data(), py.data(), pz.data(), vx.data(), vy.data(), vz.data());
    }
  });
  return dt;
}

double SphFluid::Impl::substep_pbf(double remaining) {
  const std::size_t n = px.size();
  if (n == 0) return remaining;
  double v_max = 0;
  for (std::size_t i = 0; i < n; ++i) v_max = std::max(v_max, sq(vx[i]) + sq(vy[i]) + sq(vz[i]));
  v_max = std::sqrt(v_max);
  if (!std::isfinite(v_max))
    throw Error("sph", "step",
                "the simulation diverged (a non-finite velocity) at t = " + std::to_string(time));
  // Gravity alone may move a particle by |g|Δt² ≤ 0.1·cfl·h; the velocity rule (v_max Δt ≤ h)
  // is only a guard against tunnelling: a Courant rule on v here would feed back (PBF turns
  // the constraint error left at the end of a substep into velocity ∝ 1/Δt, so smaller substeps
  // would mean faster jitter and smaller substeps still).
  double dt_max = v_max > 0 ? k.h / v_max : kInf;
  const double g = length(o.gravity);
  if (g > 0) dt_max = std::min(dt_max, std::sqrt(0.1 * o.cfl * k.h / g));
  const double steps = std::isfinite(dt_max) ? std::ceil(remaining / dt_max * (1 - 1e-12)) : 1;
  if (steps > 1e9) throw Error("sph", "step", "the time step rule asks for over 10^9 substeps");
  const double dt = remaining / std::max(1.0, steps);

  // Predict: x* = x + Δt(v + Δt g), kept out of the colliders.
  sx.resize(n), sy.resize(n), sz.resize(n);
  for_blocks(arena_ptr(), threads(), n, kBlock, [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) {
      vx[i] += dt * o.gravity.x, vy[i] += dt * o.gravity.y, vz[i] += dt * o.gravity.z;
      sx[i] = px[i] + dt * vx[i], sy[i] = py[i] + dt * vy[i], sz[i] = pz[i] + dt * vz[i];
      collide(i, sx.data(), sy.data(), sz.data(), nullptr, nullptr, nullptr);
    }
  });
  sort_particles(true);
  find_all(sx.data(), sy.data(), sz.data());
  lambda.resize(n), ax.resize(n), ay.resize(n), az.resize(n);
  const double vol = mass / o.rest_density, eps = o.pbf_relaxation * pbf_s0;
  const double max_move = 0.5 * o.spacing;
  for (int it = 0; it < o.pbf_iterations; ++it) {
    density_pass(sx.data(), sy.data(), sz.data());
    // λ_i = −C_i / (|∇_i C_i|² + Σ_j |∇_j C_i|² + ε), C_i = max(ρ_i/ρ0 − 1, 0).
    for_blocks(arena_ptr(), threads(), n, kBlock, [&](std::size_t b, std::size_t e) {
      for (std::size_t i = b; i < e; ++i) {
        double gx = 0, gy = 0, gz = 0, s2 = 0;
        for (std::uint32_t q = nb.start[i]; q < nb.start[i + 1]; ++q) {
          const std::uint32_t j = nb.index[q];
          const double dx = sx[i] - sx[j], dy = sy[i] - sy[j], dz = sz[i] - sz[j];
          const double f = vol * k.grad_over_r(std::sqrt(dx * dx + dy * dy + dz * dz));
          gx += f * dx, gy += f * dy, gz += f * dz;
          s2 += f * f * (dx * dx + dy * dy + dz * dz);
        }
        for (std::uint32_t q = nbb.start[i]; q < nbb.start[i + 1]; ++q) {
          const std::uint32_t j = nbb.index[q];
          const double dx = sx[i] - bx[j], dy = sy[i] - by[j], dz = sz[i] - bz[j];
          const double f =
              bpsi[j] / o.rest_density * k.grad_over_r(std::sqrt(dx * dx + dy * dy + dz * dz));
          gx += f * dx, gy += f * dy, gz += f * dz;
        }
        const double C = std::max(0.0, rho[i] / o.rest_density - 1);
        lambda[i] = -C / (gx * gx + gy * gy + gz * gz + s2 + eps);
      }
    });
    // Δx_i = (m/ρ0) Σ_j (λ_i + λ_j + s_corr)∇W_ij + Σ_b (Ψ_b/ρ0) λ_i ∇W_ib.
    for_blocks(arena_ptr(), threads(), n, kBlock, [&](std::size_t b, std::size_t e) {
      for (std::size_t i = b; i < e; ++i) {
        double dx_ = 0, dy_ = 0, dz_ = 0;
        for (std::uint32_t q = nb.start[i]; q < nb.start[i + 1]; ++q) {
          const std::uint32_t j = nb.index[q];
          if (j == i) continue;
          const double dx = sx[i] - sx[j], dy = sy[i] - sy[j], dz = sz[i] - sz[j];
          const double r2 = dx * dx + dy * dy + dz * dz;
          double corr = 0;
          if (o.pbf_scorr_k > 0)
            corr = -o.pbf_scorr_k * std::pow(k.w(r2) / scorr_w, o.pbf_scorr_n) / pbf_s0;
          const double f = vol * (lambda[i] + lambda[j] + corr) * k.grad_over_r(std::sqrt(r2));
          dx_ += f * dx, dy_ += f * dy, dz_ += f * dz;
        }
        for (std::uint32_t q = nbb.start[i]; q < nbb.start[i + 1]; ++q) {
          const std::uint32_t j = nbb.index[q];
          const double dx = sx[i] - bx[j], dy = sy[i] - by[j], dz = sz[i] - bz[j];
          const double f = bpsi[j] / o.rest_density * lambda[i] *
                           k.grad_over_r(std::sqrt(dx * dx + dy * dy + dz * dz));
          dx_ += f * dx, dy_ += f * dy, dz_ += f * dz;
        }
        // A guard, not part of the method: no correction moves a particle more than half a
        // spacing (particles stacked on one point, e.g. squeezed into a box's corner, have no
        // gradient between them, and their λ = −C/ε would throw their neighbours away).
        const double len = std::sqrt(dx_ * dx_ + dy_ * dy_ + dz_ * dz_);
        const double scale = len > max_move ? max_move / len : 1.0;
        ax[i] = dx_ * scale, ay[i] = dy_ * scale, az[i] = dz_ * scale;
      }
    });
    for_blocks(arena_ptr(), threads(), n, kBlock, [&](std::size_t b, std::size_t e) {
      for (std::size_t i = b; i < e; ++i) {
        sx[i] += ax[i], sy[i] += ay[i], sz[i] += az[i];
        collide(i, sx.data(), sy.data(), sz.data(), nullptr, nullptr, nullptr);
      }
    });
  }
  // v = (x* − x)/Δt, x = x*.
  for (std::size_t i = 0; i < n; ++i) {
    vx[i] = (sx[i] - px[i]) / dt, vy[i] = (sy[i] - py[i]) / dt, vz[i] = (sz[i] - pz[i]) / dt;
  }
  px.swap(sx), py.swap(sy), pz.swap(sz);
  if (o.vorticity > 0) {
    // ω_i = Σ_j V_j ∇_i W_ij × (v_j − v_i); η = ∇|ω|; v += Δt ε (η/|η|) × ω.
    wx.resize(n), wy.resize(n), wz.resize(n), tmp.resize(n);
    for_blocks(arena_ptr(), threads(), n, kBlock, [&](std::size_t b, std::size_t e) {
      for (std::size_t i = b; i < e; ++i) {
        Vec3 w{0, 0, 0};
        for (std::uint32_t q = nb.start[i]; q < nb.start[i + 1]; ++q) {
          const std::uint32_t j = nb.index[q];
          const Vec3 d{px[i] - px[j], py[i] - py[j], pz[i] - pz[j]};
          const Vec3 gw = d * (mass / rho[j] * k.grad_over_r(length(d)));
          w += cross(gw, Vec3{vx[j] - vx[i], vy[j] - vy[i], vz[j] - vz[i]});
        }
        wx[i] = w.x, wy[i] = w.y, wz[i] = w.z, tmp[i] = length(w);
      }
    });
    for_blocks(arena_ptr(), threads(), n, kBlock, [&](std::size_t b, std::size_t e) {
      for (std::size_t i = b; i < e; ++i) {
        Vec3 eta{0, 0, 0};
        for (std::uint32_t q = nb.start[i]; q < nb.start[i + 1]; ++q) {
          const std::uint32_t j = nb.index[q];
          const Vec3 d{px[i] - px[j], py[i] - py[j], pz[i] - pz[j]};
          eta += d * (mass / rho[j] * (tmp[j] - tmp[i]) * k.grad_over_r(length(d)));
        }
        const Vec3 f = cross(normalize(eta, Vec3{0, 0, 0}), Vec3{wx[i], wy[i], wz[i]});
        ax[i] = dt * o.vorticity * f.x, ay[i] = dt * o.vorticity * f.y;
        az[i] = o.dimensions == 3 ? dt * o.vorticity * f.z : 0.0;
      }
    });
    for (std::size_t i = 0; i < n; ++i) vx[i] += ax[i], vy[i] += ay[i], vz[i] += az[i];
  }
  xsph_pass();
  for (std::size_t i = 0; i < n; ++i)
    p[i] = std::max(0.0, tait_b * (std::pow(rho[i] / o.rest_density, o.tait_gamma) - 1));
  return dt;
}

}  // namespace kinema
