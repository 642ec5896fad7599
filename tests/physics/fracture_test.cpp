// Voronoi pre-fracture: pieces that tile the solid exactly (volumes, and every point in the piece
// of its nearest site), symmetric neighbours, the same sites for the same seed; glued pieces that
// hold until a fast ball breaks the glue; and errors.
#include "kinema/physics/fracture.h"

#include <gtest/gtest.h>

#include <random>

#include "kinema/core/error.h"
#include "kinema/physics/mass_properties.h"

namespace kinema {
namespace {

bool in_hull(const RigidShape& hull, const Vec3& p, double tolerance) {
  for (const Triangle& t : hull.triangles) {
    const Vec3 a = hull.points[t[0]];
    const Vec3 n = normalize(cross(hull.points[t[1]] - a, hull.points[t[2]] - a));
    if (dot(p - a, n) > tolerance) return false;
  }
  return true;
}

TEST(Fracture, PiecesTileTheSolidAndEachPointBelongsToItsNearestSite) {
  const RigidShape slab = box_shape({0.5, 0.25, 0.1});
  const std::vector<Vec3> sites = fracture_sites(slab, {0.2, 0.1, 0}, 16, 0.15, 7);
  ASSERT_EQ(sites.size(), 16u);
  const std::vector<FracturePiece> pieces = voronoi_fracture(slab, sites);
  ASSERT_EQ(pieces.size(), 16u);
  double volume = 0;
  for (const FracturePiece& p : pieces) {
    EXPECT_TRUE(is_closed_surface(p.hull.triangles));
    volume += shape_volume(p.hull);
  }
  EXPECT_NEAR(volume, 1.0 * 0.5 * 0.2, 1e-9);
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> x(-0.5, 0.5), y(-0.25, 0.25), z(-0.1, 0.1);
  for (int k = 0; k < 2000; ++k) {
    const Vec3 p{x(rng), y(rng), z(rng)};
    size_t nearest = 0;
    for (size_t i = 1; i < sites.size(); ++i)
      if (distance(p, sites[i]) < distance(p, sites[nearest])) nearest = i;
    EXPECT_TRUE(in_hull(pieces[nearest].hull, p, 1e-9)) << k;
    int holders = 0;
    for (const FracturePiece& piece : pieces) holders += in_hull(piece.hull, p, -1e-9) ? 1 : 0;
    EXPECT_LE(holders, 1) << k;  // strictly inside at most one piece
  }
  for (size_t i = 0; i < pieces.size(); ++i) {
    EXPECT_FALSE(pieces[i].neighbours.empty());
    for (const int k : pieces[i].neighbours) {
      const auto& back = pieces[size_t(k)].neighbours;
      EXPECT_NE(std::find(back.begin(), back.end(), int(i)), back.end()) << i << " " << k;
    }
  }
}

TEST(Fracture, SameSeedSameSitesAndHullsFractureToo) {
  const RigidShape slab = box_shape({0.5, 0.25, 0.1});
  EXPECT_EQ(fracture_sites(slab, {0, 0, 0}, 8, 0.2, 1), fracture_sites(slab, {0, 0, 0}, 8, 0.2, 1));
  EXPECT_NE(fracture_sites(slab, {0, 0, 0}, 8, 0.2, 1), fracture_sites(slab, {0, 0, 0}, 8, 0.2, 2));
  std::vector<Vec3> points;
  for (int i = 0; i < 12; ++i) {
    const double a = i * 0.5236;
    points.push_back({std::cos(a), std::sin(a), i % 2 ? 0.3 : -0.3});
  }
  const RigidShape rock = convex_hull_shape(points);
  const std::vector<FracturePiece> pieces =
      voronoi_fracture(rock, fracture_sites(rock, {0, 0, 0}, 6, 0.3, 4));
  double volume = 0;
  for (const FracturePiece& p : pieces) volume += shape_volume(p.hull);
  EXPECT_NEAR(volume, shape_volume(rock), 1e-9);
}

TEST(Fracture, GluedWallStandsUntilABallBreaksIt) {
  for (const double strength : {1e9, 60.0}) {
    RigidWorld world;
    world.add_body(make_static_body({0, -0.5, 0}, Quat::identity()), box_shape({20, 0.5, 20}), {},
                   "ground");
    const RigidShape wall = box_shape({1, 0.5, 0.1});
    const std::vector<FracturePiece> pieces =
        voronoi_fracture(wall, fracture_sites(wall, {0, 0, 0}, 12, 0.3, 5));
    const std::vector<BodyId> ids =
        add_fractured_body(world, pieces, {0, 0.5, 0}, Quat::identity(), 500, strength);
    EXPECT_GT(world.joint_count(), pieces.size() - 1);
    for (int i = 0; i < 60; ++i) world.step(1.0 / 60);  // it stands, glued
    size_t broken = 0;
    for (JointId j = 0; j < world.joint_count(); ++j) broken += world.joint_broken(j) ? 1 : 0;
    EXPECT_EQ(broken, 0u) << strength;
    // A 40 kg ball at 20 m/s.
    const RigidShape ball = sphere_shape(0.12);
    RigidBody b = make_dynamic_body(scaled_to_mass(mass_properties(ball, 1), 40), {0, 0.5, -1},
                                    Quat::identity());
    b.linear_velocity = {0, 0, 20};
    world.add_body(b, ball);
    for (int i = 0; i < 60; ++i) world.step(1.0 / 60);
    for (JointId j = 0; j < world.joint_count(); ++j) broken += world.joint_broken(j) ? 1 : 0;
    if (strength > 1e6) {
      EXPECT_EQ(broken, 0u);
    } else {
      EXPECT_GT(broken, 0u);
      double farthest = 0;
      for (const BodyId id : ids) farthest = std::max(farthest, world.body(id).position.z);
      EXPECT_GT(farthest, 0.3);  // pieces thrown out of the wall
    }
  }
}

TEST(Fracture, OnlyBoxesAndHullsBreakAndSitesMustBeInside) {
  EXPECT_THROW(voronoi_fracture(sphere_shape(1), std::vector<Vec3>{{0, 0, 0}}), Error);
  EXPECT_THROW(voronoi_fracture(box_shape({1, 1, 1}), std::vector<Vec3>{{5, 0, 0}}), Error);
  EXPECT_THROW(fracture_sites(box_shape({1, 1, 1}), {0, 0, 0}, 0, 0.1, 1), Error);
  const std::vector<FracturePiece> one =
      voronoi_fracture(box_shape({1, 1, 1}), std::vector<Vec3>{{0.2, 0, 0}});
  ASSERT_EQ(one.size(), 1u);
  EXPECT_NEAR(shape_volume(one[0].hull), 8, 1e-9);
}

}  // namespace
}  // namespace kinema
