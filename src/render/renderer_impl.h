// src/render/renderer_impl.h — the Renderer's state, shared by the sources that draw with it
// (renderer.cpp: one character; crowd_render.cpp: crowds) (internal).
#pragma once

#define GL_GLEXT_PROTOTYPES
#include <GL/gl.h>
#include <GL/glext.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <memory>
#include <numbers>
#include <span>
#include <string>
#include <vector>

#include "gl_context.h"
#include "kinema/core/error.h"
#include "kinema/render/renderer.h"
#include "kinema/skin/skinning.h"
#include "materials.h"
#include "render_mesh.h"

namespace kinema {

namespace render_detail {

/// Compiles and links a vertex and a fragment shader; `capture`: vPosition and vNormal go to
/// transform feedback. Throws kinema::Error("OpenGL", what, the driver's log).
GLuint link(const char* vs, const char* fs, const char* what, bool capture);

struct GpuMesh {
  MeshData data;
  std::vector<Mat4f> inverse_bind_f;  // data.inverse_bind in float, for the crowds' palettes
  GLuint vao = 0, positions = 0, normals = 0, joints = 0, weights = 0, indices = 0;
  GLuint uv0 = 0, uv1 = 0, colours = 0;
};

// Linear-space albedo per mesh index: muted clay, cloth and skin tones.
constexpr std::array<std::array<float, 3>, 6> kAlbedo{{{0.80f, 0.55f, 0.42f},
                                                       {0.35f, 0.45f, 0.70f},
                                                       {0.75f, 0.72f, 0.62f},
                                                       {0.45f, 0.62f, 0.40f},
                                                       {0.70f, 0.40f, 0.50f},
                                                       {0.55f, 0.55f, 0.58f}}};
constexpr std::array<float, 3> kBackground{0.80f, 0.84f, 0.89f};  // sRGB

/// Throw kinema::Error naming the billboard, the strand vertex or segment at fault (the checks
/// DrawOptions documents).
void check_billboards(std::span<const Billboard> billboards);
void check_strands(const Strands& strands);
void check_props(std::span<const PropMesh> props);

/// The crowd programs, baked VATs and impostors (crowd_render.cpp), made on first use.
struct CrowdGl;
/// Frees its OpenGL objects (the context must be current).
void free_crowd_gl(CrowdGl& crowd);
/// Frees the VATs and impostors baked from the previous asset (the context must be current).
void forget_crowd_bakes(CrowdGl& crowd);
/// Deletes the C++ object only (its OpenGL objects go with free_crowd_gl or the context).
void delete_crowd_gl(CrowdGl* crowd);
struct CrowdGlDeleter {
  void operator()(CrowdGl* crowd) const { delete_crowd_gl(crowd); }
};

}  // namespace render_detail

using render_detail::GpuMesh;
using render_detail::kAlbedo;
using render_detail::kBackground;
using render_detail::MeshData;

struct Renderer::Impl {
  render_detail::GlContext context;
  int width = 0, height = 0, samples = 1;
  bool software = false;
  GLuint msaa_fbo = 0, msaa_color = 0, msaa_depth = 0, resolve_fbo = 0, resolve_color = 0;
  GLuint skin_program = 0, ground_program = 0, ground_vao = 0;
  // Lighting: the key light's shadow map, the environment (irradiance as 9 spherical-harmonic
  // coefficients, lighting.cpp), the materials' textures.
  GLuint depth_program = 0, shadow_fbo = 0, shadow_map = 0;
  int shadow_size = 2048;
  Mat4f shadow_matrix;  // world -> shadow map [0, 1]^3, this frame's
  bool shadows_on = false;
  std::array<Vec3f, 9> irradiance_sh{};
  GLuint environment_map = 0;  // prefiltered equirectangular radiance, mip level = roughness
  int environment_levels = 0;
  render_detail::GpuMaterials materials;
  // Render passes (passes.cpp), made on first use: float targets and the pass program.
  GLuint pass_program = 0, pass_fbo = 0, pass_normal_depth = 0, pass_motion = 0, pass_depth = 0;
  GLuint previous_buffer = 0;      // the previous palette (binding 8), made with the renderer
  bool depth_only_meshes = false;  // render(): meshes only hide the ground (the shadow pass)
  GLuint billboard_program = 0, billboard_vao = 0, billboard_buffer = 0;
  GLuint strand_program = 0, strand_vao = 0;
  std::array<GLuint, 3> strand_buffers{};  // positions, colours, segments (bindings 3, 4, 5)
  GLuint prop_program = 0, prop_vao = 0, prop_positions = 0, prop_indices = 0;  // props.cpp
  GLuint lbs_buffer = 0, dq_buffer = 0, prescale_buffer = 0, feedback_buffer = 0;
  std::vector<GpuMesh> meshes;
  int joint_count = 0;
  bool capsules = false;
  // Per-frame scratch.
  std::vector<Affine3x4f> palette, prescale;
  std::vector<DualQuatf> dual_quats;
  std::vector<float> upload;
  std::vector<Billboard> sorted;  // billboards back to front (alpha blending)
  std::vector<float> billboard_depth;
  std::vector<uint32_t> order;

  std::unique_ptr<render_detail::CrowdGl, render_detail::CrowdGlDeleter> crowd;

  explicit Impl(const RendererOptions& o) : context(o.prefer_gpu) {}

  /// Makes the context current, clears the target and draws the ground (options.ground) and the
  /// props; view_proj: the camera's for the target's aspect.
  void begin_frame(const Camera& camera, const DrawOptions& options, Mat4f& view_proj);
  /// The ground grid, or the shadow catcher (options.shadow_catcher), or nothing.
  void draw_ground(const DrawOptions& options, const Mat4f& view_proj);
  /// The props (props.cpp; made on first use); only into depth when depth_only_meshes.
  void draw_props(const DrawOptions& options, const Camera& camera, const Mat4f& view_proj);
  void free_props();
  /// Strands, then billboards (after the opaque meshes).
  void draw_extras(const DrawOptions& options, const Camera& camera, const Mat4f& view_proj);
  /// Resolves the multisampled target and reads it back, top row first.
  Image finish_frame();
  /// Linear albedo of uploaded mesh `i` (the capsules get the bone colour).
  std::array<float, 3> albedo(size_t i) const {
    return meshes[i].data.source_mesh < 0 ? kAlbedo[2] : kAlbedo[i % kAlbedo.size()];
  }
  /// The crowd state, made on first use (the context must be current).
  render_detail::CrowdGl& crowd_gl();
  /// Towards the sun, unit, world space.
  static Vec3f sun_direction() { return normalize(Vec3f{0.35f, 0.85f, 0.45f}); }

  void free_meshes() {
    for (GpuMesh& m : meshes) {
      glDeleteVertexArrays(1, &m.vao);
      const GLuint buffers[] = {m.positions, m.normals, m.joints, m.weights,
                                m.indices,   m.uv0,     m.uv1,    m.colours};
      glDeleteBuffers(8, buffers);
    }
    meshes.clear();
    materials.clear();
  }

  /// Makes the shadow map and the depth program, and sets the default environment (lighting.cpp).
  void init_lighting();
  void free_lighting();
  /// Frees the render passes' targets and program (passes.cpp).
  void free_passes();
  /// The default environment: the hemisphere sky as irradiance, no specular map.
  void default_environment();
  /// Renders the shadow map of the key light `towards_light` for this pose (every mesh, depth
  /// only) and sets shadow_matrix; leaves the colour target bound.
  void shadow_pass(std::span<const Mat4> model_pose, const Vec3f& towards_light,
                   SkinningMethod method);
  /// The lighting uniforms of `program` (material or ground shader).
  void set_lighting_uniforms(GLuint program, const Vec3f& towards_light,
                             const Vec3f& light_irradiance) const;
  /// Sets the material shader `program` up for the flat debug look (uAlbedo, no shadow, no
  /// outline) under the default key light.
  void use_flat_look(GLuint program) {
    set_lighting_uniforms(program, sun_direction(), DrawOptions{}.light_irradiance);
    glProgramUniform1i(program, glGetUniformLocation(program, "uShadowsOn"), 0);
    glProgramUniform1i(program, glGetUniformLocation(program, "uUseMaterial"), 0);
    glProgramUniform1i(program, glGetUniformLocation(program, "uOutlineMode"), 0);
  }
  /// The ground's shadow density: 1 − (radiance in the key light's shadow / lit radiance) of a
  /// white floor, luminance-weighted.
  float ground_shadow_density(const Vec3f& towards_light, const Vec3f& light_irradiance) const;

  // Computes the palette of mesh `m` for `model` and uploads it for `method`.
  void upload_palette(const GpuMesh& m, std::span<const Mat4> model, SkinningMethod method,
                      bool& use_prescale) {
    const MeshData& d = m.data;
    if (d.skin_joints.empty()) {
      palette.assign(1, Affine3x4f::identity());  // a rigid mesh on no node
    } else if (palette.resize(d.skin_joints.size());
               !skinning_palette(model, d.skin_joints, d.inverse_bind, palette))
      throw Error("OpenGL", "mesh " + d.name, "the pose does not match the mesh's skin joints");
    use_prescale = false;
    if (method == SkinningMethod::Lbs) {
      glNamedBufferData(lbs_buffer, GLsizeiptr(palette.size() * sizeof(Affine3x4f)), palette.data(),
                        GL_STREAM_DRAW);
      glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, lbs_buffer);
      return;
    }
    dual_quats.resize(palette.size());
    prescale.resize(palette.size());
    dual_quat_palette(palette, dual_quats, prescale, &use_prescale);
    upload.resize(palette.size() * 8);
    for (size_t j = 0; j < palette.size(); ++j) {
      const DualQuatf& q = dual_quats[j];
      const float v[8] = {q.real.x, q.real.y, q.real.z, q.real.w,
                          q.dual.x, q.dual.y, q.dual.z, q.dual.w};
      std::copy(v, v + 8, upload.begin() + std::ptrdiff_t(j * 8));
    }
    glNamedBufferData(dq_buffer, GLsizeiptr(upload.size() * sizeof(float)), upload.data(),
                      GL_STREAM_DRAW);
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 1, dq_buffer);
    if (use_prescale) {
      glNamedBufferData(prescale_buffer, GLsizeiptr(prescale.size() * sizeof(Affine3x4f)),
                        prescale.data(), GL_STREAM_DRAW);
    } else {
      const Affine3x4f id;  // keep binding 2 valid
      glNamedBufferData(prescale_buffer, sizeof id, &id, GL_STREAM_DRAW);
    }
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 2, prescale_buffer);
  }

  void set_skin_uniforms(SkinningMethod method, bool use_prescale, const Mat4f& view_proj) {
    set_skin_uniforms(skin_program, method, use_prescale, view_proj);
  }
  /// The same for another program built on kSkinVertexShader (the shadow pass's).
  static void set_skin_uniforms(GLuint program, SkinningMethod method, bool use_prescale,
                                const Mat4f& view_proj) {
    glProgramUniform1i(program, glGetUniformLocation(program, "uMethod"),
                       method == SkinningMethod::Dqs ? 1 : 0);
    glProgramUniform1i(program, glGetUniformLocation(program, "uPrescale"), use_prescale ? 1 : 0);
    glProgramUniformMatrix4fv(program, glGetUniformLocation(program, "uViewProjection"), 1,
                              GL_FALSE, view_proj.m.data());
  }

  // Draws the billboards over what is in the target: depth-tested, no depth writes, blended.
  void draw_billboards(std::span<const Billboard> billboards, BillboardBlend blend,
                       const Camera& camera, const Mat4f& view_proj) {
    const Vec3f forward = normalize(camera.target - camera.eye, Vec3f{0, 0, -1});
    const Vec3f right = normalize(cross(forward, camera.up), Vec3f{1, 0, 0});
    const Vec3f up = cross(right, forward);
    std::span<const Billboard> drawn = billboards;
    if (blend == BillboardBlend::Alpha) {  // "over" needs the farthest first
      billboard_depth.resize(billboards.size());
      order.resize(billboards.size());
      for (size_t i = 0; i < billboards.size(); ++i) {
        billboard_depth[i] = dot(billboards[i].position - camera.eye, forward);
        order[i] = uint32_t(i);
      }
      std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
        return billboard_depth[a] > billboard_depth[b];
      });
      sorted.resize(billboards.size());
      for (size_t i = 0; i < order.size(); ++i) sorted[i] = billboards[order[i]];
      drawn = sorted;
    }
    glNamedBufferData(billboard_buffer, GLsizeiptr(drawn.size_bytes()), drawn.data(),
                      GL_STREAM_DRAW);
    const GLuint p = billboard_program;
    glUseProgram(p);
    glProgramUniformMatrix4fv(p, glGetUniformLocation(p, "uViewProjection"), 1, GL_FALSE,
                              view_proj.m.data());
    glProgramUniform3f(p, glGetUniformLocation(p, "uRight"), right.x, right.y, right.z);
    glProgramUniform3f(p, glGetUniformLocation(p, "uUp"), up.x, up.y, up.z);
    glEnable(GL_BLEND);
    // Premultiplied colour; the target's alpha stays opaque.
    glBlendFuncSeparate(GL_ONE, blend == BillboardBlend::Additive ? GL_ONE : GL_ONE_MINUS_SRC_ALPHA,
                        GL_ZERO, GL_ONE);
    glDepthMask(GL_FALSE);
    glBindVertexArray(billboard_vao);
    glDrawArraysInstanced(GL_TRIANGLE_STRIP, 0, 4, GLsizei(drawn.size()));
    glDepthMask(GL_TRUE);
    glDisable(GL_BLEND);
  }

  // Draws the strands as camera-facing ribbons: depth-tested and depth-writing, opaque.
  void draw_strands(const Strands& strands, const Camera& camera, const Mat4f& view_proj,
                    const Vec3f& sun) {
    const Vec3f forward = normalize(camera.target - camera.eye, Vec3f{0, 0, -1});
    const auto upload_to = [](GLuint buffer, const void* data, size_t bytes) {
      // An empty storage block is not valid to bind: keep at least one vec3's worth.
      const float zero[3] = {0, 0, 0};
      glNamedBufferData(buffer, GLsizeiptr(std::max(bytes, sizeof zero)), bytes ? data : zero,
                        GL_STREAM_DRAW);
    };
    upload_to(strand_buffers[0], strands.positions.data(), strands.positions.size_bytes());
    upload_to(strand_buffers[1], strands.colours.data(), strands.colours.size_bytes());
    upload_to(strand_buffers[2], strands.segments.data(), strands.segments.size_bytes());
    for (GLuint b = 0; b < 3; ++b)
      glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 3 + b, strand_buffers[b]);
    const GLuint p = strand_program;
    glUseProgram(p);
    const float metres_per_pixel =  // at 1 m in front of the camera
        2.0f * std::tan(0.5f * camera.fov_y_degrees * std::numbers::pi_v<float> / 180.0f) /
        float(height);
    glProgramUniformMatrix4fv(p, glGetUniformLocation(p, "uViewProjection"), 1, GL_FALSE,
                              view_proj.m.data());
    glProgramUniform3f(p, glGetUniformLocation(p, "uEye"), camera.eye.x, camera.eye.y,
                       camera.eye.z);
    glProgramUniform3f(p, glGetUniformLocation(p, "uForward"), forward.x, forward.y, forward.z);
    glProgramUniform3f(p, glGetUniformLocation(p, "uSunDirection"), sun.x, sun.y, sun.z);
    glProgramUniform1f(p, glGetUniformLocation(p, "uHalfWidth"), 0.5f * strands.width);
    glProgramUniform1f(p, glGetUniformLocation(p, "uMinHalfWidth"),
                       0.5f * strands.min_width_pixels * metres_per_pixel);
    glProgramUniform1i(p, glGetUniformLocation(p, "uPerVertex"), strands.colours.empty() ? 0 : 1);
    glProgramUniform3f(p, glGetUniformLocation(p, "uColour"), strands.colour.x, strands.colour.y,
                       strands.colour.z);
    glBindVertexArray(strand_vao);  // no attributes: the shader pulls from the buffers
    glDrawArrays(GL_TRIANGLES, 0, GLsizei(strands.segments.size() * 6));
  }

  void check_gl(const char* what) {
    const GLenum e = glGetError();
    if (e != GL_NO_ERROR) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "OpenGL error 0x%04X", static_cast<unsigned>(e));
      throw Error("OpenGL", what, buf);
    }
  }
};

}  // namespace kinema
