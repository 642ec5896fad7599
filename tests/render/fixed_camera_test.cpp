// A fixed camera (CameraMode::Fixed): the image is taken from the eye, towards the target, with
// the given up and field of view — a known point lands at the image centre, edges of a known wall
// fall where a pinhole puts them, the up direction turns the image — whatever the character does;
// near and far planes enclose the character; a camera that defines no view is refused. Also
// ClipRenderOptions::skeleton = false: no capsules for an asset without a skinned mesh.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/render/clip_render.h"
#include "render/render_fixture.h"

namespace kinema {
namespace {

using test::is_background;

ClipRenderOptions fixed(const Vec3f& eye, const Vec3f& target, const Vec3f& up = {0, 1, 0},
                        float fov = 30) {
  ClipRenderOptions o;
  o.target.width = 160;
  o.target.height = 120;
  o.target.samples = 1;  // hard edges: a pixel is the wall's when its centre is
  o.ground = false;
  o.camera = CameraMode::Fixed;
  o.fixed_camera.eye = eye;
  o.fixed_camera.target = target;
  o.fixed_camera.up = up;
  o.fixed_camera.fov_y_degrees = fov;
  return o;
}

// The first column (scanning row y left to right) whose background state differs from column 0's.
int first_change_in_row(const Image& im, int y) {
  for (int x = 1; x < im.width; ++x)
    if (is_background(im, x, y) != is_background(im, 0, y)) return x;
  return -1;
}

int first_change_in_column(const Image& im, int x) {
  for (int y = 1; y < im.height; ++y)
    if (is_background(im, x, y) != is_background(im, x, 0)) return y;
  return -1;
}

class FixedCamera : public test::RenderTest {};

TEST_F(FixedCamera, UsesTheCameraAsGivenAtEveryTime) {
  const Asset wall = test::wall();
  const ClipRenderOptions o = fixed({0.3f, 1.2f, 4}, {0.1f, 0.9f, 0}, {0, 1, 0}, 42);
  ClipRenderer r(wall, -1, o);
  for (const double t : {0.0, 1.0}) {
    const Camera c = r.camera_at(t);
    EXPECT_EQ(c.eye, o.fixed_camera.eye);
    EXPECT_EQ(c.target, o.fixed_camera.target);
    EXPECT_EQ(c.up, o.fixed_camera.up);
    EXPECT_EQ(c.fov_y_degrees, 42.0f);
    // The wall (z = 0, 4 m ahead, 2.2 m across at most) lies between the near and far planes.
    EXPECT_GT(c.near_plane, 0.0f);
    EXPECT_LT(c.near_plane, 4.0f - 1.5f);
    EXPECT_GT(c.far_plane, 4.0f + 1.5f);
    float x = 0, y = 0;
    ASSERT_TRUE(project_to_pixel(c, 160, 120, c.target, x, y));
    EXPECT_NEAR(x, 80.0f, 1e-3f);
    EXPECT_NEAR(y, 60.0f, 1e-3f);
  }
}

TEST_F(FixedCamera, AKnownPointLandsAtTheImageCentre) {
  // The wall spans x ∈ [−1, 1], y ∈ [0, 2] on z = 0, facing +Z.
  const Asset wall = test::wall();
  {  // Looking straight at its right edge: the wall fills the left half, exactly to the centre.
    ClipRenderer r(wall, -1, fixed({1, 1, 3}, {1, 1, 0}));
    const Image im = r.frame(0);
    EXPECT_FALSE(is_background(im, 10, 60)) << "the wall, left of the edge";
    EXPECT_TRUE(is_background(im, 150, 60)) << "nothing right of the edge";
    EXPECT_NEAR(first_change_in_row(im, 60), 80, 1);
  }
  {  // At its top edge: wall below the centre row, nothing above.
    ClipRenderer r(wall, -1, fixed({0, 2, 3}, {0, 2, 0}));
    const Image im = r.frame(0);
    EXPECT_TRUE(is_background(im, 80, 10));
    EXPECT_FALSE(is_background(im, 80, 110));
    EXPECT_NEAR(first_change_in_column(im, 80), 60, 1);
  }
  {  // The same right edge with +X up: the image turns, the edge is now the centre row and
     // the wall (x < 1) lies below it.
    ClipRenderer r(wall, -1, fixed({1, 1, 3}, {1, 1, 0}, {1, 0, 0}));
    const Image im = r.frame(0);
    EXPECT_TRUE(is_background(im, 80, 10));
    EXPECT_FALSE(is_background(im, 80, 110));
    EXPECT_NEAR(first_change_in_column(im, 80), 60, 1);
  }
  {  // Looking 3 m beside the wall: the centre is empty.
    ClipRenderer r(wall, -1, fixed({4, 1, 3}, {4, 1, 0}));
    EXPECT_TRUE(is_background(r.frame(0), 80, 60));
  }
}

TEST_F(FixedCamera, TheFieldOfViewScalesTheImage) {
  // The wall's right edge, 1 m right of the target, 3 m away: tan(fov / 2) · 3 m is half the
  // image height, so the edge lies 1 / (3 tan(fov / 2)) · 60 px right of the centre.
  const Asset wall = test::wall();
  for (const float fov : {30.0f, 50.0f}) {
    ClipRenderer r(wall, -1, fixed({0, 1, 3}, {0, 1, 0}, {0, 1, 0}, fov));
    const Image im = r.frame(0);
    const float expected = 80.0f + 60.0f / (3.0f * std::tan(fov * 3.14159265f / 360.0f));
    int edge = -1;
    for (int x = 80; x < im.width && edge < 0; ++x)
      if (is_background(im, x, 60)) edge = x;
    EXPECT_NEAR(float(edge), expected, 1.0f) << "fov " << fov;
  }
}

TEST_F(FixedCamera, ACameraThatDefinesNoViewIsRefused) {
  const Asset wall = test::wall();
  EXPECT_THROW(ClipRenderer(wall, -1, fixed({0, 1, 3}, {0, 1, 3})), UsageError);
  EXPECT_THROW(ClipRenderer(wall, -1, fixed({0, 4, 0}, {0, 1, 0})), UsageError);  // up along
  EXPECT_THROW(ClipRenderer(wall, -1, fixed({0, 1, 3}, {0, 1, 0}, {0, 1, 0}, 180)), UsageError);
  EXPECT_THROW(
      ClipRenderer(wall, -1, fixed({0, 1, std::numeric_limits<float>::quiet_NaN()}, {0, 1, 0})),
      UsageError);
}

TEST_F(FixedCamera, NoSkeletonLeavesOutTheCapsules) {
  const Asset bvh = load_asset(test::data("bvh/cmu_cgspeed_mb/02_01.bvh"));
  ClipRenderOptions o;
  o.target.width = 96;
  o.target.height = 72;
  o.ground = false;
  ClipRenderer with(bvh, 0, o);
  EXPECT_TRUE(with.renderer().draws_capsules());
  o.skeleton = false;
  ClipRenderer without(bvh, 0, o);
  EXPECT_FALSE(without.renderer().draws_capsules());
  const Image im = without.frame(0);
  long drawn = 0;
  for (int y = 0; y < im.height; ++y)
    for (int x = 0; x < im.width; ++x) drawn += is_background(im, x, y) ? 0 : 1;
  EXPECT_EQ(drawn, 0);
}

}  // namespace
}  // namespace kinema
