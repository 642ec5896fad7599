// Internal: the SPH neighbour search. A uniform grid of cubic cells of size `cell` (the smoothing
// radius h) over the domain. sort() counting-sorts a particle set by cell — count per cell,
// prefix sum, scatter, a stable O(n) sort — and records where each cell's run begins, so the
// particles of a cell, once permuted into that order, are consecutive in memory and the
// neighbours of any point within h lie in the 3×3 (2D) or 3×3×3 (3D) runs around its cell.
// find() then builds compressed neighbour lists (CSR: start[i] .. start[i+1] index the sorted
// set) in two parallel passes (count, then fill), each list in cell order, then sorted order
// within a cell: a fixed order, whatever the thread count.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <tbb/task_arena.h>

#include "kinema/math/vec3.h"

namespace kinema::sph_detail {

struct SphGrid {
  Vec3 origin{0, 0, 0};
  double cell = 1;
  int dims = 3;
  std::int64_t nx = 1, ny = 1, nz = 1;
  std::vector<std::uint32_t> cell_start;  ///< nx·ny·nz + 1 entries after sort()

  /// The grid over [lo, hi] with cells of `cell` (in 2D nz = 1). Returns the cell count, or −1
  /// when it would exceed 2³¹ (the caller reports it).
  std::int64_t setup(const Vec3& lo, const Vec3& hi, double cell_size, int dimensions);

  /// The cell coordinates of a point (clamped into the grid).
  void coords(double x, double y, double z, std::int64_t& cx, std::int64_t& cy,
              std::int64_t& cz) const;
  std::int64_t index(std::int64_t cx, std::int64_t cy, std::int64_t cz) const {
    return (cz * ny + cy) * nx + cx;
  }

  /// Counting-sorts n points by cell: order[k] is the original index of the k-th sorted point;
  /// fills cell_start for the sorted order. `key` is scratch.
  void sort(const double* px, const double* py, const double* pz, std::size_t n,
            std::vector<std::uint32_t>& order, std::vector<std::uint32_t>& key);
};

/// Neighbour lists: the neighbours of query point i are index[start[i] .. start[i+1]).
struct SphNeighbours {
  std::vector<std::uint32_t> start;
  std::vector<std::uint32_t> index;
};

/// For each of the nq query points (qx, qy, qz), the points of the sorted set (px, py, pz, sorted
/// by `grid`'s last sort()) closer than `radius` (≤ grid.cell), itself included when the sets are
/// the same. Runs on `arena` with `threads` (1: serially).
void find_neighbours(const SphGrid& grid, const double* qx, const double* qy, const double* qz,
                     std::size_t nq, const double* px, const double* py, const double* pz,
                     double radius, SphNeighbours& out, tbb::task_arena* arena, int threads);

}  // namespace kinema::sph_detail
