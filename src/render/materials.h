// src/render/materials.h — an asset's materials and textures on the GPU (internal).
#pragma once

#define GL_GLEXT_PROTOTYPES
#include <GL/gl.h>
#include <GL/glext.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kinema/character/material.h"

namespace kinema {
struct Asset;
}

namespace kinema::render_detail {

/// A texture decoded to RGBA8, rows top first (glTF's v = 0 is the top row).
struct DecodedTexture {
  int width = 0, height = 0;
  std::vector<uint8_t> rgba;
};

/// Decodes every texture a material of `asset` uses (PNG or JPEG, at most 16,384 pixels a side).
/// Entries no material uses stay empty. Throws kinema::Error naming `file` and the texture for a
/// missing, unsupported or undecodable image.
std::vector<DecodedTexture> decode_textures(const Asset& asset, const std::string& file);

/// The asset's materials with their textures uploaded: an sRGB and/or a linear copy of each
/// texture as the materials use it, mipmapped, with the texture's wrap modes and filter.
class GpuMaterials {
 public:
  GpuMaterials() = default;
  GpuMaterials(const GpuMaterials&) = delete;
  GpuMaterials& operator=(const GpuMaterials&) = delete;
  ~GpuMaterials();  // the context must be current

  /// Replaces the materials (the context must be current). `decoded` as decode_textures.
  void upload(const Asset& asset, const std::vector<DecodedTexture>& decoded);
  void clear();
  size_t size() const { return materials_.size(); }
  const Material& material(size_t i) const { return materials_[i]; }

  /// Sets `program`'s material uniforms (kMaterialFragmentShader's) and binds the textures of
  /// material `i` to their units; `outline`: the MToon outline shell.
  void bind(GLuint program, size_t i, bool outline) const;
  /// The vertex-shader side of an MToon outline (uOutlineMode, width, width texture); mode 0
  /// turns outlines off.
  void bind_outline(GLuint program, size_t i) const;

 private:
  struct Copies {
    GLuint srgb = 0, linear = 0;
  };
  std::vector<Material> materials_;
  std::vector<Copies> textures_;
};

}  // namespace kinema::render_detail
