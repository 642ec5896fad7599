// tests/render/render_fixture.h — a renderer per test (headless EGL: a GPU, else llvmpipe) and
// small image helpers shared by the render tests.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>

#include "kinema/character/asset.h"
#include "kinema/render/renderer.h"
#include "kinema/skeleton/skeleton.h"
#include "test_paths.h"

namespace kinema::test {

inline std::string data(const std::string& relative) {
  return test_paths::data_dir() + "/" + relative;
}

/// Creates the renderer lazily; a missing OpenGL is a failure, not a skip (setup.sh installs
/// Mesa's llvmpipe).
class RenderTest : public ::testing::Test {
 protected:
  Renderer& renderer(int width = 320, int height = 240) {
    if (!renderer_) {
      RendererOptions o;
      o.width = width;
      o.height = height;
      renderer_ = std::make_unique<Renderer>(o);
    }
    return *renderer_;
  }
  std::unique_ptr<Renderer> renderer_;
};

/// True when a pixel differs from the background colour (the renderer clears to it).
inline bool is_background(const Image& im, int x, int y) {
  const uint8_t* p = im.pixel(x, y);
  return p[0] == 204 && p[1] == 214 && p[2] == 227;
}

/// A 2 × 2 m wall facing +Z on the plane z = 0 (one rigid mesh on one joint).
inline Asset wall() {
  Asset a;
  a.skeleton = Skeleton::build({Joint{"root", kNoParent, {}, {}}});
  Mesh m;
  m.name = "wall";
  m.node = 0;
  m.positions = {{-1, 0, 0}, {1, 0, 0}, {1, 2, 0}, {-1, 2, 0}};
  m.normals.assign(4, Vec3f{0, 0, 1});
  m.indices = {0, 1, 2, 0, 2, 3};
  a.meshes.push_back(m);
  return a;
}

}  // namespace kinema::test
