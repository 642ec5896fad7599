// Soft bodies and hair in `kinema sim` scenes (module-private): their part of the scene
// (sim_bodies_scene.cpp) and their run and outputs (sim_bodies.cpp), beside the cloths, particles
// and character of sim_scene.cpp and sim.cpp.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kinema/character/asset.h"
#include "kinema/io/point_cache.h"
#include "kinema/math/mat4.h"
#include "kinema/pipeline/sim.h"
#include "morph_frames.h"
#include "sim_scene_reader.h"

namespace kinema::pipeline {

/// `soft_bodies/N` of a scene at pointer `p`: a box or inline tetrahedra, options, pins, the
/// joint it follows (`character` may be null). The scene's gravity and colliders go into its
/// options. Throws kinema::Error at the pointer of the value at fault.
SimSceneSoftBody read_soft_body(const SceneReader& r, const nlohmann::json& j, const std::string& p,
                                const Vec3& gravity, const std::vector<Collider>& colliders,
                                const SimSceneCharacter* character, size_t index);

/// The scene's `hair` at pointer `p`: guides grown from explicit roots or from the skin of a
/// character's joint, options and children.
SimSceneHair read_hair(const SceneReader& r, const nlohmann::json& j, const std::string& p,
                       const Vec3& gravity, const std::vector<Collider>& colliders,
                       const SimSceneCharacter* character);

/// What soft bodies and hair take from the scene's character at a step.
struct CharacterNow {
  std::span<const Collider> colliders;  ///< posed for the step
  std::function<Mat4(int)> from_rest;   ///< joint j's motion from the bind pose to now
};

/// Every soft body of a scene stepped on the scene's clock, drawn at each frame (only the
/// surface's vertices, renumbered in order) and written.
class SoftBodyRuns {
 public:
  /// `character`: the character at the first frame (null without one): bodies with a joint are
  /// carried from the bind pose to it. `outputs`: cloths and soft bodies (for the names).
  SoftBodyRuns(const SimScene& scene, const std::string& out, bool gltf, size_t outputs,
               const CharacterNow* character, int frames);
  /// One step of h seconds; `last_of_frame`: the frame is drawn between this step's ends.
  void step(double h, const CharacterNow* character, bool last_of_frame);
  /// Draws a frame α of the way between the last step's ends (`stepped`: a step ran this frame).
  void record(double alpha, bool stepped);
  /// The results with their end figures.
  std::vector<SimSoftBodyResult> finish();
  /// The surfaces as meshes (for glTF).
  const std::vector<MeshFrames>& meshes() const { return meshes_; }
  /// Writes each body's point cache and rest surface (OBJ).
  void write_caches() const;

 private:
  const SimScene& scene_;
  std::vector<SoftBody> bodies_;
  std::vector<std::vector<std::uint32_t>> surface_;  ///< per body: tet vertex of written vertex
  std::vector<std::vector<Vec3>> before_;            ///< per body: before the frame's last step
  std::vector<PointCache> caches_;
  std::vector<MeshFrames> meshes_;
  std::vector<SimSoftBodyResult> results_;
};

/// The scene's hair stepped on the scene's clock: guides simulated, children interpolated, every
/// strand drawn at each frame and written as a point cache with its rest polylines.
class HairRun {
 public:
  HairRun(const SimSceneHair& hair, const std::string& cache_path, const CharacterNow* character,
          int frames);
  void step(double h, const CharacterNow* character, bool last_of_frame);
  void record(double alpha, bool stepped);
  SimHairResult finish() const { return result_; }
  void write_cache() const;

 private:
  /// Guides' points then children's, now.
  std::vector<Vec3> strands_now() const;
  SimSceneHair hair_;  ///< carried to the first frame when it follows a joint
  HairSystem system_;
  HairChildren children_;
  Mat4 start_inverse_ = Mat4::identity();  ///< of the joint's motion at the first frame
  std::vector<Vec3> before_;
  std::vector<std::vector<std::uint32_t>> polylines_;
  std::vector<Vec3> rest_;
  PointCache cache_;
  SimHairResult result_;
};

/// Checks the soft bodies' and hair's outputs for OUT before anything runs (UsageError: one is
/// SCENE, or hair alone asked as glTF; kinema::Error: a cloth or soft body named "hair" would
/// share the hair's cache) and returns the hair's cache path (empty without hair).
std::string check_body_outputs(const SimRequest& request, const SimScene& scene, bool gltf);

/// One step of every soft body and the hair (`character` empty without one).
void step_bodies(SoftBodyRuns& soft_bodies, std::optional<HairRun>& hair, double h,
                 const std::optional<CharacterNow>& character, bool last_of_frame);

/// Draws a frame of every soft body and the hair.
void record_bodies(SoftBodyRuns& soft_bodies, std::optional<HairRun>& hair, double alpha,
                   bool stepped);

}  // namespace kinema::pipeline
