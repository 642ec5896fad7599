// tests/cli/sim_cli_test.cpp — `kinema sim` run as a process: the summary, the cache it writes,
// a bad scene (exit 2, the JSON pointer in the message, no output), usage errors (exit 1).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_process.h"
#include "kinema/io/point_cache.h"
#include "test_paths.h"

namespace fs = std::filesystem;

namespace {

using kinema::test::sh_quote;

class SimCli : public kinema::test::CliProcessTest {
 protected:
  SimCli() : CliProcessTest("kinema_sim_") {}
};

const std::string kScene = R"({"duration": 1, "fps": 10, "cloth": [{"name": "sheet",
  "grid": {"columns": 10, "rows": 10, "width": 1, "height": 1, "corner": [0, 1, 0]},
  "colliders_note": 0}]})";

TEST_F(SimCli, RunsAScenePrintsTheSummaryAndWritesTheCache) {
  kinema::test::write_all(path("s.json"),
                          R"({"duration": 1, "fps": 10, "colliders": [{"shape": "plane"}],
    "cloth": [{"name": "sheet", "grid": {"columns": 10, "rows": 10, "width": 1, "height": 1,
    "corner": [0, 0.5, 0]}}]})");
  const auto r = kinema("sim " + sh_quote(path("s.json")) + " -o " + sh_quote(path("s.pc2")));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("11 frames at 10 fps"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sheet (xpbd): 100 vertices"), std::string::npos) << r.out;
  const kinema::PointCache cache = kinema::read_pc2(path("s.pc2"));
  EXPECT_EQ(cache.points, 100);
  EXPECT_EQ(cache.samples(), 11);
  // It fell onto the plane and lies there, a thickness above it.
  EXPECT_NEAR(cache.at(10, 55).y, 0.005, 1e-3);
  EXPECT_TRUE(fs::exists(path("s.obj")));
  const auto j =
      kinema("sim --json " + sh_quote(path("s.json")) + " -o " + sh_quote(path("t.pc2")));
  ASSERT_EQ(j.code, 0) << j.err;
  const auto summary = nlohmann::json::parse(j.out);
  EXPECT_EQ(summary.at("frames"), 11);
  EXPECT_EQ(summary.at("cloth").at(0).at("vertices"), 100);
  EXPECT_GT(summary.at("cloth").at(0).at("collider_contacts").get<long>(), 0);
  const auto g = kinema("sim " + sh_quote(path("s.json")) + " -o " + sh_quote(path("s.glb")));
  ASSERT_EQ(g.code, 0) << g.err;
  EXPECT_NE(g.out.find("a morph target per frame"), std::string::npos) << g.out;
  EXPECT_TRUE(fs::exists(path("s.glb")));
}

TEST_F(SimCli, BadSceneExitsTwoWithItsPointerAndWritesNothing) {
  kinema::test::write_all(path("bad.json"), kScene);
  const auto r = kinema("sim " + sh_quote(path("bad.json")) + " -o " + sh_quote(path("b.pc2")));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("/cloth/0/colliders_note: unknown key"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("b.pc2")));
  EXPECT_FALSE(fs::exists(path("b.obj")));
  kinema::test::write_all(path("broken.json"), "{\"cloth\": [");
  EXPECT_EQ(kinema("sim " + sh_quote(path("broken.json")) + " -o " + sh_quote(path("b.pc2"))).code,
            2);
  EXPECT_EQ(kinema("sim " + sh_quote(path("none.json")) + " -o " + sh_quote(path("b.pc2"))).code,
            2);
}

TEST_F(SimCli, RigidSceneWritesAGltfAndABadOneExitsTwoWritingNothing) {
  kinema::test::write_all(path("r.json"), R"({"duration": 1, "fps": 10,
    "colliders": [{"shape": "plane"}],
    "rigid_bodies": [{"name": "crate", "shape": "box", "half_extents": [0.2, 0.2, 0.2],
                      "position": [0, 1, 0], "array": {"count": [2, 1, 1], "step": [0.5, 0, 0]}}]})");
  const auto r =
      kinema("sim --json " + sh_quote(path("r.json")) + " -o " + sh_quote(path("r.glb")));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto summary = nlohmann::json::parse(r.out);
  EXPECT_EQ(summary.at("rigid").at("dynamic_bodies"), 2);
  EXPECT_EQ(summary.at("rigid").at("steps"), 60);
  EXPECT_TRUE(fs::exists(path("r.glb")));
  kinema::test::write_all(path("bad.json"), R"({"rigid_bodies": [{"name": "a", "shape": "box",
    "half_extents": [1, 1, 1]}], "joints": [{"b": "b", "anchor": [0, 0, 0]}]})");
  const auto bad = kinema("sim " + sh_quote(path("bad.json")) + " -o " + sh_quote(path("bad.glb")));
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("/joints/0/b"), std::string::npos) << bad.err;
  EXPECT_FALSE(fs::exists(path("bad.glb")));
}

TEST_F(SimCli, RagdollFallsWhenHitAndRefusesBadHits) {
  const std::string godette = kinema::test_paths::data_dir() + "/vrm/Godette_vrm_v4.vrm";
  const auto r = kinema("ragdoll --json " + sh_quote(godette) +
                        " --hit 0.1,head,0:0:-80 --seconds 1 -o " + sh_quote(path("d.glb")));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto summary = nlohmann::json::parse(r.out);
  EXPECT_EQ(summary.at("hit_body"), "head_Armature");
  EXPECT_TRUE(fs::exists(path("d.glb")));
  const auto bone = kinema("ragdoll " + sh_quote(godette) + " --hit 0.1,tail,0:0:-80 -o " +
                           sh_quote(path("e.glb")));
  EXPECT_EQ(bone.code, 2);
  EXPECT_NE(bone.err.find("tail"), std::string::npos) << bone.err;
  EXPECT_FALSE(fs::exists(path("e.glb")));
  EXPECT_EQ(
      kinema("ragdoll " + sh_quote(godette) + " --hit 0.1,head,80 -o " + sh_quote(path("e.glb")))
          .code,
      1);
  EXPECT_FALSE(fs::exists(path("e.glb")));
  // A malformed limits file: exit 2 naming the file and the place; a missing one too; a get-up
  // clip the character does not have: exit 1. Nothing written.
  kinema::test::write_all(path("limits.json"),
                          R"({"leftLowerLeg": {"hinge": [1, 0, 0], "range": [90, 0]}})");
  const auto limits = kinema("ragdoll " + sh_quote(godette) + " --hit 0.1,head,0:0:-80 --limits " +
                             sh_quote(path("limits.json")) + " -o " + sh_quote(path("e.glb")));
  EXPECT_EQ(limits.code, 2);
  EXPECT_NE(limits.err.find("limits.json:/leftLowerLeg/range"), std::string::npos) << limits.err;
  EXPECT_EQ(kinema("ragdoll " + sh_quote(godette) + " --hit 0.1,head,0:0:-80 --limits " +
                   sh_quote(path("none.json")) + " -o " + sh_quote(path("e.glb")))
                .code,
            2);
  EXPECT_EQ(kinema("ragdoll " + sh_quote(godette) +
                   " --hit 0.1,head,0:0:-80 --get-up cartwheel -o " + sh_quote(path("e.glb")))
                .code,
            1);
  EXPECT_FALSE(fs::exists(path("e.glb")));
}

TEST_F(SimCli, UsageErrorsExitOne) {
  kinema::test::write_all(path("s.json"), kScene);
  EXPECT_EQ(kinema("sim " + sh_quote(path("s.json")) + " -o " + sh_quote(path("s.json"))).code, 1);
  EXPECT_EQ(kinema("sim " + sh_quote(path("s.json")) + " -o " + sh_quote(path("s.obj"))).code, 1);
  EXPECT_FALSE(fs::exists(path("s.obj")));
  EXPECT_EQ(kinema("sim " + sh_quote(path("s.json"))).code, 1);
}

}  // namespace

TEST_F(SimCli, SpringbonesBakesAnAvatarsSecondaryMotion) {
  const std::string avatar = kinema::test_paths::data_dir() + "/vrm/godette_walk_springs_vrm0.glb";
  const auto r = kinema("sim springbones --json " + sh_quote(avatar) + " --fps 30 -o " +
                        sh_quote(path("baked.glb")));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto summary = nlohmann::json::parse(r.out);
  EXPECT_EQ(summary.at("clip"), "walk");
  EXPECT_EQ(summary.at("joints"), 16);
  EXPECT_EQ(summary.at("frames"), 87);  // 2.85 s at 30 fps, the last frame at the clip's end
  EXPECT_TRUE(fs::exists(path("baked.glb")));
  const auto text = kinema("sim springbones " + sh_quote(avatar) + " --seconds 0.5 -o " +
                           sh_quote(path("half.gltf")));
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("8 springs, 16 joints, 4 colliders; 31 frames at 60 fps"),
            std::string::npos)
      << text.out;
}

TEST_F(SimCli, SpringbonesOnABadOrSpringlessFileWritesNothing) {
  kinema::test::write_all(path("broken.glb"), "glTF\x02\0\0\0");
  const auto bad = kinema("sim springbones " + sh_quote(path("broken.glb")) + " -o " +
                          sh_quote(path("out.glb")));
  EXPECT_EQ(bad.code, 2) << bad.err;
  EXPECT_NE(bad.err.find("broken.glb"), std::string::npos) << bad.err;
  const std::string robot = kinema::test_paths::data_dir() + "/vrm/debug_robot.vrm";
  const auto none =
      kinema("sim springbones " + sh_quote(robot) + " -o " + sh_quote(path("out.glb")));
  EXPECT_EQ(none.code, 1);
  EXPECT_NE(none.err.find("has no spring bones"), std::string::npos) << none.err;
  const auto usage = kinema("sim");
  EXPECT_EQ(usage.code, 1);
  EXPECT_FALSE(fs::exists(path("out.glb")));
}

TEST_F(SimCli, ParticlesPrintTheirCountsAndWriteAPointCache) {
  kinema::test::write_all(path("p.json"), R"({"duration": 1, "fps": 10,
    "particles": {"emitters": [{"rate": 100, "velocity": [0, 2, 0], "lifetime": 0.5}]}})");
  const auto r = kinema("sim " + sh_quote(path("p.json")) + " -o " + sh_quote(path("p.pc2")));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("particles: 100 emitted, at most 50 alive"), std::string::npos) << r.out;
  EXPECT_EQ(kinema::read_pc2(path("p.pc2")).samples(), 11);
  EXPECT_TRUE(fs::exists(path("p.obj")));
  const auto glb = kinema("sim " + sh_quote(path("p.json")) + " -o " + sh_quote(path("p.glb")));
  EXPECT_EQ(glb.code, 1);
  EXPECT_NE(glb.err.find("point cache"), std::string::npos) << glb.err;
}

TEST_F(SimCli, SoftBodiesAndHairPrintTheirFiguresAndWriteTheirCaches) {
  kinema::test::write_all(path("b.json"), R"({"duration": 1, "fps": 10,
    "colliders": [{"shape": "plane"}],
    "soft_bodies": [{"name": "jelly", "box": {"size": [0.2, 0.2, 0.2], "cells": [2, 2, 2],
                     "corner": [0, 0.2, 0]}}],
    "hair": {"roots": [[0, 1, 0], [0.1, 1, 0]], "direction": [1, 0, 0], "segments": 4,
             "children": 2}})");
  const auto r = kinema("sim " + sh_quote(path("b.json")) + " -o " + sh_quote(path("b.pc2")));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("jelly (soft body): 27 vertices, 40 tetrahedra, 60 steps"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("hair: 2 guides, 4 children, 60 steps"), std::string::npos) << r.out;
  EXPECT_EQ(kinema::read_pc2(path("b.pc2")).points, 26);  // the surface: all but the middle
  EXPECT_EQ(kinema::read_pc2(path("b_hair.pc2")).points, 6 * 5);
  EXPECT_TRUE(fs::exists(path("b.obj")));
  EXPECT_TRUE(fs::exists(path("b_hair.obj")));
  const auto j =
      kinema("sim --json " + sh_quote(path("b.json")) + " -o " + sh_quote(path("c.pc2")));
  ASSERT_EQ(j.code, 0) << j.err;
  const auto summary = nlohmann::json::parse(j.out);
  const auto& jelly = summary.at("soft_bodies").at(0);
  EXPECT_EQ(jelly.at("steps"), 60);
  EXPECT_GT(jelly.at("collider_contacts").get<long>(), 0);
  EXPECT_LT(std::abs(jelly.at("volume_error").get<double>()), 0.05);
  EXPECT_EQ(summary.at("hair").at("guides"), 2);
  EXPECT_LT(summary.at("hair").at("worst_stretch").get<double>(), 1e-6);
}

TEST_F(SimCli, ABadSoftBodyOrHairExitsTwoAtItsPointerAndWritesNothing) {
  kinema::test::write_all(path("bad.json"), R"({"soft_bodies": [{"box": {"size": [1, 1, 0]}}]})");
  const auto r = kinema("sim " + sh_quote(path("bad.json")) + " -o " + sh_quote(path("b.pc2")));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("/soft_bodies/0/box/size: must be positive"), std::string::npos) << r.err;
  kinema::test::write_all(path("hair.json"),
                          R"({"hair": {"roots": [[0, 1, 0]], "segments": 1.5}})");
  const auto h = kinema("sim " + sh_quote(path("hair.json")) + " -o " + sh_quote(path("b.pc2")));
  EXPECT_EQ(h.code, 2);
  EXPECT_NE(h.err.find("/hair/segments: must be a whole number"), std::string::npos) << h.err;
  EXPECT_FALSE(fs::exists(path("b.pc2")));
  EXPECT_FALSE(fs::exists(path("b.obj")));
  EXPECT_FALSE(fs::exists(path("b_hair.pc2")));
}
