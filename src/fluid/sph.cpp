// SphFluid: options, kernels, particles, boundaries, colliders and the step loop. The substeps
// themselves are in sph_step.cpp; the method is described in kinema/fluid/sph.h.
//
// 2D kernel normalizations (each W integrates to 1 over the plane, ∫₀ʰ W(r) 2πr dr = 1):
//   poly6      ∫₀ʰ (h² − r²)³ 2πr dr = π h⁸/4                    → 4/(π h⁸)
//   spiky      ∫₀ʰ (h − r)³ 2πr dr = 2π h⁵/20                     → 10/(π h⁵)
//   viscosity  ∫₀ʰ (−r³/2h³ + r²/h² + h/2r − 1) 2πr dr = 0.3π h²  → 10/(3π h²)
// The viscosity kernel's true 2D Laplacian is not Müller's (h − r) form (that identity holds in
// 3D only), so the 2D ∇²W keeps the (h − r) shape, positive everywhere as Müller wants, and is
// normalized so that the SPH Laplacian is exact for quadratic fields: ∫ r² ∇²W dV = 2d. Müller's
// 3D 45/(π h⁶) satisfies this (∫₀ʰ r²(h − r) 4πr² dr = 2π h⁶/15, × 45/(π h⁶) = 6); in 2D
// ∫₀ʰ r²(h − r) 2πr dr = π h⁵/10, so the constant is 40/(π h⁵).
#include "kinema/fluid/sph.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "kinema/core/error.h"
#include "sph_impl.h"

namespace kinema {

using sph_detail::Kernels;

namespace {

[[noreturn]] void fail(const std::string& place, const std::string& reason) {
  throw Error("sph", place, reason);
}

void check_dimensions(int d, const std::string& place) {
  if (d != 2 && d != 3) fail(place, "dimensions must be 2 or 3, got " + std::to_string(d));
}

double sq(double x) { return x * x; }

}  // namespace

namespace sph_detail {

Kernels::Kernels(double radius, int dimensions) : dim(dimensions), h(radius), h2(radius * radius) {
  if (dim == 3) {
    poly6 = 315.0 / (64.0 * kPi * std::pow(h, 9));
    spiky_grad = -45.0 / (kPi * std::pow(h, 6));
    visc_lap = 45.0 / (kPi * std::pow(h, 6));
  } else {
    poly6 = 4.0 / (kPi * std::pow(h, 8));
    spiky_grad = -30.0 / (kPi * std::pow(h, 5));
    visc_lap = 40.0 / (kPi * std::pow(h, 5));
  }
}

}  // namespace sph_detail

double sph_poly6(double r, double h, int d) {
  check_dimensions(d, "sph_poly6");
  return Kernels(h, d).w(r * r);
}

double sph_spiky(double r, double h, int d) {
  check_dimensions(d, "sph_spiky");
  if (r >= h || r < 0) return 0;
  const double k = d == 3 ? 15.0 / (kPi * std::pow(h, 6)) : 10.0 / (kPi * std::pow(h, 5));
  return k * (h - r) * (h - r) * (h - r);
}

double sph_viscosity(double r, double h, int d) {
  check_dimensions(d, "sph_viscosity");
  if (r >= h || r <= 0) return 0;  // singular (integrably) at r = 0
  const double k = d == 3 ? 15.0 / (2 * kPi * h * h * h) : 10.0 / (3 * kPi * h * h);
  return k * (-r * r * r / (2 * h * h * h) + r * r / (h * h) + h / (2 * r) - 1);
}

Vec3 sph_spiky_gradient(const Vec3& x, double h, int d) {
  check_dimensions(d, "sph_spiky_gradient");
  return x * Kernels(h, d).grad_over_r(length(x));
}

double sph_viscosity_laplacian(double r, double h, int d) {
  check_dimensions(d, "sph_viscosity_laplacian");
  if (r >= h || r < 0) return 0;
  return Kernels(h, d).visc_lap * (h - r);
}

std::vector<Vec3> sph_box_boundary(const Vec3& lo, const Vec3& hi, double spacing, int layers,
                                   int dimensions, bool open_top) {
  const std::string place = "sph_box_boundary";
  check_dimensions(dimensions, place);
  if (!(spacing > 0) || !std::isfinite(spacing)) fail(place, "spacing must be positive");
  if (layers < 1) fail(place, "layers must be at least 1");
  if (!is_finite(lo) || !is_finite(hi)) fail(place, "the box's corners must be finite");
  for (int a = 0; a < dimensions; ++a)
    if (!(hi[a] > lo[a])) fail(place, "the box is empty (hi <= lo on some axis)");
  // Per axis a lattice of n cells fitting the box exactly, extended by `layers` cells beyond it.
  int n[3] = {1, 1, 1};
  double s[3] = {spacing, spacing, spacing};
  for (int a = 0; a < dimensions; ++a) {
    n[a] = std::max(1, static_cast<int>(std::lround((hi[a] - lo[a]) / spacing)));
    s[a] = (hi[a] - lo[a]) / n[a];
  }
  const int L = layers;
  std::vector<Vec3> out;
  const int k0 = dimensions == 3 ? -L : 0, k1 = dimensions == 3 ? n[2] + L : 1;
  const int j1 = open_top ? n[1] : n[1] + L;
  for (int k = k0; k < k1; ++k)
    for (int j = -L; j < j1; ++j)
      for (int i = -L; i < n[0] + L; ++i) {
        const bool inside =
            i >= 0 && i < n[0] && j >= 0 && j < n[1] && (dimensions == 2 || (k >= 0 && k < n[2]));
        if (inside) continue;
        out.push_back({lo.x + (i + 0.5) * s[0], lo.y + (j + 0.5) * s[1],
                       dimensions == 3 ? lo.z + (k + 0.5) * s[2] : 0.0});
      }
  return out;
}

SphFluid::SphFluid(SphOptions o) : m_(std::make_unique<Impl>()) {
  const auto finite_positive = [](double v, const char* name) {
    if (!std::isfinite(v) || !(v > 0))
      fail(std::string("options.") + name, "must be positive and finite, got " + std::to_string(v));
  };
  const auto finite_nonneg = [](double v, const char* name) {
    if (!std::isfinite(v) || v < 0)
      fail(std::string("options.") + name,
           "must be non-negative and finite, got " + std::to_string(v));
  };
  check_dimensions(o.dimensions, "options.dimensions");
  finite_positive(o.spacing, "spacing");
  finite_positive(o.smoothing_ratio, "smoothing_ratio");
  finite_positive(o.rest_density, "rest_density");
  finite_nonneg(o.sound_speed, "sound_speed");
  finite_nonneg(o.fluid_height, "fluid_height");
  finite_nonneg(o.viscosity, "viscosity");
  finite_nonneg(o.artificial_viscosity, "artificial_viscosity");
  finite_nonneg(o.surface_tension, "surface_tension");
  finite_nonneg(o.pbf_relaxation, "pbf_relaxation");
  finite_nonneg(o.pbf_scorr_k, "pbf_scorr_k");
  finite_positive(o.pbf_scorr_n, "pbf_scorr_n");
  finite_positive(o.pbf_scorr_dq, "pbf_scorr_dq");
  finite_nonneg(o.vorticity, "vorticity");
  if (!std::isfinite(o.tait_gamma) || o.tait_gamma < 1) fail("options.tait_gamma", "must be >= 1");
  if (!std::isfinite(o.xsph) || o.xsph < 0 || o.xsph > 1) fail("options.xsph", "must be in [0, 1]");
  if (!(o.pbf_scorr_dq < 1)) fail("options.pbf_scorr_dq", "must be below 1 (a fraction of h)");
  if (!std::isfinite(o.cfl) || !(o.cfl > 0) || o.cfl > 1) fail("options.cfl", "must be in (0, 1]");
  if (o.pbf_iterations < 1) fail("options.pbf_iterations", "must be at least 1");
  if (o.threads < 0) fail("options.threads", "must be >= 0 (0: all cores)");
  if (!is_finite(o.gravity)) fail("options.gravity", "must be finite");
  if (!is_finite(o.domain_min) || !is_finite(o.domain_max)) fail("options.domain", "not finite");
  for (int a = 0; a < o.dimensions; ++a)
    if (!(o.domain_max[a] > o.domain_min[a]))
      fail("options.domain", "domain_max must exceed domain_min on every axis");
  if (o.dimensions == 2) {
    o.gravity.z = 0;
    o.domain_min.z = o.domain_max.z = 0;
  }
  Impl& m = *m_;
  const double h = o.spacing * o.smoothing_ratio;
  if (!std::isfinite(h)) fail("options.spacing", "spacing × smoothing_ratio overflows");
  m.k = Kernels(h, o.dimensions);
  if (m.grid.setup(o.domain_min, o.domain_max, h, o.dimensions) < 0)
    fail("options.domain", "the domain holds more than 2^31 cells of the smoothing radius");
  m.bgrid = m.grid;
  // Mass: ρ0·Δx^d divided by the lattice's kernel sum × Δx^d, i.e. ρ0 / Σ_lattice W, so that a
  // particle inside a full lattice of spacing Δx has density ρ0 exactly (the sum is within a few
  // per cent of 1/Δx^d; without the correction a block would start compressed or stretched).
  // Likewise the spiky gradient is divided by S = Σ_lattice V (−∂W/∂x)·x, V = m/ρ0: the SPH
  // gradient of a unit linear field on the rest lattice (0.89 in 2D, 0.96 in 3D for h = 2Δx, where
  // the kernel is sampled coarsely), so that a resting lattice feels exactly the pressure gradient
  // it has and hydrostatic pressure comes out as ρ0·g·depth. A constant factor: pair forces stay
  // antisymmetric and momentum is conserved. (The public sph_spiky_gradient() is Müller's own.)
  double sum = 0, grad2 = 0, rule = 0;
  const int R = static_cast<int>(std::ceil(o.smoothing_ratio)) + 1;
  const int kr = o.dimensions == 3 ? R : 0;
  for (int k = -kr; k <= kr; ++k)
    for (int j = -R; j <= R; ++j)
      for (int i = -R; i <= R; ++i) {
        const Vec3 x = Vec3{double(i), double(j), double(k)} * o.spacing;
        sum += m.k.w(length_squared(x));
        grad2 += length_squared(x * m.k.grad_over_r(length(x)));
        rule -= m.k.grad_over_r(length(x)) * x.x * x.x;
      }
  m.mass = o.rest_density / sum;
  m.k.spiky_grad /= rule * m.mass / o.rest_density;
  grad2 /= sq(rule * m.mass / o.rest_density);
  m.pbf_s0 = sq(m.mass / o.rest_density) * grad2;
  m.scorr_w = m.k.w(sq(o.pbf_scorr_dq * h));
  const double height = o.fluid_height > 0 ? o.fluid_height : o.domain_max.y - o.domain_min.y;
  const double g = length(o.gravity);
  m.c = o.sound_speed > 0 ? o.sound_speed : 10 * std::sqrt(2 * g * height);
  if (!(m.c > 0) || !std::isfinite(m.c))
    fail("options.sound_speed", "is 0 and cannot be derived (no gravity or no height)");
  m.tait_b = o.rest_density * m.c * m.c / o.tait_gamma;
  if (o.threads != 1)
    m.arena = std::make_unique<tbb::task_arena>(
        o.threads > 0 ? o.threads : static_cast<int>(tbb::task_arena::automatic));
  m.o = o;
}

SphFluid::~SphFluid() = default;
SphFluid::SphFluid(SphFluid&&) noexcept = default;
SphFluid& SphFluid::operator=(SphFluid&&) noexcept = default;

size_t SphFluid::add_block(const Vec3& lo, const Vec3& hi, const Vec3& velocity) {
  const SphOptions& o = m_->o;
  if (!is_finite(lo) || !is_finite(hi) || !is_finite(velocity))
    fail("add_block", "corners and velocity must be finite");
  long n[3] = {1, 1, 1};
  for (int a = 0; a < o.dimensions; ++a) {
    const double cells = std::floor((hi[a] - lo[a]) / o.spacing + 1e-9);
    if (cells > 1e7) fail("add_block", "the box holds too many particles");
    n[a] = cells > 0 ? static_cast<long>(cells) : 0;
  }
  std::vector<Vec3> pos;
  pos.reserve(static_cast<size_t>(n[0] * n[1] * n[2]));
  for (long k = 0; k < n[2]; ++k)
    for (long j = 0; j < n[1]; ++j)
      for (long i = 0; i < n[0]; ++i)
        pos.push_back({lo.x + (i + 0.5) * o.spacing, lo.y + (j + 0.5) * o.spacing,
                       o.dimensions == 3 ? lo.z + (k + 0.5) * o.spacing : 0.0});
  for (const Vec3& x : pos)
    for (int a = 0; a < o.dimensions; ++a)
      if (x[a] < o.domain_min[a] || x[a] > o.domain_max[a])
        fail("add_block", "the box reaches outside the domain");
  std::vector<Vec3> vel(pos.size(), velocity);
  add_particles(pos, vel);
  return pos.size();
}

void SphFluid::add_particles(std::span<const Vec3> positions, std::span<const Vec3> velocities) {
  Impl& m = *m_;
  const SphOptions& o = m.o;
  if (!velocities.empty() && velocities.size() != positions.size())
    fail("add_particles", "velocities must be empty or as many as positions");
  if (m.px.size() + positions.size() > std::numeric_limits<std::uint32_t>::max() / 2)
    fail("add_particles", "too many particles");
  for (size_t i = 0; i < positions.size(); ++i) {
    const std::string place = "add_particles[" + std::to_string(i) + "]";
    if (!is_finite(positions[i])) fail(place, "position is not finite");
    if (!velocities.empty() && !is_finite(velocities[i])) fail(place, "velocity is not finite");
    for (int a = 0; a < o.dimensions; ++a)
      if (positions[i][a] < o.domain_min[a] || positions[i][a] > o.domain_max[a])
        fail(place, "position is outside the domain");
  }
  for (size_t i = 0; i < positions.size(); ++i) {
    const Vec3 v = velocities.empty() ? Vec3{0, 0, 0} : velocities[i];
    const bool d3 = o.dimensions == 3;
    m.id.push_back(static_cast<std::uint32_t>(m.px.size()));
    m.px.push_back(positions[i].x);
    m.py.push_back(positions[i].y);
    m.pz.push_back(d3 ? positions[i].z : 0.0);
    m.vx.push_back(v.x);
    m.vy.push_back(v.y);
    m.vz.push_back(d3 ? v.z : 0.0);
    m.rho.push_back(0);
    m.p.push_back(0);
  }
}

void SphFluid::set_boundary_particles(std::span<const Vec3> positions) {
  Impl& m = *m_;
  for (size_t i = 0; i < positions.size(); ++i)
    if (!is_finite(positions[i]))
      fail("boundary[" + std::to_string(i) + "]", "position is not finite");
  const size_t n = positions.size();
  std::vector<double> x(n), y(n), z(n);
  for (size_t i = 0; i < n; ++i) {
    x[i] = positions[i].x;
    y[i] = positions[i].y;
    z[i] = m.o.dimensions == 3 ? positions[i].z : 0.0;
  }
  std::vector<std::uint32_t> order, key;
  m.bgrid.sort(x.data(), y.data(), z.data(), n, order, key);
  m.bx.resize(n);
  m.by.resize(n);
  m.bz.resize(n);
  for (size_t k = 0; k < n; ++k) {
    m.bx[k] = x[order[k]];
    m.by[k] = y[order[k]];
    m.bz[k] = z[order[k]];
  }
  // Ψ_b = ρ0 / Σ_k W(x_b − x_k) over the boundary particles (Akinci et al. 2012, eq. 4–5).
  sph_detail::SphNeighbours bb;
  sph_detail::find_neighbours(m.bgrid, m.bx.data(), m.by.data(), m.bz.data(), n, m.bx.data(),
                              m.by.data(), m.bz.data(), m.k.h, bb, m.arena_ptr(), m.threads());
  m.bpsi.assign(n, 0);
  for (size_t b = 0; b < n; ++b) {
    double s = 0;
    for (std::uint32_t q = bb.start[b]; q < bb.start[b + 1]; ++q) {
      const std::uint32_t k = bb.index[q];
      s += m.k.w(sq(m.bx[b] - m.bx[k]) + sq(m.by[b] - m.by[k]) + sq(m.bz[b] - m.bz[k]));
    }
    // V_b = min(1/δ_b, m/ρ0): the cap keeps a wall's inner layer, whose boundary neighbourhood
    // is half empty (the fluid side), from weighing more than the fluid it stands in for (for a
    // lattice wall at the fluid's spacing it would be ~1.4×, a 5–15 % density excess at the
    // wall); denser sampling still gets Akinci's smaller volumes. s ≥ W(0) > 0 (itself).
    m.bpsi[b] = m.o.rest_density * std::min(1 / s, m.mass / m.o.rest_density);
  }
}

void SphFluid::set_colliders(std::vector<Collider> colliders) {
  for (size_t i = 0; i < colliders.size(); ++i) {
    Collider& c = colliders[i];
    const std::string place = "colliders[" + std::to_string(i) + "]";
    try {
      validate_collider(c, place, "the collider's");
    } catch (const Error& e) {
      fail(place, e.reason());
    }
    if (c.restitution > 1) fail(place, "restitution must be in [0, 1]");
    if (m_->o.dimensions == 2) c.a.z = c.b.z = 0;
  }
  m_->colliders = std::move(colliders);
}

int SphFluid::step(double h) {
  Impl& m = *m_;
  if (!std::isfinite(h) || !(h > 0))
    fail("step", "the time step must be positive and finite, got " + std::to_string(h));
  double remaining = h;
  int substeps = 0;
  while (remaining > 0) {
    const double dt = m.o.solver == SphSolver::WeaklyCompressible ? m.substep_wcsph(remaining)
                                                                  : m.substep_pbf(remaining);
    ++substeps;
    remaining = dt >= remaining ? 0 : remaining - dt;
    if (remaining <= 1e-12 * h) remaining = 0;
  }
  m.time += h;
  m.last_substeps = substeps;
  m.total_substeps += substeps;
  return substeps;
}

size_t SphFluid::count() const { return m_->px.size(); }
std::span<const double> SphFluid::px() const { return m_->px; }
std::span<const double> SphFluid::py() const { return m_->py; }
std::span<const double> SphFluid::pz() const { return m_->pz; }
std::span<const double> SphFluid::vx() const { return m_->vx; }
std::span<const double> SphFluid::vy() const { return m_->vy; }
std::span<const double> SphFluid::vz() const { return m_->vz; }
std::span<const double> SphFluid::densities() const { return m_->rho; }
std::span<const double> SphFluid::pressures() const { return m_->p; }
std::span<const std::uint32_t> SphFluid::ids() const { return m_->id; }
Vec3 SphFluid::position(size_t i) const { return {m_->px[i], m_->py[i], m_->pz[i]}; }
Vec3 SphFluid::velocity(size_t i) const { return {m_->vx[i], m_->vy[i], m_->vz[i]}; }
const SphOptions& SphFluid::options() const { return m_->o; }
double SphFluid::particle_mass() const { return m_->mass; }
double SphFluid::smoothing_radius() const { return m_->k.h; }
double SphFluid::sound_speed() const { return m_->c; }
double SphFluid::time() const { return m_->time; }
int SphFluid::last_substeps() const { return m_->last_substeps; }
long SphFluid::total_substeps() const { return m_->total_substeps; }

}  // namespace kinema
