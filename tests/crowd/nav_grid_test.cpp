// Navigation grids: A* finds shortest grid paths (checked against Dijkstra on random mazes),
// pulled-taut paths keep to open cells, walls and clearance close cells, the demo stairs are
// walkable only with a step at least their rise, and bad grids are refused.
#include "kinema/crowd/nav_grid.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <queue>
#include <random>

#include "kinema/core/error.h"
#include "kinema/io/terrain.h"
#include "test_paths.h"

namespace kinema {
namespace {

double path_length(const std::vector<Vec2>& path) {
  double total = 0;
  for (std::size_t i = 1; i < path.size(); ++i) total += length(path[i] - path[i - 1]);
  return total;
}

// Shortest 8-connected grid distance between two cell centres by Dijkstra (no corner cutting).
double dijkstra(const NavGrid& grid, int sx, int sz, int gx, int gz) {
  const int w = grid.width(), d = grid.depth();
  std::vector<double> cost(static_cast<std::size_t>(w * d), INFINITY);
  using Entry = std::pair<double, int>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue;
  cost[sz * w + sx] = 0;
  queue.push({0, sz * w + sx});
  const double c = grid.cell_size();
  while (!queue.empty()) {
    auto [g, cell] = queue.top();
    queue.pop();
    if (g > cost[cell]) continue;
    const int x = cell % w, z = cell / w;
    for (int dz = -1; dz <= 1; ++dz) {
      for (int dx = -1; dx <= 1; ++dx) {
        if ((dx == 0 && dz == 0) || !grid.open(x + dx, z + dz)) continue;
        if (dx != 0 && dz != 0 && (!grid.open(x + dx, z) || !grid.open(x, z + dz))) continue;
        const double next = g + (dx != 0 && dz != 0 ? c * std::numbers::sqrt2 : c);
        const int n = (z + dz) * w + x + dx;
        if (next < cost[n]) {
          cost[n] = next;
          queue.push({next, n});
        }
      }
    }
  }
  return cost[gz * w + gx];
}

void expect_path_keeps_to_open_cells(const NavGrid& grid, const std::vector<Vec2>& path) {
  for (std::size_t i = 1; i < path.size(); ++i) {
    EXPECT_TRUE(grid.line_of_sight(path[i - 1], path[i])) << "leg " << i;
  }
}

TEST(NavGrid, OpenGroundGivesAStraightPath) {
  const NavGrid grid({-10, -10}, 0.5, 40, 40);
  const auto path = grid.find_path({-8.2, -7.1}, {6.3, 5.9});
  ASSERT_TRUE(path);
  ASSERT_EQ(path->size(), 2u);
  EXPECT_EQ(path->front(), (Vec2{-8.2, -7.1}));
  EXPECT_EQ(path->back(), (Vec2{6.3, 5.9}));
}

TEST(NavGrid, PathGoesThroughTheGapInAWall) {
  NavGrid grid({0, 0}, 0.5, 40, 40);           // 20 m square
  grid.close_rectangle({9.6, 0}, {10.4, 14});  // a wall at x = 10 with a gap for z > 14
  const auto path = grid.find_path({2, 2}, {18, 2});
  ASSERT_TRUE(path);
  expect_path_keeps_to_open_cells(grid, *path);
  bool through_gap = false;
  for (const Vec2& p : *path) through_gap |= p.y > 14;
  EXPECT_TRUE(through_gap);
  // Around the wall's end and back: two straight legs of about √(8² + 12²) each.
  EXPECT_NEAR(path_length(*path), 2 * std::hypot(8.0, 12.25), 1.0);
  EXPECT_GE(path->size(), 3u);
}

TEST(NavGrid, AStarMatchesDijkstraOnRandomMazes) {
  std::mt19937 rng(3);
  for (int maze = 0; maze < 20; ++maze) {
    NavGrid grid({0, 0}, 1.0, 30, 30);
    std::bernoulli_distribution wall(0.25);
    for (int z = 0; z < 30; ++z) {
      for (int x = 0; x < 30; ++x) {
        if ((x > 1 || z > 1) && (x < 28 || z < 28) && wall(rng)) {
          grid.close_rectangle({x + 0.4, z + 0.4}, {x + 0.6, z + 0.6});
        }
      }
    }
    const double reference = dijkstra(grid, 0, 0, 29, 29);
    const auto path = grid.find_path({0.5, 0.5}, {29.5, 29.5});
    ASSERT_EQ(path.has_value(), std::isfinite(reference)) << "maze " << maze;
    if (!path) continue;
    expect_path_keeps_to_open_cells(grid, *path);
    // Pulled taut, the path is no longer than the shortest grid path between the same centres.
    EXPECT_LE(path_length(*path), reference + 1e-9) << "maze " << maze;
    EXPECT_LT(NavGrid::last_expanded_count(), grid.open_cell_count() + 1);
  }
}

TEST(NavGrid, EnclosedGoalHasNoPath) {
  NavGrid grid({0, 0}, 1.0, 10, 10);
  grid.close_rectangle({5.5, 5.5}, {8.5, 5.5});
  grid.close_rectangle({5.5, 8.5}, {8.5, 8.5});
  grid.close_rectangle({5.5, 5.5}, {5.5, 8.5});
  grid.close_rectangle({8.5, 5.5}, {8.5, 8.5});
  EXPECT_FALSE(grid.find_path({1.5, 1.5}, {7.5, 7.5}));
  EXPECT_FALSE(grid.find_path({1.5, 1.5}, {5.5, 5.5}));  // onto a closed cell
  EXPECT_FALSE(grid.find_path({1.5, 1.5}, {50, 5}));     // off the grid
}

TEST(NavGrid, ClearanceClosesCellsNearWallsAndEdges) {
  NavGrid grid({0, 0}, 0.25, 40, 40);
  grid.close_rectangle({4.8, 0}, {5.2, 10});
  const std::size_t before = grid.open_cell_count();
  grid.apply_clearance(0.3);
  EXPECT_LT(grid.open_cell_count(), before);
  EXPECT_FALSE(grid.walkable({4.7, 5}));  // 0.2 m from the wall's cells
  EXPECT_TRUE(grid.walkable({4.3, 5}));
  EXPECT_FALSE(grid.walkable({0.1, 5}));  // at the edge
}

TEST(NavGrid, DemoStairsAreWalkableOnlyWithAStepAsHighAsTheirRise) {
  const TriangleMeshGround stairs =
      load_obj_ground(test_paths::source_dir() + "/data/demo/stairs.obj");
  NavGridSettings settings;
  settings.cell_size = 0.25;
  settings.max_step = 0.2;  // the rise is 0.15 m
  const NavGrid grid = NavGrid::from_ground(stairs, {-1, -3}, {2, 3.5}, settings);
  EXPECT_EQ(grid.open_cell_count(), std::size_t(grid.width() * grid.depth()));
  EXPECT_NEAR(grid.height({0.5, 2.0}), 0.75, 1e-9);  // the landing
  EXPECT_NEAR(grid.height({0.5, -2.0}), 0.0, 1e-9);  // the floor
  const auto up = grid.find_path({0.5, -2.5}, {0.5, 3.0});
  ASSERT_TRUE(up);
  EXPECT_NEAR(path_length(*up), 5.5, 1e-9);

  settings.max_step = 0.1;  // now each riser is a wall
  const NavGrid too_high = NavGrid::from_ground(stairs, {-1, -3}, {2, 3.5}, settings);
  EXPECT_FALSE(too_high.find_path({0.5, -2.5}, {0.5, 3.0}));
  EXPECT_TRUE(too_high.find_path({0.5, -2.5}, {1.5, -1.5}));  // the floor alone still connects
}

TEST(NavGrid, SteepGroundIsClosed) {
  // A 45° ramp between two flats: closed with a 40° limit, open with 50°.
  std::vector<double> heights;
  for (int z = 0; z < 11; ++z) {
    for (int x = 0; x < 11; ++x) heights.push_back(x < 4 ? 0.0 : (x < 7 ? (x - 4) * 1.0 : 3.0));
  }
  const HeightField field(0, 0, 1.0, 11, 11, heights);
  NavGridSettings settings;
  settings.cell_size = 1.0;
  settings.max_step = 2.0;
  const NavGrid strict = NavGrid::from_ground(field, {0, 0}, {10, 10}, settings);
  EXPECT_FALSE(strict.walkable({5.5, 5.5}));
  EXPECT_TRUE(strict.walkable({1.5, 5.5}));
  settings.max_slope = 50 * std::numbers::pi / 180;
  const NavGrid lenient = NavGrid::from_ground(field, {0, 0}, {10, 10}, settings);
  EXPECT_TRUE(lenient.walkable({5.5, 5.5}));
}

TEST(NavGrid, BadGridsAreRefused) {
  EXPECT_THROW(NavGrid({0, 0}, 0.0, 10, 10), Error);
  EXPECT_THROW(NavGrid({0, 0}, 1.0, 0, 10), Error);
  EXPECT_THROW(NavGrid({NAN, 0}, 1.0, 10, 10), Error);
  EXPECT_THROW(NavGrid({0, 0}, 1.0, 1 << 14, 1 << 14), Error);
  const HeightField flat(0, 0, 1.0, 2, 2, {0, 0, 0, 0});
  EXPECT_THROW(NavGrid::from_ground(flat, {1, 1}, {0, 2}, {}), Error);
  NavGridSettings bad;
  bad.max_slope = 2;
  EXPECT_THROW(NavGrid::from_ground(flat, {0, 0}, {1, 1}, bad), Error);
}

}  // namespace
}  // namespace kinema
