// kinema/crowd/crowd.h — crowd agents: each walks to its goal along a path and avoids the others.
//
// Every step, each agent
//   1. takes a preferred velocity toward its next waypoint at its top speed (toward its goal at
//      the end, slowing so as to stop on it);
//   2. finds its `max_neighbours` nearest agents within `neighbour_distance` (a uniform grid of
//      cells at least that wide, rebuilt by counting sort each step; ties by agent index);
//   3. picks the velocity closest to the preferred one that keeps to every neighbour's ORCA
//      half-plane (kinema/crowd/orca.h) within the speed limit, each disc widened by
//      `avoidance_margin`, and to the hard half-planes of the walls nearby;
//   4. moves by it (p′ = p + h·v′); with a navigation grid, a move onto a closed cell keeps only
//      the axis that stays open (the agent slides along the wall).
// Waypoints come from A* over the navigation grid (kinema/crowd/nav_grid.h); without one, an
// agent walks straight to its goal. An agent whose next waypoint has gone out of sight (pushed
// round a corner) plans again.
//
// The ground plane's (x, z) are a Vec2f's (x, y); metres, seconds, float. Steps are parallel
// (oneTBB) and give the same bits whatever the thread count: each agent reads the last step's
// state only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "kinema/crowd/nav_grid.h"
#include "kinema/crowd/orca.h"
#include "kinema/math/vec2.h"

namespace kinema {

struct CrowdSettings {
  float neighbour_distance = 1.5f;  ///< m: agents farther apart than this are not considered
  int max_neighbours = 10;          ///< the nearest this many are avoided (1 … 64)
  float time_horizon = 2.0f;        ///< s: how far ahead collisions are avoided
  float radius = 0.3f;              ///< m: an agent's disc, unless add_agent says otherwise
  float max_speed = 1.5f;           ///< m/s, likewise
  float waypoint_reach = 0.5f;      ///< m: a waypoint this close is passed (the goal is not)
  /// m: each agent avoids the others as if its disc were this much wider. ORCA keeps discs apart
  /// only while its half-planes leave room; in a dense crossing they run out, and agents of radius
  /// 0.3 m overlapped by 3.8 % of it with no margin. Two centimetres kept them apart in the
  /// 10,000-agent crossing (BENCHMARKS.md); overlap is always measured on the true radii.
  float avoidance_margin = 0.02f;
  /// s: how far ahead walls (the navigation grid's closed cells, and its edge) are avoided. The
  /// nearest 8 closed cells an agent could reach in this time become hard ORCA half-planes: a
  /// wall does not give way, so an agent pressed by others toward it keeps off it instead of
  /// counting on the wall to take half.
  float obstacle_horizon = 1.0f;
  /// Paths pass obstacles on their right: cells left of an agent's straight line to its goal
  /// cost this much more in A* (NavGrid::find_path), so opposing flows take opposite sides.
  float keep_right = 0.25f;
  int threads = 0;  ///< 0: all cores; the result does not depend on it
};

class Crowd {
 public:
  /// Throws kinema::Error for settings out of range (non-positive or non-finite distances,
  /// speeds, horizon or radius; max_neighbours outside 1 … 64). `nav` may be null (open ground).
  explicit Crowd(const CrowdSettings& settings, std::shared_ptr<const NavGrid> nav = nullptr);
  ~Crowd();
  Crowd(Crowd&&) noexcept;
  Crowd& operator=(Crowd&&) noexcept;

  /// Adds an agent at `position` walking to `goal`, with the settings' radius and speed unless
  /// given (> 0). Returns its index. Throws kinema::Error (place "agent N") for non-finite input,
  /// and — with a navigation grid — for a start or goal off its open cells or not connected.
  std::size_t add_agent(Vec2f position, Vec2f goal, float radius = 0, float max_speed = 0);
  /// A new goal for agent i (plans a new path). Throws as add_agent does.
  void set_goal(std::size_t agent, Vec2f goal);

  /// Advances h seconds (finite, > 0; otherwise nothing happens).
  void step(float h);

  std::size_t size() const noexcept { return positions_.size(); }
  std::span<const Vec2f> positions() const noexcept { return positions_; }
  std::span<const Vec2f> velocities() const noexcept { return velocities_; }
  std::span<const float> radii() const noexcept { return radii_; }
  Vec2f goal(std::size_t agent) const noexcept { return goals_[agent]; }
  /// The waypoints agent i still walks through (its goal last).
  std::span<const Vec2f> path(std::size_t agent) const noexcept;
  /// Whether agent i stands within its radius of its goal.
  bool arrived(std::size_t agent) const noexcept;
  std::size_t arrived_count() const noexcept;
  const CrowdSettings& settings() const noexcept { return settings_; }
  const NavGrid* navigation() const noexcept { return nav_.get(); }

  /// The deepest overlap between two agents now: max over pairs of (rᵢ + rⱼ − d) / min(rᵢ, rⱼ),
  /// a fraction of the smaller radius; 0 when no two touch.
  float max_overlap() const;

 private:
  struct Grid;
  struct Parallel;
  void plan(std::size_t agent);
  void store_path(std::size_t agent, const std::vector<Vec2>& path);
  Vec2f preferred_velocity(std::size_t agent, float h) const noexcept;
  Vec2f avoid(std::size_t agent, Vec2f preferred, float h, std::span<OrcaLine> lines,
              std::span<OrcaLine> scratch) const noexcept;
  Vec2f slide(Vec2f from, Vec2f to) const noexcept;
  void measure_wall_distance();
  int wall_lines(std::size_t agent, std::span<OrcaLine> lines, float h) const noexcept;
  void advance_waypoints(std::size_t agent) noexcept;

  CrowdSettings settings_;
  std::shared_ptr<const NavGrid> nav_;
  std::vector<Vec2f> positions_, velocities_, next_velocities_, goals_;
  std::vector<float> radii_, max_speeds_;
  std::vector<std::vector<Vec2f>> paths_;
  std::vector<std::uint32_t> next_waypoint_;
  std::vector<float> wall_distance_;  // per navigation cell: metres to the nearest closed cell
  std::unique_ptr<Grid> grid_;
  std::unique_ptr<Parallel> parallel_;
};

}  // namespace kinema
