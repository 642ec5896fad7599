// `kinema sim` as a library call: scenes parsed with errors at JSON pointers, a run that equals
// stepping the cloth by hand (frames drawn at the clock's α), outputs written only on success.
#include "kinema/pipeline/sim.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "kinema/clip/clip.h"
#include "kinema/core/error.h"
#include "kinema/core/file.h"
#include "kinema/io/asset_file.h"
#include "kinema/io/point_cache.h"
#include "kinema/physics/particles.h"
#include "kinema/skeleton/skeleton.h"
#include "test_paths.h"

namespace kinema::pipeline {
namespace {

namespace fs = std::filesystem;

const std::string kFlag = R"({
  "duration": 0.5, "fps": 24, "rate": 60,
  "wind": [0, 0, 2],
  "colliders": [{"shape": "sphere", "centre": [0.5, 0.2, 0.3], "radius": 0.2}],
  "cloth": [{
    "name": "flag",
    "grid": {"columns": 8, "rows": 8, "width": 1, "height": 1, "corner": [0, 1, 0],
             "u": [1, 0, 0], "v": [0, -1, 0]},
    "material": {"stretch_stiffness": "inextensible", "bend_stiffness": 5},
    "pinned": [0, 7]
  }]
})";

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

TEST(SimScene, ParsesGridsMaterialsCollidersAndPins) {
  const SimScene s = parse_sim_scene(kFlag, "scene.json");
  EXPECT_DOUBLE_EQ(s.duration, 0.5);
  EXPECT_EQ(s.fps, 24);
  EXPECT_EQ(s.rate, 60);
  ASSERT_EQ(s.cloths.size(), 1u);
  const SimSceneCloth& c = s.cloths[0];
  EXPECT_EQ(c.name, "flag");
  EXPECT_EQ(c.mesh.positions.size(), 64u);
  EXPECT_EQ(c.mesh.positions[63], (Vec3{1, 0, 0}));
  EXPECT_TRUE(std::isinf(c.options.material.stretch_stiffness));
  EXPECT_EQ(c.options.material.bend_stiffness, 5);
  EXPECT_EQ(c.options.pinned, (std::vector<std::uint32_t>{0, 7}));
  EXPECT_EQ(c.options.wind, (Vec3{0, 0, 2}));
  ASSERT_EQ(c.options.colliders.size(), 1u);
  EXPECT_EQ(c.options.colliders[0].shape, ColliderShape::Sphere);
  EXPECT_EQ(c.options.solver, ClothSolver::Xpbd);
}

TEST(SimScene, ReadsTheStrainLimit) {
  const std::string grid = R"("grid": {"columns": 4, "rows": 4, "width": 1, "height": 1})";
  const SimScene s = parse_sim_scene(
      R"({"cloth": [{)" + grid +
          R"(, "strain_limit": 0.005, "strain_limit_passes": 12, "strain_limit_relaxation": 1.8}]})",
      "scene.json");
  EXPECT_EQ(s.cloths[0].options.strain_limit, 0.005);
  EXPECT_EQ(s.cloths[0].options.strain_limit_passes, 12);
  EXPECT_EQ(s.cloths[0].options.strain_limit_relaxation, 1.8);
  EXPECT_EQ(parse_sim_scene(R"({"cloth": [{)" + grid + "}]}", "scene.json")
                .cloths[0]
                .options.strain_limit,
            0);
}

TEST(SimScene, ReadsTheImplicitSolversSettings) {
  const std::string grid = R"("grid": {"columns": 4, "rows": 4, "width": 1, "height": 1})";
  const ClothOptions o =
      parse_sim_scene(R"({"cloth": [{)" + grid +
                          R"(, "solver": "implicit", "preconditioner": "multigrid",
                              "implicit_bend": false, "slack_stiffness": 1e-4}]})",
                      "scene.json")
          .cloths[0]
          .options;
  EXPECT_EQ(o.preconditioner, ClothPreconditioner::Multigrid);
  EXPECT_FALSE(o.implicit_bend);
  EXPECT_EQ(o.slack_stiffness, 1e-4);
  const ClothOptions defaults =
      parse_sim_scene(R"({"cloth": [{)" + grid + "}]}", "scene.json").cloths[0].options;
  EXPECT_EQ(defaults.preconditioner, ClothPreconditioner::BlockJacobi);
  EXPECT_TRUE(defaults.implicit_bend);
  EXPECT_EQ(defaults.slack_stiffness, 0);
}

TEST(SimScene, RefusesBadScenesAtTheirJsonPointer) {
  refuses("{\"cloth\": [\n  {\"grid\": }]}", "line 2, column 12", "malformed JSON");
  refuses("[]", "/", "must be an object");
  refuses(R"({"cloth": [], "durration": 1})", "/durration", "unknown key \"durration\"");
  refuses(R"({"cloth": []})", "/cloth", "non-empty array");
  refuses(R"({"fps": 2.5, "cloth": [{}]})", "/fps", "whole number");
  refuses(R"({"duration": -1, "cloth": [{}]})", "/duration", "must be > 0");
  refuses(R"({"gravity": [0, "down", 0], "cloth": [{}]})", "/gravity/1", "must be a number");
  refuses(R"({"colliders": [{"shape": "cube"}], "cloth": [{}]})", "/colliders/0/shape",
          "unknown collider \"cube\"");
  refuses(R"({"colliders": [{"shape": "sphere"}], "cloth": [{}]})", "/colliders/0",
          "needs a \"radius\"");
  refuses(R"({"cloth": [{}]})", "/cloth/0", "either \"grid\" or \"mesh\"");
  const std::string grid = R"("grid": {"columns": 4, "rows": 4, "width": 1, "height": 1})";
  refuses(R"({"cloth": [{)" + grid + R"(, "solver": "rk4"}]})", "/cloth/0/solver",
          "unknown solver \"rk4\"");
  refuses(R"({"cloth": [{)" + grid + R"(, "material": {"stretch_stiffness": -3}}]})",
          "/cloth/0/material/stretch_stiffness", "must be ≥ 0");
  refuses(R"({"cloth": [{)" + grid +
              R"(, "solver": "implicit", "material": {"stretch_stiffness": "inextensible"}}]})",
          "/cloth/0/material", "needs \"solver\": \"xpbd\"");
  refuses(R"({"cloth": [{)" + grid + R"(, "strain_limit": -0.01}]})", "/cloth/0/strain_limit",
          "must be ≥ 0");
  refuses(R"({"cloth": [{)" + grid + R"(, "preconditioner": "ilu"}]})", "/cloth/0/preconditioner",
          "unknown preconditioner \"ilu\"");
  refuses(R"({"cloth": [{)" + grid + R"(, "slack_stiffness": 2}]})", "/cloth/0/slack_stiffness",
          "at most 1");
  refuses(R"({"cloth": [{)" + grid + R"(, "implicit_bend": "no"}]})", "/cloth/0/implicit_bend",
          "true or false");
  refuses(R"({"cloth": [{)" + grid + R"(, "strain_limit_passes": 0}]})",
          "/cloth/0/strain_limit_passes", "between 1 and 10000");
  refuses(R"({"cloth": [{)" + grid + R"(, "strain_limit_relaxation": 2}]})",
          "/cloth/0/strain_limit_relaxation", "must be < 2");
  refuses(R"({"cloth": [{)" + grid + R"(, "strain_limit_relaxation": 0}]})",
          "/cloth/0/strain_limit_relaxation", "must be > 0");
  refuses(R"({"cloth": [{)" + grid + R"(, "pinned": [0, 99]}]})", "/cloth/0/pinned/1",
          "between 0 and 15");
  refuses(R"({"cloth": [{)" + grid + R"(, "pinned": [3, 3]}]})", "/cloth/0/pinned/1",
          "pinned twice");
  refuses(
      R"({"cloth": [{"mesh": {"positions": [[0,0,0],[1,0,0],[2,0,0]], "triangles": [[0,1,2]]}}]})",
      "/cloth/0/mesh", "triangle 0 is degenerate");
  refuses(
      R"({"cloth": [{"mesh": {"positions": [[0,0,0],[1,0,0],[0,1,0]], "triangles": [[0,1,7]]}}]})",
      "/cloth/0/mesh", "names vertex 7");
  refuses(R"({"cloth": [{"mesh": "no_such_mesh.obj"}]})", "/cloth/0/mesh", "cannot read the mesh");
  refuses(R"({"cloth": [{"name": "a", )" + grid + R"(}, {"name": "a", )" + grid + R"(}]})",
          "/cloth/1/name", "already named \"a\"");
}

class SimRun : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kinema_sim_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

TEST_F(SimRun, FramesAreTheClothSteppedByHandDrawnAtAlpha) {
  write_file_atomically(path("flag.json"), kFlag);
  SimRequest request;
  request.scene = path("flag.json");
  request.out = path("flag.pc2");
  const SimResult r = run_sim_file(request);
  EXPECT_EQ(r.frames, 13);  // 0.5 s at 24 fps: 12 intervals + the rest state
  EXPECT_EQ(r.steps, 30);   // 0.5 s at 60 Hz
  const PointCache cache = read_pc2(path("flag.pc2"));
  ASSERT_EQ(cache.points, 64);
  ASSERT_EQ(cache.samples(), 13);
  // By hand: frame f at t = f/24 lies between steps ⌊60t⌋ and the one before, at α = 60t − ⌊60t⌋.
  const SimScene scene = parse_sim_scene(kFlag, path("flag.json"));
  Cloth cloth(scene.cloths[0].mesh, scene.cloths[0].options);
  std::vector<std::vector<Vec3>> states{{cloth.positions().begin(), cloth.positions().end()}};
  for (int s = 0; s < 30; ++s) {
    cloth.step(1.0 / 60);
    states.emplace_back(cloth.positions().begin(), cloth.positions().end());
  }
  for (int f = 0; f < 13; ++f) {
    const int steps = f * 60 / 24;  // whole steps by frame f
    const double alpha = (f * 60 % 24) / 24.0;
    for (int i = 0; i < 64; ++i) {
      const Vec3 expected = f == 0 ? states[0][size_t(i)]
                                   : lerp(states[size_t(steps - 1)][size_t(i)],
                                          states[size_t(steps)][size_t(i)], alpha);
      EXPECT_EQ(cache.at(f, i), Vec3f(expected)) << "frame " << f << " vertex " << i;
    }
  }
  EXPECT_TRUE(fs::exists(path("flag.obj")));
  ASSERT_EQ(r.cloths.size(), 1u);
  EXPECT_LT(r.cloths[0].largest_stretch, 0.05);
}

TEST_F(SimRun, GltfHoldsAMorphTargetPerFrameThatRebuildsTheCache) {
  // The same scene to .pc2 and to .glb: rest + frame k's morph target is the cache's frame k, and
  // the clip's weights at frame k's time select exactly that target.
  write_file_atomically(path("flag.json"), kFlag);
  SimRequest request;
  request.scene = path("flag.json");
  request.out = path("flag.pc2");
  run_sim_file(request);
  request.out = path("flag.glb");
  const SimResult r = run_sim_file(request);
  EXPECT_EQ(r.cloths[0].cache_path, path("flag.glb"));
  const PointCache cache = read_pc2(path("flag.pc2"));
  const Asset asset = load_asset(path("flag.glb"));
  ASSERT_EQ(asset.meshes.size(), 1u);
  const Mesh& mesh = asset.meshes[0];
  ASSERT_EQ(mesh.morph_targets.size(), 13u);
  ASSERT_EQ(asset.clips.size(), 1u);
  EXPECT_EQ(asset.clips[0].name, "simulation");
  EXPECT_NEAR(asset.clips[0].duration, 0.5, 1e-6);
  ASSERT_EQ(asset.clips[0].morph_tracks.size(), 1u);
  std::vector<double> weights;
  for (int f = 0; f < 13; ++f) {
    weights.assign(13, -1);
    ASSERT_TRUE(sample(asset.clips[0].morph_tracks[0], f / 24.0, weights));
    for (int k = 0; k < 13; ++k) EXPECT_NEAR(weights[size_t(k)], k == f ? 1 : 0, 1e-6);
    for (int v = 0; v < 64; ++v) {
      const Vec3f p =
          mesh.positions[size_t(v)] + mesh.morph_targets[size_t(f)].position_deltas[size_t(v)];
      EXPECT_NEAR(length(Vec3(p - cache.at(f, v))), 0, 1e-6) << "frame " << f << " vertex " << v;
    }
  }
}

TEST_F(SimRun, ClothFromAMeshFileIsWeldedAtItsSeams) {
  // An OBJ square of two triangles whose diagonal vertices are duplicated (as exporters split
  // vertices at UV seams): the cloth gets the 4 welded vertices, not 6, so it cannot tear there.
  write_file_atomically(path("square.obj"),
                        "v 0 1 0\nv 1 1 0\nv 1 1 1\nv 0 1 0\nv 1 1 1\nv 0 1 1\n"
                        "f 1 3 2\nf 4 6 5\n");
  write_file_atomically(path("scene.json"), R"({"duration": 0.1, "cloth": [
    {"name": "square", "mesh": "square.obj", "pinned": [0]}]})");
  const SimScene scene = parse_sim_scene(read_file(path("scene.json")), path("scene.json"));
  ASSERT_EQ(scene.cloths.size(), 1u);
  EXPECT_EQ(scene.cloths[0].mesh.positions.size(), 4u);
  EXPECT_EQ(scene.cloths[0].mesh.triangles.size(), 2u);
  SimRequest request;
  request.scene = path("scene.json");
  request.out = path("square.pc2");
  const SimResult r = run_sim_file(request);
  const PointCache cache = read_pc2(path("square.pc2"));
  EXPECT_EQ(cache.points, 4);
  EXPECT_EQ(cache.at(cache.samples() - 1, 0), (Vec3f{0, 1, 0}));  // pinned
  EXPECT_LT(cache.at(cache.samples() - 1, 2).y, 1.0f);            // the rest falls
  EXPECT_EQ(r.cloths[0].vertices, 4u);
  // A degenerate triangle in the file is refused, not silently dropped.
  write_file_atomically(path("flat.obj"), "v 0 0 0\nv 1 0 0\nv 2 0 0\nv 0 0 1\nf 1 2 3\nf 1 2 4\n");
  try {
    parse_sim_scene(R"({"cloth": [{"mesh": "flat.obj"}]})", path("scene.json"));
    ADD_FAILURE() << "a degenerate triangle was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.place(), "/cloth/0/mesh");
    EXPECT_NE(e.reason().find("1 degenerate triangles"), std::string::npos) << e.what();
  }
}

TEST_F(SimRun, SeveralClothsGetOneCacheEachAndAFailureWritesNothing) {
  const std::string two = R"({"duration": 0.1, "cloth": [
    {"name": "a", "grid": {"columns": 3, "rows": 3, "width": 1, "height": 1}},
    {"name": "b", "grid": {"columns": 4, "rows": 2, "width": 1, "height": 1}}]})";
  write_file_atomically(path("two.json"), two);
  SimRequest request;
  request.scene = path("two.json");
  request.out = path("out.pc2");
  const SimResult r = run_sim_file(request);
  EXPECT_EQ(read_pc2(path("out_a.pc2")).points, 9);
  EXPECT_EQ(read_pc2(path("out_b.pc2")).points, 8);
  EXPECT_TRUE(fs::exists(path("out_a.obj")));
  EXPECT_FALSE(fs::exists(path("out.pc2")));
  // A scene that blows up (semi-implicit with one substep on stiff springs) writes nothing.
  write_file_atomically(path("boom.json"), R"({"duration": 5, "cloth": [{"grid":
    {"columns": 6, "rows": 6, "width": 0.1, "height": 0.1}, "solver": "semi-implicit",
    "substeps": 1, "material": {"stretch_stiffness": 100000}}]})");
  request.scene = path("boom.json");
  request.out = path("boom.pc2");
  EXPECT_THROW(run_sim_file(request), Error);
  EXPECT_FALSE(fs::exists(path("boom.pc2")));
  EXPECT_FALSE(fs::exists(path("boom.obj")));
  request.out = path("boom.json");
  EXPECT_THROW(run_sim_file(request), UsageError);
  request.out = path("boom.obj");  // sim writes .pc2, .glb or .gltf
  EXPECT_THROW(run_sim_file(request), UsageError);
}

/// A cape on Godette's back (the walking fixture: no skin, so no colliders from it), its top row
/// following the chest.
std::string cape_scene(const std::string& character, const std::string& extra = "") {
  return R"({"duration": 1, "fps": 30, "rate": 60,
    "character": {"file": ")" +
         character + R"(", "clip": "walk", "colliders": false)" + extra + R"(},
    "cloth": [{"name": "cape",
      "grid": {"columns": 6, "rows": 8, "width": 0.2, "height": 0.3, "corner": [-0.1, 0.9, 0.2],
               "u": [1, 0, 0], "v": [0, -1, 0]},
      "attach_to_skin": [0, 1, 2, 3, 4, 5], "attach_joint": "chest_Armature",
      "material": {"stretch_stiffness": "inextensible"}}]})";
}

const std::string kWalkingGodette = test_paths::data_dir() + "/vrm/godette_walk_springs_vrm0.glb";

TEST_F(SimRun, ACapeFollowsTheWalkingCharactersChestAndItsSpringBonesAreBaked) {
  write_file_atomically(path("cape.json"), cape_scene(kWalkingGodette));
  SimRequest request;
  request.scene = path("cape.json");
  request.out = path("cape.pc2");
  const SimResult r = run_sim_file(request);
  EXPECT_EQ(r.character_path, path("cape_character.glb"));
  EXPECT_LT(r.cloths[0].worst_stretch, 0.05);
  const PointCache cache = read_pc2(path("cape.pc2"));
  const Asset character = load_asset(r.character_path);
  ASSERT_EQ(character.clips.size(), 1u);
  EXPECT_TRUE(character.spring_bones.empty());
  const Asset source = load_asset(kWalkingGodette);
  const int chest = source.skeleton.find("chest_Armature");
  const std::vector<Mat4> rest = rest_model_matrices(source.skeleton);
  Mat4 rest_inverse;
  ASSERT_TRUE(inverse(rest[size_t(chest)], rest_inverse));
  const SimScene scene = parse_sim_scene(read_file(path("cape.json")), path("cape.json"));
  double worst = 0, moved = 0;
  for (int f = 0; f < r.frames; ++f) {
    // The pinned top row is where the chest carries it from the bind pose, frame by frame. A
    // frame shows the state before the clock's last step (α = 0: 60 Hz steps, 30 fps frames).
    const std::vector<Mat4> model = sample_model_pose(source.clips[0], source.skeleton,
                                                      std::max(0.0, double(f) / 30 - 1.0 / 60));
    for (int v = 0; v < 6; ++v) {
      const Vec3 expected = (model[size_t(chest)] * rest_inverse)
                                .transform_point(scene.cloths[0].mesh.positions[size_t(v)]);
      worst = std::max(worst, length(Vec3(cache.at(f, v)) - expected));
      moved = std::max(moved, length(expected - scene.cloths[0].mesh.positions[size_t(v)]));
    }
  }
  EXPECT_LT(worst, 1e-5);
  EXPECT_GT(moved, 0.5);  // she walks away from where the cape was authored
  // The baked character: the spring joints are keyed once per output frame and swing.
  const int hair = character.skeleton.find("HairBall_L");
  ASSERT_GE(hair, 0);
  EXPECT_EQ(character.clips[0].tracks[size_t(hair)].rotation.key_count(), size_t(r.frames));
  // …drawn at the cloth's instants: the baked chest carries the cape's top row exactly.
  for (int f = 0; f < r.frames; f += 5) {
    const std::vector<Mat4> played =
        sample_model_pose(character.clips[0], character.skeleton, double(f) / 30);
    const Vec3 carried =
        (played[size_t(chest)] * rest_inverse).transform_point(scene.cloths[0].mesh.positions[0]);
    EXPECT_LT(length(Vec3(cache.at(f, 0)) - carried), 1e-5) << "frame " << f;
  }
}

TEST_F(SimRun, AttachedVerticesInsideTheBodysCollidersAreCounted) {
  // Godette at rest (skinned, no clip): a cape whose top row is inside her chest's capsule.
  const std::string godette = test_paths::data_dir() + "/vrm/Godette_vrm_v4.vrm";
  write_file_atomically(path("inside.json"), R"({"duration": 0.2, "fps": 10,
    "character": {"file": ")" + godette + R"(", "collider_joints": ["chest_Armature"]},
    "cloth": [{"name": "cape", "grid": {"columns": 4, "rows": 4, "width": 0.1, "height": 0.1,
      "corner": [-0.05, 0.8, -0.03], "u": [1, 0, 0], "v": [0, -1, 0]},
      "attach_to_skin": [0, 1, 2, 3], "attach_joint": "chest_Armature"}]})");
  SimRequest request;
  request.scene = path("inside.json");
  request.out = path("inside.pc2");
  const SimResult r = run_sim_file(request);
  EXPECT_EQ(r.character_colliders, 1u);
  EXPECT_EQ(r.cloths[0].attached_inside, 4u);
  EXPECT_GT(r.cloths[0].collider_contacts, 0u);
}

TEST(SimScene, RefusesBadCharactersAtTheirJsonPointer) {
  const std::string grid =
      R"("grid": {"columns": 4, "rows": 4, "width": 1, "height": 1}, "attach_to_skin": [0])";
  refuses(R"({"cloth": [{)" + grid + "}]}", "/cloth/0/attach_to_skin", "needs a \"character\"");
  refuses(R"({"character": {"file": ")" + kWalkingGodette + R"(", "clip": "run"}, "cloth": [{)" +
              grid + "}]}",
          "/character/clip", "has no clip \"run\"");
  refuses(R"({"character": {"file": ")" + kWalkingGodette +
              R"(", "collider_joints": ["tail"]}, "cloth": [{)" + grid + "}]}",
          "/character/collider_joints/0", "has no joint \"tail\"");
  refuses(R"({"character": {"file": ")" + kWalkingGodette + R"(", "colour": 1}, "cloth": [{)" +
              grid + "}]}",
          "/character/colour", "unknown key");
  refuses(R"({"character": {"file": ")" + kWalkingGodette + R"("}, "cloth": [{)" + grid +
              R"(, "attach_joint": "wing"}]})",
          "/cloth/0/attach_joint", "has no joint \"wing\"");
  refuses(R"({"character": {"file": ")" + kWalkingGodette +
              R"(", "collider_percentile": 2}, "cloth": [{)" + grid + "}]}",
          "/character/collider_percentile", "(0, 1]");
}

const std::string kSparks = R"({"duration": 2, "fps": 30, "rate": 60,
  "colliders": [{"shape": "plane", "restitution": 0.4, "friction": 0.2}],
  "particles": {"emitters": [{"position": [0, 1, 0], "rate": 200, "velocity": [1.5, 3, 0],
                              "spread": 0.3, "lifetime": 1.5, "seed": 7}],
                "forces": [{"kind": "drag", "strength": 0.1}]}})";

TEST_F(SimRun, ParticlesAreAPointCacheOfEveryParticleSteppedByHand) {
  write_file_atomically(path("sparks.json"), kSparks);
  SimRequest request;
  request.scene = path("sparks.json");
  request.out = path("sparks.pc2");
  const SimResult r = run_sim_file(request);
  EXPECT_EQ(r.particles_emitted, 400u);     // 200 a second for 2 s
  EXPECT_EQ(r.particles_most_alive, 300u);  // 200 a second living 1.5 s
  const PointCache cache = read_pc2(path("sparks.pc2"));
  ASSERT_EQ(cache.points, 396);  // those born in the last step are never drawn (α = 0)
  ASSERT_EQ(cache.samples(), 61);
  // By hand: the scene's gravity comes first, then the listed drag. Frame f shows the state
  // before the clock's last step (α = 0), after 2f − 1 steps; particle n is vertex n.
  const SimScene scene = parse_sim_scene(kSparks, path("sparks.json"));
  ASSERT_EQ(scene.particles->forces.size(), 2u);
  EXPECT_EQ(scene.particles->forces[0].kind, ForceKind::Gravity);
  ParticleSystem by_hand(*scene.particles);
  int steps = 0;
  double worst = 0;
  size_t compared = 0;
  for (int f = 1; f < 61; ++f) {
    while (steps < 2 * f - 1) by_hand.step(1.0 / 60), ++steps;
    const Particles& p = by_hand.particles();
    for (size_t k = 0; k < p.count(); ++k) {
      const int n = int(p.serial[k] & ((std::uint64_t(1) << 48) - 1));
      worst = std::max(worst, length(Vec3(cache.at(f, n)) - p.position(k)));
      ++compared;
    }
    while (steps < 2 * f) by_hand.step(1.0 / 60), ++steps;
  }
  EXPECT_GT(compared, 10000u);
  EXPECT_LT(worst, 1e-6);  // float32 in the cache
  // Nothing falls through the ground; the OBJ holds one vertex per particle.
  for (int f = 0; f < 61; ++f)
    for (int n = 0; n < 396; ++n) ASSERT_GE(cache.at(f, n).y, -1e-6);
  EXPECT_NE(read_file(path("sparks.obj")).find("396 vertices"), std::string::npos);
}

TEST_F(SimRun, ParticlesBesideClothGoToTheirOwnCacheAndAloneNeedAPc2) {
  write_file_atomically(path("sparks.json"), kSparks);
  SimRequest request;
  request.scene = path("sparks.json");
  request.out = path("sparks.glb");
  EXPECT_THROW(run_sim_file(request), UsageError);
  EXPECT_FALSE(fs::exists(path("sparks.glb")));
  std::string both = kFlag;
  both.insert(both.rfind('}'), R"(, "particles": {"emitters": [{"rate": 10}]})");
  write_file_atomically(path("both.json"), both);
  request.scene = path("both.json");
  request.out = path("both.glb");
  const SimResult r = run_sim_file(request);
  EXPECT_EQ(r.particle_cache_path, path("both_particles.pc2"));
  EXPECT_TRUE(fs::exists(path("both.glb")));
  EXPECT_TRUE(fs::exists(path("both_particles.pc2")));
  EXPECT_TRUE(fs::exists(path("both_particles.obj")));
}

TEST(SimScene, RefusesBadParticlesAtTheirJsonPointer) {
  refuses(R"({"particles": {"emitters": []}})", "/particles/emitters", "non-empty array");
  refuses(R"({"particles": {"emitters": [{"shape": "cone"}]}})", "/particles/emitters/0/shape",
          "unknown emitter \"cone\"");
  refuses(R"({"particles": {"emitters": [{}], "forces": [{"kind": "magnet"}]}})",
          "/particles/forces/0/kind", "unknown force \"magnet\"");
  refuses(R"({"particles": {"emitters": [{"lifetime": 0}]}})", "/particles/emitters/0/lifetime",
          "");
  refuses(R"({"particles": {"emitters": [{}], "size": {"u": [0, 0], "value": [1, 2]}}})",
          "/particles/size/u/1", "ascending");
  refuses(R"({"particles": {"emitters": [{"rate": 1, "colour": 1}]}})",
          "/particles/emitters/0/colour", "unknown key");
}

}  // namespace
}  // namespace kinema::pipeline
