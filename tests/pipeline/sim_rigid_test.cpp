// Rigid bodies in `kinema sim` scenes: parsed with errors at JSON pointers, run on the scene's
// clock, written as a glTF whose nodes are keyed at every frame (read back here), the scene's
// colliders acting as static bodies; the bouncing ball's 0.64 m and a motor-driven door.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <numbers>
#include <string>

#include "kinema/clip/clip.h"
#include "kinema/core/error.h"
#include "kinema/core/file.h"
#include "kinema/io/asset_file.h"
#include "kinema/io/point_cache.h"
#include "kinema/pipeline/sim.h"

namespace kinema::pipeline {
namespace {

namespace fs = std::filesystem;

void refuses(const std::string& json, const std::string& place, const std::string& says) {
  try {
    parse_sim_scene(json, "scene.json");
    ADD_FAILURE() << "accepted; expected " << place << ": " << says;
  } catch (const Error& e) {
    EXPECT_EQ(e.place(), place) << e.what();
    EXPECT_NE(e.reason().find(says), std::string::npos) << e.what();
  }
}

class SimRigid : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kinema_sim_rigid_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  SimResult run(const std::string& scene, const std::string& out) {
    write_file_atomically(path("scene.json"), scene);
    SimRequest request;
    request.scene = path("scene.json");
    request.out = path(out);
    return run_sim_file(request);
  }
  fs::path dir_;
};

// The translation of body `name` at every key of the written clip.
std::vector<Vec3> track_of(const Asset& asset, const std::string& name) {
  const int joint = asset.skeleton.find(name);
  EXPECT_GE(joint, 0) << name;
  std::vector<Vec3> out;
  if (joint < 0) return out;
  const JointTrack& t = asset.clips.at(0).tracks.at(size_t(joint));
  for (const auto& key : t.translation.values) out.push_back(key);
  return out;
}

TEST(SimRigidScene, ParsesBodiesArraysJointsAndTheCollidersAsStaticBodies) {
  const SimScene s = parse_sim_scene(R"({
    "colliders": [{"shape": "plane"}],
    "rigid_bodies": [
      {"name": "crate", "shape": "box", "half_extents": [0.5, 0.5, 0.5], "position": [0, 0.5, 0],
       "array": {"count": [3, 2, 1], "step": [1, 1, 0]}, "mass": 20},
      {"name": "pole", "shape": "capsule", "radius": 0.1, "half_height": 1, "static": true}],
    "joints": [{"type": "hinge", "a": "world", "b": "crate_5", "anchor": [2, 2, 0], "axis": [0, 0, 1],
                "limits_degrees": [-30, 30]}],
    "rigid_solver": {"substeps": 2, "iterations": 6}
  })",
                                     "scene.json");
  ASSERT_EQ(s.rigid_bodies.size(), 3u * 2u + 1u + 1u + 1u);  // crates, pole, plane, world anchor
  EXPECT_EQ(s.rigid_bodies[5].name, "crate_5");
  EXPECT_EQ(s.rigid_bodies[5].position, (Vec3{2, 1.5, 0}));
  EXPECT_NEAR(s.rigid_bodies[0].mass.mass, 20, 1e-12);
  EXPECT_TRUE(s.rigid_bodies[6].is_static);
  EXPECT_FALSE(s.rigid_bodies[7].drawn);  // the plane
  ASSERT_EQ(s.joints.size(), 1u);
  EXPECT_EQ(s.joints[0].desc.b, 5u);
  EXPECT_NEAR(s.joints[0].desc.upper, 30 * std::numbers::pi / 180, 1e-12);
  EXPECT_EQ(s.rigid_solver.substeps, 2);
  EXPECT_EQ(s.rigid_solver.velocity_iterations, 6);
  EXPECT_EQ(s.rigid_solver.gravity, (Vec3{0, -9.8, 0}));
}

TEST(SimRigidScene, BadBodiesAndJointsAreRefusedAtTheirPointers) {
  const std::string box = R"("shape": "box", "half_extents": [1, 1, 1])";
  refuses(R"({"rigid_bodies": [{"name": "a", )" + box + R"(, "colour": 1}]})",
          "/rigid_bodies/0/colour", "unknown key");
  refuses(R"({"rigid_bodies": [{"shape": "cone"}]})", "/rigid_bodies/0/shape",
          "unknown rigid shape");
  refuses(R"({"rigid_bodies": [{"shape": "sphere"}]})", "/rigid_bodies/0", "needs \"radius\"");
  refuses(R"({"rigid_bodies": [{)" + box + R"(, "mass": 0}]})", "/rigid_bodies/0/mass",
          "must be >");
  refuses(R"({"rigid_bodies": [{"shape": "box", "half_extents": [1, -1, 1]}]})", "/rigid_bodies/0",
          "half extent y must be > 0");
  refuses(R"({"rigid_bodies": [{"shape": "mesh", "mesh": "nowhere.obj"}]})", "/rigid_bodies/0/mesh",
          "cannot read the mesh");
  refuses(
      R"({"rigid_bodies": [{"shape": "convex_hull", "points": [[0,0,0],[1,0,0],[0,1,0],[1,1,0]]}]})",
      "/rigid_bodies/0", "all points lie in one plane");
  refuses(R"({"rigid_bodies": [{"name": "a", )" + box + R"(}, {"name": "a", )" + box + R"(}]})",
          "/rigid_bodies/1/name", "already named \"a\"");
  refuses(R"({"rigid_bodies": [{"name": "a", )" + box + R"(}],
             "joints": [{"b": "ghost", "anchor": [0, 0, 0]}]})",
          "/joints/0/b", "no rigid body is named \"ghost\"");
  refuses(R"({"rigid_bodies": [{"name": "a", )" + box + R"(}],
             "joints": [{"type": "hinge", "b": "a", "anchor": [0, 0, 0], "axis": [0, 0, 0]}]})",
          "/joints/0", "axis is zero");
  refuses(R"({"rigid_bodies": [{"name": "a", )" + box + R"(}],
             "joints": [{"type": "spring", "b": "a", "anchor": [0, 0, 0]}]})",
          "/joints/0/type", "unknown joint");
  refuses(
      R"({"cloth": [{"grid": {"columns": 2, "rows": 2, "width": 1, "height": 1}}], "joints": []})",
      "/joints", "need \"rigid_bodies\"");
}

TEST_F(SimRigid, OpenMeshCannotMoveButCanBeTheGround) {
  write_file_atomically(path("tri.obj"), "v -5 0 -5\nv 5 0 -5\nv 0 0 5\nf 1 3 2\n");
  try {
    parse_sim_scene(R"({"rigid_bodies": [{"shape": "mesh", "mesh": "tri.obj"}]})", path("s.json"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.place(), "/rigid_bodies/0/shape");
    EXPECT_NE(e.reason().find("can only be static"), std::string::npos) << e.what();
  }
  write_file_atomically(path("tri.obj"), "v -5 0 -5\nv 5 0 -5\nv 0 0 5\nf 1 3 2\n");
  const SimResult r = run(R"({"duration": 1, "fps": 10,
    "rigid_bodies": [{"shape": "mesh", "mesh": "tri.obj", "static": true},
                     {"name": "box", "shape": "box", "half_extents": [0.2, 0.2, 0.2], "position": [0, 1, 0]}]})",
                          "out.glb");
  const Asset asset = load_asset(path("out.glb"));
  EXPECT_NEAR(track_of(asset, "box").back().y, 0.2, 0.01);
  EXPECT_EQ(r.rigid->bodies, 2u);
}

TEST_F(SimRigid, BoxFallsOntoTheScenesPlaneAndTheGltfKeysEveryFrame) {
  const SimResult r = run(R"({"duration": 2, "fps": 24, "rate": 120,
    "colliders": [{"shape": "plane", "point": [0, 0, 0], "normal": [0, 1, 0]}],
    "rigid_bodies": [{"name": "crate", "shape": "box", "half_extents": [0.3, 0.2, 0.4],
                      "position": [0, 1.5, 0], "rotation": [0.1, 0.2, 0, 1]}]})",
                          "crate.glb");
  ASSERT_TRUE(r.rigid);
  EXPECT_EQ(r.rigid->path, path("crate.glb"));
  EXPECT_EQ(r.rigid->steps, 240);
  EXPECT_EQ(r.frames, 49);
  const Asset asset = load_asset(path("crate.glb"));
  ASSERT_EQ(asset.clips.size(), 1u);
  EXPECT_EQ(asset.clips[0].name, "simulation");
  EXPECT_EQ(asset.meshes.size(), 1u);  // the plane is not drawn
  const std::vector<Vec3> keys = track_of(asset, "crate");
  ASSERT_EQ(keys.size(), 49u);
  EXPECT_NEAR(keys[0].y, 1.5, 1e-6);
  EXPECT_LT(keys[12].y, 1.5 - 0.5 * 9.8 * 0.25 + 0.05);  // falling
  EXPECT_NEAR(keys.back().y, 0.2, 0.01);                 // resting on its largest face
}

TEST_F(SimRigid, BallDroppedFromOneMetreWithRestitutionPointEightRisesToPointSixFour) {
  const SimResult r = run(R"({"duration": 1.3, "fps": 1000, "rate": 2000,
    "colliders": [{"shape": "plane"}],
    "rigid_bodies": [{"name": "ball", "shape": "sphere", "radius": 0.05,
                      "position": [0, 1.05, 0], "restitution": 0.8}],
    "rigid_solver": {"sleeping": false}})",
                          "ball.glb");
  const std::vector<Vec3> keys = track_of(load_asset(path("ball.glb")), "ball");
  // The apex after the first bounce (after the lowest point).
  size_t lowest = 0;
  for (size_t k = 0; k < keys.size(); ++k)
    if (keys[k].y < keys[lowest].y) lowest = k;
  double apex = 0;
  for (size_t k = lowest; k < keys.size(); ++k) apex = std::max(apex, keys[k].y - 0.05);
  EXPECT_NEAR(apex, 0.64, 0.01);
  EXPECT_TRUE(r.rigid->finite);
}

TEST_F(SimRigid, MotorSwingsADoorOnItsHingeUpToTheLimit) {
  const SimResult r = run(R"({"duration": 3, "fps": 30,
    "gravity": [0, 0, 0],
    "rigid_bodies": [{"name": "door", "shape": "box", "half_extents": [0.5, 1, 0.05],
                      "position": [0.5, 1, 0]}],
    "joints": [{"type": "hinge", "b": "door", "anchor": [0, 1, 0], "axis": [0, 1, 0],
                "limits_degrees": [-10, 80], "motor": {"speed_degrees": 90, "max_torque": 50}}]})",
                          "door.glb");
  const Asset asset = load_asset(path("door.glb"));
  const int joint = asset.skeleton.find("door");
  const Quat q = asset.clips[0].tracks[size_t(joint)].rotation.values.back();
  const Vec3 x = rotate(q, Vec3{1, 0, 0});
  EXPECT_NEAR(std::atan2(-x.z, x.x) * 180 / std::numbers::pi, 80, 1.0);  // stopped at 80°
  EXPECT_LT(r.rigid->worst_joint_error, 1e-4);
  EXPECT_EQ(r.rigid->joints, 1u);
}

TEST_F(SimRigid, RigidBodiesBesideAClothGoToTheirOwnFile) {
  const SimResult r = run(R"({"duration": 0.5, "fps": 10,
    "cloth": [{"name": "sheet", "grid": {"columns": 4, "rows": 4, "width": 1, "height": 1,
               "corner": [0, 2, 0]}}],
    "rigid_bodies": [{"name": "ball", "shape": "sphere", "radius": 0.1, "position": [0, 1, 0]}]})",
                          "both.glb");
  EXPECT_EQ(r.rigid->path, path("both_rigid.glb"));
  EXPECT_TRUE(fs::exists(path("both.glb")));
  EXPECT_TRUE(fs::exists(path("both_rigid.glb")));
}

}  // namespace
}  // namespace kinema::pipeline

namespace kinema::pipeline {
namespace {

TEST_F(SimRigid, FracturedPaneShattersWhenTheBallHitsIt) {
  const SimScene s = parse_sim_scene(R"({"colliders": [{"shape": "plane"}],
    "rigid_bodies": [{"name": "pane", "shape": "box", "half_extents": [0.02, 0.3, 0.3], "position": [0, 0.3, 0],
                      "density": 2500, "fracture": {"pieces": 10, "impact": [0, 0.05, 0], "strength": 3}}]})",
                                     "scene.json");
  ASSERT_EQ(s.rigid_bodies.size(), 10u + 1u);  // the pieces and the ground
  EXPECT_EQ(s.rigid_bodies[3].name, "pane_3");
  double mass = 0;
  for (size_t k = 0; k < 10; ++k) mass += s.rigid_bodies[k].mass.mass;
  EXPECT_NEAR(mass, 2500 * 0.04 * 0.6 * 0.6, 1e-9);
  EXPECT_GE(s.joints.size(), 9u);  // glued into one
  for (const SimSceneJoint& j : s.joints) EXPECT_EQ(j.desc.break_impulse, 3);
  const SimResult r = run(R"({"duration": 1.5, "fps": 30, "colliders": [{"shape": "plane"}],
    "rigid_bodies": [
      {"name": "pane", "shape": "box", "half_extents": [0.02, 0.3, 0.3], "position": [0, 0.3, 0],
       "density": 2500, "fracture": {"pieces": 10, "impact": [0, 0.05, 0], "strength": 3}},
      {"name": "ball", "shape": "sphere", "radius": 0.08, "position": [-0.6, 0.35, 0],
       "velocity": [8, 0, 0], "mass": 5}]})",
                          "pane.glb");
  EXPECT_GT(r.rigid->joints_broken, 0u);
  EXPECT_LT(r.rigid->joints_broken, r.rigid->joints + 1);
  refuses(R"({"rigid_bodies": [{"shape": "sphere", "radius": 1, "fracture": {}}]})",
          "/rigid_bodies/0/fracture", "cannot be fractured");
  refuses(
      R"({"rigid_bodies": [{"shape": "box", "half_extents": [1, 1, 1], "static": true, "fracture": {}}]})",
      "/rigid_bodies/0/fracture", "a static body cannot break");
}

TEST_F(SimRigid, BrokenGlueThrowsDebrisFromWhereItBroke) {
  auto scene = [](const std::string& debris) {
    return R"({"duration": 1.0, "fps": 30, "colliders": [{"shape": "plane"}],
      "rigid_bodies": [
        {"name": "pane", "shape": "box", "half_extents": [0.02, 0.3, 0.3], "position": [0, 0.3, 0],
         "density": 2500, "fracture": {"pieces": 10, "impact": [0, 0.05, 0], "strength": 3)" +
           debris + R"(}},
        {"name": "ball", "shape": "sphere", "radius": 0.08, "position": [-0.6, 0.35, 0],
         "velocity": [8, 0, 0], "mass": 5}]})";
  };
  const SimResult r =
      run(scene(R"(, "debris": {"count": 16, "speed": 1.5, "lifetime": 0.5})"), "pane.glb");
  ASSERT_TRUE(r.rigid);
  EXPECT_GT(r.rigid->debris_bursts, 0u);
  EXPECT_EQ(r.rigid->debris_bursts, r.rigid->joints_broken);  // every broken weld threw some
  EXPECT_EQ(r.particles_emitted, 16 * r.rigid->debris_bursts);
  // The scene had no particles of its own: the debris got a cache beside the glTF.
  ASSERT_FALSE(r.particle_cache_path.empty());
  EXPECT_TRUE(fs::exists(r.particle_cache_path));
  EXPECT_TRUE(fs::exists(r.rigid->path));
  // The same scene without debris throws none and writes no cache.
  const SimResult quiet = run(scene(""), "quiet.glb");
  EXPECT_EQ(quiet.rigid->debris_bursts, 0u);
  EXPECT_TRUE(quiet.particle_cache_path.empty());
  refuses(R"({"rigid_bodies": [{"shape": "box", "half_extents": [1, 1, 1],
                                "fracture": {"debris": {"count": 0}}}]})",
          "/rigid_bodies/0/fracture/debris/count", "between 1 and 10000");
}

TEST_F(SimRigid, ParticlesAndClothCannotEnterTheRigidBodies) {
  // Sparks rain onto a box standing on the ground and a cloth falls onto it: the box keeps both
  // out (one way: it does not feel them).
  const SimResult r = run(R"({"duration": 1.0, "fps": 30, "rate": 120,
    "colliders": [{"shape": "plane"}],
    "particles": {"emitters": [{"shape": "box", "position": [0, 1.2, 0], "half_extents": [0.2, 0, 0.2],
                                "rate": 300, "lifetime": 2, "seed": 4}],
                  "forces": [{"kind": "gravity"}]},
    "cloth": [{"name": "sheet", "grid": {"columns": 6, "rows": 6, "width": 0.6, "height": 0.6,
               "corner": [-0.3, 0.8, -0.3], "u": [1, 0, 0], "v": [0, 0, 1]}}],
    "rigid_bodies": [{"name": "block", "shape": "box", "half_extents": [0.25, 0.25, 0.25],
                      "position": [0, 0.25, 0], "mass": 50}]})",
                          "rain.glb");
  ASSERT_EQ(r.cloths.size(), 1u);
  EXPECT_GT(r.cloths[0].collider_contacts, 0u);
  const PointCache particles = read_pc2(r.particle_cache_path);
  ASSERT_GT(particles.points, 0);
  int inside = 0, resting_on_top = 0;
  const int last = particles.samples() - 1;
  for (int k = 0; k < particles.points; ++k) {
    const Vec3f p = particles.at(last, k);
    inside += std::abs(p.x) < 0.245f && std::abs(p.z) < 0.245f && p.y > 0.005f && p.y < 0.495f;
    resting_on_top += std::abs(p.x) < 0.2f && std::abs(p.z) < 0.2f && std::abs(p.y - 0.5f) < 0.05f;
  }
  EXPECT_EQ(inside, 0);
  EXPECT_GT(resting_on_top, 10);  // they landed on it rather than falling through to the ground
}

}  // namespace
}  // namespace kinema::pipeline
