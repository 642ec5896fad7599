// kinema/character/material.h — surface materials as glTF 2.0 and VRM define them, for drawing.
//
// What a file says about how a mesh looks: glTF's metallic–roughness material (base colour factor
// and texture, metallic/roughness, normal map, emissive, alpha mode, double-sidedness,
// KHR_materials_unlit, KHR_texture_transform) and VRM's MToon toon shader (VRMC_materials_mtoon
// 1.0, and VRM 0.x `materialProperties` converted to 1.0's parameters the way three-vrm does).
// kinema/render draws them; the glTF writer keeps the source document's materials as they were.
//
// Conventions: colours are linear RGB (glTF stores factors linear; the sRGB-encoded textures are
// decoded when drawn), alpha straight (not premultiplied). Texture coordinates follow glTF: (0, 0)
// is the top-left corner of the image, v grows downwards.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kinema {

/// glTF's alphaMode.
enum class AlphaMode {
  Opaque,  ///< alpha ignored
  Mask,    ///< fully opaque where alpha ≥ alpha_cutoff, else not drawn
  Blend,   ///< "over" what is behind (drawn after the opaque surfaces, without depth writes)
};

/// How a texture repeats outside [0, 1] (glTF sampler wrapS / wrapT).
enum class TextureWrap { Repeat, ClampToEdge, MirroredRepeat };

/// One image and how it is sampled: a glTF texture (its source image and its sampler).
struct Texture {
  std::string name;       ///< the texture's name, else its image's
  std::string mime_type;  ///< "image/png" or "image/jpeg" (what the bytes are)
  /// The image file's bytes as stored (PNG or JPEG), shared with copies of the asset; decoded
  /// only when drawn.
  std::shared_ptr<const std::vector<uint8_t>> encoded;
  TextureWrap wrap_s = TextureWrap::Repeat, wrap_t = TextureWrap::Repeat;
  bool nearest = false;  ///< magnification without filtering (pixel art); default linear
};

/// KHR_texture_transform: uv′ = T(offset) · R(rotation) · S(scale) · uv, rotation in radians
/// about (0, 0), counter-clockwise in glTF's u-right, v-down texture space (the image turns
/// clockwise): u′ = cos·u + sin·v, v′ = −sin·u + cos·v, as glTF viewers and the extension's
/// examples apply it (its README's GLSL listing has the transposed matrix, a known erratum).
struct TextureTransform {
  std::array<float, 2> offset{0, 0};
  float rotation = 0;
  std::array<float, 2> scale{1, 1};

  bool is_identity() const {
    return offset[0] == 0 && offset[1] == 0 && rotation == 0 && scale[0] == 1 && scale[1] == 1;
  }
  /// The transform as a 3 × 3 matrix in column-major order (uv′ = M · (u, v, 1)).
  std::array<float, 9> matrix() const;
};

/// A material's use of a texture (a glTF textureInfo).
struct TextureRef {
  int texture = -1;   ///< index into Asset::textures; −1: none
  int tex_coord = 0;  ///< which TEXCOORD_n set (KHR_texture_transform's texCoord applied)
  TextureTransform transform;

  bool present() const { return texture >= 0; }
};

/// VRM MToon outline width: none, in metres, or relative to the image height. Screen mode:
/// three-vrm pushes a vertex at view depth d by outline_width · d · tan(fov_y / 2) world units
/// (its vertex shader scales by viewZ / projection[1][1]), i.e. outline_width × half the image
/// height; the 1.0 spec words it as "a ratio to the screen height".
enum class OutlineWidthMode { None, WorldCoordinates, ScreenCoordinates };

/// VRM's MToon toon shader, in VRMC_materials_mtoon 1.0's terms (a VRM 0.x material is converted
/// to them). The lit colour is the material's base colour; where the light's N·L, shifted and
/// sharpened, falls off, the shade colour takes over (per light, as the 1.0 spec and three-vrm):
///   shading = N·L + shading_shift + shading_shift_texture.r · shading_shift_scale,
///   shading = linearstep(−1 + toony, 1 − toony, shading)  (linearstep(a, b, t) =
///             saturate((t − a) / (b − a)); three-vrm then multiplies by the shadow factor),
///   colour  = lerp(shade_color · shade_multiply_texture, base colour, shading) · light colour;
/// ambient light adds lerp(gi(N), (gi(up) + gi(down)) / 2, gi_equalization) · base colour; then
///   rim = matcap_color · matcap_texture
///       + parametric_rim_color · saturate(1 − N·V + lift)^max(power, 1e-5),
///   rim · rim_multiply_texture · lerp(1, lighting, rim_lighting_mix) and the emissive colour are
/// added. Outlines are the mesh drawn again with front faces culled, each vertex pushed out
/// along its normal by outline_width · outline_width_texture.g (see OutlineWidthMode), coloured
/// outline_color · lerp(1, the surface's shaded colour, outline_lighting_mix).
struct MToon {
  std::array<float, 3> shade_color{0, 0, 0};  ///< linear RGB (shadeColorFactor)
  TextureRef shade_multiply_texture;          ///< sRGB, multiplies shade_color
  float shading_shift = 0;                    ///< −1…1, shifts the light/shade boundary
  TextureRef shading_shift_texture;           ///< R channel, scaled by shading_shift_scale
  float shading_shift_scale = 1;
  float shading_toony = 0.9f;    ///< 0 (smooth, Lambert-like) … 1 (a hard edge)
  float gi_equalization = 0.9f;  ///< 0…1: ambient light made uniform over the normal sphere
  std::array<float, 3> matcap_color{1, 1, 1};          ///< linear RGB, multiplies matcap_texture
  TextureRef matcap_texture;                           ///< sRGB, sampled by the view-space normal
  std::array<float, 3> parametric_rim_color{0, 0, 0};  ///< linear RGB
  float parametric_rim_fresnel_power = 5;
  float parametric_rim_lift = 0;
  TextureRef rim_multiply_texture;  ///< sRGB, multiplies the rim
  float rim_lighting_mix = 1;       ///< 0: rim unlit … 1: rim multiplied by the light
  OutlineWidthMode outline_width_mode = OutlineWidthMode::None;
  float outline_width = 0;  ///< metres, or a fraction of half the image height (screen mode)
  TextureRef outline_width_texture;             ///< G channel, multiplies the width
  std::array<float, 3> outline_color{0, 0, 0};  ///< linear RGB
  float outline_lighting_mix = 1;               ///< 0: outline colour as is … 1: lit
  /// UV animation (uvAnimation*): scroll in UV units a second, rotation in radians a second
  /// about (0.5, 0.5), counter-clockwise in u-right, v-down space like KHR_texture_transform;
  /// applied before the textures' KHR_texture_transform, not to matcap_texture:
  ///   uv′ = R(uv_rotation · t · mask) · (uv − 0.5) + 0.5 + (uv_scroll_x, uv_scroll_y) · t · mask.
  float uv_scroll_x = 0, uv_scroll_y = 0, uv_rotation = 0;
  TextureRef uv_animation_mask_texture;  ///< B channel, multiplies the speeds
  /// Draw order among transparent (alpha_mode Blend) materials: renderQueueOffsetNumber, 0…9
  /// with transparent_with_z_write, −9…0 without (clamped to −9…9 on reading); later is higher.
  int render_queue_offset = 0;
  bool transparent_with_z_write = false;  ///< Blend, but writing depth
};

/// A glTF material with kinema's reading of its extensions.
struct Material {
  std::string name;
  std::array<float, 4> base_color{1, 1, 1, 1};  ///< linear RGB and straight alpha (factor)
  TextureRef base_color_texture;                ///< sRGB RGBA, multiplies base_color
  float metallic = 1, roughness = 1;            ///< factors, 0…1
  TextureRef metallic_roughness_texture;        ///< linear: G roughness, B metallic
  TextureRef normal_texture;                    ///< tangent-space normal map, linear
  float normal_scale = 1;                       ///< scales the map's x and y
  TextureRef occlusion_texture;                 ///< R channel, linear
  float occlusion_strength = 1;
  std::array<float, 3> emissive{0, 0, 0};  ///< linear RGB (factor)
  TextureRef emissive_texture;             ///< sRGB, multiplies emissive
  AlphaMode alpha_mode = AlphaMode::Opaque;
  float alpha_cutoff = 0.5f;  ///< with AlphaMode::Mask
  bool double_sided = false;  ///< false: back faces are culled
  /// KHR_materials_unlit: base colour as is, no lighting. false when `mtoon` is set (MToon takes
  /// precedence; the unlit extension is its fallback for viewers without MToon).
  bool unlit = false;
  /// MToon (VRM): present when the material is drawn with the toon shader.
  std::optional<MToon> mtoon;
};

}  // namespace kinema
