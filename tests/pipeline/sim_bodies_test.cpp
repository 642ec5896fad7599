// Soft bodies and hair in `kinema sim` scenes: parsed with errors at JSON pointers, run on the
// scene's clock with colliders and a character, written as point caches (and glTF), the same
// bytes every run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <string>

#include "kinema/clip/clip.h"
#include "kinema/core/error.h"
#include "kinema/core/file.h"
#include "kinema/io/asset_file.h"
#include "kinema/io/point_cache.h"
#include "kinema/pipeline/sim.h"
#include "kinema/skeleton/skeleton.h"
#include "test_paths.h"

namespace kinema::pipeline {
namespace {

namespace fs = std::filesystem;

const std::string kWalkingGodette = test_paths::data_dir() + "/vrm/godette_walk_springs_vrm0.glb";
const std::string kGodette = test_paths::data_dir() + "/vrm/Godette_vrm_v4.vrm";

/// Expects parse_sim_scene to refuse `json`, at `place`, saying `says`.
void refuses(const std::string& json, const std::string& place, const std::string& says) {
  try {
    parse_sim_scene(json, "scene.json");
    ADD_FAILURE() << "accepted; expected " << place << ": " << says;
  } catch (const Error& e) {
    EXPECT_EQ(e.file(), "scene.json");
    EXPECT_EQ(e.place(), place) << e.what();
    EXPECT_NE(e.reason().find(says), std::string::npos) << e.what();
  }
}

class SimBodies : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kinema_sim_bodies_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  SimResult run(const std::string& name, const std::string& scene, const std::string& out) {
    write_file_atomically(path(name), scene);
    SimRequest request;
    request.scene = path(name);
    request.out = path(out);
    return run_sim_file(request);
  }
  fs::path dir_;
};

/// The volume a closed mesh's triangles enclose at cache frame f (divergence theorem).
double enclosed_volume(const std::string& obj, const PointCache& cache, int f) {
  std::istringstream in(read_file(obj));
  std::string tag;
  double six = 0;
  for (std::string line; std::getline(in, line);) {
    std::istringstream l(line);
    l >> tag;
    if (tag != "f") continue;
    int a, b, c;
    l >> a >> b >> c;
    const Vec3 p = Vec3(cache.at(f, a - 1)), q = Vec3(cache.at(f, b - 1)),
               r = Vec3(cache.at(f, c - 1));
    six += dot(p, cross(q, r));
  }
  return six / 6;
}

const std::string kDrop = R"({"duration": 3, "fps": 30, "rate": 60,
  "colliders": [{"shape": "plane", "point": [0, 0, 0], "normal": [0, 1, 0], "friction": 0.5}],
  "soft_bodies": [{"name": "jelly", "box": {"size": [0.2, 0.2, 0.2], "cells": [3, 3, 3],
                   "corner": [-0.1, 0.3, -0.1]},
                   "mass": 2, "edge_compliance": 0.01, "volume_compliance": 0}]})";

TEST(SimBodiesScene, ParsesASoftBoxItsMassAndPinRegion) {
  const SimScene s = parse_sim_scene(R"({"soft_bodies": [{"name": "jelly",
      "box": {"size": [0.2, 0.4, 0.2], "cells": [2, 4, 2], "corner": [0, 1, 0]},
      "mass": 4, "edge_compliance": 0.001, "substeps": 5,
      "pin_region": {"min": [-1, 1.39, -1], "max": [1, 2, 1]}}]})",
                                     "scene.json");
  ASSERT_EQ(s.soft_bodies.size(), 1u);
  const SimSceneSoftBody& b = s.soft_bodies[0];
  EXPECT_EQ(b.name, "jelly");
  EXPECT_EQ(b.mesh.positions.size(), 3u * 5u * 3u);
  EXPECT_EQ(b.mesh.tets.size(), 2u * 4u * 2u * 5u);
  EXPECT_NEAR(b.options.density, 4 / 0.016, 1e-6);  // 4 kg in 0.016 m³
  EXPECT_EQ(b.options.substeps, 5);
  EXPECT_EQ(b.options.pinned.size(), 9u);  // the top face
  for (std::uint32_t v : b.options.pinned) EXPECT_NEAR(b.mesh.positions[v].y, 1.4, 1e-12);
  EXPECT_FALSE(s.hair);
}

TEST(SimBodiesScene, RefusesBadSoftBodiesAndHairAtTheirJsonPointer) {
  const std::string box = R"("box": {"size": [1, 1, 1]})";
  refuses(R"({"soft_bodies": {}})", "/soft_bodies", "must be an array");
  refuses(R"({"soft_bodies": [{}]})", "/soft_bodies/0", "either \"box\" or \"tets\"");
  refuses(R"({"soft_bodies": [{)" + box + R"(, "stiffness": 1}]})", "/soft_bodies/0/stiffness",
          "unknown key \"stiffness\"");
  refuses(R"({"soft_bodies": [{"mesh": "bunny.obj"}]})", "/soft_bodies/0/mesh",
          "no tetrahedralizer");
  refuses(R"({"soft_bodies": [{"box": {"size": [1, -1, 1]}}]})", "/soft_bodies/0/box/size",
          "must be positive");
  refuses(R"({"soft_bodies": [{"box": {"size": [1, 1, 1], "cells": [2, 0, 2]}}]})",
          "/soft_bodies/0/box/cells/1", "between 1 and 100");
  refuses(R"({"soft_bodies": [{"box": {"size": [1, 1, "a"]}}]})", "/soft_bodies/0/box/size/2",
          "must be a number");
  refuses(R"({"soft_bodies": [{)" + box + R"(, "density": -5}]})", "/soft_bodies/0/density",
          "must be > 0");
  refuses(R"({"soft_bodies": [{)" + box + R"(, "density": 1, "mass": 1}]})", "/soft_bodies/0",
          "not both");
  refuses(R"({"soft_bodies": [{)" + box + R"(, "edge_compliance": -1}]})",
          "/soft_bodies/0/edge_compliance", "must be ≥ 0");
  refuses(R"({"soft_bodies": [{)" + box + R"(, "volume_compliance": 1e999}]})", "/",
          "number overflow");
  refuses(R"({"soft_bodies": [{)" + box + R"(, "pinned": [0, 125]}]})", "/soft_bodies/0/pinned/1",
          "between 0 and 124");
  refuses(
      R"({"soft_bodies": [{)" + box + R"(, "pin_region": {"min": [5, 5, 5], "max": [6, 6, 6]}}]})",
      "/soft_bodies/0/pin_region", "holds no vertex");
  refuses(R"({"soft_bodies": [{)" + box + R"(, "pinned": [0], "attach_joint": "chest"}]})",
          "/soft_bodies/0/attach_joint", "needs a \"character\"");
  refuses(R"({"soft_bodies": [{"tets": {"positions": [[0,0,0],[1,0,0],[0,1,0],[0,0,1]],
          "tets": [[0, 2, 1, 3]]}}]})",
          "/soft_bodies/0/tets", "inverted");
  refuses(R"({"soft_bodies": [{"tets": {"positions": [[0,0,0],[1,0,0],[0,1,0],[0,0,1]],
          "tets": [[0, 1, 2]]}}]})",
          "/soft_bodies/0/tets/tets/0", "4 vertex indices");
  refuses(R"({"soft_bodies": [{"name": "a", )" + box + R"(}, {"name": "a", )" + box + "}]}",
          "/soft_bodies/1/name", "already named \"a\"");
  refuses(R"({"cloth": [{"name": "a", "grid": {"columns": 2, "rows": 2, "width": 1, "height": 1}}],
          "soft_bodies": [{"name": "a", )" +
              box + "}]}",
          "/soft_bodies/0/name", "already named \"a\"");
  refuses(R"({"soft_bodies": [{"name": "a/b", )" + box + "}]}", "/soft_bodies/0/name",
          "plain, non-empty name");
  const std::string roots = R"("roots": [[0, 1, 0]])";
  refuses(R"({"hair": []})", "/hair", "must be an object");
  refuses(R"({"hair": {}})", "/hair", "either \"roots\" or \"from_skin\"");
  refuses(R"({"hair": {)" + roots + R"(, "lenght": 1}})", "/hair/lenght", "unknown key");
  refuses(R"({"hair": {)" + roots + R"(, "length": -0.1}})", "/hair/length", "must be > 0");
  refuses(R"({"hair": {)" + roots + R"(, "segments": 0}})", "/hair/segments", "between 1 and 256");
  refuses(R"({"hair": {)" + roots + R"(, "bend_stiffness": 2}})", "/hair/bend_stiffness",
          "between 0 and 1");
  refuses(R"({"hair": {"roots": [[0, 1, 0], [1, "x", 0]]}})", "/hair/roots/1/1",
          "must be a number");
  refuses(R"({"hair": {)" + roots + R"(, "direction": [0, 0, 0]}})", "/hair/direction",
          "must not be zero");
  refuses(R"({"hair": {)" + roots + R"(, "directions": [[0, 1, 0], [1, 0, 0]]}})",
          "/hair/directions", "one per root");
  refuses(R"({"hair": {)" + roots + R"(, "joint": "head"}})", "/hair/joint",
          "needs a \"character\"");
  refuses(R"({"hair": {"from_skin": true}})", "/hair/from_skin", "needs the \"joint\"");
  refuses(R"({"hair": {)" + roots + R"(, "children": -1}})", "/hair/children",
          "between 0 and 1000");
  refuses(R"({"hair": {)" + roots + R"(, "thickness": "thin"}})", "/hair/thickness",
          "must be a number");
  refuses(R"({"character": {"file": ")" + kWalkingGodette + R"(", "colliders": false},
          "hair": {)" +
              roots + R"(, "joint": "tail"}})",
          "/hair/joint", "has no joint \"tail\"");
  refuses(R"({"character": {"file": ")" + kWalkingGodette + R"(", "colliders": false},
          "soft_bodies": [{)" +
              box + R"(, "pinned": [0], "attach_joint": "tail"}]})",
          "/soft_bodies/0/attach_joint", "has no joint \"tail\"");
  refuses(R"({"character": {"file": ")" + kWalkingGodette + R"(", "colliders": false},
          "soft_bodies": [{)" +
              box + R"(, "attach_joint": "head_Armature"}]})",
          "/soft_bodies/0/attach_joint", "goes with \"pinned\"");
  // The walking fixture has no skin to grow hair from.
  refuses(R"({"character": {"file": ")" + kWalkingGodette + R"(", "colliders": false},
          "hair": {"joint": "head_Armature", "from_skin": true}})",
          "/hair/joint", "no skinned vertex");
}

TEST_F(SimBodies, ASoftBoxDroppedOnAPlaneComesToRestKeepingItsVolume) {
  const SimResult r = run("drop.json", kDrop, "drop.pc2");
  ASSERT_EQ(r.soft_bodies.size(), 1u);
  const SimSoftBodyResult& b = r.soft_bodies[0];
  EXPECT_EQ(b.cache_path, path("drop.pc2"));
  EXPECT_EQ(b.mesh_path, path("drop.obj"));
  EXPECT_EQ(b.vertices, 64u);
  EXPECT_EQ(b.tets, 135u);
  EXPECT_EQ(b.surface_vertices, 56u);        // all but the 2 × 2 × 2 inside
  EXPECT_EQ(b.surface_triangles, 6u * 18u);  // 9 squares a face, 2 triangles each
  EXPECT_EQ(b.steps, 180);
  EXPECT_GT(b.collider_contacts, 0u);
  const PointCache cache = read_pc2(b.cache_path);
  ASSERT_EQ(cache.points, 56);
  ASSERT_EQ(cache.samples(), r.frames);
  const double rest = enclosed_volume(b.mesh_path, cache, 0);
  EXPECT_NEAR(rest, 0.008, 1e-9);
  // It fell 30 cm, landed and lies still on the plane with its volume kept within 1 %.
  const int last = r.frames - 1;
  double lowest = 1, moved = 0;
  for (int v = 0; v < cache.points; ++v) {
    lowest = std::min(lowest, double(cache.at(last, v).y));
    moved = std::max(moved, double(length(cache.at(last, v) - cache.at(last - 1, v))));
  }
  EXPECT_NEAR(lowest, 0, 1e-4);
  EXPECT_LT(moved, 1e-3);  // under 3 cm/s
  EXPECT_NEAR(enclosed_volume(b.mesh_path, cache, last) / rest, 1, 0.01);
  EXPECT_LT(std::abs(b.volume_error), 0.01);
  EXPECT_LT(b.worst_volume_error, 0.03);
}

TEST_F(SimBodies, APinnedSoftBodyHangsFromItsPins) {
  const SimResult r = run("hang.json", R"({"duration": 2, "fps": 30, "rate": 60,
    "soft_bodies": [{"name": "bag", "box": {"size": [0.1, 0.3, 0.1], "cells": [2, 6, 2],
      "corner": [0, 1, 0]}, "density": 500, "edge_compliance": 0.001,
      "pin_region": {"min": [-1, 1.299, -1], "max": [1, 1.301, 1]}}]})",
                          "hang.pc2");
  const PointCache cache = read_pc2(r.soft_bodies[0].cache_path);
  const SimScene scene = parse_sim_scene(read_file(path("hang.json")), path("hang.json"));
  // Surface vertices are the tet vertices in order, less the inside ones: find them by rest.
  const int last = r.frames - 1;
  double top_moved = 0, bottom_sag = 0, highest = 0;
  for (int v = 0; v < cache.points; ++v) {
    const Vec3 rest = Vec3(cache.at(0, v)), now = Vec3(cache.at(last, v));
    highest = std::max(highest, now.y);
    if (rest.y > 1.299) top_moved = std::max(top_moved, length(now - rest));
    if (rest.y < 1.001) bottom_sag = std::max(bottom_sag, rest.y - now.y);
  }
  EXPECT_EQ(scene.soft_bodies[0].options.pinned.size(), 9u);
  EXPECT_LT(top_moved, 1e-6);   // pinned: where they were
  EXPECT_GT(bottom_sag, 1e-4);  // the bag's weight stretches it…
  EXPECT_LT(bottom_sag, 0.03);  // …a little
  EXPECT_LT(highest, 1.3 + 1e-6);
  EXPECT_LT(std::abs(r.soft_bodies[0].volume_error), 0.01);
  for (int v = 0; v < cache.points; ++v)  // and it has stopped swinging
    EXPECT_LT(length(cache.at(last, v) - cache.at(last - 1, v)), 2e-3);
}

/// Walking Godette with four strands on her head joint, 5 children each.
std::string hair_on_the_walk(const std::string& extra = "") {
  const Asset godette = load_asset(kWalkingGodette);
  const Vec3 head =
      rest_model_matrices(godette.skeleton)[size_t(godette.skeleton.find("head_Armature"))]
          .translation_part();
  std::ostringstream roots;
  roots.precision(17);
  roots << "[";
  for (int k = 0; k < 4; ++k)
    roots << (k ? ", " : "") << "[" << head.x + 0.03 * (k - 1.5) << ", " << head.y + 0.25 << ", "
          << head.z - 0.05 << "]";
  roots << "]";
  return R"({"duration": 1, "fps": 30, "rate": 60,
    "character": {"file": ")" +
         kWalkingGodette + R"(", "clip": "walk", "colliders": false},
    "hair": {"joint": "head_Armature", "roots": )" +
         roots.str() + R"(, "direction": [0, 0, -1], "length": 0.3, "segments": 6,
             "bend_stiffness": 0.2, "children": 5, "child_spread": 0.01)" +
         extra + "}}";
}

TEST_F(SimBodies, HairOnAWalkingHeadFollowsItAndKeepsItsLengths) {
  const SimResult r = run("walk.json", hair_on_the_walk(), "walk.pc2");
  ASSERT_TRUE(r.hair);
  EXPECT_EQ(r.hair->cache_path, path("walk.pc2"));  // hair is all the scene writes
  EXPECT_EQ(r.hair->guides, 4u);
  EXPECT_EQ(r.hair->children, 20u);
  EXPECT_EQ(r.hair->points, 4u * 7u + 20u * 7u);
  EXPECT_EQ(r.hair->steps, 60);
  EXPECT_LT(r.hair->worst_stretch, 1e-6);
  const PointCache cache = read_pc2(r.hair->cache_path);
  ASSERT_EQ(cache.samples(), r.frames);
  const Asset godette = load_asset(kWalkingGodette);
  const int head = godette.skeleton.find("head_Armature");
  Mat4 rest_inverse;
  ASSERT_TRUE(inverse(rest_model_matrices(godette.skeleton)[size_t(head)], rest_inverse));
  const SimScene scene = parse_sim_scene(read_file(path("walk.json")), path("walk.json"));
  double worst_root = 0, worst_length = 0, moved = 0;
  for (int f = 0; f < r.frames; ++f) {
    // Frames show the state before the clock's last step (60 Hz steps, 30 fps frames).
    const std::vector<Mat4> model = sample_model_pose(godette.clips[0], godette.skeleton,
                                                      std::max(0.0, double(f) / 30 - 1.0 / 60));
    for (size_t g = 0; g < 4; ++g) {
      const Vec3 root =
          (model[size_t(head)] * rest_inverse).transform_point(scene.hair->guides[g][0]);
      worst_root = std::max(worst_root, length(Vec3(cache.at(f, int(g * 7))) - root));
      moved = std::max(moved, length(root - scene.hair->guides[g][0]));
      for (int s = 0; s < 6; ++s)
        worst_length = std::max(
            worst_length,
            std::abs(length(cache.at(f, int(g * 7) + s + 1) - cache.at(f, int(g * 7) + s)) - 0.05));
    }
  }
  EXPECT_LT(worst_root, 1e-4);
  EXPECT_GT(moved, 0.5);  // she walks
  EXPECT_LT(worst_length, 1e-5);
  // The rest strands as OBJ polylines, guides then children, in cache order.
  const std::string obj = read_file(path("walk.obj"));
  EXPECT_NE(obj.find("\nl 1 2\nl 2 3\nl 3 4\nl 4 5\nl 5 6\nl 6 7\nl 8 9\n"), std::string::npos);
  EXPECT_NE(obj.find("\nl 167 168\n"), std::string::npos);
  size_t edges = 0;
  for (size_t at = obj.find("\nl "); at != std::string::npos; at = obj.find("\nl ", at + 1))
    ++edges;
  EXPECT_EQ(edges, 24u * 6u);  // a line per segment
}

TEST_F(SimBodies, HairFallingOnASphereNeverEndsInsideIt) {
  const SimResult r = run("sphere.json", R"({"duration": 2, "fps": 30, "rate": 60,
    "colliders": [{"shape": "sphere", "centre": [0, 0.7, 0], "radius": 0.2}],
    "hair": {"roots": [[-0.05, 1, 0], [0, 1, 0], [0.05, 1, 0.02], [0.1, 1, -0.03]],
             "direction": [1, 0, 0], "length": 0.5, "segments": 10, "bend_stiffness": 0,
             "thickness": 0.002}})",
                          "sphere.pc2");
  const PointCache cache = read_pc2(r.hair->cache_path);
  double nearest = 1;
  for (int f = 0; f < r.frames; ++f)
    for (int v = 0; v < cache.points; ++v)
      nearest = std::min(nearest, double(length(Vec3(cache.at(f, v)) - Vec3{0, 0.7, 0})));
  EXPECT_GT(nearest, 0.2 - 1e-6);
  EXPECT_GT(r.hair->collider_contacts, 0u);
  EXPECT_LT(nearest, 0.21);  // they do lie on it
}

TEST_F(SimBodies, TheSameSceneTwiceWritesTheSameBytes) {
  const std::string scene = R"({"duration": 1, "fps": 24, "rate": 100,
    "colliders": [{"shape": "plane"}, {"shape": "sphere", "centre": [0.3, 0.2, 0], "radius": 0.1}],
    "soft_bodies": [{"name": "a", "box": {"size": [0.1, 0.1, 0.1], "cells": [2, 2, 2],
                     "corner": [0.25, 0.5, -0.05]}},
                    {"name": "b", "box": {"size": [0.2, 0.1, 0.1], "corner": [-0.5, 0.2, 0]},
                     "volume_compliance": 1e-6, "pinned": [0]}],
    "hair": {"roots": [[0.3, 0.5, 0], [0.32, 0.5, 0]], "direction": [0, 1, 0], "children": 3}})";
  run("one.json", scene, "one.pc2");
  run("two.json", scene, "two.pc2");
  for (const char* name : {"_a.pc2", "_b.pc2", "_hair.pc2", "_a.obj", "_hair.obj"}) {
    ASSERT_TRUE(fs::exists(path(std::string("one") + name))) << name;
    EXPECT_EQ(read_file(path(std::string("one") + name)),
              read_file(path(std::string("two") + name)))
        << name;
  }
}

TEST_F(SimBodies, GltfHoldsTheSurfaceAsMorphTargetsAndTheHairBesideIt) {
  const std::string scene = R"({"duration": 0.5, "fps": 10, "rate": 60,
    "colliders": [{"shape": "plane"}],
    "soft_bodies": [{"name": "jelly", "box": {"size": [0.2, 0.2, 0.2], "cells": [2, 2, 2],
                     "corner": [0, 0.1, 0]}}],
    "hair": {"roots": [[0, 1, 0]], "length": 0.1, "segments": 2}})";
  const SimResult pc2 = run("j.json", scene, "j.pc2");
  EXPECT_EQ(pc2.soft_bodies[0].cache_path, path("j.pc2"));
  EXPECT_EQ(pc2.hair->cache_path, path("j_hair.pc2"));
  const SimResult glb = run("j.json", scene, "j.glb");
  EXPECT_EQ(glb.soft_bodies[0].cache_path, path("j.glb"));
  EXPECT_EQ(glb.hair->cache_path, path("j_hair.pc2"));
  const PointCache cache = read_pc2(path("j.pc2"));
  const Asset asset = load_asset(path("j.glb"));
  ASSERT_EQ(asset.meshes.size(), 1u);
  const Mesh& mesh = asset.meshes[0];
  EXPECT_EQ(mesh.name, "jelly");
  ASSERT_EQ(int(mesh.positions.size()), cache.points);
  ASSERT_EQ(int(mesh.morph_targets.size()), cache.samples());
  double worst = 0;
  for (int f = 0; f < cache.samples(); ++f)
    for (int v = 0; v < cache.points; ++v)
      worst =
          std::max(worst, double(length(mesh.positions[size_t(v)] +
                                        mesh.morph_targets[size_t(f)].position_deltas[size_t(v)] -
                                        cache.at(f, v))));
  EXPECT_LT(worst, 1e-5);
  // Hair alone as glTF is refused before anything runs.
  write_file_atomically(path("h.json"), R"({"hair": {"roots": [[0, 1, 0]]}})");
  SimRequest request;
  request.scene = path("h.json");
  request.out = path("h.glb");
  EXPECT_THROW(run_sim_file(request), UsageError);
  EXPECT_FALSE(fs::exists(path("h.glb")));
  EXPECT_FALSE(fs::exists(path("h_hair.pc2")));
}

TEST_F(SimBodies, ASoftBodyFollowsAJointByItsPinsAndAFailureWritesNothing) {
  const Asset godette = load_asset(kWalkingGodette);
  const int chest = godette.skeleton.find("chest_Armature");
  const Vec3 c = rest_model_matrices(godette.skeleton)[size_t(chest)].translation_part();
  std::ostringstream scene;
  scene.precision(17);
  scene << R"({"duration": 1, "fps": 30, "rate": 60, "character": {"file": ")" << kWalkingGodette
        << R"(", "clip": "walk", "colliders": false},
    "soft_bodies": [{"name": "pouch", "box": {"size": [0.1, 0.1, 0.1], "cells": [2, 2, 2],
      "corner": [)"
        << c.x - 0.05 << ", " << c.y - 0.1 << ", " << c.z + 0.15 << R"(]},
      "pin_region": {"min": [-10, )"
        << c.y - 1e-9 << R"(, -10], "max": [10, 10, 10]},
      "attach_joint": "chest_Armature"}]})";
  const SimResult r = run("pouch.json", scene.str(), "pouch.pc2");
  const PointCache cache = read_pc2(r.soft_bodies[0].cache_path);
  const SimScene parsed = parse_sim_scene(scene.str(), "pouch.json");
  Mat4 rest_inverse;
  ASSERT_TRUE(inverse(rest_model_matrices(godette.skeleton)[size_t(chest)], rest_inverse));
  // The pinned top face is where the chest carries it (the surface keeps the tet order and
  // every pinned vertex is on it: find them by their rest height).
  double worst = 0;
  int pins = 0;
  for (int f = 0; f < r.frames; ++f) {
    const Mat4 carry = sample_model_pose(godette.clips[0], godette.skeleton,
                                         std::max(0.0, double(f) / 30 - 1.0 / 60))[size_t(chest)] *
                       rest_inverse;
    for (int v = 0, surface = -1; v < int(parsed.soft_bodies[0].mesh.positions.size()); ++v) {
      const Vec3 rest = parsed.soft_bodies[0].mesh.positions[size_t(v)];
      const bool inside = v == 13;  // the middle of 3 × 3 × 3
      if (inside) continue;
      ++surface;
      if (rest.y < c.y - 1e-6) continue;
      if (f == 0) ++pins;
      worst = std::max(worst, length(Vec3(cache.at(f, surface)) - carry.transform_point(rest)));
    }
  }
  EXPECT_EQ(pins, 9);
  EXPECT_LT(worst, 1e-5);
  // A body that blows up stops the run and writes nothing.
  const std::string boom = R"({"duration": 3, "rate": 10, "gravity": [0, -1e308, 0],
    "soft_bodies": [{"name": "boom", "box": {"size": [0.1, 0.1, 0.1]}, "substeps": 1}]})";
  EXPECT_THROW(run("boom.json", boom, "boom.pc2"), Error);
  EXPECT_FALSE(fs::exists(path("boom.pc2")));
  EXPECT_FALSE(fs::exists(path("boom.obj")));
}

TEST_F(SimBodies, HairGrowsFromTheSkinOfGodettesHead) {
  const std::string scene = R"({"duration": 0.2, "fps": 10, "rate": 60,
    "character": {"file": ")" +
                            kGodette +
                            R"(", "collider_joints": ["chest_Armature"]},
    "hair": {"joint": "head_Armature", "from_skin": true, "max_guides": 40, "length": 0.1,
             "segments": 4, "bend_stiffness": 1, "children": 2}})";
  const SimScene s = parse_sim_scene(scene, "scene.json");
  ASSERT_TRUE(s.hair);
  EXPECT_GE(s.hair->guides.size(), 20u);
  EXPECT_LE(s.hair->guides.size(), 40u);
  const Asset godette = load_asset(kGodette);
  const Vec3 head =
      rest_model_matrices(godette.skeleton)[size_t(godette.skeleton.find("head_Armature"))]
          .translation_part();
  for (const auto& strand : s.hair->guides) {
    EXPECT_LT(length(strand[0] - head), 0.6);                   // on the head's skin…
    EXPECT_NEAR(length(strand.back() - strand[0]), 0.1, 1e-9);  // …growing 10 cm along it
  }
  const SimResult r = run("skin.json", scene, "skin.pc2");
  ASSERT_TRUE(r.hair);
  EXPECT_EQ(r.hair->guides, s.hair->guides.size());
  EXPECT_EQ(r.hair->children, 2 * s.hair->guides.size());
  EXPECT_EQ(r.character_colliders, 1u);
  EXPECT_EQ(r.character_path, path("skin_character.glb"));
  EXPECT_EQ(read_pc2(r.hair->cache_path).samples(), 3);
}

TEST_F(SimBodies, TheBundledHairJellyAndSparksSceneRuns) {
  SimRequest request;
  request.scene = test_paths::source_dir() + "/data/demo/bodies.json";
  request.out = path("demo.pc2");
  const SimResult r = run_sim_file(request);
  ASSERT_TRUE(r.hair);
  EXPECT_EQ(r.hair->guides, 48u);
  EXPECT_EQ(r.hair->children, 192u);
  EXPECT_LT(r.hair->worst_stretch, 1e-6);
  ASSERT_EQ(r.soft_bodies.size(), 1u);
  EXPECT_LT(std::abs(r.soft_bodies[0].volume_error), 0.01);
  EXPECT_GT(r.soft_bodies[0].collider_contacts, 0u);  // it landed
  EXPECT_TRUE(fs::exists(path("demo_hair.pc2")));
  EXPECT_TRUE(fs::exists(path("demo_character.glb")));
}

}  // namespace
}  // namespace kinema::pipeline
