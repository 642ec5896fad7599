// The Zhu–Bridson particle field (see kinema/fluid/marching_cubes.h).
//
// Particles are counting-sorted into a uniform grid of cells at least R wide (in particle order
// within a cell). A row of samples (one j, k) gathers once the particles within R of it in y and
// z, from the cells that overlap (at most 3 per axis), grouped by x cell; each sample then sums
// the groups of the (at most 3) x cells its R-ball overlaps. That order is fixed by the data
// alone, so every sample is the same bits whatever the thread count (parallel over z layers).
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "kinema/core/error.h"
#include "kinema/fluid/marching_cubes.h"

namespace kinema {
namespace {

constexpr double kMaxSamples = double(std::size_t(1) << 28);

[[noreturn]] void fail(const std::string& place, const std::string& reason) {
  throw Error("particle field", place, reason);
}

void check_positive(const char* name, double value) {
  if (!std::isfinite(value) || !(value > 0))
    fail(name, "must be finite and positive, is " + std::to_string(value));
}

}  // namespace

ScalarGrid particle_field(std::span<const Vec3> particles, double radius, double spacing,
                          const ParticleFieldOptions& options) {
  if (particles.empty()) fail("particles", "no particles: there is no surface to sample");
  if (particles.size() > std::numeric_limits<std::uint32_t>::max())
    fail("particles", "more than 2^32 - 1 particles");
  check_positive("radius", radius);
  check_positive("spacing", spacing);
  const double support = options.kernel_radius == 0 ? 4 * radius : options.kernel_radius;
  check_positive("kernel_radius", support);
  if (!(support > radius))
    fail("kernel_radius", "R = " + std::to_string(support) + " must exceed the particle radius " +
                              std::to_string(radius));
  Vec3 lo = particles[0], hi = particles[0];
  for (std::size_t p = 0; p < particles.size(); ++p) {
    if (!is_finite(particles[p]))
      fail("particles[" + std::to_string(p) + "]", "position is not finite");
    for (int a = 0; a < 3; ++a) {
      lo[a] = std::min(lo[a], particles[p][a]);
      hi[a] = std::max(hi[a], particles[p][a]);
    }
  }

  // The sample grid: the particles' box plus R + 2 cells on every side, so the border is outside.
  ScalarGrid grid;
  const double margin = support + 2 * spacing;
  grid.origin = lo - Vec3::one() * margin;
  grid.spacing = spacing;
  std::array<int, 3> n{};
  double samples = 1;
  for (int a = 0; a < 3; ++a) {
    const double count = std::ceil((hi[a] - lo[a] + 2 * margin) / spacing) + 1;
    samples *= count;
    if (!(samples <= kMaxSamples))
      fail("spacing", "the grid would have more than 2^28 samples; raise the spacing");
    n[a] = int(count);
  }
  grid.nx = n[0], grid.ny = n[1], grid.nz = n[2];
  grid.values.assign(std::size_t(samples), float(support));

  // Neighbour cells: at least R and at least a sample spacing wide, so there are never more
  // cells than samples.
  const double cell = std::max(support, spacing);
  std::array<int, 3> m{};
  for (int a = 0; a < 3; ++a) m[a] = int(std::floor((hi[a] - lo[a]) / cell)) + 1;
  const auto cell_of = [&](const Vec3& x, int a) {
    return std::clamp(int(std::floor((x[a] - lo[a]) / cell)), 0, m[a] - 1);
  };
  const std::size_t cells = std::size_t(m[0]) * std::size_t(m[1]) * std::size_t(m[2]);
  std::vector<std::uint32_t> start(cells + 1, 0), order(particles.size());
  std::vector<std::uint32_t> cell_index(particles.size());
  for (std::size_t p = 0; p < particles.size(); ++p) {
    const Vec3& x = particles[p];
    cell_index[p] = std::uint32_t(
        std::size_t(cell_of(x, 0)) +
        std::size_t(m[0]) * (std::size_t(cell_of(x, 1)) + std::size_t(m[1]) * cell_of(x, 2)));
    ++start[cell_index[p] + 1];
  }
  for (std::size_t c = 0; c < cells; ++c) start[c + 1] += start[c];
  {
    std::vector<std::uint32_t> fill(start.begin(), start.end() - 1);
    for (std::size_t p = 0; p < particles.size(); ++p)
      order[fill[cell_index[p]]++] = std::uint32_t(p);
  }

  const double r2 = support * support;
  const auto layer = [&](int k) {
    // The particles within R of the row in y and z, grouped by x cell: block cx is
    // near[block[cx], block[cx + 1]), in (z cell, y cell, particle) order.
    std::vector<Vec3> near;
    std::vector<std::size_t> block(static_cast<std::size_t>(m[0]) + 1);
    for (int j = 0; j < grid.ny; ++j) {
      const Vec3 row = grid.position(0, j, k);
      if (row.y + support < lo.y || row.y - support > hi.y || row.z + support < lo.z ||
          row.z - support > hi.z)
        continue;
      const Vec3 below = row - Vec3::one() * support, above = row + Vec3::one() * support;
      const int y0 = cell_of(below, 1), y1 = cell_of(above, 1);
      const int z0 = cell_of(below, 2), z1 = cell_of(above, 2);
      near.clear();
      for (int cx = 0; cx < m[0]; ++cx) {
        block[cx] = near.size();
        for (int cz = z0; cz <= z1; ++cz) {
          for (int cy = y0; cy <= y1; ++cy) {
            const std::size_t c =
                std::size_t(cx) + std::size_t(m[0]) * (cy + std::size_t(m[1]) * cz);
            for (std::uint32_t s = start[c]; s < start[c + 1]; ++s) {
              const Vec3& x = particles[order[s]];
              const double dy = x.y - row.y, dz = x.z - row.z;
              if (dy * dy + dz * dz < r2) near.push_back(x);
            }
          }
        }
      }
      block[m[0]] = near.size();
      if (near.empty()) continue;
      // Each sample sums the blocks of the x cells its R-ball overlaps, in that fixed order.
      for (int i = 0; i < grid.nx; ++i) {
        const Vec3 x = grid.position(i, j, k);
        const std::size_t first = block[cell_of(x - Vec3::one() * support, 0)];
        const std::size_t last = block[cell_of(x + Vec3::one() * support, 0) + 1];
        double w_sum = 0;
        Vec3 x_sum{0, 0, 0};
        for (std::size_t q = first; q < last; ++q) {
          const double s2 = length_squared(near[q] - x) / r2;
          if (s2 >= 1) continue;
          const double u = 1 - s2, w = u * u * u;
          w_sum += w;
          x_sum += near[q] * w;
        }
        if (w_sum > 0) grid.values[grid.index(i, j, k)] = float(length(x - x_sum / w_sum) - radius);
      }
    }
  };

  if (options.threads == 1) {
    for (int k = 0; k < grid.nz; ++k) layer(k);
  } else {
    tbb::task_arena arena(options.threads > 0 ? options.threads : tbb::task_arena::automatic);
    arena.execute([&] { tbb::parallel_for(0, grid.nz, [&](int k) { layer(k); }); });
  }
  return grid;
}

}  // namespace kinema
