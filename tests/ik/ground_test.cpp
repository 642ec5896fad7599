#include "kinema/ik/ground.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kinema/core/error.h"

namespace kinema {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// h(x, z) = 0.2 + 0.5·x − 0.25·z sampled on a grid: bilinear interpolation is exact.
HeightField sloped_field() {
  const int w = 11, d = 9;
  std::vector<double> h;
  for (int iz = 0; iz < d; ++iz)
    for (int ix = 0; ix < w; ++ix) {
      const double x = -1 + 0.25 * ix, z = -2 + 0.25 * iz;
      h.push_back(0.2 + 0.5 * x - 0.25 * z);
    }
  return HeightField(-1, -2, 0.25, w, d, h);
}

TEST(HeightField, FlatAndSlopedHeightsAndNormals) {
  const HeightField flat(0, 0, 1, 3, 3, std::vector<double>(9, 0.3));
  double h = 0;
  Vec3 n;
  ASSERT_TRUE(flat.height(1.3, 0.7, h));
  EXPECT_DOUBLE_EQ(h, 0.3);
  ASSERT_TRUE(flat.normal(1.3, 0.7, n));
  EXPECT_EQ(n, Vec3(0, 1, 0));

  const HeightField f = sloped_field();
  const Vec3 expected_n = normalize(Vec3{-0.5, 1, 0.25});
  for (double x : {-1.0, -0.61, 0.0, 0.37, 1.5})
    for (double z : {-2.0, -1.13, 0.0, -0.4}) {
      ASSERT_TRUE(f.height(x, z, h)) << x << " " << z;
      EXPECT_NEAR(h, 0.2 + 0.5 * x - 0.25 * z, 1e-14);
      ASSERT_TRUE(f.normal(x, z, n));
      EXPECT_NEAR(length(n - expected_n), 0.0, 1e-14);
    }
  GroundHit hit;
  ASSERT_TRUE(f.ray_down({0.37, 5, -0.4}, 10, hit));
  EXPECT_NEAR(hit.point.y, 0.2 + 0.5 * 0.37 + 0.1, 1e-14);
  EXPECT_NEAR(hit.distance, 5 - hit.point.y, 1e-14);
  EXPECT_NEAR(length(hit.normal - expected_n), 0.0, 1e-14);
}

TEST(HeightField, BilinearInsideACell) {
  // One cell of size 2, corner heights 0, 1 (+x), 2 (+z), 4 (+x +z).
  const HeightField f(0, 0, 2, 2, 2, {0, 1, 2, 4});
  double h = 0;
  ASSERT_TRUE(f.height(1, 1, h));  // fx = fz = 0.5
  EXPECT_DOUBLE_EQ(h, 0.5 + 1 + 0.25);
  Vec3 n;
  ASSERT_TRUE(f.normal(1, 1, n));  // ∂h/∂x = (1 + 2)·0.5/2 = 0.75, ∂h/∂z = (2 + 3)·0.5/2 = 1.25
  EXPECT_NEAR(length(n - normalize(Vec3{-0.75, 1, -1.25})), 0.0, 1e-15);
}

TEST(HeightField, MissesOutsideAboveAndOnBadQueries) {
  const HeightField f = sloped_field();
  GroundHit hit;
  double h = 0;
  EXPECT_FALSE(f.height(-1.01, 0, h));
  EXPECT_FALSE(f.height(0, 0.01, h));
  EXPECT_FALSE(f.height(kNaN, 0, h));
  EXPECT_FALSE(f.ray_down({3, 5, 0}, 10, hit));
  EXPECT_FALSE(f.ray_down({0, -5, 0}, 10, hit));  // origin below the ground
  EXPECT_FALSE(f.ray_down({0, 5, -1}, 1, hit));   // too short
  EXPECT_FALSE(f.ray_down({0, kNaN, -1}, 10, hit));
  EXPECT_FALSE(f.ray_down({0, 5, -1}, kNaN, hit));
  EXPECT_TRUE(f.height(1.5, 0, h));  // the far corner is inside
}

TEST(HeightField, ConstructionValidates) {
  EXPECT_THROW(HeightField(0, 0, 0, 2, 2, {0, 0, 0, 0}), Error);
  EXPECT_THROW(HeightField(0, 0, -1, 2, 2, {0, 0, 0, 0}), Error);
  EXPECT_THROW(HeightField(0, 0, kNaN, 2, 2, {0, 0, 0, 0}), Error);
  EXPECT_THROW(HeightField(0, 0, 1, 1, 2, {0, 0}), Error);
  EXPECT_THROW(HeightField(0, 0, 1, 2, 2, {0, 0, 0}), Error);
  EXPECT_THROW(HeightField(0, 0, 1, 2, 2, {0, 0, kNaN, 0}), Error);
  EXPECT_THROW(HeightField(kNaN, 0, 1, 2, 2, {0, 0, 0, 0}), Error);
  try {
    HeightField(0, 0, 1, 3, 2, {0, 0, 0});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(e.reason().find("expected width×depth = 6"), std::string::npos) << e.what();
  }
}

TriangleMeshGround plane_mesh(double a, double b, double c) {
  // y = a + b·x + c·z over [−2, 2]², two triangles, wound clockwise seen from above.
  auto y = [&](double x, double z) { return a + b * x + c * z; };
  return TriangleMeshGround(
      {{-2, y(-2, -2), -2}, {2, y(2, -2), -2}, {2, y(2, 2), 2}, {-2, y(-2, 2), 2}},
      {0, 1, 2, 0, 2, 3});
}

TEST(TriangleMeshGround, FlatAndSlopedPlanes) {
  const TriangleMeshGround flat = plane_mesh(-0.1, 0, 0);
  GroundHit hit;
  ASSERT_TRUE(flat.ray_down({0.3, 1, 0.7}, 5, hit));
  EXPECT_EQ(hit.point.y, -0.1);          // exact on a flat plane
  EXPECT_EQ(hit.normal, Vec3(0, 1, 0));  // turned to face the ray whatever the winding
  EXPECT_DOUBLE_EQ(hit.distance, 1.1);

  const TriangleMeshGround slope = plane_mesh(0.2, 0.5, -0.25);
  const Vec3 n = normalize(Vec3{-0.5, 1, 0.25});
  for (double x : {-1.9, -0.3, 0.0, 0.8})
    for (double z : {-1.2, 0.0, 0.45, 1.99}) {
      ASSERT_TRUE(slope.ray_down({x, 3, z}, 10, hit));
      EXPECT_NEAR(hit.point.y, 0.2 + 0.5 * x - 0.25 * z, 1e-14);
      EXPECT_NEAR(length(hit.normal - n), 0.0, 1e-14);
    }
  // From below, the normal faces down.
  ASSERT_TRUE(slope.raycast({0, -5, 0}, {0, 2, 0}, 10, hit));
  EXPECT_NEAR(hit.point.y, 0.2, 1e-14);
  EXPECT_NEAR(length(hit.normal + n), 0.0, 1e-14);
  EXPECT_FALSE(slope.ray_down({2.5, 3, 0}, 10, hit));
  EXPECT_FALSE(slope.ray_down({0, 3, 0}, 1, hit));
  EXPECT_FALSE(slope.raycast({0, 3, 0}, {0, 0, 0}, 10, hit));
  EXPECT_FALSE(slope.raycast({kNaN, 3, 0}, {0, -1, 0}, 10, hit));
}

TEST(TriangleMeshGround, ConstructionValidates) {
  const std::vector<Vec3> v{{0, 0, 0}, {1, 0, 0}, {0, 0, 1}};
  EXPECT_NO_THROW(TriangleMeshGround(v, {0, 1, 2}));
  EXPECT_THROW(TriangleMeshGround(v, {}), Error);
  EXPECT_THROW(TriangleMeshGround(v, {0, 1}), Error);
  EXPECT_THROW(TriangleMeshGround(v, {0, 1, 3}), Error);
  EXPECT_THROW(TriangleMeshGround(v, {0, 1, -1}), Error);
  EXPECT_THROW(TriangleMeshGround(v, {0, 1, 1}), Error);  // zero area
  EXPECT_THROW(TriangleMeshGround({{0, 0, 0}, {1, kNaN, 0}, {0, 0, 1}}, {0, 1, 2}), Error);
  EXPECT_THROW(TriangleMeshGround({{0, 0, 0}, {1, 0, 0}, {2, 0, 0}}, {0, 1, 2}), Error);
}

TEST(TriangleMeshGround, BvhMatchesBruteForceOn10kRandomRays) {
  std::mt19937 rng(1234);
  std::uniform_real_distribution<double> u(-5, 5), s(-0.6, 0.6);
  std::vector<Vec3> v;
  std::vector<int> idx;
  // Random soup: 2000 small triangles in a 10 m box plus a 30×30 random terrain.
  for (int t = 0; t < 2000; ++t) {
    const Vec3 c{u(rng), u(rng) * 0.3, u(rng)};
    for (int k = 0; k < 3; ++k) {
      idx.push_back(static_cast<int>(v.size()));
      v.push_back(c + Vec3{s(rng), s(rng), s(rng)});
    }
  }
  const int base = static_cast<int>(v.size()), g = 30;
  for (int iz = 0; iz < g; ++iz)
    for (int ix = 0; ix < g; ++ix)
      v.push_back({-5 + 10.0 * ix / (g - 1), -2 + 0.3 * s(rng), -5 + 10.0 * iz / (g - 1)});
  for (int iz = 0; iz + 1 < g; ++iz)
    for (int ix = 0; ix + 1 < g; ++ix) {
      const int a = base + iz * g + ix;
      idx.insert(idx.end(), {a, a + 1, a + g + 1, a, a + g + 1, a + g});
    }
  const TriangleMeshGround mesh(v, idx);
  EXPECT_GT(mesh.node_count(), 100u);
  int hits = 0;
  for (int r = 0; r < 10000; ++r) {
    const Vec3 o{u(rng) * 1.2, u(rng), u(rng) * 1.2};
    const Vec3 d = (r % 2 == 0) ? Vec3{0, -1, 0} : Vec3{u(rng), u(rng), u(rng)};
    const double max_d = (r % 3 == 0) ? 4.0 : 100.0;
    GroundHit a, b;
    const bool ha = mesh.raycast(o, d, max_d, a);
    const bool hb = mesh.raycast_brute_force(o, d, max_d, b);
    ASSERT_EQ(ha, hb) << "ray " << r;
    if (!ha) continue;
    ++hits;
    EXPECT_EQ(a.distance, b.distance) << "ray " << r;
    EXPECT_EQ(a.point, b.point);
    EXPECT_EQ(a.normal, b.normal);
  }
  EXPECT_GT(hits, 3000);
}

}  // namespace
}  // namespace kinema
