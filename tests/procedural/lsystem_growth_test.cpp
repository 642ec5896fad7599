// L-systems in continuous time (Prusinkiewicz, Hammel & Mjolsness 1993): derive at whole
// seconds is parallel rewriting, positions are continuous across a production firing (the
// largest vertex jump between t − ε and t + ε shrinks with ε), total length never decreases,
// a later derivation seen earlier is the earlier derivation, newborn branches start at their
// parent's tip, the pipe model thickens old wood, one vertex count for all times, the same seed
// the same bits, and the generalized cylinder's shape.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "kinema/core/error.h"
#include "kinema/procedural/lsystem.h"

namespace kinema {
namespace {

/// ABOP Fig. 1.24d: X → F[+X]F[−X]+X, F → FF, δ = 20°; a generation a second. `leaves`: a
/// leaf L beside each new apex.
LSystem plant_d(bool leaves = false) {
  LSystem s = make_lsystem("X", {leaves ? "X -> F[+XL]F[-XL]+X" : "X -> F[+X]F[-X]+X", "F -> FF"});
  s.angle = radians(20.0);
  s.step = 0.1;
  return s;
}

PlantMesh mesh_at(const LSystem& s, const Derivation& d, double t) {
  return build_plant_mesh(interpret(s, d, t));
}

double largest_jump(const PlantMesh& a, const PlantMesh& b) {
  double jump = 0;
  for (std::size_t i = 0; i < a.positions.size(); ++i)
    jump = std::max(jump, distance(a.positions[i], b.positions[i]));
  return jump;
}

TEST(LSystemGrowth, DeriveAtWholeSecondsIsParallelRewriting) {
  const LSystem s = plant_d();
  for (int n = 0; n <= 6; ++n)
    EXPECT_EQ(module_string(derive(s, n).modules), module_string(rewrite(s, n))) << n;
  LSystem slow = s;
  slow.terminal_age = 2.5;  // every terminal age scaled: the same strings at 2.5 n seconds
  EXPECT_EQ(module_string(derive(slow, 12.5).modules), module_string(rewrite(s, 5)));
  EXPECT_EQ(module_string(derive(slow, 12.4).modules), module_string(rewrite(s, 4)));
}

TEST(LSystemGrowth, PositionsAreContinuousAcrossAProductionFiring) {
  // Firings at whole seconds (X; F's smoothstep growth at rest there), and with leaves and F
  // rewritten at 1.3 s of age while growing linearly (firings between the others, at a non-zero
  // rate).
  LSystem linear = plant_d(true);
  linear.curve = GrowthCurve::Linear;
  linear.terminal_ages['F'] = 1.3;
  struct Case {
    LSystem system;
    std::vector<double> firings;
  };
  for (const Case& c : {Case{plant_d(), {1, 2, 3}}, Case{linear, {1, 2, 2.3, 3, 3.3, 3.6}}}) {
    const Derivation d = derive(c.system, 4);
    for (const double firing : c.firings) {
      double previous = 1e9;
      for (const double epsilon : {1e-2, 1e-3, 1e-4, 1e-5}) {
        const PlantMesh before = mesh_at(c.system, d, firing - epsilon);
        const PlantMesh after = mesh_at(c.system, d, firing + epsilon);
        ASSERT_EQ(before.positions.size(), after.positions.size());
        const double jump = largest_jump(before, after);
        EXPECT_LT(jump, previous) << firing << " " << epsilon;
        // Lipschitz with smooth growth; with linear growth a newborn's radius, √ of what it
        // carries, grows like √ε — continuous, and still under this bound down to ε ≈ 1e-9.
        EXPECT_LT(jump, 100 * epsilon) << firing << " " << epsilon;
        previous = jump;
      }
    }
  }
}

TEST(LSystemGrowth, TotalLengthNeverDecreases) {
  for (const GrowthCurve curve :
       {GrowthCurve::Smoothstep, GrowthCurve::Logistic, GrowthCurve::Linear}) {
    LSystem s = plant_d();
    s.curve = curve;
    s.length_maturity = 0.7;  // full length before the next firing
    const Derivation d = derive(s, 5);
    double length = 0;
    for (double t = 0; t <= 5; t += 0.05) {
      const PlantSkeleton p = interpret(s, d, t);
      EXPECT_GE(p.total_length(), length - 1e-12) << t;
      length = p.total_length();
    }
    // 0.8 s after the fourth firing everything is full grown: the classic fourth generation.
    EXPECT_NEAR(interpret(s, d, 4.8).total_length(),
                interpret_grown(s, rewrite(s, 4)).total_length(), 1e-9);
  }
}

TEST(LSystemGrowth, ALaterDerivationSeenEarlierIsTheEarlierDerivation) {
  LSystem s = make_lsystem("A", {"A -> F[&+A]/[^-A]FA : 0.6", "A -> F[+A]FA : 0.4", "F -> FF"});
  s.seed = 5;
  s.terminal_ages['F'] = 1.7;
  const Derivation later = derive(s, 5.3);
  for (const double t : {0.4, 1.0, 2.25, 3.9, 5.3}) {
    const PlantSkeleton own = interpret(s, derive(s, t), t);
    const PlantSkeleton seen = interpret(s, later, t);
    EXPECT_NEAR(own.total_length(), seen.total_length(), 1e-9) << t;
    EXPECT_NEAR(own.height(), seen.height(), 1e-9) << t;
    // Every end of a segment now is the end of a segment of the later plant seen now.
    for (const BranchSegment& a : own.segments) {
      double nearest = 1e9;
      for (const BranchSegment& b : seen.segments)
        nearest = std::min(nearest, distance(a.end, b.end));
      EXPECT_LT(nearest, 1e-9) << t;
    }
  }
}

TEST(LSystemGrowth, NewbornBranchStartsAtItsParentsTipWithNoLength) {
  const LSystem s = plant_d();
  const Derivation d = derive(s, 2);
  // Just after the first firing (t = 1): F[+X]F[−X]+X, each F newborn.
  const PlantSkeleton p = interpret(s, d, 1 + 1e-9);
  for (const BranchSegment& b : p.segments) {
    EXPECT_LT(b.length(), 1e-12);
    EXPECT_LT(length(b.start), 1e-12);  // all at the root, where X was
  }
  // Before its birth the second generation is folded into the first (F → FF halves).
  const PlantSkeleton half = interpret(s, d, 1.5);
  EXPECT_NEAR(half.total_length(), 2 * 0.1 * growth_fraction(GrowthCurve::Smoothstep, 0.5), 1e-12);
  const PlantSkeleton grown = interpret(s, d, 2);
  EXPECT_NEAR(grown.total_length(), 2 * 0.1, 1e-12);  // FF FF at half length, new F's at 0
}

TEST(LSystemGrowth, PipeModelThickensOldWood) {
  LSystem s = plant_d();
  s.pipe_radius = 0.02;
  const Derivation d = derive(s, 5);
  double base = 0;
  for (double t = 1.5; t <= 5; t += 0.5) {
    const PlantSkeleton p = interpret(s, d, t);
    const double r = p.segments.front().start_radius;
    EXPECT_NEAR(r, 0.02 * std::sqrt(p.total_length()), 1e-12) << t;  // it carries everything
    EXPECT_GT(r, base) << t;
    base = r;
    for (const BranchSegment& b : p.segments) EXPECT_LE(b.end_radius, b.start_radius + 1e-15);
  }
}

TEST(LSystemGrowth, FixedTopologyGivesOneVertexCountForAllTimes) {
  const LSystem s = plant_d();
  const Derivation d = derive(s, 4);
  const PlantMesh end = mesh_at(s, d, 4);
  for (const double t : {0.0, 0.5, 1.7, 3.2}) {
    const PlantMesh m = mesh_at(s, d, t);
    EXPECT_EQ(m.positions.size(), end.positions.size());
    EXPECT_EQ(m.triangles, end.triangles);
  }
  PlantMeshOptions sparse;
  sparse.fixed_topology = false;
  EXPECT_LT(build_plant_mesh(interpret(s, d, 1.5), sparse).positions.size(), end.positions.size());
  EXPECT_EQ(build_plant_mesh(interpret(s, d, 0), sparse).positions.size(), 0u);
}

TEST(LSystemGrowth, SameSeedSameBits) {
  LSystem s = make_lsystem("A", {"A -> F[&A][^+A]/A : 0.5", "A -> F[-A]\\A : 0.5", "F -> FF"});
  s.seed = 42;
  auto bits = [](const LSystem& system) {
    const PlantMesh m = mesh_at(system, derive(system, 6), 4.5);
    return std::string(reinterpret_cast<const char*>(m.positions.data()),
                       m.positions.size() * sizeof(Vec3));
  };
  const std::string first = bits(s);
  EXPECT_EQ(bits(s), first);
  s.seed = 43;
  EXPECT_NE(bits(s), first);
}

TEST(LSystemMesh, GeneralizedCylinderFacesOutwardWithUnitNormals) {
  LSystem s = make_lsystem("F[+F]F", {});
  s.angle = radians(40.0);
  s.step = 1;
  s.pipe_radius = 0.1;
  const PlantSkeleton p = interpret_grown(s, s.axiom);
  PlantMeshOptions o;
  o.ring = 6;
  const PlantMesh m = build_plant_mesh(p, o);
  // Three rings and a cap on the axis (the middle ring shared), two rings and a cap on the branch.
  EXPECT_EQ(m.positions.size(), 3 * 6 + 1 + 2 * 6 + 1u);
  EXPECT_EQ(m.triangles.size(), 3 * 2 * 6 + 2 * 6u);  // sides, caps
  for (const Vec3& n : m.normals) EXPECT_NEAR(length(n), 1, 1e-12);
  // Side triangles face away from their segment's axis.
  for (const auto& t : m.triangles) {
    const Vec3 a = m.positions[t[0]], b = m.positions[t[1]], c = m.positions[t[2]];
    const Vec3 normal = cross(b - a, c - a), centre = (a + b + c) / 3.0;
    if (length(normal) < 1e-12) continue;  // collapsed at a tip of no radius
    double best = -1;
    for (const BranchSegment& seg : p.segments) {
      const Vec3 along = seg.end - seg.start;
      const double u = std::clamp(dot(centre - seg.start, along) / dot(along, along), 0.0, 1.0);
      const Vec3 out = centre - (seg.start + along * u);
      if (length(out) > 1e-9) best = std::max(best, dot(normalize(out), normalize(normal)));
    }
    if (best > -1) {
      EXPECT_GT(best, 0);
    }
  }
  EXPECT_THROW(build_plant_mesh(p, PlantMeshOptions{2, true, true}), UsageError);
}

}  // namespace
}  // namespace kinema
