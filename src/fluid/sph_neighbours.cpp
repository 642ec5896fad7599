// The SPH neighbour grid: see sph_neighbours.h.
#include "sph_neighbours.h"

#include <algorithm>
#include <cmath>

#include "sph_parallel.h"

namespace kinema::sph_detail {

std::int64_t SphGrid::setup(const Vec3& lo, const Vec3& hi, double cell_size, int dimensions) {
  origin = lo;
  cell = cell_size;
  dims = dimensions;
  const auto count = [&](double extent) {
    // At least one cell; the limit keeps the product below 2³¹ without overflow.
    const double c = std::ceil(extent / cell_size);
    return static_cast<std::int64_t>(std::clamp(c, 1.0, 4.0e9));
  };
  nx = count(hi.x - lo.x);
  ny = count(hi.y - lo.y);
  nz = dimensions == 3 ? count(hi.z - lo.z) : 1;
  const double cells = static_cast<double>(nx) * static_cast<double>(ny) * static_cast<double>(nz);
  if (cells > 2147483647.0) return -1;
  cell_start.assign(static_cast<std::size_t>(nx * ny * nz) + 1, 0);
  return nx * ny * nz;
}

void SphGrid::coords(double x, double y, double z, std::int64_t& cx, std::int64_t& cy,
                     std::int64_t& cz) const {
  // Clamped in double first: a point far outside must not overflow the integer conversion.
  const auto c = [&](double v, double o, std::int64_t n) {
    const double f = std::floor((v - o) / cell);
    return static_cast<std::int64_t>(std::clamp(f, 0.0, static_cast<double>(n - 1)));
  };
  cx = c(x, origin.x, nx);
  cy = c(y, origin.y, ny);
  cz = dims == 3 ? c(z, origin.z, nz) : 0;
}

void SphGrid::sort(const double* px, const double* py, const double* pz, std::size_t n,
                   std::vector<std::uint32_t>& order, std::vector<std::uint32_t>& key) {
  std::fill(cell_start.begin(), cell_start.end(), 0u);
  key.resize(n);
  order.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::int64_t cx, cy, cz;
    coords(px[i], py[i], pz[i], cx, cy, cz);
    key[i] = static_cast<std::uint32_t>(index(cx, cy, cz));
    ++cell_start[key[i] + 1];
  }
  for (std::size_t c = 1; c < cell_start.size(); ++c) cell_start[c] += cell_start[c - 1];
  // Scatter with a running cursor per cell; cell_start is restored afterwards by shifting.
  std::vector<std::uint32_t>& cursor = cell_start;
  for (std::size_t i = 0; i < n; ++i) order[cursor[key[i]]++] = static_cast<std::uint32_t>(i);
  // cursor[c] now holds the end of cell c = the start of cell c + 1.
  for (std::size_t c = cell_start.size() - 1; c > 0; --c) cell_start[c] = cell_start[c - 1];
  cell_start[0] = 0;
}

namespace {

// Calls f(j) for every sorted point j within `radius` of (x, y, z), in cell order.
template <class F>
void visit(const SphGrid& g, double x, double y, double z, const double* px, const double* py,
           const double* pz, double r2max, const F& f) {
  std::int64_t cx, cy, cz;
  g.coords(x, y, z, cx, cy, cz);
  const std::int64_t z0 = std::max<std::int64_t>(cz - 1, 0), z1 = std::min(cz + 1, g.nz - 1);
  const std::int64_t y0 = std::max<std::int64_t>(cy - 1, 0), y1 = std::min(cy + 1, g.ny - 1);
  const std::int64_t x0 = std::max<std::int64_t>(cx - 1, 0), x1 = std::min(cx + 1, g.nx - 1);
  for (std::int64_t k = z0; k <= z1; ++k) {
    for (std::int64_t j = y0; j <= y1; ++j) {
      // The cells x0..x1 of one row are consecutive, so their runs form one run.
      const std::uint32_t b = g.cell_start[static_cast<std::size_t>(g.index(x0, j, k))];
      const std::uint32_t e = g.cell_start[static_cast<std::size_t>(g.index(x1, j, k)) + 1];
      for (std::uint32_t s = b; s < e; ++s) {
        const double dx = x - px[s], dy = y - py[s], dz = z - pz[s];
        if (dx * dx + dy * dy + dz * dz < r2max) f(s);
      }
    }
  }
}

}  // namespace

void find_neighbours(const SphGrid& grid, const double* qx, const double* qy, const double* qz,
                     std::size_t nq, const double* px, const double* py, const double* pz,
                     double radius, SphNeighbours& out, tbb::task_arena* arena, int threads) {
  const double r2 = radius * radius;
  out.start.assign(nq + 1, 0);
  constexpr std::size_t kBlock = 512;
  for_blocks(arena, threads, nq, kBlock, [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) {
      std::uint32_t c = 0;
      visit(grid, qx[i], qy[i], qz[i], px, py, pz, r2, [&](std::uint32_t) { ++c; });
      out.start[i + 1] = c;
    }
  });
  for (std::size_t i = 0; i < nq; ++i) out.start[i + 1] += out.start[i];
  out.index.resize(out.start[nq]);
  for_blocks(arena, threads, nq, kBlock, [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) {
      std::uint32_t* w = out.index.data() + out.start[i];
      visit(grid, qx[i], qy[i], qz[i], px, py, pz, r2, [&](std::uint32_t s) { *w++ = s; });
    }
  });
}

}  // namespace kinema::sph_detail
