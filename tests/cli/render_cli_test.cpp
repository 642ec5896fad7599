// tests/cli/render_cli_test.cpp — `kinema render`, run as a process.
//
// Exit codes: 0 ok; 1 for command lines that make no sense (--frames into one PNG, a bad
// --size, an unknown camera, an unsupported OUT, frames outside the clip); 2 for bad input (a
// missing or corrupt FILE), for MP4 without the ffmpeg program and for a machine without
// EGL/OpenGL — each with a message, and never a partial output.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "cli_process.h"
#include "png_pixels.h"
#include "test_paths.h"

namespace fs = std::filesystem;

namespace {

using kinema::test::read_all;
using kinema::test::sh_quote;
using kinema::test::write_all;

const std::string kData = kinema::test_paths::data_dir();
const std::string kBvh = kData + "/bvh/cmu_cgspeed_mb/02_01.bvh";
const std::string kFigure = kData + "/gltf/RiggedFigure.glb";
const std::string kGodette = kData + "/vrm/Godette_vrm_v4.vrm";  // 1.5 m tall at the origin

// Width and height from a PNG's IHDR chunk (0, 0 when it is not a PNG).
std::pair<uint32_t, uint32_t> png_size(const std::string& bytes) {
  if (bytes.size() < 24 || bytes.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0) return {0, 0};
  auto be32 = [&](size_t at) {
    return uint32_t(uint8_t(bytes[at])) << 24 | uint32_t(uint8_t(bytes[at + 1])) << 16 |
           uint32_t(uint8_t(bytes[at + 2])) << 8 | uint32_t(uint8_t(bytes[at + 3]));
  };
  return {be32(16), be32(20)};
}

bool ffmpeg_on_path() {
  const char* path = std::getenv("PATH");
  if (!path) return false;
  const std::string dirs = path;
  size_t start = 0;
  while (start <= dirs.size()) {
    const size_t end = std::min(dirs.find(':', start), dirs.size());
    if (::access((dirs.substr(start, end - start) + "/ffmpeg").c_str(), X_OK) == 0) return true;
    start = end + 1;
  }
  return false;
}

class RenderCli : public kinema::test::CliProcessTest {
 protected:
  RenderCli() : CliProcessTest("kinema_render_") {}

  /// `kinema ARGS` with extra environment settings (NAME=VALUE …) through /usr/bin/env.
  /// Files in the scratch folder.
  size_t file_count() const {
    size_t n = 0;
    for (const auto& e : fs::directory_iterator(dir_)) n += e.is_regular_file() ? 1 : 0;
    return n;
  }
};

TEST_F(RenderCli, OneFrameToPng) {
  const auto r = kinema("render " + sh_quote(kFigure) + " --time 0.5 --size 200x150 -o " +
                        sh_quote(path("one.png")));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(png_size(read_all(path("one.png"))), std::make_pair(200u, 150u));
  EXPECT_NE(r.out.find("rendered 1 frame 200x150"), std::string::npos) << r.out;
  EXPECT_EQ(file_count(), 1u);
}

TEST_F(RenderCli, NumberedFramesWithProgress) {
  const auto r = kinema("render " + sh_quote(kBvh) +
                        " --frames 3:5 --size 64x48 --camera orbit --progress -o " +
                        sh_quote(path("f_%04d.png")));
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* name : {"f_0003.png", "f_0004.png", "f_0005.png"})
    EXPECT_EQ(png_size(read_all(path(name))), std::make_pair(64u, 48u)) << name;
  EXPECT_EQ(file_count(), 3u);
  EXPECT_NE(r.err.find("render ["), std::string::npos) << "progress on stderr";
}

TEST_F(RenderCli, ContactSheetTilesFrames) {
  const auto r = kinema("render " + sh_quote(kBvh) +
                        " --contact-sheet 6 --size 80x60 --skinning dqs --camera front -o " +
                        sh_quote(path("sheet.png")));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(png_size(read_all(path("sheet.png"))), std::make_pair(240u, 120u));  // 3 × 2 tiles
}

TEST_F(RenderCli, WithDrawsAnotherFileInTheSameFrame) {
  const auto one = kinema("render " + sh_quote(kFigure) + " --time 0.5 --size 160x120 -o " +
                          sh_quote(path("alone.png")));
  ASSERT_EQ(one.code, 0) << one.err;
  const auto two = kinema("render " + sh_quote(kFigure) + " --with " + sh_quote(kBvh) +
                          " --time 0.5 --size 160x120 -o " + sh_quote(path("with.png")));
  ASSERT_EQ(two.code, 0) << two.err;
  EXPECT_EQ(png_size(read_all(path("with.png"))), std::make_pair(160u, 120u));
  EXPECT_NE(read_all(path("alone.png")), read_all(path("with.png"))) << "the second file shows";
  const auto bad = kinema("render " + sh_quote(kFigure) + " --with " +
                          sh_quote(path("missing.glb")) + " -o " + sh_quote(path("no.png")));
  EXPECT_EQ(bad.code, 2);
  EXPECT_FALSE(fs::exists(path("no.png")));
}

TEST_F(RenderCli, Mp4NeedsFfmpeg) {
  // Without ffmpeg on PATH: a clear message, exit 2, nothing written.
  const auto r =
      kinema_env("PATH=/nonexistent-kinema-bin",
                 "render " + sh_quote(kFigure) + " --size 64x48 -o " + sh_quote(path("clip.mp4")));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("ffmpeg"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("not on PATH"), std::string::npos) << r.err;
  EXPECT_EQ(file_count(), 0u);
  // With it (when this machine has it): a real MP4, and no temporary file left behind.
  const bool have = ffmpeg_on_path();
  RecordProperty("ffmpeg", have ? "found: MP4 written and checked" : "absent: message checked");
  if (!have) return;
  const auto ok = kinema("render " + sh_quote(kFigure) + " --frames 0:12 --size 96x64 -o " +
                         sh_quote(path("clip.mp4")));
  ASSERT_EQ(ok.code, 0) << ok.err;
  const std::string mp4 = read_all(path("clip.mp4"));
  ASSERT_GT(mp4.size(), 100u);
  EXPECT_EQ(mp4.compare(4, 4, "ftyp"), 0);
  EXPECT_EQ(file_count(), 1u);
}

TEST_F(RenderCli, BadUsageExitsOneAndWritesNothing) {
  const std::string f = sh_quote(kFigure);
  const std::string cases[] = {
      "render " + f + " --frames 0:3 -o " + sh_quote(path("a.png")),            // frames → 1 PNG
      "render " + f + " --size 0x10 -o " + sh_quote(path("a.png")),             // size
      "render " + f + " --size big -o " + sh_quote(path("a.png")),              // size
      "render " + f + " --camera top -o " + sh_quote(path("a.png")),            // camera
      "render " + f + " --skinning cor -o " + sh_quote(path("a.png")),          // skinning
      "render " + f + " -o " + sh_quote(path("a.gif")),                         // format
      "render " + f + " -o " + sh_quote(path("a_%d_%d.png")),                   // pattern
      "render " + f + " --time 1 --frames 0:2 -o " + sh_quote(path("a.png")),   // both
      "render " + f + " --frames 0:100000 -o " + sh_quote(path("a_%03d.png")),  // range
      "render " + f + " --time 9999 -o " + sh_quote(path("a.png")),             // past the end
      "render " + f + " --clip nope -o " + sh_quote(path("a.png")),             // clip
      "render " + f + " --contact-sheet 4 -o " + sh_quote(path("a.mp4")),       // sheet → 1 PNG
      "render " + f + " --light 0,0,0 -o " + sh_quote(path("a.png")),           // light
      "render " + f + " --light up -o " + sh_quote(path("a.png")),              // light
      "render " + f + " --up 0,1,0 -o " + sh_quote(path("a.png")),              // up: plate
      // A fixed camera: with --camera or --plate, half of it, bad numbers, no view.
      "render " + f + " --eye 0,1,3 --target 0,1,0 --camera front -o " + sh_quote(path("a.png")),
      "render " + f + " --eye 0,1,3 --target 0,1,0 --plate p.png --camera-solve s.json -o " +
          sh_quote(path("a.png")),
      "render " + f + " --eye 0,1,3 -o " + sh_quote(path("a.png")),
      "render " + f + " --target 0,1,0 -o " + sh_quote(path("a.png")),
      "render " + f + " --fov 30 -o " + sh_quote(path("a.png")),
      "render " + f + " --camera-up 1,0,0 -o " + sh_quote(path("a.png")),
      "render " + f + " --eye 0,1 --target 0,1,0 -o " + sh_quote(path("a.png")),
      "render " + f + " --eye 0,1,x --target 0,1,0 -o " + sh_quote(path("a.png")),
      "render " + f + " --eye 0,1,3 --target 0,1,inf -o " + sh_quote(path("a.png")),
      "render " + f + " --eye 0,1,3 --target 0,1,3 -o " + sh_quote(path("a.png")),
      "render " + f + " --eye 0,1,3 --target 0,1,0 --fov 0 -o " + sh_quote(path("a.png")),
      "render " + f + " --eye 0,1,3 --target 0,1,0 --fov 180 -o " + sh_quote(path("a.png")),
      "render " + f + " --eye 0,1,3 --target 0,1,0 --camera-up 0,0,1 -o " + sh_quote(path("a.png")),
      "render " + f + " --eye 0,1,3 --target 0,1,0 --camera-up 0,0,0 -o " + sh_quote(path("a.png")),
      "render " + f + " --transparent -o " + sh_quote(path("a.mp4")),  // no alpha in MP4
      "render " + f + " --light-irradiance 1,-1,1 -o " + sh_quote(path("a.png")),
      "render " + f,  // no -o
  };
  for (const std::string& args : cases) {
    const auto r = kinema(args);
    EXPECT_EQ(r.code, 1) << args << "\n" << r.err;
    EXPECT_FALSE(r.err.empty()) << args;
    EXPECT_EQ(file_count(), 0u) << args;
  }
}

TEST_F(RenderCli, BadInputExitsTwoAndWritesNothing) {
  write_all(path("broken.glb"), "glTF this is not a binary glTF");
  const auto broken =
      kinema("render " + sh_quote(path("broken.glb")) + " -o " + sh_quote(path("a.png")));
  EXPECT_EQ(broken.code, 2) << broken.err;
  EXPECT_NE(broken.err.find("broken.glb"), std::string::npos) << broken.err;
  const auto missing =
      kinema("render " + sh_quote(path("missing.bvh")) + " -o " + sh_quote(path("a.png")));
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("missing.bvh"), std::string::npos);
  EXPECT_FALSE(fs::exists(path("a.png")));
}

TEST_F(RenderCli, TheLookOptionsAndALightProbe) {
  const auto ok = kinema("render " + sh_quote(kFigure) +
                         " --size 160x120 --no-materials --no-shadows --no-outlines --light 1,1,0 "
                         "--shadow-catcher -o " +
                         sh_quote(path("look.png")));
  ASSERT_EQ(ok.code, 0) << ok.err;
  EXPECT_EQ(png_size(read_all(path("look.png"))), std::make_pair(160u, 120u));
  const auto missing = kinema("render " + sh_quote(kFigure) + " --environment " +
                              sh_quote(path("nowhere.hdr")) + " -o " + sh_quote(path("b.png")));
  EXPECT_EQ(missing.code, 2) << missing.err;
  EXPECT_NE(missing.err.find("nowhere.hdr"), std::string::npos) << missing.err;
  write_all(path("probe.hdr"), "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 2 +X 4\n");
  const auto truncated = kinema("render " + sh_quote(kFigure) + " --environment " +
                                sh_quote(path("probe.hdr")) + " -o " + sh_quote(path("b.png")));
  EXPECT_EQ(truncated.code, 2) << truncated.err;
  EXPECT_NE(truncated.err.find("probe.hdr"), std::string::npos) << truncated.err;
  EXPECT_FALSE(fs::exists(path("b.png")));
  // A 4 × 2 probe of radiance 1 everywhere (flat RGBE scanlines: 128 · 2^(129 − 136) = 1).
  std::string flat = "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 2 +X 4\n";
  for (int i = 0; i < 8; ++i) flat += std::string{char(128), char(128), char(128), char(129)};
  write_all(path("grey.hdr"), flat);
  const auto lit = kinema("render " + sh_quote(kFigure) + " --size 160x120 --environment " +
                          sh_quote(path("grey.hdr")) + " -o " + sh_quote(path("probe.png")));
  EXPECT_EQ(lit.code, 0) << lit.err;
  EXPECT_EQ(png_size(read_all(path("probe.png"))), std::make_pair(160u, 120u));
}

// Alpha (0–255) of pixel (x, y) of an RGBA PNG `width` wide.
int alpha_at(const std::vector<uint8_t>& rgba, int width, int x, int y) {
  return rgba[(size_t(y) * size_t(width) + size_t(x)) * 4 + 3];
}

TEST_F(RenderCli, AFixedCameraLooksWhereItIsTold) {
  // Godette stands at the origin (x within ±0.62 m, arms out; 1.5 m tall); --transparent: alpha
  // is coverage.
  const std::string common = " --size 160x120 --no-ground --transparent --msaa 1 -o ";
  const auto at =
      kinema("render " + sh_quote(kGodette) + " --eye 0,0.8,3 --target 0,0.8,0 --fov 30" + common +
             sh_quote(path("at.png")));
  ASSERT_EQ(at.code, 0) << at.err;
  const auto beside =
      kinema("render " + sh_quote(kGodette) + " --eye 1,0.8,3 --target 1,0.8,0 --fov 30" + common +
             sh_quote(path("beside.png")));
  ASSERT_EQ(beside.code, 0) << beside.err;
  const std::vector<uint8_t> a = kinema::test::png_rgba(read_all(path("at.png")));
  const std::vector<uint8_t> b = kinema::test::png_rgba(read_all(path("beside.png")));
  ASSERT_EQ(a.size(), 160u * 120u * 4u);
  ASSERT_EQ(b.size(), a.size());
  EXPECT_EQ(alpha_at(a, 160, 80, 60), 255) << "her body at the centre";
  EXPECT_EQ(alpha_at(a, 160, 2, 2), 0) << "transparent around her";
  EXPECT_EQ(alpha_at(b, 160, 80, 60), 0) << "looking 1 m beside her";
  // +X is to the right of a camera looking down −Z: she is in the left part of the image only.
  long left = 0, right = 0;
  for (int y = 0; y < 120; ++y)
    for (int x = 0; x < 160; ++x)
      if (alpha_at(b, 160, x, y) > 0) (x < 80 ? left : right)++;
  EXPECT_GT(left, 50);
  EXPECT_EQ(right, 0);
  // A wider field of view shows her smaller.
  const auto wide =
      kinema("render " + sh_quote(kGodette) + " --eye 0,0.8,3 --target 0,0.8,0 --fov 60" + common +
             sh_quote(path("wide.png")));
  ASSERT_EQ(wide.code, 0) << wide.err;
  const std::vector<uint8_t> w = kinema::test::png_rgba(read_all(path("wide.png")));
  long covered_a = 0, covered_w = 0;
  for (size_t i = 3; i < a.size(); i += 4) {
    covered_a += a[i] > 0;
    covered_w += w[i] > 0;
  }
  // Pinhole: area scales with (tan 15° / tan 30°)² ≈ 0.215.
  EXPECT_NEAR(double(covered_w) / double(covered_a), 0.215, 0.04);
}

TEST_F(RenderCli, AnExrOutputHoldsTheRenderPasses) {
  const auto one = kinema("render " + sh_quote(kFigure) + " --time 0.5 --size 160x120 -o " +
                          sh_quote(path("passes.exr")));
  ASSERT_EQ(one.code, 0) << one.err;
  const std::string exr = read_all(path("passes.exr"));
  ASSERT_GE(exr.size(), 4u);
  EXPECT_EQ(exr.compare(0, 4, "\x76\x2f\x31\x01"), 0) << "OpenEXR's magic number";
  for (const char* channel : {"depth.Z", "N.X", "motion.U", "motion.V", "shadow.A"})
    EXPECT_NE(exr.find(channel), std::string::npos) << channel;
  const auto frames = kinema("render " + sh_quote(kFigure) + " --frames 0:2 --size 160x120 -o " +
                             sh_quote(path("p_%02d.exr")));
  ASSERT_EQ(frames.code, 0) << frames.err;
  EXPECT_EQ(file_count(), 4u);
  const auto sheet = kinema("render " + sh_quote(kFigure) + " --contact-sheet 4 -o " +
                            sh_quote(path("sheet.exr")));
  EXPECT_EQ(sheet.code, 1) << sheet.err;
  EXPECT_EQ(file_count(), 4u);
}

TEST_F(RenderCli, NoOpenGlIsAClearErrorNotACrash) {
  // GLVND with no EGL vendor library: no context can be made.
  const auto r = kinema_env("__EGL_VENDOR_LIBRARY_FILENAMES=/nonexistent-vendor.json",
                            "render " + sh_quote(kFigure) + " -o " + sh_quote(path("a.png")));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("OpenGL"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("a.png")));
}

}  // namespace
