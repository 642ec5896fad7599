// kinema/crowd/nav_grid.h — where agents may walk, and the paths between places: a navigation
// grid over the ground and A* search on it.
//
// The grid lies on the ground plane: cell (ix, iz) covers [x0 + ix·c, x0 + (ix+1)·c) ×
// [z0 + iz·c, z0 + (iz+1)·c) in world x and z (Vec2's x and y), metres, with the ground's height
// at its centre. Built from a ground (kinema/ik/ground.h: a height field or a triangle mesh such
// as data/demo/stairs.obj), a cell is walkable when a ray finds ground under its centre no steeper
// than max_slope; two neighbouring cells connect when their heights differ by at most max_step.
// Cells closer than `clearance` to an unwalkable one are closed too, so an agent's centre kept on
// open cells keeps its body off walls.
//
// Paths: A* over the 8-connected cells (diagonal moves only between two open orthogonal
// neighbours, so no corner is cut), costs in metres, the octile distance as heuristic (admissible
// and consistent, so the path is a shortest one on the grid), ties broken by cell index so the
// same query gives the same path. The cell path is then pulled taut: waypoints that can see each
// other in a straight line over open, connected cells are joined.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "kinema/ik/ground.h"
#include "kinema/math/vec2.h"

namespace kinema {

struct NavGridSettings {
  double cell_size = 0.5;   ///< m
  double max_slope = 0.70;  ///< rad (40°): steeper ground is not walkable
  double max_step = 0.35;   ///< m: the most two neighbouring cells' heights may differ
  double clearance = 0.0;   ///< m: cells whose centres are this close to a closed cell close
  double ray_top = 1000.0;  ///< m: height the rays are cast down from
};

class NavGrid {
 public:
  /// All cells open and flat at height 0: `width` × `depth` cells of `cell_size` metres from
  /// `origin` (the low x, z corner). Throws kinema::Error for a non-positive or non-finite cell
  /// size or origin, or a count < 1 or above 2²⁶ cells.
  NavGrid(Vec2 origin, double cell_size, int width, int depth);

  /// Samples `ground` over the rectangle [lo, hi] (x, z). Throws kinema::Error as the
  /// constructor does, for lo ≥ hi, and for settings out of range (a slope outside [0, π/2],
  /// a negative step or clearance).
  static NavGrid from_ground(const Ground& ground, Vec2 lo, Vec2 hi,
                             const NavGridSettings& settings);

  /// Closes every cell whose centre lies inside the disc, or the axis-aligned rectangle.
  void close_disc(Vec2 centre, double radius);
  void close_rectangle(Vec2 lo, Vec2 hi);
  /// Closes every open cell within `clearance` metres of a closed cell or the grid's edge.
  void apply_clearance(double clearance);

  int width() const noexcept { return width_; }
  int depth() const noexcept { return depth_; }
  double cell_size() const noexcept { return cell_; }
  Vec2 origin() const noexcept { return origin_; }
  /// The cell holding p; false (ix, iz untouched) outside the grid or for non-finite p.
  bool cell_of(Vec2 p, int& ix, int& iz) const noexcept;
  Vec2 centre(int ix, int iz) const noexcept;
  bool open(int ix, int iz) const noexcept;
  /// Whether p lies on an open cell.
  bool walkable(Vec2 p) const noexcept;
  /// Ground height at the cell holding p (m), 0 outside.
  double height(Vec2 p) const noexcept;
  std::size_t open_cell_count() const noexcept;

  /// Whether the segment a–b crosses only open cells, each connected to the next (every cell the
  /// segment touches, corners included).
  bool line_of_sight(Vec2 a, Vec2 b) const noexcept;

  /// The shortest grid path from `from` to `to`, pulled taut: waypoints from `from` (first) to
  /// `to` (last). std::nullopt when either end is off the open cells or they are not connected.
  ///
  /// `keep_right` > 0 makes cells left of the straight line from `from` to `to` (seen walking
  /// along it, +Y up) cost 1 + keep_right times as much, so a path that must go round an
  /// obstacle passes it on its right, as pedestrians keep to one side: two flows meeting at an
  /// obstacle then take opposite sides of it instead of meeting head on along its wall. The
  /// octile heuristic stays admissible (no cell costs less than its length), so the path is the
  /// cheapest under those costs.
  std::optional<std::vector<Vec2>> find_path(Vec2 from, Vec2 to, double keep_right = 0) const;
  /// Cells A* expanded in the last find_path on this thread (for tests and benchmarks).
  static std::size_t last_expanded_count() noexcept;

 private:
  bool connected(int a, int b) const noexcept;  // neighbouring open cells within max_step
  // A step from cell (ix, iz) by (dx, dz), each −1, 0 or 1; diagonal steps need both side cells.
  bool passable(int ix, int iz, int dx, int dz) const noexcept;
  std::size_t index(int ix, int iz) const noexcept {
    return static_cast<std::size_t>(iz) * static_cast<std::size_t>(width_) +
           static_cast<std::size_t>(ix);
  }

  Vec2 origin_;
  double cell_ = 0.5, max_step_ = 1e30;
  int width_ = 0, depth_ = 0;
  std::vector<std::uint8_t> open_;
  std::vector<float> heights_;
};

}  // namespace kinema
