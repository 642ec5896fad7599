// kinema/crowd/orca.h — optimal reciprocal collision avoidance (ORCA) for agents on a plane,
// after van den Berg, Guy, Lin and Manocha, "Reciprocal n-Body Collision Avoidance" (ISRR 2009,
// Springer 2011).
//
// Each neighbour B of an agent A forbids a half-plane of A's velocities: those that would bring
// the two discs within `time_horizon` seconds of touching, unless B does its half. The half-plane
// is bounded by a line through vA + u/2, where u is the smallest change of the relative velocity
// that leaves the velocity obstacle (a truncated cone: two legs tangent to the disc of radius
// rA + rB around B's relative position, cut off by that disc shrunk by the horizon). Both agents
// take half of u, so they avoid each other without talking. Agents already overlapping are
// pushed apart within one step instead (the cut-off disc at the step h).
//
// The new velocity is the one closest to the preferred velocity that keeps to every half-plane
// and to the speed limit: a 2-D linear program over the disc |v| ≤ max_speed, solved by
// Seidel-style incremental projection (expected O(n) in the number of lines). When the
// half-planes leave no room (a dense crowd), it takes the velocity that crosses the lines the
// least — the 3-D program of the paper, minimising the largest violation.
//
// Float, metres, seconds; a line's allowed side is to its left (det(direction, v − point) ≥ 0).
// Nothing here allocates or throws: callers hand in spans.
#pragma once

#include <span>

#include "kinema/math/vec2.h"

namespace kinema {

/// A directed line bounding an ORCA half-plane: velocities v with
/// det(direction, v − point) ≥ 0 (on the line's left) are allowed. direction is a unit vector.
struct OrcaLine {
  Vec2f point, direction;
};

/// The half-plane agent A must keep to so as not to meet neighbour B within `time_horizon`:
///   relative_position = pB − pA (m), relative_velocity = vA − vB (m/s), velocity = vA,
///   combined_radius = rA + rB (m), time_horizon > 0 (s), step > 0 (s, used when they overlap).
/// `responsibility` is A's share of the avoidance: 0.5 for another agent (reciprocal), 1 for an
/// obstacle that does not move out of the way.
OrcaLine orca_half_plane(Vec2f relative_position, Vec2f relative_velocity, Vec2f velocity,
                         float combined_radius, float time_horizon, float step,
                         float responsibility = 0.5f) noexcept;

/// The velocity closest to `preferred` with |v| ≤ max_speed and on the allowed side of every
/// line; when no velocity satisfies them all, the one whose largest violation among the soft
/// lines is smallest while the first `hard_count` lines (static obstacles, which cannot give way)
/// still hold. `scratch` must hold at least lines.size() lines (the fall-back program's).
Vec2f solve_orca(std::span<const OrcaLine> lines, Vec2f preferred, float max_speed,
                 std::span<OrcaLine> scratch, std::size_t hard_count = 0) noexcept;

/// How far v lies on the forbidden side of `line` (m/s; ≤ 0 when allowed).
inline float orca_violation(const OrcaLine& line, Vec2f v) noexcept {
  return det(line.direction, line.point - v);
}

}  // namespace kinema
