// Crowds on the renderer: instanced skinning draws what one render() draws, a VAT plays its baked
// frames (interpolated, placed and turned), an impostor shows the view nearest the eye, the
// dithered cross-fade of two tiers covers each pixel once, tints colour the tiers, and bad
// instances are refused.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <vector>

#include "kinema/core/error.h"
#include "kinema/render/renderer.h"
#include "render/render_fixture.h"

namespace kinema {
namespace {

using test::is_background;
using test::wall;

constexpr int kW = 320, kH = 240;
constexpr float kPi = std::numbers::pi_v<float>;

Camera camera_from(const Vec3f& eye) {
  Camera c;
  c.eye = eye;
  c.target = {0, 1, 0};
  return c;
}

DrawOptions no_ground() {
  DrawOptions d;
  d.ground = false;
  return d;
}

int covered(const Image& im) {
  int n = 0;
  for (int y = 0; y < im.height; ++y)
    for (int x = 0; x < im.width; ++x) n += is_background(im, x, y) ? 0 : 1;
  return n;
}

// Mean x of the pixels not in the background colour.
double centroid_x(const Image& im) {
  double sum = 0;
  int n = 0;
  for (int y = 0; y < im.height; ++y)
    for (int x = 0; x < im.width; ++x)
      if (!is_background(im, x, y)) sum += x, ++n;
  return n ? sum / n : -1;
}

int differing(const Image& a, const Image& b, int tolerance) {
  int n = 0;
  for (size_t i = 0; i < a.rgba.size(); i += 4)
    for (size_t c = 0; c < 3; ++c)
      if (std::abs(int(a.rgba[i + c]) - int(b.rgba[i + c])) > tolerance) {
        ++n;
        break;
      }
  return n;
}

std::vector<Mat4> at(const Vec3& p) { return {Mat4::translation(p)}; }
std::vector<Mat4f> at_f(const Vec3f& p) { return {Mat4f::translation(p)}; }

CrowdSkeletonInstance skeleton(std::span<const Mat4f> pose, CrowdFade fade = {}) {
  CrowdSkeletonInstance k;
  k.pose = pose;
  k.fade = fade;
  return k;
}

CrowdFrame frame(std::span<const CrowdSkeletonInstance> skeletons,
                 std::span<const CrowdBakedInstance> vats = {},
                 std::span<const CrowdBakedInstance> impostors = {}) {
  CrowdFrame f;
  f.skeletons = skeletons;
  f.vats = vats;
  f.impostors = impostors;
  return f;
}

class CrowdRender : public test::RenderTest {
 protected:
  Renderer& wall_renderer() {
    Renderer& r = renderer(kW, kH);
    r.set_asset(wall());
    return r;
  }
};

TEST_F(CrowdRender, AnInstancedSkeletonDrawsWhatOneRenderDraws) {
  Renderer& r = wall_renderer();
  const Camera cam = camera_from({0, 1, 6});
  const std::vector<Mat4> pose = at({0.5, 0, 0});
  const Image single = r.render(pose, cam, no_ground());
  const std::vector<Mat4f> pose_f = at_f({0.5f, 0, 0});
  const CrowdSkeletonInstance instance = skeleton(pose_f);
  const Image crowd = r.render_crowd(frame({&instance, 1}), cam, no_ground());
  EXPECT_GT(covered(single), 3000);
  EXPECT_EQ(differing(single, crowd, 1), 0);
}

TEST_F(CrowdRender, EachInstanceHasItsOwnPose) {
  Renderer& r = wall_renderer();
  const Camera cam = camera_from({0, 1, 12});
  const std::vector<Mat4f> left = at_f({-2, 0, 0}), right = at_f({2, 0, 0});
  const CrowdSkeletonInstance both[] = {skeleton(left), skeleton(right)};
  const Image two = r.render_crowd(frame(both), cam, no_ground());
  const Image one_left = r.render_crowd(frame({&both[0], 1}), cam, no_ground());
  const Image one_right = r.render_crowd(frame({&both[1], 1}), cam, no_ground());
  EXPECT_NEAR(covered(two), covered(one_left) + covered(one_right), 4);
  EXPECT_LT(centroid_x(one_left), kW / 2.0);
  EXPECT_GT(centroid_x(one_right), kW / 2.0);
}

TEST_F(CrowdRender, AVatFrameDrawsWhereItsPoseWas) {
  Renderer& r = wall_renderer();
  const Camera cam = camera_from({0, 1, 6});
  const std::vector<std::vector<Mat4>> poses{at({0, 0, 0})};
  const CrowdBakeInfo info = r.add_crowd_vat(poses, 30);
  EXPECT_EQ(info.frames, 1);
  EXPECT_EQ(info.vertices, 4u);
  EXPECT_EQ(info.bytes, 4u * 8u);
  EXPECT_LT(info.max_error_m, 1e-3);
  const std::vector<Mat4f> placed = at_f({0.5f, 0, 0});
  const CrowdSkeletonInstance skel = skeleton(placed);
  CrowdBakedInstance vat;
  vat.position = {0.5f, 0, 0};
  const Image a = r.render_crowd(frame({&skel, 1}), cam, no_ground());
  const Image b = r.render_crowd(frame({}, {&vat, 1}), cam, no_ground());
  // Flat normals of a flat wall are its normals: the same picture but for edge samples.
  EXPECT_LT(differing(a, b, 2), covered(a) / 50);
}

TEST_F(CrowdRender, AVatInterpolatesBetweenFramesAndLoops) {
  Renderer& r = wall_renderer();
  const Camera cam = camera_from({0, 1, 8});
  const std::vector<std::vector<Mat4>> poses{at({-1, 0, 0}), at({1, 0, 0})};
  r.add_crowd_vat(poses, 2);  // frame 0 at t = 0, frame 1 at 0.5 s, back to frame 0 at 1 s
  const auto x_at = [&](float time) {
    CrowdBakedInstance vat;
    vat.time = time;
    return centroid_x(r.render_crowd(frame({}, {&vat, 1}), cam, no_ground()));
  };
  const double x0 = x_at(0), x_half = x_at(0.25f), x1 = x_at(0.5f), x_wrap = x_at(1.0f);
  EXPECT_GT(x1 - x0, 40);
  EXPECT_NEAR(x_half, 0.5 * (x0 + x1), 1.0);  // linear between the frames
  EXPECT_NEAR(x_wrap, x0, 0.5);               // the loop wraps
  EXPECT_NEAR(x_at(0.75f), x_half, 1.0);      // the last frame blends back into the first
}

TEST_F(CrowdRender, AVatInstanceTurnsAboutUp) {
  Renderer& r = wall_renderer();
  r.add_crowd_vat(std::vector<std::vector<Mat4>>{at({0, 0, 0})}, 30);
  const Camera side = camera_from({6, 1, 0});
  CrowdBakedInstance vat;
  const int edge_on = covered(r.render_crowd(frame({}, {&vat, 1}), side, no_ground()));
  vat.yaw = kPi / 2;  // the wall's +Z face turns to +X, towards this camera
  const int facing = covered(r.render_crowd(frame({}, {&vat, 1}), side, no_ground()));
  EXPECT_LT(edge_on, 200);
  EXPECT_GT(facing, 3000);
}

TEST_F(CrowdRender, AnImpostorShowsTheViewNearestTheEye) {
  Renderer& r = wall_renderer();
  ImpostorOptions options;
  options.views = 4;
  options.cell_pixels = 64;
  const CrowdBakeInfo info =
      r.add_crowd_impostor(std::vector<std::vector<Mat4>>{at({0, 0, 0})}, 30, options);
  EXPECT_EQ(info.views, 4);
  EXPECT_NEAR(info.centre_height, 1.0f, 1e-5);
  EXPECT_NEAR(info.half_size, 1.04f, 1e-4);  // the wall's 1 m half width
  const Image atlas = r.crowd_impostor_atlas(info.index);
  ASSERT_EQ(atlas.width, 4 * 64);
  ASSERT_EQ(atlas.height, 64);
  const auto opaque_in_cell = [&](int view) {
    int n = 0;
    for (int y = 0; y < 64; ++y)
      for (int x = view * 64; x < view * 64 + 64; ++x) n += atlas.pixel(x, y)[3] > 128;
    return n;
  };
  EXPECT_GT(opaque_in_cell(0), 64 * 64 * 3 / 4);  // the wall from the front fills the cell
  EXPECT_LT(opaque_in_cell(1), 64 * 2);           // and from the side it is edge-on
  // Drawn: from the front a wall, from the side nothing (the side view's cell is empty).
  CrowdBakedInstance imp;
  const Image front = r.render_crowd(frame({}, {}, {&imp, 1}), camera_from({0, 1, 6}), no_ground());
  const Image side = r.render_crowd(frame({}, {}, {&imp, 1}), camera_from({6, 1, 0}), no_ground());
  const std::vector<Mat4> pose = at({0, 0, 0});
  const int mesh = covered(r.render(pose, camera_from({0, 1, 6}), no_ground()));
  EXPECT_NEAR(covered(front), mesh, mesh / 10);
  EXPECT_LT(covered(side), 100);
  imp.yaw = kPi / 2;  // turned to face the side camera
  EXPECT_NEAR(
      covered(r.render_crowd(frame({}, {}, {&imp, 1}), camera_from({6, 1, 0}), no_ground())), mesh,
      mesh / 10);
}

TEST_F(CrowdRender, ADitheredCrossFadeCoversEachPixelOnce) {
  Renderer& r = wall_renderer();
  r.add_crowd_vat(std::vector<std::vector<Mat4>>{at({0, 0, 0})}, 30);
  const Camera cam = camera_from({0, 1, 6});
  const std::vector<Mat4> pose = at({0, 0, 0});
  const std::vector<Mat4f> pose_f = at_f({0, 0, 0});
  const Image whole = r.render(pose, cam, no_ground());
  for (const float f : {0.0f, 0.3f, 0.5f, 0.8f, 1.0f}) {
    const CrowdSkeletonInstance in = skeleton(pose_f, {f, false});
    CrowdBakedInstance out;
    out.fade = {1 - f, true};
    const Image fading_in = r.render_crowd(frame({&in, 1}), cam, no_ground());
    EXPECT_NEAR(double(covered(fading_in)) / covered(whole), f, 0.05) << f;
    const Image both = r.render_crowd(frame({&in, 1}, {&out, 1}), cam, no_ground());
    EXPECT_NEAR(covered(both), covered(whole), covered(whole) / 100) << f;
  }
}

TEST_F(CrowdRender, TintsColourTheInstances) {
  Renderer& r = wall_renderer();
  const Camera cam = camera_from({0, 1, 6});
  const std::vector<Mat4f> pose = at_f({0, 0, 0});
  CrowdSkeletonInstance green = skeleton(pose);
  green.tint = {0.1f, 0.8f, 0.1f};
  const Image im = r.render_crowd(frame({&green, 1}), cam, no_ground());
  const uint8_t* p = im.pixel(kW / 2, kH / 2);
  EXPECT_GT(p[1], p[0] + 60);
  EXPECT_GT(p[1], p[2] + 60);
}

TEST_F(CrowdRender, RefusesBadInstances) {
  Renderer& r = wall_renderer();
  const Camera cam = camera_from({0, 1, 6});
  const std::vector<Mat4> two_joints(2, Mat4::identity());
  const std::vector<Mat4f> two_joints_f(2, Mat4f::identity());
  const CrowdSkeletonInstance wrong = skeleton(two_joints_f);
  EXPECT_THROW(r.render_crowd(frame({&wrong, 1}), cam), Error);
  CrowdBakedInstance unbaked;
  EXPECT_THROW(r.render_crowd(frame({}, {&unbaked, 1}), cam), Error);
  EXPECT_THROW(r.render_crowd(frame({}, {}, {&unbaked, 1}), cam), Error);
  r.add_crowd_vat(std::vector<std::vector<Mat4>>{at({0, 0, 0})}, 30);
  CrowdBakedInstance bad = unbaked;
  bad.fade.coverage = 1.5f;
  EXPECT_THROW(r.render_crowd(frame({}, {&bad, 1}), cam), Error);
  bad = unbaked;
  bad.time = std::nanf("");
  EXPECT_THROW(r.render_crowd(frame({}, {&bad, 1}), cam), Error);
  EXPECT_THROW(r.add_crowd_vat({}, 30), Error);
  EXPECT_THROW(r.add_crowd_vat(std::vector<std::vector<Mat4>>{two_joints}, 30), Error);
  EXPECT_THROW(r.add_crowd_vat(std::vector<std::vector<Mat4>>{at({0, 0, 0})}, 0), Error);
  ImpostorOptions huge;
  huge.cell_pixels = 4096;
  EXPECT_THROW(r.add_crowd_impostor(std::vector<std::vector<Mat4>>{at({0, 0, 0})}, 30, huge),
               Error);
  EXPECT_THROW(r.crowd_impostor_atlas(3), Error);
  // A new asset drops the bakes.
  r.set_asset(wall());
  EXPECT_THROW(r.render_crowd(frame({}, {&unbaked, 1}), cam), Error);
}

}  // namespace
}  // namespace kinema
