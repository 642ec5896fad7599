// tests/cli/vat_cli_test.cpp — `kinema vat` run as a process: the summary, the files it writes
// (read back with read_vat), usage errors (exit 1), bad input (exit 2) and no partial output on
// failure.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_process.h"
#include "kinema/io/asset_file.h"
#include "kinema/skin/vat.h"
#include "test_paths.h"

namespace fs = std::filesystem;

namespace {

using kinema::test::sh_quote;

const std::string kData = kinema::test_paths::data_dir();
const std::string kFigure = kData + "/gltf/RiggedFigure.glb";

class VatCli : public kinema::test::CliProcessTest {
 protected:
  VatCli() : CliProcessTest("kinema_vat_") {}

  /// Only the captured stdout/stderr files may exist besides `allowed`.
  size_t file_count() const {
    size_t n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_)) ++n;
    return n;
  }
};

TEST_F(VatCli, BakesRiggedFigureAndPrintsTheSummary) {
  const auto r = kinema("vat " + sh_quote(kFigure) + " -o " + sh_quote(path("fig.json")));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("vertices 370"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("frames 39 at 30 fps"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(std::to_string(370 * 39 * 8) + " bytes of texels"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("max error"), std::string::npos) << r.out;
  const kinema::VatBake bake = kinema::read_vat(path("fig.json"));
  EXPECT_EQ(bake.vertex_count, 370u);
  EXPECT_EQ(bake.frame_count, 39u);
  EXPECT_EQ(bake.skinning, kinema::VatSkinning::Lbs);
  EXPECT_LT(bake.max_error_m, 5e-4);
  EXPECT_EQ(fs::file_size(path("fig.dds")), 128u + 370u * 39u * 8u);
  EXPECT_EQ(file_count(), 2u);
}

TEST_F(VatCli, OptionsAndJsonSummary) {
  const auto r =
      kinema("vat " + sh_quote(kFigure) +
             " --clip animation_0 --fps 10 --skinning dqs --encoding absolute --json -o " +
             sh_quote(path("fig.json")));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("frames"), 14);  // 1.25 s at 10 fps → 13 intervals + 1
  EXPECT_EQ(j.at("vertices"), 370);
  EXPECT_EQ(j.at("skinning"), "dqs");
  EXPECT_EQ(j.at("encoding"), "absolute");
  EXPECT_EQ(j.at("data_bytes"), 370 * 14 * 8);
  EXPECT_GT(j.at("max_error_m").get<double>(), 0.0);
  const kinema::VatBake bake = kinema::read_vat(path("fig.json"));
  EXPECT_EQ(bake.skinning, kinema::VatSkinning::Dqs);
  EXPECT_EQ(bake.fps, 10.0);
  // Quiet: nothing on stdout, files still written.
  const auto q = kinema("-q vat " + sh_quote(kFigure) + " -o " + sh_quote(path("q.json")));
  EXPECT_EQ(q.code, 0) << q.err;
  EXPECT_TRUE(q.out.empty()) << q.out;
  EXPECT_TRUE(fs::exists(path("q.dds")));
}

TEST_F(VatCli, UsageErrorsExitOne) {
  for (const std::string& args :
       {"vat " + sh_quote(kFigure),                                     // no -o
        "vat -o " + sh_quote(path("a.json")),                           // no IN
        "vat " + sh_quote(kFigure) + " -o " + sh_quote(path("a.dds")),  // not .json
        "vat " + sh_quote(kFigure) + " --skinning cubic -o " + sh_quote(path("a.json")),
        "vat " + sh_quote(kFigure) + " --fps -3 -o " + sh_quote(path("a.json")),
        "vat " + sh_quote(kFigure) + " --clip nope -o " + sh_quote(path("a.json")),
        "vat " + sh_quote(kFigure) + " -o " + sh_quote(dir_.string() + "/"),  // a folder
        "vat " + sh_quote(kFigure) + " --bogus -o " + sh_quote(path("a.json"))}) {
    const auto r = kinema(args);
    EXPECT_EQ(r.code, 1) << args << "\n" << r.err;
    EXPECT_FALSE(r.err.empty()) << args;
  }
  EXPECT_EQ(file_count(), 0u);
}

TEST_F(VatCli, BadInputExitsTwoAndWritesNothing) {
  // No skinned mesh (morph-only cube), no clip (Godette), not a file, garbage.
  kinema::test::write_all(path("garbage.glb"), "glTF but not really");
  for (const std::string& in :
       {kData + "/gltf/AnimatedMorphCube.glb", kData + "/vrm/Godette_vrm_v4.vrm",
        path("missing.glb"), path("garbage.glb")}) {
    const auto r = kinema("vat " + sh_quote(in) + " -o " + sh_quote(path("out.json")));
    EXPECT_EQ(r.code, 2) << in << "\n" << r.err;
    EXPECT_NE(r.err.find("kinema: error:"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(path("out.json"))) << in;
    EXPECT_FALSE(fs::exists(path("out.dds"))) << in;
  }
  EXPECT_EQ(file_count(), 1u);  // garbage.glb only: no temporary files left
  const auto r = kinema("vat " + sh_quote(kData + "/gltf/AnimatedMorphCube.glb") + " -o " +
                        sh_quote(path("o.json")));
  EXPECT_NE(r.err.find("no skinned mesh"), std::string::npos) << r.err;
}

TEST_F(VatCli, AnUnwritableOutputLeavesNoFiles) {
  const auto r = kinema("vat " + sh_quote(kFigure) + " -o " + sh_quote(path("no/such/dir/v.json")));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(file_count(), 0u);
}

}  // namespace
