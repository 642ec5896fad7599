// tests/cli/cli_test.cpp — the `kinema` command-line tool, run as a process.
//
// Every test runs the built binary (test_paths::cli_path(), tests/test_paths.h) through the shell
// with stdout and stderr captured to files in a per-test scratch folder, and checks exit codes (0
// ok, 1 usage, 2 bad input / I/O), messages, what was written and that inputs are never touched.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "kinema/clip/clip.h"
#include "kinema/fluid/volume_file.h"
#include "kinema/io/asset_file.h"
#include "kinema/io/bvh.h"
#include "kinema/io/point_cache.h"
#include "kinema/skeleton/skeleton.h"
#include "test_paths.h"

namespace fs = std::filesystem;

namespace {

struct CliRun {
  int code = -1;
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void spit(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary);
  out << bytes;
}

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

const std::string kData = kinema::test_paths::data_dir();
const std::string kWalk = kData + "/bvh/cmu_cgspeed_mb/02_01.bvh";  // CMU 02_01, 31 joints
const std::string kCc3 = kData + "/bvh/cmu_iclone_cc3/007_12.bvh";  // Reallusion CC3 rig

// A tiny three-joint BVH in centimetres: 4 frames at 30 fps.
const char* kTinyBvh =
    "HIERARCHY\n"
    "ROOT Hips\n{\n  OFFSET 0 90 0\n  CHANNELS 6 Xposition Yposition Zposition Zrotation "
    "Xrotation Yrotation\n"
    "  JOINT Spine\n  {\n    OFFSET 0 10 0\n    CHANNELS 3 Zrotation Xrotation Yrotation\n"
    "    JOINT Head\n    {\n      OFFSET 0 60 0\n      CHANNELS 3 Zrotation Xrotation Yrotation\n"
    "      End Site\n      {\n        OFFSET 0 20 0\n      }\n    }\n  }\n}\n"
    "MOTION\nFrames: 4\nFrame Time: 0.0333333\n"
    "0 90 0 0 0 0 0 0 0 0 0 0\n"
    "1 90 0 10 0 0 5 0 0 0 10 0\n"
    "2 91 0 20 0 0 10 0 0 0 20 0\n"
    "3 90 1 30 0 0 15 0 0 0 30 0\n";

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("kinema_cli_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }

  /// Runs `kinema ARGS` (ARGS already shell-quoted) with an optional environment prefix.
  CliRun kinema(const std::string& args, const std::string& env = "") {
    const fs::path out = dir_ / "stdout.txt", err = dir_ / "stderr.txt";
    const std::string cmd = env + (env.empty() ? "" : " ") + quote(kinema::test_paths::cli_path()) +
                            " " + args + " >" + quote(out.string()) + " 2>" + quote(err.string()) +
                            " </dev/null";
    const int status = std::system(cmd.c_str());
    CliRun r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = slurp(out);
    r.err = slurp(err);
    fs::remove(out);
    fs::remove(err);
    return r;
  }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string tiny_bvh() {
    const std::string p = path("tiny.bvh");
    spit(p, kTinyBvh);
    return p;
  }
  /// Files in the scratch folder other than those named.
  std::vector<std::string> files_except(const std::vector<std::string>& keep) const {
    std::vector<std::string> extra;
    for (const auto& e : fs::directory_iterator(dir_)) {
      const std::string name = e.path().filename().string();
      if (std::find(keep.begin(), keep.end(), name) == keep.end()) extra.push_back(name);
    }
    return extra;
  }

  fs::path dir_;
};

nlohmann::json parse_json(const CliRun& r) {
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(j.is_discarded()) << "stdout is not JSON:\n" << r.out;
  return j;
}

/// Max world-position distance between same-named joints of two assets' first clips, sampled
/// at the first asset's frame times.
double max_position_error(const kinema::Asset& a, const kinema::Asset& b) {
  using namespace kinema;
  const Clip& ca = a.clips.at(0);
  const Clip& cb = b.clips.at(0);
  std::vector<Transform> la(static_cast<size_t>(a.skeleton.joint_count()));
  std::vector<Transform> lb(static_cast<size_t>(b.skeleton.joint_count()));
  std::vector<Mat4> ma(la.size()), mb(lb.size());
  double worst = 0;
  const int frames = ca.frame_count();
  for (int f = 0; f < frames; ++f) {
    const double t = std::min(ca.duration, f / ca.sample_rate);
    EXPECT_TRUE(sample_pose(ca, a.skeleton, t, WrapMode::Clamp, la));
    EXPECT_TRUE(sample_pose(cb, b.skeleton, t, WrapMode::Clamp, lb));
    local_to_model(a.skeleton.parents(), la, ma);
    local_to_model(b.skeleton.parents(), lb, mb);
    for (int i = 0; i < a.skeleton.joint_count(); ++i) {
      const int j = b.skeleton.find(a.skeleton.joint(i).name);
      EXPECT_GE(j, 0) << a.skeleton.joint(i).name;
      if (j < 0) continue;
      worst = std::max(worst, distance(ma[static_cast<size_t>(i)].translation_part(),
                                       mb[static_cast<size_t>(j)].translation_part()));
    }
  }
  return worst;
}

// ---- usage -------------------------------------------------------------------------------

TEST_F(Cli, HelpListsTheVerbsAndExitsZero) {
  const CliRun r = kinema("--help");
  EXPECT_EQ(r.code, 0) << r.err;
  for (const char* verb : {"info", "convert", "demo"})
    EXPECT_NE(r.out.find(verb), std::string::npos);
}

TEST_F(Cli, NoVerbIsAUsageError) {
  const CliRun r = kinema("");
  EXPECT_EQ(r.code, 1);
  EXPECT_FALSE(r.err.empty());
}

TEST_F(Cli, UnknownFlagIsAUsageError) {
  EXPECT_EQ(kinema("info --no-such-flag " + quote(kWalk)).code, 1);
  EXPECT_EQ(kinema("convert --bogus " + quote(kWalk) + " " + quote(path("o.glb"))).code, 1);
  EXPECT_EQ(kinema("frobnicate").code, 1);
  // An unknown verb is named, also when --help follows it (and global options come first).
  for (const char* args :
       {"stampede --help", "--bvh-translation add stampede --help", "-q stampede x"}) {
    const CliRun unknown = kinema(args);
    EXPECT_EQ(unknown.code, 1) << args;
    EXPECT_NE(unknown.err.find("unknown verb 'stampede'"), std::string::npos) << unknown.err;
    EXPECT_TRUE(unknown.out.empty()) << unknown.out;
  }
  EXPECT_EQ(kinema("info --help").code, 0);
}

TEST_F(Cli, MissingArgumentIsAUsageError) {
  const CliRun r = kinema("info");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("FILE"), std::string::npos) << r.err;
  EXPECT_EQ(kinema("convert " + quote(kWalk)).code, 1);
  EXPECT_EQ(kinema("convert " + quote(kWalk) + " " + quote(path("o.bvh")) + " --fps").code, 1);
  EXPECT_EQ(kinema("convert " + quote(kWalk) + " " + quote(path("o.bvh")) + " --unit furlong").code,
            1);
  EXPECT_FALSE(fs::exists(path("o.bvh")));
}

// ---- info --------------------------------------------------------------------------------

TEST_F(Cli, InfoOnBvhShowsTreeCountsAndClip) {
  const CliRun r = kinema("info " + quote(kWalk));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("joints 31"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("343 frames"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("LeftUpLeg"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("★"), std::string::npos) << "humanoid bones are marked\n" << r.out;
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST_F(Cli, InfoJsonOnBvh) {
  const CliRun r = kinema("info --json " + quote(kWalk));
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = parse_json(r);
  EXPECT_EQ(j["file"], kWalk);
  EXPECT_EQ(j["format"], "bvh");
  EXPECT_EQ(j["joint_count"], 31);
  ASSERT_EQ(j["joints"].size(), 31u);
  EXPECT_EQ(j["joints"][0]["name"], "Hips");
  EXPECT_EQ(j["joints"][0]["parent"], -1);
  ASSERT_EQ(j["clips"].size(), 1u);
  EXPECT_EQ(j["clips"][0]["frame_count"], 343);
  EXPECT_NEAR(j["clips"][0]["sample_rate"].get<double>(), 120.005, 0.01);
  EXPECT_NEAR(j["clips"][0]["duration"].get<double>(), 342 / 120.005, 1e-3);
  EXPECT_GT(j["clips"][0]["key_count"].get<long>(), 0);
  EXPECT_TRUE(j["meshes"].is_array());
  EXPECT_TRUE(j["skins"].is_array());
  for (const char* k : {"unit_in_meters", "unit_name", "unit_detected", "up_axis", "forward_axis",
                        "generator", "warnings"})
    EXPECT_TRUE(j["source"].contains(k)) << k;
  ASSERT_TRUE(j["humanoid"].is_object()) << "CMU names map to humanoid bones";
  EXPECT_EQ(j["humanoid"]["hips"], "Hips");
  EXPECT_EQ(j["humanoid"]["leftUpperLeg"], "LeftUpLeg");
}

TEST_F(Cli, InfoJsonOnInlineBvhCountsExactly) {
  const CliRun r = kinema("info --json " + quote(tiny_bvh()));
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = parse_json(r);
  EXPECT_EQ(j["joint_count"], 3);
  EXPECT_EQ(j["joints"][2]["name"], "Head");
  EXPECT_EQ(j["joints"][2]["parent"], 1);
  EXPECT_EQ(j["clips"][0]["frame_count"], 4);
  EXPECT_NEAR(j["clips"][0]["sample_rate"].get<double>(), 30.0, 1e-3);
  EXPECT_TRUE(j["humanoid"].is_null());
}

TEST_F(Cli, InfoJsonOnGltf) {
  // A glTF written by kinema itself, and (when present) the bundled character.
  const std::string gltf = path("walk.gltf");
  ASSERT_EQ(kinema("convert " + quote(kWalk) + " " + quote(gltf)).code, 0);
  const CliRun r = kinema("info --json " + quote(gltf));
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = parse_json(r);
  EXPECT_EQ(j["format"], "gltf");
  EXPECT_GE(j["joint_count"].get<int>(), 31);
  ASSERT_EQ(j["clips"].size(), 1u);
  EXPECT_EQ(j["clips"][0]["frame_count"], 343);
}

TEST_F(Cli, InfoOnFbxAndCollada) {
  for (const std::string& f :
       {kData + "/fbx/ozz_pab/walk.fbx", kData + "/collada/ozz_pab/walk.dae"}) {
    const CliRun r = kinema("info --json " + quote(f));
    ASSERT_EQ(r.code, 0) << f << ": " << r.err;
    const nlohmann::json j = parse_json(r);
    EXPECT_GT(j["joint_count"].get<int>(), 10) << f;
    EXPECT_GE(j["clips"].size(), 1u) << f;
  }
}

TEST_F(Cli, MissingFileIsExit2AndNamesIt) {
  const std::string missing = path("no_such_file.bvh");
  const CliRun r = kinema("info " + quote(missing));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("kinema: error: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(missing), std::string::npos) << r.err;
}

TEST_F(Cli, MalformedBvhIsExit2WithLine) {
  const std::string bad = path("bad.bvh");
  spit(bad, "HIERARCHY\nROOT Hips\n{\n  OFFSET 0 zero 0\n  CHANNELS 3 Xposition\n}\n");
  const CliRun r = kinema("info " + quote(bad));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(bad), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("line"), std::string::npos) << r.err;
  // Truncated motion data too.
  std::string truncated = kTinyBvh;
  truncated.resize(truncated.size() - 12);
  spit(bad, truncated);
  EXPECT_EQ(kinema("info " + quote(bad)).code, 2);
  spit(bad, "");
  EXPECT_EQ(kinema("info " + quote(bad)).code, 2);
}

TEST_F(Cli, UnknownExtensionIsExit2) {
  const std::string odd = path("motion.xyz");
  spit(odd, kTinyBvh);
  const CliRun r = kinema("info " + quote(odd));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("xyz"), std::string::npos) << r.err;
  // An OUT kinema cannot write is the command line's mistake, as in every verb: exit 1.
  const CliRun out = kinema("convert " + quote(tiny_bvh()) + " " + quote(path("out.xyz")));
  EXPECT_EQ(out.code, 1);
  EXPECT_NE(
      out.err.find("cannot write '.xyz' files (kinema writes .bvh .gltf .glb .vrm .vrma .fbx)"),
      std::string::npos)
      << out.err;
  EXPECT_FALSE(fs::exists(path("out.xyz")));
}

TEST_F(Cli, FoldersAreRejectedClearly) {
  const CliRun r = kinema("info " + quote(dir_.string()));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("folder"), std::string::npos) << r.err;
  const CliRun c = kinema("convert " + quote(tiny_bvh()) + " " + quote(dir_.string()));
  EXPECT_EQ(c.code, 1);
  EXPECT_NE(c.err.find("folder"), std::string::npos) << c.err;
}

TEST_F(Cli, FullStdoutIsAnIoFailure) {
  if (!fs::exists("/dev/full")) GTEST_FAIL() << "/dev/full is needed";
  const int status = std::system(
      (quote(kinema::test_paths::cli_path()) + " info " + quote(kWalk) + " >/dev/full 2>/dev/null")
          .c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2);
}

TEST_F(Cli, GarbageGlbIsExit2) {
  const std::string glb = path("garbage.glb");
  spit(glb, "glTF\x02\0\0\0 this is not a real binary glTF");
  const CliRun r = kinema("info " + quote(glb));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find(glb), std::string::npos) << r.err;
}

// ---- convert -----------------------------------------------------------------------------

TEST_F(Cli, ConvertBvhToGlbToBvhRoundTrip) {
  const std::string glb = path("walk.glb"), bvh = path("walk_back.bvh");
  const std::string before = slurp(kWalk);
  CliRun r = kinema("convert " + quote(kWalk) + " " + quote(glb));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("31 joints"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("343 frames"), std::string::npos) << r.out;
  r = kinema("convert " + quote(glb) + " " + quote(bvh));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(slurp(kWalk), before) << "the input must not change";

  const kinema::Asset original = kinema::read_bvh(kWalk);
  const kinema::Asset back = kinema::read_bvh(bvh);
  EXPECT_EQ(back.skeleton.joint_count(), original.skeleton.joint_count());
  EXPECT_EQ(back.clips.at(0).frame_count(), original.clips.at(0).frame_count());
  EXPECT_LT(max_position_error(original, back), 1e-4);  // metres
  EXPECT_LT(max_position_error(original, kinema::load_asset(glb)), 1e-4);
  EXPECT_TRUE(files_except({"walk.glb", "walk_back.bvh"}).empty());
}

TEST_F(Cli, ConvertKeepsUnitAndHonoursUnitAndFps) {
  const std::string in = tiny_bvh();
  const std::string m = path("in_m.bvh"), fps = path("fps60.bvh");
  // Read as centimetres (the tiny file is too short for detection to say so), write metres.
  ASSERT_EQ(kinema("convert " + quote(in) + " " + quote(m) + " --in-unit cm --unit m").code, 0);
  kinema::BvhReadOptions cm;
  cm.unit_in_meters = 0.01;
  const kinema::Asset a = kinema::read_bvh(in, cm);
  kinema::BvhReadOptions metres;
  metres.unit_in_meters = 1.0;
  const kinema::Asset b = kinema::read_bvh(m, metres);
  EXPECT_LT(max_position_error(a, b), 1e-6);
  // The root OFFSET is written as 0 and positions go to the motion: Head's OFFSET is 0.6 m.
  EXPECT_NE(slurp(m).find("0.6"), std::string::npos) << slurp(m);

  const CliRun r = kinema("convert " + quote(in) + " " + quote(fps) + " --fps 60");
  ASSERT_EQ(r.code, 0) << r.err;
  const kinema::Asset c = kinema::read_bvh(fps);
  EXPECT_EQ(c.clips.at(0).frame_count(), 7);  // 0.1 s at 60 fps
  EXPECT_NEAR(c.clips.at(0).sample_rate, 60, 1e-3);
}

TEST_F(Cli, ConvertRefusesToOverwriteItsInput) {
  const std::string in = tiny_bvh();
  const std::string before = slurp(in);
  CliRun r = kinema("convert " + quote(in) + " " + quote(in));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("same file"), std::string::npos) << r.err;
  const std::string dotted = (dir_ / "." / "tiny.bvh").string();
  EXPECT_EQ(kinema("convert " + quote(in) + " " + quote(dotted)).code, 1);
  EXPECT_EQ(slurp(in), before);
}

TEST_F(Cli, FailedConvertLeavesNoOutputAndKeepsAnOldOne) {
  const std::string bad = path("bad.bvh");
  const std::string bad_bytes = "HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0\n";
  spit(bad, bad_bytes);
  CliRun r = kinema("convert " + quote(bad) + " " + quote(path("out.glb")));
  EXPECT_EQ(r.code, 2);
  EXPECT_FALSE(fs::exists(path("out.glb")));
  // An existing OUT survives a failed conversion byte for byte.
  spit(path("out.glb"), "previous contents");
  r = kinema("convert " + quote(bad) + " " + quote(path("out.glb")));
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(slurp(path("out.glb")), "previous contents");
  EXPECT_EQ(slurp(bad), bad_bytes);
  // Into a folder that does not exist.
  r = kinema("convert " + quote(tiny_bvh()) + " " + quote(path("nowhere/out.bvh")));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("nowhere"), std::string::npos) << r.err;
  // No temporary files left behind.
  EXPECT_EQ(files_except({"bad.bvh", "out.glb", "tiny.bvh"}), std::vector<std::string>{});
}

TEST_F(Cli, ConvertClipSelection) {
  const std::string in = tiny_bvh();
  EXPECT_EQ(kinema("convert " + quote(in) + " " + quote(path("a.bvh")) + " --clip 0").code, 0);
  const CliRun r = kinema("convert " + quote(in) + " " + quote(path("b.bvh")) + " --clip 3");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("no clip"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("b.bvh")));
}

TEST_F(Cli, ConvertOntoRetargetsByHumanoidNames) {
  // The CMU cgspeed walk onto the Reallusion CC3 skeleton (a different rig with ~100 joints).
  const std::string avatar = path("cc3.glb"), out = path("cc3_walk.glb");
  ASSERT_EQ(kinema("convert " + quote(kCc3) + " " + quote(avatar)).code, 0);
  const CliRun r =
      kinema("convert " + quote(kWalk) + " " + quote(out) + " --onto " + quote(avatar));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("retargeted onto"), std::string::npos) << r.out;
  const kinema::Asset result = kinema::load_asset(out);
  const kinema::Asset cc3 = kinema::load_asset(avatar);
  EXPECT_EQ(result.skeleton.joint_count(), cc3.skeleton.joint_count());
  ASSERT_EQ(result.clips.size(), 1u);
  EXPECT_NEAR(result.clips[0].duration, 342 / 120.005, 1e-2);
  // A skeleton without humanoid names cannot be a source.
  const CliRun bad = kinema("convert " + quote(tiny_bvh()) + " " + quote(path("x.glb")) +
                            " --onto " + quote(avatar));
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("humanoid"), std::string::npos) << bad.err;
  EXPECT_FALSE(fs::exists(path("x.glb")));
}

TEST_F(Cli, QuietPrintsNothingOnSuccess) {
  const CliRun r = kinema("--quiet convert " + quote(tiny_bvh()) + " " + quote(path("q.glb")));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_TRUE(r.err.empty()) << r.err;
}

// ---- demo --------------------------------------------------------------------------------

TEST_F(Cli, DemoOnBundledDataExitsZero) {
  // Needs data/demo (walk.bvh, character.vrm) in the source tree.
  ASSERT_TRUE(fs::exists(kinema::test_paths::source_dir() + "/data/demo/walk.bvh"))
      << "data/demo/walk.bvh is missing";
  const std::string out = path("demo");
  const CliRun r = kinema("demo -o " + quote(out));
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_TRUE(fs::exists(out + "/walk.glb"));
  EXPECT_TRUE(fs::exists(out + "/walk_roundtrip.bvh"));
  EXPECT_NE(r.out.find("max joint position error"), std::string::npos) << r.out;
  const std::string demo = kinema::test_paths::source_dir() + "/data/demo";
  // The graph step: walk and run blended by speed, 1.5 → 4.5 m/s over 3 s, then 4.5 m/s for
  // 1 s, with root motion: the hips travel 9 m + 4.5 m.
  EXPECT_NE(r.out.find("== graph: " + demo + "/locomotion.graph.json"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("wrote " + out + "/locomotion.glb: 121 frames, 4 s at 30 fps"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  locomotion.glb  "), std::string::npos) << "listed as produced\n" << r.out;
  {
    const kinema::Asset a = kinema::load_asset(out + "/locomotion.glb");
    ASSERT_EQ(a.clips.size(), 1u);
    EXPECT_NEAR(a.clips[0].duration, 4.0, 1e-6);
    const int hips = a.skeleton.find("Hips");
    EXPECT_NEAR(
        kinema::sample_model_pose(a.clips[0], a.skeleton, 4.0)[size_t(hips)].translation_part().z,
        13.5, 0.3);
  }
  // Foot placement: the walk up the stairs ends on the landing, 0.75 m up, the hips carried up.
  EXPECT_NE(r.out.find("== foot placement: " + demo + "/walk.bvh on " + demo + "/stairs.obj"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("wrote " + out + "/walk_slope.glb"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  walk_stairs.glb  "), std::string::npos) << "listed as produced\n"
                                                                  << r.out;
  {
    const kinema::Asset a = kinema::load_asset(out + "/walk_stairs.glb");
    ASSERT_EQ(a.clips.size(), 1u);
    const int hips = a.skeleton.find("Hips");
    const auto end = kinema::sample_model_pose(a.clips[0], a.skeleton, a.clips[0].duration);
    EXPECT_GT(end[size_t(hips)].translation_part().y, 1.5);
  }
  // The bundled character (a VRM) takes the walk by humanoid names.
  EXPECT_TRUE(fs::exists(out + "/character_walk.glb")) << r.out;
  EXPECT_NE(r.out.find("humanoid bones: motion"), std::string::npos) << r.out;
  const kinema::Asset walked = kinema::load_asset(out + "/character_walk.glb");
  ASSERT_EQ(walked.clips.size(), 1u);
  EXPECT_NEAR(walked.clips[0].duration, 342 / 120.005, 1e-2);
  EXPECT_FALSE(walked.meshes.empty()) << "the character keeps its meshes";
  // The clean step: the retargeted walk's arms out of the body, with its report and depth plot.
  EXPECT_TRUE(fs::exists(out + "/character_walk_clean.glb")) << r.out;
  EXPECT_TRUE(fs::exists(out + "/clean_report.json")) << r.out;
  EXPECT_TRUE(fs::exists(out + "/clean_depth.png")) << r.out;
  EXPECT_NE(r.out.find("switches per-frame → DP"), std::string::npos) << r.out;
  // The cloth step: the bundled scene simulated into a glTF with a morph target per frame.
  EXPECT_NE(r.out.find("== simulation:"), std::string::npos) << r.out;
  const kinema::Asset cloth = kinema::load_asset(out + "/cloth_drape.glb");
  ASSERT_EQ(cloth.meshes.size(), 1u);
  EXPECT_EQ(cloth.meshes[0].morph_targets.size(), 61u);  // 2 s at 30 fps
  EXPECT_TRUE(fs::exists(out + "/cloth_drape.png")) << r.out;
  // The liquid step: a water column collapsing in a tank, its particles a point cache, its
  // surface a glTF node per frame, drawn.
  EXPECT_NE(r.out.find("a column of water collapsing"), std::string::npos) << r.out;
  EXPECT_EQ(kinema::read_pc2(out + "/dam_break.pc2").points, 1040);
  EXPECT_EQ(kinema::read_pc2(out + "/dam_break.pc2").samples(), 37);  // 1.2 s at 30 fps
  EXPECT_TRUE(fs::exists(out + "/dam_break.kpa")) << r.out;
  EXPECT_EQ(kinema::load_asset(out + "/dam_break_surface.glb").meshes.size(), 37u);
  EXPECT_TRUE(fs::exists(out + "/dam_break.png")) << r.out;
  // The smoke step: a plume with fire, an OpenVDB file per frame, ray-marched into a sheet.
  EXPECT_NE(r.out.find("smoke and fire rising past a sphere"), std::string::npos) << r.out;
  {
    const std::vector<kinema::VolumeGrid> last = kinema::read_vdb(out + "/smoke_0048.vdb");
    ASSERT_EQ(last.size(), 4u);  // density, temperature, flame, fuel
    EXPECT_EQ(last[0].name, "density");
    float densest = 0;
    for (float d : last[0].values) densest = std::max(densest, d);
    EXPECT_GT(densest, 0.01f) << "the plume holds smoke at the end";
  }
  EXPECT_FALSE(fs::exists(out + "/smoke_0049.vdb")) << "2 s at 24 fps: frames 0…48";
  EXPECT_TRUE(fs::exists(out + "/smoke.png")) << r.out;
  // The spring-bone step: Godette's hair and ribbon baked into the walk, drawn.
  EXPECT_NE(r.out.find("== spring bones:"), std::string::npos) << r.out;
  const kinema::Asset springs = kinema::load_asset(out + "/character_walk_springs.glb");
  EXPECT_TRUE(springs.spring_bones.empty()) << "baked: no definitions left to simulate again";
  ASSERT_EQ(springs.clips.size(), 1u);
  EXPECT_EQ(springs.clips[0].name, "walk_springs");
  EXPECT_TRUE(fs::exists(out + "/character_walk_springs.png")) << r.out;
  // The cape: cloth on the walking character, colliding with its body, drawn with it.
  EXPECT_NE(r.out.find("a cape on the character's back"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::exists(out + "/cape.glb")) << r.out;
  EXPECT_TRUE(fs::exists(out + "/cape_character.glb")) << r.out;
  EXPECT_TRUE(fs::exists(out + "/cape.png")) << r.out;
  // Hair, a jelly and sparks on the same walk: the jelly a morph-target mesh, hair and sparks
  // point caches (the sparks with their sidecar), the jelly and sparks drawn with the character.
  EXPECT_NE(r.out.find("a jelly dropped beside her"), std::string::npos) << r.out;
  const kinema::Asset jelly = kinema::load_asset(out + "/bodies.glb");
  ASSERT_EQ(jelly.meshes.size(), 1u);
  EXPECT_EQ(jelly.meshes[0].morph_targets.size(), 61u);
  EXPECT_NE(r.out.find("hair, 48 guides and 192 children"), std::string::npos) << r.out;
  EXPECT_EQ(kinema::read_pc2(out + "/bodies_hair.pc2").samples(), 61);
  EXPECT_TRUE(fs::exists(out + "/bodies_particles.kpa")) << r.out;
  EXPECT_TRUE(fs::exists(out + "/bodies_character.glb")) << r.out;
  EXPECT_TRUE(fs::exists(out + "/bodies.png")) << r.out;
  const kinema::Asset crates = kinema::load_asset(out + "/bodies_rigid.glb");
  EXPECT_EQ(crates.meshes.size(), 17u);  // six crates, the ball and the pane's ten pieces
  // The hit reaction: the walk hit in the face, falling as a powered ragdoll.
  EXPECT_NE(r.out.find("== hit reaction:"), std::string::npos) << r.out;
  const kinema::Asset fallen = kinema::load_asset(out + "/ragdoll.glb");
  ASSERT_EQ(fallen.clips.size(), 1u);
  EXPECT_EQ(fallen.clips[0].name, "walk_ragdoll");
  EXPECT_TRUE(fs::exists(out + "/ragdoll.png")) << r.out;
  // The crowd: 1,000 agents crossing the square, a point cache drawn from above.
  EXPECT_NE(r.out.find("== crowd:"), std::string::npos) << r.out;
  EXPECT_EQ(kinema::read_pc2(out + "/crowd.pc2").points, 1000);
  EXPECT_TRUE(fs::exists(out + "/crowd.kpa")) << r.out;
  EXPECT_TRUE(fs::exists(out + "/crowd.png")) << r.out;
  // Its characters at their LOD tiers: a contact sheet, and one in the tiers' colours.
  EXPECT_TRUE(fs::exists(out + "/crowd_characters.png")) << r.out;
  EXPECT_TRUE(fs::exists(out + "/crowd_lod.png")) << r.out;
  // Procedural gaits: the spider and Godette climb the stairs with no clip, drawn on them.
  EXPECT_NE(r.out.find("== procedural gaits:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("spider (8 legs) walked 4 m"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("planted feet moved at most 0 mm"), std::string::npos) << r.out;
  for (const char* name : {"gait_spider", "gait_character"}) {
    const kinema::Asset walk = kinema::load_asset(out + "/" + name + ".glb");
    ASSERT_EQ(walk.clips.size(), 1u) << name;
    EXPECT_EQ(walk.clips[0].name, "gait");
    EXPECT_TRUE(fs::exists(out + "/" + name + ".png")) << r.out;
  }
}

TEST_F(Cli, DemoOnUserFiles) {
  const std::string out = path("demo");
  const CliRun r = kinema("demo " + quote(kWalk) + " -o " + quote(out));
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_TRUE(fs::exists(out + "/02_01.glb"));
  EXPECT_TRUE(fs::exists(out + "/02_01_roundtrip.bvh"));
  EXPECT_NE(r.out.find("round trip OK"), std::string::npos) << r.out;
  // The motion compressed within the default bound, readable as an animation file.
  EXPECT_NE(r.out.find("== compression"), std::string::npos) << r.out;
  const kinema::Asset compressed = kinema::load_asset(out + "/02_01.kmc");
  ASSERT_EQ(compressed.clips.size(), 1u);
  EXPECT_EQ(compressed.skeleton.joint_count(), 31);
  EXPECT_EQ(kinema("demo " + quote(path("missing.bvh")) + " -o " + quote(out)).code, 2);
  EXPECT_EQ(kinema("demo a.bvh b.glb c.glb").code, 1);
}

TEST_F(Cli, DemoDataOverrideThroughEnvironment) {
  const std::string data = path("data");
  fs::create_directories(data);
  fs::copy_file(kWalk, data + "/walk.bvh");
  const CliRun r = kinema("demo -o " + quote(path("out")), "KINEMA_DEMO_DATA=" + quote(data));
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("no character"), std::string::npos) << r.out;
  const CliRun missing =
      kinema("demo -o " + quote(path("out2")), "KINEMA_DEMO_DATA=" + quote(path("nothing")));
  EXPECT_EQ(missing.code, 2);
}

}  // namespace

namespace {

TEST_F(Cli, ConvertAvatarWithoutAnimationToBvhWritesItsRestPose) {
  const std::string avatar = kinema::test_paths::data_dir() + "/vrm/debug_robot.vrm";
  const std::string out = path("robot_rest.bvh");
  const CliRun r = kinema("convert " + quote(avatar) + " " + quote(out));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("rest pose"), std::string::npos) << r.err;
  const kinema::Asset robot = kinema::load_asset(avatar);
  const kinema::Asset bvh = kinema::load_asset(out);
  EXPECT_EQ(bvh.skeleton.joint_count(), robot.skeleton.joint_count());
  ASSERT_EQ(bvh.clips.size(), 1u);
  EXPECT_EQ(bvh.clips[0].frame_count(), 1);
  // The one frame reproduces the avatar's rest pose in world space.
  const std::vector<kinema::Mat4> a = kinema::rest_model_matrices(robot.skeleton);
  std::vector<kinema::Transform> local(static_cast<size_t>(bvh.skeleton.joint_count()));
  ASSERT_TRUE(kinema::sample_pose(bvh.clips[0], bvh.skeleton, 0, kinema::WrapMode::Clamp, local));
  std::vector<kinema::Mat4> b(local.size());
  ASSERT_TRUE(kinema::local_to_model(bvh.skeleton.parents(), local, b));
  for (int i = 0; i < robot.skeleton.joint_count(); ++i) {
    const int j = bvh.skeleton.find(robot.skeleton.joint(i).name);
    ASSERT_GE(j, 0);
    EXPECT_LT(kinema::distance(a[static_cast<size_t>(i)].translation_part(),
                               b[static_cast<size_t>(j)].translation_part()),
              1e-5)
        << robot.skeleton.joint(i).name;
  }
}

}  // namespace

// ---- BVH position channels -------------------------------------------------------------------

namespace {

const std::string kLocalTranslation =
    kinema::test_paths::data_dir() + "/bvh/translation/local_translation.bvh";

TEST_F(Cli, InfoSaysHowBvhPositionChannelsWereRead) {
  CliRun r = kinema("info --no-tree " + quote(kLocalTranslation));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("BVH position channels: local translation (replaces OFFSET) on 17 joints, "
                       "measured: Hips"),
            std::string::npos)
      << r.out;
  r = kinema("info --json " + quote(kLocalTranslation));
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = parse_json(r);
  ASSERT_EQ(j["bvh_translation"].size(), 17u);
  EXPECT_EQ(j["bvh_translation"][1]["joint"], "Spine");
  EXPECT_EQ(j["bvh_translation"][1]["reading"], "replace");
  EXPECT_EQ(j["bvh_translation"][1]["basis"], "measured");
  EXPECT_DOUBLE_EQ(j["bvh_translation"][1]["offset_ratio"].get<double>(), 1.0);
  // The cgspeed walk's root has OFFSET 0: both readings agree, and there is no ratio.
  r = kinema("info --json " + quote(kWalk));
  const nlohmann::json walk = parse_json(r);
  ASSERT_EQ(walk["bvh_translation"].size(), 1u);
  EXPECT_EQ(walk["bvh_translation"][0]["basis"], "offset_zero");
  EXPECT_TRUE(walk["bvh_translation"][0]["offset_ratio"].is_null());
}

TEST_F(Cli, BvhTranslationOptionForcesAReadingOnAnyVerb) {
  // Before or after the verb; the forced reading doubles every bone of this file.
  const std::string replaced = path("replaced.glb"), added = path("added.glb");
  CliRun r = kinema("-q convert " + quote(kLocalTranslation) + " " + quote(replaced));
  ASSERT_EQ(r.code, 0) << r.err;
  r = kinema("-q --bvh-translation add convert " + quote(kLocalTranslation) + " " + quote(added));
  ASSERT_EQ(r.code, 0) << r.err;
  const kinema::Asset a = kinema::load_asset(replaced), b = kinema::load_asset(added);
  const std::vector<kinema::Mat4> ra = kinema::rest_model_matrices(a.skeleton);
  std::vector<kinema::Transform> la(ra.size()), lb(ra.size());
  ASSERT_TRUE(kinema::sample_pose(a.clips[0], a.skeleton, 0, kinema::WrapMode::Clamp, la));
  ASSERT_TRUE(kinema::sample_pose(b.clips[0], b.skeleton, 0, kinema::WrapMode::Clamp, lb));
  const int spine = a.skeleton.find("Spine");
  EXPECT_NEAR(kinema::length(la[static_cast<size_t>(spine)].translation), 0.10, 1e-6);
  EXPECT_NEAR(kinema::length(lb[static_cast<size_t>(spine)].translation), 0.20, 1e-6);
  r = kinema("info " + quote(kLocalTranslation) + " --no-tree --bvh-translation add");
  EXPECT_NE(r.out.find("displacement (adds to OFFSET) on 17 joints, as requested"),
            std::string::npos)
      << r.out;
  r = kinema("info " + quote(kLocalTranslation) + " --bvh-translation sideways");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("sideways"), std::string::npos) << r.err;
}

}  // namespace
