// Skinning matrices S_j = W_j·B_j⁻¹ worked through on a 2D arm (XY plane, rotations about Z,
// homogeneous 3×3 embedded in Mat4): shoulder 30°, elbow 90°, the elbow-outside vertex, and why
// the blended matrix shrinks. Inputs and sources: docs/worked_examples.md, "Skinning matrices".
#include <gtest/gtest.h>

#include <cmath>

#include "kinema/math/math.h"
#include "kinema/skeleton/skeleton.h"

namespace kinema {
namespace {

Mat4 R(double degrees_about_z) {
  return Mat4::rotation(Quat::from_axis_angle({0, 0, 1}, radians(degrees_about_z)));
}
Mat4 T(double x, double y) { return Mat4::translation({x, y, 0}); }

TEST(SkinningMatrices, ElbowBendIsTranslateRotateTranslateBack) {
  // T(2,0)·R(90°)·T(−2,0) = [0 −1 2; 1 0 −2; 0 0 1]
  const Mat4 elbow = T(2, 0) * R(90) * T(-2, 0);
  EXPECT_NEAR(elbow(0, 0), 0, 1e-12);
  EXPECT_NEAR(elbow(0, 1), -1, 1e-12);
  EXPECT_NEAR(elbow(0, 3), 2, 1e-12);
  EXPECT_NEAR(elbow(1, 0), 1, 1e-12);
  EXPECT_NEAR(elbow(1, 1), 0, 1e-12);
  EXPECT_NEAR(elbow(1, 3), -2, 1e-12);
  // S1 = R(30°)·T(2,0)·R(90°)·T(−2,0) = [−0.5 −0.866 2.732; 0.866 −0.5 −0.732; 0 0 1]
  const Mat4 S1 = R(30) * elbow;
  EXPECT_NEAR(S1(0, 0), -0.5, 5e-4);
  EXPECT_NEAR(S1(0, 1), -0.866, 5e-4);
  EXPECT_NEAR(S1(0, 3), 2.732, 5e-4);
  EXPECT_NEAR(S1(1, 0), 0.866, 5e-4);
  EXPECT_NEAR(S1(1, 1), -0.5, 5e-4);
  EXPECT_NEAR(S1(1, 3), -0.732, 5e-4);
}

TEST(SkinningMatrices, WorldTimesInverseBindSkinsTheElbowVertex) {
  // B0 = I, B1 = T(2,0); W0 = R(30°), W1 = W0·T(2,0)·R(90°). S_j = W_j·B_j⁻¹.
  const Mat4 B[2] = {Mat4::identity(), T(2, 0)};
  const Mat4 W[2] = {R(30), R(30) * T(2, 0) * R(90)};
  Mat4 Binv[2];
  ASSERT_TRUE(inverse(B[0], Binv[0]));
  ASSERT_TRUE(inverse(B[1], Binv[1]));
  Mat4 S[2];
  ASSERT_TRUE(skinning_matrices(W, Binv, S));
  const Mat4 expected_S1 = R(30) * T(2, 0) * R(90) * T(-2, 0);
  for (int i = 0; i < 16; ++i) EXPECT_NEAR(S[1].m[i], expected_S1.m[i], 1e-12);

  // The elbow-outside vertex (2, −0.5), weights 0.5 / 0.5.
  const Vec3 v{2, -0.5, 0};
  const Vec3 s0v = S[0].transform_point(v), s1v = S[1].transform_point(v);
  EXPECT_NEAR(s0v.x, 1.982, 5e-4);
  EXPECT_NEAR(s0v.y, 0.567, 5e-4);
  EXPECT_NEAR(s1v.x, 2.165, 5e-4);
  EXPECT_NEAR(s1v.y, 1.250, 5e-4);
  const Vec3 blended = s0v * 0.5 + s1v * 0.5;
  EXPECT_NEAR(blended.x, 2.074, 5e-4);
  // The hand computation averages rounded intermediates, (0.567 + 1.250)/2 = 0.9085 → 0.909; the
  // exact value is 0.90849, so the printed digit is matched to ±1 in the last place.
  EXPECT_NEAR(blended.y, 0.909, 1e-3);

  // The elbow is at W0·(2,0) = (1.732, 1.0); the vertex sits 0.354 from it (the LBS thinning).
  const Vec3 elbow = W[0].transform_point({2, 0, 0});
  EXPECT_NEAR(elbow.x, 1.732, 5e-4);
  EXPECT_NEAR(elbow.y, 1.0, 5e-4);
  EXPECT_NEAR(distance(blended, elbow), 0.354, 5e-4);
}

TEST(SkinningMatrices, BindPoseGivesIdentity) {
  const Mat4 B[2] = {R(10) * T(0.3, 0), R(10) * T(0.3, 0) * T(2, 0) * R(-40)};
  Mat4 Binv[2];
  ASSERT_TRUE(inverse(B[0], Binv[0]));
  ASSERT_TRUE(inverse(B[1], Binv[1]));
  Mat4 S[2];
  ASSERT_TRUE(skinning_matrices(B, Binv, S));
  for (const Mat4& s : S)
    for (int i = 0; i < 16; ++i) EXPECT_NEAR(s.m[i], Mat4::identity().m[i], 1e-12);
}

TEST(SkinningMatrices, BlendedMatrixIsScaledRotation) {
  // M = 0.5·S0 + 0.5·S1 = [0.183 −0.683 1.366; 0.683 0.183 −0.366]; det of the 2×2 block = 0.5,
  // i.e. 0.707·R(75°).
  const Mat4 S0 = R(30), S1 = R(30) * T(2, 0) * R(90) * T(-2, 0);
  const Mat4 M = S0 * 0.5 + S1 * 0.5;
  EXPECT_NEAR(M(0, 0), 0.183, 5e-4);
  EXPECT_NEAR(M(0, 1), -0.683, 5e-4);
  EXPECT_NEAR(M(0, 3), 1.366, 5e-4);
  EXPECT_NEAR(M(1, 0), 0.683, 5e-4);
  EXPECT_NEAR(M(1, 1), 0.183, 5e-4);
  EXPECT_NEAR(M(1, 3), -0.366, 5e-4);
  const double det2 = M(0, 0) * M(1, 1) - M(0, 1) * M(1, 0);
  EXPECT_NEAR(det2, 0.5, 1e-3);
  const double scale = std::sqrt(det2);
  EXPECT_NEAR(scale, 0.707, 5e-4);
  EXPECT_NEAR(degrees(std::atan2(M(1, 0), M(0, 0))), 75.0, 1e-9);
  // Blending matrices first equals blending the skinned points.
  const Vec3 v{2, -0.5, 0};
  const Vec3 a = M.transform_point(v);
  const Vec3 b = S0.transform_point(v) * 0.5 + S1.transform_point(v) * 0.5;
  EXPECT_NEAR(distance(a, b), 0.0, 1e-12);
}

TEST(SkinningMatrices, AverageOfTwoRotationsIsShrunkRotation) {
  // ½(R(α) + R(β)) = cos((β−α)/2)·R((α+β)/2), checked over a grid including 90° (0.707) and
  // 180° (0).
  for (double alpha = -180; alpha <= 180; alpha += 15) {
    for (double beta = -180; beta <= 180; beta += 15) {
      const Mat4 avg = R(alpha) * 0.5 + R(beta) * 0.5;
      const Mat4 expected = R((alpha + beta) / 2) * std::cos(radians((beta - alpha) / 2));
      for (int r = 0; r < 2; ++r)
        for (int c = 0; c < 2; ++c) EXPECT_NEAR(avg(r, c), expected(r, c), 1e-12);
    }
  }
  EXPECT_NEAR(std::cos(radians(90.0 / 2)), 0.707, 5e-4);
  EXPECT_NEAR(std::cos(radians(180.0 / 2)), 0.0, 1e-12);
}

}  // namespace
}  // namespace kinema
