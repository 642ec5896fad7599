// Liquids in `kinema sim` scenes: parsed with errors at JSON pointers, run on the scene's clock
// (a column of water collapsing in a tank of boundary particles), written as a point cache with
// its sidecar and, when asked, a surface per frame (read back here).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>

#include "kinema/character/asset.h"
#include "kinema/core/error.h"
#include "kinema/core/file.h"
#include "kinema/fluid/marching_cubes.h"
#include "kinema/io/asset_file.h"
#include "kinema/io/particle_sidecar.h"
#include "kinema/io/point_cache.h"
#include "kinema/pipeline/job.h"
#include "kinema/pipeline/sim.h"
#include "pipeline/pipeline_test_util.h"

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

// A 0.16 × 0.24 × 0.12 m column of water at the left of a 0.4 m tank, 2 cm apart: 576 particles.
const char* const kDamBreak = R"({
  "duration": 0.3, "fps": 10, "rate": 60,
  "liquid": {"spacing": 0.02, "viscosity": 0.02,
             "tank": {"min": [0, 0, 0], "max": [0.4, 0.4, 0.12]},
             "blocks": [{"min": [0, 0, 0], "max": [0.16, 0.24, 0.12]}],
             "surface": true, "colour": [0.1, 0.3, 0.9]}
})";

TEST(SimLiquidScene, ReadsTheTankBlocksAndSolverAndGivesTheDomainRoomAboveTheTank) {
  const SimScene s = parse_sim_scene(kDamBreak, "scene.json");
  ASSERT_TRUE(s.liquid);
  const SimSceneLiquid& l = *s.liquid;
  EXPECT_EQ(l.options.spacing, 0.02);
  EXPECT_EQ(l.options.solver, SphSolver::WeaklyCompressible);
  EXPECT_EQ(l.options.gravity, (Vec3{0, -9.8, 0}));  // the scene's
  ASSERT_EQ(l.blocks.size(), 1u);
  EXPECT_TRUE(l.tank);
  EXPECT_TRUE(l.surface);
  // The domain holds the tank, its 3 layers of wall, and half the tank's height again above.
  EXPECT_LT(l.options.domain_min.x, -0.06);
  EXPECT_GT(l.options.domain_max.y, 0.6);
  const SimScene pbf = parse_sim_scene(R"({"liquid": {"solver": "position_based",
      "domain": {"min": [-1, -1, -1], "max": [1, 1, 1]},
      "blocks": [{"min": [0, 0, 0], "max": [0.1, 0.1, 0.1], "velocity": [1, 0, 0]}]}})",
                                       "scene.json");
  EXPECT_EQ(pbf.liquid->options.solver, SphSolver::PositionBased);
  EXPECT_EQ(pbf.liquid->blocks[0].velocity, (Vec3{1, 0, 0}));
  EXPECT_FALSE(pbf.liquid->tank);
}

TEST(SimLiquidScene, BadLiquidsAreRefusedAtTheirJsonPointer) {
  const std::string box = R"("domain": {"min": [0, 0, 0], "max": [1, 1, 1]})";
  const std::string block = R"("blocks": [{"min": [0, 0, 0], "max": [0.1, 0.1, 0.1]}])";
  refuses(R"({"liquid": {"viscoity": 1, )" + box + ", " + block + "}}", "/liquid/viscoity",
          "unknown key");
  refuses(R"({"liquid": {"solver": "mpm", )" + box + ", " + block + "}}", "/liquid/solver",
          "unknown solver");
  refuses(R"({"liquid": {"solver": "flip", "xsph": 0.1, )" + box + ", " + block + "}}",
          "/liquid/xsph", "for the SPH solvers");
  refuses(R"({"liquid": {"flip_ratio": 0.9, )" + box + ", " + block + "}}", "/liquid/flip_ratio",
          "is for \"solver\": \"flip\"");
  refuses(R"({"liquid": {"solver": "flip", "flip_ratio": 2, )" + box + ", " + block + "}}",
          "/liquid/flip_ratio", "between 0 and 1");
  refuses(R"({"liquid": {"solver": "flip", "cell_size": 0.0009, )" + box +
              R"(, "blocks": [{"min": [0, 0, 0], "max": [0.01, 0.01, 0.01]}]}})",
          "/liquid/cell_size", "at most 1024");
  refuses(R"({"liquid": {)" + block + "}}", "/liquid/domain", "needs a \"domain\" or a \"tank\"");
  refuses(R"({"liquid": {)" + box + "}}", "/liquid/blocks", "non-empty array");
  refuses(R"({"liquid": {)" + box + R"(, "blocks": [{"min": [0.5, 0, 0], "max": [1.5, 1, 1]}]}})",
          "/liquid/blocks/0", "outside the liquid's domain");
  refuses(R"({"liquid": {)" + box + R"(, "blocks": [{"min": [0, 0, 0], "max": [0, 1, 1]}]}})",
          "/liquid/blocks/0/max", "must exceed");
  refuses(R"({"liquid": {"spacing": -0.1, )" + box + ", " + block + "}}", "/liquid/spacing",
          "must be >");
  refuses(R"({"liquid": {"colour": [1, -1, 0], )" + box + ", " + block + "}}", "/liquid/colour",
          "≥ 0");
  refuses(R"({"liquid": {"spacing": 0.0005, )" + box + R"(, "blocks": [{"min": [0, 0, 0],
          "max": [1, 1, 1]}]}})",
          "/liquid/blocks", "more than 2 million");
  refuses(
      R"({"liquid": {"tank": {"min": [0, 0, 0], "max": [1, 1, 1], "layers": 0}, )" + block + "}}",
      "/liquid/tank/layers", "between 1 and 6");
}

TEST(SimLiquidScene, FlipTakesItsGridFromTheTankAndTheCollidersAsSolids) {
  const SimScene s = parse_sim_scene(R"({"colliders": [
      {"shape": "sphere", "centre": [0.3, 0.1, 0.06], "radius": 0.05},
      {"shape": "capsule", "a": [0.1, 0.3, 0], "b": [0.3, 0.3, 0], "radius": 0.04},
      {"shape": "plane", "normal": [1, 1, 0]}],
    "liquid": {"solver": "flip", "spacing": 0.02, "flip_ratio": 0.9,
               "tank": {"min": [0, 0, 0], "max": [0.4, 0.4, 0.12]},
               "blocks": [{"min": [0, 0, 0], "max": [0.16, 0.24, 0.12]}]}})",
                                     "scene.json");
  ASSERT_TRUE(s.liquid);
  const SimSceneLiquid& l = *s.liquid;
  EXPECT_TRUE(l.flip);
  const FlipOptions& f = l.flip_options;
  EXPECT_DOUBLE_EQ(f.dx, 0.04);  // 2 × spacing
  EXPECT_EQ(f.flip_ratio, 0.9);
  EXPECT_EQ(f.gravity, (Vec3{0, -9.8, 0}));
  EXPECT_EQ(f.origin, (Vec3{0, 0, 0}));  // the grid's border is the tank's walls
  EXPECT_EQ(f.nx, 10);
  EXPECT_EQ(f.ny, 15);  // the tank and half its height above
  EXPECT_EQ(f.nz, 3);
  ASSERT_GT(f.solids.size(), 3u);  // the sphere, the capsule as a row of spheres
  EXPECT_EQ(f.solids[0].shape, FlipSolidShape::Sphere);
  EXPECT_EQ(l.planes_skipped, 1u);
}

class SimLiquid : public test::PipelineTest {};

TEST_F(SimLiquid, AFlipColumnCollapsesInsideItsTankAndIsWrittenLikeSph) {
  write_file_atomically(path("scene.json"), R"({"duration": 0.3, "fps": 10, "rate": 60,
    "liquid": {"solver": "flip", "spacing": 0.02,
               "tank": {"min": [0, 0, 0], "max": [0.4, 0.4, 0.12]},
               "blocks": [{"min": [0, 0, 0], "max": [0.16, 0.24, 0.12]}], "surface": true}})");
  SimRequest request;
  request.scene = path("scene.json");
  request.out = path("water.pc2");
  request.threads = 1;
  const SimResult r = run_sim_file(request);
  ASSERT_TRUE(r.liquid);
  const SimLiquidResult& l = *r.liquid;
  EXPECT_TRUE(l.flip);
  EXPECT_EQ(l.particles, 4u * 6u * 3u * 8u);  // 8 a cell of 4 cm
  EXPECT_EQ(l.steps, 18);
  EXPECT_GE(l.substeps, l.steps);
  EXPECT_GT(l.fastest, 0.5);
  EXPECT_TRUE(r.warnings.empty());
  const PointCache cache = read_pc2(l.cache_path);
  ASSERT_EQ(cache.points, int(l.particles));
  ASSERT_EQ(cache.samples(), 4);
  double first_x = 0, last_x = 0;
  for (int i = 0; i < cache.points; ++i) {
    first_x += cache.positions[size_t(i)].x;
    const Vec3f p = cache.positions[size_t(3 * cache.points + i)];
    last_x += p.x;
    EXPECT_TRUE(p.x >= 0 && p.x <= 0.4f && p.y >= 0 && p.z >= 0 && p.z <= 0.12f)
        << "particle " << i << " at " << p.x << ", " << p.y << ", " << p.z;
  }
  EXPECT_GT(last_x, first_x + 0.02 * cache.points) << "the column spreads to the right";
  EXPECT_EQ(read_particle_sidecar(l.sidecar_path).points.size(), l.particles);
  const Asset surface = load_asset(l.surface_path);
  EXPECT_EQ(surface.meshes.size(), 4u);
}

TEST_F(SimLiquid, AWaterColumnCollapsesInsideItsTankAndIsWrittenWithItsSurface) {
  write_file_atomically(path("scene.json"), kDamBreak);
  SimRequest request;
  request.scene = path("scene.json");
  request.out = path("water.pc2");
  request.threads = 1;
  const SimResult r = run_sim_file(request);
  ASSERT_TRUE(r.liquid);
  const SimLiquidResult& l = *r.liquid;
  EXPECT_EQ(l.particles, 8u * 12u * 6u);
  EXPECT_GT(l.boundary_particles, 1000u);
  EXPECT_EQ(l.cache_path, path("water.pc2"));  // the liquid is all the scene writes
  EXPECT_EQ(l.steps, 18);
  EXPECT_GE(l.substeps, l.steps);
  EXPECT_LT(l.largest_compression, 0.05);  // weakly compressible: a few per cent at most
  EXPECT_GT(l.fastest, 0.5);               // a 0.24 m column falls at about √(2gH) ≈ 2 m/s

  const PointCache cache = read_pc2(l.cache_path);
  ASSERT_EQ(cache.points, int(l.particles));
  ASSERT_EQ(cache.samples(), 4);
  double first_x = 0, last_x = 0;
  for (int i = 0; i < cache.points; ++i) {
    first_x += cache.positions[size_t(i)].x;
    const Vec3f p = cache.positions[size_t(3 * cache.points + i)];
    last_x += p.x;
    // The tank holds it (a particle may sit half a spacing into a wall's kernel, not through it).
    EXPECT_TRUE(p.x > -0.01f && p.x < 0.41f && p.y > -0.01f && p.z > -0.01f && p.z < 0.13f)
        << "particle " << i << " at " << p.x << ", " << p.y << ", " << p.z;
  }
  EXPECT_GT(last_x, first_x + 0.02 * cache.points) << "the column spreads to the right";
  const ParticleSidecar sidecar = read_particle_sidecar(l.sidecar_path);
  EXPECT_EQ(sidecar.points.size(), l.particles);
  EXPECT_FLOAT_EQ(sidecar.colour[2].at(0.5f, 1), 0.9f);
  EXPECT_TRUE(std::filesystem::exists(l.mesh_path));

  // The surface: a closed mesh at every frame, each node shown only at its own frame.
  const Asset surface = load_asset(l.surface_path);
  ASSERT_EQ(surface.meshes.size(), 4u);
  for (const Mesh& m : surface.meshes) {
    SurfaceMesh s;
    s.positions = m.positions;
    s.triangles = m.indices;
    EXPECT_TRUE(is_watertight(s)) << m.name;
    EXPECT_GT(s.triangle_count(), 100u) << m.name;
  }
  ASSERT_EQ(surface.clips.size(), 1u);
  const int node = surface.skeleton.find("liquid_0001");
  ASSERT_GE(node, 0);
  const JointTrack& second = surface.clips[0].tracks.at(size_t(node));
  EXPECT_EQ(second.scale.interpolation, Interpolation::Step);
  EXPECT_EQ(second.scale.values.front(), (Vec3{0, 0, 0}));  // hidden at frame 0
}

TEST_F(SimLiquid, TheResultDoesNotDependOnTheThreadCount) {
  write_file_atomically(path("scene.json"), R"({"duration": 0.1, "fps": 10, "rate": 60,
    "liquid": {"spacing": 0.03, "tank": {"min": [0, 0, 0], "max": [0.3, 0.3, 0.15]},
               "blocks": [{"min": [0, 0, 0], "max": [0.12, 0.18, 0.15]}]}})");
  SimRequest request;
  request.scene = path("scene.json");
  request.out = path("one.pc2");
  request.threads = 1;
  run_sim_file(request);
  request.out = path("two.pc2");
  request.threads = 2;
  run_sim_file(request);
  EXPECT_EQ(read_file(path("one.pc2")), read_file(path("two.pc2")));
}

TEST_F(SimLiquid, ALiquidAloneIsAPointCacheNotAGltf) {
  write_file_atomically(path("scene.json"), kDamBreak);
  SimRequest request;
  request.scene = path("scene.json");
  request.out = path("water.glb");
  EXPECT_THROW(run_sim_file(request), UsageError);
  EXPECT_EQ(file_count(), 1u);  // the scene alone: nothing written
}

}  // namespace
}  // namespace kinema::pipeline
