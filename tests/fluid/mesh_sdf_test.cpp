// MeshSdf (kinema/fluid/mesh_sdf.h): exact distances and signs against analytic shapes, the refusal
// of open, non-manifold and degenerate meshes, and meshes as GridFluid obstacles.
#include "kinema/fluid/mesh_sdf.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "kinema/core/error.h"
#include "kinema/fluid/grid_fluid.h"
#include "kinema/fluid/sph.h"

namespace kinema {
namespace {

using Triangles = std::vector<std::array<int, 3>>;

struct Mesh {
  std::vector<Vec3> vertices;
  Triangles triangles;
  /// Adds a vertex, or finds the one already at p (so that meshes put together share edges).
  int vertex(const Vec3& p) {
    for (size_t i = 0; i < vertices.size(); ++i)
      if (vertices[i] == p) return int(i);
    vertices.push_back(p);
    return int(vertices.size() - 1);
  }
  /// A triangle wound so that its normal points along `outward`.
  void triangle(int a, int b, int c, const Vec3& outward) {
    const Vec3 n =
        cross(vertices[size_t(b)] - vertices[size_t(a)], vertices[size_t(c)] - vertices[size_t(a)]);
    if (dot(n, outward) < 0) std::swap(b, c);
    triangles.push_back({a, b, c});
  }
};

/// An axis-aligned box as 12 triangles wound counter-clockwise seen from outside.
void add_box(Mesh& m, const Vec3& centre, const Vec3& half) {
  for (int axis = 0; axis < 3; ++axis)
    for (int side : {-1, 1}) {
      const int u = (axis + 1) % 3, v = (axis + 2) % 3;
      int corner[4];
      for (int q = 0; q < 4; ++q) {
        Vec3 p = centre;
        p[axis] += side * half[axis];
        p[u] += (q == 1 || q == 2 ? 1 : -1) * half[u];
        p[v] += (q >= 2 ? 1 : -1) * half[v];
        corner[q] = m.vertex(p);
      }
      Vec3 outward{0, 0, 0};
      outward[axis] = side;
      m.triangle(corner[0], corner[1], corner[2], outward);
      m.triangle(corner[0], corner[2], corner[3], outward);
    }
}

Mesh unit_cube() {
  Mesh m;
  add_box(m, {0, 0, 0}, {0.5, 0.5, 0.5});
  return m;
}

double box_sdf(const Vec3& p, const Vec3& centre, const Vec3& half) {
  return FluidRegion::box(centre, half).distance(p);
}

/// A UV sphere of radius r: `rings` bands of latitude, `segments` of longitude, one vertex at each
/// pole.
Mesh uv_sphere(double r, int rings, int segments) {
  Mesh m;
  const double pi = std::acos(-1.0);
  m.vertices.push_back({0, r, 0});  // north pole, 0
  for (int i = 1; i < rings; ++i)
    for (int j = 0; j < segments; ++j) {
      const double theta = pi * i / rings, phi = 2 * pi * j / segments;
      m.vertices.push_back({r * std::sin(theta) * std::cos(phi), r * std::cos(theta),
                            r * std::sin(theta) * std::sin(phi)});
    }
  m.vertices.push_back({0, -r, 0});  // south pole
  const int south = int(m.vertices.size() - 1);
  const auto at = [&](int ring, int j) { return 1 + (ring - 1) * segments + (j % segments); };
  const auto outward = [&](int a, int b, int c) {
    return m.vertices[size_t(a)] + m.vertices[size_t(b)] + m.vertices[size_t(c)];
  };
  for (int j = 0; j < segments; ++j) {
    int a = 0, b = at(1, j), c = at(1, j + 1);
    m.triangle(a, b, c, outward(a, b, c));
    a = south, b = at(rings - 1, j), c = at(rings - 1, j + 1);
    m.triangle(a, b, c, outward(a, b, c));
    for (int i = 1; i + 1 < rings; ++i) {
      const int p = at(i, j), q = at(i, j + 1), s = at(i + 1, j), t = at(i + 1, j + 1);
      m.triangle(p, s, t, outward(p, s, t));
      m.triangle(p, t, q, outward(p, t, q));
    }
  }
  return m;
}

std::string refusal(const Mesh& m) {
  try {
    MeshSdf sdf(m.vertices, m.triangles, "rock.obj");
  } catch (const Error& e) {
    EXPECT_EQ(e.file(), "rock.obj");
    EXPECT_EQ(e.place(), "mesh");
    return e.reason();
  }
  return "(accepted)";
}

// ---- distances ----

TEST(MeshSdf, UnitCubeCentreAndFaceDistances) {
  const Mesh m = unit_cube();
  ASSERT_EQ(m.triangles.size(), 12u);
  const MeshSdf sdf(m.vertices, m.triangles);
  EXPECT_NEAR(sdf.distance({0, 0, 0}), -0.5, 1e-15);
  EXPECT_NEAR(sdf.distance({1, 0, 0}), 0.5, 1e-15);
  EXPECT_NEAR(sdf.distance({0, -1, 0}), 0.5, 1e-15);
  EXPECT_NEAR(sdf.distance({1, 1, 1}), std::sqrt(0.75),
              1e-15);  // nearest: a corner
  EXPECT_NEAR(sdf.volume(), 1.0, 1e-15);
}

TEST(MeshSdf, CubeMatchesTheAnalyticBoxAtRandomPoints) {
  const Vec3 centre{0.3, -0.2, 1.1}, half{0.5, 0.25, 0.75};
  Mesh m;
  add_box(m, centre, half);
  const MeshSdf sdf(m.vertices, m.triangles);
  std::mt19937 rng(20261205);
  std::uniform_real_distribution<double> d(-1.5, 1.5);
  int inside = 0;
  for (int n = 0; n < 20000; ++n) {
    const Vec3 p = centre + Vec3{d(rng), d(rng), d(rng)};
    const double expected = box_sdf(p, centre, half), got = sdf.distance(p);
    ASSERT_NEAR(got, expected, 1e-9) << p.x << " " << p.y << " " << p.z;
    ASSERT_EQ(got < 0, expected < 0);
    inside += expected < 0;
  }
  EXPECT_GT(inside, 100);  // the sample reached the inside
}

TEST(MeshSdf, InsideOutWindingIsTurnedAround) {
  Mesh m = unit_cube();
  for (auto& t : m.triangles) std::swap(t[1], t[2]);
  const MeshSdf sdf(m.vertices, m.triangles);
  EXPECT_NEAR(sdf.distance({0, 0, 0}), -0.5, 1e-15);
  EXPECT_NEAR(sdf.distance({0, 0, 2}), 1.5, 1e-15);
  EXPECT_NEAR(sdf.volume(), 1.0, 1e-15);
}

TEST(MeshSdf, UvSphereIsWithinItsFacetingErrorOfTheSphere) {
  const double r = 0.8;
  const Mesh m = uv_sphere(r, 24, 48);
  const MeshSdf sdf(m.vertices, m.triangles);
  // The polyhedron is convex and inscribed: its SDF lies between the sphere's and the sphere's plus
  // the largest gap r − (distance of the nearest face plane from the centre).
  double nearest_plane = r;
  for (const auto& t : m.triangles) {
    const Vec3 &a = m.vertices[size_t(t[0])], &b = m.vertices[size_t(t[1])],
               &c = m.vertices[size_t(t[2])];
    nearest_plane = std::min(nearest_plane, std::abs(dot(a, normalize(cross(b - a, c - a)))));
  }
  const double gap = r - nearest_plane;
  ASSERT_GT(gap, 0);
  ASSERT_LT(gap, 0.01);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> d(-1.6, 1.6);
  for (int n = 0; n < 5000; ++n) {
    const Vec3 p{d(rng), d(rng), d(rng)};
    const double sphere = length(p) - r, got = sdf.distance(p);
    ASSERT_GE(got, sphere - 1e-12) << p.x << " " << p.y << " " << p.z;
    ASSERT_LE(got, sphere + gap + 1e-12) << p.x << " " << p.y << " " << p.z;
  }
}

// ---- refusals ----

TEST(MeshSdf, CubeWithATriangleRemovedIsRefusedNamingThreeOpenEdges) {
  Mesh m = unit_cube();
  const auto removed = m.triangles[4];
  m.triangles.erase(m.triangles.begin() + 4);
  const std::string reason = refusal(m);
  EXPECT_NE(reason.find("not closed"), std::string::npos) << reason;
  EXPECT_NE(reason.find("3 open edges"), std::string::npos) << reason;
  // The first open edge is one of the removed triangle's.
  bool named = false;
  for (int e = 0; e < 3; ++e) {
    const int a = std::min(removed[size_t(e)], removed[size_t((e + 1) % 3)]),
              b = std::max(removed[size_t(e)], removed[size_t((e + 1) % 3)]);
    named = named || reason.find("vertices " + std::to_string(a) + " and " + std::to_string(b)) !=
                         std::string::npos;
  }
  EXPECT_TRUE(named) << reason;
}

TEST(MeshSdf, NonManifoldEdgeIsRefused) {
  Mesh m;  // two cubes that share one edge: x = y = 0.5, −0.5 ≤ z ≤ 0.5, used by
           // 4 triangles
  add_box(m, {0, 0, 0}, {0.5, 0.5, 0.5});
  add_box(m, {1, 1, 0}, {0.5, 0.5, 0.5});
  ASSERT_EQ(m.vertices.size(), 14u);
  const std::string reason = refusal(m);
  EXPECT_NE(reason.find("not manifold"), std::string::npos) << reason;
  EXPECT_NE(reason.find("1 edge is shared by more than two"), std::string::npos) << reason;
}

TEST(MeshSdf, DegenerateTriangleIsRefused) {
  Mesh m = unit_cube();
  m.vertices.push_back(0.5 * (m.vertices[0] + m.vertices[1]));  // on the line 0–1
  m.triangles.push_back({0, 1, 8});
  const std::string reason = refusal(m);
  EXPECT_NE(reason.find("degenerate (zero-area) triangle 12"), std::string::npos) << reason;
  EXPECT_NE(reason.find("degenerate"), std::string::npos) << reason;
  Mesh repeated = unit_cube();
  repeated.triangles[3][2] = repeated.triangles[3][0];
  EXPECT_NE(refusal(repeated).find("triangle 3 "), std::string::npos);
}

TEST(MeshSdf, BadIndicesVerticesAndWindingAreRefused) {
  Mesh m = unit_cube();
  m.triangles[2][1] = 8;
  EXPECT_NE(refusal(m).find("vertex index 8 outside 0…7"), std::string::npos) << refusal(m);
  m = unit_cube();
  m.triangles[2][1] = -1;
  EXPECT_NE(refusal(m).find("vertex index -1"), std::string::npos);
  m = unit_cube();
  m.vertices[5].y = std::nan("");
  EXPECT_NE(refusal(m).find("has vertex 5 not finite"), std::string::npos) << refusal(m);
  m = unit_cube();
  std::swap(m.triangles[0][1],
            m.triangles[0][2]);  // one triangle wound the other way
  EXPECT_NE(refusal(m).find("not consistently oriented"), std::string::npos) << refusal(m);
  EXPECT_NE(refusal(Mesh{}).find("no triangles"), std::string::npos);
}

// ---- as a grid fluid obstacle ----

GridFluidOptions smoke_box(int n, double dx) {
  GridFluidOptions o;
  o.nx = o.ny = o.nz = n;
  o.dx = dx;
  o.threads = 1;
  o.buoyancy_beta = 1;
  return o;
}

TEST(MeshSdf, MeshCubeObstacleBlocksTheCellsOfTheAnalyticBox) {
  // Faces at 0.87 and 1.53 on each axis: no cell centre lies on the surface.
  const Vec3 centre{1.2, 1.2, 1.2}, half{0.33, 0.33, 0.33};
  Mesh m;
  add_box(m, {0, 0, 0}, half);
  const auto sdf = std::make_shared<const MeshSdf>(m.vertices, m.triangles, "cube");
  GridFluidOptions with_mesh = smoke_box(24, 0.1), with_box = with_mesh;
  with_mesh.obstacles.push_back({FluidRegion::mesh(sdf, centre), {0, 0, 0}});
  with_box.obstacles.push_back({FluidRegion::box(centre, half), {0, 0, 0}});
  GridFluid a(with_mesh), b(with_box);
  for (int s = 0; s < 6; ++s) {
    for (GridFluid* f : {&a, &b}) {
      FluidSource src;
      src.region = FluidRegion::sphere({1.2, 0.35, 1.2}, 0.25);
      src.density = 1;
      src.temperature = 2;
      src.velocity = Vec3{0, 1.5, 0};
      f->add_source(src);
      f->step(0.05);
    }
  }
  size_t solid = 0;
  double inside = 0;
  for (size_t c = 0; c < a.solid().size(); ++c) {
    ASSERT_EQ(a.solid()[c], b.solid()[c]) << c;
    if (a.solid()[c]) ++solid, inside = std::max(inside, a.density()[c]);
  }
  EXPECT_EQ(solid, 6u * 6u * 6u);  // cells 9…14 on each axis
  EXPECT_EQ(inside, 0.0);
  EXPECT_GT(a.smoke_mass(), 0);
  // The plume rose to the obstacle: smoke in the fluid cells right under it.
  double below = 0;
  for (int k = 9; k <= 14; ++k)
    for (int i = 9; i <= 14; ++i) below += a.density()[a.cell_index(i, 7, k)];
  EXPECT_GT(below, 0);
}

TEST(MeshSdf, NullMeshRegionIsRefusedByTheGridFluid) {
  GridFluidOptions o = smoke_box(8, 0.1);
  FluidRegion r;
  r.shape = FluidShape::Mesh;
  o.obstacles.push_back({r, {0, 0, 0}});
  EXPECT_THROW(GridFluid{o}, Error);
}

// ---- as SPH boundary particles ----

TEST(MeshSdf, SphMeshBoundaryFillsTheSolidToItsLayersDepth) {
  Mesh m;
  add_box(m, {0, 0, 0}, {0.2, 0.2, 0.2});
  const MeshSdf sdf(m.vertices, m.triangles);
  const Vec3 offset{1, 1, 0};
  // An 8 × 8 × 8 lattice of 5 cm over the 0.4 m cube; two layers leave out the 4 × 4 × 4 core.
  const std::vector<Vec3> shell = sph_mesh_boundary(sdf, offset, 0.05, 2, 3);
  EXPECT_EQ(shell.size(), 8u * 8 * 8 - 4 * 4 * 4);
  for (const Vec3& p : shell) {
    const double d = sdf.distance(p - offset);
    ASSERT_LE(d, 0);
    ASSERT_GT(d, -0.1);
  }
  // 2-D: the ring of the square cut at z = 0.
  const std::vector<Vec3> ring = sph_mesh_boundary(sdf, offset, 0.05, 2, 2);
  EXPECT_EQ(ring.size(), 8u * 8 - 4 * 4);
  for (const Vec3& p : ring) EXPECT_EQ(p.z, 0);
  EXPECT_TRUE(sph_mesh_boundary(sdf, {0, 0, 1}, 0.05, 2, 2).empty());  // the plane misses it
  EXPECT_THROW(sph_mesh_boundary(sdf, offset, 0, 2, 3), Error);
  EXPECT_THROW(sph_mesh_boundary(sdf, offset, 0.05, -1, 3), Error);
  EXPECT_EQ(sph_mesh_boundary(sdf, offset, 0.05, 0, 3).size(), 8u * 8 * 8);  // 0: all of it
}

TEST(MeshSdf, SphWaterFallingOnAMeshObstacleStaysOutOfIt) {
  const double dx = 0.01;
  SphOptions o;
  o.dimensions = 2;
  o.spacing = dx;
  o.domain_min = {-0.05, -0.05, 0};
  o.domain_max = {0.35, 0.5, 0};
  o.fluid_height = 0.1;
  o.artificial_viscosity = 0.2;
  o.threads = 1;
  SphFluid f(o);
  f.add_block({0.05, 0.2, 0}, {0.25, 0.3, 0});
  Mesh m;  // a 0.1 m square post (a box cut at z = 0) on the tank's floor
  add_box(m, {0, 0, 0}, {0.05, 0.05, 0.2});
  const MeshSdf sdf(m.vertices, m.triangles);
  const Vec3 offset{0.15, 0.05, 0};
  std::vector<Vec3> boundary = sph_box_boundary({0, 0, 0}, {0.3, 0.45, 0}, dx, 2, 2);
  const std::vector<Vec3> post = sph_mesh_boundary(sdf, offset, dx, 0, 2);
  ASSERT_EQ(post.size(), 100u);  // all of it: a hollow shell could let a fast drop in
  boundary.insert(boundary.end(), post.begin(), post.end());
  f.set_boundary_particles(boundary);
  double deepest = 0;
  size_t landed = 0;
  for (int s = 0; s < 24; ++s) {
    f.step(1.0 / 60);
    for (size_t i = 0; i < f.count(); ++i)
      deepest = std::min(deepest, sdf.distance(Vec3{f.px()[i], f.py()[i], 0} - offset));
  }
  for (size_t i = 0; i < f.count(); ++i) landed += f.py()[i] < 0.2;
  EXPECT_GT(landed, f.count() / 2) << "the water fell past the post's top";
  EXPECT_GT(deepest, -0.5 * dx) << "a particle went into the post";
}

}  // namespace
}  // namespace kinema
