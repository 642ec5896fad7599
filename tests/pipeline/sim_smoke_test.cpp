// Smoke and fire in `kinema sim` scenes: parsed with errors at JSON pointers, run on the scene's
// clock (a plume rises, a moving body pushes the smoke, fuel burns into heat and smoke), written
// as an OpenVDB sequence (read back here) only once the whole run has succeeded.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "kinema/core/error.h"
#include "kinema/core/file.h"
#include "kinema/fluid/mesh_sdf.h"
#include "kinema/fluid/volume_file.h"
#include "kinema/io/point_cache.h"
#include "kinema/pipeline/job.h"
#include "kinema/pipeline/sim.h"
#include "pipeline/pipeline_test_util.h"
#include "test_paths.h"

namespace kinema::pipeline {
namespace {

void refuses(const std::string& json, const std::string& place, const std::string& says) {
  try {
    parse_sim_scene(json, "scene.json");
    ADD_FAILURE() << "accepted; expected " << place << ": " << says;
  } catch (const Error& e) {
    EXPECT_EQ(e.place(), place) << e.what();
    EXPECT_NE(e.reason().find(says), std::string::npos) << e.what();
  }
}

// A 0.8 × 1.2 × 0.8 m box of 16 × 24 × 16 cells (5 cm), a hot puff at the bottom for 0.3 s.
const char* const kPlume = R"({
  "duration": 0.5, "fps": 10, "rate": 40,
  "smoke": {"domain": {"min": [-0.4, 0, -0.4], "max": [0.4, 1.2, 0.4]}, "resolution": 24,
            "buoyancy": {"density": 0, "heat": 4},
            "sources": [{"shape": "sphere", "centre": [0, 0.2, 0], "radius": 0.12,
                         "density": 1, "temperature": 1, "end": 0.3}]}
})";

/// The density-weighted mean height of a grid, m.
double centroid_y(const VolumeGrid& g) {
  double sum = 0, weighted = 0;
  for (int k = 0; k < g.nz; ++k)
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i) {
        const double d =
            g.values[size_t(i) + size_t(g.nx) * (size_t(j) + size_t(g.ny) * size_t(k))];
        sum += d;
        weighted += d * (g.origin.y + j * g.voxel_size);
      }
  return sum > 0 ? weighted / sum : 0;
}

double total(const VolumeGrid& g) {
  double s = 0;
  for (float v : g.values) s += v;
  return s;
}

double centroid_x(const VolumeGrid& g) {
  double sum = 0, weighted = 0;
  for (int k = 0; k < g.nz; ++k)
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i) {
        const double d =
            g.values[size_t(i) + size_t(g.nx) * (size_t(j) + size_t(g.ny) * size_t(k))];
        sum += d;
        weighted += d * (g.origin.x + i * g.voxel_size);
      }
  return sum > 0 ? weighted / sum : 0;
}

TEST(SimSmokeScene, ReadsTheGridBoundariesSourcesAndCollidersAsObstacles) {
  const SimScene s = parse_sim_scene(R"({"colliders": [
      {"shape": "sphere", "centre": [0, 0.6, 0], "radius": 0.1},
      {"shape": "plane", "point": [0, 0, 0], "normal": [0, 1, 0]},
      {"shape": "plane", "point": [0, 0, 0], "normal": [1, 1, 0]}],
    "smoke": {"domain": {"min": [-0.4, 0, -0.4], "max": [0.4, 1.2, 0.4]}, "resolution": 24,
              "boundary": {"+x": "wall", "-y": "open"}, "advection": "semi_lagrangian",
              "fire": {"burn_rate": 3},
              "sources": [{"shape": "box", "centre": [0, 0.1, 0], "half_extents": [0.1, 0.05, 0.1],
                           "fuel": 1, "velocity": [0, 1, 0], "start": 0.1, "end": 0.4}]}})",
                                     "scene.json");
  ASSERT_TRUE(s.smoke);
  const GridFluidOptions& o = s.smoke->options;
  EXPECT_EQ(o.nx, 16);
  EXPECT_EQ(o.ny, 24);
  EXPECT_EQ(o.nz, 16);
  EXPECT_DOUBLE_EQ(o.dx, 0.05);
  EXPECT_EQ(o.origin, (Vec3{-0.4, 0, -0.4}));
  EXPECT_EQ(o.boundary[1], FluidBoundary::Wall);  // +x as told
  EXPECT_EQ(o.boundary[2], FluidBoundary::Open);  // -y as told
  EXPECT_EQ(o.boundary[3], FluidBoundary::Open);  // the default top
  EXPECT_EQ(o.advection, FluidAdvection::SemiLagrangian);
  EXPECT_TRUE(s.smoke->fire);
  EXPECT_EQ(o.burn_rate, 3);
  EXPECT_GT(o.heat_release, 0);  // the default
  ASSERT_EQ(s.smoke->sources.size(), 1u);
  EXPECT_EQ(s.smoke->sources[0].source.region.shape, FluidShape::Box);
  EXPECT_EQ(s.smoke->sources[0].source.fuel, 1);
  EXPECT_EQ(*s.smoke->sources[0].source.velocity, (Vec3{0, 1, 0}));
  EXPECT_EQ(s.smoke->sources[0].start, 0.1);
  EXPECT_EQ(s.smoke->sources[0].end, 0.4);
  // The sphere, and the floor plane as the box below it; the tilted plane is no obstacle.
  ASSERT_EQ(o.obstacles.size(), 2u);
  EXPECT_EQ(o.obstacles[0].region.shape, FluidShape::Sphere);
  EXPECT_EQ(o.obstacles[1].region.shape, FluidShape::Box);
  EXPECT_LE(o.obstacles[1].region.center.y + o.obstacles[1].region.half_extents.y, 1e-12);
  EXPECT_EQ(s.smoke->planes_skipped, 1u);
}

TEST(SimSmokeScene, BadSmokeIsRefusedAtItsJsonPointer) {
  const std::string domain = R"("domain": {"min": [0, 0, 0], "max": [1, 1, 1]})";
  const std::string source = R"("sources": [{"centre": [0.5, 0.2, 0.5], "radius": 0.1}])";
  auto scene = [](const std::string& body) { return R"({"smoke": {)" + body + "}}"; };
  refuses(scene(domain + R"(, "sources": [{"centre": [3, 0.5, 0.5], "radius": 0.2}])"),
          "/smoke/sources/0", "wholly outside the smoke's domain");
  refuses(scene(domain + R"(, "sources": [{"centre": [0.5, 0.5, 0.5], "radius": 0.001}])"),
          "/smoke/sources/0", "holds no cell's centre");
  refuses(scene(domain + ", " + source + R"(, "densty": 1)"), "/smoke/densty", "unknown key");
  refuses(scene(source), "/smoke/domain", "missing");
  refuses(scene(domain), "/smoke/sources", "non-empty array");
  refuses(scene(domain + ", " + source + R"(, "resolution": 16, "cell_size": 0.1)"),
          "/smoke/cell_size", "not both");
  refuses(scene(domain + ", " + source + R"(, "cell_size": 0.0005)"), "/smoke/cell_size",
          "at most 1024");
  refuses(scene(domain + ", " + source + R"(, "boundary": {"+y": "sticky"})"), "/smoke/boundary/+y",
          "unknown boundary");
  refuses(scene(domain + ", " + source + R"(, "advection": "bfecc")"), "/smoke/advection",
          "unknown advection");
  refuses(scene(domain + R"(, "sources": [{"centre": [0.5, 0.2, 0.5], "radius": 0.1, "fuel": 1}])"),
          "/smoke/sources/0/fuel", "needs a \"fire\"");
  refuses(
      scene(domain +
            R"(, "sources": [{"centre": [0.5, 0.2, 0.5], "radius": 0.1, "start": 1, "end": 1}])"),
      "/smoke/sources/0/end", "after \"start\"");
  refuses(scene(domain + R"(, "sources": [{"shape": "cone", "radius": 0.1}])"),
          "/smoke/sources/0/shape", "unknown source shape");
  refuses(scene(domain + ", " + source + R"(, "vorticity": -1)"), "/smoke/vorticity", "≥ 0");
}

class SimSmoke : public test::PipelineTest {};

/// A cube of side 0.2 m about the origin as OBJ: 8 vertices, 12 triangles wound outward; `faces`
/// of them (the last ones left out).
std::string obj_cube(int faces = 12) {
  std::string obj =
      "v -0.1 -0.1 -0.1\nv 0.1 -0.1 -0.1\nv 0.1 0.1 -0.1\nv -0.1 0.1 -0.1\n"
      "v -0.1 -0.1 0.1\nv 0.1 -0.1 0.1\nv 0.1 0.1 0.1\nv -0.1 0.1 0.1\n";
  const char* const f[12] = {"1 4 3", "1 3 2", "5 6 7", "5 7 8", "1 2 6", "1 6 5",
                             "4 8 7", "4 7 3", "1 5 8", "1 8 4", "2 3 7", "2 7 6"};
  for (int i = 0; i < faces; ++i) obj += std::string("f ") + f[i] + "\n";
  return obj;
}

// kPlume with a closed OBJ cube (rock.obj, beside the scene) 0.5…0.7 m up over the source.
const char* const kPlumeUnderACube = R"({
  "duration": 0.5, "fps": 10, "rate": 40,
  "smoke": {"domain": {"min": [-0.4, 0, -0.4], "max": [0.4, 1.2, 0.4]}, "resolution": 24,
            "buoyancy": {"density": 0, "heat": 4},
            "obstacles": [{"mesh": "rock.obj", "offset": [0, 0.6, 0]}],
            "sources": [{"shape": "sphere", "centre": [0, 0.2, 0], "radius": 0.12,
                         "density": 1, "temperature": 1, "end": 0.3}]}
})";

TEST_F(SimSmoke, MeshObstaclesAreReadRelativeToTheSceneWithTheirOffsets) {
  write_file_atomically(path("rock.obj"), obj_cube());
  const SimScene s = parse_sim_scene(kPlumeUnderACube, path("scene.json"));
  ASSERT_TRUE(s.smoke);
  ASSERT_EQ(s.smoke->options.obstacles.size(), 1u);
  const FluidRegion& g = s.smoke->options.obstacles[0].region;
  ASSERT_EQ(g.shape, FluidShape::Mesh);
  ASSERT_TRUE(g.sdf);
  EXPECT_EQ(g.center, (Vec3{0, 0.6, 0}));
  EXPECT_EQ(g.sdf->triangles().size(), 12u);
  EXPECT_NEAR(g.distance({0, 0.6, 0}), -0.1, 1e-12);
  EXPECT_NEAR(g.distance({0, 0.3, 0}), 0.2, 1e-12);
}

TEST_F(SimSmoke, AClosedObjCubeBlocksTheSmoke) {
  write_file_atomically(path("rock.obj"), obj_cube());
  write_file_atomically(path("scene.json"), kPlumeUnderACube);
  SimRequest request;
  request.scene = path("scene.json");
  request.out = path("plume.pc2");
  request.threads = 1;
  const SimResult r = run_sim_file(request);
  ASSERT_TRUE(r.smoke);
  EXPECT_EQ(r.smoke->obstacles, 1u);
  ASSERT_EQ(r.smoke->paths.size(), 6u);
  const VolumeGrid g = read_vdb(r.smoke->paths.back())[0];
  ASSERT_EQ(g.name, "density");
  // The cube fills cells 6…9 on x and z (−0.1…0.1 m) and 10…13 on y (0.5…0.7 m).
  auto at = [&](int i, int j, int k) {
    return g.values[size_t(i) + size_t(g.nx) * (size_t(j) + size_t(g.ny) * size_t(k))];
  };
  float inside = 0, under = 0;
  for (int k = 6; k <= 9; ++k)
    for (int i = 6; i <= 9; ++i) {
      for (int j = 10; j <= 13; ++j) inside = std::max(inside, at(i, j, k));
      under += at(i, 9, k);
    }
  EXPECT_EQ(inside, 0.0f);
  EXPECT_GT(under, 0.0f) << "the plume reached the cube";
  EXPECT_GT(total(g), 0);
}

TEST_F(SimSmoke, AnOpenObstacleMeshIsRefusedAndNothingIsWritten) {
  write_file_atomically(path("rock.obj"), obj_cube(11));
  write_file_atomically(path("scene.json"), kPlumeUnderACube);
  SimRequest request;
  request.scene = path("scene.json");
  request.out = path("plume.pc2");
  try {
    run_sim_file(request);
    ADD_FAILURE() << "ran with an open obstacle mesh";
  } catch (const Error& e) {
    EXPECT_EQ(e.file(), path("scene.json"));
    EXPECT_EQ(e.place(), "/smoke/obstacles/0");
    EXPECT_NE(e.reason().find(path("rock.obj")), std::string::npos) << e.what();
    EXPECT_NE(e.reason().find("not closed: 3 open edges"), std::string::npos) << e.what();
  }
  EXPECT_EQ(file_count(), 2u);  // the scene and the mesh
  // A missing mesh, or one without a "mesh", is refused where it is named.
  const std::string domain = R"("domain": {"min": [0, 0, 0], "max": [1, 1, 1]})";
  const std::string source = R"("sources": [{"centre": [0.5, 0.2, 0.5], "radius": 0.1}])";
  try {
    parse_sim_scene(
        R"({"smoke": {)" + domain + ", " + source + R"(, "obstacles": [{"mesh": "nowhere.obj"}]}})",
        path("scene.json"));
    ADD_FAILURE() << "read a missing mesh";
  } catch (const Error& e) {
    EXPECT_EQ(e.place(), "/smoke/obstacles/0/mesh") << e.what();
  }
  refuses(R"({"smoke": {)" + domain + ", " + source + R"(, "obstacles": [{"offset": [0, 0, 0]}]}})",
          "/smoke/obstacles/0/mesh", "missing");
  refuses(R"({"smoke": {)" + domain + ", " + source +
              R"(, "obstacles": [{"mesh": "a.obj", "scale": 2}]}})",
          "/smoke/obstacles/0/scale", "unknown key");
}

TEST_F(SimSmoke, APlumeRisesGrowsWhileItsSourceRunsAndIsWrittenAsVdbFrames) {
  write_file_atomically(path("scene.json"), kPlume);
  SimRequest request;
  request.scene = path("scene.json");
  request.out = path("plume.pc2");
  request.threads = 1;
  std::string stage;
  long done = 0, of = 0;
  request.progress = [&](const std::string& s, long d, long t) { stage = s, done = d, of = t; };
  const SimResult r = run_sim_file(request);
  // The bar's text: the simulated time and the speed.
  EXPECT_EQ(stage.rfind("simulating: t = 0.50 s, ", 0), 0u) << stage;
  EXPECT_NE(stage.find(" steps/s"), std::string::npos) << stage;
  EXPECT_EQ(done, 5);
  EXPECT_EQ(of, 5);
  ASSERT_TRUE(r.smoke);
  const SimSmokeResult& k = *r.smoke;
  EXPECT_EQ(k.pattern, path("plume_smoke_%04d.vdb"));
  ASSERT_EQ(k.frames, 6);
  ASSERT_EQ(k.paths.size(), 6u);
  EXPECT_EQ(k.paths[3], path("plume_smoke_0003.vdb"));
  EXPECT_EQ(k.steps, 20);
  EXPECT_GE(k.substeps, k.steps);
  EXPECT_LT(k.max_divergence, 1e-2);
  EXPECT_GT(k.smoke_mass, 0);
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_EQ(file_count(), 7u);  // the scene and the frames, nothing staged left over

  std::vector<double> mass, height;
  for (const std::string& file : k.paths) {
    const std::vector<VolumeGrid> grids = read_vdb(file);
    ASSERT_EQ(grids.size(), 2u) << file;
    EXPECT_EQ(grids[0].name, "density");
    EXPECT_EQ(grids[1].name, "temperature");
    EXPECT_EQ(grids[0].nx, 16);
    EXPECT_EQ(grids[0].ny, 24);
    EXPECT_EQ(grids[0].nz, 16);
    EXPECT_NEAR(grids[0].voxel_size, 0.05, 1e-12);
    EXPECT_NEAR(grids[0].origin.x, -0.375, 1e-9);  // the first cell's centre
    EXPECT_NEAR(grids[0].origin.y, 0.025, 1e-9);
    mass.push_back(total(grids[0]));
    height.push_back(centroid_y(grids[0]));
  }
  EXPECT_EQ(mass[0], 0);  // frame 0: before any source
  EXPECT_GT(mass[1], 0);
  EXPECT_GT(mass[2], mass[1]);  // the source runs until 0.3 s
  EXPECT_GT(mass[3], mass[2]);
  EXPECT_GT(height[5], height[1] + 0.1) << "hot smoke rises";
}

TEST_F(SimSmoke, AMovingBodyPushesTheSmoke) {
  // Still smoke (no buoyancy) in an open box; a capsule lying across the box (along z, as a
  // character's limb would pass) sweeps through it along +x (no gravity). The smoke it meets
  // flows around it and is carried along behind it.
  const std::string smoke = R"("smoke": {"domain": {"min": [-0.8, 0, -0.4], "max": [0.8, 0.8, 0.4]},
    "resolution": 32, "boundary": "open", "buoyancy": {"density": 0, "heat": 0},
    "sources": [{"shape": "box", "centre": [-0.2, 0.4, 0], "half_extents": [0.3, 0.3, 0.3],
                 "end": 0.05}]})";
  const std::string ball = R"(, "rigid_bodies": [{"name": "pin", "shape": "capsule",
    "radius": 0.12, "half_height": 0.5, "rotation": [0.70710678, 0, 0, 0.70710678],
    "position": [-0.6, 0.4, 0], "velocity": [3, 0, 0]}])";
  write_file_atomically(
      path("still.json"),
      R"({"duration": 0.4, "fps": 10, "rate": 40, "gravity": [0, 0, 0], )" + smoke + "}");
  write_file_atomically(
      path("pushed.json"),
      R"({"duration": 0.4, "fps": 10, "rate": 40, "gravity": [0, 0, 0], )" + smoke + ball + "}");
  SimRequest request;
  request.threads = 1;
  request.scene = path("still.json");
  request.out = path("still.pc2");
  const SimResult still = run_sim_file(request);
  request.scene = path("pushed.json");
  request.out = path("pushed.pc2");
  const SimResult pushed = run_sim_file(request);
  ASSERT_TRUE(pushed.smoke);
  EXPECT_EQ(pushed.smoke->moving_obstacles, 1u);
  const VolumeGrid a = read_vdb(still.smoke->paths.back())[0];
  const VolumeGrid b = read_vdb(pushed.smoke->paths.back())[0];
  EXPECT_NEAR(centroid_x(a), -0.2, 0.03) << "without the ball the smoke stays put";
  // Measured: −0.200 without, −0.108 with (in a closed box the return flow carries it back).
  EXPECT_GT(centroid_x(b), centroid_x(a) + 0.05) << "the capsule pushes it along +x";
}

TEST_F(SimSmoke, TheCharactersCapsulesAreMovingObstacles) {
  // Godette at rest (skinned): her chest's capsule stands in the smoke.
  const std::string godette = test_paths::data_dir() + "/vrm/Godette_vrm_v4.vrm";
  write_file_atomically(path("scene.json"), R"({"duration": 0.1, "fps": 10, "rate": 20,
    "character": {"file": ")" + godette + R"(", "collider_joints": ["chest_Armature"]},
    "smoke": {"domain": {"min": [-0.4, 0.6, -0.4], "max": [0.4, 1.4, 0.4]}, "resolution": 16,
              "sources": [{"centre": [0, 0.7, 0], "radius": 0.1}]}})");
  SimRequest request;
  request.scene = path("scene.json");
  request.out = path("godette.pc2");
  const SimResult r = run_sim_file(request);
  ASSERT_TRUE(r.smoke);
  EXPECT_EQ(r.character_colliders, 1u);
  EXPECT_EQ(r.smoke->moving_obstacles, 1u);
  EXPECT_EQ(r.smoke->frames, 2);
  SimRequest without = request;
  write_file_atomically(path("off.json"), R"({"duration": 0.1, "fps": 10, "rate": 20,
    "character": {"file": ")" + godette + R"(", "collider_joints": ["chest_Armature"]},
    "smoke": {"domain": {"min": [-0.4, 0.6, -0.4], "max": [0.4, 1.4, 0.4]}, "resolution": 16,
              "character_obstacles": false, "sources": [{"centre": [0, 0.7, 0], "radius": 0.1}]}})");
  without.scene = path("off.json");
  without.out = path("off.pc2");
  EXPECT_EQ(run_sim_file(without).smoke->moving_obstacles, 0u);
}

TEST_F(SimSmoke, FuelBurnsIntoHeatAndSmoke) {
  write_file_atomically(path("scene.json"), R"({"duration": 0.3, "fps": 10, "rate": 40,
    "smoke": {"domain": {"min": [-0.4, 0, -0.4], "max": [0.4, 0.8, 0.4]}, "resolution": 16,
              "buoyancy": {"ambient_temperature": 290},
              "fire": {"burn_rate": 4, "heat_release": 5, "smoke_per_fuel": 0.5},
              "sources": [{"centre": [0, 0.2, 0], "radius": 0.12, "density": 0,
                           "temperature": 290, "fuel": 1}]}})");
  SimRequest request;
  request.scene = path("scene.json");
  request.out = path("fire_%04d.vdb");  // smoke alone: OUT is the pattern
  request.threads = 1;
  const SimResult r = run_sim_file(request);
  ASSERT_TRUE(r.smoke);
  EXPECT_EQ(r.smoke->pattern, path("fire_%04d.vdb"));
  EXPECT_TRUE(r.smoke->fire);
  EXPECT_GT(r.smoke->hottest, 0.5);
  EXPECT_GT(r.smoke->smoke_mass, 0) << "smoke from the burnt fuel alone";
  const std::vector<VolumeGrid> grids = read_vdb(path("fire_0003.vdb"));
  ASSERT_EQ(grids.size(), 4u);
  EXPECT_EQ(grids[2].name, "flame");
  EXPECT_EQ(grids[3].name, "fuel");
  float hottest = 0, flame = 0;
  for (float v : grids[1].values) hottest = std::max(hottest, v);
  for (float v : grids[2].values) flame = std::max(flame, v);
  EXPECT_GT(hottest, 0.5f) << "temperature above ambient";
  EXPECT_LT(hottest, 100.0f) << "written above ambient (290), not absolute";
  EXPECT_GT(flame, 0.5f);
  EXPECT_LE(flame, 1.0f + 1e-6f);
  EXPECT_GT(total(grids[0]), 0);
}

TEST_F(SimSmoke, AFastInflowIsSubsteppedWithAWarningAndStaysFinite) {
  // 20 m/s through 5 cm cells in steps of 1/20 s: 20 cells a step, 4 substeps of 5.
  write_file_atomically(path("scene.json"), R"({"duration": 0.2, "fps": 10, "rate": 20,
    "smoke": {"domain": {"min": [0, 0, 0], "max": [0.8, 0.8, 0.8]}, "resolution": 16,
              "sources": [{"centre": [0.4, 0.15, 0.4], "radius": 0.1, "velocity": [0, 20, 0]}]}})");
  SimRequest request;
  request.scene = path("scene.json");
  request.out = path("fast.pc2");
  const SimResult r = run_sim_file(request);
  ASSERT_TRUE(r.smoke);
  EXPECT_GT(r.smoke->substeps, r.smoke->steps);
  EXPECT_GT(r.smoke->steps_split, 0);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("split into"), std::string::npos) << r.warnings[0];
  EXPECT_TRUE(std::isfinite(r.smoke->smoke_mass));
  for (const std::string& file : r.smoke->paths)  // read_vdb refuses non-finite values
    EXPECT_NO_THROW(read_vdb(file)) << file;
}

TEST_F(SimSmoke, ABadSourceOrOutputWritesNothing) {
  write_file_atomically(path("scene.json"), R"({"duration": 0.2, "fps": 10,
    "smoke": {"domain": {"min": [0, 0, 0], "max": [1, 1, 1]}, "resolution": 16,
              "sources": [{"centre": [0.5, 0.2, 0.5], "radius": 0.1},
                          {"centre": [0.5, -2, 0.5], "radius": 0.5}]}})");
  SimRequest request;
  request.scene = path("scene.json");
  request.out = path("out.pc2");
  try {
    run_sim_file(request);
    ADD_FAILURE() << "ran a source outside the domain";
  } catch (const Error& e) {
    EXPECT_EQ(e.place(), "/smoke/sources/1");
  }
  EXPECT_EQ(file_count(), 1u);
  // A .vdb OUT is for smoke alone.
  write_file_atomically(path("cloth.json"), R"({"duration": 0.2, "fps": 10,
    "cloth": [{"grid": {"columns": 3, "rows": 3, "width": 1, "height": 1}}],
    "smoke": {"domain": {"min": [0, 0, 0], "max": [1, 1, 1]}, "resolution": 16,
              "sources": [{"centre": [0.5, 0.2, 0.5], "radius": 0.1}]}})");
  request.scene = path("cloth.json");
  request.out = path("out_%04d.vdb");
  EXPECT_THROW(run_sim_file(request), UsageError);
  EXPECT_EQ(file_count(), 2u);
}

TEST_F(SimSmoke, TheFramesDoNotDependOnTheThreadCount) {
  write_file_atomically(path("scene.json"), kPlume);
  SimRequest request;
  request.scene = path("scene.json");
  request.out = path("one.pc2");
  request.threads = 1;
  run_sim_file(request);
  request.out = path("two.pc2");
  request.threads = 2;
  run_sim_file(request);
  EXPECT_EQ(read_vdb(path("one_smoke_0005.vdb"))[0].values,
            read_vdb(path("two_smoke_0005.vdb"))[0].values);
}

// ---- mesh obstacles in liquids (SPH boundary particles) ----

// Water dropped from 5 cm onto a closed OBJ cube (0.2 m) standing in a 0.4 m tank.
const char* const kDropOnACube = R"({
  "duration": 0.3, "fps": 10, "rate": 60,
  "liquid": {"spacing": 0.02, "viscosity": 0.02,
             "tank": {"min": [0, 0, 0], "max": [0.4, 0.45, 0.12]},
             "obstacles": [{"mesh": "rock.obj", "offset": [0.2, 0.1, 0.06]}],
             "blocks": [{"min": [0.12, 0.25, 0], "max": [0.28, 0.35, 0.12]}]}
})";

TEST_F(SimSmoke, LiquidWaterFallingOnAnObjCubeStaysOutOfIt) {
  write_file_atomically(path("rock.obj"), obj_cube());
  write_file_atomically(path("scene.json"), kDropOnACube);
  const SimScene s = parse_sim_scene(kDropOnACube, path("scene.json"));
  ASSERT_TRUE(s.liquid);
  ASSERT_EQ(s.liquid->obstacles.size(), 1u);
  EXPECT_EQ(s.liquid->obstacles[0].center, (Vec3{0.2, 0.1, 0.06}));
  SimRequest request;
  request.scene = path("scene.json");
  request.out = path("water.pc2");
  request.threads = 1;
  const SimResult r = run_sim_file(request);
  ASSERT_TRUE(r.liquid);
  // The tank's walls and the cube's 3 layers (a 10³ lattice less its 4³ core).
  const size_t tank = sph_box_boundary({0, 0, 0}, {0.4, 0.45, 0.12}, 0.02, 3, 3, true).size();
  EXPECT_EQ(r.liquid->boundary_particles, tank + 10 * 10 * 10 - 4 * 4 * 4);
  const PointCache cache = read_pc2(r.liquid->cache_path);
  ASSERT_EQ(cache.samples(), 4);
  const auto& sdf = *s.liquid->obstacles[0].sdf;
  double deepest = 0;
  size_t below_start = 0;
  for (int i = 0; i < cache.points; ++i) {
    const Vec3 p(cache.at(3, i));
    deepest = std::min(deepest, sdf.distance(p - Vec3{0.2, 0.1, 0.06}));
    below_start += p.y < 0.25;
  }
  EXPECT_GT(below_start, size_t(cache.points) / 2) << "the water fell onto the cube";
  EXPECT_GT(deepest, -0.01) << "a particle went into the cube";
}

TEST_F(SimSmoke, LiquidOpenObstacleMeshIsRefusedAndNothingIsWritten) {
  write_file_atomically(path("rock.obj"), obj_cube(11));
  write_file_atomically(path("scene.json"), kDropOnACube);
  SimRequest request;
  request.scene = path("scene.json");
  request.out = path("water.pc2");
  try {
    run_sim_file(request);
    ADD_FAILURE() << "ran with an open obstacle mesh";
  } catch (const Error& e) {
    EXPECT_EQ(e.place(), "/liquid/obstacles/0");
    EXPECT_NE(e.reason().find(path("rock.obj")), std::string::npos) << e.what();
    EXPECT_NE(e.reason().find("not closed: 3 open edges"), std::string::npos) << e.what();
  }
  EXPECT_EQ(file_count(), 2u);  // the scene and the mesh
  refuses(R"({"liquid": {"solver": "flip", "tank": {"min": [0, 0, 0], "max": [1, 1, 1]},
              "blocks": [{"min": [0, 0, 0], "max": [0.5, 0.5, 0.5]}],
              "obstacles": [{"mesh": "rock.obj"}]}})",
          "/liquid/obstacles", "not \"flip\"");
}

}  // namespace
}  // namespace kinema::pipeline
