// src/render/lighting.cpp — the key light's shadow map and the environment's lighting uniforms.
//
// The shadow map is an orthographic depth image seen from the key light, fitted each frame to a
// sphere around the joints the meshes hang from (plus a margin for the flesh around the bones),
// sampled with 3 × 3 percentage-closer filtering. The default environment is the renderer's
// original hemisphere light — sky (0.55, 0.62, 0.75) above, ground (0.22, 0.19, 0.16) below,
// blended linearly in the normal's y and scaled by 0.55 π — written as the spherical-harmonic
// irradiance it is exactly (a constant and a y term), so meshes without materials look as they
// always did.
#include <numbers>

#include "kinema/render/environment.h"
#include "renderer_impl.h"
#include "shaders.h"

namespace kinema {

namespace {

constexpr float kPiF = std::numbers::pi_v<float>;
constexpr float kY00 = 0.282095f, kY1 = 0.488603f;  // real SH basis constants (l = 0, 1)

}  // namespace

void Renderer::Impl::init_lighting() {
  depth_program = render_detail::link(render_detail::kSkinVertexShader,
                                      render_detail::kDepthFragmentShader, "shadow shader", false);
  glCreateTextures(GL_TEXTURE_2D, 1, &shadow_map);
  glTextureStorage2D(shadow_map, 1, GL_DEPTH_COMPONENT24, shadow_size, shadow_size);
  glTextureParameteri(shadow_map, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
  glTextureParameteri(shadow_map, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
  glTextureParameteri(shadow_map, GL_TEXTURE_COMPARE_MODE, GL_COMPARE_REF_TO_TEXTURE);
  glTextureParameteri(shadow_map, GL_TEXTURE_COMPARE_FUNC, GL_LEQUAL);
  // Outside the map nothing casts a shadow: the border is the far plane.
  glTextureParameteri(shadow_map, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_BORDER);
  glTextureParameteri(shadow_map, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_BORDER);
  const float far_border[4] = {1, 1, 1, 1};
  glTextureParameterfv(shadow_map, GL_TEXTURE_BORDER_COLOR, far_border);
  glCreateFramebuffers(1, &shadow_fbo);
  glNamedFramebufferTexture(shadow_fbo, GL_DEPTH_ATTACHMENT, shadow_map, 0);
  glNamedFramebufferDrawBuffer(shadow_fbo, GL_NONE);
  glNamedFramebufferReadBuffer(shadow_fbo, GL_NONE);
  if (glCheckNamedFramebufferStatus(shadow_fbo, GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE)
    throw Error("OpenGL", "shadow map", "the depth framebuffer is incomplete");
  default_environment();
}

void Renderer::Impl::default_environment() {
  const Vec3f sky{0.55f, 0.62f, 0.75f}, ground{0.22f, 0.19f, 0.16f};
  irradiance_sh.fill(Vec3f{0, 0, 0});
  irradiance_sh[0] = (sky + ground) * (0.55f * kPiF * 0.5f / kY00);
  irradiance_sh[1] = (sky - ground) * (0.55f * kPiF * 0.5f / kY1);
  glDeleteTextures(1, &environment_map);
  environment_map = 0;
  environment_levels = 0;
}

void Renderer::Impl::free_lighting() {
  glDeleteProgram(depth_program);
  glDeleteFramebuffers(1, &shadow_fbo);
  const GLuint textures[] = {shadow_map, environment_map};
  glDeleteTextures(2, textures);
}

void Renderer::Impl::shadow_pass(std::span<const Mat4> model_pose, const Vec3f& towards_light,
                                 SkinningMethod method) {
  // The sphere to cover: the joints the meshes hang from, and what a body puts around them.
  Vec3f lo{1e30f, 1e30f, 1e30f}, hi{-1e30f, -1e30f, -1e30f};
  bool any = false;
  const auto cover = [&](const Vec3f& p) {
    if (!(std::isfinite(p.x) && std::isfinite(p.y) && std::isfinite(p.z))) return;
    for (int c = 0; c < 3; ++c) {
      lo[c] = std::min(lo[c], p[c]);
      hi[c] = std::max(hi[c], p[c]);
    }
    any = true;
  };
  for (const GpuMesh& m : meshes) {
    if (m.data.skin_joints.empty()) {
      for (const Vec3f& p : m.data.positions) cover(p);
      continue;
    }
    for (const int j : m.data.skin_joints)
      if (size_t(j) < model_pose.size()) cover(Vec3f(model_pose[size_t(j)].translation_part()));
  }
  shadows_on = any;
  if (!any) return;
  const Vec3f centre = (lo + hi) * 0.5f;
  const float radius = 1.25f * 0.5f * length(hi - lo) + 0.15f;
  const Vec3f l = normalize(towards_light, Vec3f{0, 1, 0});
  Camera light;
  light.eye = centre + l * (2 * radius);
  light.target = centre;
  light.up = std::abs(l.y) > 0.99f ? Vec3f{0, 0, 1} : Vec3f{0, 1, 0};
  const Mat4f view = camera_view(light);
  // Orthographic: x, y in [−r, r], depth from 0.05 r to 4 r in front of the light, then the
  // [−1, 1] → [0, 1] bias so the shader can look the map up directly.
  Mat4f ortho;
  ortho.m.fill(0);
  const float n = 0.05f * radius, f = 4 * radius;
  ortho(0, 0) = 1 / radius;
  ortho(1, 1) = 1 / radius;
  ortho(2, 2) = -2 / (f - n);
  ortho(2, 3) = -(f + n) / (f - n);
  ortho(3, 3) = 1;
  const Mat4f light_view_proj = ortho * view;
  Mat4f bias;
  bias.m.fill(0);
  for (int i = 0; i < 3; ++i) {
    bias(i, i) = 0.5f;
    bias(i, 3) = 0.5f;
  }
  bias(3, 3) = 1;
  shadow_matrix = bias * light_view_proj;

  glBindFramebuffer(GL_FRAMEBUFFER, shadow_fbo);
  glViewport(0, 0, shadow_size, shadow_size);
  glClearDepth(1.0);
  glClear(GL_DEPTH_BUFFER_BIT);
  glEnable(GL_DEPTH_TEST);
  glDepthFunc(GL_LESS);
  glDisable(GL_CULL_FACE);
  glUseProgram(depth_program);
  glProgramUniform1ui(depth_program, glGetUniformLocation(depth_program, "uPaletteStride"), 0);
  glProgramUniform1i(depth_program, glGetUniformLocation(depth_program, "uOutlineMode"), 0);
  for (const GpuMesh& m : meshes) {
    bool use_prescale = false;
    upload_palette(m, model_pose, method, use_prescale);
    set_skin_uniforms(depth_program, method, use_prescale, light_view_proj);
    glBindVertexArray(m.vao);
    glDrawElements(GL_TRIANGLES, GLsizei(m.data.indices.size()), GL_UNSIGNED_INT, nullptr);
  }
  glBindFramebuffer(GL_FRAMEBUFFER, msaa_fbo);
  glViewport(0, 0, width, height);
}

void Renderer::Impl::set_lighting_uniforms(GLuint p, const Vec3f& towards_light,
                                           const Vec3f& light_irradiance) const {
  const Vec3f l = normalize(towards_light, Vec3f{0, 1, 0});
  glProgramUniform3f(p, glGetUniformLocation(p, "uSunDirection"), l.x, l.y, l.z);
  glProgramUniform3f(p, glGetUniformLocation(p, "uSunIrradiance"), light_irradiance.x,
                     light_irradiance.y, light_irradiance.z);
  glProgramUniform3fv(p, glGetUniformLocation(p, "uSh"), 9, &irradiance_sh[0].x);
  glProgramUniform1i(p, glGetUniformLocation(p, "uEnvSpecularOn"), environment_map ? 1 : 0);
  glProgramUniform1f(p, glGetUniformLocation(p, "uEnvLevels"), float(environment_levels));
  glProgramUniform1i(p, glGetUniformLocation(p, "uShadowsOn"), shadows_on ? 1 : 0);
  glProgramUniformMatrix4fv(p, glGetUniformLocation(p, "uShadowMatrix"), 1, GL_FALSE,
                            shadow_matrix.m.data());
  glProgramUniform1f(p, glGetUniformLocation(p, "uShadowTexel"), 1.0f / float(shadow_size));
  glBindTextureUnit(10, shadow_map);
  glBindTextureUnit(11, environment_map);
}

void Renderer::set_environment(const Environment& environment) {
  if (environment.width < 1 || environment.height < 1 ||
      environment.texels.size() != size_t(environment.width) * size_t(environment.height))
    throw Error("render", "environment", "the map is empty or its size does not match its texels");
  // Six roughness levels, or as many mip levels as a small map has.
  int levels = 1;
  while (levels < 6 && (std::max(environment.width, environment.height) >> levels) > 0) ++levels;
  const std::vector<Environment> chain = prefilter_specular(environment, levels);
  Impl& s = *impl_;
  s.context.make_current();
  s.default_environment();
  s.irradiance_sh = irradiance_sh9(environment);
  glCreateTextures(GL_TEXTURE_2D, 1, &s.environment_map);
  glTextureStorage2D(s.environment_map, GLsizei(chain.size()), GL_RGB32F, chain[0].width,
                     chain[0].height);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  for (size_t level = 0; level < chain.size(); ++level)
    glTextureSubImage2D(s.environment_map, GLint(level), 0, 0, chain[level].width,
                        chain[level].height, GL_RGB, GL_FLOAT, chain[level].texels.data());
  glTextureParameteri(s.environment_map, GL_TEXTURE_MIN_FILTER, GL_LINEAR_MIPMAP_LINEAR);
  glTextureParameteri(s.environment_map, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
  glTextureParameteri(s.environment_map, GL_TEXTURE_WRAP_S, GL_REPEAT);  // the seam
  glTextureParameteri(s.environment_map, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  glTextureParameteri(s.environment_map, GL_TEXTURE_MAX_LEVEL, GLint(chain.size()) - 1);
  s.environment_levels = int(chain.size());
  s.check_gl("environment upload");
}

void Renderer::reset_environment() {
  impl_->context.make_current();
  impl_->default_environment();
}

float Renderer::Impl::ground_shadow_density(const Vec3f& towards_light,
                                            const Vec3f& light_irradiance) const {
  const Vec3f l = normalize(towards_light, Vec3f{0, 1, 0});
  // Irradiance of a floor facing up: the environment's E(+y) and the key light's cosine share.
  const Vec3f ambient = irradiance_sh[0] * kY00 + irradiance_sh[1] * kY1 +
                        irradiance_sh[6] * (-0.315392f) + irradiance_sh[8] * (-0.546274f);
  const Vec3f lit = ambient + light_irradiance * std::max(l.y, 0.0f);
  const auto luma = [](const Vec3f& c) { return 0.2126f * c.x + 0.7152f * c.y + 0.0722f * c.z; };
  if (!(luma(lit) > 0)) return 0;
  return std::clamp(1 - luma(ambient) / luma(lit), 0.0f, 1.0f);
}

}  // namespace kinema
