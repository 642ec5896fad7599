// Module-private helpers of the FLIP liquid (kinema/fluid/flip.h): the face lattices. The row
// loops, trilinear sampling and the MIC(0)/CG pressure solve are shared with the grid fluid
// (grid_fluid_internal.h).
#pragma once

#include "grid_fluid_internal.h"
#include "kinema/fluid/flip.h"

namespace kinema::flip_detail {

using grid_fluid_detail::Lattice;

/// The faces normal to `axis` (0 x, 1 y, 2 z) as a lattice in cell coordinates: face (i, j, k) of
/// u sits at (i, j + ½, k + ½), and so on.
inline Lattice face_lattice(const FlipOptions& o, int axis) {
  switch (axis) {
    case 0:
      return {o.nx + 1, o.ny, o.nz, 0.0, 0.5, 0.5};
    case 1:
      return {o.nx, o.ny + 1, o.nz, 0.5, 0.0, 0.5};
    default:
      return {o.nx, o.ny, o.nz + 1, 0.5, 0.5, 0.0};
  }
}

}  // namespace kinema::flip_detail
