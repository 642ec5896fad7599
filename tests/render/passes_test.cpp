// Render passes (AOVs): depth in metres along the view axis, world normals, motion vectors in
// pixels from the previous pose and camera, the shadow-only pass from a shadow catcher, and the
// beauty pass as premultiplied linear light.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <vector>

#include "kinema/core/error.h"
#include "render/render_fixture.h"

namespace kinema {
namespace {

class RenderPassesTest : public test::RenderTest {
 protected:
  static constexpr int kW = 160, kH = 120;
  size_t at(int x, int y) const { return size_t(y) * kW + size_t(x); }
};

TEST_F(RenderPassesTest, DepthIsTheDistanceAlongTheViewAxisAndNormalsFaceTheCamera) {
  Renderer& r = renderer(kW, kH);
  r.set_asset(test::wall());
  DrawOptions o;
  o.ground = false;
  o.transparent_background = true;
  const Camera camera;  // from (0, 1, 4) towards (0, 1, 0): the wall is 4 m ahead
  const RenderPasses p = r.render_passes(std::vector<Mat4>(1, Mat4::identity()), camera, o);
  ASSERT_EQ(p.width, kW);
  ASSERT_EQ(p.depth.size(), size_t(kW * kH));
  EXPECT_NEAR(p.depth[at(80, 60)], 4.0f, 1e-4f);
  EXPECT_NEAR(p.depth[at(50, 40)], 4.0f, 1e-4f);  // a plane facing the camera: one depth
  EXPECT_NEAR(p.normal[at(80, 60) * 3 + 2], 1.0f, 1e-5f);
  EXPECT_TRUE(std::isinf(p.depth[at(1, 1)]));  // nothing there
  EXPECT_EQ(p.normal[at(1, 1) * 3 + 2], 0.0f);
  EXPECT_EQ(p.motion[at(80, 60) * 2], 0.0f);  // no previous frame
  EXPECT_NEAR(p.beauty[at(80, 60) * 4 + 3], 1.0f, 1e-6f);
  EXPECT_EQ(p.beauty[at(1, 1) * 4 + 3], 0.0f);
  // Seen from behind, the normal still faces the camera.
  Camera behind;
  behind.eye = {0, 1, -4};
  const RenderPasses back = r.render_passes(std::vector<Mat4>(1, Mat4::identity()), behind, o);
  EXPECT_NEAR(back.normal[at(80, 60) * 3 + 2], -1.0f, 1e-5f);
}

TEST_F(RenderPassesTest, MotionIsHowFarThePointMovedAcrossTheImageInPixels) {
  Renderer& r = renderer(kW, kH);
  r.set_asset(test::wall());
  DrawOptions o;
  o.ground = false;
  const Camera camera;
  // The wall was 0.1 m to the left a frame ago: at 4 m, with a 35° field of view over 120 rows,
  // that is 0.1 · 60 / tan(17.5°) / 4 = 4.757 pixels to the right.
  const std::vector<Mat4> before(1, Mat4::translation(Vec3{-0.1, 0, 0}));
  const RenderPasses p =
      r.render_passes(std::vector<Mat4>(1, Mat4::identity()), camera, o, before, &camera);
  const double expected = 0.1 * 60 / std::tan(17.5 * std::numbers::pi / 180) / 4;
  EXPECT_NEAR(p.motion[at(80, 60) * 2], expected, 1e-3);
  EXPECT_NEAR(p.motion[at(80, 60) * 2 + 1], 0.0, 1e-3);
  // The camera rising 0.1 m instead: the wall moves down the image (y grows downwards).
  Camera lower = camera;
  lower.eye.y -= 0.1f;
  lower.target.y -= 0.1f;
  const RenderPasses q = r.render_passes(std::vector<Mat4>(1, Mat4::identity()), camera, o,
                                         std::vector<Mat4>(1, Mat4::identity()), &lower);
  EXPECT_NEAR(q.motion[at(80, 60) * 2 + 1], expected, 1e-3);
  EXPECT_THROW(r.render_passes(std::vector<Mat4>(1, Mat4::identity()), camera, o,
                               std::vector<Mat4>(2, Mat4::identity()), &camera),
               Error);
}

TEST_F(RenderPassesTest, ShadowOnlyIsTheCatchersShadowHiddenWhereTheCharacterCoversIt) {
  // The low wall of the shadow tests, seen from behind: its shadow on the ground at
  // (−0.1, 0, −0.15), lit ground at (0.6, 0, −1).
  Renderer& r = renderer(kW, kH);
  Asset wall = test::wall();
  for (Vec3f& v : wall.meshes[0].positions) v.y *= 0.3f;
  r.set_asset(wall);
  Camera above;
  above.eye = {0, 3, -3};
  above.target = {0, 0, 0};
  const RenderPasses p = r.render_passes(std::vector<Mat4>(1, Mat4::identity()), above, {});
  const auto pixel = [&](Vec3f world) {
    float x = 0, y = 0;
    EXPECT_TRUE(project_to_pixel(above, kW, kH, world, x, y));
    return at(int(x), int(y));
  };
  EXPECT_GT(p.shadow[pixel({-0.1f, 0, -0.15f})], 0.2f);
  EXPECT_EQ(p.shadow[pixel({0.6f, 0, -1})], 0.0f);
  EXPECT_EQ(p.shadow[pixel({0.5f, 0.3f, 0})], 0.0f) << "the wall hides the ground behind it";
  DrawOptions no_shadows;
  no_shadows.shadows = false;
  const RenderPasses q = r.render_passes(std::vector<Mat4>(1, Mat4::identity()), above, no_shadows);
  EXPECT_EQ(q.shadow[pixel({-0.1f, 0, -0.15f})], 0.0f);
}

}  // namespace
}  // namespace kinema
