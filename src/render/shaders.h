// src/render/shaders.h — GLSL 4.50 sources of the renderer's programs (internal).
#pragma once

namespace kinema::render_detail {

/// Skinning vertex shader (LBS / DQS, up to 8 influences); outputs vPosition / vNormal (model
/// space, captured by transform feedback) and gl_Position.
extern const char* const kSkinVertexShader;
/// Meshes with their materials (metallic-roughness, unlit, MToon and its outline shell), or the
/// flat debug look; key light with a shadow map, environment light (material_shaders.cpp).
extern const char* const kMaterialFragmentShader;
/// Render passes: world normal and view depth (location 0), motion in pixels (location 1).
extern const char* const kPassFragmentShader;
/// The shadow map pass: depth only.
extern const char* const kDepthFragmentShader;
/// The ground square on y = 0 and its grid; it receives the key light's shadow, or shows only
/// that shadow (the shadow catcher: black, alpha = the shadow's density).
extern const char* const kGroundVertexShader;
extern const char* const kGroundFragmentShader;
/// Billboards: one instanced quad per particle (kinema::Billboard as per-instance attributes),
/// facing the camera; a round sprite with a soft edge, premultiplied-alpha output.
extern const char* const kBillboardVertexShader;
extern const char* const kBillboardFragmentShader;
/// Strands: six vertices per segment (a camera-facing ribbon) pulled from shader storage
/// (positions, colours, segments at bindings 3, 4, 5), lit as hair (Kajiya–Kay), opaque.
extern const char* const kStrandVertexShader;
extern const char* const kStrandFragmentShader;
/// Crowds: the skinning shader above (instanced, uPaletteStride) or the VAT vertex shader
/// (positions from a texture buffer by vertex index and time, instances placed and turned about
/// +Y), both with the crowd fragment shader (per-instance tint and dithered coverage at binding
/// 6; flat normals for the VAT); impostors: camera-facing quads cut from a flipbook atlas.
extern const char* const kCrowdFragmentShader;
extern const char* const kVatVertexShader;
extern const char* const kImpostorVertexShader;
extern const char* const kImpostorFragmentShader;
/// Props (kinema::PropMesh): world-space triangles in one colour, lit as the crowds (kShadeGlsl)
/// with flat face normals from the screen-space derivatives of the position.
extern const char* const kPropVertexShader;
extern const char* const kPropFragmentShader;

}  // namespace kinema::render_detail
