// Properties of kinema's small math types: identities, inverses, interpolation, Euler angles in
// all six orders, swing-twist, dual quaternions. Randomized with fixed seeds (deterministic).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "kinema/math/math.h"

namespace kinema {
namespace {

constexpr EulerOrder kAllOrders[] = {EulerOrder::XYZ, EulerOrder::XZY, EulerOrder::YXZ,
                                     EulerOrder::YZX, EulerOrder::ZXY, EulerOrder::ZYX};

Quat random_quat(std::mt19937& rng) {
  std::normal_distribution<double> n(0, 1);
  return normalize(Quat{n(rng), n(rng), n(rng), n(rng)});
}
Vec3 random_vec(std::mt19937& rng, double range = 5) {
  std::uniform_real_distribution<double> u(-range, range);
  return {u(rng), u(rng), u(rng)};
}
double quat_angle(const Quat& a, const Quat& b) { return angle_between(a, b); }

TEST(Math, QuatRotateMatchesMatrix) {
  std::mt19937 rng(1);
  for (int i = 0; i < 1000; ++i) {
    const Quat q = random_quat(rng);
    const Vec3 v = random_vec(rng);
    const Vec3 a = rotate(q, v);
    const Vec3 b = Mat4::rotation(q).transform_vector(v);
    EXPECT_NEAR(distance(a, b), 0, 1e-12);
    EXPECT_NEAR(length(a), length(v), 1e-12);  // rotations keep lengths
  }
}

TEST(Math, QuatCompositionIsRightToLeft) {
  const Quat a = Quat::from_axis_angle({0, 0, 1}, radians(90.0));
  const Quat b = Quat::from_axis_angle({1, 0, 0}, radians(90.0));
  // (a*b)·v = a·(b·v): b first.
  const Vec3 v{0, 1, 0};
  const Vec3 r = rotate(a * b, v);
  const Vec3 expected = rotate(a, rotate(b, v));
  EXPECT_NEAR(distance(r, expected), 0, 1e-12);
  EXPECT_NEAR(distance(r, Vec3{0, 0, 1}), 0, 1e-12);
}

TEST(Math, AxisAngleAndRotationVectorRoundTrip) {
  std::mt19937 rng(2);
  for (int i = 0; i < 500; ++i) {
    const Quat q = random_quat(rng);
    EXPECT_LT(quat_angle(from_rotation_vector(to_rotation_vector(q)), q), 1e-9);
  }
  Vec3 axis;
  double angle;
  to_axis_angle(Quat::identity(), axis, angle);
  EXPECT_EQ(angle, 0.0);
}

TEST(Math, NlerpAndSlerpTakeTheShortWay) {
  const Quat a = Quat::from_axis_angle({0, 1, 0}, radians(10.0));
  const Quat b = -Quat::from_axis_angle({0, 1, 0}, radians(50.0));  // same rotation, far hemisphere
  for (double t : {0.0, 0.25, 0.5, 0.75, 1.0}) {
    const Quat expected = Quat::from_axis_angle({0, 1, 0}, radians(10.0 + 40.0 * t));
    EXPECT_LT(degrees(quat_angle(slerp(a, b, t), expected)), 1e-9) << t;
    // nlerp is not constant-speed but stays on the short arc within a fraction of a degree here.
    EXPECT_LT(degrees(quat_angle(nlerp(a, b, t), expected)), 0.2) << t;
  }
}

TEST(Math, SlerpOneThirdFromWalkToRunHipIs30Degrees) {
  // A 2.5 m/s trot between a 1.5 m/s walk (hip 20°) and a 4.5 m/s run (hip 50°):
  // w = (2.5 − 1.5)/(4.5 − 1.5) = 1/3 → 30° (docs/worked_examples.md, "Pose blending").
  const double w = (2.5 - 1.5) / (4.5 - 1.5);
  EXPECT_NEAR(w, 1.0 / 3.0, 1e-15);
  const Quat walk = Quat::from_axis_angle({1, 0, 0}, radians(20.0));
  const Quat run = Quat::from_axis_angle({1, 0, 0}, radians(50.0));
  Vec3 axis;
  double angle;
  to_axis_angle(slerp(walk, run, w), axis, angle);
  EXPECT_NEAR(degrees(angle), 30.0, 1e-9);
}

TEST(Math, SlerpNearlyParallelIsStable) {
  const Quat a = Quat::from_axis_angle({0, 0, 1}, 1e-9);
  const Quat b = Quat::identity();
  const Quat r = slerp(a, b, 0.5);
  EXPECT_TRUE(is_finite(r));
  EXPECT_NEAR(length(r), 1.0, 1e-12);
}

TEST(Math, EulerAllSixOrdersRoundTrip) {
  std::mt19937 rng(3);
  for (EulerOrder order : kAllOrders) {
    for (int i = 0; i < 2000; ++i) {
      const Quat q = random_quat(rng);
      const Vec3 e = euler_from_quat(q, order);
      EXPECT_LT(quat_angle(quat_from_euler(e, order), q), 1e-9) << to_string(order);
      // Middle angle in [−90°, 90°].
      const int middle = euler_axes(order)[1];
      EXPECT_LE(std::abs(e[middle]), kPi / 2 + 1e-12);
    }
  }
}

TEST(Math, EulerAnglesWithinRangeComeBackExactly) {
  std::mt19937 rng(4);
  std::uniform_real_distribution<double> outer(-3.1, 3.1), middle(-1.5, 1.5);
  for (EulerOrder order : kAllOrders) {
    const auto axes = euler_axes(order);
    for (int i = 0; i < 500; ++i) {
      Vec3 e;
      e[axes[0]] = outer(rng);
      e[axes[1]] = middle(rng);
      e[axes[2]] = outer(rng);
      const Vec3 back = euler_from_quat(quat_from_euler(e, order), order);
      EXPECT_NEAR(distance(back, e), 0, 1e-9) << to_string(order);
    }
  }
}

TEST(Math, EulerOrderMeaningMatchesBvh) {
  // ZXY means R = Rz·Rx·Ry: with column vectors the Y rotation is applied first.
  const Vec3 e{radians(30.0), radians(40.0), radians(50.0)};
  const Quat q = quat_from_euler(e, EulerOrder::ZXY);
  const Quat expected = Quat::from_axis_angle({0, 0, 1}, e.z) *
                        Quat::from_axis_angle({1, 0, 0}, e.x) *
                        Quat::from_axis_angle({0, 1, 0}, e.y);
  EXPECT_LT(quat_angle(q, expected), 1e-12);
}

TEST(Math, EulerGimbalLockStillReproducesRotation) {
  for (EulerOrder order : kAllOrders) {
    Vec3 e{0.3, 0.2, -0.4};
    e[euler_axes(order)[1]] = kPi / 2;
    const Quat q = quat_from_euler(e, order);
    EXPECT_LT(quat_angle(quat_from_euler(euler_from_quat(q, order), order), q), 1e-6)
        << to_string(order);
  }
}

TEST(Math, EulerOrderNamesParse) {
  for (EulerOrder order : kAllOrders) EXPECT_EQ(euler_order_from_string(to_string(order)), order);
  EXPECT_EQ(euler_order_from_string("zxy"), EulerOrder::ZXY);
  EXPECT_FALSE(euler_order_from_string("XXY"));
  EXPECT_FALSE(euler_order_from_string("XY"));
}

TEST(Math, SwingTwistRecomposesAndSeparates) {
  std::mt19937 rng(5);
  const Vec3 axis = normalize(Vec3{0.2, 1.0, -0.3});
  for (int i = 0; i < 1000; ++i) {
    const Quat q = random_quat(rng);
    Quat swing, twist;
    swing_twist(q, axis, swing, twist);
    EXPECT_LT(quat_angle(swing * twist, q), 1e-9);
    // Twist rotates about the axis; swing's axis is perpendicular to it.
    EXPECT_NEAR(length(cross(twist.vec(), axis)), 0, 1e-9);
    EXPECT_NEAR(dot(swing.vec(), axis), 0, 1e-9);
  }
  // A pure twist has an identity swing.
  const Quat pure = Quat::from_axis_angle(axis, 1.2);
  Quat swing, twist;
  swing_twist(pure, axis, swing, twist);
  EXPECT_LT(quat_angle(swing, Quat::identity()), 1e-9);
  EXPECT_LT(quat_angle(twist, pure), 1e-9);
}

TEST(Math, MatrixInverseAndRigidInverse) {
  std::mt19937 rng(6);
  for (int i = 0; i < 500; ++i) {
    const Mat4 rigid = Mat4::trs(random_vec(rng), random_quat(rng), {1, 1, 1});
    Mat4 inv;
    ASSERT_TRUE(inverse(rigid, inv));
    const Mat4 fast = rigid_inverse(rigid);
    for (int k = 0; k < 16; ++k) EXPECT_NEAR(inv.m[k], fast.m[k], 1e-12);
    const Mat4 id = rigid * fast;
    for (int k = 0; k < 16; ++k) EXPECT_NEAR(id.m[k], Mat4::identity().m[k], 1e-12);

    const Mat4 scaled = Mat4::trs(random_vec(rng), random_quat(rng), {0.5, 2.0, 1.5});
    ASSERT_TRUE(inverse(scaled, inv));
    const Mat4 id2 = inv * scaled;
    for (int k = 0; k < 16; ++k) EXPECT_NEAR(id2.m[k], Mat4::identity().m[k], 1e-11);
  }
  Mat4 singular = Mat4::scaling({1, 0, 1}), out = Mat4::identity();
  EXPECT_FALSE(inverse(singular, out));
  EXPECT_EQ(out, Mat4::identity());  // untouched
}

TEST(Math, MatrixIsColumnMajor) {
  const Mat4 t = Mat4::translation({1, 2, 3});
  EXPECT_EQ(t.m[12], 1);
  EXPECT_EQ(t.m[13], 2);
  EXPECT_EQ(t.m[14], 3);
}

TEST(Math, TransformCompositionMatchesMatrices) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> s(0.5, 2.0);
  for (int i = 0; i < 500; ++i) {
    const double us = s(rng);
    const Transform a{random_vec(rng), random_quat(rng), {us, us, us}};
    const Transform b{random_vec(rng), random_quat(rng), {s(rng), s(rng), s(rng)}};
    const Mat4 ab = (a * b).to_matrix();
    const Mat4 expected = a.to_matrix() * b.to_matrix();
    for (int k = 0; k < 16; ++k) EXPECT_NEAR(ab.m[k], expected.m[k], 1e-10);
    const Transform back = Transform::from_matrix(b.to_matrix());
    EXPECT_NEAR(distance(back.translation, b.translation), 0, 1e-12);
    EXPECT_NEAR(distance(back.scale, b.scale), 0, 1e-12);
    EXPECT_LT(quat_angle(back.rotation, b.rotation), 1e-9);
    const Transform id = a * inverse(a);
    EXPECT_NEAR(length(id.translation), 0, 1e-10);
    EXPECT_LT(quat_angle(id.rotation, Quat::identity()), 1e-9);
    const Vec3 p = random_vec(rng);
    EXPECT_NEAR(
        distance(rigid_inverse(Transform{a.translation, a.rotation, {1, 1, 1}})
                     .transform_point(
                         Transform{a.translation, a.rotation, {1, 1, 1}}.transform_point(p)),
                 p),
        0, 1e-10);
  }
}

TEST(Math, MirrorMatrixDecomposesIntoNegativeScale) {
  const Transform mirrored{{1, 2, 3}, Quat::from_axis_angle({0, 1, 0}, 0.7), {-1, 1, 1}};
  const Transform back = Transform::from_matrix(mirrored.to_matrix());
  const Mat4 a = back.to_matrix(), b = mirrored.to_matrix();
  for (int k = 0; k < 16; ++k) EXPECT_NEAR(a.m[k], b.m[k], 1e-12);
}

TEST(Math, DualQuaternionRoundTripAndComposition) {
  std::mt19937 rng(8);
  for (int i = 0; i < 500; ++i) {
    const Quat r1 = random_quat(rng), r2 = random_quat(rng);
    const Vec3 t1 = random_vec(rng), t2 = random_vec(rng);
    const DualQuat a = DualQuat::from_rigid(r1, t1), b = DualQuat::from_rigid(r2, t2);
    EXPECT_NEAR(distance(a.translation(), t1), 0, 1e-12);
    const Vec3 p = random_vec(rng);
    // (a*b) applies b then a, like matrices.
    const Vec3 via_dq = (a * b).transform_point(p);
    const Vec3 via_mat =
        (Mat4::trs(t1, r1, {1, 1, 1}) * Mat4::trs(t2, r2, {1, 1, 1})).transform_point(p);
    EXPECT_NEAR(distance(via_dq, via_mat), 0, 1e-10);
    // Scaling a dual quaternion and normalizing gives it back.
    const DualQuat n = normalize(a * 3.0);
    EXPECT_NEAR(distance(n.transform_point(p), a.transform_point(p)), 0, 1e-10);
  }
}

// Dual-quaternion linear blending worked by hand (docs/worked_examples.md, "Dual-quaternion
// skinning"). Bone 1 turns 90° about z through the elbow c = (2, 0, 0): t = c − R·c = (2, −2, 0)
// and the dual part is ½·t·r = (0, −1.4142, 0, 0) (x, y, z, w). Blended 0.5 / 0.5 with the
// identity bone: b_r = (0, 0, 0.3536, 0.8536), |b_r| = 0.9239, c_r = (0, 0, sin 22.5°, cos 22.5°),
// c_d = (0, −0.7654, 0, 0), translation (0.5858, −1.4142, 0) = c − R(45°)·c: a 45° turn about
// the elbow, which takes (2, −0.5) to (2.3536, −0.3536).
TEST(Math, DualQuaternionBlendOfBentElbowTurnsHalfAboutTheElbow) {
  // Dual numbers first: ε² = 0, so (2 + 3ε)(4 + 5ε) = 8 + 22ε.
  const DualQuat a{{0, 0, 0, 2}, {0, 0, 0, 3}}, b{{0, 0, 0, 4}, {0, 0, 0, 5}};
  EXPECT_EQ((a * b).real.w, 8.0);
  EXPECT_EQ((a * b).dual.w, 22.0);

  const Vec3 elbow{2, 0, 0};
  const Quat r = Quat::from_axis_angle({0, 0, 1}, radians(90.0));
  const DualQuat bone1 = DualQuat::from_rigid(r, elbow - rotate(r, elbow));
  EXPECT_NEAR(distance(bone1.translation(), Vec3{2, -2, 0}), 0, 1e-12);
  EXPECT_NEAR(bone1.dual.x, 0, 1e-12);
  EXPECT_NEAR(bone1.dual.y, -1.4142, 5e-5);
  EXPECT_NEAR(bone1.dual.z, 0, 1e-12);
  EXPECT_NEAR(bone1.dual.w, 0, 1e-12);
  const DualQuat blended = DualQuat::identity() * 0.5 + bone1 * 0.5;
  EXPECT_NEAR(blended.real.z, 0.3536, 5e-5);
  EXPECT_NEAR(blended.real.w, 0.8536, 5e-5);
  EXPECT_NEAR(length(blended.real), 0.9239, 5e-5);
  const DualQuat c = normalize(blended);
  EXPECT_NEAR(c.real.z, std::sin(radians(22.5)), 1e-12);
  EXPECT_NEAR(c.real.w, std::cos(radians(22.5)), 1e-12);
  EXPECT_NEAR(c.dual.y, -0.7654, 5e-5);
  EXPECT_NEAR(c.translation().x, 0.5858, 5e-5);
  EXPECT_NEAR(c.translation().y, -1.4142, 5e-5);
  const Quat r45 = Quat::from_axis_angle({0, 0, 1}, radians(45.0));
  EXPECT_NEAR(distance(c.translation(), elbow - rotate(r45, elbow)), 0, 1e-12);
  const Vec3 v = c.transform_point({2, -0.5, 0});
  EXPECT_NEAR(v.x, 2.3536, 5e-5);
  EXPECT_NEAR(v.y, -0.3536, 5e-5);
  EXPECT_NEAR(distance(v, elbow), 0.5, 1e-12);
}

TEST(Math, FromToRotation) {
  std::mt19937 rng(9);
  for (int i = 0; i < 500; ++i) {
    const Vec3 a = normalize(random_vec(rng)), b = normalize(random_vec(rng));
    EXPECT_NEAR(distance(rotate(from_to(a, b), a), b), 0, 1e-9);
  }
  const Vec3 x{1, 0, 0};
  EXPECT_NEAR(distance(rotate(from_to(x, -x), x), -x), 0, 1e-9);  // opposite vectors
}

TEST(Math, NormalizeRejectsDegenerateInput) {
  EXPECT_EQ(normalize(Vec3{0, 0, 0}), Vec3::unit_x());
  EXPECT_EQ(normalize(Quat{0, 0, 0, 0}), Quat::identity());
  EXPECT_EQ(normalize(Vec3{NAN, 0, 0}), Vec3::unit_x());
  EXPECT_FALSE(is_finite(Vec3{INFINITY, 0, 0}));
}

}  // namespace
}  // namespace kinema
