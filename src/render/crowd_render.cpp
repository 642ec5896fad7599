// src/render/crowd_render.cpp — crowds on the Renderer: instanced skinning from per-instance
// palettes, vertex-animation textures and impostor flipbooks baked from the current asset, and
// the dithered cross-fade between them (kinema/render/renderer.h, "Crowds").
#include <cmath>
#include <cstring>
#include <numeric>

#include "kinema/skin/vat.h"
#include "renderer_impl.h"
#include "shaders.h"

namespace kinema {

namespace render_detail {

struct CrowdVat {
  GLuint buffer = 0, texture = 0;
  std::vector<GLint> first_vertex;  // per uploaded mesh, within a frame
  Vec3f origin{0, 0, 0};
  CrowdBakeInfo info;
};

struct CrowdImpostor {
  GLuint texture = 0;
  CrowdBakeInfo info;
};

struct CrowdGl {
  GLuint skin_program = 0, vat_program = 0, impostor_program = 0;
  GLuint style_buffer = 0, place_buffer = 0, palette_buffer = 0, empty_vao = 0;
  std::vector<CrowdVat> vats;
  std::vector<CrowdImpostor> impostors;
  // Per-frame scratch.
  std::vector<float> styles, places;
  std::vector<Affine3x4f> palettes;
};

void forget_crowd_bakes(CrowdGl& crowd) {
  for (CrowdVat& v : crowd.vats) {
    glDeleteTextures(1, &v.texture);
    glDeleteBuffers(1, &v.buffer);
  }
  for (CrowdImpostor& i : crowd.impostors) glDeleteTextures(1, &i.texture);
  crowd.vats.clear();
  crowd.impostors.clear();
}

void free_crowd_gl(CrowdGl& crowd) {
  forget_crowd_bakes(crowd);
  for (GLuint program : {crowd.skin_program, crowd.vat_program, crowd.impostor_program})
    glDeleteProgram(program);
  const GLuint buffers[] = {crowd.style_buffer, crowd.place_buffer, crowd.palette_buffer};
  glDeleteBuffers(3, buffers);
  glDeleteVertexArrays(1, &crowd.empty_vao);
  crowd = CrowdGl{};
}

void delete_crowd_gl(CrowdGl* crowd) { delete crowd; }

namespace {

constexpr float kTau = 6.283185307179586f;

bool finite3(const Vec3f& v) {
  return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z);
}

// Projection · view of an orthographic camera at `eye` looking at `target` (+Y up), showing
// ±half metres each way; depth over [near, far] metres from the eye.
Mat4f orthographic_view_projection(const Vec3f& eye, const Vec3f& target, float half, float near,
                                   float far) {
  Camera camera;
  camera.eye = eye;
  camera.target = target;
  Mat4f proj;
  proj(0, 0) = 1 / half;
  proj(1, 1) = 1 / half;
  proj(2, 2) = -2 / (far - near);
  proj(2, 3) = -(far + near) / (far - near);
  return proj * camera_view(camera);
}

void set_float(GLuint p, const char* name, float v) {
  glProgramUniform1f(p, glGetUniformLocation(p, name), v);
}
void set_int(GLuint p, const char* name, int v) {
  glProgramUniform1i(p, glGetUniformLocation(p, name), v);
}
void set_vec3(GLuint p, const char* name, const Vec3f& v) {
  glProgramUniform3f(p, glGetUniformLocation(p, name), v.x, v.y, v.z);
}
void set_matrix(GLuint p, const char* name, const Mat4f& m) {
  glProgramUniformMatrix4fv(p, glGetUniformLocation(p, name), 1, GL_FALSE, m.m.data());
}

// Two vec4 an instance: (tint, coverage), (complement, 0, 0, 0).
void write_style(float* style, const Vec3f& tint, const CrowdFade& fade) {
  const bool own = tint.x < 0 || tint.y < 0 || tint.z < 0;
  const float t[8] = {own ? -1.0f : tint.x,          tint.y, tint.z, fade.coverage,
                      fade.complement ? 1.0f : 0.0f, 0,      0,      0};
  std::copy(t, t + 8, style);
}

void check_fade(const CrowdFade& fade, const std::string& place) {
  if (!(fade.coverage >= 0 && fade.coverage <= 1))
    throw Error("render", place, "its coverage is outside 0…1");
}

}  // namespace

}  // namespace render_detail

using render_detail::CrowdGl;
using render_detail::link;

CrowdGl& Renderer::Impl::crowd_gl() {
  Impl& s = *this;
  if (s.crowd) return *s.crowd;
  s.crowd.reset(new CrowdGl);
  CrowdGl& c = *s.crowd;
  c.skin_program = link(render_detail::kSkinVertexShader, render_detail::kCrowdFragmentShader,
                        "crowd skinning shader", false);
  c.vat_program = link(render_detail::kVatVertexShader, render_detail::kCrowdFragmentShader,
                       "crowd VAT shader", false);
  c.impostor_program = link(render_detail::kImpostorVertexShader,
                            render_detail::kImpostorFragmentShader, "impostor shader", false);
  GLuint* buffers[] = {&c.style_buffer, &c.place_buffer, &c.palette_buffer};
  for (GLuint* b : buffers) glCreateBuffers(1, b);
  glCreateVertexArrays(1, &c.empty_vao);
  s.check_gl("crowd setup");
  return c;
}

namespace {

// Checks the loop's poses and skins every uploaded mesh in each (transform feedback): frame f's
// vertices at [f · V, (f + 1) · V), meshes one after another.
std::vector<Vec3f> skin_loop(Renderer& renderer, int joints,
                             std::span<const std::vector<Mat4>> poses, float fps,
                             const char* what) {
  if (poses.empty()) throw Error("render", what, "there are no poses to bake");
  if (!(fps > 0) || !std::isfinite(fps))
    throw Error("render", what, "the frame rate is not a positive number");
  size_t vertices = 0;
  for (size_t m = 0; m < renderer.mesh_count(); ++m) vertices += renderer.vertex_count(m);
  if (vertices == 0) throw Error("render", what, "the asset has no mesh to bake");
  std::vector<Vec3f> out(vertices * poses.size());
  for (size_t f = 0; f < poses.size(); ++f) {
    if (int(poses[f].size()) != joints)
      throw Error("render", std::string(what) + " pose " + std::to_string(f),
                  "it has " + std::to_string(poses[f].size()) + " joints, the skeleton " +
                      std::to_string(joints));
    size_t at = f * vertices;
    for (size_t m = 0; m < renderer.mesh_count(); ++m) {
      const size_t n = renderer.vertex_count(m);
      renderer.gpu_skin(m, poses[f], SkinningMethod::Lbs, std::span(out).subspan(at, n), {});
      at += n;
    }
  }
  for (size_t i = 0; i < out.size(); ++i)
    if (!render_detail::finite3(out[i]))
      throw Error("render", std::string(what) + " pose " + std::to_string(i / vertices),
                  "vertex " + std::to_string(i % vertices) + " skins to a non-finite position");
  return out;
}

}  // namespace

CrowdBakeInfo Renderer::add_crowd_vat(std::span<const std::vector<Mat4>> poses, float fps) {
  Impl& s = *impl_;
  s.context.make_current();
  const std::vector<Vec3f> positions = skin_loop(*this, s.joint_count, poses, fps, "VAT");
  const size_t vertices = positions.size() / poses.size();
  GLint max_texels = 0;
  glGetIntegerv(GL_MAX_TEXTURE_BUFFER_SIZE, &max_texels);
  if (positions.size() > size_t(max_texels))
    throw Error("render", "VAT",
                std::to_string(positions.size()) +
                    " texels (vertices × frames) are more than the "
                    "driver's texture buffer holds (" +
                    std::to_string(max_texels) + ")");
  Vec3f lo = positions[0], hi = positions[0];
  for (const Vec3f& p : positions) {
    lo = {std::min(lo.x, p.x), std::min(lo.y, p.y), std::min(lo.z, p.z)};
    hi = {std::max(hi.x, p.x), std::max(hi.y, p.y), std::max(hi.z, p.z)};
  }
  render_detail::CrowdVat vat;
  vat.origin = (lo + hi) * 0.5f;  // halves the largest magnitude stored, and so the rounding
  std::vector<uint16_t> halves(positions.size() * 4);
  double max_error = 0;
  for (size_t i = 0; i < positions.size(); ++i) {
    const Vec3f d = positions[i] - vat.origin;
    const uint16_t h[4] = {float_to_half(d.x), float_to_half(d.y), float_to_half(d.z),
                           float_to_half(1.0f)};
    std::copy(h, h + 4, halves.begin() + std::ptrdiff_t(i * 4));
    const Vec3f back =
        Vec3f{half_to_float(h[0]), half_to_float(h[1]), half_to_float(h[2])} + vat.origin;
    max_error = std::max(max_error, double(length(back - positions[i])));
  }
  CrowdGl& c = s.crowd_gl();
  glCreateBuffers(1, &vat.buffer);
  glNamedBufferStorage(vat.buffer, GLsizeiptr(halves.size() * sizeof(uint16_t)), halves.data(), 0);
  glCreateTextures(GL_TEXTURE_BUFFER, 1, &vat.texture);
  glTextureBuffer(vat.texture, GL_RGBA16F, vat.buffer);
  GLint first = 0;
  for (size_t m = 0; m < mesh_count(); ++m) {
    vat.first_vertex.push_back(first);
    first += GLint(vertex_count(m));
  }
  vat.info.index = int(c.vats.size());
  vat.info.frames = int(poses.size());
  vat.info.fps = fps;
  vat.info.vertices = vertices;
  vat.info.bytes = halves.size() * sizeof(uint16_t);
  vat.info.max_error_m = max_error;
  c.vats.push_back(vat);
  s.check_gl("VAT upload");
  return vat.info;
}

CrowdBakeInfo Renderer::add_crowd_impostor(std::span<const std::vector<Mat4>> poses, float fps,
                                           const ImpostorOptions& options) {
  Impl& s = *impl_;
  if (options.views < 1 || options.views > 64)
    throw Error("render", "impostor", "the number of views must be 1…64");
  if (options.cell_pixels < 8 || options.cell_pixels > 1024)
    throw Error("render", "impostor", "a cell must be 8…1024 pixels");
  s.context.make_current();
  const std::vector<Vec3f> positions = skin_loop(*this, s.joint_count, poses, fps, "impostor");
  const int cell = options.cell_pixels, views = options.views, frames = int(poses.size());
  GLint max_size = 0;
  glGetIntegerv(GL_MAX_TEXTURE_SIZE, &max_size);
  if (int64_t(views) * cell > max_size || int64_t(frames) * cell > max_size)
    throw Error("render", "impostor",
                "the atlas (" + std::to_string(views * cell) + " × " +
                    std::to_string(int64_t(frames) * cell) +
                    " pixels) is larger than the "
                    "driver's textures (" +
                    std::to_string(max_size) + ")");
  // The quad: every frame from every side fits a square about the vertical axis.
  float radius = 0, y_lo = positions[0].y, y_hi = positions[0].y;
  for (const Vec3f& p : positions) {
    radius = std::max(radius, std::sqrt(p.x * p.x + p.z * p.z));
    y_lo = std::min(y_lo, p.y);
    y_hi = std::max(y_hi, p.y);
  }
  const float half = std::max({radius, 0.5f * (y_hi - y_lo), 1e-3f}) * 1.04f;
  const float centre = 0.5f * (y_lo + y_hi);
  CrowdGl& c = s.crowd_gl();

  render_detail::CrowdImpostor imp;
  glCreateTextures(GL_TEXTURE_2D, 1, &imp.texture);
  glTextureStorage2D(imp.texture, 1, GL_SRGB8_ALPHA8, views * cell, frames * cell);
  glTextureParameteri(imp.texture, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
  glTextureParameteri(imp.texture, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
  glTextureParameteri(imp.texture, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTextureParameteri(imp.texture, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  // A multisampled cell target, resolved into a plain one and copied into the atlas (a resolve
  // blit cannot move the rectangle). All sRGB, as the frame's target: the atlas stores
  // encode(premultiplied linear) and its samples come back linear.
  GLuint ms_colour = 0, ms_depth = 0, ms_fbo = 0, cell_texture = 0, cell_fbo = 0;
  glCreateRenderbuffers(1, &ms_colour);
  glCreateRenderbuffers(1, &ms_depth);
  glNamedRenderbufferStorageMultisample(ms_colour, s.samples, GL_SRGB8_ALPHA8, cell, cell);
  glNamedRenderbufferStorageMultisample(ms_depth, s.samples, GL_DEPTH_COMPONENT24, cell, cell);
  glCreateFramebuffers(1, &ms_fbo);
  glNamedFramebufferRenderbuffer(ms_fbo, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, ms_colour);
  glNamedFramebufferRenderbuffer(ms_fbo, GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, ms_depth);
  glCreateTextures(GL_TEXTURE_2D, 1, &cell_texture);
  glTextureStorage2D(cell_texture, 1, GL_SRGB8_ALPHA8, cell, cell);
  glCreateFramebuffers(1, &cell_fbo);
  glNamedFramebufferTexture(cell_fbo, GL_COLOR_ATTACHMENT0, cell_texture, 0);

  const GLuint p = s.skin_program;
  glUseProgram(p);
  s.use_flat_look(p);
  glProgramUniform1ui(p, glGetUniformLocation(p, "uPaletteStride"), 0);
  glBindFramebuffer(GL_FRAMEBUFFER, ms_fbo);
  glViewport(0, 0, cell, cell);
  glEnable(GL_DEPTH_TEST);
  glDepthFunc(GL_LESS);
  glDisable(GL_CULL_FACE);
  if (s.samples > 1) glEnable(GL_MULTISAMPLE);
  glEnable(GL_FRAMEBUFFER_SRGB);
  const float distance = 4 * half + 1;
  const Vec3f target{0, centre, 0};
  for (int f = 0; f < frames; ++f)
    for (int v = 0; v < views; ++v) {
      const float azimuth = render_detail::kTau * float(v) / float(views);  // 0: in front (+Z)
      const Vec3f eye = target + Vec3f{std::sin(azimuth), 0, std::cos(azimuth)} * distance;
      const Mat4f view_proj = render_detail::orthographic_view_projection(
          eye, target, half, distance - 2 * half, distance + 2 * half);
      glBindFramebuffer(GL_FRAMEBUFFER, ms_fbo);
      glClearColor(0, 0, 0, 0);  // transparent: the resolve gives premultiplied edges
      glClearDepth(1.0);
      glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
      render_detail::set_vec3(p, "uEye", eye);
      for (size_t m = 0; m < s.meshes.size(); ++m) {
        bool use_prescale = false;
        s.upload_palette(s.meshes[m], poses[size_t(f)], SkinningMethod::Lbs, use_prescale);
        s.set_skin_uniforms(SkinningMethod::Lbs, use_prescale, view_proj);
        const auto albedo = s.albedo(m);
        glProgramUniform3f(p, glGetUniformLocation(p, "uAlbedo"), albedo[0], albedo[1], albedo[2]);
        glBindVertexArray(s.meshes[m].vao);
        glDrawElements(GL_TRIANGLES, GLsizei(s.meshes[m].data.indices.size()), GL_UNSIGNED_INT,
                       nullptr);
      }
      glBlitNamedFramebuffer(ms_fbo, cell_fbo, 0, 0, cell, cell, 0, 0, cell, cell,
                             GL_COLOR_BUFFER_BIT, GL_NEAREST);
      glCopyImageSubData(cell_texture, GL_TEXTURE_2D, 0, 0, 0, 0, imp.texture, GL_TEXTURE_2D, 0,
                         v * cell, f * cell, 0, cell, cell, 1);
    }
  glBindVertexArray(0);
  glBindFramebuffer(GL_FRAMEBUFFER, 0);
  glDeleteFramebuffers(1, &ms_fbo);
  glDeleteFramebuffers(1, &cell_fbo);
  glDeleteTextures(1, &cell_texture);
  const GLuint rbs[] = {ms_colour, ms_depth};
  glDeleteRenderbuffers(2, rbs);

  imp.info.index = int(c.impostors.size());
  imp.info.frames = frames;
  imp.info.fps = fps;
  imp.info.views = views;
  imp.info.cell_pixels = cell;
  imp.info.bytes = size_t(views) * size_t(frames) * size_t(cell) * size_t(cell) * 4;
  imp.info.half_size = half;
  imp.info.centre_height = centre;
  c.impostors.push_back(imp);
  s.check_gl("impostor bake");
  return imp.info;
}

Image Renderer::crowd_impostor_atlas(int index) {
  Impl& s = *impl_;
  if (!s.crowd || index < 0 || index >= int(s.crowd->impostors.size()))
    throw Error("render", "impostor " + std::to_string(index), "no such impostor was baked");
  s.context.make_current();
  const CrowdBakeInfo& info = s.crowd->impostors[size_t(index)].info;
  const int w = info.views * info.cell_pixels, h = info.frames * info.cell_pixels;
  std::vector<uint8_t> rows(size_t(w) * size_t(h) * 4);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glGetTextureImage(s.crowd->impostors[size_t(index)].texture, 0, GL_RGBA, GL_UNSIGNED_BYTE,
                    GLsizei(rows.size()), rows.data());
  s.check_gl("impostor readback");
  Image image(w, h);  // row f of the atlas (bottom-up in OpenGL) becomes row f from the top
  const size_t stride = size_t(w) * 4;
  const size_t cell_rows = size_t(info.cell_pixels);
  for (int f = 0; f < info.frames; ++f)
    for (size_t y = 0; y < cell_rows; ++y)  // each cell upright
      std::memcpy(&image.rgba[(size_t(f) * cell_rows + y) * stride],
                  &rows[(size_t(f) * cell_rows + (cell_rows - 1 - y)) * stride], stride);
  return image;
}

Image Renderer::render_crowd(const CrowdFrame& frame, const Camera& camera,
                             const DrawOptions& options) {
  Impl& s = *impl_;
  render_detail::check_billboards(options.billboards);
  render_detail::check_strands(options.strands);
  render_detail::check_props(options.props);
  const size_t n_skel = frame.skeletons.size();
  for (size_t i = 0; i < n_skel; ++i) {
    const std::string place = "crowd skeleton instance " + std::to_string(i);
    if (int(frame.skeletons[i].pose.size()) != s.joint_count)
      throw Error("render", place,
                  "its pose has " + std::to_string(frame.skeletons[i].pose.size()) +
                      " joints, the skeleton " + std::to_string(s.joint_count));
    render_detail::check_fade(frame.skeletons[i].fade, place);
  }
  const size_t vat_count = s.crowd ? s.crowd->vats.size() : 0;
  const size_t impostor_count = s.crowd ? s.crowd->impostors.size() : 0;
  const auto check_baked = [](std::span<const CrowdBakedInstance> instances, size_t bakes,
                              const char* kind) {
    for (size_t i = 0; i < instances.size(); ++i) {
      const CrowdBakedInstance& b = instances[i];
      const std::string place = std::string("crowd ") + kind + " instance " + std::to_string(i);
      if (b.bake < 0 || size_t(b.bake) >= bakes)
        throw Error("render", place,
                    std::string("its ") + kind + " " + std::to_string(b.bake) + " was not baked (" +
                        std::to_string(bakes) + " are)");
      if (!render_detail::finite3(b.position) || !std::isfinite(b.yaw) || !std::isfinite(b.time))
        throw Error("render", place, "its position, yaw or time is not finite");
      render_detail::check_fade(b.fade, place);
    }
  };
  for (const GpuMesh& m : s.meshes)  // one buffer holds a mesh's palettes for every instance
    if (m.data.skin_joints.size() * n_skel > (size_t(1) << 30) / sizeof(Affine3x4f))
      throw Error("render", "crowd",
                  std::to_string(n_skel) + " skinned instances of " +
                      std::to_string(m.data.skin_joints.size()) +
                      " joints need more than 1 GiB of palettes: draw the far ones as VATs");
  check_baked(frame.vats, vat_count, "VAT");
  check_baked(frame.impostors, impostor_count, "impostor");

  Mat4f view_proj;
  s.begin_frame(camera, options, view_proj);
  CrowdGl& c = s.crowd_gl();
  const Vec3f sun = Impl::sun_direction();

  // One index space for the style and place buffers (8 floats an instance each): skeletons,
  // then VATs and impostors grouped by bake by a counting sort, so that one instanced draw per
  // bake and mesh covers [first + starts[b], first + starts[b + 1]).
  const size_t total = std::max<size_t>(1, n_skel + frame.vats.size() + frame.impostors.size());
  c.styles.assign(total * 8, 0.0f);  // at least one instance: an empty buffer cannot be bound
  c.places.assign(total * 8, 0.0f);
  for (size_t i = 0; i < n_skel; ++i)
    render_detail::write_style(&c.styles[i * 8], frame.skeletons[i].tint, frame.skeletons[i].fade);
  const auto group_by_bake = [&](std::span<const CrowdBakedInstance> instances, size_t bakes,
                                 size_t first, std::vector<size_t>& starts) {
    starts.assign(bakes + 1, 0);
    for (const CrowdBakedInstance& b : instances) ++starts[size_t(b.bake) + 1];
    std::partial_sum(starts.begin(), starts.end(), starts.begin());
    std::vector<size_t> next(starts.begin(), starts.end() - 1);
    for (const CrowdBakedInstance& b : instances) {
      const size_t slot = first + next[size_t(b.bake)]++;
      render_detail::write_style(&c.styles[slot * 8], b.tint, b.fade);
      const float place[8] = {b.position.x, b.position.y, b.position.z, b.yaw, b.time, 0, 0, 0};
      std::copy(place, place + 8, &c.places[slot * 8]);
    }
  };
  std::vector<size_t> vat_starts, impostor_starts;
  group_by_bake(frame.vats, vat_count, n_skel, vat_starts);
  group_by_bake(frame.impostors, impostor_count, n_skel + frame.vats.size(), impostor_starts);
  glNamedBufferData(c.style_buffer, GLsizeiptr(c.styles.size() * sizeof(float)), c.styles.data(),
                    GL_STREAM_DRAW);
  glNamedBufferData(c.place_buffer, GLsizeiptr(c.places.size() * sizeof(float)), c.places.data(),
                    GL_STREAM_DRAW);
  glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 6, c.style_buffer);
  glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 7, c.place_buffer);

  // Near and mid: every instance's palette for a mesh in one buffer, one instanced draw.
  if (n_skel > 0) {
    const GLuint p = c.skin_program;
    glUseProgram(p);
    render_detail::set_int(p, "uMethod", 0);
    render_detail::set_int(p, "uPrescale", 0);
    render_detail::set_matrix(p, "uViewProjection", view_proj);
    render_detail::set_int(p, "uInstanceBase", 0);
    render_detail::set_int(p, "uFlatNormals", 0);
    render_detail::set_vec3(p, "uEye", camera.eye);
    render_detail::set_vec3(p, "uSunDirection", sun);
    for (size_t m = 0; m < s.meshes.size(); ++m) {
      const MeshData& d = s.meshes[m].data;
      if (d.skin_joints.empty()) continue;  // a mesh on no joint would stand at the origin
      const size_t stride = d.skin_joints.size();
      c.palettes.resize(stride * n_skel);
      for (size_t i = 0; i < n_skel; ++i)
        skinning_palette(frame.skeletons[i].pose, d.skin_joints, s.meshes[m].inverse_bind_f,
                         std::span(c.palettes).subspan(i * stride, stride));
      glNamedBufferData(c.palette_buffer, GLsizeiptr(c.palettes.size() * sizeof(Affine3x4f)),
                        c.palettes.data(), GL_STREAM_DRAW);
      glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, c.palette_buffer);
      glProgramUniform1ui(p, glGetUniformLocation(p, "uPaletteStride"), GLuint(stride));
      const auto albedo = s.albedo(m);
      glProgramUniform3f(p, glGetUniformLocation(p, "uAlbedo"), albedo[0], albedo[1], albedo[2]);
      glBindVertexArray(s.meshes[m].vao);
      glDrawElementsInstanced(GL_TRIANGLES, GLsizei(d.indices.size()), GL_UNSIGNED_INT, nullptr,
                              GLsizei(n_skel));
    }
  }

  // Far: the VAT's positions by vertex index and time.
  if (!frame.vats.empty()) {
    const GLuint p = c.vat_program;
    glUseProgram(p);
    render_detail::set_matrix(p, "uViewProjection", view_proj);
    render_detail::set_vec3(p, "uEye", camera.eye);
    render_detail::set_vec3(p, "uSunDirection", sun);
    render_detail::set_int(p, "uFlatNormals", 1);
    render_detail::set_int(p, "uVat", 0);
    for (size_t b = 0; b < vat_count; ++b) {
      const GLsizei count = GLsizei(vat_starts[b + 1] - vat_starts[b]);
      if (count == 0) continue;
      const render_detail::CrowdVat& vat = c.vats[b];
      glBindTextureUnit(0, vat.texture);
      render_detail::set_int(p, "uVertexCount", int(vat.info.vertices));
      render_detail::set_int(p, "uFrameCount", vat.info.frames);
      render_detail::set_float(p, "uFps", vat.info.fps);
      render_detail::set_vec3(p, "uOrigin", vat.origin);
      render_detail::set_int(p, "uInstanceBase", int(n_skel + vat_starts[b]));
      for (size_t m = 0; m < s.meshes.size() && m < vat.first_vertex.size(); ++m) {
        const MeshData& d = s.meshes[m].data;
        render_detail::set_int(p, "uFirstVertex", vat.first_vertex[m]);
        const auto albedo = s.albedo(m);
        glProgramUniform3f(p, glGetUniformLocation(p, "uAlbedo"), albedo[0], albedo[1], albedo[2]);
        glBindVertexArray(s.meshes[m].vao);  // its indices; the positions come from the VAT
        glDrawElementsInstanced(GL_TRIANGLES, GLsizei(d.indices.size()), GL_UNSIGNED_INT, nullptr,
                                count);
      }
    }
  }

  // Farthest: a quad per instance, cut from the flipbook.
  if (!frame.impostors.empty()) {
    const GLuint p = c.impostor_program;
    glUseProgram(p);
    render_detail::set_matrix(p, "uViewProjection", view_proj);
    render_detail::set_vec3(p, "uEye", camera.eye);
    render_detail::set_int(p, "uAtlas", 0);
    glBindVertexArray(c.empty_vao);
    const size_t first = n_skel + frame.vats.size();
    for (size_t b = 0; b < impostor_count; ++b) {
      const GLsizei count = GLsizei(impostor_starts[b + 1] - impostor_starts[b]);
      if (count == 0) continue;
      const CrowdBakeInfo& info = c.impostors[b].info;
      glBindTextureUnit(0, c.impostors[b].texture);
      render_detail::set_float(p, "uHalfSize", info.half_size);
      render_detail::set_float(p, "uCentreHeight", info.centre_height);
      render_detail::set_int(p, "uViews", info.views);
      render_detail::set_int(p, "uFrames", info.frames);
      render_detail::set_float(p, "uFps", info.fps);
      render_detail::set_float(p, "uInset", 0.5f / float(info.cell_pixels));
      render_detail::set_int(p, "uInstanceBase", int(first + impostor_starts[b]));
      glDrawArraysInstanced(GL_TRIANGLE_STRIP, 0, 4, count);
    }
  }
  glBindTextureUnit(0, 0);
  s.draw_extras(options, camera, view_proj);
  return s.finish_frame();
}

}  // namespace kinema
