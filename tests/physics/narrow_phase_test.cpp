#include "kinema/physics/narrow_phase.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

using namespace kinema;

namespace {

Quat random_rotation(std::mt19937& rng) {
  std::normal_distribution<double> g;
  return normalize(Quat{g(rng), g(rng), g(rng), g(rng)});
}

Vec3 random_unit(std::mt19937& rng) {
  std::normal_distribution<double> g;
  return normalize(Vec3{g(rng), g(rng), g(rng)});
}

void expect_vec_near(const Vec3& a, const Vec3& b, double tol) {
  EXPECT_NEAR(a.x, b.x, tol);
  EXPECT_NEAR(a.y, b.y, tol);
  EXPECT_NEAR(a.z, b.z, tol);
}

// ---- brute-force distances, independent of the library's routines ----------------------------

double point_segment(const Vec3& p, const Vec3& a, const Vec3& b) {
  const Vec3 ab = b - a;
  const double t = std::clamp(dot(p - a, ab) / dot(ab, ab), 0.0, 1.0);
  return length(p - (a + ab * t));
}

double point_triangle(const Vec3& p, const Vec3& a, const Vec3& b, const Vec3& c) {
  const Vec3 n = normalize(cross(b - a, c - a));
  const Vec3 q = p - n * dot(p - a, n);  // projection onto the plane
  const bool inside = dot(cross(b - a, q - a), n) >= 0 && dot(cross(c - b, q - b), n) >= 0 &&
                      dot(cross(a - c, q - c), n) >= 0;
  if (inside) return std::abs(dot(p - a, n));
  return std::min({point_segment(p, a, b), point_segment(p, b, c), point_segment(p, c, a)});
}

// The minimum is either at both interiors (where the connecting line is perpendicular to both) or
// has an endpoint of one segment against the other segment.
double segment_segment(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1) {
  double best = std::min({point_segment(p0, q0, q1), point_segment(p1, q0, q1),
                          point_segment(q0, p0, p1), point_segment(q1, p0, p1)});
  const Vec3 d1 = p1 - p0, d2 = q1 - q0, r = p0 - q0;
  const double a = dot(d1, d1), b = dot(d1, d2), e = dot(d2, d2), c = dot(d1, r), f = dot(d2, r);
  const double denom = a * e - b * b;
  if (denom > 1e-12 * a * e) {
    const double s = (b * f - c * e) / denom, t = (a * f - b * c) / denom;
    if (s > 0 && s < 1 && t > 0 && t < 1) best = std::min(best, length(p0 + d1 * s - q0 - d2 * t));
  }
  return best;
}

std::vector<Vec3> world_points(const RigidShape& hull, const Pose& pose) {
  std::vector<Vec3> out;
  for (const Vec3& p : hull.points) out.push_back(pose.to_world(p));
  return out;
}

// Distance between two separated convex polyhedra: the least over vertex–face pairs both ways
// and edge–edge pairs.
double brute_force_distance(const RigidShape& a, const Pose& pa, const RigidShape& b,
                            const Pose& pb) {
  const std::vector<Vec3> va = world_points(a, pa), vb = world_points(b, pb);
  double best = INFINITY;
  for (const Triangle& t : b.triangles)
    for (const Vec3& p : va) best = std::min(best, point_triangle(p, vb[t[0]], vb[t[1]], vb[t[2]]));
  for (const Triangle& t : a.triangles)
    for (const Vec3& p : vb) best = std::min(best, point_triangle(p, va[t[0]], va[t[1]], va[t[2]]));
  for (const Triangle& s : a.triangles)
    for (const Triangle& t : b.triangles)
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
          best = std::min(
              best, segment_segment(va[s[i]], va[s[(i + 1) % 3]], vb[t[j]], vb[t[(j + 1) % 3]]));
  return best;
}

// The penetration depth of two boxes by the 15 separating axes: the least overlap.
double sat_depth(const Pose& pa, const Vec3& ha, const Pose& pb, const Vec3& hb) {
  Vec3 ax[3], bx[3];
  for (int k = 0; k < 3; ++k) {
    Vec3 e{0, 0, 0};
    e[k] = 1;
    ax[k] = rotate(pa.orientation, e);
    bx[k] = rotate(pb.orientation, e);
  }
  std::vector<Vec3> axes(ax, ax + 3);
  axes.insert(axes.end(), bx, bx + 3);
  for (const Vec3& a : ax)
    for (const Vec3& b : bx)
      if (length(cross(a, b)) > 1e-6) axes.push_back(normalize(cross(a, b)));
  double depth = INFINITY;
  for (const Vec3& l : axes) {
    double ra = 0, rb = 0;
    for (int k = 0; k < 3; ++k) {
      ra += ha[k] * std::abs(dot(ax[k], l));
      rb += hb[k] * std::abs(dot(bx[k], l));
    }
    depth = std::min(depth, ra + rb - std::abs(dot(pb.position - pa.position, l)));
  }
  return depth;
}

RigidShape random_hull(std::mt19937& rng) {
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<Vec3> pts;
  for (int k = 0; k < 8; ++k) pts.push_back(random_unit(rng) * std::cbrt(u(rng)));
  return convex_hull_shape(pts);
}

}  // namespace

// ---- spheres ------------------------------------------------------------------------------------

// Worked example: centres (1, 2, 2) and (3, 3, 3.5), radii 1.5: squared distance 7.25 < 9, so they
// overlap; distance √7.25 ≈ 2.693, depth 3 − 2.693 = 0.307, normal (2, 1, 1.5)/2.693 ≈
// (0.743, 0.371, 0.557).
TEST(NarrowPhaseSpheres, WorkedSpheresOverlapBy0307AlongTheCentreLine) {
  const Vec3 c1{1, 2, 2}, c2{3, 3, 3.5};
  EXPECT_DOUBLE_EQ(length_squared(c2 - c1), 7.25);
  ContactManifold m;
  ASSERT_TRUE(collide_sphere_sphere(c1, 1.5, c2, 1.5, m));
  ASSERT_EQ(m.count, 1);
  EXPECT_NEAR(m.points[0].depth, 3 - std::sqrt(7.25), 1e-12);
  EXPECT_NEAR(m.points[0].depth, 0.307, 5e-4);
  expect_vec_near(m.normal, {0.743, 0.371, 0.557}, 5e-4);
  // Midway between the surfaces: A's deepest point less half the depth along the normal.
  expect_vec_near(m.points[0].position, c1 + m.normal * (1.5 - m.points[0].depth / 2), 1e-12);
  // The same through the dispatcher, and swapped: the normal turns round, the point stays.
  ContactManifold d, swapped;
  ASSERT_TRUE(collide(sphere_shape(1.5), {c1, {}}, sphere_shape(1.5), {c2, {}}, d));
  ASSERT_TRUE(collide(sphere_shape(1.5), {c2, {}}, sphere_shape(1.5), {c1, {}}, swapped));
  expect_vec_near(d.normal, m.normal, 1e-12);
  expect_vec_near(swapped.normal, -m.normal, 1e-12);
  expect_vec_near(swapped.points[0].position, m.points[0].position, 1e-12);
}

TEST(NarrowPhaseSpheres, SpheresApartOrBadDoNotCollide) {
  ContactManifold m;
  EXPECT_FALSE(collide_sphere_sphere({0, 0, 0}, 1, {2.01, 0, 0}, 1, m));
  EXPECT_EQ(m.count, 0);
  EXPECT_TRUE(collide_sphere_sphere({0, 0, 0}, 1, {2, 0, 0}, 1, m));  // touching counts
  EXPECT_NEAR(m.points[0].depth, 0, 1e-15);
  EXPECT_FALSE(collide_sphere_sphere({0, 0, 0}, -1, {0.5, 0, 0}, 1, m));
  EXPECT_FALSE(collide_sphere_sphere({std::nan(""), 0, 0}, 1, {0.5, 0, 0}, 1, m));
}

TEST(NarrowPhaseSphereBox, SphereOnAFaceAndSphereInsideAreNormalToTheFace) {
  const Pose box{{0, 0, 0}, Quat::from_axis_angle({0, 1, 0}, 0.3)};
  ContactManifold m;
  ASSERT_TRUE(collide_sphere_box({0, 1.4, 0}, 0.5, box, {1, 1, 1}, m));
  expect_vec_near(m.normal, {0, -1, 0}, 1e-12);  // from the sphere down into the box
  EXPECT_NEAR(m.points[0].depth, 0.1, 1e-12);
  expect_vec_near(m.points[0].position, {0, 0.95, 0}, 1e-12);
  // Centre inside, nearest the +x face (turned by the box's rotation).
  ASSERT_TRUE(
      collide_sphere_box(rotate(box.orientation, Vec3{0.8, 0.1, 0}), 0.5, box, {1, 1, 1}, m));
  expect_vec_near(m.normal, -rotate(box.orientation, Vec3{1, 0, 0}), 1e-12);
  EXPECT_NEAR(m.points[0].depth, 0.7, 1e-12);
  // Near a corner, apart.
  EXPECT_FALSE(collide_sphere_box({1.3, 1.3, 1.3}, 0.5, {}, {1, 1, 1}, m));
}

TEST(NarrowPhaseCapsules, SphereAgainstCapsuleSide) {
  ContactManifold m;
  ASSERT_TRUE(collide_sphere_capsule({0.5, 0.3, 0}, 0.3, {0, -1, 0}, {0, 1, 0}, 0.25, m));
  expect_vec_near(m.normal, {-1, 0, 0}, 1e-12);
  EXPECT_NEAR(m.points[0].depth, 0.05, 1e-12);
}

TEST(NarrowPhaseCapsules, ParallelCapsulesRestOnTwoPointsCrossedOnOne) {
  ContactManifold m;
  // B lies on A along x, overlapping over x ∈ [0, 1].
  ASSERT_TRUE(
      collide_capsule_capsule({-1, 0, 0}, {1, 0, 0}, 0.2, {0, 0.39, 0}, {2, 0.39, 0}, 0.2, m));
  ASSERT_EQ(m.count, 2);
  expect_vec_near(m.normal, {0, 1, 0}, 1e-12);
  for (int k = 0; k < 2; ++k) EXPECT_NEAR(m.points[k].depth, 0.01, 1e-12);
  EXPECT_NEAR(std::min(m.points[0].position.x, m.points[1].position.x), 0, 1e-12);
  EXPECT_NEAR(std::max(m.points[0].position.x, m.points[1].position.x), 1, 1e-12);
  ASSERT_TRUE(
      collide_capsule_capsule({-1, 0, 0}, {1, 0, 0}, 0.2, {0, 0.39, -1}, {0, 0.39, 1}, 0.2, m));
  ASSERT_EQ(m.count, 1);
  expect_vec_near(m.points[0].position, {0, 0.195, 0}, 1e-12);
  EXPECT_FALSE(
      collide_capsule_capsule({-1, 0, 0}, {1, 0, 0}, 0.2, {0, 0.41, -1}, {0, 0.41, 1}, 0.2, m));
}

TEST(NarrowPhaseCapsules, CapsuleLyingOnABoxRestsOnTwoPoints) {
  ContactManifold m;
  const Pose ground{{0, -0.5, 0}, {}};
  ASSERT_TRUE(
      collide_capsule_box({-0.5, 0.19, 0.1}, {0.5, 0.19, 0.1}, 0.2, ground, {2, 0.5, 2}, m));
  ASSERT_EQ(m.count, 2);
  expect_vec_near(m.normal, {0, -1, 0}, 1e-9);
  for (int k = 0; k < 2; ++k) {
    EXPECT_NEAR(m.points[k].depth, 0.01, 1e-9);
    EXPECT_NEAR(m.points[k].position.y, -0.005, 1e-9);
    EXPECT_NEAR(std::abs(m.points[k].position.x), 0.5, 1e-9);
  }
  // Standing upright: one point under its lower cap. Through the dispatcher, box first.
  ASSERT_TRUE(
      collide(box_shape({2, 0.5, 2}), ground, capsule_shape(0.2, 0.5), {{0, 0.69, 0}, {}}, m));
  ASSERT_EQ(m.count, 1);
  expect_vec_near(m.normal, {0, 1, 0}, 1e-9);
  EXPECT_NEAR(m.points[0].depth, 0.01, 1e-9);
  // Sunk with its segment inside the box (EPA): pushed out upward.
  ASSERT_TRUE(collide_capsule_box({-0.5, -0.1, 0}, {0.5, -0.1, 0}, 0.2, ground, {2, 0.5, 2}, m));
  expect_vec_near(m.normal, {0, -1, 0}, 1e-6);
  EXPECT_NEAR(m.max_depth(), 0.3, 1e-6);
}

// ---- boxes --------------------------------------------------------------------------------------

TEST(NarrowPhaseBoxBox, BoxRestingOnABoxHasFourPointsAtItsDepth) {
  const Pose ground{{0, -0.5, 0}, {}};
  for (const double yaw : {0.0, 0.5}) {
    const Pose box{{0.3, 0.49, -0.2}, Quat::from_axis_angle({0, 1, 0}, yaw)};
    ContactManifold m;
    ASSERT_TRUE(collide_box_box(ground, {5, 0.5, 5}, box, {0.5, 0.5, 0.5}, m));
    ASSERT_EQ(m.count, 4);
    expect_vec_near(m.normal, {0, 1, 0}, 1e-12);
    for (int k = 0; k < 4; ++k) {
      EXPECT_NEAR(m.points[k].depth, 0.01, 1e-12);
      EXPECT_NEAR(m.points[k].position.y, -0.005, 1e-12);
      // The box's four bottom corners.
      const Vec3 local = box.to_local(m.points[k].position);
      EXPECT_NEAR(std::abs(local.x), 0.5, 1e-12);
      EXPECT_NEAR(std::abs(local.z), 0.5, 1e-12);
    }
    // Swapped: the small box is the reference or not, the points and depth are the same.
    ContactManifold s;
    ASSERT_TRUE(collide_box_box(box, {0.5, 0.5, 0.5}, ground, {5, 0.5, 5}, s));
    ASSERT_EQ(s.count, 4);
    expect_vec_near(s.normal, {0, -1, 0}, 1e-12);
    for (int k = 0; k < 4; ++k) EXPECT_NEAR(s.points[k].depth, 0.01, 1e-12);
  }
}

// A's top edge (along z, A turned 45° about z) crossed by B's bottom edge (along x, B turned 45°
// about x), 1 cm into each other: an edge–edge contact, one point midway.
TEST(NarrowPhaseBoxBox, CrossedEdgesGiveOnePointBetweenTheEdges) {
  const double r = std::sqrt(0.5);  // half a unit cube's face diagonal
  const Pose a{{0, 0, 0}, Quat::from_axis_angle({0, 0, 1}, std::numbers::pi / 4)};
  const Pose b{{0, 2 * r - 0.01, 0}, Quat::from_axis_angle({1, 0, 0}, std::numbers::pi / 4)};
  ContactManifold m;
  ASSERT_TRUE(collide_box_box(a, {0.5, 0.5, 0.5}, b, {0.5, 0.5, 0.5}, m));
  ASSERT_EQ(m.count, 1);
  expect_vec_near(m.normal, {0, 1, 0}, 1e-9);
  EXPECT_NEAR(m.points[0].depth, 0.01, 1e-9);
  expect_vec_near(m.points[0].position, {0, r - 0.005, 0}, 1e-9);
  // Lifted 2 cm, only the edge axis separates them.
  const Pose lifted{{0, 2 * r + 0.01, 0}, b.orientation};
  EXPECT_FALSE(collide_box_box(a, {0.5, 0.5, 0.5}, lifted, {0.5, 0.5, 0.5}, m));
  EXPECT_EQ(m.count, 0);
}

// EPA's depth and normal (penetration on two boxes) against the separating-axis depth: the least
// overlap over the 15 axes is the shortest way out, and moving B along EPA's normal by it must
// leave the boxes just touching.
TEST(NarrowPhaseEpa, DepthMatchesSeparatingAxisDepthOnRandomOverlappingBoxes) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> half(0.2, 1.0), offset(-1.2, 1.2);
  int tested = 0;
  for (int trial = 0; trial < 3000 && tested < 1000; ++trial) {
    const Vec3 ha{half(rng), half(rng), half(rng)}, hb{half(rng), half(rng), half(rng)};
    const Pose pa{{0, 0, 0}, random_rotation(rng)};
    const Pose pb{{offset(rng), offset(rng), offset(rng)}, random_rotation(rng)};
    const double expected = sat_depth(pa, ha, pb, hb);
    Vec3 normal;
    double depth = 0;
    ContactManifold epa, sat;
    ASSERT_EQ(penetration(box_shape(ha), pa, box_shape(hb), pb, normal, depth), expected >= 0);
    ASSERT_EQ(collide_convex(box_shape(ha), pa, box_shape(hb), pb, epa), expected >= 0) << trial;
    ASSERT_EQ(collide_box_box(pa, ha, pb, hb, sat), expected >= 0) << trial;
    if (expected < 1e-3) continue;
    ++tested;
    ASSERT_NEAR(depth, expected, 1e-6) << trial;
    const Pose moved{pb.position + normal * depth, pb.orientation};
    ASSERT_NEAR(sat_depth(pa, ha, moved, hb), 0, 1e-6) << trial;
    // The manifolds: EPA's points never deeper than its depth; the separating-axis test's within
    // its preference for a face over an edge (5 %).
    ASSERT_GE(epa.count, 1);
    EXPECT_LE(epa.max_depth(), depth + 1e-9) << trial;
    EXPECT_LE(sat.max_depth(), expected / 0.95 + 1e-5) << trial;
  }
  EXPECT_GE(tested, 500);
}

// ---- GJK ----------------------------------------------------------------------------------------

TEST(NarrowPhaseGjk, DistancesMatchBruteForceOnTenThousandRandomHullPairs) {
  std::mt19937 rng(17);
  std::vector<RigidShape> hulls;
  for (int k = 0; k < 300; ++k) hulls.push_back(random_hull(rng));
  std::uniform_int_distribution<std::size_t> pick(0, hulls.size() - 1);
  std::uniform_real_distribution<double> gap(2.001, 3.0);
  double worst = 0;
  int total_iterations = 0;
  for (int trial = 0; trial < 10000; ++trial) {
    const RigidShape &a = hulls[pick(rng)], &b = hulls[pick(rng)];
    // Each hull lies within 1 of its origin, so origins 2+ apart keep them separated.
    const Pose pa{{0, 0, 0}, random_rotation(rng)};
    const Pose pb{random_unit(rng) * gap(rng), random_rotation(rng)};
    GjkResult g;
    ASSERT_TRUE(gjk_distance(a, pa, b, pb, g));
    ASSERT_FALSE(g.overlapping);
    const double expected = brute_force_distance(a, pa, b, pb);
    worst = std::max(worst, std::abs(g.distance - expected));
    ASSERT_NEAR(g.distance, expected, 1e-9) << trial;
    ASSERT_NEAR(distance(g.point_a, g.point_b), g.distance, 1e-9) << trial;
    total_iterations += g.iterations;
  }
  RecordProperty("worst_error", std::to_string(worst));
  EXPECT_LT(total_iterations, 10000 * 12);  // a handful of iterations each
}

TEST(NarrowPhaseGjk, RoundedShapesHaveExactDistances) {
  GjkResult g;
  // Sphere to box face.
  ASSERT_TRUE(gjk_distance(sphere_shape(0.5), {{0, 2, 0}, {}}, box_shape({1, 1, 1}), {}, g));
  EXPECT_NEAR(g.distance, 0.5, 1e-12);
  expect_vec_near(g.point_a, {0, 1.5, 0}, 1e-12);
  expect_vec_near(g.point_b, {0, 1, 0}, 1e-12);
  // Capsule (along y) beside a cylinder (along y): radial gap 3 − 0.25 − 1.
  ASSERT_TRUE(gjk_distance(capsule_shape(0.25, 1), {{3, 0, 0}, {}}, cylinder_shape(1, 1), {}, g));
  EXPECT_NEAR(g.distance, 1.75, 1e-12);
  // Overlapping.
  ASSERT_TRUE(gjk_distance(sphere_shape(1), {}, box_shape({1, 1, 1}), {{1.5, 0, 0}, {}}, g));
  EXPECT_TRUE(g.overlapping);
  EXPECT_EQ(g.distance, 0);
  // Non-convex refused.
  EXPECT_FALSE(
      gjk_distance(sphere_shape(1), {}, height_field_shape({0, 0, 0, 0}, 2, 2, 1, 1), {}, g));
}

TEST(NarrowPhaseConvex, HullAndCylinderRestOnABoxWithFacePoints) {
  const std::vector<Vec3> cube = {{-0.5, -0.5, -0.5}, {0.5, -0.5, -0.5}, {0.5, 0.5, -0.5},
                                  {-0.5, 0.5, -0.5},  {-0.5, -0.5, 0.5}, {0.5, -0.5, 0.5},
                                  {0.5, 0.5, 0.5},    {-0.5, 0.5, 0.5}};
  const RigidShape hull = convex_hull_shape(cube);
  const RigidShape ground = box_shape({5, 0.5, 5});
  const Pose ground_pose{{0, -0.5, 0}, {}};
  ContactManifold m;
  ASSERT_TRUE(collide(hull, {{0, 0.48, 0}, {}}, ground, ground_pose, m));
  ASSERT_EQ(m.count, 4);
  expect_vec_near(m.normal, {0, -1, 0}, 1e-9);
  for (int k = 0; k < 4; ++k) EXPECT_NEAR(m.points[k].depth, 0.02, 1e-9);
  // A standing cylinder: its bottom cap, four of the octagon's points.
  ASSERT_TRUE(collide(cylinder_shape(0.3, 0.5), {{0, 0.49, 0}, {}}, ground, ground_pose, m));
  ASSERT_EQ(m.count, 4);
  for (int k = 0; k < 4; ++k) EXPECT_NEAR(m.points[k].depth, 0.01, 1e-9);
  // A cylinder lying on its side: a line of two points.
  const Quat lying = Quat::from_axis_angle({0, 0, 1}, std::numbers::pi / 2);
  ASSERT_TRUE(collide(cylinder_shape(0.3, 0.5), {{0, 0.29, 0}, lying}, ground, ground_pose, m));
  ASSERT_EQ(m.count, 2);
  for (int k = 0; k < 2; ++k) EXPECT_NEAR(m.points[k].depth, 0.01, 1e-9);
}

// Every pair of convex kinds at random poses: A against B and B against A agree (hit, opposite
// normals), manifolds are well formed, and the closed forms' depths agree with GJK/EPA's.
TEST(NarrowPhaseConvex, EveryPairOfKindsIsSymmetricAndAgreesWithEpa) {
  std::mt19937 rng(23);
  const std::vector<RigidShape> shapes = {sphere_shape(0.4), box_shape({0.3, 0.5, 0.4}),
                                          capsule_shape(0.25, 0.4), cylinder_shape(0.35, 0.3),
                                          convex_hull_shape(std::vector<Vec3>{{-0.4, -0.3, -0.3},
                                                                              {0.5, -0.3, -0.2},
                                                                              {0.1, 0.4, -0.3},
                                                                              {0.0, -0.1, 0.5},
                                                                              {0.2, 0.3, 0.3}})};
  std::uniform_real_distribution<double> spread(0, 1.2);
  int hits = 0;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    for (std::size_t j = i; j < shapes.size(); ++j) {
      for (int trial = 0; trial < 200; ++trial) {
        const Pose pa{{0, 0, 0}, random_rotation(rng)};
        const Pose pb{random_unit(rng) * spread(rng), random_rotation(rng)};
        ContactManifold ab, ba;
        const bool hit = collide(shapes[i], pa, shapes[j], pb, ab);
        ASSERT_EQ(collide(shapes[j], pb, shapes[i], pa, ba), hit) << i << " " << j << " " << trial;
        Vec3 normal;
        double depth = 0;
        ASSERT_EQ(penetration(shapes[i], pa, shapes[j], pb, normal, depth), hit);
        if (!hit) continue;
        ++hits;
        for (const ContactManifold* m : {&ab, &ba}) {
          ASSERT_GE(m->count, 1);
          ASSERT_LE(m->count, 4);
          ASSERT_NEAR(length(m->normal), 1, 1e-9);
          for (int k = 0; k < m->count; ++k) {
            ASSERT_TRUE(is_finite(m->points[k].position));
            ASSERT_GE(m->points[k].depth, 0);
          }
        }
        if (depth > 1e-3) {
          EXPECT_LT(dot(ab.normal, ba.normal), -0.99) << i << " " << j << " " << trial;
        }
        const bool boxes = shapes[i].kind == ShapeKind::Box && shapes[j].kind == ShapeKind::Box;
        // The separating-axis manifold may prefer a face axis up to 5 % deeper than an edge axis.
        EXPECT_LE(ab.max_depth(), (boxes ? 1 / 0.95 : 1.0) * depth + 1e-5) << i << " " << j;
        const bool rounded =
            shapes[i].kind == ShapeKind::Sphere || shapes[j].kind == ShapeKind::Sphere ||
            (shapes[i].kind == ShapeKind::Capsule && shapes[j].kind == ShapeKind::Capsule);
        if (rounded) {
          EXPECT_NEAR(ab.max_depth(), depth, 1e-6) << i << " " << j << " " << trial;
        }
      }
    }
  }
  EXPECT_GT(hits, 1000);
}

// Degenerate placements: every convex pair at the very same pose (deep, symmetric), and two
// hull cubes exactly face to face (touching, depth 0).
TEST(NarrowPhaseConvex, CoincidentAndExactlyTouchingShapesGiveFiniteContacts) {
  const std::vector<Vec3> cube = {{-0.5, -0.5, -0.5}, {0.5, -0.5, -0.5}, {0.5, 0.5, -0.5},
                                  {-0.5, 0.5, -0.5},  {-0.5, -0.5, 0.5}, {0.5, -0.5, 0.5},
                                  {0.5, 0.5, 0.5},    {-0.5, 0.5, 0.5}};
  const std::vector<RigidShape> shapes = {sphere_shape(0.4), box_shape({0.3, 0.5, 0.4}),
                                          capsule_shape(0.25, 0.4), cylinder_shape(0.35, 0.3),
                                          convex_hull_shape(cube)};
  const Pose here{{1, 2, 3}, Quat::from_axis_angle({1, 1, 0}, 0.4)};
  for (const RigidShape& a : shapes) {
    for (const RigidShape& b : shapes) {
      ContactManifold m;
      ASSERT_TRUE(collide(a, here, b, here, m))
          << shape_kind_name(a.kind) << shape_kind_name(b.kind);
      ASSERT_GE(m.count, 1);
      ASSERT_TRUE(is_finite(m.normal));
      EXPECT_NEAR(length(m.normal), 1, 1e-9);
      for (int k = 0; k < m.count; ++k) {
        ASSERT_TRUE(is_finite(m.points[k].position));
        EXPECT_GT(m.points[k].depth, 0.1) << shape_kind_name(a.kind) << shape_kind_name(b.kind);
      }
    }
  }
  ContactManifold m;
  ASSERT_TRUE(collide(shapes[4], {}, shapes[4], {{0, 1, 0}, {}}, m));
  expect_vec_near(m.normal, {0, 1, 0}, 1e-9);
  EXPECT_NEAR(m.max_depth(), 0, 1e-9);
  EXPECT_EQ(m.count, 4);
  EXPECT_FALSE(collide(shapes[4], {}, shapes[4], {{0, 1.0001, 0}, {}}, m));
}

TEST(NarrowPhaseBounds, WorldBoundsHoldTheShapeTightly) {
  std::mt19937 rng(31);
  const Quat turn = Quat::from_axis_angle({0, 0, 1}, std::numbers::pi / 4);
  const Aabb box = world_bounds(box_shape({1, 1, 1}), {{1, 2, 3}, turn});
  expect_vec_near(box.min, {1 - std::sqrt(2.0), 2 - std::sqrt(2.0), 2}, 1e-12);
  expect_vec_near(box.max, {1 + std::sqrt(2.0), 2 + std::sqrt(2.0), 4}, 1e-12);
  const Aabb capsule = world_bounds(capsule_shape(0.5, 1), {{0, 0, 0}, turn}, 0.1);
  EXPECT_NEAR(capsule.max.x, std::sqrt(0.5) + 0.5 + 0.1, 1e-12);
  EXPECT_NEAR(capsule.max.z, 0.6, 1e-12);
  // Every support point of a random turned hull lies inside its bounds, and some touch each side.
  const RigidShape hull = random_hull(rng);
  const Pose pose{{0.3, -0.2, 0.7}, random_rotation(rng)};
  const Aabb b = world_bounds(hull, pose);
  for (const Vec3& p : hull.points) {
    const Vec3 w = pose.to_world(p);
    for (int k = 0; k < 3; ++k) {
      EXPECT_GE(w[k], b.min[k] - 1e-12);
      EXPECT_LE(w[k], b.max[k] + 1e-12);
    }
  }
  EXPECT_TRUE(aabb_is_valid(world_bounds(height_field_shape({0, 1, 2, 3}, 2, 2, 1, 1), pose)));
}

// ---- meshes and height fields -------------------------------------------------------------------

TEST(NarrowPhaseMesh, BoxOnATriangleMeshFloorRestsOnFourPoints) {
  // A 4 × 4 floor of two triangles at y = 0, facing up.
  const RigidShape floor = triangle_mesh_shape({{-2, 0, -2}, {2, 0, -2}, {2, 0, 2}, {-2, 0, 2}},
                                               {Triangle{0, 2, 1}, Triangle{0, 3, 2}});
  ContactManifold m;
  ASSERT_TRUE(collide(box_shape({0.5, 0.5, 0.5}), {{0.2, 0.49, 0.1}, {}}, floor, {}, m));
  ASSERT_EQ(m.count, 4);
  expect_vec_near(m.normal, {0, -1, 0}, 1e-9);
  for (int k = 0; k < 4; ++k) EXPECT_NEAR(m.points[k].depth, 0.01, 1e-9);
  // The mesh first: the normal turns round.
  ASSERT_TRUE(collide(floor, {}, sphere_shape(0.5), {{0, 0.45, 0}, {}}, m));
  expect_vec_near(m.normal, {0, 1, 0}, 1e-9);
  EXPECT_NEAR(m.max_depth(), 0.05, 1e-9);
  // A sphere sunk below the one-sided floor is pushed back up, not down through it: its lowest
  // point, 0.7 m under the floor, has to come up to it.
  ASSERT_TRUE(collide(sphere_shape(0.5), {{0, -0.2, 0}, {}}, floor, {}, m));
  expect_vec_near(m.normal, {0, -1, 0}, 1e-9);
  EXPECT_NEAR(m.max_depth(), 0.7, 1e-9);
  EXPECT_FALSE(collide(sphere_shape(0.5), {{0, 0.51, 0}, {}}, floor, {}, m));
}

// A bumpy 30 × 30 terrain mesh (1,800 triangles): the BVH finds exactly the triangles a scan of
// their bounds finds, and contacts and times of impact are the same with it as without.
TEST(NarrowPhaseMesh, BvhGivesTheSameTrianglesAndContactsAsAScan) {
  std::mt19937 rng(29);
  std::uniform_real_distribution<double> bump(-0.2, 0.2), across(0.5, 29.5), unit(0, 1);
  std::vector<Vec3> points;
  std::vector<Triangle> triangles;
  for (int j = 0; j <= 30; ++j)
    for (int i = 0; i <= 30; ++i) points.push_back({double(i), bump(rng), double(j)});
  for (std::uint32_t j = 0; j < 30; ++j) {
    for (std::uint32_t i = 0; i < 30; ++i) {
      const std::uint32_t v = j * 31 + i;
      triangles.push_back({v, v + 31, v + 32});
      triangles.push_back({v, v + 32, v + 1});
    }
  }
  const RigidShape terrain = triangle_mesh_shape(points, triangles);
  const TriangleBvh bvh(terrain);
  ASSERT_EQ(bvh.triangle_count(), triangles.size());
  std::vector<std::uint32_t> found;
  for (int trial = 0; trial < 200; ++trial) {
    const Vec3 c{across(rng), bump(rng), across(rng)};
    const Vec3 lo = c - Vec3{unit(rng), 0.3, unit(rng)}, hi = c + Vec3{unit(rng), 0.3, unit(rng)};
    bvh.query(lo, hi, found);
    std::sort(found.begin(), found.end());
    std::vector<std::uint32_t> expected;
    for (std::uint32_t t = 0; t < triangles.size(); ++t) {
      Vec3 tlo = points[triangles[t][0]], thi = tlo;
      for (const std::uint32_t v : triangles[t]) {
        tlo = {std::min(tlo.x, points[v].x), std::min(tlo.y, points[v].y),
               std::min(tlo.z, points[v].z)};
        thi = {std::max(thi.x, points[v].x), std::max(thi.y, points[v].y),
               std::max(thi.z, points[v].z)};
      }
      if (tlo.x <= hi.x && lo.x <= thi.x && tlo.y <= hi.y && lo.y <= thi.y && tlo.z <= hi.z &&
          lo.z <= thi.z)
        expected.push_back(t);
    }
    ASSERT_EQ(found, expected) << trial;
    // A box dropped on the terrain: the same manifold and time of impact either way.
    const RigidShape box = box_shape({0.4, 0.3, 0.5});
    const Pose pose{{c.x, 0.25, c.z}, random_rotation(rng)};
    ContactManifold scan, fast;
    const bool hit = collide(box, pose, terrain, {}, scan);
    ASSERT_EQ(collide(box, pose, terrain, {}, fast, &bvh), hit);
    ASSERT_EQ(scan.count, fast.count);
    for (int k = 0; k < scan.count; ++k) ASSERT_EQ(scan.points[k].depth, fast.points[k].depth);
    double f_scan = 0, f_fast = 0;
    const Pose above{{c.x, 2, c.z}, pose.orientation};
    const bool toi = time_of_impact(box, above, {0.3, -3, 0}, terrain, {}, {0, 0, 0}, f_scan);
    ASSERT_EQ(time_of_impact(box, above, {0.3, -3, 0}, terrain, {}, {0, 0, 0}, f_fast, 1e-4, &bvh),
              toi);
    ASSERT_EQ(f_scan, f_fast);
    ASSERT_TRUE(toi);
  }
}

TEST(NarrowPhaseHeightField, SphereOnASlopeIsPushedAlongTheSlopeNormal) {
  // y = 0.5·x on a 5 × 5 grid of 1 m cells.
  std::vector<double> heights;
  for (int j = 0; j < 5; ++j)
    for (int i = 0; i < 5; ++i) heights.push_back(0.5 * i);
  const RigidShape field = height_field_shape(heights, 5, 5, 1, 1);
  const Vec3 up = normalize(Vec3{-0.5, 1, 0});
  const Vec3 surface{2.2, 1.1, 1.7};
  ContactManifold m;
  ASSERT_TRUE(collide(sphere_shape(0.3), {surface + up * 0.28, {}}, field, {}, m));
  expect_vec_near(m.normal, -up, 1e-9);
  EXPECT_NEAR(m.max_depth(), 0.02, 1e-9);
  EXPECT_FALSE(collide(sphere_shape(0.3), {surface + up * 0.31, {}}, field, {}, m));
  // Off the field's edge: nothing.
  EXPECT_FALSE(collide(sphere_shape(0.3), {{-3, 0, 1}, {}}, field, {}, m));
}

// ---- continuous collision detection -------------------------------------------------------------

// Worked example: a 0.1 m ball at 30 m/s moves 0.5 m in a 60 Hz step; the wall is 0.2 m thick, so
// with the ball's diameter its centre overlaps the wall over only 0.4 m < 0.5 m. Placed 5 cm
// before the wall, the ball is clear of it at both ends of the step, and the discrete test misses;
// the swept test finds the hit after 0.05/0.5 = 0.1 of the step.
TEST(Ccd, BulletBallTunnelsThroughAThinWallUnlessSwept) {
  const double radius = 0.1, speed = 30, step = 1.0 / 60;
  const Vec3 motion{speed * step, 0, 0};
  EXPECT_NEAR(motion.x, 0.5, 1e-15);
  const RigidShape ball = sphere_shape(radius), wall = box_shape({0.1, 1, 1});
  const Pose wall_pose{{0.1, 0, 0}, {}};  // x ∈ [0, 0.2]
  const Pose before{{-0.15, 0, 0}, {}};
  const Pose after{before.position + motion, {}};
  ContactManifold m;
  EXPECT_FALSE(collide(ball, before, wall, wall_pose, m));
  EXPECT_FALSE(collide(ball, after, wall, wall_pose, m));  // past it: tunnelled
  double fraction = -1;
  ASSERT_TRUE(time_of_impact(ball, before, motion, wall, wall_pose, {0, 0, 0}, fraction));
  EXPECT_NEAR(fraction, 0.1, 1e-3);
  EXPECT_LE(fraction, 0.1);  // never past the contact
  // Moved to the time of impact, the ball touches the wall (within the tolerance).
  GjkResult g;
  ASSERT_TRUE(gjk_distance(ball, {before.position + motion * fraction, {}}, wall, wall_pose, g));
  EXPECT_LE(g.distance, 1e-4);
  // The wall moving toward the ball instead: the same fraction.
  double f2 = -1;
  ASSERT_TRUE(time_of_impact(ball, before, {0, 0, 0}, wall, wall_pose, -motion, f2));
  EXPECT_NEAR(f2, fraction, 1e-9);
}

TEST(Ccd, MissesAndMovingApartGiveNoImpact) {
  const RigidShape ball = sphere_shape(0.1), wall = box_shape({0.1, 1, 1});
  double fraction = 0;
  EXPECT_FALSE(time_of_impact(ball, {{-0.15, 0, 0}, {}}, {-0.5, 0, 0}, wall, {{0.1, 0, 0}, {}},
                              {0, 0, 0}, fraction));
  EXPECT_EQ(fraction, 1);
  EXPECT_FALSE(time_of_impact(ball, {{-0.15, 2, 0}, {}}, {0.5, 0, 0}, wall, {{0.1, 0, 0}, {}},
                              {0, 0, 0}, fraction));  // passes above the wall
  ASSERT_TRUE(time_of_impact(ball, {{0.0, 0, 0}, {}}, {0.5, 0, 0}, wall, {{0.1, 0, 0}, {}},
                             {0, 0, 0}, fraction));  // already touching
  EXPECT_EQ(fraction, 0);
}

TEST(Ccd, FallingBoxStopsOnAHeightField) {
  const RigidShape field = height_field_shape(std::vector<double>(16, 0.0), 4, 4, 1, 1);
  double fraction = 0;
  // A box 1 m above the flat field, falling 4 m in the step: contact after a quarter of it.
  ASSERT_TRUE(time_of_impact(box_shape({0.2, 0.2, 0.2}), {{1.5, 1.2, 1.5}, {}}, {0, -4, 0}, field,
                             {}, {0, 0, 0}, fraction));
  EXPECT_NEAR(fraction, 0.25, 1e-4);
}
