// Materials as the renderer draws them: base colour factors, textures (sRGB-decoded), vertex
// colours, KHR_texture_transform, alpha modes, double-sidedness, normal maps, MToon's toon
// shading and outlines; the key light's shadow on the ground and on a shadow catcher.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kinema/composite/image_file.h"
#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/render/clip_render.h"
#include "kinema/render/environment.h"
#include "render/render_fixture.h"

namespace kinema {
namespace {

/// A PNG texture of w × h RGBA8 pixels given row by row (top first).
Texture png_texture(int w, int h, const std::vector<std::array<uint8_t, 4>>& pixels,
                    bool nearest = true) {
  Image im(w, h);
  for (int i = 0; i < w * h; ++i)
    for (int c = 0; c < 4; ++c) im.rgba[size_t(i) * 4 + size_t(c)] = pixels[size_t(i)][size_t(c)];
  const std::string bytes = encode_png(im);
  Texture t;
  t.mime_type = "image/png";
  t.encoded = std::make_shared<const std::vector<uint8_t>>(bytes.begin(), bytes.end());
  t.nearest = nearest;
  t.wrap_s = t.wrap_t = TextureWrap::Repeat;
  return t;
}

/// The test fixture's 2 × 2 m wall facing +Z, with texture coordinates (v down: the top edge is
/// v = 0) and one material.
Asset wall_with(const Material& material, std::vector<Texture> textures = {}) {
  Asset a = test::wall();
  a.meshes[0].uvs = {{0, 1}, {1, 1}, {1, 0}, {0, 0}};
  a.meshes[0].material = 0;
  a.materials = {material};
  a.textures = std::move(textures);
  return a;
}

Material unlit(std::array<float, 4> colour = {1, 1, 1, 1}) {
  Material m;
  m.unlit = true;
  m.base_color = colour;
  return m;
}

class MaterialRender : public test::RenderTest {
 protected:
  Image draw(const Asset& asset, DrawOptions options = {}, Camera camera = {}) {
    Renderer& r = renderer(160, 120);
    r.set_asset(asset);
    options.ground = false;  // only the wall
    const std::vector<Mat4> pose(size_t(asset.skeleton.joint_count()), Mat4::identity());
    return r.render(pose, camera, options);
  }
};

std::array<int, 3> rgb(const Image& im, int x, int y) {
  const uint8_t* p = im.pixel(x, y);
  return {p[0], p[1], p[2]};
}

void expect_near(std::array<int, 3> got, std::array<int, 3> want, int tolerance, const char* what) {
  for (int c = 0; c < 3; ++c)
    EXPECT_NEAR(got[size_t(c)], want[size_t(c)], tolerance) << what << ", channel " << c;
}

int encoded(float linear) { return int(std::lround(composite::linear_to_srgb(linear) * 255)); }

TEST_F(MaterialRender, UnlitTextureTimesFactorTimesVertexColourInLinearLight) {
  Material m = unlit({1, 1, 1, 1});
  m.base_color_texture.texture = 0;
  // sRGB (255, 128, 0) → linear (1, 0.2158, 0), then × 0.5 by the vertex colours.
  Asset a = wall_with(m, {png_texture(1, 1, {{255, 128, 0, 255}})});
  expect_near(rgb(draw(a), 80, 60), {255, 128, 0}, 1, "texture alone");
  a.meshes[0].colours.assign(4, std::array<float, 4>{0.5f, 0.5f, 0.5f, 1});
  expect_near(rgb(draw(a), 80, 60),
              {encoded(0.5f), encoded(0.5f * composite::srgb_to_linear(128 / 255.0f)), 0}, 2,
              "texture × vertex colour");
  a.meshes[0].colours.clear();
  a.materials[0].base_color = {0.25f, 1, 1, 1};
  expect_near(rgb(draw(a), 80, 60), {encoded(0.25f), 128, 0}, 2, "texture × factor");
}

TEST_F(MaterialRender, TextureTransformOffsetSwapsTheHalves) {
  Material m = unlit();
  m.base_color_texture.texture = 0;
  const Asset plain = wall_with(m, {png_texture(2, 1, {{255, 0, 0, 255}, {0, 0, 255, 255}})});
  const Image before = draw(plain);
  expect_near(rgb(before, 60, 60), {255, 0, 0}, 1, "left half");
  expect_near(rgb(before, 100, 60), {0, 0, 255}, 1, "right half");
  Asset shifted = plain;
  shifted.materials[0].base_color_texture.transform.offset = {0.5f, 0};
  const Image after = draw(shifted);
  expect_near(rgb(after, 60, 60), {0, 0, 255}, 1, "left half, shifted");
  expect_near(rgb(after, 100, 60), {255, 0, 0}, 1, "right half, shifted");
}

TEST_F(MaterialRender, AlphaMaskCutsOutBelowTheCutoff) {
  Material m = unlit({0, 1, 0, 1});
  m.base_color_texture.texture = 0;
  m.alpha_mode = AlphaMode::Mask;
  m.alpha_cutoff = 0.5f;
  const Asset a = wall_with(m, {png_texture(2, 1, {{255, 255, 255, 200}, {255, 255, 255, 100}})});
  const Image im = draw(a);
  expect_near(rgb(im, 60, 60), {0, 255, 0}, 1, "alpha 200/255 stays, fully opaque");
  EXPECT_TRUE(test::is_background(im, 100, 60)) << "alpha 100/255 is cut out";
  Asset opaque = a;
  opaque.materials[0].alpha_mode = AlphaMode::Opaque;
  expect_near(rgb(draw(opaque), 100, 60), {0, 255, 0}, 1, "opaque ignores alpha");
}

TEST_F(MaterialRender, BlendDrawsPremultipliedOverTheBackgroundInLinearLight) {
  const Asset a = wall_with([] {
    Material m = unlit({1, 0, 0, 0.5f});
    m.alpha_mode = AlphaMode::Blend;
    return m;
  }());
  // Over the backdrop (204, 214, 227): half of each in linear light (the sRGB target blends
  // decoded values), encoded again — (231, 157, 167), not the encoded values' mean (229, 107, 113).
  const auto half_over = [](float red, int backdrop) {
    const float light = 0.5f * red + 0.5f * composite::srgb_to_linear(float(backdrop) / 255.0f);
    return int(std::lround(composite::linear_to_srgb(light) * 255.0f));
  };
  const std::array<int, 3> expected{half_over(1, 204), half_over(0, 214), half_over(0, 227)};
  EXPECT_EQ(expected[1], 157);
  expect_near(rgb(draw(a), 80, 60), expected, 2, "half red over");
}

TEST_F(MaterialRender, MsaaEdgesAverageLinearLightAndStraightAlphaRecoversTheColour) {
  // A white unlit wall over a transparent background: an edge pixel covered by a fraction a of
  // its samples holds linear white × a, so its stored (encoded) value is encode(a) — brighter
  // than a itself, which an RGBA8 target averaging encoded values would give.
  DrawOptions transparent;
  transparent.transparent_background = true;
  const Image frame = draw(wall_with(unlit()), transparent);
  const Image straight = straight_alpha(frame);
  int edges = 0;
  for (size_t i = 0; i < frame.rgba.size(); i += 4) {
    const uint8_t* p = &frame.rgba[i];
    const uint8_t* q = &straight.rgba[i];
    EXPECT_EQ(q[3], p[3]) << "alpha as it was";
    if (p[3] == 0) {
      EXPECT_EQ(q[0] + q[1] + q[2], 0) << "no colour without coverage";
      continue;
    }
    for (int c = 0; c < 3; ++c) EXPECT_NEAR(q[c], 255, 2) << "white, straight";
    if (p[3] == 255) continue;
    ++edges;
    for (int c = 0; c < 3; ++c) EXPECT_NEAR(p[c], encoded(float(p[3]) / 255), 2) << "a = " << +p[3];
    if (p[3] >= 64 && p[3] <= 192) {
      EXPECT_GT(p[0], p[3] + 20) << "linear, not encoded, average";
    }
  }
  EXPECT_GT(edges, 20);  // the wall's top and sides
}

TEST_F(MaterialRender, SingleSidedMaterialsHideTheirBackFaces) {
  Camera behind;
  behind.eye = {0, 1, -4};
  Material m = unlit({1, 1, 0, 1});
  const Image one_sided = draw(wall_with(m), {}, behind);
  EXPECT_TRUE(test::is_background(one_sided, 80, 60));
  m.double_sided = true;
  expect_near(rgb(draw(wall_with(m), {}, behind), 80, 60), {255, 255, 0}, 1, "double-sided");
  DrawOptions flat;
  flat.materials = false;  // the debug look draws every face
  EXPECT_FALSE(test::is_background(draw(wall_with(m), flat, behind), 80, 60));
}

TEST_F(MaterialRender, NormalMapTiltsTheLightingTowardsItsDirection) {
  // The key light comes from +x (and above, in front); a map leaning the normal to +u (= +x on
  // this wall) brightens it, one leaning to −u darkens it.
  Material m;
  m.metallic = 0;
  m.roughness = 1;
  m.normal_texture.texture = 0;
  const auto brightness = [&](std::array<uint8_t, 4> texel) {
    const std::array<int, 3> c = rgb(draw(wall_with(m, {png_texture(1, 1, {texel})})), 80, 60);
    return c[0] + c[1] + c[2];
  };
  const int flat = brightness({128, 128, 255, 255});
  const int towards = brightness({218, 128, 218, 255});
  const int away = brightness({38, 128, 218, 255});
  EXPECT_GT(towards, flat + 20);
  EXPECT_LT(away, flat - 20);
}

TEST_F(MaterialRender, MToonShadeColourTakesOverWhereTheShiftedLightFallsOff) {
  Material m;
  m.base_color = {1, 0, 0, 1};
  MToon toon;
  toon.shade_color = {0, 0, 1};
  toon.shading_toony = 0.9f;
  toon.gi_equalization = 1;
  m.mtoon = toon;
  // N·L ≈ 0.45 on the wall: lit. Shifted by −1 it falls below −1 + toony: shade.
  const std::array<int, 3> lit = rgb(draw(wall_with(m)), 80, 60);
  EXPECT_GT(lit[0], 200);
  EXPECT_LT(lit[2], lit[0] / 2);
  m.mtoon->shading_shift = -1;
  const std::array<int, 3> shaded = rgb(draw(wall_with(m)), 80, 60);
  EXPECT_GT(shaded[2], 150);
  EXPECT_GT(shaded[2], shaded[0]);  // red only from the ambient light
}

TEST_F(MaterialRender, MToonOutlinesRingTheSilhouetteInTheirColour) {
  Material m = unlit({1, 1, 1, 1});
  m.unlit = false;
  MToon toon;
  toon.shade_color = {1, 1, 1};
  toon.outline_width_mode = OutlineWidthMode::ScreenCoordinates;
  toon.outline_width = 0.1f;  // of half the image height: 6 pixels of 120
  toon.outline_color = {1, 0, 1};
  toon.outline_lighting_mix = 0;
  m.mtoon = toon;
  // A closed box, so that the pushed-out back faces form a shell around the front.
  Asset a = wall_with(m);
  Mesh& box = a.meshes[0];
  box.positions = {{-0.5f, 0.5f, -0.5f}, {0.5f, 0.5f, -0.5f}, {0.5f, 1.5f, -0.5f},
                   {-0.5f, 1.5f, -0.5f}, {-0.5f, 0.5f, 0.5f}, {0.5f, 0.5f, 0.5f},
                   {0.5f, 1.5f, 0.5f},   {-0.5f, 1.5f, 0.5f}};
  box.normals.clear();
  for (const Vec3f& p : box.positions) box.normals.push_back(normalize(p - Vec3f{0, 1, 0}));
  box.uvs.assign(8, {0, 0});
  box.indices = {4, 5, 6, 4, 6, 7, 1, 0, 3, 1, 3, 2, 0, 4, 7, 0, 7, 3,
                 5, 1, 2, 5, 2, 6, 7, 6, 2, 7, 2, 3, 0, 1, 5, 0, 5, 4};
  DrawOptions with;
  DrawOptions without;
  without.outlines = false;
  const Image outlined = draw(a, with), plain = draw(a, without);
  int magenta = 0, plain_magenta = 0;
  for (int y = 0; y < 120; ++y)
    for (int x = 0; x < 160; ++x) {
      const auto is_magenta = [&](const Image& im) {
        const auto c = rgb(im, x, y);
        return c[0] > 200 && c[2] > 200 && c[1] < 60;
      };
      magenta += is_magenta(outlined);
      plain_magenta += is_magenta(plain);
    }
  EXPECT_GT(magenta, 200) << "a ring about 6 pixels wide around the box";
  EXPECT_EQ(plain_magenta, 0);
  expect_near(rgb(outlined, 80, 60), rgb(plain, 80, 60), 0, "the box's face is not covered");
}

// A low wall (0.6 m) standing on the ground casts the key light's shadow behind it, up to 0.32 m
// away: seen from behind, the ground point (−0.1, 0, −0.15) is in it, (0.6, 0, −1) is lit.
class ShadowRender : public test::RenderTest {
 protected:
  Camera above() {
    Camera c;
    c.eye = {0, 3, -3};
    c.target = {0, 0, 0};
    return c;
  }
  Image draw(DrawOptions options) {
    Renderer& r = renderer(160, 120);
    Asset a = test::wall();
    for (Vec3f& p : a.meshes[0].positions) p.y *= 0.3f;
    r.set_asset(a);
    return r.render(std::vector<Mat4>(1, Mat4::identity()), above(), options);
  }
  std::array<float, 2> pixel(Vec3f p) {
    float x = 0, y = 0;
    EXPECT_TRUE(project_to_pixel(above(), 160, 120, p, x, y));
    return {x, y};
  }
};

TEST_F(ShadowRender, TheKeyLightsShadowDarkensTheGroundBehindTheWall) {
  DrawOptions lit_only;
  lit_only.shadows = false;
  const Image with = draw({}), without = draw(lit_only);
  const auto shade = pixel({-0.1f, 0, -0.15f}), sun = pixel({0.6f, 0, -1});
  const auto sum = [](std::array<int, 3> c) { return c[0] + c[1] + c[2]; };
  const int shaded_with = sum(rgb(with, int(shade[0]), int(shade[1])));
  const int shaded_without = sum(rgb(without, int(shade[0]), int(shade[1])));
  EXPECT_LT(shaded_with, shaded_without - 60) << "in the shadow";
  EXPECT_EQ(sum(rgb(with, int(sun[0]), int(sun[1]))), sum(rgb(without, int(sun[0]), int(sun[1]))))
      << "in the light";
}

TEST_F(ShadowRender, TheShadowCatcherRecordsOnlyTheShadowAsBlackWithAlpha) {
  DrawOptions o;
  o.transparent_background = true;
  o.shadow_catcher = true;
  const Image im = draw(o);
  const auto shade = pixel({-0.1f, 0, -0.15f}), sun = pixel({0.6f, 0, -1});
  const uint8_t* s = im.pixel(int(shade[0]), int(shade[1]));
  EXPECT_GT(s[3], 60) << "the shadow's density";
  EXPECT_EQ(s[0] + s[1] + s[2], 0) << "premultiplied black";
  EXPECT_EQ(im.pixel(int(sun[0]), int(sun[1]))[3], 0) << "lit ground is not there";
  EXPECT_EQ(im.pixel(2, 2)[3], 0);
}

TEST_F(MaterialRender, AConstantEnvironmentLightsAGreyWallToAlbedoTimesItsRadiance) {
  Material m;
  m.base_color = {0.5f, 0.5f, 0.5f, 1};
  m.metallic = 0;
  m.roughness = 1;
  DrawOptions dark;
  dark.light_irradiance = {0, 0, 0};  // the environment alone
  const Image before = draw(wall_with(m), dark);
  renderer().set_environment(Environment(64, 32, Vec3f{1, 1, 1}));
  // Diffuse 0.5 · E/π = 0.5 under radiance 1 everywhere, plus a rough dielectric's few percent
  // of reflected radiance (Karis's fit: about 0.04 at normal incidence).
  const std::array<int, 3> lit = rgb(draw(wall_with(m), dark), 80, 60);
  for (const int c : lit) {
    EXPECT_GE(c, encoded(0.5f));
    EXPECT_LE(c, encoded(0.56f));
  }
  renderer().reset_environment();
  expect_near(rgb(draw(wall_with(m), dark), 80, 60), rgb(before, 80, 60), 0, "reset");
  EXPECT_THROW(renderer().set_environment(Environment{}), Error);
}

TEST_F(MaterialRender, AnUndecodableTextureIsAnErrorNamingItAndKeepsTheAsset) {
  Material m = unlit();
  m.base_color_texture.texture = 0;
  Texture broken;
  broken.name = "skin";
  broken.mime_type = "image/png";
  broken.encoded = std::make_shared<const std::vector<uint8_t>>(std::vector<uint8_t>{1, 2, 3});
  Renderer& r = renderer(160, 120);
  r.set_asset(test::wall());
  try {
    r.set_asset(wall_with(m, {broken}), "broken.glb");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("broken.glb"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("texture 0 (skin)"), std::string::npos) << e.what();
  }
  EXPECT_EQ(r.mesh_count(), 1u);  // the wall before it
}

TEST_F(MaterialRender, TheDebugRobotShowsItsRedGreenAndBlueTextures) {
  const Asset robot = load_asset(test::data("vrm/debug_robot.vrm"));
  ASSERT_EQ(robot.materials.size(), 3u);
  ClipRenderOptions o;
  o.target.width = 160;
  o.target.height = 120;
  o.camera = CameraMode::Front;
  const auto count = [&](bool materials) {
    ClipRenderer r(robot, -1, o);
    DrawOptions d;
    d.materials = materials;
    const Image im = r.renderer().render(r.pose_at(0), r.camera_at(0), d);
    std::array<int, 3> pure{};
    for (int y = 0; y < im.height; ++y)
      for (int x = 0; x < im.width; ++x) {
        const auto c = rgb(im, x, y);
        for (int k = 0; k < 3; ++k)
          pure[size_t(k)] +=
              c[size_t(k)] > 150 && c[size_t((k + 1) % 3)] < 60 && c[size_t((k + 2) % 3)] < 60;
      }
    return pure;
  };
  const auto with = count(true), without = count(false);
  for (int k = 0; k < 3; ++k) {
    EXPECT_GT(with[size_t(k)], 20) << "channel " << k;
    EXPECT_EQ(without[size_t(k)], 0) << "channel " << k;
  }
}

}  // namespace
}  // namespace kinema
