// glTF / VRM materials and textures: core metallic–roughness materials,
// samplers and image bytes, KHR_materials_unlit, KHR_texture_transform,
// VRMC_materials_mtoon 1.0, VRM 0.x MToon converted to 1.0's parameters as
// three-vrm converts it, vertex colours and TEXCOORD_1, and bad data refused
// with the JSON pointer in the error.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "io/gltf_bytes.h"
#include "kinema/character/asset.h"
#include "kinema/character/material.h"
#include "kinema/character/merge.h"
#include "kinema/core/error.h"
#include "kinema/io/gltf.h"
#include "test_paths.h"

namespace kinema {
namespace {

const std::string kData = test_paths::data_dir() + "/";
constexpr double kHalfPi = 1.57079632679489661923;

std::string temp_dir() {
  const auto dir =
      std::filesystem::temp_directory_path() /
      ("kinema_material_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
       "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::create_directories(dir);
  return dir.string();
}

using test::b64;
using test::floats;

const std::string kPng("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16);
const std::string kKtx2("\xABKTX 20\xBB\r\n\x1a\n\0\0\0\0", 16);

// One triangle with TEXCOORD_0, TEXCOORD_1 and COLOR_0 (normalized unsigned
// bytes, RGBA), two images in the buffer (PNG, KTX2) and one in a data URI,
// four textures (the last without an image) and one material; the members are
// patched by the tests.
struct Doc {
  std::string materials =
      R"([{"name":"masked","alphaMode":"MASK","alphaCutoff":0.3,
      "pbrMetallicRoughness":{"baseColorFactor":[0.5,0.25,1,0.75],"metallicFactor":0.2,
        "roughnessFactor":0.7,"baseColorTexture":{"index":0,"texCoord":0,"extensions":{
          "KHR_texture_transform":{"offset":[0.5,0],"rotation":1.5707963267948966,
                                   "scale":[2,1],"texCoord":1}}},
        "metallicRoughnessTexture":{"index":2}},
      "normalTexture":{"index":0,"scale":0.5},"occlusionTexture":{"index":2,"strength":0.25},
      "emissiveFactor":[0.1,0.2,0.3],"emissiveTexture":{"index":2,"texCoord":1}}])";
  std::string textures =
      R"([{"sampler":0,"source":0},{"source":1},{"source":2,"name":"from_uri"},{}])";
  std::string samplers = R"([{"wrapS":33071,"wrapT":33648,"magFilter":9728}])";
  std::string primitive = R"("material":0)";
  std::string attributes = R"("POSITION":0,"TEXCOORD_0":1,"TEXCOORD_1":2,"COLOR_0":3)";
  std::string colour_count = "3";
  std::string extensions = "{}";
  std::string data = floats({0, 0, 0, 1, 0, 0, 0, 1, 0}) + floats({0, 0, 1, 0, 0, 1}) +
                     floats({0.5f, 0.5f, 0.25f, 0.5f, 0.5f, 0.25f}) +
                     std::string("\xFF\x00\x00\xFF\x00\x80\x00\xFF\x00\x00\xFF\x33", 12) + kPng +
                     kKtx2;

  std::string json() const {
    return R"({"asset":{"version":"2.0"},"extensionsUsed":["KHR_texture_transform"],)"
           R"("scene":0,"scenes":[{"nodes":[0]}],"nodes":[{"name":"root","mesh":0}],)"
           R"("meshes":[{"name":"tri","primitives":[{"attributes":{)" +
           attributes + "}," + primitive + R"(}]}],"buffers":[{"byteLength":128,"uri":")" +
           "data:application/octet-stream;base64," + b64(data) +
           R"("}],)"
           R"("bufferViews":[{"buffer":0,"byteOffset":0,"byteLength":36},)"
           R"({"buffer":0,"byteOffset":36,"byteLength":24},)"
           R"({"buffer":0,"byteOffset":60,"byteLength":24},)"
           R"({"buffer":0,"byteOffset":84,"byteLength":12},)"
           R"({"buffer":0,"byteOffset":96,"byteLength":16},)"
           R"({"buffer":0,"byteOffset":112,"byteLength":16}],)"
           R"("accessors":[{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3",)"
           R"("min":[0,0,0],"max":[1,1,0]},)"
           R"({"bufferView":1,"componentType":5126,"count":3,"type":"VEC2"},)"
           R"({"bufferView":2,"componentType":5126,"count":3,"type":"VEC2"},)"
           R"({"bufferView":3,"componentType":5121,"normalized":true,"count":)" +
           colour_count +
           R"(,"type":"VEC4"}],)"
           R"("images":[{"bufferView":4,"mimeType":"image/png","name":"png_in_buffer"},)"
           R"({"bufferView":5,"mimeType":"image/ktx2","name":"basis"},)"
           R"({"uri":"data:image/png;base64,)" +
           b64(kPng) + R"("}],"textures":)" + textures + R"(,"samplers":)" + samplers +
           R"(,"materials":)" + materials + R"(,"extensions":)" + extensions + "}";
  }
  /// Writes the document to a temporary .gltf and reads it.
  Asset read() const {
    const std::string path = temp_dir() + "/doc.gltf";
    std::ofstream(path, std::ios::binary) << json();
    return read_gltf(path);
  }
  /// The error reading the document gives (a test failure when there is none).
  Error error() const {
    try {
      read();
    } catch (const Error& e) {
      return e;
    }
    ADD_FAILURE() << "no error";
    return Error("", "", "no error");
  }
};

bool starts_with(const std::vector<uint8_t>& bytes, const std::string& prefix) {
  return bytes.size() >= prefix.size() &&
         std::memcmp(bytes.data(), prefix.data(), prefix.size()) == 0;
}

bool has_warning(const Asset& a, const std::string& text) {
  for (const auto& w : a.source.warnings)
    if (w.find(text) != std::string::npos) return true;
  return false;
}

/// VRM 0.x colours are gamma 2.2 encoded: three-vrm's gammaEOTF.
float gamma(double c) { return static_cast<float>(std::pow(c, 2.2)); }

// ---- TextureTransform::matrix
// ----------------------------------------------------------------

std::array<float, 2> apply(const std::array<float, 9>& m, float u, float v) {
  return {m[0] * u + m[3] * v + m[6], m[1] * u + m[4] * v + m[7]};
}

TEST(TextureTransform, MatrixIsTranslateRotateScaleAppliedToUv) {
  TextureTransform t;
  t.offset = {0.5f, 0};
  t.rotation = static_cast<float>(kHalfPi);
  t.scale = {2, 1};
  const auto m = t.matrix();
  // (1, 0) → scale (2, 0) → rotate a quarter turn counter-clockwise in u-right,
  // v-down space (u′ = cos·u + sin·v, v′ = −sin·u + cos·v) → (0, −2) → offset
  // (0.5, −2).
  const auto p = apply(m, 1, 0);
  EXPECT_NEAR(p[0], 0.5, 1e-6);
  EXPECT_NEAR(p[1], -2.0, 1e-6);
  const auto q = apply(m, 0, 1);  // (0, 1) → (0, 1) → (1, 0) → (1.5, 0)
  EXPECT_NEAR(q[0], 1.5, 1e-6);
  EXPECT_NEAR(q[1], 0.0, 1e-6);
  EXPECT_EQ(m[2], 0.f);
  EXPECT_EQ(m[5], 0.f);
  EXPECT_EQ(m[8], 1.f);
}

// The extension's example: offset (0, 1), rotation π/2, scale 0.5 uses "the
// lower left quadrant of the source image, rotated clockwise 90°": the unit
// square lands on [0, 0.5] × [0.5, 1].
TEST(TextureTransform, MatrixMapsTheSpecExampleOntoTheLowerLeftQuadrant) {
  TextureTransform t;
  t.offset = {0, 1};
  t.rotation = static_cast<float>(kHalfPi);
  t.scale = {0.5f, 0.5f};
  const auto m = t.matrix();
  const float corners[4][2] = {{0, 0}, {1, 0}, {0, 1}, {1, 1}};
  const float expected[4][2] = {{0, 1}, {0, 0.5f}, {0.5f, 1}, {0.5f, 0.5f}};
  for (int k = 0; k < 4; ++k) {
    const auto p = apply(m, corners[k][0], corners[k][1]);
    EXPECT_NEAR(p[0], expected[k][0], 1e-6) << k;
    EXPECT_NEAR(p[1], expected[k][1], 1e-6) << k;
  }
}

TEST(TextureTransform, IdentityMatrix) {
  const auto m = TextureTransform{}.matrix();
  const std::array<float, 9> id{1, 0, 0, 0, 1, 0, 0, 0, 1};
  for (size_t k = 0; k < 9; ++k) EXPECT_NEAR(m[k], id[k], 1e-7) << k;
  EXPECT_TRUE(TextureTransform{}.is_identity());
}

// ---- files
// -----------------------------------------------------------------------------------

TEST(Material, ReadsGodetteVrm0Materials) {
  const Asset a = read_gltf(kData + "vrm/Godette_vrm_v4.vrm");
  ASSERT_EQ(a.materials.size(), 4u);
  ASSERT_EQ(a.textures.size(), 5u);
  const char* names[] = {"Face", "Body", "GodotLogo", "Backpack"};
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(a.materials[i].name, names[i]);
  // The meshes: FaceMesh (material 0), BodyMesh's three primitives (materials
  // 1, 2, 3).
  ASSERT_EQ(a.meshes.size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(a.meshes[i].material, static_cast<int>(i));

  // Textures: images are kept as their encoded bytes, MIME type from the bytes.
  const char* mimes[] = {"image/png", "image/png", "image/png", "image/jpeg", "image/jpeg"};
  const char* texture_names[] = {"BasePaletteTexture", "512-icon", "fabricpalette", "fabric",
                                 "godette_thumbnail"};
  for (size_t i = 0; i < 5; ++i) {
    const Texture& t = a.textures[i];
    EXPECT_EQ(t.mime_type, mimes[i]) << i;
    EXPECT_EQ(t.name, texture_names[i]) << i;
    ASSERT_TRUE(t.encoded) << i;
    EXPECT_TRUE(starts_with(*t.encoded, t.mime_type == "image/png" ? "\x89PNG" : "\xFF\xD8\xFF"));
    EXPECT_EQ(t.wrap_s, TextureWrap::Repeat);
    EXPECT_EQ(t.wrap_t, TextureWrap::Repeat);
    EXPECT_EQ(t.nearest, i == 1 || i == 2 || i == 3) << i;  // samplers 1: NEAREST
  }

  // "GodotLogo": glTF material as stored (VRM_USE_GLTFSHADER).
  const Material& logo = a.materials[2];
  EXPECT_EQ(logo.alpha_mode, AlphaMode::Blend);
  EXPECT_TRUE(logo.double_sided);
  EXPECT_TRUE(logo.unlit);
  EXPECT_FALSE(logo.mtoon.has_value());
  EXPECT_EQ(logo.base_color_texture.texture, 1);
  EXPECT_FLOAT_EQ(logo.metallic, 0.f);
  EXPECT_FLOAT_EQ(logo.roughness, 0.9f);

  // "Backpack": metallic–roughness texture, default factors.
  const Material& pack = a.materials[3];
  EXPECT_EQ(pack.base_color_texture.texture, 2);
  EXPECT_EQ(pack.metallic_roughness_texture.texture, 3);
  EXPECT_EQ(pack.metallic_roughness_texture.tex_coord, 0);
  EXPECT_FLOAT_EQ(pack.metallic, 1.f);
  EXPECT_FLOAT_EQ(pack.roughness, 1.f);
  EXPECT_EQ(pack.alpha_mode, AlphaMode::Opaque);
  EXPECT_FALSE(pack.unlit);
  EXPECT_FALSE(pack.mtoon.has_value());
}

// "Face" and "Body" are VRM/MToon in materialProperties: converted as three-vrm
// converts them (the numbers below are the file's).
TEST(Material, ConvertsGodetteVrm0MToonLikeThreeVrm) {
  const Asset a = read_gltf(kData + "vrm/Godette_vrm_v4.vrm");
  ASSERT_EQ(a.materials.size(), 4u);
  struct Expected {
    double shade_shift, shade_toony, toony,
        shift;  // 0.x values, and 1.0 ones by hand
    std::array<double, 3> shade, rim, outline;
    double rim_power, outline_width_cm, outline_mix;
  };
  const Expected expected[2] = {
      {-0.44999998807907104,
       0.800000011920929,
       0.855,
       0.305,
       {0.8270000219345093, 0.7359541058540344, 0.8500000238418579},
       {0, 0, 0},
       {0.7921571135520935, 0.7068866491317749, 0.6560236811637878},
       2.0999999046325684,
       0.25,
       0.925000011920929},
      {-0.23899999260902405,
       0.800000011920929,
       0.8761,
       0.1151,
       {0.5, 0.7857141494750977, 1},
       {0.03071345016360283, 0.09084173291921616, 0.15896086394786835},
       {0.13725483417510986, 0.7921569347381592, 0.6980392336845398},
       3,
       0.5,
       0.875},
  };
  for (size_t i = 0; i < 2; ++i) {
    SCOPED_TRACE(a.materials[i].name);
    const Material& m = a.materials[i];
    const Expected& e = expected[i];
    ASSERT_TRUE(m.mtoon.has_value());
    const MToon& t = *m.mtoon;
    // toony = lerp(toony0, 1, 0.5 + 0.5·shift0); shift = −shift0 − (1 − toony).
    const double toony = e.shade_toony + (1 - e.shade_toony) * (0.5 + 0.5 * e.shade_shift);
    EXPECT_NEAR(t.shading_toony, toony, 1e-6);
    EXPECT_NEAR(t.shading_shift, -e.shade_shift - (1 - toony), 1e-6);
    EXPECT_NEAR(t.shading_toony, e.toony, 1e-4);  // by hand
    EXPECT_NEAR(t.shading_shift, e.shift, 1e-4);
    for (size_t k = 0; k < 3; ++k) {  // vector properties: gamma 2.2 → linear
      EXPECT_NEAR(t.shade_color[k], gamma(e.shade[k]), 1e-6) << k;
      EXPECT_NEAR(t.parametric_rim_color[k], gamma(e.rim[k]), 1e-7) << k;
      EXPECT_NEAR(t.outline_color[k], gamma(e.outline[k]), 1e-6) << k;
    }
    // By hand: 0.827^2.2 and 0.5^2.2.
    EXPECT_NEAR(t.shade_color[0], i == 0 ? 0.65843 : 0.21764, 1e-5);
    EXPECT_EQ(t.shade_multiply_texture.texture, 0);
    EXPECT_NEAR(t.parametric_rim_fresnel_power, e.rim_power, 1e-6);
    EXPECT_FLOAT_EQ(t.parametric_rim_lift, 0.f);
    EXPECT_FLOAT_EQ(t.rim_lighting_mix, 1.f);
    EXPECT_EQ(t.outline_width_mode,
              OutlineWidthMode::ScreenCoordinates);  // _OutlineWidthMode 2
    EXPECT_NEAR(t.outline_width, 0.01 * e.outline_width_cm, 1e-8);
    EXPECT_NEAR(t.outline_lighting_mix, e.outline_mix,
                1e-6);                           // _OutlineColorMode 1 (mixed)
    EXPECT_NEAR(t.gi_equalization, 0.75, 1e-6);  // 1 − _IndirectLightIntensity
    EXPECT_FALSE(t.matcap_texture.present());
    EXPECT_EQ(t.render_queue_offset, 0);
    EXPECT_FALSE(t.transparent_with_z_write);
    EXPECT_FLOAT_EQ(t.uv_scroll_x, 0.f);
    // The glTF part three-vrm rebuilds: base colour from _Color, _MainTex with
    // the transform from its tiling/offset (identity here), opaque, back faces
    // culled (_CullMode 2), no unlit.
    EXPECT_EQ(m.alpha_mode, AlphaMode::Opaque);
    EXPECT_FALSE(m.double_sided);
    EXPECT_FALSE(m.unlit);
    for (float c : m.base_color) EXPECT_FLOAT_EQ(c, 1.f);
    EXPECT_EQ(m.base_color_texture.texture, 0);
    EXPECT_TRUE(m.base_color_texture.transform.is_identity());
    EXPECT_FALSE(m.normal_texture.present());
  }
  // The file's textureInfos carry KHR_texture_transform (identity) on the glTF
  // materials.
  EXPECT_FALSE(has_warning(a, "material"));
}

TEST(Material, ReadsDebugRobotUnlitPngTextures) {
  const Asset a = read_gltf(kData + "vrm/debug_robot.vrm");
  ASSERT_EQ(a.materials.size(), 3u);
  ASSERT_EQ(a.textures.size(), 3u);
  const char* names[] = {"Red", "Green", "Blue"};
  for (size_t i = 0; i < 3; ++i) {
    const Material& m = a.materials[i];
    EXPECT_EQ(m.name, names[i]);
    EXPECT_TRUE(m.unlit);
    EXPECT_FALSE(m.mtoon.has_value());
    EXPECT_EQ(m.base_color_texture.texture, static_cast<int>(i));
    const Texture& t = a.textures[i];
    EXPECT_EQ(t.name, names[i]);
    EXPECT_EQ(t.mime_type, "image/png");
    ASSERT_TRUE(t.encoded);
    EXPECT_TRUE(starts_with(*t.encoded, "\x89PNG\r\n\x1a\n"));
    EXPECT_FALSE(t.nearest);
  }
  for (const Mesh& mesh : a.meshes) EXPECT_GE(mesh.material, 0);
}

TEST(Material, ReadsGreenmanDoubleSided) {
  const Asset a = read_gltf(kData + "gltf/greenman.glb");
  ASSERT_EQ(a.materials.size(), 1u);
  const Material& m = a.materials[0];
  EXPECT_EQ(m.name, "body");
  EXPECT_TRUE(m.double_sided);
  EXPECT_FALSE(m.unlit);
  EXPECT_EQ(m.base_color_texture.texture, 0);
  EXPECT_FLOAT_EQ(m.metallic, 0.f);
  EXPECT_FLOAT_EQ(m.roughness, 0.5f);
  ASSERT_EQ(a.textures.size(), 1u);
  EXPECT_EQ(a.textures[0].mime_type, "image/png");
  ASSERT_EQ(a.meshes.size(), 1u);
  EXPECT_EQ(a.meshes[0].material, 0);
  EXPECT_TRUE(a.meshes[0].colours.empty());
  EXPECT_TRUE(a.meshes[0].uvs1.empty());
}

// ---- a document built here
// -------------------------------------------------------------------

TEST(Material, ReadsCoreMaterialTransformAndSampler) {
  const Asset a = Doc{}.read();
  ASSERT_EQ(a.materials.size(), 1u);
  const Material& m = a.materials[0];
  EXPECT_EQ(m.name, "masked");
  EXPECT_EQ(m.alpha_mode, AlphaMode::Mask);
  EXPECT_FLOAT_EQ(m.alpha_cutoff, 0.3f);
  EXPECT_FLOAT_EQ(m.base_color[1], 0.25f);
  EXPECT_FLOAT_EQ(m.base_color[3], 0.75f);
  EXPECT_FLOAT_EQ(m.metallic, 0.2f);
  EXPECT_FLOAT_EQ(m.roughness, 0.7f);
  // KHR_texture_transform with its texCoord override.
  EXPECT_EQ(m.base_color_texture.texture, 0);
  EXPECT_EQ(m.base_color_texture.tex_coord, 1);
  const TextureTransform& tt = m.base_color_texture.transform;
  EXPECT_FLOAT_EQ(tt.offset[0], 0.5f);
  EXPECT_FLOAT_EQ(tt.rotation, static_cast<float>(kHalfPi));
  EXPECT_FLOAT_EQ(tt.scale[0], 2.f);
  const auto p = apply(tt.matrix(), 1, 0);
  EXPECT_NEAR(p[0], 0.5, 1e-6);
  EXPECT_NEAR(p[1], -2.0, 1e-6);
  EXPECT_EQ(m.metallic_roughness_texture.texture, 2);
  EXPECT_EQ(m.normal_texture.texture, 0);
  EXPECT_FLOAT_EQ(m.normal_scale, 0.5f);
  EXPECT_EQ(m.occlusion_texture.texture, 2);
  EXPECT_FLOAT_EQ(m.occlusion_strength, 0.25f);
  EXPECT_FLOAT_EQ(m.emissive[2], 0.3f);
  EXPECT_EQ(m.emissive_texture.tex_coord, 1);
  EXPECT_TRUE(m.emissive_texture.transform.is_identity());
  EXPECT_FALSE(m.double_sided);
  EXPECT_FALSE(m.unlit);

  // Sampler: CLAMP_TO_EDGE / MIRRORED_REPEAT / NEAREST; a texture without one
  // repeats, linear.
  ASSERT_EQ(a.textures.size(), 4u);
  EXPECT_EQ(a.textures[0].wrap_s, TextureWrap::ClampToEdge);
  EXPECT_EQ(a.textures[0].wrap_t, TextureWrap::MirroredRepeat);
  EXPECT_TRUE(a.textures[0].nearest);
  EXPECT_EQ(a.textures[0].name, "png_in_buffer");
  ASSERT_TRUE(a.textures[0].encoded);
  EXPECT_EQ(std::string(a.textures[0].encoded->begin(), a.textures[0].encoded->end()), kPng);
  EXPECT_EQ(a.textures[2].wrap_s, TextureWrap::Repeat);
  EXPECT_FALSE(a.textures[2].nearest);
  // A data-URI image; the texture's own name wins over the image's.
  EXPECT_EQ(a.textures[2].name, "from_uri");
  ASSERT_TRUE(a.textures[2].encoded);
  EXPECT_EQ(a.textures[2].mime_type, "image/png");
  EXPECT_EQ(std::string(a.textures[2].encoded->begin(), a.textures[2].encoded->end()), kPng);
}

TEST(Material, UnsupportedImagesLeaveTexturesWithoutBytesAndWarn) {
  const Asset a = Doc{}.read();
  ASSERT_EQ(a.textures.size(), 4u);
  EXPECT_FALSE(a.textures[1].encoded);  // KTX2
  EXPECT_EQ(a.textures[1].mime_type, "image/ktx2");
  EXPECT_TRUE(has_warning(a, "/textures/1 ('basis')"));
  EXPECT_TRUE(has_warning(a, "image/ktx2"));
  EXPECT_FALSE(a.textures[3].encoded);  // no source
  EXPECT_TRUE(has_warning(a, "/textures/3"));
  EXPECT_FALSE(has_warning(a, "/textures/0"));
}

TEST(Material, ReadsVertexColoursAndSecondUvSet) {
  const Asset a = Doc{}.read();
  ASSERT_EQ(a.meshes.size(), 1u);
  const Mesh& mesh = a.meshes[0];
  EXPECT_EQ(mesh.material, 0);
  ASSERT_EQ(mesh.colours.size(), 3u);
  EXPECT_FLOAT_EQ(mesh.colours[0][0], 1.f);
  EXPECT_FLOAT_EQ(mesh.colours[0][3], 1.f);
  EXPECT_FLOAT_EQ(mesh.colours[1][1],
                  128.f / 255.f);  // normalized unsigned bytes
  EXPECT_FLOAT_EQ(mesh.colours[2][2], 1.f);
  EXPECT_FLOAT_EQ(mesh.colours[2][3], 0.2f);  // 0x33 / 255
  ASSERT_EQ(mesh.uvs.size(), 3u);
  ASSERT_EQ(mesh.uvs1.size(), 3u);
  EXPECT_FLOAT_EQ(mesh.uvs[1][0], 1.f);
  EXPECT_FLOAT_EQ(mesh.uvs1[1][0], 0.25f);
  EXPECT_FLOAT_EQ(mesh.uvs1[2][1], 0.25f);
}

TEST(Material, PrimitiveWithoutMaterialHasNone) {
  Doc d;
  d.primitive = R"("mode":4)";
  const Asset a = d.read();
  ASSERT_EQ(a.meshes.size(), 1u);
  EXPECT_EQ(a.meshes[0].material, -1);
  EXPECT_EQ(a.materials.size(), 1u);
}

TEST(Material, RgbVertexColoursGetOpaqueAlpha) {
  Doc d;
  d.attributes = R"("POSITION":0,"COLOR_0":0)";  // float VEC3 (the positions as colours)
  const Asset a = d.read();
  const Mesh& mesh = a.meshes[0];
  ASSERT_EQ(mesh.colours.size(), 3u);
  EXPECT_FLOAT_EQ(mesh.colours[1][0], 1.f);
  EXPECT_FLOAT_EQ(mesh.colours[1][1], 0.f);
  for (const auto& c : mesh.colours) EXPECT_FLOAT_EQ(c[3], 1.f);
  EXPECT_TRUE(mesh.uvs1.empty());
}

TEST(Material, ReadsVrmcMaterialsMToon) {
  Doc d;
  d.materials =
      R"([{"name":"toon","alphaMode":"BLEND","extensions":{"KHR_materials_unlit":{},
    "VRMC_materials_mtoon":{"specVersion":"1.0","transparentWithZWrite":true,
      "renderQueueOffsetNumber":3,"shadeColorFactor":[0.1,0.2,0.3],
      "shadeMultiplyTexture":{"index":0},"shadingShiftFactor":-0.2,
      "shadingShiftTexture":{"index":2,"texCoord":1,"scale":0.5},"shadingToonyFactor":0.7,
      "giEqualizationFactor":0.4,"matcapFactor":[0.5,0.6,0.7],"matcapTexture":{"index":2},
      "parametricRimColorFactor":[0.9,0.8,0.7],"parametricRimFresnelPowerFactor":3.5,
      "parametricRimLiftFactor":0.15,"rimMultiplyTexture":{"index":0,"extensions":{
        "KHR_texture_transform":{"offset":[0.25,0.5]}}},"rimLightingMixFactor":0.35,
      "outlineWidthMode":"worldCoordinates","outlineWidthFactor":0.004,
      "outlineWidthMultiplyTexture":{"index":2},"outlineColorFactor":[0.3,0.2,0.1],
      "outlineLightingMixFactor":0.6,"uvAnimationMaskTexture":{"index":0},
      "uvAnimationScrollXSpeedFactor":0.1,"uvAnimationScrollYSpeedFactor":-0.2,
      "uvAnimationRotationSpeedFactor":0.3}}}])";
  const Asset a = d.read();
  ASSERT_EQ(a.materials.size(), 1u);
  const Material& m = a.materials[0];
  EXPECT_EQ(m.alpha_mode, AlphaMode::Blend);
  EXPECT_FALSE(m.unlit);  // MToon takes precedence over its unlit fallback
  ASSERT_TRUE(m.mtoon.has_value());
  const MToon& t = *m.mtoon;
  EXPECT_TRUE(t.transparent_with_z_write);
  EXPECT_EQ(t.render_queue_offset, 3);
  EXPECT_FLOAT_EQ(t.shade_color[2], 0.3f);  // linear in 1.0: as stored
  EXPECT_EQ(t.shade_multiply_texture.texture, 0);
  EXPECT_FLOAT_EQ(t.shading_shift, -0.2f);
  EXPECT_EQ(t.shading_shift_texture.texture, 2);
  EXPECT_EQ(t.shading_shift_texture.tex_coord, 1);
  EXPECT_FLOAT_EQ(t.shading_shift_scale, 0.5f);
  EXPECT_FLOAT_EQ(t.shading_toony, 0.7f);
  EXPECT_FLOAT_EQ(t.gi_equalization, 0.4f);
  EXPECT_FLOAT_EQ(t.matcap_color[1], 0.6f);
  EXPECT_EQ(t.matcap_texture.texture, 2);
  EXPECT_FLOAT_EQ(t.parametric_rim_color[0], 0.9f);
  EXPECT_FLOAT_EQ(t.parametric_rim_fresnel_power, 3.5f);
  EXPECT_FLOAT_EQ(t.parametric_rim_lift, 0.15f);
  EXPECT_EQ(t.rim_multiply_texture.texture, 0);
  EXPECT_FLOAT_EQ(t.rim_multiply_texture.transform.offset[1], 0.5f);
  EXPECT_FLOAT_EQ(t.rim_lighting_mix, 0.35f);
  EXPECT_EQ(t.outline_width_mode, OutlineWidthMode::WorldCoordinates);
  EXPECT_FLOAT_EQ(t.outline_width, 0.004f);
  EXPECT_EQ(t.outline_width_texture.texture, 2);
  EXPECT_FLOAT_EQ(t.outline_color[0], 0.3f);
  EXPECT_FLOAT_EQ(t.outline_lighting_mix, 0.6f);
  EXPECT_EQ(t.uv_animation_mask_texture.texture, 0);
  EXPECT_FLOAT_EQ(t.uv_scroll_x, 0.1f);
  EXPECT_FLOAT_EQ(t.uv_scroll_y, -0.2f);
  EXPECT_FLOAT_EQ(t.uv_rotation, 0.3f);
}

TEST(Material, MToonDefaultsFollowTheSpec) {
  Doc d;
  d.materials = R"([{"extensions":{"VRMC_materials_mtoon":{"specVersion":"1.0"}}}])";
  const Asset a = d.read();
  ASSERT_TRUE(a.materials[0].mtoon.has_value());
  const MToon& t = *a.materials[0].mtoon;
  EXPECT_FLOAT_EQ(t.shading_toony, 0.9f);
  EXPECT_FLOAT_EQ(t.gi_equalization, 0.9f);
  EXPECT_FLOAT_EQ(t.parametric_rim_fresnel_power, 5.f);
  EXPECT_FLOAT_EQ(t.rim_lighting_mix, 1.f);
  EXPECT_FLOAT_EQ(t.outline_lighting_mix, 1.f);
  EXPECT_EQ(t.outline_width_mode, OutlineWidthMode::None);
  EXPECT_FALSE(t.shade_multiply_texture.present());
}

// VRM 0.x: "VRM/MToon" and "VRM/Unlit*" entries of materialProperties, matched
// to materials by index; transparent render queues become
// renderQueueOffsetNumber as three-vrm orders them.
TEST(Material, ConvertsVrm0MaterialPropertiesLikeThreeVrm) {
  Doc d;
  d.materials = R"([{"name":"a"},{"name":"b"},{"name":"c"},{"name":"d"}])";
  d.extensions =
      R"({"VRM":{"humanoid":{"humanBones":[{"bone":"hips","node":0}]},
    "materialProperties":[
      {"name":"a","shader":"VRM/MToon","renderQueue":3001,
       "keywordMap":{"_ALPHABLEND_ON":true},
       "floatProperties":{"_ZWrite":0,"_CullMode":0,"_ShadeShift":0.2,"_ShadeToony":0.5,
         "_OutlineWidthMode":1,"_OutlineWidth":0.3,"_OutlineColorMode":0,
         "_UvAnimScrollY":0.25,"_IndirectLightIntensity":0,"_BumpScale":0.7},
       "vectorProperties":{"_Color":[0.5,0.5,0.5,0.5],"_MainTex":[0.25,0.1,2,0.5],
         "_EmissionColor":[1,0.5,0,1]},
       "textureProperties":{"_MainTex":0,"_BumpMap":2,"_SphereAdd":2}},
      {"name":"b","shader":"VRM/MToon","renderQueue":2999,
       "keywordMap":{"_ALPHABLEND_ON":true},"floatProperties":{"_ZWrite":0}},
      {"name":"c","shader":"VRM/UnlitTransparentZWrite","renderQueue":2501,
       "vectorProperties":{"_Color":[0.5,1,1,0.5]},"textureProperties":{"_MainTex":0}},
      {"name":"d","shader":"VRM/MToon","keywordMap":{"_ALPHATEST_ON":true},
       "floatProperties":{"_Cutoff":0.4}}]}})";
  const Asset a = d.read();
  ASSERT_EQ(a.materials.size(), 4u);
  const Material& m = a.materials[0];
  ASSERT_TRUE(m.mtoon.has_value());
  EXPECT_EQ(m.alpha_mode, AlphaMode::Blend);
  EXPECT_TRUE(m.double_sided);  // _CullMode 0
  EXPECT_NEAR(m.base_color[0], std::pow(0.5, 2.2), 1e-6);
  EXPECT_FLOAT_EQ(m.base_color[3], 0.5f);  // alpha stays linear in VRM/MToon
  EXPECT_NEAR(m.emissive[1], std::pow(0.5, 2.2), 1e-6);
  // _MainTex tiling/offset (Unity, v up) → KHR_texture_transform: offset_v = 1
  // − 0.5 − 0.1.
  EXPECT_FLOAT_EQ(m.base_color_texture.transform.scale[0], 2.f);
  EXPECT_FLOAT_EQ(m.base_color_texture.transform.offset[0], 0.25f);
  EXPECT_NEAR(m.base_color_texture.transform.offset[1], 0.4, 1e-6);
  EXPECT_EQ(m.normal_texture.texture, 2);
  EXPECT_FLOAT_EQ(m.normal_scale, 0.7f);
  EXPECT_NEAR(m.normal_texture.transform.offset[1], 0.4, 1e-6);
  const MToon& t = *m.mtoon;
  EXPECT_NEAR(t.shading_toony, 0.5 + 0.5 * 0.6,
              1e-6);  // lerp(0.5, 1, 0.6) = 0.8
  EXPECT_NEAR(t.shading_shift, -0.2 - 0.2, 1e-6);
  EXPECT_FLOAT_EQ(t.gi_equalization,
                  0.9f);  // intensity 0: three-vrm keeps the default
  EXPECT_EQ(t.matcap_texture.texture, 2);
  EXPECT_TRUE(t.matcap_texture.transform.is_identity());
  EXPECT_EQ(t.outline_width_mode, OutlineWidthMode::WorldCoordinates);
  EXPECT_NEAR(t.outline_width, 0.003, 1e-8);     // 0.3 cm
  EXPECT_FLOAT_EQ(t.outline_lighting_mix, 0.f);  // fixed colour mode
  EXPECT_FLOAT_EQ(t.uv_scroll_y, -0.25f);        // v flips
  EXPECT_FLOAT_EQ(t.rim_lighting_mix, 0.f);      // the 0.x default
  EXPECT_FLOAT_EQ(t.parametric_rim_fresnel_power, 1.f);
  EXPECT_NEAR(t.shade_color[0], std::pow(0.97, 2.2),
              1e-6);  // the 0.x default shade colour
  EXPECT_FALSE(t.transparent_with_z_write);
  // Two transparent queues (3001, 2999): the later one at 0, the other below
  // it.
  EXPECT_EQ(t.render_queue_offset, 0);
  EXPECT_EQ(a.materials[1].mtoon->render_queue_offset, -1);

  const Material& unlit = a.materials[2];
  ASSERT_TRUE(unlit.mtoon.has_value());
  EXPECT_EQ(unlit.alpha_mode, AlphaMode::Blend);
  EXPECT_TRUE(unlit.mtoon->transparent_with_z_write);
  EXPECT_EQ(unlit.mtoon->render_queue_offset, 0);
  EXPECT_NEAR(unlit.base_color[3], std::pow(0.5, 2.2),
              1e-6);  // three-vrm decodes alpha too
  EXPECT_NEAR(unlit.mtoon->shade_color[0], std::pow(0.5, 2.2), 1e-6);
  EXPECT_EQ(unlit.mtoon->shade_multiply_texture.texture, 0);

  const Material& cut = a.materials[3];
  EXPECT_EQ(cut.alpha_mode, AlphaMode::Mask);
  EXPECT_FLOAT_EQ(cut.alpha_cutoff, 0.4f);
  EXPECT_FLOAT_EQ(cut.mtoon->shading_toony,
                  0.9f + 0.1f * 0.5f);  // defaults 0.9, shift 0
}

// ---- bad data
// --------------------------------------------------------------------------------

void expect_error_at(const Doc& d, const std::string& pointer) {
  const Error e = d.error();
  EXPECT_NE(std::string(e.what()).find(pointer), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("doc.gltf"), std::string::npos) << e.what();
}

TEST(Material, RejectsTextureIndexOutOfRange) {
  Doc d;
  d.materials = R"([{"pbrMetallicRoughness":{"baseColorTexture":{"index":4}}}])";
  expect_error_at(d, "/materials/0/pbrMetallicRoughness/baseColorTexture/index");
  d.materials =
      R"([{},{"extensions":{"VRMC_materials_mtoon":{"specVersion":"1.0",
      "matcapTexture":{"index":9}}}}])";
  expect_error_at(d, "/materials/1/extensions/VRMC_materials_mtoon/matcapTexture/index");
}

TEST(Material, RejectsImageIndexOutOfRange) {
  Doc d;
  d.textures = R"([{"source":3}])";
  expect_error_at(d, "/textures/0/source");
}

TEST(Material, RejectsMaterialIndexOutOfRange) {
  Doc d;
  d.primitive = R"("material":1)";
  expect_error_at(d, "/meshes/0/primitives/0/material");
}

TEST(Material, RejectsColourCountMismatch) {
  Doc d;
  d.colour_count = "2";
  const Error e = d.error();
  EXPECT_EQ(e.place(), "/accessors/3");
  EXPECT_NE(std::string(e.what()).find("COLOR_0"), std::string::npos) << e.what();
}

TEST(Material, RejectsBadNumbersAndEnums) {
  Doc d;
  d.materials = R"([{"pbrMetallicRoughness":{"baseColorTexture":{"index":0,"extensions":{
      "KHR_texture_transform":{"rotation":"a quarter turn"}}}}}])";
  expect_error_at(
      d,
      "/materials/0/pbrMetallicRoughness/baseColorTexture/extensions/KHR_texture_transform/"
      "rotation");
  d.materials = R"([{"normalTexture":{"index":0,"extensions":{
      "KHR_texture_transform":{"scale":[1,2,3]}}}}])";
  expect_error_at(d, "/materials/0/normalTexture/extensions/KHR_texture_transform/scale");
  d.materials = R"([{"alphaMode":"ADDITIVE"}])";
  expect_error_at(d, "/materials/0/alphaMode");
  d.materials = R"([{"extensions":{"VRMC_materials_mtoon":{"specVersion":"1.0",
      "outlineWidthMode":"pixels"}}}])";
  expect_error_at(d, "/materials/0/extensions/VRMC_materials_mtoon/outlineWidthMode");
  d = Doc{};
  d.samplers = R"([{"wrapS":1234}])";
  expect_error_at(d, "/samplers/0/wrapS");
  // A number JSON cannot hold as a double is refused when the document is parsed.
  d = Doc{};
  d.materials = R"([{"emissiveFactor":[1,1e999,0]}])";
  EXPECT_NE(std::string(d.error().what()).find("doc.gltf"), std::string::npos);
}

// ---- carried along
// ---------------------------------------------------------------------------

TEST(Material, MergeReindexesMaterialsAndTextures) {
  const Asset a = read_gltf(kData + "gltf/greenman.glb");
  const Asset b = read_gltf(kData + "vrm/debug_robot.vrm");
  const Asset m = merge_assets(a, -1, b, -1);
  ASSERT_EQ(m.materials.size(), 4u);
  ASSERT_EQ(m.textures.size(), 4u);
  EXPECT_EQ(m.materials[1].name, "Red");
  EXPECT_EQ(m.materials[3].base_color_texture.texture, 3);
  EXPECT_EQ(m.textures[3].name, "Blue");
  EXPECT_EQ(m.meshes[0].material, 0);
  for (size_t i = a.meshes.size(); i < m.meshes.size(); ++i)
    EXPECT_EQ(m.meshes[i].material, b.meshes[i - a.meshes.size()].material + 1);
}

}  // namespace
}  // namespace kinema
