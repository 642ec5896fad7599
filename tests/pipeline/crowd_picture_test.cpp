// Crowd pictures (pipeline::run_crowd into a .png) draw the scene's still props: the obstacles —
// a box and a disc — in their stone colour where the camera projects their tops (untinted by the
// LOD colours), and an .obj ground (the demo stairs) as a mesh in its own colour.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <string>

#include "kinema/composite/image_file.h"
#include "kinema/pipeline/crowd.h"
#include "kinema/pipeline/crowd_draw.h"
#include "kinema/render/renderer.h"
#include "pipeline/pipeline_test_util.h"

namespace kinema::crowd_picture_test {
namespace {

constexpr int kW = 160, kH = 90;

// An upward face of `albedo` as the flat look lights it (the crowds' shader: 0.55 × the sky's
// ambient, which is all sky straight up, plus the key light (1, 0.95, 0.88) × 0.85 × n·l towards
// (0.35, 0.85, 0.45)), as 8-bit sRGB.
std::array<int, 3> lit_from_above(const Vec3f& albedo) {
  const float lambert = 0.85f / std::sqrt(0.35f * 0.35f + 0.85f * 0.85f + 0.45f * 0.45f);
  const float sky[3] = {0.55f, 0.62f, 0.75f}, sun[3] = {1.0f, 0.95f, 0.88f};
  const float a[3] = {albedo.x, albedo.y, albedo.z};
  std::array<int, 3> out{};
  for (int c = 0; c < 3; ++c) {
    const float linear = std::min(1.0f, a[c] * (0.55f * sky[c] + sun[c] * 0.85f * lambert));
    out[std::size_t(c)] = int(std::lround(255 * composite::linear_to_srgb(linear)));
  }
  return out;
}

class CrowdPictures : public test::PipelineTest {
 protected:
  // Draws `scene` (JSON text) into one 160 × 90 tile at the walk's start; the PNG's 8-bit codes.
  composite::Image draw(const std::string& scene, bool lod_colours) {
    std::ofstream(path("scene.json")) << scene;
    pipeline::CrowdRequest request;
    request.scene = path("scene.json");
    request.out = path("crowd.png");
    request.seconds = 0.1;
    request.width = kW;
    request.height = kH;
    request.sheet_frames = 1;
    request.lod_colours = lod_colours;
    const pipeline::CrowdReport report = pipeline::run_crowd(request);
    EXPECT_EQ(report.frames_drawn, 1);
    return composite::read_png(path("crowd.png"), true);  // the codes / 255, no sRGB curve
  }
  // Expects the pixel where `camera` sees `p` to be `expected` (8-bit sRGB) within 3 codes.
  static void expect_colour(const composite::Image& im, const Camera& camera, const Vec3f& p,
                            const std::array<int, 3>& expected) {
    float x = 0, y = 0;
    ASSERT_TRUE(project_to_pixel(camera, kW, kH, p, x, y));
    const composite::Rgba& c = im.at(int(x), int(y));
    const int got[3] = {int(std::lround(255 * c.r)), int(std::lround(255 * c.g)),
                        int(std::lround(255 * c.b))};
    for (int k = 0; k < 3; ++k)
      EXPECT_NEAR(got[k], expected[std::size_t(k)], 3)
          << "channel " << k << " at (" << p.x << ", " << p.y << ", " << p.z << ")";
  }
};

TEST_F(CrowdPictures, ObstaclesAreDrawnInTheirStoneColourWhateverTheLodColours) {
  const std::string scene = R"({"step": 0.02, "area": {"lo": [-6, -4], "hi": [6, 4]},
    "obstacles": [{"box": {"lo": [1.5, -1], "hi": [3.5, 1]}},
                  {"disc": {"centre": [-2.5, 0], "radius": 1}}],
    "agents": [{"position": [4.5, 2.5], "goal": [4.5, 1.5]}],
    "characters": {"walk": ")" +
                            test::kDemo + R"(/pab_walk.glb"},
    "camera": {"eye": [0, 6, 10], "target": [0, 0, 0]}})";
  Camera camera;
  camera.eye = {0, 6, 10};
  camera.target = {0, 0, 0};
  const auto stone = lit_from_above(pipeline::CrowdDrawer::obstacle_colour());
  for (const bool lod_colours : {false, true}) {
    const composite::Image im = draw(scene, lod_colours);
    ASSERT_EQ(im.width, kW);
    ASSERT_EQ(im.height, kH);
    expect_colour(im, camera, {2.5f, 1.2f, 0}, stone);   // the box's top, 1.2 m up
    expect_colour(im, camera, {-2.5f, 1.2f, 0}, stone);  // the disc's
  }
}

TEST_F(CrowdPictures, AnObjGroundIsDrawnAsAMesh) {
  // The demo stairs: a floor at y = 0, steps up along +z, a landing at 0.75 m from z = 0.6 to 3.5.
  const std::string scene = R"({"step": 0.02,
    "ground": {"file": ")" + test::kDemo +
                            R"(/stairs.obj", "cell_size": 0.25, "max_step": 0.2},
    "agents": [{"position": [0.5, -2.5], "goal": [0.5, -2.0]}],
    "characters": {"walk": ")" +
                            test::kDemo + R"(/pab_walk.glb"},
    "camera": {"eye": [0.5, 5, -6], "target": [0.5, 0.5, 1]}})";
  Camera camera;
  camera.eye = {0.5f, 5, -6};
  camera.target = {0.5f, 0.5f, 1};
  const composite::Image im = draw(scene, false);
  const auto slate = lit_from_above(pipeline::CrowdDrawer::ground_colour());
  expect_colour(im, camera, {0.5f, 0.75f, 2.0f}, slate);  // the landing
  expect_colour(im, camera, {1.5f, 0.0f, -1.5f}, slate);  // the floor, beside the agent
}

}  // namespace
}  // namespace kinema::crowd_picture_test
