// A green-screen plate made by rendering a character over a screen with a known alpha (the
// renderer's transparent background: coverage anti-aliased by MSAA), then keyed: the keyer's matte
// against the true coverage, a mean error under 0.01 a pixel — the figure compositing over live
// action expects of a good key.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "../../src/pipeline/render_plate.h"
#include "kinema/composite/image_file.h"
#include "kinema/composite/keyer.h"
#include "kinema/io/asset_file.h"
#include "kinema/render/clip_render.h"
#include "render/render_fixture.h"

namespace kinema {
namespace {

class GreenScreen : public test::RenderTest {};

TEST_F(GreenScreen, ARenderedCharacterKeysToAMeanMatteErrorUnderOneHundredth) {
  for (const char* file : {"gltf/RiggedFigure.glb", "vrm/Godette_vrm_v4.vrm"}) {
    const Asset asset = load_asset(test::data(file));
    ClipRenderOptions o;
    o.target.width = 320;
    o.target.height = 240;
    o.camera = CameraMode::Front;
    o.ground = false;
    o.transparent_background = true;
    ClipRenderer r(asset, asset.clips.empty() ? -1 : 0, o);
    const composite::Image fg = pipeline::to_linear(r.frame(0));
    // The plate: the character over a screen lit unevenly (±2 %), as a camera would record it.
    const float screen[3] = {0.1f, 0.8f, 0.15f};
    composite::Image plate(fg.width, fg.height);
    long covered = 0;
    for (int y = 0; y < fg.height; ++y)
      for (int x = 0; x < fg.width; ++x) {
        const composite::Rgba& f = fg.at(x, y);
        const float u = 1 + 0.02f * float(std::sin(x * 0.05) * std::cos(y * 0.07));
        plate.at(x, y) = {f.r + (1 - f.a) * screen[0] * u, f.g + (1 - f.a) * screen[1] * u,
                          f.b + (1 - f.a) * screen[2] * u, 1};
        covered += f.a > 0;
      }
    ASSERT_GT(covered, 2000) << file << ": the character should fill part of the frame";
    composite::KeyerOptions keyer;
    for (int i = 0; i < 3; ++i) keyer.screen[i] = screen[i];
    const composite::Image keyed = composite::key(plate, keyer);
    double error = 0, worst = 0;
    for (std::size_t i = 0; i < keyed.pixels.size(); ++i) {
      const double e = std::abs(double(keyed.pixels[i].a) - double(fg.pixels[i].a));
      error += e;
      worst = std::max(worst, e);
    }
    error /= double(keyed.pixels.size());
    std::printf("%s: mean matte error %.5f a pixel (worst %.3f), %ld covered pixels\n", file, error,
                worst, covered);
    EXPECT_LT(error, 0.01) << file;
  }
}

}  // namespace
}  // namespace kinema
