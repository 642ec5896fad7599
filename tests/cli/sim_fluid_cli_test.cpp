// tests/cli/sim_fluid_cli_test.cpp — `kinema sim` with smoke and fire, and a FLIP liquid, run as a
// process: the summary and --json figures, the VDB frames it writes, a source outside the domain
// (exit 2, its JSON pointer in the message, nothing written), a .vdb OUT for more than smoke
// (exit 1).
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_process.h"
#include "kinema/fluid/volume_file.h"
#include "kinema/io/point_cache.h"

namespace fs = std::filesystem;

namespace {

using kinema::test::sh_quote;

class SimFluidCli : public kinema::test::CliProcessTest {
 protected:
  SimFluidCli() : CliProcessTest("kinema_sim_fluid_") {}

  size_t files() const {
    size_t n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_)) ++n;
    return n;
  }
};

const std::string kFire = R"({"duration": 0.25, "fps": 8, "rate": 32,
  "colliders": [{"shape": "sphere", "centre": [0, 0.5, 0], "radius": 0.1}],
  "smoke": {"domain": {"min": [-0.3, 0, -0.3], "max": [0.3, 0.8, 0.3]}, "resolution": 16,
            "fire": {"burn_rate": 3},
            "sources": [{"centre": [0, 0.15, 0], "radius": 0.1, "fuel": 1}]}})";

TEST_F(SimFluidCli, SmokeAndFireAreWrittenAsVdbFramesWithTheirFigures) {
  kinema::test::write_all(path("fire.json"), kFire);
  const auto r = kinema("sim " + sh_quote(path("fire.json")) + " -o " + sh_quote(path("fire.pc2")));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("smoke and fire: 12 × 16 × 12 cells of 5 cm, 1 obstacles"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("fire_smoke_%04d.vdb (3 OpenVDB frames"), std::string::npos) << r.out;
  for (const char* frame : {"fire_smoke_0000.vdb", "fire_smoke_0001.vdb", "fire_smoke_0002.vdb"})
    EXPECT_TRUE(fs::exists(path(frame))) << frame;
  const std::vector<kinema::VolumeGrid> grids = kinema::read_vdb(path("fire_smoke_0002.vdb"));
  ASSERT_EQ(grids.size(), 4u);
  EXPECT_EQ(grids[2].name, "flame");

  const auto j = kinema("sim --json " + sh_quote(path("fire.json")) + " -o " +
                        sh_quote(path("again_%04d.vdb")));
  ASSERT_EQ(j.code, 0) << j.err;
  const auto summary = nlohmann::json::parse(j.out);
  EXPECT_EQ(summary.at("smoke").at("frames"), 3);
  EXPECT_EQ(summary.at("smoke").at("cells"), nlohmann::json::array({12, 16, 12}));
  EXPECT_EQ(summary.at("smoke").at("fire"), true);
  EXPECT_GT(summary.at("smoke").at("smoke_mass").get<double>(), 0);
  EXPECT_TRUE(fs::exists(path("again_0002.vdb")));
}

TEST_F(SimFluidCli, ASourceOutsideTheDomainExitsTwoAndWritesNothing) {
  std::string scene = kFire;
  scene.replace(scene.find("[0, 0.15, 0]"), 12, "[0, 5, 0]");
  kinema::test::write_all(path("bad.json"), scene);
  const auto r = kinema("sim " + sh_quote(path("bad.json")) + " -o " + sh_quote(path("b.pc2")));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("/smoke/sources/0: the source lies wholly outside the smoke's domain"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(files(), 1u);  // the scene alone
}

TEST_F(SimFluidCli, AVdbOutIsForSmokeAlone) {
  kinema::test::write_all(path("s.json"), R"({"duration": 0.2, "fps": 10,
    "cloth": [{"grid": {"columns": 3, "rows": 3, "width": 1, "height": 1}}],
    "smoke": {"domain": {"min": [0, 0, 0], "max": [1, 1, 1]}, "resolution": 8,
              "sources": [{"centre": [0.5, 0.2, 0.5], "radius": 0.2}]}})");
  const auto r = kinema("sim " + sh_quote(path("s.json")) + " -o " + sh_quote(path("s.vdb")));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("smoke alone"), std::string::npos) << r.err;
  EXPECT_EQ(files(), 1u);
}

TEST_F(SimFluidCli, AFlipLiquidIsWrittenAsAPointCache) {
  kinema::test::write_all(path("flip.json"), R"({"duration": 0.2, "fps": 10, "rate": 60,
    "liquid": {"solver": "flip", "spacing": 0.025,
               "tank": {"min": [0, 0, 0], "max": [0.4, 0.3, 0.1]},
               "blocks": [{"min": [0, 0, 0], "max": [0.15, 0.2, 0.1]}]}})");
  const auto r = kinema("sim " + sh_quote(path("flip.json")) + " -o " + sh_quote(path("flip.pc2")));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("liquid (FLIP): "), std::string::npos) << r.out;
  const kinema::PointCache cache = kinema::read_pc2(path("flip.pc2"));
  EXPECT_EQ(cache.samples(), 3);
  EXPECT_GT(cache.points, 0);
}

}  // namespace
