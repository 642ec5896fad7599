// tests/cli/ik_test.cpp — `kinema ik feet` and the demo's foot-placement step, run as a process.
//
// Exit codes: 0 ok; 1 for command lines that make no sense (no --ground or -o, OUT equal to IN,
// a ground that is neither .png nor .obj); 2 for bad input (a malformed ground file, a clip
// without humanoid legs), with a message naming the file and no OUT written.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli_process.h"
#include "kinema/io/asset_file.h"
#include "kinema/retarget/humanoid.h"
#include "kinema/skeleton/skeleton.h"
#include "test_paths.h"

namespace fs = std::filesystem;

namespace {

using kinema::test::read_all;
using kinema::test::write_all;
using IkRun = kinema::test::CliRun;
std::string q(const std::string& s) { return kinema::test::sh_quote(s); }

const std::string kDemo = kinema::test_paths::source_dir() + "/data/demo";
const std::string kWalk = kDemo + "/walk.bvh";
const std::string kStairs = kDemo + "/stairs.obj";
const std::string kSlope = kDemo + "/slope.png";

/// Tread height of data/demo/stairs.obj at z (rise 0.15, run 0.30 from z = −0.9, top 0.75).
double stairs_height(double z) {
  if (z < -0.9) return 0;
  return 0.15 * std::min(5.0, std::floor((z + 0.9) / 0.3) + 1);
}

class IkCli : public kinema::test::CliProcessTest {
 protected:
  IkCli() : CliProcessTest("kinema_ik_") {}

  /// A copy of a file in the scratch folder (so that "never touched" can be checked).
  std::string copy(const std::string& from, const std::string& name) {
    fs::copy_file(from, path(name));
    return path(name);
  }
};

nlohmann::json json_of(const IkRun& r) {
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(j.is_discarded()) << "stdout is not JSON:\n" << r.out;
  return j;
}

TEST_F(IkCli, FeetOnStairsImprovesContactAndLeavesTheInput) {
  const std::string in = copy(kWalk, "walk.bvh");
  const std::string before = read_all(in);
  const auto mtime = fs::last_write_time(in);
  const std::string out = path("stairs.glb");
  const IkRun r = kinema("ik feet " + q(in) + " --ground " + q(kStairs) + " -o " + q(out) +
                         " --follow-ground --json");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const nlohmann::json j = json_of(r);
  EXPECT_EQ(j["frames"], 343);
  const auto& b = j["before"]["overall"];
  const auto& a = j["after"]["overall"];
  EXPECT_GT(b["penetration_max_m"].get<double>(), 0.5);  // the landing is 0.75 m up
  EXPECT_LT(a["penetration_max_m"].get<double>(), b["penetration_max_m"].get<double>());
  EXPECT_LT(a["penetration_mean_m"].get<double>(), 0.002);
  EXPECT_GT(b["penetration_mean_m"].get<double>(), 0.1);
  EXPECT_EQ(a["reach_failures"], 0);
  // Planted feet end up as high above the steps as they were above the capture floor.
  EXPECT_NEAR(a["float_mean_m"].get<double>(),
              j["on_floor"]["overall"]["float_mean_m"].get<double>(), 0.003);
  EXPECT_LT(a["knee_jump_max_deg"].get<double>(), 15.0);
  for (const char* leg : {"left", "right"}) {
    EXPECT_GT(j["after"]["legs"][leg]["planted_frames"].get<int>(), 30) << leg;
  }
  // Foot skate on ankle and toe, before and after (cm/s; the lock is foot placement's own).
  for (const char* when : {"before", "after"}) {
    const auto& skate = j["foot_skate"][when];
    ASSERT_TRUE(skate["median_cm_per_s"].is_number()) << when << skate;
    EXPECT_TRUE(skate["with_toes"].get<bool>()) << when;
    EXPECT_GT(skate["planted_frames"].get<int>(), 60) << when;
  }
  EXPECT_EQ(read_all(in), before);
  EXPECT_EQ(fs::last_write_time(in), mtime);

  // End to end: on the planted frames of the capture, the soles of the written clip are on the
  // stairs, as high above the tread as the capture's soles were above its floor.
  const kinema::Asset src = kinema::load_asset(in);
  const kinema::Asset res = kinema::load_asset(out);
  ASSERT_EQ(res.clips.size(), 1u);
  ASSERT_EQ(res.skeleton.joint_count(), src.skeleton.joint_count());
  const auto h = kinema::humanoid_of(src);
  ASSERT_TRUE(h);
  const double floor = j["floor_height_m"].get<double>();
  const int feet[2] = {h->find("leftFoot"), h->find("rightFoot")};
  const int feet_out[2] = {res.skeleton.find(src.skeleton.joint(feet[0]).name),
                           res.skeleton.find(src.skeleton.joint(feet[1]).name)};
  const double fps = 120.005;
  const int frames = 343;
  std::vector<kinema::Vec3> in_pos, out_pos;
  for (int f = 0; f < frames; ++f) {
    const double t = std::min(src.clips[0].duration, f / fps);
    const auto ms = kinema::sample_model_pose(src.clips[0], src.skeleton, t);
    const auto mo = kinema::sample_model_pose(res.clips[0], res.skeleton, t);
    for (int l = 0; l < 2; ++l) {
      in_pos.push_back(ms[static_cast<size_t>(feet[l])].translation_part());
      out_pos.push_back(mo[static_cast<size_t>(feet_out[l])].translation_part());
    }
  }
  // A foot that lands just past a riser is sent up 0.15 m as it lands; the spring (half-life
  // 0.05 s) then takes about 0.2 s to settle within millimetres. Those settling frames are
  // checked loosely (3 cm), every other planted frame to 3 mm.
  const int settle = static_cast<int>(0.2 * fps);
  int planted = 0, on_step = 0, settled = 0, settling = 0;
  double worst_settled = 0, worst_settling = 0;
  for (int l = 0; l < 2; ++l) {
    const double ankle = j["ankle_heights_m"][l].get<double>();
    const auto ground_at = [&](int f) {
      return stairs_height(out_pos[static_cast<size_t>(2 * f + l)].z);
    };
    for (int f = 0; f < frames; ++f) {
      const auto& p = in_pos[static_cast<size_t>(2 * f + l)];
      const auto& pa = in_pos[static_cast<size_t>(2 * std::max(0, f - 1) + l)];
      const auto& pb = in_pos[static_cast<size_t>(2 * std::min(frames - 1, f + 1) + l)];
      const double dt = (std::min(frames - 1, f + 1) - std::max(0, f - 1)) / fps;
      const double speed = std::hypot(pb.x - pa.x, pb.z - pa.z) / dt;
      const double clearance = p.y - ankle - floor;
      if (clearance > 0.03 || speed > 0.5) continue;  // not planted in the capture
      ++planted;
      const double ground = ground_at(f);
      if (ground > 0) ++on_step;
      const double error =
          std::abs((out_pos[static_cast<size_t>(2 * f + l)].y - ankle - ground) - clearance);
      bool stepped = false;
      for (int k = std::max(0, f - settle); k < f; ++k) stepped |= ground_at(k) != ground;
      if (stepped) {
        ++settling;
        worst_settling = std::max(worst_settling, error);
      } else {
        ++settled;
        worst_settled = std::max(worst_settled, error);
      }
    }
  }
  EXPECT_EQ(planted, 156);
  EXPECT_GT(on_step, 60) << "planted frames on the steps";
  EXPECT_LT(settling, planted / 10) << "at most 10% of the planted frames are settling";
  EXPECT_LT(worst_settled, 0.003) << "settled planted soles within 3 mm of the steps";
  EXPECT_LT(worst_settling, 0.03);
}

TEST_F(IkCli, FeetOnSlopeHeightMapTextReport) {
  const std::string out = path("slope.bvh");
  const IkRun r = kinema("ik feet " + q(kWalk) + " --ground " + q(kSlope) + " -o " + q(out));
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const std::vector<std::string> expected = {"height map 81×121 16-bit",
                                             "before: penetration max 0.189 m",
                                             "after:  penetration max 0 m",
                                             "  left: ",
                                             "  right: ",
                                             "reach failures 0",
                                             "before: foot skate while planted: median ",
                                             "after:  foot skate while planted: median ",
                                             "wrote " + out};
  for (const std::string& s : expected)
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
  const kinema::Asset a = kinema::load_asset(out);
  ASSERT_EQ(a.clips.size(), 1u);
  EXPECT_NEAR(a.clips[0].duration, 342 / 120.005, 1e-3);
}

TEST_F(IkCli, HeightMapOptionsMoveTheGround) {
  // The slope scaled down: 0.01 m cells, 0.1 m range, placed so that the walk misses it.
  const IkRun r =
      kinema("ik feet " + q(kWalk) + " --ground " + q(kSlope) + " -o " + q(path("o.glb")) +
             " --cell-size 0.01 --height-range 0.1 --origin 50,50 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = json_of(r);
  EXPECT_EQ(j["after"]["overall"]["frames_on_ground"], 0);
  EXPECT_NEAR(j["ground"]["min"][0].get<double>(), 50, 1e-12);
  EXPECT_NEAR(j["ground"]["max"][0].get<double>(), 50.8, 1e-9);
  EXPECT_NEAR(j["ground"]["max"][1].get<double>(), 0.025, 1e-4);
}

TEST_F(IkCli, StairsWithoutFollowSaysHowToReachThem) {
  const IkRun r =
      kinema("ik feet " + q(kWalk) + " --ground " + q(kStairs) + " -o " + q(path("o.glb")));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("--follow-ground"), std::string::npos) << r.err;
}

TEST_F(IkCli, BadGroundFileFailsNamingItAndWritesNothing) {
  const std::string out = path("out.glb");
  const std::string obj = path("bad.obj");
  write_all(obj, "v 0 0 0\nv 1 0 0\nf 1 2 3\n");
  IkRun r = kinema("ik feet " + q(kWalk) + " --ground " + q(obj) + " -o " + q(out));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(obj + ":line 3: face vertex index 3 out of range"), std::string::npos)
      << r.err;
  const std::string png = path("bad.png");
  write_all(png, "this is not an image");
  r = kinema("ik feet " + q(kWalk) + " --ground " + q(png) + " -o " + q(out));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(png + ":byte 0: not a PNG image"), std::string::npos) << r.err;
  r = kinema("ik feet " + q(kWalk) + " --ground " + q(path("missing.obj")) + " -o " + q(out));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("missing.obj"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
  // An OUT that existed is left as it was.
  write_all(out, "previous");
  r = kinema("ik feet " + q(kWalk) + " --ground " + q(png) + " -o " + q(out));
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(read_all(out), "previous");
  for (const auto& e : fs::directory_iterator(dir_))
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();
}

TEST_F(IkCli, ClipWithoutLegsIsBadInput) {
  const std::string bvh = path("tiny.bvh");
  write_all(bvh,
            "HIERARCHY\nROOT Hips\n{\n  OFFSET 0 90 0\n  CHANNELS 6 Xposition Yposition Zposition "
            "Zrotation Xrotation Yrotation\n  JOINT Spine\n  {\n    OFFSET 0 10 0\n    CHANNELS 3 "
            "Zrotation Xrotation Yrotation\n    End Site\n    {\n      OFFSET 0 20 0\n    }\n  }\n}"
            "\nMOTION\nFrames: 2\nFrame Time: 0.0333333\n0 90 0 0 0 0 0 0 0\n0 90 1 0 0 0 0 0 0\n");
  const IkRun r =
      kinema("ik feet " + q(bvh) + " --ground " + q(kStairs) + " -o " + q(path("o.glb")));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(bvh + ": cannot find the legs"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("o.glb")));
}

TEST_F(IkCli, UsageErrors) {
  const std::string g = " --ground " + q(kStairs);
  EXPECT_EQ(kinema("ik").code, 1);                                               // no verb
  EXPECT_EQ(kinema("ik feet").code, 1);                                          // no IN
  EXPECT_EQ(kinema("ik feet " + q(kWalk) + " -o " + q(path("o.glb"))).code, 1);  // no --ground
  EXPECT_EQ(kinema("ik feet " + q(kWalk) + g).code, 1);                          // no -o
  const std::string in = copy(kWalk, "w.bvh");
  IkRun r = kinema("ik feet " + q(in) + g + " -o " + q(in));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("same file as IN"), std::string::npos) << r.err;
  r = kinema("ik feet " + q(kWalk) + " --ground " + q(path("g.txt")) + " -o " + q(path("o.glb")));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find(".png height map or an .obj mesh"), std::string::npos) << r.err;
  r = kinema("ik feet " + q(kWalk) + g + " -o " + q(path("o.glb")) + " --floor-height low");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("--floor-height"), std::string::npos) << r.err;
  EXPECT_EQ(kinema("ik feet " + q(kWalk) + g + " -o " + q(path("o.glb")) + " --origin 1").code, 1);
  EXPECT_EQ(kinema("ik feet " + q(kWalk) + " --ground " + q(kSlope) + " -o " + q(path("o.glb")) +
                   " --cell-size 0")
                .code,
            1);
  EXPECT_EQ(kinema("ik feet " + q(kWalk) + g + " -o " + q(path("o.glb")) + " --clip nope").code, 1);
  EXPECT_EQ(kinema("ik feet " + q(kWalk) + g + " -o " + q(dir_.string())).code, 1);
  r = kinema("ik feet " + q(kWalk) + g + " -o " + q(path("o.glb")) + " --cell-size 0.1");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("--cell-size applies to .png grounds"), std::string::npos) << r.err;
  r = kinema("ik feet " + q(kWalk) + " --ground " + q(kSlope) + " -o " + q(path("o.glb")) +
             " --ground-scale 2");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("--ground-scale applies to .obj grounds"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("o.glb")));
  EXPECT_EQ(kinema("ik feet " + q(kWalk) + g + " -o " + q(path("o.png"))).code, 1);
}

TEST_F(IkCli, FloorAndAnkleHeightOptions) {
  const IkRun r = kinema("ik feet " + q(kWalk) + " --ground " + q(kSlope) + " -o " +
                         q(path("o.glb")) + " --floor-height 0 --ankle-height 0.1 --json -q");
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = json_of(r);
  EXPECT_EQ(j["floor_height_m"].get<double>(), 0.0);
  EXPECT_EQ(j["ankle_heights_m"][0].get<double>(), 0.1);
  EXPECT_EQ(j["ankle_heights_m"][1].get<double>(), 0.1);
}

}  // namespace
