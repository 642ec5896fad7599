// tests/cli/clean_cli_test.cpp — `kinema clean`, run as a process.
//
// Exit codes: 0 ok, with a before/after table per arm on stdout; 1 for command lines that make
// no sense (a camera that is not X,Y,Z, an output that is an input); 2 for bad input (a clip for
// another skeleton, visibility of the wrong length, a character without a skinned body), with a
// message naming the file on stderr and no output file written.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_process.h"
#include "test_paths.h"

namespace fs = std::filesystem;

namespace {

using kinema::test::read_all;
using kinema::test::write_all;
std::string q(const std::string& s) { return kinema::test::sh_quote(s); }

const std::string kDemo = kinema::test_paths::source_dir() + "/data/demo";
const std::string kWalk = kDemo + "/walk.bvh";
const std::string kCharacter = kDemo + "/character.vrm";

class CleanCli : public kinema::test::CliProcessTest {
 protected:
  CleanCli() : CliProcessTest("kinema_clean_") {}

  /// The demo walk retargeted onto the demo character.
  std::string retargeted() {
    const std::string out = path("walk_on_character.glb");
    const auto r =
        kinema("retarget " + q(kWalk) + " --onto " + q(kCharacter) + " -o " + q(out) + " -q");
    EXPECT_EQ(r.code, 0) << r.err;
    return out;
  }
  /// The output options every run here asks for.
  std::string outputs() const {
    return " -o " + q(path("clean.glb")) + " --report " + q(path("clean.json")) + " --plot " +
           q(path("depth.png"));
  }
  void expect_no_outputs() const {
    for (const char* name : {"clean.glb", "clean.json", "depth.png"})
      EXPECT_FALSE(fs::exists(path(name))) << name;
  }
};

TEST_F(CleanCli, HelpListsTheOptions) {
  const auto r = kinema("clean --help");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* option :
       {"IN", "--character", "--clip", "--visibility", "--camera", "--out", "--report", "--preview",
        "--plot", "--margin", "--keep", "--no-couple", "--finger-limit", "--no-accel-limit",
        "--accel-allowance", "--threads"})
    EXPECT_NE(r.out.find(option), std::string::npos) << option << "\n" << r.out;
}

TEST_F(CleanCli, CleansTheRetargetedWalkAndPrintsTheTable) {
  const std::string in = retargeted();
  const auto r = kinema("clean " + q(in) + " --character " + q(kCharacter) + outputs());
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  for (const char* row : {"left arm", "right arm", "frames inside", "switches per-frame → DP",
                          "jerk peak", "jerk p99", "added mean / max"})
    EXPECT_NE(r.out.find(row), std::string::npos) << row << "\n" << r.out;
  EXPECT_TRUE(fs::exists(path("clean.glb")));
  EXPECT_EQ(read_all(path("depth.png")).substr(1, 3), "PNG");
  const auto report = nlohmann::json::parse(read_all(path("clean.json")));
  EXPECT_LE(report["arms"]["left"]["frames_inside_after"].get<long>(),
            report["arms"]["left"]["frames_inside_before"].get<long>());
  EXPECT_NE(r.out.find("acceleration limit"), std::string::npos) << r.out;
  EXPECT_TRUE(report["options"]["limit_acceleration"].get<bool>());
}

TEST_F(CleanCli, NoAccelLimitTurnsTheLimitOffAndTheAllowanceIsReported) {
  const std::string in = retargeted();
  const auto r =
      kinema("clean " + q(in) + " --character " + q(kCharacter) + outputs() + " --no-accel-limit");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  auto report = nlohmann::json::parse(read_all(path("clean.json")));
  EXPECT_FALSE(report["options"]["limit_acceleration"].get<bool>());
  EXPECT_EQ(report["arms"]["left"]["acceleration_limit"]["frames_changed"].get<long>(), 0);
  const auto s = kinema("clean " + q(in) + " --character " + q(kCharacter) + outputs() +
                        " --accel-allowance 2");
  ASSERT_EQ(s.code, 0) << s.out << s.err;
  report = nlohmann::json::parse(read_all(path("clean.json")));
  EXPECT_DOUBLE_EQ(report["options"]["acceleration_allowance_m"].get<double>(), 0.002);
}

TEST_F(CleanCli, AClipForAnotherSkeletonExits2NamingTheFile) {
  const auto r = kinema("clean " + q(kWalk) + " --character " + q(kCharacter) + outputs());
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find(kWalk), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("another skeleton"), std::string::npos) << r.err;
  expect_no_outputs();
}

TEST_F(CleanCli, VisibilityOfTheWrongLengthExits2AndLeavesTheInput) {
  const std::string in = retargeted();
  const std::string bytes = read_all(in);
  const std::string visibility = path("visibility.json");
  write_all(visibility, R"({"left": [0, 0.5, 1], "right": [1, 1, 1]})");
  const auto r = kinema("clean " + q(in) + " --character " + q(kCharacter) + " --visibility " +
                        q(visibility) + outputs());
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find(visibility), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("left"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("3 values"), std::string::npos) << r.err;
  expect_no_outputs();
  EXPECT_EQ(read_all(in), bytes);
}

TEST_F(CleanCli, ACharacterWithoutASkinnedBodyExits2NamingIt) {
  // The walk on its own skeleton: the clip matches, but a BVH has no mesh to be a body.
  const auto r = kinema("clean " + q(kWalk) + " --character " + q(kWalk) + outputs());
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find(kWalk), std::string::npos) << r.err;
  expect_no_outputs();
}

TEST_F(CleanCli, MalformedCommandLinesExit1) {
  const std::string base = "clean " + q(kWalk) + " --character " + q(kCharacter);
  EXPECT_EQ(kinema(base + " --camera 1,2" + outputs()).code, 1);
  EXPECT_EQ(kinema(base + " --camera 1,2,x" + outputs()).code, 1);
  EXPECT_EQ(kinema(base + " -o " + q(path("clean.png"))).code, 1);
  EXPECT_EQ(kinema(base + " -o " + q(path("clean.glb")) + " --plot " + q(kWalk)).code, 1);
  EXPECT_EQ(kinema(base + " -o " + q(path("clean.glb")) + " --keep 0").code, 1);
  EXPECT_EQ(kinema(base + " -o " + q(path("clean.glb")) + " --accel-allowance -1").code, 1);
  EXPECT_EQ(kinema(base).code, 1);  // no -o
  expect_no_outputs();
}

}  // namespace
