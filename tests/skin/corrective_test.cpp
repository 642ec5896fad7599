// Corrective shapes: angle drivers, bind-space deltas before skinning, and the inversion of a
// sculpted posed delta (worked elbow: docs/worked_examples.md, "Corrective shapes, pose-space
// deformation, delta mush").
#include "kinema/skin/corrective.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <random>
#include <vector>

#include "common/alloc_counter.h"
#include "kinema/core/error.h"

namespace kinema {
namespace {

constexpr float kDeg = std::numbers::pi_v<float> / 180.0f;

Quatf rot(const Vec3f& axis, float degrees) { return Quatf::from_axis_angle(axis, degrees * kDeg); }

Mat4f rot_z(float degrees) { return Mat4f::rotation(rot({0, 0, 1}, degrees)); }

// The worked two-bone arm: bone 0 from the origin, bone 1 (the elbow) from (2, 0).
std::vector<Affine3x4f> arm_palette(float elbow_deg) {
  const Mat4f w0 = Mat4f::identity();
  const Mat4f w1 = w0 * Mat4f::translation({2, 0, 0}) * rot_z(elbow_deg);
  const std::vector<Mat4f> model{w0, w1};
  const std::vector<Mat4f> inverse_bind{Mat4f::identity(), Mat4f::translation({-2, 0, 0})};
  const std::vector<int> skin_joints{0, 1};
  std::vector<Affine3x4f> palette(2);
  EXPECT_TRUE(skinning_palette(model, skin_joints, inverse_bind, palette));
  return palette;
}

struct Arm {
  std::vector<Vec3f> positions{{2, -0.5f, 0}};
  std::vector<uint16_t> joints{0, 1};
  std::vector<float> weights{0.5f, 0.5f};
  SkinMeshView view() const { return {positions, {}, {}, 2, joints, weights}; }
};

TEST(Corrective, InvertedSculptGivesBindSpaceDelta) {
  const auto palette = arm_palette(90);
  Arm arm;
  // The blended linear part is A = [0.5 −0.5; 0.5 0.5].
  EXPECT_NEAR(0.5f * (palette[0](0, 0) + palette[1](0, 0)), 0.5f, 1e-6f);
  EXPECT_NEAR(0.5f * (palette[0](0, 1) + palette[1](0, 1)), -0.5f, 1e-6f);
  EXPECT_NEAR(0.5f * (palette[0](1, 0) + palette[1](1, 0)), 0.5f, 1e-6f);
  EXPECT_NEAR(0.5f * (palette[0](1, 1) + palette[1](1, 1)), 0.5f, 1e-6f);
  // The sculpt is where DQS puts the vertex: (2 + 0.5·cos 45°, −0.5·sin 45°) = (2.3536, −0.3536).
  const float r = 0.5f * std::sqrt(0.5f);
  const std::vector<Vec3f> sculpt{{2 + r, -r, 0}};
  // The printed, rounded sculpt gives the printed delta to the rounding (4 digits).
  EXPECT_NEAR(invert_posed_sculpt(arm.view(), palette, std::vector<Vec3f>{{2.3536f, -0.3536f, 0}})
                  .deltas[0]
                  .y,
              -0.2071f, 2e-4f);
  const CorrectiveInversion inv = invert_posed_sculpt(arm.view(), palette, sculpt);
  ASSERT_EQ(inv.deltas.size(), 1u);
  EXPECT_NEAR(inv.deltas[0].x, 0.0f, 1e-4f);
  EXPECT_NEAR(inv.deltas[0].y, -0.2071f, 1e-4f);
  EXPECT_NEAR(inv.deltas[0].z, 0.0f, 1e-6f);
  EXPECT_TRUE(inv.singular_vertices.empty());
  ASSERT_EQ(inv.sparse_vertices, std::vector<uint32_t>{0});

  // Round trip: bind + delta, skinned with LBS, lands on the sculpt.
  std::vector<Vec3f> corrected(1), skinned(1);
  const std::vector<CorrectiveShape> shapes{{"elbow",
                                             1,
                                             DriverAngle::Hinge,
                                             {0, 0, 1},
                                             30 * kDeg,
                                             90 * kDeg,
                                             inv.sparse_vertices,
                                             inv.sparse_deltas}};
  const std::vector<float> full{1.0f};
  ASSERT_TRUE(apply_correctives(arm.positions, shapes, full, corrected));
  const SkinMeshView view{corrected, {}, {}, 2, arm.joints, arm.weights};
  ASSERT_TRUE(skin_lbs(view, palette, {skinned, {}, {}}));
  EXPECT_NEAR(skinned[0].x, 2.3536f, 1e-4f);
  EXPECT_NEAR(skinned[0].y, -0.3536f, 1e-4f);
  // Radius 0.5 around the elbow, as DQS gives.
  EXPECT_NEAR(distance(skinned[0], Vec3f{2, 0, 0}), 0.5f, 1e-4f);
}

TEST(Corrective, DriverRampsFrom30To90Degrees) {
  const float t0 = 30 * kDeg, t1 = 90 * kDeg;
  EXPECT_FLOAT_EQ(driver_ramp(60 * kDeg, t0, t1), 0.5f);
  EXPECT_EQ(driver_ramp(20 * kDeg, t0, t1), 0.0f);
  EXPECT_EQ(driver_ramp(30 * kDeg, t0, t1), 0.0f);
  EXPECT_FLOAT_EQ(driver_ramp(90 * kDeg, t0, t1), 1.0f);
  EXPECT_EQ(driver_ramp(130 * kDeg, t0, t1), 1.0f);
  // A falling ramp, and steps/NaN give 0.
  EXPECT_FLOAT_EQ(driver_ramp(60 * kDeg, t1, t0), 0.5f);
  EXPECT_EQ(driver_ramp(20 * kDeg, t1, t0), 1.0f);
  EXPECT_EQ(driver_ramp(1, 1, 1), 0.0f);
  EXPECT_EQ(driver_ramp(std::nanf(""), t0, t1), 0.0f);

  // Through the elbow's local rotation: weights 0, 0.5, 1 at 20°, 60°, 90°.
  const std::vector<CorrectiveShape> shapes{
      {"elbow", 1, DriverAngle::Hinge, {0, 0, 1}, t0, t1, {}, {Vec3f{0, -0.2071f, 0}}}};
  for (const auto& [deg, want] :
       {std::pair{20.0f, 0.0f}, std::pair{60.0f, 0.5f}, std::pair{90.0f, 1.0f}}) {
    const std::vector<Quatf> local{Quatf::identity(), rot({0, 0, 1}, deg)};
    std::vector<float> w(1);
    ASSERT_TRUE(corrective_weights(shapes, local, w));
    EXPECT_NEAR(w[0], want, 1e-5f) << deg;
  }
}

TEST(Corrective, CorrectedArmAt60DegreesMovesHalfTheDelta) {
  // The full path: weight from the joint, deltas in bind space, then LBS.
  const std::vector<CorrectiveShape> shapes{
      {"elbow", 1, DriverAngle::Hinge, {0, 0, 1}, 30 * kDeg, 90 * kDeg, {}, {{0, -0.2071f, 0}}}};
  Arm arm;
  const std::vector<Quatf> local{Quatf::identity(), rot({0, 0, 1}, 60)};
  std::vector<float> w(1);
  std::vector<Vec3f> corrected(1), skinned(1), plain(1);
  ASSERT_TRUE(corrective_weights(shapes, local, w));
  ASSERT_TRUE(apply_correctives(arm.positions, shapes, w, corrected));
  EXPECT_NEAR(corrected[0].y, -0.5f - 0.5f * 0.2071f, 1e-6f);
  const auto palette = arm_palette(60);
  ASSERT_TRUE(
      skin_lbs({corrected, {}, {}, 2, arm.joints, arm.weights}, palette, {skinned, {}, {}}));
  ASSERT_TRUE(skin_lbs(arm.view(), palette, {plain, {}, {}}));
  // The half delta pushes the vertex further from the elbow than plain LBS does.
  EXPECT_GT(distance(skinned[0], Vec3f{2, 0, 0}), distance(plain[0], Vec3f{2, 0, 0}) + 0.05f);
}

TEST(Corrective, DriverAngleKinds) {
  const Vec3f z{0, 0, 1}, x{1, 0, 0};
  // Hinge: the signed angle about the axis, q and −q alike.
  EXPECT_NEAR(driver_angle(rot(z, 75), DriverAngle::Hinge, z), 75 * kDeg, 1e-5f);
  EXPECT_NEAR(driver_angle(rot(z, -40), DriverAngle::Hinge, z), -40 * kDeg, 1e-5f);
  EXPECT_NEAR(driver_angle(rot(z, 75) * -1.0f, DriverAngle::Hinge, z), 75 * kDeg, 1e-5f);
  EXPECT_NEAR(driver_angle(rot(z, 200), DriverAngle::Hinge, z), -160 * kDeg, 1e-4f);
  // Swing about x ignores the twist about x; hinge about x reads the twist.
  const Quatf swing_then_twist = rot(z, 50) * rot(x, 70);
  EXPECT_NEAR(driver_angle(swing_then_twist, DriverAngle::Swing, x), 50 * kDeg, 1e-4f);
  EXPECT_NEAR(driver_angle(swing_then_twist, DriverAngle::Hinge, x), 70 * kDeg, 1e-4f);
  EXPECT_NEAR(driver_angle(rot(x, 70), DriverAngle::Swing, x), 0.0f, 1e-3f);
  // Total: the whole rotation's angle, whatever the axis.
  EXPECT_NEAR(driver_angle(rot(normalize(Vec3f{1, 2, 3}), 123), DriverAngle::Total, x), 123 * kDeg,
              1e-4f);
  EXPECT_EQ(driver_angle(Quatf{0, 0, 0, 0}, DriverAngle::Hinge, z), 0.0f);
  EXPECT_EQ(driver_angle(Quatf{std::nanf(""), 0, 0, 1}, DriverAngle::Total, z), 0.0f);
}

TEST(Corrective, SparseAndDenseDeltasAgree) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  const size_t n = 50;
  std::vector<Vec3f> bind(n);
  for (auto& p : bind) p = {u(rng), u(rng), u(rng)};
  CorrectiveShape sparse{"a", 0, DriverAngle::Total, {1, 0, 0}, 0, 1, {3, 17, 40}, {}};
  for (size_t i = 0; i < 3; ++i) sparse.deltas.push_back({u(rng), u(rng), u(rng)});
  CorrectiveShape dense = sparse;
  dense.vertices.clear();
  dense.deltas.assign(n, Vec3f{});
  for (size_t i = 0; i < 3; ++i) dense.deltas[sparse.vertices[i]] = sparse.deltas[i];
  const std::vector<CorrectiveShape> a{sparse, dense};
  validate_correctives(a, n, 1);
  std::vector<Vec3f> o1(n), o2(n), in_place = bind;
  ASSERT_TRUE(apply_correctives(bind, a, std::vector<float>{0.3f, 0.0f}, o1));
  ASSERT_TRUE(apply_correctives(bind, a, std::vector<float>{0.0f, 0.3f}, o2));
  ASSERT_TRUE(apply_correctives(in_place, a, std::vector<float>{0.3f, 0.0f}, in_place));
  for (size_t v = 0; v < n; ++v) {
    EXPECT_EQ(o1[v], o2[v]);
    EXPECT_EQ(o1[v], in_place[v]);
  }
  EXPECT_NE(o1[17], bind[17]);
  EXPECT_EQ(o1[16], bind[16]);
}

TEST(Corrective, RandomSculptsRoundTripThroughLbs) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1, 1), w01(0.05f, 1);
  const size_t n = 200, joints = 6;
  std::vector<Vec3f> bind(n), sculpt(n);
  std::vector<uint16_t> idx(4 * n);
  std::vector<float> wts(4 * n);
  for (size_t v = 0; v < n; ++v) {
    bind[v] = {u(rng), u(rng), u(rng)};
    float sum = 0;
    for (size_t k = 0; k < 4; ++k) {
      idx[4 * v + k] = uint16_t(rng() % joints);
      sum += wts[4 * v + k] = w01(rng);
    }
    for (size_t k = 0; k < 4; ++k) wts[4 * v + k] /= sum;
  }
  std::vector<Affine3x4f> palette(joints);
  for (auto& s : palette) {
    const Mat4f m = Mat4f::translation({u(rng), u(rng), u(rng)}) *
                    Mat4f::rotation(rot(normalize(Vec3f{u(rng), u(rng), u(rng)}), 60 * u(rng)));
    s = to_affine3x4(m);
  }
  const SkinMeshView mesh{bind, {}, {}, 4, idx, wts};
  std::vector<Vec3f> skinned(n), back(n), corrected(n);
  ASSERT_TRUE(skin_lbs(mesh, palette, {skinned, {}, {}}));
  for (size_t v = 0; v < n; ++v) sculpt[v] = skinned[v] + Vec3f{u(rng), u(rng), u(rng)} * 0.1f;
  const CorrectiveInversion inv = invert_posed_sculpt(mesh, palette, sculpt);
  EXPECT_LT(inv.max_residual, 1e-9);
  const std::vector<CorrectiveShape> shapes{
      {"s", 0, DriverAngle::Total, {1, 0, 0}, 0, 1, {}, inv.deltas}};
  ASSERT_TRUE(apply_correctives(bind, shapes, std::vector<float>{1.0f}, corrected));
  ASSERT_TRUE(skin_lbs({corrected, {}, {}, 4, idx, wts}, palette, {back, {}, {}}));
  for (size_t v = 0; v < n; ++v) {
    if (std::find(inv.singular_vertices.begin(), inv.singular_vertices.end(), v) ==
        inv.singular_vertices.end()) {
      EXPECT_LT(distance(back[v], sculpt[v]), 2e-4f) << v;
    }
  }
}

TEST(Corrective, SingularBlendIsSkippedOrThrown) {
  // An elbow folded 180° with 0.5/0.5 weights: A = ½(I + R_z(180°)) = diag(0, 0, 1).
  const auto palette = arm_palette(180);
  Arm arm;
  arm.positions.push_back({0.5f, 0.1f, 0});  // rigid on bone 0: solvable
  arm.joints.insert(arm.joints.end(), {0, 1});
  arm.weights.insert(arm.weights.end(), {1.0f, 0.0f});
  const std::vector<Vec3f> sculpt{{2, -0.2f, 0}, {0.5f, 0.3f, 0}};
  const CorrectiveInversion inv = invert_posed_sculpt(arm.view(), palette, sculpt);
  ASSERT_EQ(inv.singular_vertices, std::vector<uint32_t>{0});
  EXPECT_EQ(inv.deltas[0], Vec3f{});
  EXPECT_NEAR(inv.deltas[1].y, 0.2f, 1e-6f);
  CorrectiveInversionOptions strict;
  strict.throw_on_singular = true;
  try {
    invert_posed_sculpt(arm.view(), palette, sculpt, strict);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.place(), "vertex 0");
    EXPECT_NE(e.reason().find("singular"), std::string::npos);
  }
}

TEST(Corrective, BadInputIsRejected) {
  const auto palette = arm_palette(90);
  Arm arm;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_THROW(invert_posed_sculpt(arm.view(), palette, std::vector<Vec3f>{}), Error);
  EXPECT_THROW(invert_posed_sculpt(arm.view(), palette, std::vector<Vec3f>{{nan, 0, 0}}), Error);
  Arm bad = arm;
  bad.positions[0].x = nan;
  EXPECT_THROW(invert_posed_sculpt(bad.view(), palette, std::vector<Vec3f>{{2, 0, 0}}), Error);
  EXPECT_THROW(
      invert_posed_sculpt(arm.view(), std::span(palette).first(1), std::vector<Vec3f>{{2, 0, 0}}),
      Error);  // joint 1 outside the palette

  const CorrectiveShape good{"g", 1, DriverAngle::Hinge, {0, 0, 1}, 0, 1, {}, {{0, 1, 0}}};
  validate_correctives(std::vector{good}, 1, 2);
  auto expect_invalid = [&](CorrectiveShape s, const char* what) {
    try {
      validate_correctives(std::vector{s}, 1, 2, "rig.json");
      ADD_FAILURE() << "accepted: " << what;
    } catch (const Error& e) {
      EXPECT_EQ(e.file(), "rig.json");
      EXPECT_EQ(e.place(), "corrective 0 \"g\"") << what;
    }
  };
  CorrectiveShape s = good;
  s.joint = 2;
  expect_invalid(s, "joint");
  s = good;
  s.axis = {0, 0, 2};
  expect_invalid(s, "axis");
  s = good;
  s.theta1 = s.theta0;
  expect_invalid(s, "step");
  s = good;
  s.theta0 = nan;
  expect_invalid(s, "nan angle");
  s = good;
  s.deltas.push_back({});
  expect_invalid(s, "dense count");
  s = good;
  s.vertices = {1};
  expect_invalid(s, "sparse index");
  s = good;
  s.deltas[0].y = nan;
  expect_invalid(s, "nan delta");

  // Runtime: false, nothing written.
  const std::vector<CorrectiveShape> shapes{good};
  std::vector<float> w(2, -1.0f);
  const std::vector<Quatf> one_joint{Quatf::identity()};
  EXPECT_FALSE(corrective_weights(shapes, one_joint, std::span(w).first(1)));
  EXPECT_FALSE(corrective_weights(shapes, std::vector<Quatf>(2), w));
  EXPECT_EQ(w[0], -1.0f);
  std::vector<Vec3f> out(1, Vec3f{9, 9, 9});
  EXPECT_FALSE(apply_correctives(arm.positions, shapes, std::vector<float>{}, out));
  EXPECT_FALSE(apply_correctives(arm.positions, shapes, std::vector<float>{nan}, out));
  EXPECT_FALSE(apply_correctives(arm.positions, shapes, std::vector<float>{1}, std::span<Vec3f>{}));
  CorrectiveShape far = good;
  far.vertices = {5};
  EXPECT_FALSE(apply_correctives(arm.positions, std::vector{far}, std::vector<float>{1}, out));
  EXPECT_EQ(out[0], (Vec3f{9, 9, 9}));
}

TEST(Corrective, RuntimePathDoesNotAllocate) {
  const size_t n = 1000;
  std::vector<Vec3f> bind(n, Vec3f{1, 2, 3}), out(n);
  std::vector<CorrectiveShape> shapes{
      {"a", 0, DriverAngle::Hinge, {0, 0, 1}, 0, 1, {}, std::vector<Vec3f>(n, {0, 0.1f, 0})},
      {"b", 1, DriverAngle::Swing, {1, 0, 0}, 0, 1, {1, 5, 9}, std::vector<Vec3f>(3, {1, 0, 0})}};
  const std::vector<Quatf> local{rot({0, 0, 1}, 30), rot({0, 1, 0}, 20)};
  std::vector<float> w(2);
  test::start_counting_allocations();
  const bool ok = corrective_weights(shapes, local, w) && apply_correctives(bind, shapes, w, out);
  EXPECT_EQ(test::stop_counting_allocations(), 0);
  ASSERT_TRUE(ok);
  EXPECT_NEAR(out[5].x, 1 + w[1], 1e-6f);
  EXPECT_NEAR(out[0].y, 2 + 0.1f * w[0], 1e-6f);
  EXPECT_GT(w[0], 0.5f);
  EXPECT_GT(w[1], 0.3f);
}

}  // namespace
}  // namespace kinema
