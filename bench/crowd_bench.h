// The crowd crossing benchmarked against RVO2: two groups of agents on a 1 m grid walking to
// each other's mirrored places, and the measures both sides share (the preferred velocity each
// step, the deepest overlap), so kinema and the peer run the same scene by the same rules.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <unordered_map>
#include <vector>

namespace kinema::bench {

// The scene the peer was first measured on: neighbours within 1.5 m, 10 of them, a 2 s horizon,
// radius 0.3 m, 1.5 m/s, h = 1/60 s.
struct CrossingSettings {
  float neighbour_distance = 1.5f;
  int max_neighbours = 10;
  float time_horizon = 2.0f;
  float radius = 0.3f;
  float max_speed = 1.5f;
  float step = 1.0f / 60;
};

struct CrossingAgent {
  float x, y, goal_x, goal_y;
};

/// Two groups of rows × columns agents, `gap` metres apart along x, each agent's goal its mirror
/// image across x = 0 (so the groups swap sides and meet head on).
inline std::vector<CrossingAgent> crossing_scene(int rows, int columns, float gap) {
  std::vector<CrossingAgent> agents;
  for (int side = -1; side <= 1; side += 2) {
    for (int r = 0; r < rows; ++r) {
      for (int c = 0; c < columns; ++c) {
        const float x = static_cast<float>(side) * (gap / 2 + static_cast<float>(c));
        const float y = static_cast<float>(r) - 0.5f * static_cast<float>(rows - 1);
        agents.push_back({x, y, -x, y});
      }
    }
  }
  return agents;
}

/// Toward the goal at top speed, slowing to stop on it within the step: kinema's rule for an
/// agent's last waypoint, which the peer is given each step.
inline void preferred_velocity(float x, float y, float goal_x, float goal_y, float max_speed,
                               float h, float& vx, float& vy) {
  const float dx = goal_x - x, dy = goal_y - y;
  const float distance = std::sqrt(dx * dx + dy * dy);
  if (!(distance > 0)) {
    vx = vy = 0;
    return;
  }
  const float speed = std::min(max_speed, distance / h);
  vx = dx * (speed / distance);
  vy = dy * (speed / distance);
}

/// The deepest overlap between two discs of `radius`, as a fraction of it; 0 when none touch.
/// `xy` holds x, y pairs.
inline float max_overlap(const std::vector<float>& xy, float radius) {
  const std::size_t n = xy.size() / 2;
  const float cell = 2 * radius;
  auto key = [&](long cx, long cy) { return cx * 1000003L + cy; };
  std::unordered_map<long, std::vector<std::size_t>> cells;
  for (std::size_t i = 0; i < n; ++i) {
    cells[key(std::lround(std::floor(xy[2 * i] / cell)),
              std::lround(std::floor(xy[2 * i + 1] / cell)))]
        .push_back(i);
  }
  float worst = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const long cx = std::lround(std::floor(xy[2 * i] / cell));
    const long cy = std::lround(std::floor(xy[2 * i + 1] / cell));
    for (long dy = -1; dy <= 1; ++dy) {
      for (long dx = -1; dx <= 1; ++dx) {
        const auto it = cells.find(key(cx + dx, cy + dy));
        if (it == cells.end()) continue;
        for (std::size_t j : it->second) {
          if (j <= i) continue;
          const float ex = xy[2 * j] - xy[2 * i], ey = xy[2 * j + 1] - xy[2 * i + 1];
          const float d = std::sqrt(ex * ex + ey * ey);
          worst = std::max(worst, (2 * radius - d) / radius);
        }
      }
    }
  }
  return worst;
}

}  // namespace kinema::bench
