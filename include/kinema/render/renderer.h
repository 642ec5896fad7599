// kinema/render/renderer.h — a headless OpenGL 4.5 renderer: GPU-skinned meshes (LBS or DQS in
// the vertex shader, Kavan et al. 2008), bones drawn as capsules when an asset has no mesh, a
// ground grid on y = 0, and RGBA8 images read back from an offscreen (multisampled) target.
//
// The context comes from EGL: a real GPU (EGL device platform) when one is present and allowed,
// else Mesa's software rasterizer (llvmpipe) on the surfaceless platform, so it runs on machines
// with no display. This module is a separate library (kinema_render, linking libEGL and
// libOpenGL); the core kinema library has no GL dependency.
//
// Conventions: metres, +Y up, the character faces +Z (kinema's import conventions). Images are
// RGBA8, top row first, colours sRGB-encoded (shading, blending and the MSAA resolve are in
// linear light: the target is GL_SRGB8_ALPHA8). Offline API: failures throw kinema::Error (file
// "OpenGL" for context and driver problems); nothing here is real-time safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kinema/math/mat4.h"
#include "kinema/math/vec3.h"

namespace kinema {

struct Asset;
struct Environment;  // kinema/render/environment.h

enum class SkinningMethod { Lbs, Dqs };

/// An RGBA8 image, rows top to bottom, 4 bytes per pixel.
struct Image {
  int width = 0, height = 0;
  std::vector<uint8_t> rgba;

  Image() = default;
  Image(int w, int h) : width(w), height(h), rgba(size_t(w) * size_t(h) * 4, 0) {}
  const uint8_t* pixel(int x, int y) const {
    return &rgba[(size_t(y) * size_t(width) + size_t(x)) * 4];
  }
  uint8_t* pixel(int x, int y) { return &rgba[(size_t(y) * size_t(width) + size_t(x)) * 4]; }
};

/// One frame's render passes (AOVs) for compositing, linear float, width × height each, rows top
/// first (Renderer::render_passes; written as one multi-channel EXR by `kinema render`).
struct RenderPasses {
  int width = 0, height = 0;
  /// RGBA: the frame as render() draws it (8-bit sRGB decoded), premultiplied linear colour;
  /// alpha the coverage with a transparent background (else 1).
  std::vector<float> beauty;
  /// Distance in front of the camera along its view axis, metres; +∞ where nothing was drawn.
  std::vector<float> depth;
  /// xyz: the world-space unit normal of the nearest surface, turned towards the camera; zero
  /// where nothing was drawn.
  std::vector<float> normal;
  /// xy: how far the surface point under the pixel moved across the image since the previous
  /// frame, pixels (x right, y down: this position − the previous); zero without a previous
  /// frame and where nothing was drawn.
  std::vector<float> motion;
  /// The key light's shadow on the ground as a shadow catcher records it (0 lit … its density),
  /// hidden where the character covers the ground: the shadow-only pass.
  std::vector<float> shadow;
};

/// A perspective camera looking from `eye` at `target`.
struct Camera {
  Vec3f eye{0, 1, 4};
  Vec3f target{0, 1, 0};
  Vec3f up{0, 1, 0};
  float fov_y_degrees = 35;  ///< vertical field of view
  float near_plane = 0.05f;  ///< metres
  float far_plane = 200;     ///< metres
};

/// The view matrix (world → camera: x right, y up, looking down −z; column vectors).
Mat4f camera_view(const Camera& camera);
/// Projection · view (OpenGL clip space, column vectors) for an image of aspect width/height.
Mat4f camera_view_projection(const Camera& camera, float aspect);

/// Pixel coordinates of world point `p` in a width×height image (x right, y down, origin at the
/// top-left corner of the top-left pixel). Returns false when p is behind the camera.
bool project_to_pixel(const Camera& camera, int width, int height, const Vec3f& p, float& x,
                      float& y);

struct RendererOptions {
  int width = 640, height = 480;  ///< 1…8192 each
  int samples = 4;                ///< MSAA samples (1: none); lowered to what the driver has
  /// Try a hardware EGL device first (then llvmpipe). The environment variable
  /// KINEMA_RENDER_SOFTWARE=1 forces the software rasterizer.
  bool prefer_gpu = true;
};

/// One particle drawn as a billboard: a round, soft sprite that always faces the camera (a disc
/// parallel to the image plane, so it stays round anywhere in the image), depth-tested against
/// the meshes and the ground but writing no depth (sprites do not hide one another).
struct Billboard {
  Vec3f position{0, 0, 0};  ///< centre, world metres
  float size = 0.05f;       ///< diameter, metres (world space: farther sprites look smaller)
  /// Linear RGB (as the meshes' albedo), written gamma-encoded like them; ≥ 0, values above 1
  /// saturate (glow in additive mode).
  Vec3f colour{1, 1, 1};
  float opacity = 1;  ///< 0…1, at the centre
};
// Billboards upload as they are: 8 floats each, per-instance vertex attributes.
static_assert(sizeof(Billboard) == 8 * sizeof(float));

/// How billboards combine with what is behind them. Alpha: "over", drawn back to front (sorted
/// by distance along the view direction each frame). Additive: light adds up (sparks, fire),
/// order-free.
enum class BillboardBlend { Alpha, Additive };

/// Line segments drawn as thin ribbons (hair strands, wires): each segment a flat quad along it,
/// turned about its own axis to face the camera, `width` metres wide but never thinner than
/// `min_width_pixels` on screen (so far or thin strands do not break up into dots). Opaque, lit
/// as hair (Kajiya–Kay: brightest across the light, darker along it), depth-tested and
/// depth-writing, so a strand behind a head is hidden by it and strands hide one another; all of
/// them in one draw call.
struct Strands {
  std::span<const Vec3f> positions;  ///< vertices, world metres
  /// Two vertex indices per segment (a polyline of n points is n − 1 segments).
  std::span<const std::array<uint32_t, 2>> segments;
  /// Per-vertex linear RGB (≥ 0), blended along each segment; empty: `colour` for every vertex.
  std::span<const Vec3f> colours;
  Vec3f colour{0.25f, 0.13f, 0.06f};  ///< linear RGB (≥ 0) when `colours` is empty; a brown
  float width = 0.0015f;              ///< metres (> 0)
  float min_width_pixels = 1;         ///< pixels (≥ 0)
};

/// A still triangle mesh drawn with the frame (a crowd's obstacles, a ground mesh, a set piece):
/// world space, opaque, in one colour, lit as the crowds' characters and the flat debug look are
/// (the default sky and a key light from DrawOptions::light_direction; an environment map does
/// not light them) with each triangle's own face normal turned towards the camera (either
/// winding, both sides), depth-tested and depth-writing against the meshes, the ground and each
/// other. Props neither cast nor receive the key light's shadow, and the render passes' depth,
/// normal and motion passes leave them out (beauty has them).
struct PropMesh {
  std::span<const Vec3f> positions;   ///< vertices, world metres
  std::span<const uint32_t> indices;  ///< three vertex indices a triangle
  Vec3f colour{0.5f, 0.5f, 0.5f};     ///< linear RGB albedo, ≥ 0 (as the meshes' debug colours)
  std::string_view name;              ///< for error messages (may be empty)
};

/// What one frame draws besides the character.
struct DrawOptions {
  SkinningMethod skinning = SkinningMethod::Lbs;
  bool ground = true;  ///< the grid on y = 0
  /// Clear to transparent black instead of the backdrop colour: the image's alpha is then the
  /// coverage (edges anti-aliased by the MSAA resolve in linear light) and each colour byte the
  /// sRGB encoding of the premultiplied linear colour — decode each channel alone
  /// (straight_alpha() in clip_render.h makes a PNG's straight alpha). Ready to composite over
  /// a plate (kinema/composite). Usually with ground = false.
  bool transparent_background = false;
  /// Meshes drawn with the materials their file defines (kinema/character/material.h: base
  /// colour factors and textures, vertex colours, normal maps, alpha modes, double-sidedness,
  /// KHR_texture_transform, unlit, VRM MToon with its outlines); false: every mesh in one flat
  /// colour of the renderer's palette (the debug look, also that of meshes without a material).
  bool materials = true;
  /// MToon materials draw their outlines (the mesh's back faces pushed out along the normals).
  bool outlines = true;
  /// The key light casts shadows (a 2,048² shadow map fitted to the character each frame) onto
  /// the character and the ground.
  bool shadows = true;
  /// The ground is a shadow catcher: instead of the grid, an invisible floor on y = 0 that shows
  /// only the key light's shadow, as premultiplied black whose alpha is the shadow's density
  /// (1 − shadowed / lit radiance of a white floor under this lighting). With
  /// transparent_background, the image composites "over" a plate with the character's shadow
  /// (see kinema/composite). Drawn whatever `ground` says.
  bool shadow_catcher = false;
  /// The key light: the direction towards it (world, any length > 0) and its irradiance on a
  /// surface facing it (linear RGB; a white Lambertian surface facing it shows irradiance / π).
  Vec3f light_direction{0.35f, 0.85f, 0.45f};
  Vec3f light_irradiance{2.6704f, 2.5369f, 2.3499f};  // 0.85 π · (1, 0.95, 0.88)
  /// Centre (x, z) and half size of the ground square, metres.
  float ground_center_x = 0, ground_center_z = 0, ground_half_size = 10;
  float grid_spacing = 0.5f;  ///< metres between grid lines
  /// Particles drawn after the meshes, one instanced draw call. A sprite's opacity falls from
  /// `opacity` over the inner 40 % of its radius to 0 at its edge (1 − smoothstep(0.4, 1, r)).
  /// A non-finite position or colour, a size ≤ 0 or non-finite, an opacity outside [0, 1] or a
  /// negative colour is a kinema::Error naming the billboard.
  std::span<const Billboard> billboards;
  BillboardBlend billboard_blend = BillboardBlend::Alpha;
  /// Strands drawn after the meshes, before the billboards. A non-finite position or colour, a
  /// negative colour, an index past the positions, a `colours` that is neither empty nor one per
  /// position, a width ≤ 0 or non-finite or a negative or non-finite min_width_pixels is a
  /// kinema::Error naming the segment or vertex.
  Strands strands;
  /// Still meshes drawn after the ground, before the character (render(), render_crowd()). A
  /// non-finite position, an index past the positions, an index count that is not a multiple of
  /// 3 or a negative or non-finite colour is a kinema::Error naming the prop (its index and name)
  /// and the vertex or index.
  std::span<const PropMesh> props;
};

// ---- Crowds
// --------------------------------------------------------------------------------------
// Renderer::render_crowd draws many characters of the current asset at once, each in one of three
// forms — the LOD tiers of a crowd (kinema/crowd/crowd_lod.h): skinned from its own skeleton pose
// (near, mid), played from a baked vertex-animation texture (far) or shown as an impostor, a
// camera-facing quad cut from a baked flipbook of views × frames (farthest). Every form is one
// instanced draw call per mesh (per bake); the CPU only writes per-instance data.

/// A crowd character's share of the pixels it covers, for switching LOD tiers without popping:
/// a screen-door dither (a 4×4 ordered pattern fixed to the screen) keeps `coverage` of them. The
/// tier fading out draws with `complement` and coverage 1 − f while the tier fading in draws with
/// coverage f: together they cover every pixel once, and nothing is blended or sorted.
struct CrowdFade {
  float coverage = 1;  ///< 0…1
  bool complement = false;
};

/// A crowd character drawn from its skeleton: the current asset's meshes skinned (linear blend)
/// by `pose`.
struct CrowdSkeletonInstance {
  /// World-space matrices of every joint of the asset's skeleton (float: what a crowd animates).
  std::span<const Mat4f> pose;
  /// Linear RGB albedo for all its meshes (the LOD tiers' debug colours); any component < 0:
  /// the meshes' own.
  Vec3f tint{-1, -1, -1};
  CrowdFade fade;
};

/// A crowd character played from a bake (add_crowd_vat, add_crowd_impostor).
struct CrowdBakedInstance {
  Vec3f position{0, 0, 0};  ///< the character's origin, world metres (on the ground)
  float yaw = 0;            ///< radians about +Y; 0 faces +Z
  float time = 0;           ///< seconds into the baked loop (any value: it wraps)
  int bake = 0;             ///< which VAT / impostor: the index its add_* call returned
  Vec3f tint{-1, -1, -1};   ///< as CrowdSkeletonInstance::tint
  CrowdFade fade;
};

struct CrowdFrame {
  std::span<const CrowdSkeletonInstance> skeletons;
  std::span<const CrowdBakedInstance> vats;
  std::span<const CrowdBakedInstance> impostors;
};

/// What a crowd bake holds.
struct CrowdBakeInfo {
  int index = 0;        ///< for CrowdBakedInstance::bake
  int frames = 0;       ///< poses baked: frame i is shown at i / fps, the loop wraps after the last
  float fps = 0;        ///< frames per second
  size_t vertices = 0;  ///< VAT: vertices a frame (every uploaded mesh's, in upload order)
  size_t bytes = 0;     ///< GPU memory of the texture
  double max_error_m = 0;          ///< VAT: the largest half-float rounding error of a position
  int views = 0, cell_pixels = 0;  ///< impostor: directions around +Y, pixels a cell side
  /// Impostor: the quad drawn, a square `half_size` metres either side of the character's
  /// vertical axis, centred `centre_height` metres above its origin: it holds every frame from
  /// every direction.
  float half_size = 0, centre_height = 0;
};

struct ImpostorOptions {
  int views = 8;         ///< directions around +Y, 1…64: view v is seen from azimuth 2πv/views
  int cell_pixels = 96;  ///< 8…1024
};

/// How finely set_asset builds the capsule skeleton of an asset without a skinned mesh. The
/// default suits one character filling the image; a crowd wants a coarse one (crowd_capsules()).
struct CapsuleDetail {
  int sides = 14;     ///< around each capsule, 3…64
  int cap_rings = 5;  ///< latitude rings of each rounded end, 1…32
  /// Bones shorter than this fraction of the skeleton's rest size get no capsule (≥ 1e-4).
  float min_bone_fraction = 1e-4f;
};
/// Six sides, one ring a cap, no bone shorter than 3 % of the skeleton (finger and toe segments):
/// about 24 vertices a bone instead of 168.
constexpr CapsuleDetail crowd_capsules() { return {6, 1, 0.03f}; }

/// An OpenGL context with an offscreen target, the skinning/drawing programs and one asset's
/// meshes on the GPU. Not copyable; one thread at a time.
class Renderer {
 public:
  /// Creates the context and the target. Throws kinema::Error("OpenGL", …) when EGL or OpenGL
  /// 4.5 is not available or the size is out of range.
  explicit Renderer(const RendererOptions& options = {});
  ~Renderer();
  Renderer(const Renderer&) = delete;
  Renderer& operator=(const Renderer&) = delete;

  int width() const;
  int height() const;
  int samples() const;
  /// glGetString(GL_RENDERER), e.g. "llvmpipe (LLVM 15.0.6, 256 bits)".
  const std::string& gl_renderer() const;
  /// True when the context is on Mesa's software rasterizer.
  bool software() const;

  /// Uploads the asset's triangle meshes (skinned ones with their skin; rigid ones hang from
  /// their node) after checking them with validate_skin_mesh (throws kinema::Error naming `file`,
  /// the mesh and the vertex). When no mesh is skinned (a BVH, props or gizmos on joints), also
  /// builds one capsule per bone (parent → child, in the rest pose; as fine as `capsules`) bound
  /// rigidly to the parent joint, uploaded last. Meshes without normals get smooth normals from
  /// their triangles. Morph targets are not applied.
  void set_asset(const Asset& asset, const std::string& file = {},
                 const CapsuleDetail& capsules = {});
  /// Lights the scene with an environment map (a light probe, kinema/render/environment.h): its
  /// irradiance as nine spherical-harmonic coefficients replaces the default sky's for every
  /// mesh, and its specular chain (prefilter_specular, 6 levels of roughness) is what glossy
  /// materials reflect. The key light (DrawOptions::light_direction / light_irradiance) still
  /// shines and casts the shadows: give it the probe's sun, or irradiance 0 when the probe holds
  /// the sun itself. Throws kinema::Error for an empty map.
  void set_environment(const Environment& environment);
  /// Back to the default lighting: the hemisphere sky, glossy reflections of its irradiance.
  void reset_environment();
  /// True when set_asset added the skeleton as capsules (the last uploaded mesh).
  bool draws_capsules() const;
  /// Number of meshes uploaded (the capsule set counts as one).
  size_t mesh_count() const;
  /// Vertex count of uploaded mesh `mesh`.
  size_t vertex_count(size_t mesh) const;
  /// Index in Asset::meshes of uploaded mesh `mesh` (-1 for the capsule set).
  int source_mesh(size_t mesh) const;
  /// Bind-space positions / normals of uploaded mesh `mesh` as they were uploaded (for checks).
  std::span<const Vec3f> bind_positions(size_t mesh) const;
  std::span<const Vec3f> bind_normals(size_t mesh) const;
  /// Replaces the bind-space positions and normals uploaded mesh `mesh` is drawn (and skinned)
  /// from, one each per vertex: its morph targets blended for a frame. Returns false on a size
  /// mismatch. bind_positions / bind_normals keep what set_asset uploaded.
  bool set_vertices(size_t mesh, std::span<const Vec3f> positions, std::span<const Vec3f> normals);

  /// Draws the current asset in the pose given by the model-space matrices of every skeleton
  /// joint (one per joint, e.g. sample_model_pose). Throws kinema::Error on a size mismatch.
  Image render(std::span<const Mat4> model_pose, const Camera& camera,
               const DrawOptions& options = {});

  /// The render passes of one frame: beauty (render() with `options`), depth, normals and
  /// motion vectors (from `previous_pose` seen by `previous_camera`, both optional: without them
  /// motion is zero) of the meshes, and the shadow-only pass (needs options.shadows). Depth,
  /// normals and motion are drawn without MSAA (the nearest surface at each pixel centre), with
  /// linear blend skinning and without alpha masks. Throws as render() does.
  RenderPasses render_passes(std::span<const Mat4> model_pose, const Camera& camera,
                             const DrawOptions& options = {},
                             std::span<const Mat4> previous_pose = {},
                             const Camera* previous_camera = nullptr);

  /// Runs the draw program's vertex shader on uploaded mesh `mesh` with rasterization off and
  /// reads back what transform feedback captured: the skinned positions and normals the draw
  /// would use (model space). Each output span is empty (skip) or one per vertex. Returns false
  /// on a size mismatch.
  bool gpu_skin(size_t mesh, std::span<const Mat4> model_pose, SkinningMethod method,
                std::span<Vec3f> positions, std::span<Vec3f> normals);

  // ---- Crowds (see CrowdFrame). Bakes belong to the asset: set_asset drops them. ----

  /// Bakes a vertex-animation texture of the current asset for the far tier: its uploaded meshes
  /// skinned (linear blend, by the draw shader through transform feedback) in each pose of a loop
  /// — `poses[i]`: model-space matrices of every joint, the character at the origin facing +Z —
  /// stored as half floats about the centre of their bounds (an RGBA16F texture buffer, texel
  /// frame · vertices + vertex; 8 bytes a vertex a frame). Drawing interpolates linearly between
  /// the two frames around an instance's time and lights the faces flat (no normals stored).
  /// Throws kinema::Error for no poses, a pose of the wrong size, fps ≤ 0 or not finite, a
  /// non-finite skinned position or a texture past the driver's limit.
  CrowdBakeInfo add_crowd_vat(std::span<const std::vector<Mat4>> poses, float fps);
  /// Bakes an impostor flipbook of the current asset for the farthest tier: each pose seen from
  /// `views` directions around +Y by an orthographic camera level with the character, lit as
  /// render() lights it, into an sRGB atlas (encoded premultiplied linear colour) of views columns
  /// × frames rows of square cells. Drawing picks the view nearest the direction from the character
  /// to the eye and the frame nearest the instance's time. Throws as add_crowd_vat, and for options
  /// out of range or an atlas past the driver's texture size.
  CrowdBakeInfo add_crowd_impostor(std::span<const std::vector<Mat4>> poses, float fps,
                                   const ImpostorOptions& options = {});
  /// The atlas of impostor `index`, read back (cell (view v, frame f) at column v, row f from the
  /// top), for checks and pictures. Throws kinema::Error for an unknown index.
  Image crowd_impostor_atlas(int index);
  /// Draws a crowd of the current asset on the ground (options.ground) among options' props, then
  /// options' strands and billboards. options.skinning is ignored: crowds skin by linear blend.
  /// Throws kinema::Error naming the instance for a pose of the wrong size, a bake index no add_*
  /// returned, a coverage outside 0…1 or a non-finite position, yaw or time, and for bad props
  /// (DrawOptions).
  Image render_crowd(const CrowdFrame& frame, const Camera& camera,
                     const DrawOptions& options = {});

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The GLSL 4.50 vertex shader used both to draw and for the transform-feedback readback.
std::string_view skinning_vertex_shader_source();

}  // namespace kinema
