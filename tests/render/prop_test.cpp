// Props: still world-space meshes (DrawOptions::props) drawn in their colour where the camera
// projects them, in render() and render_crowd(); hidden behind the character and hiding it by
// depth; bad ones refused naming the prop and the vertex or index.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kinema/core/error.h"
#include "kinema/render/renderer.h"
#include "render/render_fixture.h"

namespace kinema::prop_test {
namespace {

using test::is_background;
using test::wall;

constexpr int kW = 160, kH = 120;

// An axis-aligned box from lo to hi: 8 corners, 12 triangles (mixed windings are fine).
struct Box {
  std::vector<Vec3f> positions;
  std::vector<uint32_t> indices;
  Box(Vec3f lo, Vec3f hi) {
    for (int k = 0; k < 8; ++k)
      positions.push_back({k & 1 ? hi.x : lo.x, k & 2 ? hi.y : lo.y, k & 4 ? hi.z : lo.z});
    indices = {0, 1, 3, 0, 3, 2, 4, 5, 7, 4, 7, 6, 0, 1, 5, 0, 5, 4,
               2, 3, 7, 2, 7, 6, 0, 2, 6, 0, 6, 4, 1, 3, 7, 1, 7, 5};
  }
  PropMesh prop(Vec3f colour, std::string_view name = {}) const {
    return {positions, indices, colour, name};
  }
};

constexpr Vec3f kRed{0.8f, 0.04f, 0.04f}, kBlue{0.04f, 0.08f, 0.8f};

bool reddish(const Image& im, int x, int y) {
  const uint8_t* p = im.pixel(x, y);
  return p[0] > 80 && p[0] > 2 * p[1] && p[0] > 2 * p[2];
}
bool bluish(const Image& im, int x, int y) {
  const uint8_t* p = im.pixel(x, y);
  return p[2] > 80 && p[2] > 2 * p[0] && p[2] > 2 * p[1];
}

std::vector<uint8_t> rgba_at(const Image& im, int x, int y) {
  const uint8_t* p = im.pixel(x, y);
  return {p[0], p[1], p[2], p[3]};
}

class Props : public test::RenderTest {
 protected:
  DrawOptions options(std::span<const PropMesh> props) {
    DrawOptions d;
    d.ground = false;
    d.props = props;
    return d;
  }
};

TEST_F(Props, ARedBoxInFrontOfTheCameraColoursTheCentrePixelOnly) {
  // The default camera looks from (0, 1, 4) at (0, 1, 0): the box's centre is the image's.
  const Box box({-0.3f, 0.7f, -0.3f}, {0.3f, 1.3f, 0.3f});
  const PropMesh props[] = {box.prop(kRed)};
  const Image im = renderer(kW, kH).render({}, Camera{}, options(props));
  EXPECT_TRUE(reddish(im, kW / 2, kH / 2));
  EXPECT_EQ(im.pixel(kW / 2, kH / 2)[3], 255);
  EXPECT_TRUE(is_background(im, 5, 5));
  EXPECT_TRUE(is_background(im, kW / 2, 5));  // above the box
  // The same in a crowd frame (no instances: the props alone).
  const Image crowd = renderer_->render_crowd(CrowdFrame{}, Camera{}, options(props));
  EXPECT_TRUE(reddish(crowd, kW / 2, kH / 2));
  EXPECT_TRUE(is_background(crowd, kW / 2, 5));
  // On a transparent background the prop is opaque.
  DrawOptions clear = options(props);
  clear.transparent_background = true;
  const Image over = renderer_->render({}, Camera{}, clear);
  EXPECT_EQ(over.pixel(kW / 2, kH / 2)[3], 255);
  EXPECT_EQ(over.pixel(5, 5)[3], 0);
}

TEST_F(Props, APropBehindTheCharacterIsHiddenAndOneInFrontHidesIt) {
  const Box behind({-0.3f, 0.7f, -1.0f}, {0.3f, 1.3f, -0.4f});
  const Box in_front({-0.3f, 0.7f, 0.4f}, {0.3f, 1.3f, 1.0f});
  // Props hide one another by depth, whatever their order.
  const PropMesh both[] = {behind.prop(kBlue), in_front.prop(kRed)};
  const PropMesh both_swapped[] = {in_front.prop(kRed), behind.prop(kBlue)};
  const PropMesh blue_alone[] = {behind.prop(kBlue)};
  EXPECT_TRUE(reddish(renderer(kW, kH).render({}, Camera{}, options(both)), kW / 2, kH / 2));
  EXPECT_TRUE(reddish(renderer_->render({}, Camera{}, options(both_swapped)), kW / 2, kH / 2));
  EXPECT_TRUE(bluish(renderer_->render({}, Camera{}, options(blue_alone)), kW / 2, kH / 2));
  // And the character: a wall 2 × 2 m on z = 0, facing the camera.
  renderer_->set_asset(wall());
  const std::vector<Mat4> pose = {Mat4::identity()};
  const Image wall_only = renderer_->render(pose, Camera{}, options({}));
  ASSERT_FALSE(is_background(wall_only, kW / 2, kH / 2));
  ASSERT_FALSE(reddish(wall_only, kW / 2, kH / 2));
  const PropMesh hidden[] = {behind.prop(kRed)};
  EXPECT_EQ(rgba_at(renderer_->render(pose, Camera{}, options(hidden)), kW / 2, kH / 2),
            rgba_at(wall_only, kW / 2, kH / 2));
  const PropMesh shown[] = {in_front.prop(kRed)};
  EXPECT_TRUE(reddish(renderer_->render(pose, Camera{}, options(shown)), kW / 2, kH / 2));
  // Beside the wall the prop behind it shows.
  const Box aside({1.3f, 0.7f, -1.0f}, {1.7f, 1.3f, -0.4f});
  const PropMesh beside[] = {aside.prop(kRed)};
  float x = 0, y = 0;
  ASSERT_TRUE(project_to_pixel(Camera{}, kW, kH, {1.5f, 1.0f, -0.4f}, x, y));
  EXPECT_TRUE(reddish(renderer_->render(pose, Camera{}, options(beside)), int(x), int(y)));
}

TEST_F(Props, BadPropsAreRefusedNamingThePropAndTheElement) {
  const Box box({-0.3f, 0.7f, -0.3f}, {0.3f, 1.3f, 0.3f});
  const auto refused = [&](const PropMesh& bad, const std::string& why) {
    const PropMesh props[] = {box.prop(kRed), bad};
    for (const bool crowd : {false, true}) {
      try {
        if (crowd)
          renderer(kW, kH).render_crowd(CrowdFrame{}, Camera{}, options(props));
        else
          renderer(kW, kH).render({}, Camera{}, options(props));
        ADD_FAILURE() << "accepted: expected " << why;
      } catch (const Error& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("prop 1 (rock)"), std::string::npos) << m;
        EXPECT_NE(m.find(why), std::string::npos) << m;
      }
    }
  };
  std::vector<Vec3f> positions = box.positions;
  positions[5].z = std::nanf("");
  refused({positions, box.indices, kRed, "rock"}, "vertex 5: its position is not finite");
  std::vector<uint32_t> past = box.indices;
  past[7] = 8;
  refused({box.positions, past, kRed, "rock"}, "index 7 is vertex 8, past its 8 vertices");
  const std::vector<uint32_t> four = {0, 1, 2, 3};
  refused({box.positions, four, kRed, "rock"}, "4 indices are not whole triangles");
  refused(box.prop({0.5f, -0.1f, 0.5f}, "rock"), "its colour is negative");
  refused(box.prop({0.5f, INFINITY, 0.5f}, "rock"), "its colour is not finite");
  // Nothing to draw is fine.
  const PropMesh empty[] = {PropMesh{}};
  EXPECT_NO_THROW(renderer(kW, kH).render({}, Camera{}, options(empty)));
}

}  // namespace
}  // namespace kinema::prop_test
