// src/render/gl_context.cpp — EGL display and context selection: a hardware EGL device when
// there is one (EGL_EXT_device_enumeration), else Mesa's surfaceless platform (llvmpipe).
#include "gl_context.h"

#include <EGL/egl.h>
#include <EGL/eglext.h>

#define GL_GLEXT_PROTOTYPES
#include <GL/gl.h>
#include <GL/glext.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kinema/core/error.h"

namespace kinema::render_detail {

namespace {

// Contexts alive per process: EGL displays are shared, so the last one out terminates them.
std::atomic<int> g_live_contexts{0};

std::string egl_error_text() {
  const EGLint e = eglGetError();
  char buf[32];
  std::snprintf(buf, sizeof buf, "EGL error 0x%04X", static_cast<unsigned>(e));
  return buf;
}

bool has_extension(const char* list, const char* name) {
  if (!list) return false;
  const size_t n = std::strlen(name);
  for (const char* p = list; (p = std::strstr(p, name)) != nullptr; p += n)
    if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0')) return true;
  return false;
}

// Initializes `display`, binds OpenGL and creates a 4.5 core context; false (display
// terminated) when any step fails.
bool try_context(EGLDisplay display, EGLContext& context, std::string& why) {
  EGLint major = 0, minor = 0;
  if (display == EGL_NO_DISPLAY || !eglInitialize(display, &major, &minor)) {
    why = "eglInitialize failed (" + egl_error_text() + ")";
    return false;
  }
  if (!eglBindAPI(EGL_OPENGL_API)) {
    why = "the EGL display has no desktop OpenGL";
    eglTerminate(display);
    return false;
  }
  const EGLint config_attribs[] = {EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE,
                                   EGL_OPENGL_BIT, EGL_NONE};
  EGLConfig config = nullptr;
  EGLint count = 0;
  // Surfaceless contexts need no config on Mesa; take one when there is one.
  if (!eglChooseConfig(display, config_attribs, &config, 1, &count) || count < 1) config = nullptr;
  const EGLint context_attribs[] = {EGL_CONTEXT_MAJOR_VERSION,
                                    4,
                                    EGL_CONTEXT_MINOR_VERSION,
                                    5,
                                    EGL_CONTEXT_OPENGL_PROFILE_MASK,
                                    EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
                                    EGL_NONE};
  context = eglCreateContext(display, config, EGL_NO_CONTEXT, context_attribs);
  if (context == EGL_NO_CONTEXT) {
    why = "no OpenGL 4.5 core context (" + egl_error_text() + ")";
    eglTerminate(display);
    return false;
  }
  if (!eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, context)) {
    why = "eglMakeCurrent without a surface failed (" + egl_error_text() + ")";
    eglDestroyContext(display, context);
    eglTerminate(display);
    return false;
  }
  return true;
}

}  // namespace

GlContext::GlContext(bool prefer_gpu) {
  const char* force_software = std::getenv("KINEMA_RENDER_SOFTWARE");
  if (force_software && *force_software && std::strcmp(force_software, "0") != 0)
    prefer_gpu = false;
  const char* client_ext = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
  if (!client_ext)
    throw Error("OpenGL", "EGL",
                "no usable EGL library (install libegl1 and Mesa's libegl-mesa0 / "
                "libgl1-mesa-dri, or a GPU driver)");
  auto get_platform_display = reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(
      eglGetProcAddress("eglGetPlatformDisplayEXT"));
  std::string why = "EGL has no platform display extension";
  EGLContext context = EGL_NO_CONTEXT;

  if (prefer_gpu && get_platform_display && has_extension(client_ext, "EGL_EXT_platform_device")) {
    auto query_devices =
        reinterpret_cast<PFNEGLQUERYDEVICESEXTPROC>(eglGetProcAddress("eglQueryDevicesEXT"));
    auto query_device_string = reinterpret_cast<PFNEGLQUERYDEVICESTRINGEXTPROC>(
        eglGetProcAddress("eglQueryDeviceStringEXT"));
    EGLDeviceEXT devices[16];
    EGLint count = 0;
    if (query_devices && query_devices(16, devices, &count)) {
      for (EGLint i = 0; i < count && !display_; ++i) {
        const char* dev_ext =
            query_device_string ? query_device_string(devices[i], EGL_EXTENSIONS) : nullptr;
        if (has_extension(dev_ext, "EGL_MESA_device_software")) continue;  // that is llvmpipe
        EGLDisplay d = get_platform_display(EGL_PLATFORM_DEVICE_EXT, devices[i], nullptr);
        if (try_context(d, context, why)) {
          display_ = d;
          context_ = context;
          platform_ = "EGL device";
        }
      }
    }
  }
  if (!display_ && get_platform_display &&
      has_extension(client_ext, "EGL_MESA_platform_surfaceless")) {
    EGLDisplay d =
        get_platform_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr);
    if (try_context(d, context, why)) {
      display_ = d;
      context_ = context;
      platform_ = "surfaceless";
    }
  }
  if (!display_) {
    EGLDisplay d = eglGetDisplay(EGL_DEFAULT_DISPLAY);
    if (try_context(d, context, why)) {
      display_ = d;
      context_ = context;
      platform_ = "default display";
    }
  }
  if (!display_)
    throw Error("OpenGL", "EGL",
                "cannot create a headless OpenGL 4.5 core context: " + why +
                    " (a GPU driver, or Mesa's llvmpipe via libegl-mesa0 and libgl1-mesa-dri, "
                    "is needed)");
  ++g_live_contexts;
  const auto* name = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
  renderer_ = name ? name : "unknown";
}

GlContext::~GlContext() {
  if (!display_) return;
  eglMakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
  eglDestroyContext(display_, context_);
  // The display stays initialized: EGL displays are shared per process (eglTerminate would end
  // other renderers' contexts), and terminating unloads Mesa's driver, whose leftover
  // allocations LeakSanitizer then reports. The next renderer reuses it.
  if (--g_live_contexts == 0) eglReleaseThread();
}

void GlContext::make_current() const {
  if (eglGetCurrentContext() == context_) return;
  if (!eglMakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, context_))
    throw Error("OpenGL", "EGL", "cannot make the context current (" + egl_error_text() + ")");
}

}  // namespace kinema::render_detail
