// Crowd agents: two groups of 500 swapping sides and a circle of agents walking to its
// antipodes all arrive without overlapping by more than 5 % of a radius; the same bits whatever
// the thread count; paths round a wall keep agents off closed cells; bad input is refused.
#include "kinema/crowd/crowd.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numbers>

#include "kinema/core/error.h"

namespace kinema {
namespace {

// Two groups of rows × columns agents on a 1 m grid, `gap` metres apart, each walking to the
// other's mirrored place.
Crowd crossing(int rows, int columns, float gap, const CrowdSettings& settings) {
  Crowd crowd(settings);
  for (int side = -1; side <= 1; side += 2) {
    for (int r = 0; r < rows; ++r) {
      for (int c = 0; c < columns; ++c) {
        const float x = side * (gap / 2 + static_cast<float>(c));
        const float y = static_cast<float>(r) - 0.5f * static_cast<float>(rows - 1);
        crowd.add_agent({x, y}, {-x, y});
      }
    }
  }
  return crowd;
}

struct RunResult {
  float worst_overlap = 0;
  int steps = 0;
  std::size_t arrived = 0;
};

RunResult run(Crowd& crowd, float h, int max_steps) {
  RunResult result;
  for (; result.steps < max_steps && crowd.arrived_count() < crowd.size(); ++result.steps) {
    crowd.step(h);
    result.worst_overlap = std::max(result.worst_overlap, crowd.max_overlap());
  }
  result.arrived = crowd.arrived_count();
  return result;
}

TEST(Crowd, ThousandAgentsCrossingOverlapLessThanFivePercentOfARadius) {
  CrowdSettings settings;  // neighbours within 1.5 m, 10 of them, horizon 2 s, r 0.3, 1.5 m/s
  settings.threads = 2;
  Crowd crowd = crossing(25, 20, 6.0f, settings);
  ASSERT_EQ(crowd.size(), 1000u);
  const RunResult result = run(crowd, 1.0f / 60, 60 * 120);
  EXPECT_LT(result.worst_overlap, 0.05f);
  // Agents whose goals lie deep inside the other group's arrived block must squeeze through
  // 0.4 m gaps between agents standing on their goals; some are still doing so after 2 minutes.
  EXPECT_GE(result.arrived, 850u) << "after " << result.steps << " steps";
}

TEST(Crowd, CircleOfAgentsReachesItsAntipodes) {
  // 120 agents of radius 0.5 m, 1.05 m apart on a circle of 20 m, all meeting in its middle.
  CrowdSettings settings;
  settings.radius = 0.5f;
  settings.max_speed = 2.0f;
  settings.neighbour_distance = 3.0f;
  Crowd crowd(settings);
  const int n = 120;
  for (int i = 0; i < n; ++i) {
    const float a = 2 * std::numbers::pi_v<float> * static_cast<float>(i) / n;
    const Vec2f p{20 * std::cos(a), 20 * std::sin(a)};
    crowd.add_agent(p, -p);
  }
  const RunResult result = run(crowd, 1.0f / 60, 60 * 90);
  EXPECT_EQ(result.arrived, std::size_t(n)) << "after " << result.steps << " steps";
  EXPECT_LT(result.worst_overlap, 0.05f);
}

TEST(Crowd, SameBitsWhateverTheThreadCount) {
  CrowdSettings one;
  one.threads = 1;
  CrowdSettings two = one;
  two.threads = 2;
  Crowd a = crossing(20, 30, 4.0f, one), b = crossing(20, 30, 4.0f, two);
  for (int s = 0; s < 120; ++s) {
    a.step(1.0f / 60);
    b.step(1.0f / 60);
  }
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a.positions()[i], b.positions()[i]) << "agent " << i;
    ASSERT_EQ(a.velocities()[i], b.velocities()[i]) << "agent " << i;
  }
}

TEST(Crowd, AgentsWalkThroughTheGapInAWallAndStayOnOpenCells) {
  auto grid = std::make_shared<NavGrid>(Vec2{0, 0}, 0.25, 80, 80);  // 20 m square
  grid->close_rectangle({9.5, 0}, {10.5, 13});
  grid->close_rectangle({9.5, 16}, {10.5, 20});  // a 3 m door at z 13–16
  grid->apply_clearance(0.3);
  CrowdSettings settings;
  Crowd crowd(settings, grid);
  // Two columns of 20 from the west, each agent to its mirror place in the east (z′ = 18 − z):
  // all 40 squeeze through the door, the first ones diagonally across the others' way.
  for (int i = 0; i < 40; ++i) {
    const float z = 2.0f + 0.8f * static_cast<float>(i % 20);
    const float x = i < 20 ? 3.0f : 4.5f;
    crowd.add_agent({x, z}, {20.0f - x, 18.0f - z});
  }
  for (int s = 0; s < 60 * 60 && crowd.arrived_count() < crowd.size(); ++s) {
    crowd.step(1.0f / 30);
    for (std::size_t i = 0; i < crowd.size(); ++i) {
      ASSERT_TRUE(grid->walkable(Vec2(crowd.positions()[i]))) << "agent " << i << " step " << s;
    }
  }
  EXPECT_EQ(crowd.arrived_count(), crowd.size());
}

TEST(Crowd, AnAgentAloneWalksStraightAtItsTopSpeedAndStopsOnItsGoal) {
  Crowd crowd(CrowdSettings{});
  crowd.add_agent({0, 0}, {3, 4});
  crowd.step(0.1f);
  EXPECT_NEAR(length(crowd.velocities()[0]), 1.5f, 1e-5f);
  for (int s = 0; s < 60; ++s) crowd.step(0.1f);
  EXPECT_NEAR(crowd.positions()[0].x, 3.0f, 1e-5f);
  EXPECT_NEAR(crowd.positions()[0].y, 4.0f, 1e-5f);
  EXPECT_TRUE(crowd.arrived(0));
}

TEST(Crowd, BadInputIsRefused) {
  CrowdSettings bad;
  bad.max_neighbours = 0;
  EXPECT_THROW(Crowd{bad}, Error);
  bad = {};
  bad.time_horizon = -1;
  EXPECT_THROW(Crowd{bad}, Error);

  auto grid = std::make_shared<NavGrid>(Vec2{0, 0}, 1.0, 10, 10);
  Crowd crowd(CrowdSettings{}, grid);
  try {
    crowd.add_agent({1, 1}, {30, 1});
    FAIL() << "a goal off the grid was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.place(), "agent 0");
    EXPECT_NE(std::string(e.what()).find("goal"), std::string::npos) << e.what();
  }
  EXPECT_EQ(crowd.size(), 0u);  // nothing half-added
  EXPECT_THROW(crowd.add_agent({NAN, 1}, {2, 2}), Error);
  crowd.add_agent({1, 1}, {8, 8});
  EXPECT_THROW(crowd.set_goal(0, {-5, 0}), Error);
  EXPECT_EQ(crowd.goal(0), (Vec2f{8, 8}));  // kept
}

}  // namespace
}  // namespace kinema
