// ORCA: the half-plane's reciprocity (two agents each taking their half never meet within the
// horizon), the linear program's answers on hand-made lines, and the infeasible fall-back that
// spreads the violation evenly.
#include "kinema/crowd/orca.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>

namespace kinema {
namespace {

// Earliest time t in [0, horizon] at which two discs at relative position p (of B from A) with
// relative velocity v (of A relative to B) touch; infinity when they do not.
float time_to_contact(Vec2f p, Vec2f v, float radius) {
  // |p − v t| = radius: (v·v) t² − 2 (p·v) t + p·p − r² = 0.
  const float a = dot(v, v), b = -2 * dot(p, v), c = dot(p, p) - radius * radius;
  if (c <= 0) return 0;
  const float disc = b * b - 4 * a * c;
  if (a == 0 || disc < 0) return INFINITY;
  const float t = (-b - std::sqrt(disc)) / (2 * a);
  return t >= 0 ? t : INFINITY;
}

Vec2f project_onto_allowed(const OrcaLine& line, Vec2f v) {
  if (orca_violation(line, v) <= 0) return v;
  return line.point + line.direction * dot(v - line.point, line.direction);
}

TEST(Orca, AgentsTakingTheirHalfDoNotMeetWithinTheHorizon) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> coord(-4, 4), speed(-2, 2);
  const float radius = 0.6f, horizon = 2.0f, step = 0.1f;
  int cases = 0;
  for (int k = 0; k < 2000; ++k) {
    const Vec2f pa{coord(rng), coord(rng)}, pb{coord(rng), coord(rng)};
    if (length(pb - pa) <= radius * 1.05f) continue;  // the overlapping branch is tested below
    const Vec2f va{speed(rng), speed(rng)}, vb{speed(rng), speed(rng)};
    const OrcaLine a = orca_half_plane(pb - pa, va - vb, va, radius, horizon, step);
    const OrcaLine b = orca_half_plane(pa - pb, vb - va, vb, radius, horizon, step);
    // Each moves to the nearest velocity it may take: then the pair does not touch before τ.
    const Vec2f na = project_onto_allowed(a, va), nb = project_onto_allowed(b, vb);
    // (On a leg of the velocity obstacle the discs graze; 0.1 % less radius leaves that out.)
    EXPECT_GE(time_to_contact(pb - pa, na - nb, radius * 0.999f), horizon * (1 - 1e-3f))
        << "case " << k;
    // And the lines are mirror images: each agent takes exactly half.
    EXPECT_NEAR(a.direction.x, -b.direction.x, 1e-5f);
    EXPECT_NEAR(a.direction.y, -b.direction.y, 1e-5f);
    ++cases;
  }
  EXPECT_GT(cases, 1500);
}

TEST(Orca, AgentsOnCollisionCourseChangeOnlyWhatTheyMust) {
  // Head on along x, 4 m apart, 1 m/s each, radii 0.5: they would touch at t = 1.5 s < 2 s.
  const Vec2f va{1, 0}, vb{-1, 0};
  const OrcaLine line = orca_half_plane({4, 0}, va - vb, va, 1.0f, 2.0f, 0.1f);
  EXPECT_GT(orca_violation(line, va), 0);  // the current velocity is forbidden
  // Far apart or diverging: the current velocity stays allowed.
  const OrcaLine apart = orca_half_plane({40, 0}, va - vb, va, 1.0f, 2.0f, 0.1f);
  EXPECT_LE(orca_violation(apart, va), 0);
  const OrcaLine diverging = orca_half_plane({4, 0}, {-1, 0}, {-1, 0}, 1.0f, 2.0f, 0.1f);
  EXPECT_LE(orca_violation(diverging, {-1, 0}), 0);
}

TEST(Orca, OverlappingAgentsArePushedApartWithinOneStep) {
  // 0.2 m apart with a combined radius of 0.6: after each takes its half, the relative speed
  // separating them covers the 0.4 m overlap in one 0.1 s step.
  const float step = 0.1f;
  const OrcaLine a = orca_half_plane({0.2f, 0}, {0, 0}, {0, 0}, 0.6f, 2.0f, step);
  const OrcaLine b = orca_half_plane({-0.2f, 0}, {0, 0}, {0, 0}, 0.6f, 2.0f, step);
  const Vec2f na = project_onto_allowed(a, {0, 0}), nb = project_onto_allowed(b, {0, 0});
  EXPECT_NEAR((nb.x - na.x) * step, 0.4f, 1e-5f);
}

TEST(Orca, NoLinesGivesThePreferredVelocityWithinTheSpeedLimit) {
  std::array<OrcaLine, 1> scratch{};
  const Vec2f v = solve_orca({}, {3, 4}, 2.0f, scratch);
  EXPECT_NEAR(v.x, 1.2f, 1e-6f);
  EXPECT_NEAR(v.y, 1.6f, 1e-6f);
  const Vec2f slow = solve_orca({}, {0.3f, -0.4f}, 2.0f, scratch);
  EXPECT_EQ(slow, (Vec2f{0.3f, -0.4f}));
}

TEST(Orca, OneLineProjectsThePreferredVelocityOntoIt) {
  // Allowed: v.x ≤ 0.5 (the left of a line pointing +y through (0.5, 0)).
  const std::array<OrcaLine, 1> lines{OrcaLine{{0.5f, 0}, {0, 1}}};
  std::array<OrcaLine, 1> scratch{};
  const Vec2f v = solve_orca(lines, {1, 0.25f}, 2.0f, scratch);
  EXPECT_NEAR(v.x, 0.5f, 1e-6f);
  EXPECT_NEAR(v.y, 0.25f, 1e-6f);
}

TEST(Orca, TwoLinesMeetAtTheirCorner) {
  // v.x ≤ 0.5 and v.y ≤ 0.25, preferred (1, 1): the corner (0.5, 0.25).
  const std::array<OrcaLine, 2> lines{OrcaLine{{0.5f, 0}, {0, 1}}, OrcaLine{{0, 0.25f}, {-1, 0}}};
  std::array<OrcaLine, 2> scratch{};
  const Vec2f v = solve_orca(lines, {1, 1}, 2.0f, scratch);
  EXPECT_NEAR(v.x, 0.5f, 1e-6f);
  EXPECT_NEAR(v.y, 0.25f, 1e-6f);
}

TEST(Orca, ContradictoryLinesShareTheViolationEvenly) {
  // v.x ≥ 1 and v.x ≤ −1 cannot both hold: the least worst violation is 1, at v.x = 0.
  const std::array<OrcaLine, 2> lines{OrcaLine{{1, 0}, {0, -1}}, OrcaLine{{-1, 0}, {0, 1}}};
  std::array<OrcaLine, 2> scratch{};
  const Vec2f v = solve_orca(lines, {0.7f, 0}, 2.0f, scratch);
  EXPECT_NEAR(v.x, 0.0f, 1e-5f);
  EXPECT_NEAR(std::max(orca_violation(lines[0], v), orca_violation(lines[1], v)), 1.0f, 1e-5f);
  EXPECT_LE(length(v), 2.0f + 1e-5f);
}

TEST(Orca, TheSolutionKeepsEveryFeasibleLineAndTheSpeedLimit) {
  // Random lines that all allow the origin: the answer keeps to each and to |v| ≤ max_speed,
  // and is no farther from the preferred velocity than the origin is.
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1, 1);
  for (int k = 0; k < 500; ++k) {
    std::array<OrcaLine, 12> lines{}, scratch{};
    for (OrcaLine& line : lines) {
      line.direction = normalize(Vec2f{u(rng), u(rng)});
      const Vec2f left{-line.direction.y, line.direction.x};
      line.point = left * (-0.05f - 0.5f * (u(rng) + 1));  // the origin on the allowed side
    }
    const Vec2f preferred{2 * u(rng), 2 * u(rng)};
    const Vec2f v = solve_orca(lines, preferred, 1.5f, scratch);
    for (const OrcaLine& line : lines) EXPECT_LE(orca_violation(line, v), 1e-4f) << "case " << k;
    EXPECT_LE(length(v), 1.5f + 1e-4f);
    EXPECT_LE(length(v - preferred), length(preferred) + 1e-4f);
  }
}

}  // namespace
}  // namespace kinema
