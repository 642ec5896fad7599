// ORCA half-planes and the linear programs that pick a velocity from them (see orca.h).
#include "kinema/crowd/orca.h"

#include <algorithm>
#include <cmath>

namespace kinema {
namespace {

constexpr float kParallel = 1e-5f;  // |det| of two unit directions below this: parallel lines

// The point of line `i` closest to the target (or, with `toward_direction`, farthest along the
// direction `target`) within the disc of radius `radius` and on the allowed side of lines
// [0, i). False when that stretch of the line is empty.
bool solve_on_line(std::span<const OrcaLine> lines, std::size_t i, float radius, Vec2f target,
                   bool toward_direction, Vec2f& result) noexcept {
  const OrcaLine& line = lines[i];
  // Where the line crosses the speed disc: point + t·direction with |·| = radius.
  const float along = dot(line.point, line.direction);
  const float discriminant = along * along + radius * radius - length_squared(line.point);
  if (discriminant < 0) return false;
  const float half_chord = std::sqrt(discriminant);
  float t_left = -along - half_chord, t_right = -along + half_chord;

  for (std::size_t j = 0; j < i; ++j) {
    const float denominator = det(line.direction, lines[j].direction);
    const float numerator = det(lines[j].direction, line.point - lines[j].point);
    if (std::abs(denominator) <= kParallel) {
      if (numerator < 0) return false;  // parallel and wholly on j's forbidden side
      continue;
    }
    const float t = numerator / denominator;
    if (denominator >= 0) {
      t_right = std::min(t_right, t);
    } else {
      t_left = std::max(t_left, t);
    }
    if (t_left > t_right) return false;
  }

  float t;
  if (toward_direction) {
    t = dot(target, line.direction) > 0 ? t_right : t_left;
  } else {
    t = std::clamp(dot(line.direction, target - line.point), t_left, t_right);
  }
  result = line.point + line.direction * t;
  return true;
}

// The velocity in the disc closest to `target` (or farthest along the unit direction `target`)
// allowed by every line. Returns lines.size() on success, else the index of the first line that
// could not be met (`result` then satisfies the lines before it).
std::size_t solve_in_disc(std::span<const OrcaLine> lines, float radius, Vec2f target,
                          bool toward_direction, Vec2f& result) noexcept {
  if (toward_direction) {
    result = target * radius;
  } else if (length_squared(target) > radius * radius) {
    result = normalize(target) * radius;
  } else {
    result = target;
  }
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (orca_violation(lines[i], result) > 0) {
      const Vec2f previous = result;
      if (!solve_on_line(lines, i, radius, target, toward_direction, result)) {
        result = previous;
        return i;
      }
    }
  }
  return lines.size();
}

// No velocity meets every line: from line `first_failed` on, find the velocity whose largest
// violation is least. For each line still violated by more than the current worst, solve the 2-D
// program over the bisectors between it and the lines before it, moving as far as possible
// against its violation.
void minimise_worst_violation(std::span<const OrcaLine> lines, std::size_t hard_count,
                              std::size_t first_failed, float radius, std::span<OrcaLine> scratch,
                              Vec2f& result) noexcept {
  float worst = 0;
  for (std::size_t i = first_failed; i < lines.size(); ++i) {
    if (orca_violation(lines[i], result) <= worst) continue;
    // The hard lines (obstacles) stay as they are; the soft ones before i become bisectors.
    std::size_t count = std::min(hard_count, i);
    std::copy_n(lines.begin(), count, scratch.begin());
    for (std::size_t j = count; j < i; ++j) {
      OrcaLine bisector;
      const float determinant = det(lines[i].direction, lines[j].direction);
      if (std::abs(determinant) <= kParallel) {
        if (dot(lines[i].direction, lines[j].direction) > 0) continue;  // same way: j is looser
        bisector.point = (lines[i].point + lines[j].point) * 0.5f;
      } else {
        bisector.point =
            lines[i].point +
            lines[i].direction *
                (det(lines[j].direction, lines[i].point - lines[j].point) / determinant);
      }
      bisector.direction = normalize(lines[j].direction - lines[i].direction);
      scratch[count++] = bisector;
    }
    const Vec2f previous = result;
    const Vec2f away{-lines[i].direction.y, lines[i].direction.x};  // into line i's allowed side
    if (solve_in_disc(scratch.first(count), radius, away, true, result) < count) {
      result = previous;  // only float round-off gets here: keep the last good answer
    }
    worst = orca_violation(lines[i], result);
  }
}

}  // namespace

OrcaLine orca_half_plane(Vec2f relative_position, Vec2f relative_velocity, Vec2f velocity,
                         float combined_radius, float time_horizon, float step,
                         float responsibility) noexcept {
  const float distance_sq = length_squared(relative_position);
  const float radius_sq = combined_radius * combined_radius;
  OrcaLine line;
  Vec2f u;  // the smallest change of the relative velocity that leaves the velocity obstacle

  if (distance_sq > radius_sq) {
    // w: from the cut-off disc's centre (relative_position / τ) to the relative velocity.
    const float inverse_horizon = 1.0f / time_horizon;
    const Vec2f w = relative_velocity - relative_position * inverse_horizon;
    const float w_length_sq = length_squared(w);
    const float w_along_position = dot(w, relative_position);
    if (w_along_position < 0 && w_along_position * w_along_position > radius_sq * w_length_sq) {
      // Nearest the cut-off disc: push out along w.
      const float w_length = std::sqrt(w_length_sq);
      const Vec2f w_unit = w / w_length;
      line.direction = {w_unit.y, -w_unit.x};
      u = w_unit * (combined_radius * inverse_horizon - w_length);
    } else {
      // Nearest a leg: the tangent from the origin to the disc on the side w lies.
      const float leg = std::sqrt(distance_sq - radius_sq);
      const Vec2f p = relative_position;
      if (det(p, w) > 0) {
        line.direction =
            Vec2f{p.x * leg - p.y * combined_radius, p.x * combined_radius + p.y * leg} /
            distance_sq;
      } else {
        line.direction =
            -Vec2f{p.x * leg + p.y * combined_radius, -p.x * combined_radius + p.y * leg} /
            distance_sq;
      }
      u = line.direction * dot(relative_velocity, line.direction) - relative_velocity;
    }
  } else {
    // Already overlapping: leave the disc within this step.
    const float inverse_step = 1.0f / step;
    const Vec2f w = relative_velocity - relative_position * inverse_step;
    const float w_length = length(w);
    const Vec2f w_unit = w_length > 0 ? w / w_length : Vec2f{-1, 0};
    line.direction = {w_unit.y, -w_unit.x};
    u = w_unit * (combined_radius * inverse_step - w_length);
  }
  line.point = velocity + u * responsibility;
  return line;
}

Vec2f solve_orca(std::span<const OrcaLine> lines, Vec2f preferred, float max_speed,
                 std::span<OrcaLine> scratch, std::size_t hard_count) noexcept {
  Vec2f result;
  const std::size_t failed = solve_in_disc(lines, max_speed, preferred, false, result);
  if (failed < lines.size()) {
    minimise_worst_violation(lines, std::min(hard_count, lines.size()), failed, max_speed, scratch,
                             result);
  }
  return result;
}

}  // namespace kinema
