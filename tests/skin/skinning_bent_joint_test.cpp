// LBS and DQS of one vertex near a bent joint, worked by hand: the 2D arm (shoulder 30°, elbow
// 90°) and the knee of a leg put on a step (docs/worked_examples.md, "Skinning matrices" and
// "Dual-quaternion skinning").
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <vector>

#include "kinema/skin/skinning.h"

namespace kinema {
namespace {

constexpr float kDeg = std::numbers::pi_v<float> / 180.0f;

Mat4f rot_z(float degrees) {
  const float a = degrees * kDeg;
  return Mat4f::rotation(Quatf{0, 0, std::sin(a / 2), std::cos(a / 2)});
}

// Two bones: bone 0 from the origin, bone 1 from (2, 0); vertex (2, −0.5) weighted 0.5/0.5.
struct Arm {
  std::vector<Vec3f> positions{{2, -0.5f, 0}};
  std::vector<uint16_t> joints{0, 1};
  std::vector<float> weights{0.5f, 0.5f};
  SkinMeshView view() const { return {positions, {}, {}, 2, joints, weights}; }
};

std::vector<Affine3x4f> arm_palette(float shoulder_deg, float elbow_deg) {
  const Mat4f w0 = rot_z(shoulder_deg);
  const Mat4f w1 = w0 * Mat4f::translation({2, 0, 0}) * rot_z(elbow_deg);
  const std::vector<Mat4f> model{w0, w1};
  const std::vector<Mat4f> inverse_bind{Mat4f::identity(), Mat4f::translation({-2, 0, 0})};
  const std::vector<int> skin_joints{0, 1};
  std::vector<Affine3x4f> palette(2);
  EXPECT_TRUE(skinning_palette(model, skin_joints, inverse_bind, palette));
  return palette;
}

TEST(BentJointSkinning, PaletteAndLbsVertexOfBentArm) {
  const auto palette = arm_palette(30, 90);
  // S1 = [−0.5 −0.866 2.732; 0.866 −0.5 −0.732].
  EXPECT_NEAR(palette[1](0, 0), -0.5f, 1e-3f);
  EXPECT_NEAR(palette[1](0, 1), -0.866f, 1e-3f);
  EXPECT_NEAR(palette[1](0, 3), 2.732f, 1e-3f);
  EXPECT_NEAR(palette[1](1, 0), 0.866f, 1e-3f);
  EXPECT_NEAR(palette[1](1, 3), -0.732f, 1e-3f);
  Arm arm;
  std::vector<Vec3f> out(1);
  ASSERT_TRUE(skin_lbs(arm.view(), palette, {out, {}, {}}));
  EXPECT_NEAR(out[0].x, 2.074f, 5e-4f);
  EXPECT_NEAR(out[0].y, 0.909f, 1e-3f);  // 0.5·(0.567 + 1.250) = 0.9085
  EXPECT_NEAR(distance(out[0], Vec3f{1.732f, 1.0f, 0}), 0.354f, 5e-4f);
}

TEST(BentJointSkinning, DqsKeepsRadiusAtRightAngleBend) {
  const auto palette = arm_palette(0, 90);
  std::vector<DualQuatf> dq(2);
  std::vector<Affine3x4f> prescale(2);
  bool scaled = true;
  ASSERT_TRUE(dual_quat_palette(palette, dq, prescale, &scaled));
  EXPECT_FALSE(scaled);
  Arm arm;
  std::vector<Vec3f> lbs(1), dqs(1);
  ASSERT_TRUE(skin_lbs(arm.view(), palette, {lbs, {}, {}}));
  ASSERT_TRUE(skin_dqs(arm.view(), {dq, {}}, {dqs, {}, {}}));
  EXPECT_NEAR(lbs[0].x, 2.25f, 1e-4f);
  EXPECT_NEAR(lbs[0].y, -0.25f, 1e-4f);
  EXPECT_NEAR(dqs[0].x, 2.3536f, 1e-4f);
  EXPECT_NEAR(dqs[0].y, -0.3536f, 1e-4f);
  EXPECT_NEAR(distance(dqs[0], Vec3f{2, 0, 0}), 0.5f, 1e-4f);
  EXPECT_NEAR(distance(lbs[0], Vec3f{2, 0, 0}), 0.3536f, 1e-4f);
}

// A leg (thigh 4, shin 4) from the hip H = (0, 7.5) hanging to the knee K0 = (0, 3.5) is put on a
// step: the knee moves to K = (1 + 3√0.6, 4.5 + √0.6), the thigh turns ≈ 56.2° about H and the
// shin ≈ −19.3° (the 75.5° knee bend). The vertex in front of the knee, (0.5, 3.5), weighted
// 0.5 / 0.5: DQS turns it about K0 by the mean angle and carries K0 to K, ≈ (3.80, 5.43), 0.5
// from the knee; LBS takes the midpoint of the two rigid copies, ≈ (3.70, 5.40), 0.5·cos(75.5°/2)
// = 0.395 from the knee.
TEST(BentJointSkinning, KneeOnAStepKeepsRadiusWithDqsAndThinsWithLbs) {
  const Vec3f hip{0, 7.5f, 0}, bind_knee{0, 3.5f, 0};
  const Vec3f knee{1 + 3 * std::sqrt(0.6f), 4.5f + std::sqrt(0.6f), 0}, foot{2, 1.5f, 0};
  const auto turn_from_down = [](Vec3f d) { return std::atan2(d.x, -d.y) / kDeg; };
  const float thigh = turn_from_down(knee - hip), shin = turn_from_down(foot - knee);
  EXPECT_NEAR(thigh, 56.2f, 0.05f);
  EXPECT_NEAR(shin, -19.3f, 0.05f);
  const Mat4f s0 = Mat4f::translation(hip) * rot_z(thigh) * Mat4f::translation(-hip);
  const Mat4f s1 = Mat4f::translation(knee) * rot_z(shin) * Mat4f::translation(-bind_knee);
  const std::vector<Affine3x4f> palette{to_affine3x4(s0), to_affine3x4(s1)};
  std::vector<DualQuatf> dq(2);
  ASSERT_TRUE(dual_quat_palette(palette, dq, {}));
  const std::vector<Vec3f> positions{{0.5f, 3.5f, 0}};
  const std::vector<uint16_t> joints{0, 1};
  const std::vector<float> weights{0.5f, 0.5f};
  const SkinMeshView view{positions, {}, {}, 2, joints, weights};
  std::vector<Vec3f> lbs(1), dqs(1);
  ASSERT_TRUE(skin_lbs(view, palette, {lbs, {}, {}}));
  ASSERT_TRUE(skin_dqs(view, {dq, {}}, {dqs, {}, {}}));
  EXPECT_NEAR(dqs[0].x, 3.80f, 5e-3f);
  EXPECT_NEAR(dqs[0].y, 5.43f, 5e-3f);
  EXPECT_NEAR(distance(dqs[0], knee), 0.5f, 1e-4f);
  EXPECT_NEAR(lbs[0].x, 3.70f, 5e-3f);
  EXPECT_NEAR(lbs[0].y, 5.40f, 5e-3f);
  EXPECT_NEAR(distance(lbs[0], knee), 0.395f, 5e-4f);
  EXPECT_NEAR(distance(lbs[0], knee), 0.5f * std::cos((thigh - shin) / 2 * kDeg), 1e-4f);
}

}  // namespace
}  // namespace kinema
