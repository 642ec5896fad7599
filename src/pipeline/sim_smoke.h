// Smoke and fire in `kinema sim` scenes (module-private): their part of the scene (read_smoke)
// and their run and outputs (SmokeRun) — a kinema::GridFluid on the scene's clock, written as an
// OpenVDB sequence — beside the liquids of sim_liquid.cpp.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kinema/fluid/grid_fluid.h"
#include "kinema/fluid/volume_file.h"
#include "kinema/physics/collider.h"
#include "kinema/pipeline/sim.h"
#include "sim_scene_reader.h"
#include "staged_outputs.h"

namespace kinema::pipeline {

/// The scene's `smoke` object at pointer `p`. Throws kinema::Error at the JSON pointer of the
/// value at fault: unknown keys, a domain that is empty or too fine (more than 16.8 million
/// cells), both "resolution" and "cell_size", a boundary that is not "wall" or "open", an unknown
/// advection scheme or source shape, negative coefficients, no sources, a source wholly outside
/// the domain or too small to hold a cell's centre, a source whose "end" is not after its "start",
/// an obstacle mesh that cannot be read (at …/obstacles/i/mesh) or does not bound a volume — open
/// edges, non-manifold or inconsistently wound edges, degenerate triangles — (at …/obstacles/i,
/// naming the file and, when open, the number of open edges). Mesh obstacles ("obstacles":
/// [{"mesh": "rock.obj", "offset": [x, y, z]}], paths relative to the scene's folder) are static
/// and come after the colliders in options.obstacles.
SimSceneSmoke read_smoke(const SceneReader& r, const nlohmann::json& j, const std::string& p,
                         const std::vector<Collider>& colliders);

/// An `obstacles` array at pointer `p` (the smoke's, the liquid's): [{"mesh": FILE, "offset":
/// [x, y, z]}], each a closed mesh file (OBJ, or any file the cloth reads; the path relative to
/// the scene's folder, vertices welded where they coincide) moved by "offset" (m, default 0),
/// appended to `obstacles` as a static FluidRegion::mesh. Throws kinema::Error at
/// …/obstacles/i/mesh for a missing or unreadable file, at …/obstacles/i for a mesh that does not
/// bound a volume (naming the file and, when open, its open-edge count), at unknown keys.
void read_mesh_obstacles(const SceneReader& r, const nlohmann::json& j, const std::string& p,
                         std::vector<FluidObstacle>& obstacles);

/// The region a collider fills inside the box lo…hi, as GridFluid voxelizes it: spheres and
/// capsules as themselves, boxes axis-aligned (a turned box: the axis-aligned box around it), a
/// plane whose normal is along an axis as the box of the domain behind it (grown by one cell
/// `margin`). False for a tilted plane (not an obstacle).
bool collider_region(const Collider& c, const Vec3& lo, const Vec3& hi, double margin,
                     FluidRegion& region);

/// The scene's smoke stepped on the scene's clock; each frame written (staged under a hidden name
/// beside its target) as it is drawn and moved into place by commit() once the whole run has
/// succeeded — destroyed before that, it removes what it staged.
class SmokeRun {
 public:
  /// `pattern`: sim_smoke_path; `scene_file` names the scene in errors; `threads` for the grid
  /// (0: all cores). Draws frame 0 (the start, before any source).
  SmokeRun(const SimSceneSmoke& smoke, const std::string& pattern, const std::string& scene_file,
           int threads);
  SmokeRun(const SmokeRun&) = delete;
  SmokeRun& operator=(const SmokeRun&) = delete;
  /// Where the moving colliders are at the start (their first step's velocities come from here).
  void start_moving(const std::vector<Collider>& moving);
  /// One step of h seconds from time t with `moving` colliders (the character's capsules, the
  /// rigid bodies: their velocities from their motion since the last step); `last_of_frame`: the
  /// frame is drawn between this step's ends.
  void step(double t, double h, const std::vector<Collider>& moving, bool last_of_frame);
  /// Draws frame `frame` (at `time` s) α of the way between the last step's ends (`stepped`: a
  /// step ran this frame) and stages its VDB. Throws kinema::Error (the scene, "/smoke") when a
  /// value is not finite.
  void record(int frame, double time, double alpha, bool stepped);
  SimSmokeResult finish() const { return result_; }
  /// Moves every staged frame into place.
  void commit() { staged_.commit(); }

 private:
  const SimSceneSmoke& smoke_;
  std::string scene_file_;
  GridFluid fluid_;
  std::vector<double> density_before_, temperature_before_, fuel_before_;
  std::vector<std::pair<Vec3, int>> last_moving_;  ///< centres and shapes of the last moving ones
  StagedOutputs staged_;   ///< the frames written so far, under hidden names
  double fuel_scale_ = 1;  ///< 1 / the sources' largest fuel: "flame" is fuel in 0…1
  SimSmokeResult result_;
};

}  // namespace kinema::pipeline
