// Image checks: the character lands where the camera projects it, the ground grid shows below
// it, LBS and DQS differ at a bent elbow (and only there), output is deterministic, bare
// skeletons are drawn as capsules, contact sheets tile, PNGs round-trip, bad input is refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numbers>
#include <string>
#include <vector>

#include "kinema/character/asset.h"
#include "kinema/composite/image_file.h"
#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/render/clip_render.h"
#include "kinema/skeleton/skeleton.h"
#include "render/render_fixture.h"

#define STB_IMAGE_STATIC
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_PNG
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#endif
#include <stb/stb_image.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

namespace kinema {
namespace {

using test::is_background;

Image decode(const std::string& png) {
  int w = 0, h = 0, c = 0;
  unsigned char* p = stbi_load_from_memory(reinterpret_cast<const unsigned char*>(png.data()),
                                           int(png.size()), &w, &h, &c, 4);
  Image im;
  if (!p) return im;
  im = Image(w, h);
  std::copy_n(p, im.rgba.size(), im.rgba.begin());
  stbi_image_free(p);
  return im;
}

// Pixel rectangle covering the projection of a box's corners.
struct Rect {
  float x0 = 1e30f, y0 = 1e30f, x1 = -1e30f, y1 = -1e30f;
  bool contains(int x, int y, float margin) const {
    return float(x) + 0.5f >= x0 - margin && float(x) + 0.5f <= x1 + margin &&
           float(y) + 0.5f >= y0 - margin && float(y) + 0.5f <= y1 + margin;
  }
};

Rect project_box(const Camera& cam, int w, int h, const Bounds3f& b) {
  Rect r;
  for (int i = 0; i < 8; ++i) {
    const Vec3f k{(i & 1) ? b.max.x : b.min.x, (i & 2) ? b.max.y : b.min.y,
                  (i & 4) ? b.max.z : b.min.z};
    float x = 0, y = 0;
    EXPECT_TRUE(project_to_pixel(cam, w, h, k, x, y));
    r.x0 = std::min(r.x0, x);
    r.x1 = std::max(r.x1, x);
    r.y0 = std::min(r.y0, y);
    r.y1 = std::max(r.y1, y);
  }
  return r;
}

ClipRenderOptions small(CameraMode camera, bool ground) {
  ClipRenderOptions o;
  o.target.width = 320;
  o.target.height = 240;
  o.camera = camera;
  o.ground = ground;
  return o;
}

// The character (drawn without the ground) covers its projected bounds and stays inside them.
void expect_silhouette_in_bounds(const Asset& asset, int clip, double t, CameraMode mode) {
  ClipRenderer r(asset, clip, small(mode, false));
  const Image im = r.frame(t);
  const Rect box = project_box(r.camera_at(t), im.width, im.height, r.bounds_at(t));
  EXPECT_GT(box.x0, 0.0f);
  EXPECT_LT(box.x1, float(im.width));
  EXPECT_GT(box.y0, 0.0f);
  EXPECT_LT(box.y1, float(im.height));
  long inside = 0, outside = 0;
  for (int y = 0; y < im.height; ++y)
    for (int x = 0; x < im.width; ++x)
      if (!is_background(im, x, y)) (box.contains(x, y, 1.5f) ? inside : outside)++;
  const float area = (box.x1 - box.x0) * (box.y1 - box.y0);
  EXPECT_EQ(outside, 0);
  EXPECT_GT(float(inside), 0.08f * area) << "silhouette too small for its bounds";
  EXPECT_GT(area, 0.05f * float(im.width * im.height)) << "the camera should frame the character";
}

class RenderImage : public test::RenderTest {};

TEST_F(RenderImage, SkinnedCharacterLandsInItsProjectedBounds) {
  const Asset rf = load_asset(test::data("gltf/RiggedFigure.glb"));
  for (const CameraMode mode : {CameraMode::Front, CameraMode::Follow, CameraMode::Orbit})
    expect_silhouette_in_bounds(rf, 0, 0.4 * rf.clips[0].duration, mode);
  const Asset godette = load_asset(test::data("vrm/Godette_vrm_v4.vrm"));
  expect_silhouette_in_bounds(godette, godette.clips.empty() ? -1 : 0, 0, CameraMode::Front);
}

TEST_F(RenderImage, TransparentBackgroundGivesCoverageAsAlpha) {
  const Asset rf = load_asset(test::data("gltf/RiggedFigure.glb"));
  ClipRenderOptions o = small(CameraMode::Front, false);
  const double t = 0.4 * rf.clips[0].duration;
  const Image opaque = ClipRenderer(rf, 0, o).frame(t);
  o.transparent_background = true;
  const Image cut = ClipRenderer(rf, 0, o).frame(t);
  long transparent = 0, solid = 0, edge = 0;
  for (int y = 0; y < cut.height; ++y)
    for (int x = 0; x < cut.width; ++x) {
      const uint8_t* p = cut.pixel(x, y);
      if (p[3] == 0) {
        ++transparent;
        EXPECT_TRUE(is_background(opaque, x, y)) << x << "," << y;
        EXPECT_EQ(p[0] + p[1] + p[2], 0) << "premultiplied: no colour without coverage";
      } else if (p[3] == 255) {
        ++solid;
        EXPECT_FALSE(is_background(opaque, x, y)) << x << "," << y;
        EXPECT_TRUE(std::equal(p, p + 3, opaque.pixel(x, y))) << "the same shading inside";
      } else {
        ++edge;
        // The target stores encode(premultiplied linear colour): decoded, colour ≤ alpha.
        for (int c = 0; c < 3; ++c)
          EXPECT_LE(composite::srgb_to_linear(float(p[c]) / 255.0f), float(p[3]) / 255.0f + 0.01f)
              << "premultiplied colour ≤ alpha";
      }
    }
  EXPECT_GT(transparent, cut.width * cut.height / 2);
  EXPECT_GT(solid, 500);
  EXPECT_GT(edge, 50);  // anti-aliased edges from the MSAA resolve
}

TEST_F(RenderImage, BvhSkeletonIsDrawnAsCapsules) {
  const Asset bvh = load_asset(test::data("bvh/cmu_cgspeed_mb/02_01.bvh"));
  ASSERT_TRUE(bvh.meshes.empty());
  ClipRenderer r(bvh, 0, small(CameraMode::Follow, false));
  EXPECT_TRUE(r.renderer().draws_capsules());
  EXPECT_EQ(r.renderer().mesh_count(), 1u);
  expect_silhouette_in_bounds(bvh, 0, 0.5 * bvh.clips[0].duration, CameraMode::Follow);
}

TEST_F(RenderImage, GroundGridShowsBelowTheCharacter) {
  const Asset rf = load_asset(test::data("gltf/RiggedFigure.glb"));
  ClipRenderer r(rf, 0, small(CameraMode::Front, true));
  const double t = 0.3 * rf.clips[0].duration;
  const Image im = r.frame(t);
  const Bounds3f b = r.bounds_at(t);
  const Camera cam = r.camera_at(t);
  // Ground patches on y = 0 beside and behind the feet (in view, not hidden by the body).
  int ground = 0, samples = 0, lo = 255, hi = 0;
  for (float dz = -1.5f; dz < 0.0f; dz += 0.01f)
    for (float dx = 0.1f; dx <= 0.7f; dx += 0.05f) {
      float x = 0, y = 0;
      const Vec3f p{(dx < 0.4f ? b.max.x + dx : b.min.x - dx + 0.3f), 0, b.max.z + dz};
      if (!project_to_pixel(cam, im.width, im.height, p, x, y)) continue;
      if (x < 0 || y < 0 || x >= float(im.width) || y >= float(im.height)) continue;
      const uint8_t* px = im.pixel(int(x), int(y));
      ++samples;
      if (!is_background(im, int(x), int(y)) && std::abs(px[0] - px[2]) < 12) ++ground;
      lo = std::min<int>(lo, px[1]);
      hi = std::max<int>(hi, px[1]);
    }
  ASSERT_GT(samples, 100);
  EXPECT_GT(ground, samples * 9 / 10) << "grey ground expected below the character";
  EXPECT_GT(hi - lo, 40) << "grid lines expected on the ground";
  // The sky stays above the horizon: the top row is background.
  int sky = 0;
  for (int x = 0; x < im.width; ++x) sky += is_background(im, x, 0) ? 1 : 0;
  EXPECT_GT(sky, im.width * 9 / 10);
}

// A tube along +X (shoulder at 0, elbow at 1, hand at 2), weights blended around the elbow.
Asset bent_tube() {
  Asset a;
  std::vector<Joint> joints(2);
  joints[0].name = "upper";
  joints[0].rest.translation = {0, 1, 0};
  joints[1].name = "lower";
  joints[1].parent = 0;
  joints[1].rest.translation = {1, 0, 0};
  a.skeleton = Skeleton::build(joints, true);
  Mesh m;
  m.name = "tube";
  m.skin = 0;
  m.influences = 4;
  constexpr int kRings = 81, kAround = 24;
  constexpr float kRadius = 0.15f;
  for (int i = 0; i < kRings; ++i) {
    const float x = 2.0f * float(i) / (kRings - 1);
    const float w1 = std::clamp((x - 0.75f) / 0.5f, 0.0f, 1.0f);
    for (int k = 0; k < kAround; ++k) {
      const float a_ = 2 * std::numbers::pi_v<float> * float(k) / kAround;
      m.positions.push_back({x, 1 + kRadius * std::cos(a_), kRadius * std::sin(a_)});
      m.normals.push_back({0, std::cos(a_), std::sin(a_)});
      m.joints.insert(m.joints.end(), {0, 1, 0, 0});
      m.weights.insert(m.weights.end(), {1 - w1, w1, 0, 0});
    }
  }
  for (int i = 0; i + 1 < kRings; ++i)
    for (int k = 0; k < kAround; ++k) {
      const uint32_t i0 = uint32_t(i * kAround + k), i1 = uint32_t(i * kAround + (k + 1) % kAround);
      m.indices.insert(m.indices.end(), {i0, i1, i0 + kAround, i1, i1 + kAround, i0 + kAround});
    }
  a.meshes.push_back(m);
  Skin s;
  s.joints = {0, 1};
  s.inverse_bind = {Mat4::translation({0, -1, 0}), Mat4::translation({-1, -1, 0})};
  a.skins.push_back(s);
  return a;
}

TEST_F(RenderImage, LbsAndDqsDifferAtTheBentElbowOnly) {
  const Asset tube = bent_tube();
  Renderer& r = renderer(320, 240);
  r.set_asset(tube, "tube");
  std::vector<Transform> local = tube.skeleton.rest_pose();
  local[1].rotation = Quat::from_axis_angle({0, 0, 1}, std::numbers::pi / 2);  // bend 90°
  std::vector<Mat4> pose(2);
  ASSERT_TRUE(local_to_model(tube.skeleton.parents(), local, pose));
  Camera cam;
  cam.target = {0.6f, 1.4f, 0};
  cam.eye = {0.6f, 1.4f, 5};
  DrawOptions d;
  d.ground = false;
  d.skinning = SkinningMethod::Lbs;
  const Image lbs = r.render(pose, cam, d);
  d.skinning = SkinningMethod::Dqs;
  const Image dqs = r.render(pose, cam, d);
  float ex = 0, ey = 0;
  ASSERT_TRUE(project_to_pixel(cam, 320, 240, {1, 1, 0}, ex, ey));
  float ux = 0, uy = 0;  // one metre in pixels at the elbow's depth
  ASSERT_TRUE(project_to_pixel(cam, 320, 240, {2, 1, 0}, ux, uy));
  const float metre = ux - ex;
  long near_elbow = 0, far_from_elbow = 0;
  for (int y = 0; y < 240; ++y)
    for (int x = 0; x < 320; ++x) {
      const uint8_t *a = lbs.pixel(x, y), *b = dqs.pixel(x, y);
      const int diff = std::abs(a[0] - b[0]) + std::abs(a[1] - b[1]) + std::abs(a[2] - b[2]);
      if (diff < 24) continue;
      const float dist = std::hypot(float(x) + 0.5f - ex, float(y) + 0.5f - ey);
      (dist < 0.45f * metre ? near_elbow : far_from_elbow)++;
    }
  if (const char* dir = std::getenv("KINEMA_RENDER_SAVE_DIR")) {  // for a look: LBS | DQS
    const Image pair[] = {lbs, dqs};
    write_png(contact_sheet(pair), std::string(dir) + "/render-elbow-lbs-dqs.png");
  }
  EXPECT_GT(near_elbow, 150) << "DQS keeps the elbow's volume, LBS collapses it";
  EXPECT_LT(far_from_elbow, near_elbow / 20) << "the difference belongs at the elbow";
}

TEST_F(RenderImage, SameInputGivesTheSameImage) {
  const Asset rf = load_asset(test::data("gltf/RiggedFigure.glb"));
  const double t = 0.7 * rf.clips[0].duration;
  ClipRenderer a(rf, 0, small(CameraMode::Orbit, true));
  const Image first = a.frame(t);
  const Image again = a.frame(t);
  ClipRenderer b(rf, 0, small(CameraMode::Orbit, true));
  const Image other = b.frame(t);
  EXPECT_EQ(first.rgba, again.rgba);
  EXPECT_EQ(first.rgba, other.rgba);
  EXPECT_NE(first.rgba, a.frame(0.2 * rf.clips[0].duration).rgba) << "the pose must show";
}

TEST(RenderSheet, TilesLeftToRightTopToBottom) {
  std::vector<Image> tiles;
  for (int i = 0; i < 5; ++i) {
    Image t(4, 3);
    for (size_t p = 0; p < t.rgba.size(); p += 4) {
      t.rgba[p] = uint8_t(10 * (i + 1));
      t.rgba[p + 3] = 255;
    }
    tiles.push_back(t);
  }
  const Image s = contact_sheet(tiles);  // ⌈√5⌉ = 3 columns, 2 rows
  ASSERT_EQ(s.width, 12);
  ASSERT_EQ(s.height, 6);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(s.pixel((i % 3) * 4 + 1, (i / 3) * 3 + 1)[0], 10 * (i + 1));
  EXPECT_EQ(s.pixel(9, 4)[0], 48);  // the empty sixth cell
  const Image two = contact_sheet(tiles, 5);
  EXPECT_EQ(two.width, 20);
  EXPECT_EQ(two.height, 3);
  tiles[2] = Image(5, 3);
  EXPECT_THROW(contact_sheet(tiles), Error);
  EXPECT_THROW(contact_sheet(std::span<const Image>()), Error);
}

TEST_F(RenderImage, ContactSheetFileHoldsTheFrames) {
  const Asset bvh = load_asset(test::data("bvh/cmu_cgspeed_mb/02_01.bvh"));
  const std::string path = ::testing::TempDir() + "/kinema_sheet_test.png";
  ClipRenderOptions o = small(CameraMode::Front, true);
  render_contact_sheet_to_png(bvh, 0, 4, o, path);
  const Image sheet = decode(read_file(path));
  ASSERT_EQ(sheet.width, 640);
  ASSERT_EQ(sheet.height, 480);
  ClipRenderer r(bvh, 0, o);
  const Image last = r.frame(r.duration());
  for (int y = 0; y < 240; ++y)  // the fourth tile, bottom right, is the last frame
    ASSERT_TRUE(
        std::equal(last.pixel(0, y), last.pixel(0, y) + 320 * 4, sheet.pixel(320, 240 + y)));
  std::remove(path.c_str());
}

TEST(RenderPng, RoundTripsPixels) {
  Image im(7, 5);
  for (size_t i = 0; i < im.rgba.size(); ++i) im.rgba[i] = uint8_t(i * 37 % 251);
  const Image back = decode(encode_png(im));
  EXPECT_EQ(back.width, 7);
  EXPECT_EQ(back.height, 5);
  EXPECT_EQ(back.rgba, im.rgba);
  EXPECT_THROW(encode_png(Image()), Error);
  EXPECT_THROW(write_png(im, "/nonexistent-folder/x.png"), Error);
}

TEST(RenderCamera, TargetProjectsToTheCentre) {
  Camera cam;
  cam.eye = {3, 2, 5};
  cam.target = {0.5f, 1, -0.2f};
  float x = 0, y = 0;
  ASSERT_TRUE(project_to_pixel(cam, 640, 480, cam.target, x, y));
  EXPECT_NEAR(x, 320, 1e-3);
  EXPECT_NEAR(y, 240, 1e-3);
  ASSERT_TRUE(project_to_pixel(cam, 640, 480, cam.target + Vec3f{0, 0.1f, 0}, x, y));
  EXPECT_LT(y, 240);                                                                 // up is up
  EXPECT_FALSE(project_to_pixel(cam, 640, 480, cam.eye * 2.0f - cam.target, x, y));  // behind
}

TEST_F(RenderImage, BadMeshesAndCallsAreRefused) {
  Renderer& r = renderer();
  Asset bad = bent_tube();
  bad.meshes[0].joints[5] = 7;  // outside the 2-joint skin
  EXPECT_THROW(r.set_asset(bad, "bad.glb"), Error);
  bad = bent_tube();
  bad.meshes[0].positions[3].y = std::nanf("");
  EXPECT_THROW(r.set_asset(bad, "bad.glb"), Error);
  bad = bent_tube();
  bad.meshes[0].weights[0] = bad.meshes[0].weights[1] = 0;  // sums to zero
  EXPECT_THROW(r.set_asset(bad, "bad.glb"), Error);
  bad = bent_tube();
  bad.meshes[0].indices[4] = 1u << 30;
  try {
    r.set_asset(bad, "bad.glb");
    ADD_FAILURE() << "an index outside the mesh must be refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.file(), "bad.glb");
    EXPECT_NE(e.place().find("tube"), std::string::npos);
  }
  r.set_asset(bent_tube(), "tube");
  const std::vector<Mat4> wrong(5);
  EXPECT_THROW(r.render(wrong, Camera{}), Error);
  RendererOptions o;
  o.width = 0;
  EXPECT_THROW(Renderer{o}, Error);
  o.width = 9000;
  EXPECT_THROW(Renderer{o}, Error);
}

}  // namespace
}  // namespace kinema

namespace kinema {
namespace {

// Horizontal unit direction from the camera's target to its eye.
Vec3f horizontal_view(const Camera& c) {
  const Vec3f d = c.eye - c.target;
  return normalize(Vec3f{d.x, 0, d.z});
}

TEST_F(RenderImage, FrontCameraTurnsWithTheCharacter) {
  Asset godette = load_asset(test::data("vrm/Godette_vrm_v4.vrm"));
  ASSERT_TRUE(godette.humanoid);
  const Vec3f before =
      horizontal_view(ClipRenderer(godette, -1, small(CameraMode::Front, true)).camera_at(0));
  // The camera is on the side the character faces: its left hand is on the image's right.
  {
    ClipRenderer r(godette, -1, small(CameraMode::Front, true));
    const std::vector<Mat4> pose = r.pose_at(0);
    const Vec3f left(pose[size_t(godette.humanoid->find("leftHand"))].translation_part());
    const Vec3f right(pose[size_t(godette.humanoid->find("rightHand"))].translation_part());
    float lx = 0, rx = 0, y = 0;
    ASSERT_TRUE(project_to_pixel(r.camera_at(0), 320, 240, left, lx, y));
    ASSERT_TRUE(project_to_pixel(r.camera_at(0), 320, 240, right, rx, y));
    EXPECT_GT(lx, rx + 50);
  }
  // Turn the whole character 90° about +Y: the front camera turns with it.
  for (const int root : godette.skeleton.roots())
    godette.skeleton.rest(root).rotation = Quat::from_axis_angle({0, 1, 0}, std::numbers::pi / 2) *
                                           godette.skeleton.rest(root).rotation;
  const Vec3f after =
      horizontal_view(ClipRenderer(godette, -1, small(CameraMode::Front, true)).camera_at(0));
  const Vec3f expected{before.z, 0, -before.x};  // `before` turned 90° about +Y
  EXPECT_NEAR(dot(after, expected), 1.0f, 1e-3f);
}

}  // namespace
}  // namespace kinema

namespace kinema {
namespace {

/// A unit square on the ground (one rigid mesh on one joint) with one morph target that lifts
/// it 1 m, and a clip whose weight goes 0 → 1 over 1 s.
Asset lifted_square() {
  Asset a;
  a.skeleton = Skeleton::build({Joint{"root", kNoParent, {}, {}}});
  Mesh m;
  m.name = "square";
  m.node = 0;
  m.positions = {{0, 0, 0}, {1, 0, 0}, {1, 0, 1}, {0, 0, 1}};
  m.indices = {0, 2, 1, 0, 3, 2};
  m.morph_targets.push_back({"up", std::vector<Vec3f>(4, Vec3f{0, 1, 0}), {}});
  m.default_weights = {0};
  a.meshes.push_back(m);
  Clip c;
  c.name = "lift";
  c.duration = 1;
  c.tracks.resize(1);
  MorphTrack t;
  t.mesh = 0;
  t.target_count = 1;
  t.times = {0, 1};
  t.values = {0, 1};
  c.morph_tracks.push_back(t);
  a.clips.push_back(c);
  return a;
}

TEST(ClipRender, MorphTargetsFollowTheClipsWeights) {
  // The bounds (read back from the GPU's vertex stage) rise with the weight: 0 m at 0 s, 0.5 m at
  // 0.5 s, 1 m at 1 s; the rest pose (no clip) uses the default weight 0.
  const Asset a = lifted_square();
  ClipRenderer r(a, 0, ClipRenderOptions{});
  EXPECT_NEAR(r.bounds_at(0).min.y, 0.0f, 1e-6f);
  EXPECT_NEAR(r.bounds_at(0.5).min.y, 0.5f, 1e-6f);
  EXPECT_NEAR(r.bounds_at(1).max.y, 1.0f, 1e-6f);
  EXPECT_NEAR(r.bounds().max.y, 1.0f, 1e-6f);  // framed over the whole clip
  const Image lifted = r.frame(1);
  ClipRenderer rest(a, -1, ClipRenderOptions{});
  EXPECT_NEAR(rest.bounds_at(1).max.y, 0.0f, 1e-6f);
  EXPECT_GT(lifted.width, 0);
}

}  // namespace
}  // namespace kinema
