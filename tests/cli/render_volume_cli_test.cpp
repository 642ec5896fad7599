// tests/cli/render_volume_cli_test.cpp — `kinema render` draws smoke and fire volumes (OpenVDB
// files kinema::write_vdb wrote), run as processes: a frame pattern's smoke changes the pixels
// over the backdrop and fire glows, a contact sheet and numbered PNGs follow the sequence's frames,
// smoke is drawn around a character; a missing file, a pattern with no frames, a file without a
// density grid and a non-finite option exit 2 naming the file, and write nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_process.h"
#include "kinema/fluid/volume_file.h"
#include "png_pixels.h"
#include "test_paths.h"

namespace fs = std::filesystem;

namespace {

using kinema::test::read_all;
using kinema::test::sh_quote;

const std::string kFigure = kinema::test_paths::data_dir() + "/gltf/RiggedFigure.glb";
// A fixed camera on the smoke: 1.6 m tall ball of it around (0, 0.9, 0).
const std::string kCamera = " --size 160x120 --eye 0,0.9,3.2 --target 0,0.9,0 --fov 40 ";

/// A ball of smoke on 16³ voxels of 8 cm over the ground, denser at frame f; with `kelvin`, a
/// temperature grid as hot at its centre (falling off to 300 K at its edge).
std::vector<kinema::VolumeGrid> smoke(int f, float scale = 1, float kelvin = 0) {
  kinema::VolumeGrid density{"density", 16, 16, 16, {-0.6, 0.3, -0.6}, 0.08, {}};
  kinema::VolumeGrid temperature = density;
  temperature.name = "temperature";
  density.values.assign(16 * 16 * 16, 0.0f);
  temperature.values.assign(16 * 16 * 16, 300.0f);
  for (int k = 0; k < 16; ++k)
    for (int j = 0; j < 16; ++j)
      for (int i = 0; i < 16; ++i) {
        const double r =
            std::sqrt((i - 7.5) * (i - 7.5) + (j - 7.5) * (j - 7.5) + (k - 7.5) * (k - 7.5)) / 7.0;
        if (r >= 1) continue;
        const size_t at = size_t(i) + 16 * (size_t(j) + 16 * size_t(k));
        density.values[at] = float(scale * (1 + 0.5 * f) * (1 - r));
        temperature.values[at] = float(300 + (kelvin - 300) * (1 - r));
      }
  if (kelvin > 0) return {density, temperature};
  return {density};
}

/// Pixels whose colour differs by more than 8 in some channel.
int differing(const std::string& png_a, const std::string& png_b) {
  const std::vector<uint8_t> a = kinema::test::png_rgba(png_a), b = kinema::test::png_rgba(png_b);
  if (a.empty() || a.size() != b.size()) {
    ADD_FAILURE() << "not two PNGs of one size";
    return 0;
  }
  int n = 0;
  for (size_t i = 0; i < a.size(); i += 4)
    for (size_t c = 0; c < 3; ++c)
      if (std::abs(int(a[i + c]) - int(b[i + c])) > 8) {
        ++n;
        break;
      }
  return n;
}

/// Pixels that glow orange: red well above blue.
int fiery(const std::string& png) {
  const std::vector<uint8_t> p = kinema::test::png_rgba(png);
  int n = 0;
  for (size_t i = 0; i < p.size(); i += 4) n += p[i] > 200 && int(p[i]) - int(p[i + 2]) > 90;
  return n;
}

class RenderVolumeCli : public kinema::test::CliProcessTest {
 protected:
  RenderVolumeCli() : CliProcessTest("kinema_render_volume_") {}
  void SetUp() override {
    CliProcessTest::SetUp();
    for (int f = 0; f < 3; ++f) kinema::write_vdb(path(frame(f)), smoke(f));
    kinema::write_vdb(path("empty.vdb"), smoke(0, 0));  // the same box, no density
  }
  static std::string frame(int f) { return "smoke_000" + std::to_string(f) + ".vdb"; }
  kinema::test::CliRun render(const std::string& args) { return kinema("render " + args); }
};

TEST_F(RenderVolumeCli, SmokeChangesThePixelsOverTheBackdrop) {
  const auto empty =
      render(sh_quote(path("empty.vdb")) + kCamera + "-o " + sh_quote(path("e.png")));
  ASSERT_EQ(empty.code, 0) << empty.err;
  const auto r =
      render(sh_quote(path("smoke_%04d.vdb")) + kCamera + "--time 0 -o " + sh_quote(path("s.png")));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("rendered 1 frame 160x120"), std::string::npos) << r.out;
  int w = 0, h = 0;
  ASSERT_TRUE(kinema::test::png_size(read_all(path("s.png")), w, h));
  EXPECT_EQ(w, 160);
  EXPECT_EQ(h, 120);
  const int changed = differing(read_all(path("e.png")), read_all(path("s.png")));
  EXPECT_GT(changed, 1500) << "of 19,200 pixels";
  EXPECT_LT(changed, 12000) << "the backdrop around the ball stays";
  EXPECT_EQ(fiery(read_all(path("s.png"))), 0);
}

TEST_F(RenderVolumeCli, HotSmokeGlowsUnlessFireIsOff) {
  kinema::write_vdb(path("fire.vdb"), smoke(0, 1, 1900));
  const auto fire = render(sh_quote(path("fire.vdb")) + kCamera + "-o " + sh_quote(path("f.png")));
  ASSERT_EQ(fire.code, 0) << fire.err;
  EXPECT_GT(fiery(read_all(path("f.png"))), 300);
  const auto cold =
      render(sh_quote(path("fire.vdb")) + kCamera + "--fire 0 -o " + sh_quote(path("c.png")));
  ASSERT_EQ(cold.code, 0) << cold.err;
  EXPECT_GT(differing(read_all(path("f.png")), read_all(path("c.png"))), 300);
  EXPECT_EQ(fiery(read_all(path("c.png"))), 0);
}

TEST_F(RenderVolumeCli, ContactSheetAndNumberedFramesFollowTheSequence) {
  const auto sheet = render(sh_quote(path("smoke_%04d.vdb")) +
                            " --size 160x120 --contact-sheet 3 -o " + sh_quote(path("sheet.png")));
  ASSERT_EQ(sheet.code, 0) << sheet.err;
  int w = 0, h = 0;
  ASSERT_TRUE(kinema::test::png_size(read_all(path("sheet.png")), w, h));
  EXPECT_EQ(w, 320);  // 2 × 2 tiles
  EXPECT_EQ(h, 240);
  const auto seq = render(sh_quote(path("smoke_%04d.vdb")) + kCamera + "--fps 12 -o " +
                          sh_quote(path("out_%02d.png")));
  ASSERT_EQ(seq.code, 0) << seq.err;
  EXPECT_NE(seq.out.find("rendered 3 frames"), std::string::npos) << seq.out;
  for (int f = 0; f < 3; ++f) EXPECT_TRUE(fs::exists(path("out_0" + std::to_string(f) + ".png")));
  EXPECT_FALSE(fs::exists(path("out_03.png")));
  // Denser smoke in later frames: they differ.
  EXPECT_GT(differing(read_all(path("out_00.png")), read_all(path("out_02.png"))), 100);
}

TEST_F(RenderVolumeCli, SmokeIsDrawnAroundACharacter) {
  const std::string camera = " --size 160x120 --eye 0,1,4 --target 0,0.8,0 ";
  const auto alone = render(sh_quote(kFigure) + camera + "-o " + sh_quote(path("a.png")));
  ASSERT_EQ(alone.code, 0) << alone.err;
  const auto with = render(sh_quote(kFigure) + " --with " + sh_quote(path("smoke_%04d.vdb")) +
                           camera + "-o " + sh_quote(path("b.png")));
  ASSERT_EQ(with.code, 0) << with.err;
  EXPECT_GT(differing(read_all(path("a.png")), read_all(path("b.png"))), 500);
}

TEST_F(RenderVolumeCli, BadVolumesExitTwoNamingTheFileAndWriteNothing) {
  kinema::VolumeGrid t{"temperature", 2, 2, 2, {0, 0, 0}, 0.1, std::vector<float>(8, 400.0f)};
  kinema::write_vdb(path("no_density.vdb"), std::vector<kinema::VolumeGrid>{t});
  const struct {
    std::string file, args, says;
  } cases[] = {
      {path("missing.vdb"), "", "missing.vdb"},
      {path("nothing_%04d.vdb"), "", "no file matches"},
      {path("no_density.vdb"), "", "density"},
      {path("smoke_%04d.vdb"), "--extinction nan", "extinction"},
      {path("smoke_%04d.vdb"), "--fire inf", "emission"},
  };
  for (const auto& c : cases) {
    const auto r =
        render(sh_quote(c.file) + " " + c.args + " --size 160x120 -o " + sh_quote(path("bad.png")));
    EXPECT_EQ(r.code, 2) << c.file << " " << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(path("bad.png"))) << c.file << " " << c.args;
  }
  // Volume options without a volume: a usage error.
  const auto r = render(sh_quote(kFigure) + " --extinction 3 -o " + sh_quote(path("bad.png")));
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_FALSE(fs::exists(path("bad.png")));
}

}  // namespace
