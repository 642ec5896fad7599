// tests/cli/comp_cli_test.cpp — `kinema comp` run as a process: a keyed plate sequence over a sky
// written per frame, differential rendering's worked number through a script, and refusals — a
// bad op, a reference to a later node, a missing frame (exit 2, no frame written at all), an
// output over an input or two outputs to one file (exit 1).
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_process.h"
#include "kinema/composite/image_file.h"

namespace fs = std::filesystem;

namespace {

using kinema::composite::Image;
using kinema::composite::Rgba;
using kinema::test::sh_quote;

class CompCli : public kinema::test::CliProcessTest {
 protected:
  CompCli() : CliProcessTest("kinema_comp_") {}

  /// Frame `frame` of a 32 × 16 plate: green screen left of column 8 + frame, grey 0.4 right.
  void plate_frame(int frame) {
    Image image(32, 16);
    for (int y = 0; y < 16; ++y)
      for (int x = 0; x < 32; ++x)
        image.at(x, y) = x < 8 + frame ? Rgba{0.1f, 0.8f, 0.15f, 1} : Rgba{0.4f, 0.4f, 0.4f, 1};
    char name[32];
    std::snprintf(name, sizeof name, "plate.%04d.exr", frame);
    kinema::composite::write_exr(path(name), image, {kinema::composite::ExrPixelType::float32});
  }
  std::string script(const nlohmann::json& j) {
    const std::string p = path("comp.json");
    kinema::test::write_all(p, j.dump(2));
    return p;
  }
};

TEST_F(CompCli, KeysASequenceOverASkyFrameByFrame) {
  for (int f = 1; f <= 3; ++f) plate_frame(f);
  const auto j = nlohmann::json::parse(R"({
    "kinema_comp": 1, "frames": {"first": 1, "last": 3, "fps": 24},
    "nodes": [
      {"id": "plate", "op": "read", "path": "plate.####.exr"},
      {"id": "fg", "op": "key", "input": "plate", "screen": "green"},
      {"id": "sky", "op": "constant", "width": 32, "height": 16, "color": [0.2, 0.3, 0.8]},
      {"id": "comp", "op": "over", "a": "fg", "b": "sky"},
      {"id": "m", "op": "alpha", "input": "fg"},
      {"op": "write", "input": "comp", "path": "out.####.exr", "pixel_type": "float"},
      {"op": "write", "input": "m", "path": "matte.####.png"}]})");
  const auto r = kinema("comp " + sh_quote(script(j)) + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto report = nlohmann::json::parse(r.out);
  EXPECT_EQ(report.at("frames"), 3);
  EXPECT_EQ(report.at("out").size(), 6u);
  for (int f = 1; f <= 3; ++f) {
    char name[32];
    std::snprintf(name, sizeof name, "out.%04d.exr", f);
    const Image out = kinema::composite::read_exr(path(name));
    EXPECT_NEAR(out.at(8 + f - 1, 5).b, 0.8f, 0.02f) << "frame " << f;  // screen → sky
    EXPECT_NEAR(out.at(8 + f, 5).r, 0.4f, 1e-4f) << "frame " << f;      // grey stays
  }
  EXPECT_FALSE(fs::exists(path("out.0004.exr")));
}

TEST_F(CompCli, DifferentialRenderingAddsTheShadowToThePlate) {
  const auto j = nlohmann::json::parse(R"({
    "kinema_comp": 1,
    "nodes": [
      {"id": "plate", "op": "constant", "width": 4, "height": 4, "color": [0.6, 0.6, 0.6]},
      {"id": "with", "op": "constant", "width": 4, "height": 4, "color": [0.3, 0.3, 0.3]},
      {"id": "without", "op": "constant", "width": 4, "height": 4, "color": [0.5, 0.5, 0.5]},
      {"id": "d", "op": "differential", "plate": "plate", "with": "with", "without": "without"},
      {"op": "write", "input": "d", "path": "diff.exr", "pixel_type": "float"}]})");
  const auto r = kinema("comp " + sh_quote(script(j)));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NEAR(kinema::composite::read_exr(path("diff.exr")).at(2, 2).g, 0.4f, 1e-6f);
}

TEST_F(CompCli, ARotoShapeKeyedOverTimeCutsTheImageFrameByFrame) {
  auto j = nlohmann::json::parse(R"({
    "kinema_comp": 1, "frames": {"first": 0, "last": 1, "fps": 1},
    "nodes": [
      {"id": "red", "op": "constant", "width": 16, "height": 16, "color": [1, 0, 0]},
      {"id": "m", "op": "roto", "width": 16, "height": 16, "shapes": [{"name": "box", "keys": [
        {"time": 0, "vertices": [{"position": [2, 2]}, {"position": [6, 2]},
                                 {"position": [6, 6]}, {"position": [2, 6]}]},
        {"time": 1, "vertices": [{"position": [10, 2]}, {"position": [14, 2]},
                                 {"position": [14, 6]}, {"position": [10, 6.5]}]}]}]},
      {"id": "cut", "op": "matte", "input": "red", "matte": "m"},
      {"op": "write", "input": "cut", "path": "cut.####.exr", "pixel_type": "float"}]})");
  auto r = kinema("comp " + sh_quote(script(j)));
  ASSERT_EQ(r.code, 0) << r.err;
  const Image first = kinema::composite::read_exr(path("cut.0000.exr"));
  const Image second = kinema::composite::read_exr(path("cut.0001.exr"));
  EXPECT_EQ(first.at(3, 3), (Rgba{1, 0, 0, 1}));
  EXPECT_EQ(first.at(11, 3).a, 0.0f);
  EXPECT_EQ(second.at(3, 3).a, 0.0f);
  EXPECT_EQ(second.at(11, 3), (Rgba{1, 0, 0, 1}));
  EXPECT_GT(second.at(10, 6).a, 0.0f);  // the keyed corner moved down half a pixel
  EXPECT_LT(second.at(10, 6).a, 1.0f);
  // A shape of two vertices is refused at its place.
  j["nodes"][1]["shapes"][0]["keys"][0]["vertices"] =
      nlohmann::json::parse(R"([{"position": [2, 2]}, {"position": [6, 2]}])");
  r = kinema("comp " + sh_quote(script(j)));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("/nodes/1/shapes/0"), std::string::npos) << r.err;
}

TEST_F(CompCli, ABadScriptNamesItsPlaceAndWritesNothing) {
  auto j = nlohmann::json::parse(R"({"kinema_comp": 1, "nodes": [
      {"id": "a", "op": "constant", "width": 2, "height": 2, "color": [1, 0, 0]},
      {"id": "b", "op": "frobnicate", "input": "a"},
      {"op": "write", "input": "a", "path": "x.png"}]})");
  auto r = kinema("comp " + sh_quote(script(j)));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("/nodes/1/op"), std::string::npos) << r.err;
  j["nodes"][1] = {{"id", "b"}, {"op", "over"}, {"a", "a"}, {"b", "later"}};
  r = kinema("comp " + sh_quote(script(j)));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("/nodes/1/b"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("earlier node"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("x.png")));
}

TEST_F(CompCli, ImagesOfDifferentSizesAreRefusedAtTheNode) {
  const auto j = nlohmann::json::parse(R"({"kinema_comp": 1, "nodes": [
      {"id": "a", "op": "constant", "width": 8, "height": 8, "color": [1, 0, 0]},
      {"id": "b", "op": "constant", "width": 8, "height": 6, "color": [0, 0, 1]},
      {"id": "c", "op": "over", "a": "a", "b": "b"},
      {"op": "write", "input": "c", "path": "c.png"}]})");
  const auto r = kinema("comp " + sh_quote(script(j)));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("/nodes/2"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("8×6"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("c.png")));
}

TEST_F(CompCli, AMissingFrameStopsTheRunBeforeAnyFrameIsWritten) {
  plate_frame(1);
  plate_frame(2);  // frame 3 is missing
  const auto j = nlohmann::json::parse(R"({
    "kinema_comp": 1, "frames": {"first": 1, "last": 3},
    "nodes": [{"id": "p", "op": "read", "path": "plate.####.exr"},
              {"op": "write", "input": "p", "path": "copy.####.png"}]})");
  const auto r = kinema("comp " + sh_quote(script(j)));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("plate.0003.exr"), std::string::npos) << r.err;
  for (const auto& entry : fs::directory_iterator(path("")))
    EXPECT_EQ(entry.path().filename().string().find("copy"), std::string::npos)
        << entry.path();  // no frame, no staged leftover
}

TEST_F(CompCli, RefusesToWriteOverAnInputOrTwiceToOneFile) {
  plate_frame(1);
  const std::string before = kinema::test::read_all(path("plate.0001.exr"));
  auto j = nlohmann::json::parse(R"({"kinema_comp": 1, "frames": {"first": 1, "last": 1},
    "nodes": [{"id": "p", "op": "read", "path": "plate.####.exr"},
              {"op": "write", "input": "p", "path": "plate.0001.exr"}]})");
  EXPECT_EQ(kinema("comp " + sh_quote(script(j))).code, 1);
  EXPECT_EQ(kinema::test::read_all(path("plate.0001.exr")), before);
  j["frames"]["last"] = 2;
  plate_frame(2);
  j["nodes"][1]["path"] = "still.png";  // two frames, one file
  EXPECT_EQ(kinema("comp " + sh_quote(script(j))).code, 1);
  EXPECT_FALSE(fs::exists(path("still.png")));
}

}  // namespace
