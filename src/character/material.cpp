// Surface materials (kinema/character/material.h): the KHR_texture_transform matrix.
#include "kinema/character/material.h"

#include <cmath>

namespace kinema {

std::array<float, 9> TextureTransform::matrix() const {
  // uv′ = T(offset) · R(rotation) · S(scale) · uv. R turns uv counter-clockwise in glTF's
  // u-right, v-down texture space: u′ = cos·u + sin·v, v′ = −sin·u + cos·v. This is the
  // rotation every implementation of the extension applies (Khronos glTF-Sample-Viewer,
  // Babylon.js, three.js, Blender) and the one the extension's example JSON and its
  // TextureTransformTest sample model need; the GLSL listing in the extension's README has the
  // transposed matrix, a known erratum (KhronosGroup/glTF issue #1563). VRMC_materials_mtoon's
  // UV rotation states the same matrix.
  const double c = std::cos(static_cast<double>(rotation));
  const double s = std::sin(static_cast<double>(rotation));
  const double sx = scale[0], sy = scale[1];
  return {
      static_cast<float>(c * sx),
      static_cast<float>(-s * sx),
      0.f,  // column 0
      static_cast<float>(s * sy),
      static_cast<float>(c * sy),
      0.f,  // column 1
      offset[0],
      offset[1],
      1.f,  // column 2
  };
}

}  // namespace kinema
