// LBS and DQS of one vertex near a bent joint, worked by hand: the 2D arm (shoulder 30°, elbow
// 90°) (docs/worked_examples.md, "Skinning matrices" and "Dual-quaternion skinning").
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

}  // namespace
}  // namespace kinema
