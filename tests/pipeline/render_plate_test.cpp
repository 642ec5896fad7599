// `kinema render FILE --plate PLATE --camera-solve SOLVE.json` as a library call
// (kinema/pipeline/render.h): a character drawn through a hand-made camera solve (three cameras
// moving sideways, a known focal length, a slight barrel lens) over flat grey plate frames. Away
// from the character the output is the plate frame of that camera; at the placed character's hips,
// projected through the solve, it is not; moving or scaling the placement moves or shrinks it;
// requests that cannot work are refused and write nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/cli_process.h"
#include "kinema/clip/clip.h"
#include "kinema/composite/image_file.h"
#include "kinema/core/error.h"
#include "kinema/core/file.h"
#include "kinema/io/asset_file.h"
#include "kinema/matchmove/camera_solve.h"
#include "kinema/matchmove/matchmove_json.h"
#include "kinema/math/mat4.h"
#include "kinema/pipeline/render.h"
#include "test_paths.h"

namespace kinema::test {
namespace {

namespace fs = std::filesystem;

const std::string kFigure = test_paths::data_dir() + "/gltf/RiggedFigure.glb";
constexpr int kWidth = 160, kHeight = 120;
constexpr double kFps = 24;
/// Linear grey of plate frame 101 + i: each frame its own, so a frame drawn over the wrong plate
/// frame shows.
constexpr float kGrey[3] = {0.18f, 0.25f, 0.32f};

/// Three cameras 4 units from the origin, 0.8 apart sideways, each looking at the origin; 150 px
/// focal length, a slight barrel lens.
matchmove::CameraSolve hand_made_solve() {
  matchmove::CameraSolve s;
  s.width = kWidth, s.height = kHeight;
  s.intrinsics = {150, 150, (kWidth - 1) / 2.0, (kHeight - 1) / 2.0};
  s.lens.k1 = -0.05;
  for (int i = 0; i < 3; ++i) {
    matchmove::SolvedCamera c;
    c.frame = i;
    c.solved = true;
    c.position = {-0.8 + 0.8 * i, 0.3, 4};
    const Vec3 forward = normalize(Vec3{0, 0, 0} - c.position);
    const Vec3 right = normalize(cross(forward, Vec3{0, 1, 0}));
    const Vec3 down = cross(forward, right);
    Mat4 r;  // rows: the camera axes in the world (OpenCV: x right, y down, z forward)
    const Vec3 rows[3] = {right, down, forward};
    for (int row = 0; row < 3; ++row)
      for (int col = 0; col < 3; ++col) r(row, col) = rows[row][col];
    c.rotation = rotation_of(r);
    s.cameras.push_back(c);
  }
  return s;
}

/// prefix + the frame as 4 digits + suffix: plate.0101.png.
std::string numbered(const std::string& prefix, int frame, const std::string& suffix) {
  char digits[16];
  std::snprintf(digits, sizeof digits, "%04d", frame);
  return prefix + digits + suffix;
}

/// 8-bit code of a linear value, as a PNG stores it.
int code(float linear) { return int(std::lround(composite::linear_to_srgb(linear) * 255)); }

/// A written PNG's 8-bit codes (r, g, b, a per pixel).
struct Codes {
  int width = 0, height = 0;
  std::vector<int> v;
  int at(int x, int y, int c) const { return v[(size_t(y) * size_t(width) + size_t(x)) * 4 + c]; }
};
Codes read_codes(const std::string& path) {
  const composite::Image image = composite::read_png(path, /*linear=*/true);
  Codes c;
  c.width = image.width, c.height = image.height;
  for (const composite::Rgba& p : image.pixels)
    for (float x : {p.r, p.g, p.b, p.a}) c.v.push_back(int(std::lround(x * 255)));
  return c;
}

class RenderPlate : public CliProcessTest {
 protected:
  RenderPlate() : CliProcessTest("kinema_render_plate_") {}

  void SetUp() override {
    CliProcessTest::SetUp();
    fs::create_directories(dir_ / "out");
    solve_ = hand_made_solve();
    write_file_atomically(path("solve.json"), matchmove::camera_solve_to_json(solve_));
    for (int i = 0; i < 3; ++i)
      composite::write_image(path(numbered("plate.", 101 + i, ".png")),
                             composite::Image(kWidth, kHeight, {kGrey[i], kGrey[i], kGrey[i], 1}));
  }

  pipeline::RenderRequest request(const std::string& out) const {
    pipeline::RenderRequest r;
    r.in = kFigure;
    r.plate = path("plate.####.png");
    r.camera_solve = path("solve.json");
    r.out = path("out/" + out);
    r.fps = kFps;
    r.options.target.samples = 1;
    r.options.shadows = false;  // the character alone; its shadow has a test of its own
    return r;
  }

  /// Where solve camera `i` sees the figure's joints (at the clip's time for frame i) with the
  /// character placed by `place`: pixel coordinates, v down. `hips`: the index of node_2.
  std::vector<composite::PixelPoint> joints(int i, const pipeline::Placement& place,
                                            size_t* hips = nullptr) const {
    const Asset asset = load_asset(kFigure);
    const std::vector<Mat4> pose =
        sample_model_pose(asset.clips[0], asset.skeleton, i / kFps, WrapMode::Clamp);
    std::vector<composite::PixelPoint> pixels(pose.size());
    for (size_t j = 0; j < pose.size(); ++j) {
      EXPECT_TRUE(matchmove::project(solve_, solve_.cameras[size_t(i)],
                                     place.matrix().transform_point(pose[j].translation_part()),
                                     pixels[j]));
      if (hips && asset.skeleton.joints()[j].name == "node_2") *hips = j;
    }
    return pixels;
  }
  composite::PixelPoint hips(int i, const pipeline::Placement& place) const {
    size_t h = 0;
    return joints(i, place, &h)[h];
  }

  /// Files in the output folder.
  size_t outputs() const {
    return size_t(std::distance(fs::directory_iterator(dir_ / "out"), fs::directory_iterator{}));
  }

  matchmove::CameraSolve solve_;
};

/// Pixels of frame `i` whose colour is not plate frame i's grey (by more than 8-bit rounding), and
/// their centroid.
struct Coverage {
  int count = 0;
  double x = 0, y = 0;
};
Coverage character_pixels(const Codes& c, int i) {
  Coverage cov;
  const int grey = code(kGrey[i]);
  for (int y = 0; y < c.height; ++y)
    for (int x = 0; x < c.width; ++x) {
      bool plate = true;
      for (int ch = 0; ch < 3; ++ch) plate = plate && std::abs(c.at(x, y, ch) - grey) <= 1;
      if (plate) continue;
      ++cov.count, cov.x += x, cov.y += y;
    }
  if (cov.count > 0) cov.x /= cov.count, cov.y /= cov.count;
  return cov;
}

TEST_F(RenderPlate, DrawsTheCharacterThroughEachSolvedCameraOverItsPlateFrame) {
  pipeline::RenderRequest r = request("comp.####.png");
  r.place = pipeline::parse_placement("0,-0.6,1");  // a unit in front of where the cameras look
  std::vector<long> progress;
  const pipeline::RenderResult result =
      pipeline::render_file(r, [&](const std::string& stage, long done, long total) {
        EXPECT_EQ(stage, "render");
        EXPECT_EQ(total, 3);
        progress.push_back(done);
      });
  EXPECT_EQ(result.frames, 3u);
  EXPECT_EQ(result.width, kWidth);
  EXPECT_EQ(result.height, kHeight);
  // The barrel lens pulls the plate's edges in from outside the pinhole frame: the render is grown
  // to hold them.
  EXPECT_GT(result.cg_width, kWidth);
  EXPECT_GT(result.cg_height, kHeight);
  EXPECT_EQ(result.unsolved_frames, 0u);
  EXPECT_EQ(progress, (std::vector<long>{1, 2, 3}));
  EXPECT_EQ(outputs(), 3u);  // numbered as the plate: 0101, 0102, 0103
  std::vector<double> hips_u;
  for (int i = 0; i < 3; ++i) {
    const Codes c = read_codes(path(numbered("out/comp.", 101 + i, ".png")));
    ASSERT_EQ(c.width, kWidth);
    ASSERT_EQ(c.height, kHeight);
    // Away from the projected skeleton (a margin for the body around the bones): the plate frame of
    // this camera.
    const std::vector<composite::PixelPoint> skeleton = joints(i, r.place);
    double u0 = kWidth, u1 = 0, v0 = kHeight, v1 = 0;
    for (const composite::PixelPoint& p : skeleton) {
      u0 = std::min(u0, p.u), u1 = std::max(u1, p.u);
      v0 = std::min(v0, p.v), v1 = std::max(v1, p.v);
    }
    constexpr double kMargin = 16;
    int far = 0, differ = 0, opaque = 0;
    for (int y = 0; y < kHeight; ++y)
      for (int x = 0; x < kWidth; ++x) {
        if (x > u0 - kMargin && x < u1 + kMargin && y > v0 - kMargin && y < v1 + kMargin) continue;
        ++far;
        for (int ch = 0; ch < 3; ++ch) differ += std::abs(c.at(x, y, ch) - code(kGrey[i])) > 1;
        opaque += c.at(x, y, 3) == 255;
      }
    EXPECT_GT(far, kWidth * kHeight / 2) << "frame " << i;
    EXPECT_EQ(differ, 0) << "frame " << i;
    EXPECT_EQ(opaque, far) << "frame " << i;
    // At the hips, the character.
    const composite::PixelPoint h = hips(i, r.place);
    hips_u.push_back(h.u);
    const int u = int(std::lround(h.u)), v = int(std::lround(h.v));
    ASSERT_TRUE(u >= 0 && u < kWidth && v >= 0 && v < kHeight) << h.u << ", " << h.v;
    int off_plate = 0;
    for (int ch = 0; ch < 3; ++ch) off_plate += std::abs(c.at(u, v, ch) - code(kGrey[i])) > 8;
    EXPECT_GT(off_plate, 0) << "frame " << i << " at (" << u << ", " << v << ")";
    // And the character's pixels are centred about there.
    const Coverage cov = character_pixels(c, i);
    EXPECT_GT(cov.count, 200) << "frame " << i;
    EXPECT_NEAR(cov.x, h.u, 4) << "frame " << i;
  }
  // The cameras move right, turning to keep the origin centred: the character, nearer, moves left
  // (parallax), so a frame drawn through another frame's camera would be off.
  EXPECT_GT(hips_u[0], hips_u[1] + 5);
  EXPECT_GT(hips_u[1], hips_u[2] + 5);
}

TEST_F(RenderPlate, TheCharactersShadowOnlyDarkensThePlate) {
  // The same frame with and without the shadow catcher: the shadow darkens plate pixels beside
  // the character (and the character where it shades itself); nothing gets brighter.
  auto one_frame = [&](bool shadows, const std::string& name) {
    pipeline::RenderRequest r = request(name);
    r.place = pipeline::parse_placement("0,-0.6,1");
    r.time = 1 / kFps;
    r.options.shadows = shadows;
    pipeline::render_file(r);
    return read_codes(r.out);
  };
  const Codes lit = one_frame(false, "lit.png"), shaded = one_frame(true, "shaded.png");
  int darker = 0, brighter = 0;
  for (int y = 0; y < kHeight; ++y)
    for (int x = 0; x < kWidth; ++x)
      for (int ch = 0; ch < 3; ++ch) {
        darker += shaded.at(x, y, ch) < lit.at(x, y, ch) - 8;
        brighter += shaded.at(x, y, ch) > lit.at(x, y, ch) + 1;
      }
  EXPECT_GT(darker, 150);
  EXPECT_EQ(brighter, 0);
}

TEST_F(RenderPlate, MovingAndScalingThePlacementMovesAndShrinksTheCharacter) {
  auto one_frame = [&](const std::string& place, const std::string& name) {
    pipeline::RenderRequest r = request(name);
    r.place = pipeline::parse_placement(place);
    r.time = 1 / kFps;  // frame 1: camera 1, plate frame 102
    pipeline::render_file(r);
    return character_pixels(read_codes(r.out), 1);
  };
  const Coverage base = one_frame("0,-0.6,0", "base.png");
  const Coverage moved = one_frame("0.5, -0.6, 0", "moved.png");
  const Coverage small = one_frame("0,-0.6,0,90,0.5", "small.png");
  const double expected_shift = hips(1, pipeline::parse_placement("0.5,-0.6,0")).u -
                                hips(1, pipeline::parse_placement("0,-0.6,0")).u;
  EXPECT_GT(expected_shift, 15);
  EXPECT_NEAR(moved.x - base.x, expected_shift, 3);
  EXPECT_NEAR(moved.y, base.y, 3);
  EXPECT_NEAR(moved.count, base.count, base.count * 0.2);
  // Half the size: about a quarter of the pixels (turned side-on, a little fewer).
  EXPECT_GT(small.count, base.count / 10);
  EXPECT_LT(small.count, base.count / 3);
}

TEST_F(RenderPlate, WritesLinearExrAndMp4) {
  pipeline::RenderRequest r = request("frame.exr");
  r.place = pipeline::parse_placement("0,-0.6,0");
  r.time = 2 / kFps;
  pipeline::render_file(r);
  const composite::Image exr = composite::read_image(r.out);
  ASSERT_EQ(exr.width, kWidth);
  EXPECT_NEAR(exr.at(2, 2).g, kGrey[2], 2e-3);  // half float: linear as it was
  EXPECT_EQ(exr.at(2, 2).a, 1.0f);

  r.out = path("out/shot.mp4");
  r.time.reset();
  const pipeline::RenderResult mp4 = pipeline::render_file(r);
  EXPECT_EQ(mp4.frames, 3u);
  EXPECT_GT(fs::file_size(r.out), 0u);
  EXPECT_EQ(outputs(), 2u);  // no temporary file left behind
}

TEST_F(RenderPlate, OneImageIsALockedOffPlateAndUnsolvedFramesAreThePlate) {
  matchmove::CameraSolve solve = solve_;
  solve.cameras[1].solved = false;
  solve.cameras[1].position = {};
  solve.cameras[1].rotation = {};
  write_file_atomically(path("locked.json"), matchmove::camera_solve_to_json(solve));
  pipeline::RenderRequest r = request("locked_%02d.png");
  r.plate = path("plate.0101.png");
  r.camera_solve = path("locked.json");
  r.place = pipeline::parse_placement("0,-0.6,0");
  r.first_frame = 1, r.last_frame = 2;
  const pipeline::RenderResult result = pipeline::render_file(r);
  EXPECT_EQ(result.frames, 2u);
  EXPECT_EQ(result.unsolved_frames, 1u);
  EXPECT_EQ(outputs(), 2u);  // numbered by camera: 01, 02
  EXPECT_EQ(character_pixels(read_codes(path("out/locked_01.png")), 0).count, 0);
  EXPECT_GT(character_pixels(read_codes(path("out/locked_02.png")), 0).count, 200);
}

TEST_F(RenderPlate, ParsesPlacements) {
  const pipeline::Placement p = pipeline::parse_placement("1,2,3, 90, 0.5");
  EXPECT_EQ(p.position, (Vec3{1, 2, 3}));
  EXPECT_EQ(p.yaw_degrees, 90);
  EXPECT_EQ(p.scale, 0.5);
  const Vec3 x = p.matrix().transform_point({2, 0, 0});  // +X turned 90° about +Y is −Z
  EXPECT_NEAR(x.x, 1, 1e-12);
  EXPECT_NEAR(x.y, 2, 1e-12);
  EXPECT_NEAR(x.z, 2, 1e-12);
  EXPECT_EQ(pipeline::parse_placement("0,0,-1").scale, 1);
  for (const char* bad : {"", "1,2", "1,2,3,4,0", "1,2,3,4,-1", "1,2,3,4,5,6", "1,,3", "a,b,c",
                          "nan,0,0", "1,2,3x", "1;2;3"})
    EXPECT_THROW(pipeline::parse_placement(bad), UsageError) << bad;
}

TEST_F(RenderPlate, RefusesWhatCannotWorkAndWritesNothing) {
  auto refuses_usage = [&](pipeline::RenderRequest r, const std::string& says) {
    try {
      pipeline::render_file(r);
      ADD_FAILURE() << "no error; expected one saying " << says;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  auto refuses_data = [&](pipeline::RenderRequest r, const std::string& file,
                          const std::string& says) {
    try {
      pipeline::render_file(r);
      ADD_FAILURE() << "no error; expected one naming " << file;
    } catch (const Error& e) {
      EXPECT_EQ(e.file(), file) << e.what();
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  pipeline::RenderRequest r = request("comp.####.png");
  r.plate.clear();
  refuses_usage(r, "needs --plate");
  r = request("comp.####.png");
  r.camera_solve.clear();
  refuses_usage(r, "needs --camera-solve");
  r = request("comp.####.png");
  r.with.push_back(kFigure);
  refuses_usage(r, "--with");
  r = request("sheet.png");
  r.contact_sheet = 4;
  refuses_usage(r, "--contact-sheet");
  r = request("comp.####.png");
  r.time = 0.1;
  refuses_usage(r, "--time renders one frame");
  r = request("comp.####.png");
  r.first_frame = 0, r.last_frame = 3;
  refuses_usage(r, "has cameras 0:2");
  r = request("comp.####.png");
  r.out = path("plate.####.png");  // over the plate itself
  refuses_usage(r, "plate");
  r = request("comp.####.png");
  r.place.scale = 0;
  refuses_usage(r, "--place");
  pipeline::RenderRequest plain;  // no plate: the plate's options mean nothing
  plain.in = kFigure;
  plain.out = path("out/plain.png");
  plain.fps = 24;
  refuses_usage(plain, "go with --plate");

  // A plate frame missing for a camera.
  r = request("comp.####.png");
  r.plate_start = 102;  // cameras 0, 1, 2 → plate frames 0102, 0103, 0104
  refuses_data(r, path("plate.0104.png"), "missing: camera 2");
  // A plate of another size than the solve's.
  composite::write_image(path("small.png"), composite::Image(80, 60, {0.2f, 0.2f, 0.2f, 1}));
  r = request("comp.####.png");
  r.plate = path("small.png");
  refuses_data(r, path("small.png"), "is 80×60 but the camera solve");
  // A malformed solve: the JSON place named.
  std::string json = matchmove::camera_solve_to_json(solve_);
  json.replace(json.find("\"fx\": 150.0"), 11, "\"fx\": -1.0");
  write_file_atomically(path("bad.json"), json);
  r = request("comp.####.png");
  r.camera_solve = path("bad.json");
  refuses_data(r, path("bad.json"), "/intrinsics/fx");
  write_file_atomically(path("cut.json"), matchmove::camera_solve_to_json(solve_).substr(0, 200));
  r.camera_solve = path("cut.json");
  EXPECT_THROW(pipeline::render_file(r), Error);
  EXPECT_EQ(outputs(), 0u);

  // The command line: exit 1 for what makes no sense, 2 for bad data; nothing written.
  const std::string common = sh_quote(kFigure) + " --plate " + sh_quote(path("plate.####.png")) +
                             " -o " + sh_quote(path("out/c.####.png"));
  const std::string solve = " --camera-solve " + sh_quote(path("solve.json"));
  CliRun run = kinema("render " + common);
  EXPECT_EQ(run.code, 1) << run.err;
  EXPECT_NE(run.err.find("needs --camera-solve"), std::string::npos) << run.err;
  run = kinema("render " + common + solve + " --camera orbit");
  EXPECT_EQ(run.code, 1) << run.err;
  EXPECT_NE(run.err.find("--camera"), std::string::npos) << run.err;
  run = kinema("render " + common + solve + " --size 320x240");
  EXPECT_EQ(run.code, 1) << run.err;
  EXPECT_NE(run.err.find("--size"), std::string::npos) << run.err;
  run = kinema("render " + common + solve + " --place 1,2");
  EXPECT_EQ(run.code, 1) << run.err;
  EXPECT_NE(run.err.find("X,Y,Z[,YAW_DEG[,SCALE]]"), std::string::npos) << run.err;
  run = kinema("render " + common + " --camera-solve " + sh_quote(path("bad.json")));
  EXPECT_EQ(run.code, 2) << run.err;
  EXPECT_NE(run.err.find("bad.json"), std::string::npos) << run.err;
  EXPECT_EQ(outputs(), 0u);
}

}  // namespace
}  // namespace kinema::test
