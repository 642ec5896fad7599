// tests/cli/play_drivers_cli_test.cpp — `kinema play` on a graph with drivers: the driven speed
// moves the character by its integral; a bad expression is named at its pointer and column
// (exit 2); a --param on a driven parameter is refused (exit 1); nothing is written on errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_process.h"
#include "kinema/core/file.h"
#include "test_paths.h"

namespace fs = std::filesystem;

namespace {

using kinema::test::sh_quote;

class PlayDriversCli : public kinema::test::CliProcessTest {
 protected:
  PlayDriversCli() : CliProcessTest("kinema_play_drivers_") {}
  /// The demo's locomotion graph with its clips by absolute path and `driver` as its speed's.
  std::string graph(const std::string& name, const std::string& expression) {
    const std::string demo = kinema::test_paths::source_dir() + "/data/demo/";
    nlohmann::json g = nlohmann::json::parse(kinema::read_file(demo + "locomotion.graph.json"));
    for (auto& clip : g["clips"]) clip["file"] = demo + clip["file"].get<std::string>();
    g["drivers"] = {{{"parameter", "speed"}, {"expression", expression}}};
    const std::string p = path(name);
    std::ofstream(p) << g.dump(1);
    return p;
  }
};

TEST_F(PlayDriversCli, ADrivenSpeedCarriesTheCharacterItsIntegral) {
  const auto r = kinema("play " + sh_quote(graph("g.graph.json", "1.5 + 0.5 * t")) +
                        " --seconds 4 -o " + sh_quote(path("out.glb")));
  ASSERT_EQ(r.code, 0) << r.err;
  // "ended at (X, Z) m": the speed's integral, 1.5·4 + 0.25·16 = 10 m.
  const std::size_t at = r.out.find("ended at (");
  ASSERT_NE(at, std::string::npos) << r.out;
  double x = 0, z = 0;
  ASSERT_EQ(std::sscanf(r.out.c_str() + at, "ended at (%lf, %lf)", &x, &z), 2) << r.out;
  EXPECT_NEAR(std::hypot(x, z), 10.0, 0.25) << r.out;
}

TEST_F(PlayDriversCli, BadDriversWriteNothing) {
  const auto bad = kinema("play " + sh_quote(graph("b.graph.json", "1.5 + spede")) + " -o " +
                          sh_quote(path("out.glb")));
  EXPECT_EQ(bad.code, 2) << bad.err;
  EXPECT_NE(bad.err.find("/drivers/0/expression column 7"), std::string::npos) << bad.err;
  const auto param = kinema("play " + sh_quote(graph("p.graph.json", "2")) +
                            " --param speed=3 -o " + sh_quote(path("out.glb")));
  EXPECT_EQ(param.code, 1) << param.err;
  EXPECT_NE(param.err.find("the graph drives 'speed'"), std::string::npos) << param.err;
  EXPECT_FALSE(fs::exists(path("out.glb")));
}

}  // namespace
