// Rigid bodies and joints in `kinema sim` scenes (module-private): their part of the scene
// (read_rigid) and their run and glTF output (RigidRun), beside the cloths, soft bodies and
// particles of sim_scene.cpp, sim_bodies.cpp and sim.cpp.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kinema/character/asset.h"
#include "kinema/physics/cloth.h"
#include "kinema/physics/collider.h"
#include "kinema/pipeline/sim.h"
#include "sim_scene_reader.h"

namespace kinema::pipeline {

/// The first mesh of a file (sim_scene.cpp), vertices welded where they coincide.
ClothMesh read_mesh_file(const SceneReader& r, const std::string& path, const std::string& name,
                         const std::string& p);

/// The scene's `rigid_bodies`, `joints` and `rigid_solver` (from the scene's root object `j`),
/// with the scene's colliders added as static bodies that are not drawn. Throws kinema::Error at
/// the JSON pointer of the value at fault.
void read_rigid(const SceneReader& r, const nlohmann::json& j, const std::string& folder,
                const Vec3& gravity, const std::vector<Collider>& colliders, SimScene& scene);

/// A triangle mesh that draws `shape` (shape frame, outward normals): boxes and hulls faceted,
/// spheres, capsules and cylinders smooth with `segments` around.
Mesh rigid_shape_mesh(const RigidShape& shape, int segments = 24);

/// The scene's rigid world stepped on the scene's clock and drawn at every frame.
class RigidRun {
 public:
  /// `threads` for the world's parallel parts (RigidWorldSettings::threads; 0: all cores).
  RigidRun(const SimScene& scene, std::string path, int frames, int threads);
  /// One step of h seconds; `last_of_frame`: the frame is drawn between this step's ends.
  void step(double h, bool last_of_frame);
  /// Draws a frame α of the way between the last step's ends (`stepped`: a step ran this frame).
  void record(double alpha, bool stepped);
  const SimRigidResult& result() const { return result_; }
  /// A glued joint that broke in the last step, with debris to throw: where, how fast the two
  /// pieces moved, and what to throw.
  struct Break {
    Vec3 point, velocity;
    SimDebris debris;
    JointId joint = 0;
  };
  const std::vector<Break>& breaks() const { return breaks_; }
  /// The drawn bodies where they are now, as colliders the cloths and particles cannot enter:
  /// spheres, boxes and capsules as themselves, hulls and cylinders as the box around them in
  /// their own frame; triangle meshes and height fields are left out (appended to `out`).
  void add_colliders(std::vector<Collider>& out) const;
  /// Writes the glTF (OUT or OUT_rigid.glb): every drawn body a node with its shape's mesh and one
  /// clip "simulation" keying each node's translation and rotation at every frame.
  void write(int fps) const;

 private:
  const SimScene& scene_;
  RigidWorld world_;
  std::vector<Vec3> before_position_;
  std::vector<Quat> before_rotation_;
  std::vector<std::vector<Transform>> frames_;  ///< per drawn body: its shape's pose per frame
  SimRigidResult result_;
  std::vector<Vec3> anchor_in_a_;  ///< per joint: its anchor in body a's frame (from the COM)
  std::vector<char> broken_;       ///< per joint: broken before this step
  std::vector<Break> breaks_;
};

}  // namespace kinema::pipeline
