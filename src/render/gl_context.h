// src/render/gl_context.h — an EGL context for headless OpenGL 4.5 core (internal).
#pragma once

#include <string>

namespace kinema::render_detail {

/// Owns an EGL display + OpenGL 4.5 core context with no surface (render into FBOs).
class GlContext {
 public:
  /// Tries an EGL hardware device first when `prefer_gpu` (and KINEMA_RENDER_SOFTWARE is not
  /// set), then the surfaceless platform (Mesa llvmpipe). Throws kinema::Error("OpenGL", …).
  explicit GlContext(bool prefer_gpu);
  ~GlContext();
  GlContext(const GlContext&) = delete;
  GlContext& operator=(const GlContext&) = delete;

  /// Makes the context current on this thread (throws on failure).
  void make_current() const;
  const std::string& renderer() const { return renderer_; }
  /// Where the context came from: "EGL device", "surfaceless".
  const std::string& platform() const { return platform_; }

 private:
  void* display_ = nullptr;
  void* context_ = nullptr;
  std::string renderer_, platform_;
};

}  // namespace kinema::render_detail
