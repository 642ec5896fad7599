// src/render/passes.cpp — render passes (AOVs): the beauty frame decoded to linear float, the
// shadow-only pass from a shadow catcher with the character hiding the ground, and depth, normals
// and motion vectors drawn into float targets (no MSAA: the nearest surface at each pixel centre).
#include <cmath>
#include <limits>

#include "kinema/composite/image_file.h"
#include "renderer_impl.h"
#include "shaders.h"

namespace kinema {

void Renderer::Impl::free_passes() {
  if (!pass_program) return;
  glDeleteProgram(pass_program);
  glDeleteFramebuffers(1, &pass_fbo);
  const GLuint textures[] = {pass_normal_depth, pass_motion};
  glDeleteTextures(2, textures);
  glDeleteRenderbuffers(1, &pass_depth);
  pass_program = 0;
}

RenderPasses Renderer::render_passes(std::span<const Mat4> model_pose, const Camera& camera,
                                     const DrawOptions& options,
                                     std::span<const Mat4> previous_pose,
                                     const Camera* previous_camera) {
  Impl& s = *impl_;
  if (!previous_pose.empty() && previous_pose.size() != model_pose.size())
    throw Error("OpenGL", "render passes",
                "the previous pose has " + std::to_string(previous_pose.size()) +
                    " joints, this one " + std::to_string(model_pose.size()));
  RenderPasses out;
  out.width = s.width;
  out.height = s.height;
  const size_t pixels = size_t(s.width) * size_t(s.height);

  // Beauty: the frame as drawn, decoded to premultiplied linear light. The sRGB target stores
  // encode(premultiplied linear colour) and linear alpha, so each channel decodes on its own.
  const Image beauty = render(model_pose, camera, options);
  out.beauty.resize(pixels * 4);
  for (size_t i = 0; i < pixels * 4; ++i)
    out.beauty[i] = i % 4 == 3 ? float(beauty.rgba[i]) / 255.0f
                               : composite::srgb_to_linear(float(beauty.rgba[i]) / 255.0f);

  // Shadow only: the catcher over nothing, the character drawn into depth alone.
  out.shadow.assign(pixels, 0.0f);
  if (options.shadows) {
    DrawOptions catcher = options;
    catcher.transparent_background = true;
    catcher.shadow_catcher = true;
    catcher.billboards = {};
    catcher.strands = {};
    s.depth_only_meshes = true;
    Image shadow;
    try {
      shadow = render(model_pose, camera, catcher);
    } catch (...) {
      s.depth_only_meshes = false;
      throw;
    }
    s.depth_only_meshes = false;
    for (size_t i = 0; i < pixels; ++i) out.shadow[i] = float(shadow.rgba[i * 4 + 3]) / 255.0f;
  }

  // Depth, normals, motion.
  s.context.make_current();
  if (!s.pass_program) {
    s.pass_program = render_detail::link(render_detail::kSkinVertexShader,
                                         render_detail::kPassFragmentShader, "pass shader", false);
    glCreateTextures(GL_TEXTURE_2D, 1, &s.pass_normal_depth);
    glTextureStorage2D(s.pass_normal_depth, 1, GL_RGBA32F, s.width, s.height);
    glCreateTextures(GL_TEXTURE_2D, 1, &s.pass_motion);
    glTextureStorage2D(s.pass_motion, 1, GL_RG32F, s.width, s.height);
    glCreateRenderbuffers(1, &s.pass_depth);
    glNamedRenderbufferStorage(s.pass_depth, GL_DEPTH_COMPONENT24, s.width, s.height);
    glCreateFramebuffers(1, &s.pass_fbo);
    glNamedFramebufferTexture(s.pass_fbo, GL_COLOR_ATTACHMENT0, s.pass_normal_depth, 0);
    glNamedFramebufferTexture(s.pass_fbo, GL_COLOR_ATTACHMENT1, s.pass_motion, 0);
    glNamedFramebufferRenderbuffer(s.pass_fbo, GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, s.pass_depth);
    const GLenum buffers[] = {GL_COLOR_ATTACHMENT0, GL_COLOR_ATTACHMENT1};
    glNamedFramebufferDrawBuffers(s.pass_fbo, 2, buffers);
    if (glCheckNamedFramebufferStatus(s.pass_fbo, GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE)
      throw Error("OpenGL", "render passes", "the float framebuffer is incomplete");
  }
  const float aspect = float(s.width) / float(s.height);
  const Mat4f view_proj = camera_view_projection(camera, aspect);
  const bool previous = !previous_pose.empty();
  const Mat4f previous_view_proj =
      camera_view_projection(previous_camera ? *previous_camera : camera, aspect);
  const Vec3f forward = normalize(camera.target - camera.eye, Vec3f{0, 0, -1});
  const GLuint p = s.pass_program;
  glBindFramebuffer(GL_FRAMEBUFFER, s.pass_fbo);
  glViewport(0, 0, s.width, s.height);
  const float far[4] = {0, 0, 0, std::numeric_limits<float>::infinity()}, zero[4] = {0, 0, 0, 0};
  glClearNamedFramebufferfv(s.pass_fbo, GL_COLOR, 0, far);
  glClearNamedFramebufferfv(s.pass_fbo, GL_COLOR, 1, zero);
  const float one = 1;
  glClearNamedFramebufferfv(s.pass_fbo, GL_DEPTH, 0, &one);
  glEnable(GL_DEPTH_TEST);
  glDepthFunc(GL_LESS);
  glDisable(GL_CULL_FACE);
  glDisable(GL_BLEND);
  glUseProgram(p);
  glProgramUniform3f(p, glGetUniformLocation(p, "uEye"), camera.eye.x, camera.eye.y, camera.eye.z);
  glProgramUniform3f(p, glGetUniformLocation(p, "uForward"), forward.x, forward.y, forward.z);
  glProgramUniform2f(p, glGetUniformLocation(p, "uSize"), float(s.width), float(s.height));
  glProgramUniform1i(p, glGetUniformLocation(p, "uPrevious"), previous ? 1 : 0);
  glProgramUniformMatrix4fv(p, glGetUniformLocation(p, "uPreviousViewProjection"), 1, GL_FALSE,
                            previous_view_proj.m.data());
  glProgramUniform1ui(p, glGetUniformLocation(p, "uPaletteStride"), 0);
  glProgramUniform1i(p, glGetUniformLocation(p, "uOutlineMode"), 0);
  std::vector<Affine3x4f> previous_palette;
  for (const GpuMesh& m : s.meshes) {
    bool use_prescale = false;
    s.upload_palette(m, model_pose, SkinningMethod::Lbs, use_prescale);
    Impl::set_skin_uniforms(p, SkinningMethod::Lbs, use_prescale, view_proj);
    const MeshData& d = m.data;
    if (d.skin_joints.empty())
      previous_palette.assign(1, Affine3x4f::identity());
    else if (previous_palette.resize(d.skin_joints.size());
             previous &&
             !skinning_palette(previous_pose, d.skin_joints, d.inverse_bind, previous_palette))
      throw Error("OpenGL", "mesh " + d.name,
                  "the previous pose does not match the mesh's skin joints");
    glNamedBufferData(s.previous_buffer, GLsizeiptr(previous_palette.size() * sizeof(Affine3x4f)),
                      previous_palette.data(), GL_STREAM_DRAW);
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 8, s.previous_buffer);
    glBindVertexArray(m.vao);
    glDrawElements(GL_TRIANGLES, GLsizei(d.indices.size()), GL_UNSIGNED_INT, nullptr);
  }
  glBindVertexArray(0);
  std::vector<float> normal_depth(pixels * 4), motion(pixels * 2);
  glPixelStorei(GL_PACK_ALIGNMENT, 4);
  glNamedFramebufferReadBuffer(s.pass_fbo, GL_COLOR_ATTACHMENT0);
  glBindFramebuffer(GL_READ_FRAMEBUFFER, s.pass_fbo);
  glReadPixels(0, 0, s.width, s.height, GL_RGBA, GL_FLOAT, normal_depth.data());
  glNamedFramebufferReadBuffer(s.pass_fbo, GL_COLOR_ATTACHMENT1);
  glReadPixels(0, 0, s.width, s.height, GL_RG, GL_FLOAT, motion.data());
  glBindFramebuffer(GL_FRAMEBUFFER, 0);
  s.check_gl("render passes");
  out.depth.resize(pixels);
  out.normal.resize(pixels * 3);
  out.motion.resize(pixels * 2);
  for (int y = 0; y < s.height; ++y)  // OpenGL's rows run bottom to top
    for (int x = 0; x < s.width; ++x) {
      const size_t from = size_t(s.height - 1 - y) * size_t(s.width) + size_t(x);
      const size_t to = size_t(y) * size_t(s.width) + size_t(x);
      for (int c = 0; c < 3; ++c)
        out.normal[to * 3 + size_t(c)] = normal_depth[from * 4 + size_t(c)];
      out.depth[to] = normal_depth[from * 4 + 3];
      out.motion[to * 2] = motion[from * 2];
      out.motion[to * 2 + 1] = motion[from * 2 + 1];
    }
  return out;
}

}  // namespace kinema
