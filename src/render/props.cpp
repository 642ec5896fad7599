// src/render/props.cpp — still props (kinema::PropMesh, DrawOptions::props): checked, copied each
// frame into one vertex and one index buffer, and drawn one call a prop in its colour, lit as the
// crowds (flat face normals).
#include <climits>
#include <cmath>
#include <string>
#include <string_view>

#include "renderer_impl.h"
#include "shaders.h"

namespace kinema {

namespace {

bool finite3(const Vec3f& v) {
  return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z);
}

// "prop 3" or "prop 3 (fountain)".
std::string prop_place(size_t index, std::string_view name) {
  std::string place = "prop " + std::to_string(index);
  if (!name.empty()) place += " (" + std::string(name) + ")";
  return place;
}

}  // namespace

void render_detail::check_props(std::span<const PropMesh> props) {
  size_t vertices = 0, indices = 0;
  for (size_t i = 0; i < props.size(); ++i) {
    const PropMesh& prop = props[i];
    const auto fail = [&](const std::string& reason) {
      throw Error("render", prop_place(i, prop.name), reason);
    };
    if (!finite3(prop.colour)) fail("its colour is not finite");
    if (prop.colour.x < 0 || prop.colour.y < 0 || prop.colour.z < 0) fail("its colour is negative");
    if (prop.indices.size() % 3 != 0)
      fail(std::to_string(prop.indices.size()) +
           " indices are not whole triangles (three a triangle)");
    for (size_t v = 0; v < prop.positions.size(); ++v)
      if (!finite3(prop.positions[v]))
        fail("vertex " + std::to_string(v) + ": its position is not finite");
    for (size_t k = 0; k < prop.indices.size(); ++k)
      if (prop.indices[k] >= prop.positions.size())
        fail("index " + std::to_string(k) + " is vertex " + std::to_string(prop.indices[k]) +
             ", past its " + std::to_string(prop.positions.size()) + " vertices");
    vertices += prop.positions.size();
    indices += prop.indices.size();
  }
  if (vertices > size_t(INT_MAX) || indices > size_t(INT_MAX))
    throw Error("render", "props", "more than 2^31 vertices or indices in all");
}

void Renderer::Impl::draw_props(const DrawOptions& options, const Camera& camera,
                                const Mat4f& view_proj) {
  size_t vertices = 0, indices = 0;
  for (const PropMesh& prop : options.props) {
    vertices += prop.positions.size();
    indices += prop.indices.size();
  }
  if (indices == 0) return;
  if (!prop_program) {
    prop_program = render_detail::link(render_detail::kPropVertexShader,
                                       render_detail::kPropFragmentShader, "prop shader", false);
    glCreateVertexArrays(1, &prop_vao);
    glCreateBuffers(1, &prop_positions);
    glCreateBuffers(1, &prop_indices);
    glVertexArrayAttribFormat(prop_vao, 0, 3, GL_FLOAT, GL_FALSE, 0);
    glVertexArrayAttribBinding(prop_vao, 0, 0);
    glEnableVertexArrayAttrib(prop_vao, 0);
  }
  // Every prop's vertices and indices one after another; each draw starts at its own.
  glNamedBufferData(prop_positions, GLsizeiptr(vertices * sizeof(Vec3f)), nullptr, GL_STREAM_DRAW);
  glNamedBufferData(prop_indices, GLsizeiptr(indices * sizeof(uint32_t)), nullptr, GL_STREAM_DRAW);
  size_t first_vertex = 0, first_index = 0;
  for (const PropMesh& prop : options.props) {
    glNamedBufferSubData(prop_positions, GLintptr(first_vertex * sizeof(Vec3f)),
                         GLsizeiptr(prop.positions.size_bytes()), prop.positions.data());
    glNamedBufferSubData(prop_indices, GLintptr(first_index * sizeof(uint32_t)),
                         GLsizeiptr(prop.indices.size_bytes()), prop.indices.data());
    first_vertex += prop.positions.size();
    first_index += prop.indices.size();
  }
  glVertexArrayVertexBuffer(prop_vao, 0, prop_positions, 0, sizeof(Vec3f));
  glVertexArrayElementBuffer(prop_vao, prop_indices);

  const GLuint p = prop_program;
  glUseProgram(p);
  const Vec3f sun = normalize(options.light_direction, sun_direction());
  glProgramUniformMatrix4fv(p, glGetUniformLocation(p, "uViewProjection"), 1, GL_FALSE,
                            view_proj.m.data());
  glProgramUniform3f(p, glGetUniformLocation(p, "uEye"), camera.eye.x, camera.eye.y, camera.eye.z);
  glProgramUniform3f(p, glGetUniformLocation(p, "uSunDirection"), sun.x, sun.y, sun.z);
  // The shadow-only pass: props hide the ground's shadow as the meshes do, unseen themselves.
  if (depth_only_meshes) glColorMask(GL_FALSE, GL_FALSE, GL_FALSE, GL_FALSE);
  glBindVertexArray(prop_vao);
  first_vertex = first_index = 0;
  for (const PropMesh& prop : options.props) {
    if (!prop.indices.empty()) {
      glProgramUniform3f(p, glGetUniformLocation(p, "uAlbedo"), prop.colour.x, prop.colour.y,
                         prop.colour.z);
      glDrawElementsBaseVertex(GL_TRIANGLES, GLsizei(prop.indices.size()), GL_UNSIGNED_INT,
                               reinterpret_cast<const void*>(first_index * sizeof(uint32_t)),
                               GLint(first_vertex));
    }
    first_vertex += prop.positions.size();
    first_index += prop.indices.size();
  }
  glBindVertexArray(0);
  glColorMask(GL_TRUE, GL_TRUE, GL_TRUE, GL_TRUE);
}

void Renderer::Impl::free_props() {
  glDeleteProgram(prop_program);
  const GLuint buffers[] = {prop_positions, prop_indices};
  glDeleteBuffers(2, buffers);
  glDeleteVertexArrays(1, &prop_vao);
  prop_program = prop_vao = prop_positions = prop_indices = 0;
}

}  // namespace kinema
