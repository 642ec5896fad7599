// src/render/materials.cpp — textures decoded (stb_image, PNG and JPEG, compiled here with
// internal linkage) and uploaded, and a material's uniforms for kMaterialFragmentShader.
#include "materials.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "kinema/character/asset.h"
#include "kinema/core/error.h"

#define STB_IMAGE_STATIC
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_PNG
#define STBI_ONLY_JPEG
#define STBI_NO_STDIO
#define STBI_NO_LINEAR
#define STBI_NO_HDR
#define STBI_MAX_DIMENSIONS 16384
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wsign-compare"
#endif
#include <stb/stb_image.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

namespace kinema::render_detail {

namespace {

// Texture slots of the fragment shader (kMaterialFragmentShader): which TextureRef feeds each,
// and whether its texels are sRGB-encoded colours.
constexpr int kSlots = 9;
constexpr std::array<bool, kSlots> kSlotIsSrgb{true, false, false, false, true,
                                               true, false, true,  true};

std::array<const TextureRef*, kSlots> slots_of(const Material& m) {
  static const TextureRef none;
  const MToon* t = m.mtoon ? &*m.mtoon : nullptr;
  return {&m.base_color_texture,
          &m.metallic_roughness_texture,
          &m.normal_texture,
          &m.occlusion_texture,
          &m.emissive_texture,
          t ? &t->shade_multiply_texture : &none,
          t ? &t->shading_shift_texture : &none,
          t ? &t->rim_multiply_texture : &none,
          t ? &t->matcap_texture : &none};
}

std::string texture_place(const Asset& asset, size_t i) {
  const std::string& name = asset.textures[i].name;
  return "texture " + std::to_string(i) + (name.empty() ? "" : " (" + name + ")");
}

GLint wrap_of(TextureWrap w) {
  switch (w) {
    case TextureWrap::ClampToEdge:
      return GL_CLAMP_TO_EDGE;
    case TextureWrap::MirroredRepeat:
      return GL_MIRRORED_REPEAT;
    case TextureWrap::Repeat:
      break;
  }
  return GL_REPEAT;
}

GLint uniform(GLuint program, const char* name) { return glGetUniformLocation(program, name); }

}  // namespace

std::vector<DecodedTexture> decode_textures(const Asset& asset, const std::string& file) {
  std::vector<char> used(asset.textures.size(), 0);
  for (size_t mi = 0; mi < asset.materials.size(); ++mi) {
    const Material& m = asset.materials[mi];
    const auto slots = slots_of(m);
    std::vector<const TextureRef*> refs(slots.begin(), slots.end());
    if (m.mtoon) refs.push_back(&m.mtoon->outline_width_texture);
    for (const TextureRef* r : refs) {
      if (!r->present()) continue;
      if (size_t(r->texture) >= asset.textures.size())
        throw Error(file, "material " + std::to_string(mi),
                    "texture " + std::to_string(r->texture) + " does not exist");
      used[size_t(r->texture)] = 1;
    }
  }
  std::vector<DecodedTexture> out(asset.textures.size());
  for (size_t i = 0; i < asset.textures.size(); ++i) {
    if (!used[i]) continue;
    const Texture& t = asset.textures[i];
    if (!t.encoded || t.encoded->empty())
      throw Error(file, texture_place(asset, i),
                  "its image is missing or in a format kinema cannot draw (" +
                      (t.mime_type.empty() ? std::string("unknown") : t.mime_type) + ")");
    int w = 0, h = 0, channels = 0;
    stbi_uc* pixels =
        stbi_load_from_memory(t.encoded->data(), int(t.encoded->size()), &w, &h, &channels, 4);
    if (!pixels)
      throw Error(file, texture_place(asset, i),
                  std::string("the image does not decode: ") + stbi_failure_reason());
    out[i].width = w;
    out[i].height = h;
    out[i].rgba.assign(pixels, pixels + size_t(w) * size_t(h) * 4);
    stbi_image_free(pixels);
  }
  return out;
}

GpuMaterials::~GpuMaterials() { clear(); }

void GpuMaterials::clear() {
  for (Copies& c : textures_) {
    const GLuint names[] = {c.srgb, c.linear};
    glDeleteTextures(2, names);
  }
  textures_.clear();
  materials_.clear();
}

void GpuMaterials::upload(const Asset& asset, const std::vector<DecodedTexture>& decoded) {
  clear();
  materials_ = asset.materials;
  textures_.resize(asset.textures.size());
  const auto make = [&](size_t i, bool srgb) {
    const DecodedTexture& d = decoded[i];
    const Texture& t = asset.textures[i];
    GLuint name = 0;
    glCreateTextures(GL_TEXTURE_2D, 1, &name);
    const int levels = 1 + int(std::floor(std::log2(double(std::max(d.width, d.height)))));
    glTextureStorage2D(name, levels, srgb ? GL_SRGB8_ALPHA8 : GL_RGBA8, d.width, d.height);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glTextureSubImage2D(name, 0, 0, 0, d.width, d.height, GL_RGBA, GL_UNSIGNED_BYTE, d.rgba.data());
    glGenerateTextureMipmap(name);
    glTextureParameteri(name, GL_TEXTURE_WRAP_S, wrap_of(t.wrap_s));
    glTextureParameteri(name, GL_TEXTURE_WRAP_T, wrap_of(t.wrap_t));
    glTextureParameteri(name, GL_TEXTURE_MAG_FILTER, t.nearest ? GL_NEAREST : GL_LINEAR);
    glTextureParameteri(name, GL_TEXTURE_MIN_FILTER, GL_LINEAR_MIPMAP_LINEAR);
    return name;
  };
  for (const Material& m : materials_) {
    const auto refs = slots_of(m);
    for (int s = 0; s < kSlots; ++s) {
      const TextureRef& r = *refs[size_t(s)];
      if (!r.present() || decoded[size_t(r.texture)].rgba.empty()) continue;
      GLuint& copy = kSlotIsSrgb[size_t(s)] ? textures_[size_t(r.texture)].srgb
                                            : textures_[size_t(r.texture)].linear;
      if (!copy) copy = make(size_t(r.texture), kSlotIsSrgb[size_t(s)]);
    }
    if (m.mtoon && m.mtoon->outline_width_texture.present()) {
      GLuint& copy = textures_[size_t(m.mtoon->outline_width_texture.texture)].linear;
      if (!copy) copy = make(size_t(m.mtoon->outline_width_texture.texture), false);
    }
  }
}

void GpuMaterials::bind(GLuint p, size_t i, bool outline) const {
  const Material& m = materials_[i];
  const MToon mtoon = m.mtoon ? *m.mtoon : MToon{};
  const auto refs = slots_of(m);
  std::array<GLint, kSlots> on{}, set{};
  std::array<float, kSlots * 9> matrices{};
  for (int s = 0; s < kSlots; ++s) {
    const TextureRef& r = *refs[size_t(s)];
    const Copies* c = r.present() ? &textures_[size_t(r.texture)] : nullptr;
    const GLuint name = c ? (kSlotIsSrgb[size_t(s)] ? c->srgb : c->linear) : 0;
    on[size_t(s)] = name ? 1 : 0;
    set[size_t(s)] = r.tex_coord;
    const std::array<float, 9> mat = r.transform.matrix();
    std::copy(mat.begin(), mat.end(), matrices.begin() + s * 9);
    glBindTextureUnit(GLuint(s), name);
  }
  glProgramUniform1iv(p, uniform(p, "uTexOn"), kSlots, on.data());
  glProgramUniform1iv(p, uniform(p, "uTexSet"), kSlots, set.data());
  glProgramUniformMatrix3fv(p, uniform(p, "uTexMatrix"), kSlots, GL_FALSE, matrices.data());
  glProgramUniform1i(p, uniform(p, "uUseMaterial"), 1);
  glProgramUniform1i(p, uniform(p, "uShading"), m.mtoon ? 2 : m.unlit ? 1 : 0);
  glProgramUniform1i(p, uniform(p, "uOutlinePass"), outline ? 1 : 0);
  glProgramUniform4fv(p, uniform(p, "uBaseColor"), 1, m.base_color.data());
  glProgramUniform1i(p, uniform(p, "uAlphaMode"), int(m.alpha_mode));
  glProgramUniform1f(p, uniform(p, "uAlphaCutoff"), m.alpha_cutoff);
  glProgramUniform1f(p, uniform(p, "uMetallic"), m.metallic);
  glProgramUniform1f(p, uniform(p, "uRoughness"), m.roughness);
  glProgramUniform1f(p, uniform(p, "uNormalScale"), m.normal_scale);
  glProgramUniform1f(p, uniform(p, "uOcclusionStrength"), m.occlusion_strength);
  glProgramUniform3fv(p, uniform(p, "uEmissive"), 1, m.emissive.data());
  glProgramUniform3fv(p, uniform(p, "uShadeColor"), 1, mtoon.shade_color.data());
  glProgramUniform1f(p, uniform(p, "uShadingShift"), mtoon.shading_shift);
  glProgramUniform1f(p, uniform(p, "uShadingShiftScale"), mtoon.shading_shift_scale);
  glProgramUniform1f(p, uniform(p, "uShadingToony"), mtoon.shading_toony);
  glProgramUniform1f(p, uniform(p, "uGiEqualization"), mtoon.gi_equalization);
  glProgramUniform3fv(p, uniform(p, "uMatcapColor"), 1, mtoon.matcap_color.data());
  glProgramUniform3fv(p, uniform(p, "uRimColor"), 1, mtoon.parametric_rim_color.data());
  glProgramUniform1f(p, uniform(p, "uRimFresnelPower"), mtoon.parametric_rim_fresnel_power);
  glProgramUniform1f(p, uniform(p, "uRimLift"), mtoon.parametric_rim_lift);
  glProgramUniform1f(p, uniform(p, "uRimLightingMix"), mtoon.rim_lighting_mix);
  glProgramUniform3fv(p, uniform(p, "uOutlineColor"), 1, mtoon.outline_color.data());
  glProgramUniform1f(p, uniform(p, "uOutlineLightingMix"), mtoon.outline_lighting_mix);
}

void GpuMaterials::bind_outline(GLuint p, size_t i) const {
  const Material& m = materials_[i];
  int mode = 0;
  float width = 0;
  GLuint texture = 0;
  const TextureRef* ref = nullptr;
  if (m.mtoon && m.mtoon->outline_width > 0) {
    mode = m.mtoon->outline_width_mode == OutlineWidthMode::WorldCoordinates    ? 1
           : m.mtoon->outline_width_mode == OutlineWidthMode::ScreenCoordinates ? 2
                                                                                : 0;
    width = m.mtoon->outline_width;
    ref = &m.mtoon->outline_width_texture;
    if (ref->present()) texture = textures_[size_t(ref->texture)].linear;
  }
  glProgramUniform1i(p, uniform(p, "uOutlineMode"), mode);
  glProgramUniform1f(p, uniform(p, "uOutlineWidth"), width);
  glProgramUniform1i(p, uniform(p, "uOutlineTexOn"), texture ? 1 : 0);
  glProgramUniform1i(p, uniform(p, "uOutlineTexSet"), ref ? ref->tex_coord : 0);
  const std::array<float, 9> mat = ref ? ref->transform.matrix() : TextureTransform{}.matrix();
  glProgramUniformMatrix3fv(p, uniform(p, "uOutlineTexMatrix"), 1, GL_FALSE, mat.data());
  glBindTextureUnit(9, texture);
  glProgramUniform1i(p, uniform(p, "uOutlineWidthTex"), 9);
}

}  // namespace kinema::render_detail
