// Liquids in `kinema sim` scenes (module-private): their part of the scene (read_liquid) and
// their run and outputs (LiquidRun) — SPH particles as a point cache, surfaces as glTF — beside
// the cloths, bodies and rigid bodies of sim_scene.cpp, sim_bodies.cpp and sim_rigid.cpp.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kinema/fluid/flip.h"
#include "kinema/fluid/marching_cubes.h"
#include "kinema/fluid/sph.h"
#include "kinema/io/point_cache.h"
#include "kinema/physics/collider.h"
#include "kinema/pipeline/sim.h"
#include "sim_scene_reader.h"

namespace kinema::pipeline {

/// The scene's `liquid` object at pointer `p`. Throws kinema::Error at the JSON pointer of the
/// value at fault: unknown keys, a solver that is not "weakly_compressible", "position_based" or
/// "flip", an SPH option given to FLIP or a FLIP option to SPH, no blocks, a block or tank outside
/// the domain, more than 2 million particles, and every check SphFluid makes of its options
/// (FlipLiquid's are made when the run starts, at the same pointer).
SimSceneLiquid read_liquid(const SceneReader& r, const nlohmann::json& j, const std::string& p,
                           const Vec3& gravity, const std::vector<Collider>& colliders);

/// The scene's liquid stepped on the scene's clock and drawn at every frame.
class LiquidRun {
 public:
  /// `cache_path`: sim_liquid_cache_path; `scene_file` names the scene in errors; `threads` for
  /// the SPH or FLIP passes (0: all cores).
  LiquidRun(const SimSceneLiquid& liquid, const std::string& cache_path,
            const std::string& scene_file, int threads);
  /// One step of h seconds with `moving` colliders (the character's capsules, the rigid bodies)
  /// besides the scene's; `last_of_frame`: the frame is drawn between this step's ends.
  void step(double h, const std::vector<Collider>& moving, bool last_of_frame);
  /// Draws a frame α of the way between the last step's ends (`stepped`: a step ran this frame),
  /// and meshes its surface when asked. Throws kinema::Error (the scene, "/liquid") when a
  /// particle's position is not finite.
  void record(double alpha, bool stepped);
  /// The result with the end state's compression measured.
  SimLiquidResult finish();
  /// Writes the point cache, its rest OBJ and sidecar, and the surfaces (each atomically).
  void write(int fps) const;

 private:
  std::vector<Vec3> positions_by_id() const;
  const SimSceneLiquid& liquid_;
  std::string scene_file_;
  std::optional<SphFluid> sph_;
  std::optional<FlipLiquid> flip_;
  std::vector<Vec3> before_;  ///< by particle id, before the frame's last step
  PointCache cache_;
  std::vector<Vec3> rest_;
  std::vector<SurfaceMesh> surfaces_;
  SimLiquidResult result_;
};

}  // namespace kinema::pipeline
