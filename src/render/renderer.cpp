// src/render/renderer.cpp — the Renderer: offscreen target, programs, meshes on the GPU, drawing
// and the transform-feedback readback of the skinning shader.
#include "kinema/render/renderer.h"

#include "kinema/character/asset.h"
#include "kinema/composite/image_file.h"
#include "kinema/skeleton/skeleton.h"
#include "renderer_impl.h"
#include "shaders.h"

namespace kinema {

namespace render_detail {

namespace {

GLuint compile(GLenum type, const char* source, const char* what) {
  const GLuint shader = glCreateShader(type);
  glShaderSource(shader, 1, &source, nullptr);
  glCompileShader(shader);
  GLint ok = 0;
  glGetShaderiv(shader, GL_COMPILE_STATUS, &ok);
  if (!ok) {
    std::array<char, 4096> log{};
    glGetShaderInfoLog(shader, GLsizei(log.size()), nullptr, log.data());
    glDeleteShader(shader);
    throw Error("OpenGL", what, std::string("shader does not compile: ") + log.data());
  }
  return shader;
}

}  // namespace

GLuint link(const char* vs, const char* fs, const char* what, bool capture) {
  const GLuint v = compile(GL_VERTEX_SHADER, vs, what);
  const GLuint f = compile(GL_FRAGMENT_SHADER, fs, what);
  const GLuint program = glCreateProgram();
  glAttachShader(program, v);
  glAttachShader(program, f);
  if (capture) {
    const char* varyings[] = {"vPosition", "vNormal"};
    glTransformFeedbackVaryings(program, 2, varyings, GL_INTERLEAVED_ATTRIBS);
  }
  glLinkProgram(program);
  glDeleteShader(v);
  glDeleteShader(f);
  GLint ok = 0;
  glGetProgramiv(program, GL_LINK_STATUS, &ok);
  if (!ok) {
    std::array<char, 4096> log{};
    glGetProgramInfoLog(program, GLsizei(log.size()), nullptr, log.data());
    glDeleteProgram(program);
    throw Error("OpenGL", what, std::string("program does not link: ") + log.data());
  }
  return program;
}

}  // namespace render_detail

using render_detail::link;

void render_detail::check_billboards(std::span<const Billboard> billboards) {
  auto finite = [](const Vec3f& v) {
    return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z);
  };
  for (size_t i = 0; i < billboards.size(); ++i) {
    const Billboard& b = billboards[i];
    const char* reason =
        !finite(b.position)                                  ? "its position is not finite"
        : !(b.size > 0) || !std::isfinite(b.size)            ? "its size is not a positive number"
        : !(b.opacity >= 0 && b.opacity <= 1)                ? "its opacity is outside 0…1"
        : !finite(b.colour)                                  ? "its colour is not finite"
        : b.colour.x < 0 || b.colour.y < 0 || b.colour.z < 0 ? "its colour is negative"
                                                             : nullptr;
    if (reason) throw Error("render", "billboard " + std::to_string(i), reason);
  }
}

void render_detail::check_strands(const Strands& strands) {
  const auto finite = [](const Vec3f& v) {
    return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z);
  };
  const auto colour_reason = [&](const Vec3f& c) -> const char* {
    return !finite(c) ? "is not finite" : c.x < 0 || c.y < 0 || c.z < 0 ? "is negative" : nullptr;
  };
  if (!(strands.width > 0) || !std::isfinite(strands.width))
    throw Error("render", "strands", "the width is not a positive number of metres");
  if (!(strands.min_width_pixels >= 0) || !std::isfinite(strands.min_width_pixels))
    throw Error("render", "strands", "the minimum width is not a number of pixels ≥ 0");
  if (const char* reason = colour_reason(strands.colour))
    throw Error("render", "strands", std::string("the colour ") + reason);
  if (!strands.colours.empty() && strands.colours.size() != strands.positions.size())
    throw Error("render", "strands",
                std::to_string(strands.colours.size()) + " colours for " +
                    std::to_string(strands.positions.size()) + " vertices (one each, or none)");
  for (size_t i = 0; i < strands.positions.size(); ++i) {
    if (!finite(strands.positions[i]))
      throw Error("render", "strand vertex " + std::to_string(i), "its position is not finite");
    if (!strands.colours.empty())
      if (const char* reason = colour_reason(strands.colours[i]))
        throw Error("render", "strand vertex " + std::to_string(i),
                    std::string("its colour ") + reason);
  }
  for (size_t i = 0; i < strands.segments.size(); ++i)
    for (const uint32_t v : strands.segments[i])
      if (v >= strands.positions.size())
        throw Error("render", "strand segment " + std::to_string(i),
                    "vertex index " + std::to_string(v) + " is out of range (" +
                        std::to_string(strands.positions.size()) + " vertices)");
}

Renderer::Renderer(const RendererOptions& options) {
  if (options.width < 1 || options.height < 1 || options.width > 8192 || options.height > 8192)
    throw Error("OpenGL", "target", "the image size must be 1…8192 pixels each way");
  impl_ = std::make_unique<Impl>(options);
  Impl& s = *impl_;
  s.width = options.width;
  s.height = options.height;
  s.software = s.context.renderer().find("llvmpipe") != std::string::npos ||
               s.context.renderer().find("softpipe") != std::string::npos;
  GLint max_samples = 1;
  glGetIntegerv(GL_MAX_SAMPLES, &max_samples);
  s.samples = std::clamp(options.samples, 1, std::max(1, int(max_samples)));

  glCreateRenderbuffers(1, &s.msaa_color);
  glCreateRenderbuffers(1, &s.msaa_depth);
  glNamedRenderbufferStorageMultisample(s.msaa_color, s.samples, GL_SRGB8_ALPHA8, s.width,
                                        s.height);
  glNamedRenderbufferStorageMultisample(s.msaa_depth, s.samples, GL_DEPTH_COMPONENT24, s.width,
                                        s.height);
  glCreateFramebuffers(1, &s.msaa_fbo);
  glNamedFramebufferRenderbuffer(s.msaa_fbo, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, s.msaa_color);
  glNamedFramebufferRenderbuffer(s.msaa_fbo, GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, s.msaa_depth);
  glCreateRenderbuffers(1, &s.resolve_color);
  glNamedRenderbufferStorage(s.resolve_color, GL_SRGB8_ALPHA8, s.width, s.height);
  glCreateFramebuffers(1, &s.resolve_fbo);
  glNamedFramebufferRenderbuffer(s.resolve_fbo, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER,
                                 s.resolve_color);
  if (glCheckNamedFramebufferStatus(s.msaa_fbo, GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE ||
      glCheckNamedFramebufferStatus(s.resolve_fbo, GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE)
    throw Error("OpenGL", "target", "the offscreen framebuffer is incomplete");

  s.skin_program = link(render_detail::kSkinVertexShader, render_detail::kMaterialFragmentShader,
                        "skinning shader", true);
  s.init_lighting();
  s.ground_program = link(render_detail::kGroundVertexShader, render_detail::kGroundFragmentShader,
                          "ground shader", false);
  glCreateVertexArrays(1, &s.ground_vao);
  s.billboard_program = link(render_detail::kBillboardVertexShader,
                             render_detail::kBillboardFragmentShader, "billboard shader", false);
  glCreateBuffers(1, &s.billboard_buffer);
  glCreateVertexArrays(1, &s.billboard_vao);
  // One Billboard per instance: position, size, colour, opacity (8 floats).
  glVertexArrayVertexBuffer(s.billboard_vao, 0, s.billboard_buffer, 0, sizeof(Billboard));
  glVertexArrayBindingDivisor(s.billboard_vao, 0, 1);
  const GLint billboard_widths[4] = {3, 1, 3, 1};
  const GLuint billboard_offsets[4] = {0, 3 * sizeof(float), 4 * sizeof(float), 7 * sizeof(float)};
  for (GLuint a = 0; a < 4; ++a) {
    glVertexArrayAttribFormat(s.billboard_vao, a, billboard_widths[a], GL_FLOAT, GL_FALSE,
                              billboard_offsets[a]);
    glVertexArrayAttribBinding(s.billboard_vao, a, 0);
    glEnableVertexArrayAttrib(s.billboard_vao, a);
  }
  s.strand_program = link(render_detail::kStrandVertexShader, render_detail::kStrandFragmentShader,
                          "strand shader", false);
  glCreateVertexArrays(1, &s.strand_vao);
  glCreateBuffers(3, s.strand_buffers.data());
  GLuint* buffers[] = {&s.lbs_buffer, &s.dq_buffer, &s.prescale_buffer, &s.feedback_buffer,
                       &s.previous_buffer};
  for (GLuint* b : buffers) glCreateBuffers(1, b);
  // The previous frame's palette (render passes) stays bound at 8, so that no draw reads an
  // unbound buffer.
  const Affine3x4f identity;
  glNamedBufferData(s.previous_buffer, sizeof identity, &identity, GL_STREAM_DRAW);
  glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 8, s.previous_buffer);
  s.check_gl("setup");
}

Renderer::~Renderer() {
  if (!impl_) return;
  Impl& s = *impl_;
  try {
    s.context.make_current();
  } catch (...) {
    return;  // the context is gone; its objects went with it
  }
  if (s.crowd) render_detail::free_crowd_gl(*s.crowd);
  s.free_meshes();
  s.free_lighting();
  s.free_passes();
  s.free_props();
  const GLuint buffers[] = {s.lbs_buffer, s.dq_buffer, s.prescale_buffer, s.feedback_buffer,
                            s.previous_buffer};
  glDeleteBuffers(5, buffers);
  glDeleteVertexArrays(1, &s.ground_vao);
  glDeleteBuffers(1, &s.billboard_buffer);
  glDeleteVertexArrays(1, &s.billboard_vao);
  glDeleteProgram(s.billboard_program);
  glDeleteBuffers(3, s.strand_buffers.data());
  glDeleteVertexArrays(1, &s.strand_vao);
  glDeleteProgram(s.strand_program);
  glDeleteProgram(s.skin_program);
  glDeleteProgram(s.ground_program);
  glDeleteFramebuffers(1, &s.msaa_fbo);
  glDeleteFramebuffers(1, &s.resolve_fbo);
  const GLuint rbs[] = {s.msaa_color, s.msaa_depth, s.resolve_color};
  glDeleteRenderbuffers(3, rbs);
}

int Renderer::width() const { return impl_->width; }
int Renderer::height() const { return impl_->height; }
int Renderer::samples() const { return impl_->samples; }
const std::string& Renderer::gl_renderer() const { return impl_->context.renderer(); }
bool Renderer::software() const { return impl_->software; }
bool Renderer::draws_capsules() const { return impl_->capsules; }
size_t Renderer::mesh_count() const { return impl_->meshes.size(); }
size_t Renderer::vertex_count(size_t mesh) const {
  return mesh < impl_->meshes.size() ? impl_->meshes[mesh].data.positions.size() : 0;
}
bool Renderer::set_vertices(size_t mesh, std::span<const Vec3f> positions,
                            std::span<const Vec3f> normals) {
  Impl& s = *impl_;
  if (mesh >= s.meshes.size()) return false;
  const GpuMesh& m = s.meshes[mesh];
  const size_t n = m.data.positions.size();
  if (positions.size() != n || normals.size() != n) return false;
  s.context.make_current();
  glNamedBufferSubData(m.positions, 0, GLsizeiptr(n * sizeof(Vec3f)), positions.data());
  glNamedBufferSubData(m.normals, 0, GLsizeiptr(n * sizeof(Vec3f)), normals.data());
  s.check_gl("vertex update");
  return true;
}

int Renderer::source_mesh(size_t mesh) const {
  return mesh < impl_->meshes.size() ? impl_->meshes[mesh].data.source_mesh : -1;
}
std::span<const Vec3f> Renderer::bind_positions(size_t mesh) const {
  if (mesh >= impl_->meshes.size()) return {};
  return impl_->meshes[mesh].data.positions;
}
std::span<const Vec3f> Renderer::bind_normals(size_t mesh) const {
  if (mesh >= impl_->meshes.size()) return {};
  return impl_->meshes[mesh].data.normals;
}

void Renderer::set_asset(const Asset& asset, const std::string& file,
                         const CapsuleDetail& capsule_detail) {
  Impl& s = *impl_;
  // Build (and check) everything on the CPU first, so a bad asset leaves the renderer as it was.
  std::vector<MeshData> data = render_detail::meshes_for_asset(asset, file);
  const std::vector<render_detail::DecodedTexture> textures =
      render_detail::decode_textures(asset, file);
  // Without a skinned mesh the skeleton is the character (a BVH, or a glTF whose meshes are
  // props or gizmos hanging from joints): draw its bones too.
  bool skinned = false;
  for (const MeshData& d : data) skinned = skinned || asset.meshes[size_t(d.source_mesh)].skin >= 0;
  bool capsules = false;
  if (!skinned) {
    MeshData bones = render_detail::capsule_mesh(asset, capsule_detail);
    capsules = !bones.indices.empty();
    if (capsules) data.push_back(std::move(bones));
  }
  s.context.make_current();
  s.free_meshes();
  if (s.crowd) render_detail::forget_crowd_bakes(*s.crowd);
  s.capsules = capsules;
  s.joint_count = asset.skeleton.joint_count();
  for (MeshData& d : data) {
    GpuMesh m;
    m.data = std::move(d);
    const MeshData& md = m.data;
    for (const Mat4& ib : md.inverse_bind)
      m.inverse_bind_f.push_back(Mat4f::from_column_major(ib.m.data()));
    glCreateVertexArrays(1, &m.vao);
    GLuint* buffers[] = {&m.positions, &m.normals, &m.joints, &m.weights,
                         &m.indices,   &m.uv0,     &m.uv1,    &m.colours};
    for (GLuint* b : buffers) glCreateBuffers(1, b);
    // Positions and normals may be replaced per frame (morph targets: set_vertices).
    glNamedBufferStorage(m.positions, GLsizeiptr(md.positions.size() * sizeof(Vec3f)),
                         md.positions.data(), GL_DYNAMIC_STORAGE_BIT);
    glNamedBufferStorage(m.normals, GLsizeiptr(md.normals.size() * sizeof(Vec3f)),
                         md.normals.data(), GL_DYNAMIC_STORAGE_BIT);
    glNamedBufferStorage(m.joints, GLsizeiptr(md.joints8.size() * sizeof(uint16_t)),
                         md.joints8.data(), 0);
    glNamedBufferStorage(m.weights, GLsizeiptr(md.weights8.size() * sizeof(float)),
                         md.weights8.data(), 0);
    glNamedBufferStorage(m.indices, GLsizeiptr(md.indices.size() * sizeof(uint32_t)),
                         md.indices.data(), 0);
    // Texture coordinates and colours: the mesh's, else zeros and white (the capsules).
    const size_t n = md.positions.size();
    std::vector<std::array<float, 2>> uv0 = md.uv0, uv1 = md.uv1;
    std::vector<std::array<float, 4>> colours = md.colours;
    uv0.resize(n, {0, 0});
    uv1.resize(n, {0, 0});
    colours.resize(n, {1, 1, 1, 1});
    glNamedBufferStorage(m.uv0, GLsizeiptr(n * sizeof(uv0[0])), uv0.data(), 0);
    glNamedBufferStorage(m.uv1, GLsizeiptr(n * sizeof(uv1[0])), uv1.data(), 0);
    glNamedBufferStorage(m.colours, GLsizeiptr(n * sizeof(colours[0])), colours.data(), 0);
    glVertexArrayVertexBuffer(m.vao, 0, m.positions, 0, sizeof(Vec3f));
    glVertexArrayVertexBuffer(m.vao, 1, m.normals, 0, sizeof(Vec3f));
    glVertexArrayVertexBuffer(m.vao, 2, m.joints, 0, 8 * sizeof(uint16_t));
    glVertexArrayVertexBuffer(m.vao, 3, m.weights, 0, 8 * sizeof(float));
    glVertexArrayVertexBuffer(m.vao, 4, m.uv0, 0, sizeof(uv0[0]));
    glVertexArrayVertexBuffer(m.vao, 5, m.uv1, 0, sizeof(uv1[0]));
    glVertexArrayVertexBuffer(m.vao, 6, m.colours, 0, sizeof(colours[0]));
    glVertexArrayElementBuffer(m.vao, m.indices);
    glVertexArrayAttribFormat(m.vao, 0, 3, GL_FLOAT, GL_FALSE, 0);
    glVertexArrayAttribFormat(m.vao, 1, 3, GL_FLOAT, GL_FALSE, 0);
    glVertexArrayAttribIFormat(m.vao, 2, 4, GL_UNSIGNED_SHORT, 0);
    glVertexArrayAttribIFormat(m.vao, 3, 4, GL_UNSIGNED_SHORT, 4 * sizeof(uint16_t));
    glVertexArrayAttribFormat(m.vao, 4, 4, GL_FLOAT, GL_FALSE, 0);
    glVertexArrayAttribFormat(m.vao, 5, 4, GL_FLOAT, GL_FALSE, 4 * sizeof(float));
    glVertexArrayAttribFormat(m.vao, 6, 2, GL_FLOAT, GL_FALSE, 0);
    glVertexArrayAttribFormat(m.vao, 7, 2, GL_FLOAT, GL_FALSE, 0);
    glVertexArrayAttribFormat(m.vao, 8, 4, GL_FLOAT, GL_FALSE, 0);
    const GLuint binding_of[9] = {0, 1, 2, 2, 3, 3, 4, 5, 6};
    for (GLuint a = 0; a < 9; ++a) {
      glEnableVertexArrayAttrib(m.vao, a);
      glVertexArrayAttribBinding(m.vao, a, binding_of[a]);
    }
    s.meshes.push_back(m);
  }
  s.materials.upload(asset, textures);
  s.check_gl("mesh upload");
}

void Renderer::Impl::begin_frame(const Camera& camera, const DrawOptions& options,
                                 Mat4f& view_proj) {
  context.make_current();
  view_proj = camera_view_projection(camera, float(width) / float(height));
  glBindFramebuffer(GL_FRAMEBUFFER, msaa_fbo);
  glViewport(0, 0, width, height);
  // The targets are sRGB: the shaders write linear light, the GPU encodes it, and blending and
  // the MSAA resolve (the blit below) work on linear values.
  glEnable(GL_FRAMEBUFFER_SRGB);
  if (options.transparent_background)
    glClearColor(0, 0, 0, 0);  // alpha = coverage after the resolve, colour premultiplied
  else                         // the clear colour is linear too
    glClearColor(composite::srgb_to_linear(kBackground[0]),
                 composite::srgb_to_linear(kBackground[1]),
                 composite::srgb_to_linear(kBackground[2]), 1.0f);
  glClearDepth(1.0);
  glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
  glEnable(GL_DEPTH_TEST);
  glDepthFunc(GL_LESS);
  glDisable(GL_CULL_FACE);
  if (samples > 1) glEnable(GL_MULTISAMPLE);
  // The shadow-only pass draws the ground after the meshes' depth, so that they hide it.
  if (!depth_only_meshes) draw_ground(options, view_proj);
  draw_props(options, camera, view_proj);
}

void Renderer::Impl::draw_ground(const DrawOptions& options, const Mat4f& view_proj) {
  if (!options.ground && !options.shadow_catcher) return;
  const GLuint p = ground_program;
  glUseProgram(p);
  glProgramUniformMatrix4fv(p, glGetUniformLocation(p, "uViewProjection"), 1, GL_FALSE,
                            view_proj.m.data());
  glProgramUniform3f(p, glGetUniformLocation(p, "uCenter"), options.ground_center_x, 0,
                     options.ground_center_z);
  glProgramUniform1f(p, glGetUniformLocation(p, "uHalfSize"), options.ground_half_size);
  glProgramUniform1f(p, glGetUniformLocation(p, "uSpacing"), options.grid_spacing);
  glProgramUniform3f(p, glGetUniformLocation(p, "uBackground"), kBackground[0], kBackground[1],
                     kBackground[2]);
  glProgramUniform1i(p, glGetUniformLocation(p, "uShadowsOn"), shadows_on ? 1 : 0);
  glProgramUniform1i(p, glGetUniformLocation(p, "uCatcher"), options.shadow_catcher ? 1 : 0);
  glProgramUniform1f(p, glGetUniformLocation(p, "uShadowDensity"),
                     ground_shadow_density(options.light_direction, options.light_irradiance));
  glProgramUniformMatrix4fv(p, glGetUniformLocation(p, "uShadowMatrix"), 1, GL_FALSE,
                            shadow_matrix.m.data());
  glProgramUniform1f(p, glGetUniformLocation(p, "uShadowTexel"), 1.0f / float(shadow_size));
  glBindTextureUnit(10, shadow_map);
  glBindVertexArray(ground_vao);
  // Pull the ground back a little in depth so that feet touching y = 0 win.
  glEnable(GL_POLYGON_OFFSET_FILL);
  glPolygonOffset(1.0f, 1.0f);
  if (options.shadow_catcher) {  // premultiplied black over what is there
    glEnable(GL_BLEND);
    glBlendFunc(GL_ONE, GL_ONE_MINUS_SRC_ALPHA);
  }
  glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
  glDisable(GL_BLEND);
  glDisable(GL_POLYGON_OFFSET_FILL);
}

void Renderer::Impl::draw_extras(const DrawOptions& options, const Camera& camera,
                                 const Mat4f& view_proj) {
  if (!options.strands.segments.empty())
    draw_strands(options.strands, camera, view_proj, sun_direction());
  if (!options.billboards.empty())
    draw_billboards(options.billboards, options.billboard_blend, camera, view_proj);
}

Image Renderer::Impl::finish_frame() {
  glBindVertexArray(0);
  glBlitNamedFramebuffer(msaa_fbo, resolve_fbo, 0, 0, width, height, 0, 0, width, height,
                         GL_COLOR_BUFFER_BIT, GL_NEAREST);
  Image image(width, height);
  std::vector<uint8_t> rows(image.rgba.size());
  glBindFramebuffer(GL_READ_FRAMEBUFFER, resolve_fbo);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, rows.data());
  glBindFramebuffer(GL_FRAMEBUFFER, 0);
  check_gl("render");
  const size_t stride = size_t(width) * 4;
  for (int y = 0; y < height; ++y)  // OpenGL's rows run bottom to top
    std::copy_n(rows.begin() + std::ptrdiff_t(size_t(height - 1 - y) * stride), stride,
                image.rgba.begin() + std::ptrdiff_t(size_t(y) * stride));
  return image;
}

namespace {

bool finite(const Vec3f& v) {
  return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z);
}

// Where a mesh is this frame, roughly: the mean of its joints (its bind-space centre if rigid
// on no node), for drawing blended meshes back to front.
Vec3f mesh_centre(const MeshData& d, std::span<const Mat4> model_pose) {
  Vec3f sum{0, 0, 0};
  size_t count = 0;
  for (const int j : d.skin_joints)
    if (size_t(j) < model_pose.size()) {
      sum += Vec3f(model_pose[size_t(j)].translation_part());
      ++count;
    }
  if (count == 0)
    for (const Vec3f& p : d.positions) {
      sum += p;
      ++count;
    }
  return count ? sum * (1.0f / float(count)) : sum;
}

}  // namespace

Image Renderer::render(std::span<const Mat4> model_pose, const Camera& camera,
                       const DrawOptions& options) {
  Impl& s = *impl_;
  if (int(model_pose.size()) != s.joint_count)
    throw Error("OpenGL", "render",
                "the pose has " + std::to_string(model_pose.size()) + " joints, the skeleton " +
                    std::to_string(s.joint_count));
  render_detail::check_billboards(options.billboards);
  render_detail::check_strands(options.strands);
  render_detail::check_props(options.props);
  if (!finite(options.light_direction) || !(length(options.light_direction) > 0))
    throw Error("render", "light direction", "it is not a finite, non-zero vector");
  if (!finite(options.light_irradiance) || options.light_irradiance.x < 0 ||
      options.light_irradiance.y < 0 || options.light_irradiance.z < 0)
    throw Error("render", "light irradiance", "it is not a finite colour ≥ 0");
  s.context.make_current();
  s.shadows_on = false;
  if (options.shadows) s.shadow_pass(model_pose, options.light_direction, options.skinning);
  Mat4f view_proj;
  s.begin_frame(camera, options, view_proj);
  const GLuint p = s.skin_program;
  glUseProgram(p);
  s.set_lighting_uniforms(p, options.light_direction, options.light_irradiance);
  glProgramUniform3f(p, glGetUniformLocation(p, "uEye"), camera.eye.x, camera.eye.y, camera.eye.z);
  glProgramUniform1ui(p, glGetUniformLocation(p, "uPaletteStride"), 0);
  glProgramUniform1i(p, glGetUniformLocation(p, "uOutlineMode"), 0);
  // Opaque and masked meshes first, then the blended ones from the farthest to the nearest.
  const auto material_of = [&](size_t i) -> const Material* {
    const int mi = s.meshes[i].data.material;
    return options.materials && mi >= 0 && size_t(mi) < s.materials.size()
               ? &s.materials.material(size_t(mi))
               : nullptr;
  };
  std::vector<size_t> order, blended;
  for (size_t i = 0; i < s.meshes.size(); ++i) {
    const Material* m = material_of(i);
    (m && m->alpha_mode == AlphaMode::Blend ? blended : order).push_back(i);
  }
  std::vector<float> distance(s.meshes.size(), 0);
  for (const size_t i : blended)
    distance[i] = length(mesh_centre(s.meshes[i].data, model_pose) - camera.eye);
  std::stable_sort(blended.begin(), blended.end(),
                   [&](size_t a, size_t b) { return distance[a] > distance[b]; });
  order.insert(order.end(), blended.begin(), blended.end());

  if (s.depth_only_meshes) glColorMask(GL_FALSE, GL_FALSE, GL_FALSE, GL_FALSE);
  for (const size_t i : order) {
    const GpuMesh& m = s.meshes[i];
    bool use_prescale = false;
    s.upload_palette(m, model_pose, options.skinning, use_prescale);
    s.set_skin_uniforms(options.skinning, use_prescale, view_proj);
    glBindVertexArray(m.vao);
    const GLsizei count = GLsizei(m.data.indices.size());
    const Material* material = material_of(i);
    if (!material) {
      glProgramUniform1i(p, glGetUniformLocation(p, "uUseMaterial"), 0);
      const auto albedo = s.albedo(i);
      glProgramUniform3f(p, glGetUniformLocation(p, "uAlbedo"), albedo[0], albedo[1], albedo[2]);
      glDrawElements(GL_TRIANGLES, count, GL_UNSIGNED_INT, nullptr);
      continue;
    }
    const size_t mi = size_t(m.data.material);
    s.materials.bind(p, mi, false);
    if (!material->double_sided) {
      glEnable(GL_CULL_FACE);
      glCullFace(GL_BACK);
    }
    const bool blend = material->alpha_mode == AlphaMode::Blend;
    if (blend) {  // premultiplied "over"; alpha accumulates as coverage
      glEnable(GL_BLEND);
      glBlendFunc(GL_ONE, GL_ONE_MINUS_SRC_ALPHA);
      glDepthMask(material->mtoon && material->mtoon->transparent_with_z_write ? GL_TRUE
                                                                               : GL_FALSE);
    }
    glDrawElements(GL_TRIANGLES, count, GL_UNSIGNED_INT, nullptr);
    const MToon* toon = material->mtoon ? &*material->mtoon : nullptr;
    if (options.outlines && toon && toon->outline_width_mode != OutlineWidthMode::None &&
        toon->outline_width > 0) {
      // The outline shell: the back faces pushed out, so only its rim shows around the mesh.
      s.materials.bind_outline(p, mi);
      s.materials.bind(p, mi, true);
      glEnable(GL_CULL_FACE);
      glCullFace(GL_FRONT);
      glDrawElements(GL_TRIANGLES, count, GL_UNSIGNED_INT, nullptr);
      glCullFace(GL_BACK);
      glProgramUniform1i(p, glGetUniformLocation(p, "uOutlineMode"), 0);
    }
    glDisable(GL_CULL_FACE);
    glDisable(GL_BLEND);
    glDepthMask(GL_TRUE);
  }
  glColorMask(GL_TRUE, GL_TRUE, GL_TRUE, GL_TRUE);
  if (s.depth_only_meshes) s.draw_ground(options, view_proj);
  s.draw_extras(options, camera, view_proj);
  s.shadows_on = false;  // crowds and bakes draw without this frame's shadow map
  return s.finish_frame();
}

bool Renderer::gpu_skin(size_t mesh, std::span<const Mat4> model_pose, SkinningMethod method,
                        std::span<Vec3f> positions, std::span<Vec3f> normals) {
  Impl& s = *impl_;
  if (mesh >= s.meshes.size() || int(model_pose.size()) != s.joint_count) return false;
  const GpuMesh& m = s.meshes[mesh];
  const size_t n = m.data.positions.size();
  if ((!positions.empty() && positions.size() != n) || (!normals.empty() && normals.size() != n))
    return false;
  s.context.make_current();
  bool use_prescale = false;
  s.upload_palette(m, model_pose, method, use_prescale);
  glUseProgram(s.skin_program);
  s.set_skin_uniforms(method, use_prescale, Mat4f::identity());
  glProgramUniform1ui(s.skin_program, glGetUniformLocation(s.skin_program, "uPaletteStride"), 0);
  glNamedBufferData(s.feedback_buffer, GLsizeiptr(n * 6 * sizeof(float)), nullptr, GL_STREAM_READ);
  glBindBufferBase(GL_TRANSFORM_FEEDBACK_BUFFER, 0, s.feedback_buffer);
  // Draws need a complete framebuffer even with rasterization off (surfaceless has none).
  glBindFramebuffer(GL_FRAMEBUFFER, s.msaa_fbo);
  glEnable(GL_RASTERIZER_DISCARD);
  glBindVertexArray(m.vao);
  glBeginTransformFeedback(GL_POINTS);
  glDrawArrays(GL_POINTS, 0, GLsizei(n));
  glEndTransformFeedback();
  glDisable(GL_RASTERIZER_DISCARD);
  glBindVertexArray(0);
  glBindFramebuffer(GL_FRAMEBUFFER, 0);
  s.upload.resize(n * 6);
  glGetNamedBufferSubData(s.feedback_buffer, 0, GLsizeiptr(n * 6 * sizeof(float)), s.upload.data());
  glBindBufferBase(GL_TRANSFORM_FEEDBACK_BUFFER, 0, 0);
  s.check_gl("transform feedback");
  for (size_t v = 0; v < n; ++v) {
    const float* f = &s.upload[v * 6];
    if (!positions.empty()) positions[v] = {f[0], f[1], f[2]};
    if (!normals.empty()) normals[v] = {f[3], f[4], f[5]};
  }
  return true;
}

}  // namespace kinema
