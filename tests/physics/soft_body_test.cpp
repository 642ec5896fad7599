// Soft bodies: the box's tetrahedra fill it exactly with matching faces, a body at rest stays at
// rest, a dropped jelly keeps its volume with volume constraints (and loses it without), pins hold,
// colliders stop it, bad meshes are refused.
#include "kinema/physics/soft_body.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "kinema/core/error.h"

namespace kinema {
namespace {

constexpr double kFrame = 1.0 / 60;

TEST(SoftBody, BoxTetrahedraFillTheBoxWithMatchingFaces) {
  const TetMesh one = make_box_tets(1, 1, 1, {1, 1, 1});
  ASSERT_EQ(one.tets.size(), 5u);
  double total = 0;
  for (const auto& t : one.tets) {
    const double v = tet_volume(one.positions[t[0]], one.positions[t[1]], one.positions[t[2]],
                                one.positions[t[3]]);
    EXPECT_GT(v, 0);
    total += v;
  }
  EXPECT_NEAR(total, 1.0, 1e-15);
  // 3 × 2 × 2 cubes of a 0.6 × 0.4 × 0.2 box: 60 tetrahedra, 36 vertices, volume 0.048; the
  // surface is the box's: 2 triangles per cube face on the outside (2·(6 + 6 + 4) squares).
  const TetMesh box = make_box_tets(3, 2, 2, {0.6, 0.4, 0.2}, {1, 2, 3});
  EXPECT_EQ(box.tets.size(), 60u);
  EXPECT_EQ(box.positions.size(), 36u);
  validate_tet_mesh(box);
  double volume = 0;
  for (const auto& t : box.tets)
    volume += tet_volume(box.positions[t[0]], box.positions[t[1]], box.positions[t[2]],
                         box.positions[t[3]]);
  EXPECT_NEAR(volume, 0.048, 1e-15);
  const auto surface = tet_surface(box);
  EXPECT_EQ(surface.size(), 2u * 2u * (6u + 6u + 4u));  // interior faces all matched
  // Outward: each surface triangle's normal points away from the box's centre.
  const Vec3 centre{1.3, 2.2, 3.1};
  for (const auto& f : surface) {
    const Vec3 a = box.positions[f[0]], b = box.positions[f[1]], c = box.positions[f[2]];
    EXPECT_GT(dot(cross(b - a, c - a), (a + b + c) / 3.0 - centre), 0);
  }
}

TEST(SoftBody, StaysAtRestWithoutForces) {
  SoftBodyOptions o;
  o.gravity = {0, 0, 0};
  SoftBody body(make_box_tets(2, 2, 2, {0.2, 0.2, 0.2}), o);
  for (int i = 0; i < 60; ++i) body.step(kFrame);
  for (size_t i = 0; i < body.positions().size(); ++i)
    EXPECT_EQ(body.positions()[i], body.mesh().positions[i]);
  EXPECT_EQ(body.kinetic_energy(), 0);
}

/// A 20 cm jelly cube dropped from 0.3 m onto the ground, 2 s.
SoftBody dropped_jelly(double edge_compliance, bool volume_constraints) {
  SoftBodyOptions o;
  o.edge_compliance = edge_compliance;
  o.volume_constraints = volume_constraints;
  o.colliders = {Collider{ColliderShape::Plane, {0, 0, 0}, {}, {0, 1, 0}}};
  SoftBody body(make_box_tets(4, 4, 4, {0.2, 0.2, 0.2}, {0, 0.3, 0}), o);
  for (int i = 0; i < 120; ++i) body.step(kFrame);
  return body;
}

TEST(SoftBody, VolumeConstraintsKeepAJellysVolumeWhenItLands) {
  // Soft edges (10⁻² m/N): with volume constraints it wobbles on the ground within 1 % of its
  // volume; with edges alone the same jelly collapses flat.
  const SoftBody kept = dropped_jelly(1e-2, true);
  EXPECT_NEAR(kept.volume() / kept.rest_volume(), 1.0, 0.01);
  const SoftBody slumped = dropped_jelly(1e-2, false);
  EXPECT_LT(slumped.volume() / slumped.rest_volume(), 0.5);
  for (const SoftBody* b : {&kept, &slumped}) {
    const auto lowest = std::min_element(b->positions().begin(), b->positions().end(),
                                         [](const Vec3& p, const Vec3& q) { return p.y < q.y; });
    EXPECT_GE(lowest->y, -1e-12);
    EXPECT_LT(lowest->y, 0.01);  // it landed
  }
  EXPECT_LT(kept.kinetic_energy(), 0.1);  // still wobbling a little, not flying
}

TEST(SoftBody, PinnedVerticesHoldAHangingBody) {
  // A 10 × 10 × 40 cm column pinned at its four top corners hangs and stays finite.
  TetMesh column = make_box_tets(1, 1, 4, {0.1, 0.1, 0.4});
  for (Vec3& p : column.positions) p = Vec3{p.x, p.z, p.y};  // z up → y up
  for (auto& t : column.tets) std::swap(t[2], t[3]);         // the swap mirrored it
  SoftBodyOptions o;
  for (std::uint32_t i = 0; i < column.positions.size(); ++i)
    if (column.positions[i].y > 0.399) o.pinned.push_back(i);
  ASSERT_EQ(o.pinned.size(), 4u);
  SoftBody body(column, o);
  for (int i = 0; i < 120; ++i) body.step(kFrame);
  for (std::uint32_t p : o.pinned) EXPECT_EQ(body.positions()[p], column.positions[p]);
  EXPECT_LT(body.largest_stretch(), 0.05);
  EXPECT_GT(body.largest_stretch(), 0.0);  // it does stretch a little under its weight
}

TEST(SoftBody, RefusesBadMeshesAndOptions) {
  TetMesh m = make_box_tets(1, 1, 1, {1, 1, 1});
  auto refuses = [](const TetMesh& mesh, const SoftBodyOptions& o, const std::string& says) {
    try {
      SoftBody body(mesh, o);
      ADD_FAILURE() << "accepted; expected " << says;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  TetMesh inverted = m;
  std::swap(inverted.tets[2][0], inverted.tets[2][1]);
  refuses(inverted, {}, "tetrahedron 2 is inverted");
  TetMesh flat = m;
  flat.positions.push_back({5, 0, 0});
  flat.positions.push_back({6, 0, 0});
  flat.positions.push_back({7, 0, 0});
  flat.positions.push_back({8, 0, 0});
  flat.tets.push_back({8, 9, 10, 11});
  refuses(flat, {}, "tetrahedron 5 is flat");
  TetMesh out = m;
  out.tets[0][3] = 99;
  refuses(out, {}, "names vertex 99");
  TetMesh repeated = m;
  repeated.tets[1][1] = repeated.tets[1][0];
  refuses(repeated, {}, "tetrahedron 1 repeats a vertex");
  TetMesh nan = m;
  nan.positions[2].x = std::numeric_limits<double>::quiet_NaN();
  refuses(nan, {}, "vertex 2 is not finite");
  SoftBodyOptions o;
  o.substeps = 0;
  refuses(m, o, "substeps must be ≥ 1");
  o = {};
  o.pinned = {8};
  refuses(m, o, "pinned vertex 8 is past");
  o = {};
  o.edge_compliance = -1;
  refuses(m, o, "edge_compliance must be ≥ 0");
  EXPECT_THROW(make_box_tets(0, 1, 1, {1, 1, 1}), Error);
  SoftBody body(m, {});
  EXPECT_THROW(body.step(-kFrame), Error);
}

TEST(SoftBody, MovedPinsGoStraightToTheirTargetsAndCollidersCanChange) {
  SoftBodyOptions o;
  o.pinned = {0};
  o.gravity = {0, 0, 0};
  SoftBody body(make_box_tets(1, 1, 1, {0.1, 0.1, 0.1}), o);
  body.set_pin_target(0, {0.05, 0, 0});
  EXPECT_EQ(body.step(1.0 / 60), 0u);  // no colliders
  EXPECT_NEAR(length(body.positions()[0] - Vec3{0.05, 0, 0}), 0, 1e-15);
  body.step(1.0 / 60);  // the pin holds at its target
  EXPECT_NEAR(length(body.positions()[0] - Vec3{0.05, 0, 0}), 0, 1e-15);
  EXPECT_THROW(body.set_pin_target(1, {0, 0, 0}), Error);  // not pinned
  EXPECT_THROW(body.set_pin_target(0, {std::nan(""), 0, 0}), Error);
  Collider floor;
  floor.shape = ColliderShape::Plane;
  floor.a = {0, 0.05, 0};
  body.set_colliders({floor});
  EXPECT_GT(body.step(1.0 / 60), 0u);  // the lower free corners are pushed up onto it
  for (size_t v = 1; v < body.positions().size(); ++v)
    EXPECT_GE(body.positions()[v].y, 0.05 - 1e-12);
  Collider bad = floor;
  bad.normal = {0, 0, 0};
  EXPECT_THROW(body.set_colliders({bad}), Error);
}

}  // namespace
}  // namespace kinema
