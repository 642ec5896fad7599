// Grid fluid (kinema/fluid/grid_fluid.h): options, validation, regions, sources, solids, boundary
// conditions, the step loop and the read-outs. The per-substep operators (advection, forces,
// diffusion, projection, fire) are in grid_fluid_ops.cpp, the pressure solve in
// grid_fluid_pressure.cpp.
#include "kinema/fluid/grid_fluid.h"

#include <tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>

#include "grid_fluid_internal.h"
#include "kinema/core/error.h"
#include "kinema/fluid/mesh_sdf.h"

namespace kinema {

using grid_fluid_detail::for_rows;
using grid_fluid_detail::max_rows;
using grid_fluid_detail::sum_rows;

namespace {

constexpr const char* kFile = "grid fluid";

void check_finite(double v, const std::string& what) {
  if (!std::isfinite(v)) throw Error(kFile, what, "is not finite");
}
void check_finite(const Vec3& v, const std::string& what) {
  if (!is_finite(v)) throw Error(kFile, what, "is not finite");
}
void check_non_negative(double v, const std::string& what) {
  if (!(v >= 0) || !std::isfinite(v)) throw Error(kFile, what, "must be ≥ 0 and finite");
}
void check_positive(double v, const std::string& what) {
  if (!(v > 0) || !std::isfinite(v)) throw Error(kFile, what, "must be > 0 and finite");
}

void check_region(const FluidRegion& r, const std::string& what) {
  check_finite(r.center, what + ".center");
  check_finite(r.half_extents, what + ".half_extents");
  check_finite(r.a, what + ".a");
  check_finite(r.b, what + ".b");
  check_non_negative(r.radius, what + ".radius");
  if (r.shape == FluidShape::Mesh && !r.sdf) throw Error(kFile, what + ".sdf", "is null");
  if (r.shape == FluidShape::Box) {
    check_non_negative(r.half_extents.x, what + ".half_extents.x");
    check_non_negative(r.half_extents.y, what + ".half_extents.y");
    check_non_negative(r.half_extents.z, what + ".half_extents.z");
  }
}

/// The region's axis-aligned bounding box.
void bounds(const FluidRegion& r, Vec3& lo, Vec3& hi) {
  switch (r.shape) {
    case FluidShape::Box:
      lo = r.center - r.half_extents;
      hi = r.center + r.half_extents;
      return;
    case FluidShape::Sphere:
      lo = r.center - Vec3::one() * r.radius;
      hi = r.center + Vec3::one() * r.radius;
      return;
    case FluidShape::Capsule:
      lo = Vec3{std::min(r.a.x, r.b.x), std::min(r.a.y, r.b.y), std::min(r.a.z, r.b.z)} -
           Vec3::one() * r.radius;
      hi = Vec3{std::max(r.a.x, r.b.x), std::max(r.a.y, r.b.y), std::max(r.a.z, r.b.z)} +
           Vec3::one() * r.radius;
      return;
    case FluidShape::Mesh:
      lo = r.sdf->lower() + r.center;
      hi = r.sdf->upper() + r.center;
      return;
  }
}

}  // namespace

// ---- regions ----

FluidRegion FluidRegion::box(const Vec3& c, const Vec3& h) {
  FluidRegion r;
  r.shape = FluidShape::Box;
  r.center = c;
  r.half_extents = h;
  return r;
}
FluidRegion FluidRegion::sphere(const Vec3& c, double radius) {
  FluidRegion r;
  r.shape = FluidShape::Sphere;
  r.center = c;
  r.radius = radius;
  return r;
}
FluidRegion FluidRegion::capsule(const Vec3& a, const Vec3& b, double radius) {
  FluidRegion r;
  r.shape = FluidShape::Capsule;
  r.a = a;
  r.b = b;
  r.radius = radius;
  return r;
}
FluidRegion FluidRegion::mesh(std::shared_ptr<const MeshSdf> mesh, const Vec3& offset) {
  FluidRegion r;
  r.shape = FluidShape::Mesh;
  r.center = offset;
  r.sdf = std::move(mesh);
  return r;
}

double FluidRegion::distance(const Vec3& p) const {
  switch (shape) {
    case FluidShape::Box: {
      const Vec3 q{std::abs(p.x - center.x) - half_extents.x,
                   std::abs(p.y - center.y) - half_extents.y,
                   std::abs(p.z - center.z) - half_extents.z};
      const Vec3 outside{std::max(q.x, 0.0), std::max(q.y, 0.0), std::max(q.z, 0.0)};
      return length(outside) + std::min(std::max({q.x, q.y, q.z}), 0.0);
    }
    case FluidShape::Sphere:
      return kinema::distance(p, center) - radius;
    case FluidShape::Capsule: {
      const Vec3 ab = b - a;
      const double len2 = length_squared(ab);
      const double t = len2 > 0 ? std::clamp(dot(p - a, ab) / len2, 0.0, 1.0) : 0.0;
      return kinema::distance(p, a + ab * t) - radius;
    }
    case FluidShape::Mesh:
      return sdf ? sdf->distance(p - center) : std::numeric_limits<double>::infinity();
  }
  return 0;
}

// ---- construction ----

GridFluid::GridFluid(GridFluidOptions options) : o_(std::move(options)) {
  const int n[3] = {o_.nx, o_.ny, o_.nz};
  const char* names[3] = {"nx", "ny", "nz"};
  for (int a = 0; a < 3; ++a)
    if (n[a] < 1 || n[a] > 1024) throw Error(kFile, names[a], "must be in 1…1024");
  check_positive(o_.dx, "dx");
  check_finite(o_.origin, "origin");
  check_positive(o_.max_cfl, "max_cfl");
  if (o_.max_substeps < 1) throw Error(kFile, "max_substeps", "must be ≥ 1");
  check_non_negative(o_.viscosity, "viscosity");
  check_non_negative(o_.scalar_diffusion, "scalar_diffusion");
  if (o_.diffusion_iterations < 1) throw Error(kFile, "diffusion_iterations", "must be ≥ 1");
  check_positive(o_.pressure_tolerance, "pressure_tolerance");
  if (o_.pressure_max_iterations < 1) throw Error(kFile, "pressure_max_iterations", "must be ≥ 1");
  check_non_negative(o_.pressure_max_divergence, "pressure_max_divergence");
  check_finite(o_.buoyancy_alpha, "buoyancy_alpha");
  check_finite(o_.buoyancy_beta, "buoyancy_beta");
  check_finite(o_.ambient_temperature, "ambient_temperature");
  check_non_negative(o_.vorticity, "vorticity");
  check_non_negative(o_.burn_rate, "burn_rate");
  check_non_negative(o_.heat_release, "heat_release");
  check_non_negative(o_.smoke_per_fuel, "smoke_per_fuel");
  check_non_negative(o_.cooling_rate, "cooling_rate");
  if (o_.threads < 0) throw Error(kFile, "threads", "must be ≥ 0");
  for (size_t i = 0; i < o_.obstacles.size(); ++i) {
    const std::string what = "obstacles[" + std::to_string(i) + "]";
    check_region(o_.obstacles[i].region, what + ".region");
    check_finite(o_.obstacles[i].velocity, what + ".velocity");
  }
  three_d_ = o_.nz > 1;
  if (!three_d_) o_.boundary[4] = o_.boundary[5] = FluidBoundary::Wall;

  const size_t nx = size_t(o_.nx), ny = size_t(o_.ny), nz = size_t(o_.nz);
  ncell_ = nx * ny * nz;
  u_.assign((nx + 1) * ny * nz, 0.0);
  v_.assign(nx * (ny + 1) * nz, 0.0);
  w_.assign(nx * ny * (nz + 1), 0.0);
  u_new_ = u_tmp_ = u_;
  v_new_ = v_tmp_ = v_;
  w_new_ = w_tmp_ = w_;
  density_.assign(ncell_, 0.0);
  temperature_.assign(ncell_, o_.ambient_temperature);
  fuel_.assign(ncell_, 0.0);
  for (auto& s : s_new_) s.assign(ncell_, 0.0);
  for (auto& s : s_tmp_) s.assign(ncell_, 0.0);
  solid_.assign(ncell_, 0);
  owner_.assign(ncell_, -1);
  for (auto* p : {&psi_, &rhs_, &cg_r_, &cg_z_, &cg_s_, &cg_q_}) p->assign(ncell_, 0.0);
  for (auto* p : {&adiag_, &ax_, &ay_, &az_, &precon_, &pbx_, &pby_, &pbz_})
    p->assign(ncell_, 0.0f);
  build_solids();
}

void GridFluid::add_source(const FluidSource& s) {
  check_region(s.region, "source.region");
  check_non_negative(s.density, "source.density");
  check_non_negative(s.fuel, "source.fuel");
  check_finite(s.temperature, "source.temperature");
  if (s.velocity) check_finite(*s.velocity, "source.velocity");
  Vec3 lo, hi;
  bounds(s.region, lo, hi);
  const Vec3 dlo = o_.origin;
  const Vec3 dhi = o_.origin + Vec3{double(o_.nx), double(o_.ny), double(o_.nz)} * o_.dx;
  if (hi.x < dlo.x || lo.x > dhi.x || hi.y < dlo.y || lo.y > dhi.y ||
      (three_d_ && (hi.z < dlo.z || lo.z > dhi.z)))
    throw Error(kFile, "source.region", "lies outside the domain");
  sources_.push_back(s);
}

void GridFluid::set_moving_obstacles(std::vector<FluidObstacle> obstacles) {
  for (size_t i = 0; i < obstacles.size(); ++i) {
    const std::string what = "moving obstacles[" + std::to_string(i) + "]";
    check_region(obstacles[i].region, what + ".region");
    check_finite(obstacles[i].velocity, what + ".velocity");
  }
  moving_ = std::move(obstacles);
}

Vec3 GridFluid::cell_center(int i, int j, int k) const {
  return o_.origin + Vec3{i + 0.5, j + 0.5, k + 0.5} * o_.dx;
}

const FluidObstacle& GridFluid::obstacle(int index) const {
  const size_t n = o_.obstacles.size();
  return size_t(index) < n ? o_.obstacles[size_t(index)] : moving_[size_t(index) - n];
}

// ---- solids, sources, boundary conditions ----

namespace {

/// Index range [first, last] of the nodes of an axis (n nodes at offset `off` cells) that may lie
/// in [lo, hi] (metres along the axis, from the origin); empty when first > last.
void node_range(double lo, double hi, double dx, double off, int n, int& first, int& last) {
  first = std::max(0, int(std::floor(lo / dx - off)));
  last = std::min(n - 1, int(std::ceil(hi / dx - off)));
}

}  // namespace

void GridFluid::build_solids() {
  std::fill(owner_.begin(), owner_.end(), -1);
  const int count = int(o_.obstacles.size() + moving_.size());
  for (int o = 0; o < count; ++o) {  // in order: the first obstacle to claim a cell owns it
    const FluidRegion& r = obstacle(o).region;
    Vec3 lo, hi;
    bounds(r, lo, hi);
    lo -= o_.origin;
    hi -= o_.origin;
    int i0, i1, j0, j1, k0, k1;
    node_range(lo.x, hi.x, o_.dx, 0.5, o_.nx, i0, i1);
    node_range(lo.y, hi.y, o_.dx, 0.5, o_.ny, j0, j1);
    node_range(lo.z, hi.z, o_.dx, 0.5, o_.nz, k0, k1);
    if (!three_d_) k0 = k1 = 0;  // 2-D: the slab is the x–y plane, whatever z the shape has
    if (i0 > i1 || j0 > j1 || k0 > k1) continue;
    const int rows = (j1 - j0 + 1) * (k1 - k0 + 1);
    for_rows(size_t(rows), [&](size_t row) {
      const int j = j0 + int(row) % (j1 - j0 + 1), k = k0 + int(row) / (j1 - j0 + 1);
      for (int i = i0; i <= i1; ++i) {
        const size_t c = cell_index(i, j, k);
        if (owner_[c] >= 0) continue;
        Vec3 p = cell_center(i, j, k);
        if (!three_d_) p.z = r.shape == FluidShape::Capsule ? r.a.z : r.center.z;
        if (r.distance(p) < 0) owner_[c] = o;
      }
    });
  }
  for (size_t c = 0; c < ncell_; ++c) solid_[c] = owner_[c] >= 0;
}

void GridFluid::apply_sources() {
  for (const FluidSource& s : sources_) {
    const FluidRegion& r = s.region;
    Vec3 lo, hi;
    bounds(r, lo, hi);
    lo -= o_.origin;
    hi -= o_.origin;
    // One pass per lattice: the cells (scalars) and, with a velocity, the three face lattices.
    for (int lattice = 0; lattice < (s.velocity ? 4 : 1); ++lattice) {
      if (lattice == 3 && !three_d_) break;
      const int sx = o_.nx + (lattice == 1), sy = o_.ny + (lattice == 2),
                sz = o_.nz + (lattice == 3);
      const double ox = lattice == 1 ? 0 : 0.5, oy = lattice == 2 ? 0 : 0.5,
                   oz = lattice == 3 ? 0 : 0.5;
      int i0, i1, j0, j1, k0, k1;
      node_range(lo.x, hi.x, o_.dx, ox, sx, i0, i1);
      node_range(lo.y, hi.y, o_.dx, oy, sy, j0, j1);
      node_range(lo.z, hi.z, o_.dx, oz, sz, k0, k1);
      if (!three_d_) k0 = k1 = 0;
      if (i0 > i1 || j0 > j1 || k0 > k1) continue;
      const int nj = j1 - j0 + 1;
      for_rows(size_t(nj * (k1 - k0 + 1)), [&](size_t row) {
        const int j = j0 + int(row) % nj, k = k0 + int(row) / nj;
        for (int i = i0; i <= i1; ++i) {
          Vec3 p = o_.origin + Vec3{i + ox, j + oy, k + oz} * o_.dx;
          if (!three_d_) p.z = r.shape == FluidShape::Capsule ? r.a.z : r.center.z;
          if (!(r.distance(p) < 0)) continue;
          const size_t n = size_t(i) + size_t(sx) * (size_t(j) + size_t(sy) * size_t(k));
          if (lattice == 0) {
            density_[n] = std::max(density_[n], s.density);
            temperature_[n] = std::max(temperature_[n], s.temperature);
            fuel_[n] = std::max(fuel_[n], s.fuel);
          } else if (lattice == 1) {
            u_[n] = s.velocity->x;
          } else if (lattice == 2) {
            v_[n] = s.velocity->y;
          } else {
            w_[n] = s.velocity->z;
          }
        }
      });
    }
  }
}

void GridFluid::enforce_boundaries() {
  const int nx = o_.nx, ny = o_.ny, nz = o_.nz;
  // The face between cells a and b (either may be −1: outside) on axis `axis`: 0 on a wall (even
  // where a solid touches it), else a solid's velocity when one side is solid (the mean when both
  // are, different solids), else kept.
  auto fix = [&](double& f, long a, long b, bool outside_is_wall, int axis) {
    if ((a < 0 || b < 0) && outside_is_wall) {
      f = 0;
      return;
    }
    const int oa = a >= 0 ? owner_[size_t(a)] : -1, ob = b >= 0 ? owner_[size_t(b)] : -1;
    if (oa >= 0 && ob >= 0) {
      f = 0.5 * (obstacle(oa).velocity[axis] + obstacle(ob).velocity[axis]);
    } else if (oa >= 0 || ob >= 0) {
      f = obstacle(oa >= 0 ? oa : ob).velocity[axis];
    }
  };
  for_rows(size_t(ny) * nz, [&](size_t row) {
    const int j = int(row % ny), k = int(row / ny);
    const long c0 = long(cell_index(0, j, k));
    double* u = &u_[size_t(nx + 1) * row];
    for (int i = 0; i <= nx; ++i)
      fix(u[i], i > 0 ? c0 + i - 1 : -1, i < nx ? c0 + i : -1, !open(i == 0 ? 0 : 1), 0);
  });
  for_rows(size_t(ny + 1) * nz, [&](size_t row) {
    const int j = int(row % (ny + 1)), k = int(row / (ny + 1));
    double* v = &v_[size_t(nx) * row];
    for (int i = 0; i < nx; ++i)
      fix(v[i], j > 0 ? long(cell_index(i, j - 1, k)) : -1, j < ny ? long(cell_index(i, j, k)) : -1,
          !open(j == 0 ? 2 : 3), 1);
  });
  if (!three_d_) return;
  for_rows(size_t(ny) * (nz + 1), [&](size_t row) {
    const int j = int(row % ny), k = int(row / ny);
    double* w = &w_[size_t(nx) * row];
    for (int i = 0; i < nx; ++i)
      fix(w[i], k > 0 ? long(cell_index(i, j, k - 1)) : -1, k < nz ? long(cell_index(i, j, k)) : -1,
          !open(k == 0 ? 4 : 5), 2);
  });
}

// ---- stepping ----

void GridFluid::step(double dt) {
  if (!(dt > 0) || !std::isfinite(dt)) throw Error(kFile, "step", "dt must be > 0 and finite");
  const auto start = std::chrono::steady_clock::now();
  timings_ = {};
  tbb::task_arena arena(o_.threads > 0 ? o_.threads : tbb::task_arena::automatic);
  arena.execute([&] {
    build_solids();
    // Substeps: the fastest face (or source or solid) moves at most max_cfl cells in one.
    auto row_max = [](const std::vector<double>& f, size_t len) {
      return max_rows(f.size() / len, [&](size_t row) {
        double m = 0;
        for (size_t c = row * len, e = c + len; c < e; ++c) m = std::max(m, std::abs(f[c]));
        return m;
      });
    };
    double speed = std::max(
        {row_max(u_, size_t(o_.nx) + 1), row_max(v_, size_t(o_.nx)), row_max(w_, size_t(o_.nx))});
    auto vmax = [](const Vec3& v) {
      return std::max({std::abs(v.x), std::abs(v.y), std::abs(v.z)});
    };
    for (const FluidSource& s : sources_)
      if (s.velocity) speed = std::max(speed, vmax(*s.velocity));
    for (const FluidObstacle& o : o_.obstacles) speed = std::max(speed, vmax(o.velocity));
    for (const FluidObstacle& o : moving_) speed = std::max(speed, vmax(o.velocity));
    const double cells = dt * speed / (o_.max_cfl * o_.dx);
    substeps_ = int(std::clamp(std::ceil(cells), 1.0, double(o_.max_substeps)));
    const double h = dt / substeps_;
    for (int s = 0; s < substeps_; ++s) substep(h);
  });
  sources_.clear();
  timings_.total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  time_ += dt;
  ++steps_;
}

void GridFluid::substep(double h) {
  using clock = std::chrono::steady_clock;
  auto seconds = [](clock::time_point a, clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
  };
  const auto t0 = clock::now();
  apply_sources();
  enforce_boundaries();
  advect(h);
  const auto t1 = clock::now();
  add_forces(h);
  const auto t2 = clock::now();
  diffuse(h);
  const auto t3 = clock::now();
  project_now();
  const auto t4 = clock::now();
  react(h);
  timings_.advection += seconds(t0, t1);
  timings_.forces += seconds(t1, t2) + seconds(t4, clock::now());
  timings_.diffusion += seconds(t2, t3);
  timings_.pressure += seconds(t3, t4);
}

void GridFluid::project() {
  tbb::task_arena arena(o_.threads > 0 ? o_.threads : tbb::task_arena::automatic);
  arena.execute([&] {
    build_solids();
    project_now();
  });
}

// ---- read-outs ----

Vec3 GridFluid::velocity_at(const Vec3& p) const {
  using grid_fluid_detail::Lattice;
  using grid_fluid_detail::sample;
  const Vec3 g = (p - o_.origin) / o_.dx;
  const int nx = o_.nx, ny = o_.ny, nz = o_.nz;
  const Lattice lu{nx + 1, ny, nz, 0, 0.5, 0.5}, lv{nx, ny + 1, nz, 0.5, 0, 0.5},
      lw{nx, ny, nz + 1, 0.5, 0.5, 0};
  return {sample(lu, u_.data(), g.x, g.y, g.z), sample(lv, v_.data(), g.x, g.y, g.z),
          three_d_ ? sample(lw, w_.data(), g.x, g.y, g.z) : 0.0};
}

double GridFluid::smoke_mass() const {
  const size_t nx = size_t(o_.nx);
  const double total = sum_rows(size_t(o_.ny) * o_.nz, [&](size_t row) {
    double s = 0;
    for (size_t c = row * nx, e = c + nx; c < e; ++c) s += density_[c];
    return s;
  });
  return total * o_.dx * o_.dx * o_.dx;
}

double GridFluid::enstrophy() const {
  const int ny = o_.ny;
  const double total = sum_rows(size_t(ny) * o_.nz, [&](size_t row) {
    const int j = int(row % ny), k = int(row / ny);
    double s = 0;
    for (int i = 0; i < o_.nx; ++i) s += length_squared(curl_at(i, j, k));
    return s;
  });
  return total * o_.dx * o_.dx * o_.dx;
}

}  // namespace kinema
