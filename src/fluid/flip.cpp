// FLIP liquid (kinema/fluid/flip.h): options, validation, solids, filling, the step loop, the
// particle sort, grid → particles with advection, and the read-outs. The grid operators (particles
// → grid, cell marking, extrapolation, gravity, projection) are in flip_grid.cpp.
#include "kinema/fluid/flip.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "flip_internal.h"
#include "kinema/core/error.h"

namespace kinema {

using flip_detail::face_lattice;
using grid_fluid_detail::Lattice;
using grid_fluid_detail::sample;

namespace {

constexpr const char* kFile = "flip";
constexpr size_t kParticleBlock = 4096;  ///< particles per parallel block (fixed: see max_speed)
/// Particles kept this far (× dx) inside the domain and outside solids, so that a particle on a
/// wall never falls into the cell beyond it.
constexpr double kMargin = 1e-3;

void check_finite(double v, const std::string& what) {
  if (!std::isfinite(v)) throw Error(kFile, what, "is not finite");
}
void check_finite(const Vec3& v, const std::string& what) {
  if (!is_finite(v)) throw Error(kFile, what, "is not finite");
}
void check_positive(double v, const std::string& what) {
  if (!(v > 0) || !std::isfinite(v)) throw Error(kFile, what, "must be > 0 and finite");
}

/// A hash of three numbers to a double in [0, 1) (splitmix64's finaliser): the jitter of one
/// particle, the same whatever else was filled before.
double hash01(std::uint64_t seed, std::uint64_t a, std::uint64_t b) {
  std::uint64_t x = seed ^ (a * 0x9E3779B97F4A7C15ull) ^ (b * 0xC2B2AE3D27D4EB4Full);
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 31;
  return double(x >> 11) * 0x1.0p-53;
}

/// f(begin, end) over [0, n) in fixed blocks of particles, in parallel.
template <class F>
void for_particles(size_t n, const F& f) {
  tbb::parallel_for(tbb::blocked_range<size_t>(0, n, kParticleBlock),
                    [&](const tbb::blocked_range<size_t>& r) { f(r.begin(), r.end()); });
}

}  // namespace

FlipSolid FlipSolid::box(const Vec3& center, const Vec3& half_extents) {
  FlipSolid s;
  s.shape = FlipSolidShape::Box;
  s.center = center;
  s.half_extents = half_extents;
  return s;
}

FlipSolid FlipSolid::sphere(const Vec3& center, double radius) {
  FlipSolid s;
  s.shape = FlipSolidShape::Sphere;
  s.center = center;
  s.radius = radius;
  return s;
}

double FlipSolid::distance(const Vec3& p) const {
  const Vec3 d = p - center;
  if (shape == FlipSolidShape::Sphere) return length(d) - radius;
  const Vec3 q{std::abs(d.x) - half_extents.x, std::abs(d.y) - half_extents.y,
               std::abs(d.z) - half_extents.z};
  const Vec3 out{std::max(q.x, 0.0), std::max(q.y, 0.0), std::max(q.z, 0.0)};
  return length(out) + std::min(std::max(q.x, std::max(q.y, q.z)), 0.0);
}

FlipLiquid::FlipLiquid(FlipOptions options) : o_(std::move(options)) {
  const auto check_resolution = [](int n, const char* what) {
    if (n < 1 || n > 1024) throw Error(kFile, what, "must be in 1…1024");
  };
  check_resolution(o_.nx, "nx");
  check_resolution(o_.ny, "ny");
  check_resolution(o_.nz, "nz");
  check_positive(o_.dx, "dx");
  check_finite(o_.origin, "origin");
  check_finite(o_.gravity, "gravity");
  if (!(o_.flip_ratio >= 0 && o_.flip_ratio <= 1))
    throw Error(kFile, "flip_ratio", "must be in [0, 1]");
  if (o_.particles_per_axis < 1 || o_.particles_per_axis > 4)
    throw Error(kFile, "particles_per_axis", "must be in 1…4");
  if (!(o_.jitter >= 0 && o_.jitter <= 1)) throw Error(kFile, "jitter", "must be in [0, 1]");
  check_positive(o_.cfl, "cfl");
  if (o_.max_substeps < 1) throw Error(kFile, "max_substeps", "must be ≥ 1");
  check_positive(o_.pressure_tolerance, "pressure_tolerance");
  if (o_.pressure_max_iterations < 1) throw Error(kFile, "pressure_max_iterations", "must be ≥ 1");
  if (o_.threads < 0) throw Error(kFile, "threads", "must be ≥ 0");
  for (size_t s = 0; s < o_.solids.size(); ++s) {
    const std::string what = "solids[" + std::to_string(s) + "]";
    const FlipSolid& solid = o_.solids[s];
    check_finite(solid.center, what + ".center");
    check_finite(solid.half_extents, what + ".half_extents");
    check_finite(solid.radius, what + ".radius");
    if (solid.shape == FlipSolidShape::Sphere && solid.radius < 0)
      throw Error(kFile, what + ".radius", "must be ≥ 0");
    if (solid.shape == FlipSolidShape::Box &&
        (solid.half_extents.x < 0 || solid.half_extents.y < 0 || solid.half_extents.z < 0))
      throw Error(kFile, what + ".half_extents", "must be ≥ 0");
  }
  three_d_ = o_.nz > 1;
  ncell_ = size_t(o_.nx) * size_t(o_.ny) * size_t(o_.nz);
  u_.assign(face_lattice(o_, 0).size(), 0.0);
  v_.assign(face_lattice(o_, 1).size(), 0.0);
  w_.assign(face_lattice(o_, 2).size(), 0.0);
  u_star_ = u_;
  v_star_ = v_;
  w_star_ = w_;
  u_known_.assign(u_.size(), 0);
  v_known_.assign(v_.size(), 0);
  w_known_.assign(w_.size(), 0);
  known_tmp_.assign(std::max({u_.size(), v_.size(), w_.size()}), 0);
  cell_.assign(ncell_, 0);
  solid_.assign(ncell_, 0);
  for (auto* p : {&psi_, &rhs_, &cg_r_, &cg_z_, &cg_s_, &cg_q_}) p->assign(ncell_, 0.0);
  for (auto* p : {&adiag_, &ax_, &ay_, &az_, &precon_, &pbx_, &pby_, &pbz_})
    p->assign(ncell_, 0.0f);
  cell_start_.assign(ncell_ + 1, 0);
  // Solid cells: centre inside an obstacle (in 2-D the centre lies on the particles' plane).
  size_t c = 0;
  for (int k = 0; k < o_.nz; ++k)
    for (int j = 0; j < o_.ny; ++j)
      for (int i = 0; i < o_.nx; ++i, ++c) {
        const Vec3 centre = o_.origin + Vec3{i + 0.5, j + 0.5, k + 0.5} * o_.dx;
        for (const FlipSolid& s : o_.solids)
          if (s.distance(centre) < 0) solid_[c] = 1;
      }
}

size_t FlipLiquid::add_block(const Vec3& lo, const Vec3& hi, const Vec3& velocity) {
  check_finite(lo, "block.lo");
  check_finite(hi, "block.hi");
  check_finite(velocity, "block.velocity");
  const double dx = o_.dx, slack = 1e-9 * dx;
  const Vec3 top = o_.origin + Vec3{double(o_.nx), double(o_.ny), double(o_.nz)} * dx;
  const int axes = three_d_ ? 3 : 2;
  for (int a = 0; a < axes; ++a) {
    if (!(hi[a] > lo[a])) throw Error(kFile, "block", "is empty (hi ≤ lo)");
    if (lo[a] < o_.origin[a] - slack || hi[a] > top[a] + slack)
      throw Error(kFile, "block", "is not inside the domain");
  }
  int first[3] = {0, 0, 0}, last[3] = {0, 0, 0};
  for (int a = 0; a < axes; ++a) {
    const int n = a == 0 ? o_.nx : (a == 1 ? o_.ny : o_.nz);
    first[a] = std::clamp(int(std::floor((lo[a] - o_.origin[a]) / dx)), 0, n - 1);
    last[a] = std::clamp(int(std::ceil((hi[a] - o_.origin[a]) / dx)) - 1, 0, n - 1);
  }
  const int m = o_.particles_per_axis, mz = three_d_ ? m : 1;
  const double sub = 1.0 / m;
  const size_t before = count();
  // The cell sort indexes particles with 32 bits.
  const size_t most = size_t(last[0] - first[0] + 1) * size_t(last[1] - first[1] + 1) *
                      size_t(last[2] - first[2] + 1) * size_t(m * m * mz);
  if (before + most >= (size_t(1) << 32))
    throw Error(kFile, "block", "would make more than 2³² − 1 particles");
  for (int k = first[2]; k <= last[2]; ++k)
    for (int j = first[1]; j <= last[1]; ++j)
      for (int i = first[0]; i <= last[0]; ++i) {
        const size_t c = size_t(i) + size_t(o_.nx) * (size_t(j) + size_t(o_.ny) * size_t(k));
        if (solid_[c]) continue;
        for (int sk = 0; sk < mz; ++sk)
          for (int sj = 0; sj < m; ++sj)
            for (int si = 0; si < m; ++si) {
              const std::uint64_t s = std::uint64_t(si + m * (sj + m * sk));
              const double jx = o_.jitter * (hash01(o_.seed, c, 3 * s) - 0.5);
              const double jy = o_.jitter * (hash01(o_.seed, c, 3 * s + 1) - 0.5);
              const double jz = three_d_ ? o_.jitter * (hash01(o_.seed, c, 3 * s + 2) - 0.5) : 0;
              Vec3 p{i + (si + 0.5 + jx) * sub, j + (sj + 0.5 + jy) * sub,
                     three_d_ ? k + (sk + 0.5 + jz) * sub : 0.5};
              p = o_.origin + p * dx;
              bool inside = true;
              for (int a = 0; a < axes; ++a) inside = inside && p[a] >= lo[a] && p[a] < hi[a];
              for (const FlipSolid& solid : o_.solids) inside = inside && solid.distance(p) > 0;
              if (!inside) continue;
              px_.push_back(p.x);
              py_.push_back(p.y);
              pz_.push_back(p.z);
              vx_.push_back(velocity.x);
              vy_.push_back(velocity.y);
              vz_.push_back(three_d_ ? velocity.z : 0.0);
            }
      }
  return count() - before;
}

double FlipLiquid::max_speed() const {
  // Blocks of fixed size, maxima combined in block order (max is exact, so any order would do).
  const size_t n = count(), blocks = (n + kParticleBlock - 1) / kParticleBlock;
  std::vector<double> partial(blocks, 0.0);
  tbb::parallel_for(size_t(0), blocks, [&](size_t b) {
    double m = 0;
    for (size_t p = b * kParticleBlock, e = std::min(n, p + kParticleBlock); p < e; ++p)
      m = std::max(m, vx_[p] * vx_[p] + vy_[p] * vy_[p] + vz_[p] * vz_[p]);
    partial[b] = m;
  });
  double m = 0;
  for (double p : partial) m = std::max(m, p);
  return std::sqrt(m);
}

size_t FlipLiquid::occupied_cells() const {
  std::vector<std::uint8_t> hit(ncell_, 0);
  for (size_t p = 0; p < count(); ++p) {
    const int i = std::clamp(int((px_[p] - o_.origin.x) / o_.dx), 0, o_.nx - 1);
    const int j = std::clamp(int((py_[p] - o_.origin.y) / o_.dx), 0, o_.ny - 1);
    const int k = std::clamp(int((pz_[p] - o_.origin.z) / o_.dx), 0, o_.nz - 1);
    hit[size_t(i) + size_t(o_.nx) * (size_t(j) + size_t(o_.ny) * size_t(k))] = 1;
  }
  size_t n = 0;
  for (std::uint8_t h : hit) n += h;
  return n;
}

void FlipLiquid::step(double dt) {
  if (!(dt > 0) || !std::isfinite(dt)) throw Error(kFile, "dt", "must be > 0 and finite");
  tbb::task_arena arena(o_.threads > 0 ? o_.threads : tbb::task_arena::automatic);
  arena.execute([&] {
    // The speed bound counts what gravity adds within the substep: with h ≤ cfl·dx / s and
    // s = vmax + √(|g|·cfl·dx), (vmax + |g|·h)·h ≤ cfl·dx.
    const double g_term = std::sqrt(length(o_.gravity) * o_.cfl * o_.dx);
    double left = dt;
    substeps_ = 0;
    while (left > 0) {
      double h = left;
      if (substeps_ + 1 < o_.max_substeps) {
        const double hmax = o_.cfl * o_.dx / (max_speed() + g_term);
        // Two near-equal substeps rather than a full one and a sliver.
        if (h > hmax) h = left < 2 * hmax ? 0.5 * left : hmax;
      }
      substep(h);
      ++substeps_;
      left = h == left ? 0 : left - h;
    }
  });
  time_ += dt;
}

void FlipLiquid::substep(double h) {
  sort_particles();
  particles_to_grid();
  mark_cells();
  extrapolate();
  enforce_solid_faces();
  u_star_ = u_;
  v_star_ = v_;
  w_star_ = w_;
  add_gravity(h);
  project();
  // Known after the projection: the faces that touch fluid (the only ones it set).
  const auto fluid = [&](int i, int j, int k) {
    return cell_[size_t(i) + size_t(o_.nx) * (size_t(j) + size_t(o_.ny) * size_t(k))] == 1;
  };
  for (int a = 0; a < (three_d_ ? 3 : 2); ++a) {
    const Lattice L = face_lattice(o_, a);
    std::vector<std::uint8_t>& known = a == 0 ? u_known_ : (a == 1 ? v_known_ : w_known_);
    grid_fluid_detail::for_rows(L.rows(), [&](size_t row) {
      const int j = int(row % size_t(L.sy)), k = int(row / size_t(L.sy));
      for (int i = 0; i < L.sx; ++i) {
        int lo[3] = {i, j, k};
        lo[a] -= 1;
        const bool below = lo[a] >= 0 && fluid(lo[0], lo[1], lo[2]);
        const bool above =
            (a == 0 ? i < o_.nx : (a == 1 ? j < o_.ny : k < o_.nz)) && fluid(i, j, k);
        known[L.index(i, j, k)] = below || above;
      }
    });
  }
  extrapolate();
  enforce_solid_faces();
  update_particles(h);
}

void FlipLiquid::sort_particles() {
  // Counting sort by cell, in particle order: each cell's slots list its particles in the order
  // they are stored, so the scatter to the faces adds in a fixed order.
  const size_t n = count();
  particle_cell_.resize(n);
  for_particles(n, [&](size_t b, size_t e) {
    for (size_t p = b; p < e; ++p) {
      const int i = std::clamp(int((px_[p] - o_.origin.x) / o_.dx), 0, o_.nx - 1);
      const int j = std::clamp(int((py_[p] - o_.origin.y) / o_.dx), 0, o_.ny - 1);
      const int k = std::clamp(int((pz_[p] - o_.origin.z) / o_.dx), 0, o_.nz - 1);
      particle_cell_[p] =
          std::uint32_t(size_t(i) + size_t(o_.nx) * (size_t(j) + size_t(o_.ny) * size_t(k)));
    }
  });
  std::fill(cell_start_.begin(), cell_start_.end(), 0u);
  for (size_t p = 0; p < n; ++p) ++cell_start_[particle_cell_[p] + 1];
  for (size_t c = 0; c < ncell_; ++c) cell_start_[c + 1] += cell_start_[c];
  for (auto* a : {&sx_, &sy_, &sz_, &svx_, &svy_, &svz_}) a->resize(n);
  // The next free slot per cell.
  std::vector<std::uint32_t> cursor(cell_start_.begin(), cell_start_.end() - 1);
  const double inv = 1 / o_.dx;
  for (size_t p = 0; p < n; ++p) {
    const std::uint32_t s = cursor[particle_cell_[p]]++;
    sx_[s] = (px_[p] - o_.origin.x) * inv;
    sy_[s] = (py_[p] - o_.origin.y) * inv;
    sz_[s] = three_d_ ? (pz_[p] - o_.origin.z) * inv : 0.5;  // 2-D: z weight exactly 1
    svx_[s] = vx_[p];
    svy_[s] = vy_[p];
    svz_[s] = vz_[p];
  }
}

Vec3 FlipLiquid::grid_velocity(const Vec3& x) const {
  const double vx = sample(face_lattice(o_, 0), u_.data(), x.x, x.y, x.z);
  const double vy = sample(face_lattice(o_, 1), v_.data(), x.x, x.y, x.z);
  const double vz = three_d_ ? sample(face_lattice(o_, 2), w_.data(), x.x, x.y, x.z) : 0.0;
  return {vx, vy, vz};
}

void FlipLiquid::update_particles(double h) {
  // u* becomes the change Δv = u − u* of this substep's forces and projection.
  const auto diff = [](const std::vector<double>& now, std::vector<double>& star) {
    tbb::parallel_for(tbb::blocked_range<size_t>(0, now.size(), kParticleBlock),
                      [&](const tbb::blocked_range<size_t>& r) {
                        for (size_t f = r.begin(); f < r.end(); ++f) star[f] = now[f] - star[f];
                      });
  };
  diff(u_, u_star_);
  diff(v_, v_star_);
  if (three_d_) diff(w_, w_star_);
  const Lattice lu = face_lattice(o_, 0), lv = face_lattice(o_, 1), lw = face_lattice(o_, 2);
  const double r = o_.flip_ratio, inv = 1 / o_.dx;
  for_particles(count(), [&](size_t b, size_t e) {
    for (size_t p = b; p < e; ++p) {
      // Grid → particle: the FLIP/PIC blend.
      const Vec3 x0{(px_[p] - o_.origin.x) * inv, (py_[p] - o_.origin.y) * inv,
                    (pz_[p] - o_.origin.z) * inv};
      const Vec3 g0 = grid_velocity(x0);
      Vec3 vel{r * (vx_[p] + sample(lu, u_star_.data(), x0.x, x0.y, x0.z)) + (1 - r) * g0.x,
               r * (vy_[p] + sample(lv, v_star_.data(), x0.x, x0.y, x0.z)) + (1 - r) * g0.y, 0.0};
      if (three_d_)
        vel.z = r * (vz_[p] + sample(lw, w_star_.data(), x0.x, x0.y, x0.z)) + (1 - r) * g0.z;
      // Advection by the midpoint rule through the grid velocity (in cell coordinates, so
      // velocities × h/dx).
      const Vec3 mid = x0 + g0 * (0.5 * h * inv);
      const Vec3 x1 = x0 + grid_velocity(mid) * (h * inv);
      Vec3 pos = o_.origin + x1 * o_.dx;
      if (!three_d_) pos.z = pz_[p];
      push_out(pos, vel);
      px_[p] = pos.x;
      py_[p] = pos.y;
      pz_[p] = pos.z;
      vx_[p] = vel.x;
      vy_[p] = vel.y;
      vz_[p] = vel.z;
    }
  });
}

void FlipLiquid::push_out(Vec3& p, Vec3& vel) const {
  const double margin = kMargin * o_.dx;
  for (const FlipSolid& s : o_.solids) {
    const double d = s.distance(p);
    if (d >= margin) continue;
    // Outward normal: the distance's gradient by central differences.
    const double e = 1e-4 * o_.dx;
    Vec3 n{s.distance(p + Vec3{e, 0, 0}) - s.distance(p - Vec3{e, 0, 0}),
           s.distance(p + Vec3{0, e, 0}) - s.distance(p - Vec3{0, e, 0}),
           three_d_ ? s.distance(p + Vec3{0, 0, e}) - s.distance(p - Vec3{0, 0, e}) : 0.0};
    const double len = length(n);
    n = len > 0 ? n / len : Vec3{0, 1, 0};
    p += n * (margin - d);
    const double vn = dot(vel, n);
    if (vn < 0) vel -= n * vn;
  }
  const int axes = three_d_ ? 3 : 2;
  for (int a = 0; a < axes; ++a) {
    const int n = a == 0 ? o_.nx : (a == 1 ? o_.ny : o_.nz);
    const double lo = o_.origin[a] + margin, hi = o_.origin[a] + n * o_.dx - margin;
    if (p[a] < lo) {
      p[a] = lo;
      if (vel[a] < 0) vel[a] = 0;
    } else if (p[a] > hi) {
      p[a] = hi;
      if (vel[a] > 0) vel[a] = 0;
    }
  }
}

}  // namespace kinema
