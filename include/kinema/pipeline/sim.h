// kinema/pipeline/sim.h — `kinema sim SCENE.json -o OUT.pc2|.glb` as a library call: a JSON scene
// of cloths and colliders run on the fixed-step clock, each cloth's vertices written per frame as a
// PC2 point cache with its rest mesh as OBJ beside it (Blender: import the OBJ, add a Mesh Cache
// modifier reading the PC2). docs/physics.md describes the scene format.
#pragma once

#include <array>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kinema/character/asset.h"
#include "kinema/fluid/flip.h"
#include "kinema/fluid/grid_fluid.h"
#include "kinema/fluid/sph.h"
#include "kinema/physics/cloth.h"
#include "kinema/physics/hair.h"
#include "kinema/physics/mass_properties.h"
#include "kinema/physics/particles.h"
#include "kinema/physics/rigid_joint.h"
#include "kinema/physics/rigid_world.h"
#include "kinema/physics/soft_body.h"
#include "kinema/pipeline/job.h"

namespace kinema::pipeline {

/// One cloth of a scene: its mesh and options, and the name its outputs carry.
struct SimSceneCloth {
  std::string name;
  ClothMesh mesh;
  ClothOptions options;
  /// Vertices that follow the character (the cloth is authored around its bind pose): with
  /// `attach_joint`, rigidly with that joint (pins moved every step: a cape on the chest); without,
  /// each with its nearest skinned vertex, keeping its offset (ClothOptions::attachments).
  std::vector<std::uint32_t> attach_to_skin;
  int attach_joint = -1;          ///< -1: none
  std::string attach_joint_name;  ///< as the scene names it
};

/// One soft body of a scene (`soft_bodies`): its tetrahedra (a box or inline), options (colliders:
/// the scene's; the character's are added every step) and the name its outputs carry.
struct SimSceneSoftBody {
  std::string name;
  TetMesh mesh;
  SoftBodyOptions options;
  /// With a character: the body is authored around its bind pose, carried to the first frame by
  /// this joint and its pinned vertices follow the joint rigidly every step. -1: none (the body
  /// stays where it is authored, its pins fixed).
  int attach_joint = -1;
  std::string attach_joint_name;  ///< as the scene names it
};

/// The hair of a scene (`hair`): guide strands grown from roots, simulated, and children
/// interpolated from them. Roots follow `joint` rigidly (HairSystem::set_head) when there is one.
struct SimSceneHair {
  std::vector<std::vector<Vec3>> guides;  ///< rest strands, root first (bind pose with a joint)
  HairOptions options;                    ///< colliders: the scene's (the character's added)
  std::vector<Vec3> child_roots;          ///< `children` around each guide's root
  int child_points = 0;                   ///< points per child strand
  int joint = -1;                         ///< -1: roots fixed in the world
  std::string joint_name;
};

/// A liquid (`liquid`): SPH particles (kinema/fluid/sph.h) filling boxes, held by a tank of
/// boundary particles and the domain, pushed aside by the scene's and the character's colliders;
/// or, with "solver": "flip", FLIP particles (kinema/fluid/flip.h) on a grid over the domain.
struct SimSceneLiquid {
  SphOptions options;  ///< gravity: the scene's; domain: `domain`, else the tank with a margin
  /// "solver": "flip": a kinema::FlipLiquid runs instead, its grid over the domain (options'
  /// domain_min…domain_max; with a tank and no domain: the tank with half its height again above,
  /// whose border is the tank's walls) in cells of `cell_size` (default 2 × spacing, 2 particles
  /// a cell and axis); its solids: the scene's spheres, boxes (a turned box: the axis-aligned box
  /// around it), capsules (as spheres along them) and planes along an axis (the box behind).
  /// FLIP has no moving solids: the character and the rigid bodies do not push it.
  bool flip = false;
  FlipOptions flip_options;   ///< gravity: the scene's
  size_t planes_skipped = 0;  ///< FLIP: tilted planes (no solid)
  struct Block {
    Vec3 min, max;  ///< m, filled on a lattice of the spacing
    Vec3 velocity;  ///< m/s, at the start
  };
  std::vector<Block> blocks;
  bool tank = false;  ///< boundary particles line the box tank_min…tank_max (open top)
  Vec3 tank_min, tank_max;
  int tank_layers = 3;
  bool surface = false;        ///< also a marching-cubes surface per frame (OUT_liquid_surface.glb)
  double surface_spacing = 0;  ///< m, the surface grid's; 0: half the particle spacing
  std::array<float, 3> colour{0.10f, 0.32f, 0.80f};  ///< linear RGB the cache's sidecar draws
  std::vector<Collider> colliders;                   ///< the scene's
  /// "obstacles" (SPH only): closed meshes (FluidShape::Mesh regions: sdf and offset `center`)
  /// filled with boundary particles to tank_layers spacings below their surface.
  std::vector<FluidRegion> obstacles;
};

/// Smoke and fire (`smoke`; docs/fluid.md): a kinema::GridFluid over a box, fed by sources over
/// time; the scene's colliders are static obstacles (planes along an axis as the box behind them,
/// tilted planes left out) and the character's capsules and the rigid bodies moving ones.
struct SimSceneSmoke {
  /// The grid (origin: the domain's min; dx and nx, ny, nz: whole cells over the domain),
  /// boundaries, advection, buoyancy, vorticity, fire; obstacles: the scene's colliders.
  GridFluidOptions options;
  struct Source {
    FluidSource source;
    double start = 0;                                      ///< s
    double end = std::numeric_limits<double>::infinity();  ///< s: on while start ≤ t < end
  };
  std::vector<Source> sources;
  bool fire = false;                ///< a `fire` object: fuel burns; "flame" and "fuel" written
  bool character_obstacles = true;  ///< the character's capsules and rigid bodies push it
  size_t planes_skipped = 0;        ///< tilted planes among the colliders (no obstacle)
  float tolerance = 0;              ///< VdbWriteOptions::tolerance
  bool half = false;                ///< VdbWriteOptions::save_float_as_half
};

/// A character in a scene: it plays a clip; its skin gives the cloth colliders (capsules along
/// its bones, kinema/physics/character_colliders.h) and attachment points, and its spring bones
/// are simulated on the scene's steps.
struct SimSceneCharacter {
  std::string file;
  std::shared_ptr<const Asset> asset;
  int clip = -1;  ///< -1: the rest pose
  bool colliders = true;
  /// The joints whose skin gives colliders (a big head or hair would swallow a cape's top);
  /// empty: every joint that has enough skin.
  std::vector<int> collider_joints;
  double collider_percentile = 0.9;  ///< CharacterColliderOptions::percentile
  bool spring_bones = true;
};

/// One rigid body of a scene (`rigid_bodies`; docs/physics.md): its shape, where its shape's origin
/// starts and how it is turned, how it moves, its mass (dynamic) or none (static). The scene's
/// colliders join as static bodies (not drawn).
struct SimSceneRigidBody {
  std::string name;
  RigidShape shape;
  bool is_static = false;
  MassProperties mass;  ///< dynamic bodies: from the density or scaled to the given mass
  Vec3 position{0, 0, 0};
  Quat rotation{0, 0, 0, 1};
  Vec3 velocity{0, 0, 0}, angular_velocity{0, 0, 0};
  RigidMaterial material;
  bool drawn = true;  ///< false for the scene's colliders
};

/// Debris thrown out where a glued joint breaks (a fracture's "debris"): a burst of particles
/// added to the scene's particle system at the break, moving with the pieces.
struct SimDebris {
  int count = 24;         ///< particles a break
  double speed = 2;       ///< m/s, upward and outward (a hemisphere), on top of the pieces' speed
  double lifetime = 1.5;  ///< s (± 30 %)
};

/// One joint of a scene (`joints`): the bodies by index into SimScene::rigid_bodies.
struct SimSceneJoint {
  JointDesc desc;
  std::optional<SimDebris> debris;  ///< fracture glue only
};

/// A parsed scene. Times: `rate` simulation steps and `fps` output frames a second (whole
/// numbers, so that the clock counts exactly), `duration` seconds; frames written:
/// ⌊duration·fps⌋ + 1, the first the rest state. A scene needs at least one cloth, soft body, rigid
/// body, hair, particles, liquid or smoke.
struct SimScene {
  double duration = 2;
  int fps = 30;
  int rate = 60;
  std::vector<SimSceneCloth> cloths;
  std::optional<SimSceneCharacter> character;
  /// Particles (`particles` in the scene): emitters, forces, attributes; they collide with the
  /// scene's colliders and the character's.
  std::optional<ParticleSystemOptions> particles;
  std::vector<SimSceneSoftBody> soft_bodies;
  std::optional<SimSceneHair> hair;
  std::vector<SimSceneRigidBody> rigid_bodies;  ///< with the colliders as static bodies, if any
  std::vector<SimSceneJoint> joints;
  RigidWorldSettings rigid_solver;  ///< `rigid_solver`: substeps, iterations, sleeping; gravity
  std::optional<SimSceneLiquid> liquid;
  std::optional<SimSceneSmoke> smoke;
};

/// Parses a scene from JSON text. `file` names it in messages and resolves mesh paths relative to
/// its folder. Throws kinema::Error whose place is the JSON pointer of the offending value
/// ("/cloth/0/material/stretch_stiffness") for malformed JSON (with line and column), unknown
/// keys, wrong types, out-of-range numbers, an unknown solver or collider shape, a mesh that
/// cannot be read or has degenerate triangles, bad pins.
/// `character_file`, when not empty, replaces the scene's /character/file (the demo puts the
/// bundled cape on the walk it has just retargeted).
SimScene parse_sim_scene(const std::string& json_text, const std::string& file,
                         const std::string& character_file = {});

struct SimRequest {
  std::string scene;
  /// A .pc2 path — one cloth or soft body: OUT and OUT's stem + ".obj"; several: OUT's stem +
  /// "_" + name + ".pc2" / ".obj" each — or a .glb/.gltf path: every cloth and soft body (its
  /// surface) a mesh with one morph target per frame, played by a clip "simulation" whose
  /// weights go from frame to frame. Hair is always a point cache (sim_hair_cache_path).
  std::string out;
  int threads = 0;  ///< 0: all cores (the result does not depend on it)
  /// Replaces the scene's /character/file when not empty (parse_sim_scene).
  std::string character_file;
  Progress progress;
};

struct SimClothResult {
  std::string name;
  std::string cache_path, mesh_path;
  size_t vertices = 0, springs = 0;
  double largest_stretch = 0;  ///< structural, at the end
  double worst_stretch = 0;    ///< structural, the largest at any written frame
  size_t collider_contacts = 0, self_contacts = 0;  ///< summed over the steps
  /// Attached vertices that start inside a collider: their free neighbours are pushed out while
  /// they stay, and the cloth stretches (move the cloth out, or leave that joint's collider out).
  size_t attached_inside = 0;
  double seconds = 0;  ///< wall time spent stepping it
};

struct SimSoftBodyResult {
  std::string name;
  std::string cache_path, mesh_path;
  size_t vertices = 0, tets = 0;
  size_t surface_vertices = 0, surface_triangles = 0;  ///< what is written
  long steps = 0;
  double volume_error = 0;        ///< (V − V0)/V0 at the end
  double worst_volume_error = 0;  ///< the largest |V − V0|/V0 at any written frame
  double largest_stretch = 0;     ///< the worst edge's (|d| − L0)/L0 at the end
  double worst_stretch = 0;       ///< …at any written frame
  size_t collider_contacts = 0;   ///< vertex–collider contacts summed over the substeps
  double seconds = 0;             ///< wall time spent stepping it
};

struct SimHairResult {
  std::string cache_path, mesh_path;            ///< sim_hair_cache_path and its .obj (polylines)
  size_t guides = 0, children = 0, points = 0;  ///< points: every strand's, written per frame
  long steps = 0;
  /// The largest |l − l0|/l0 of a guide segment at any written frame (hair does not stretch;
  /// colliders may push a point off its length for a step).
  double worst_stretch = 0;
  size_t collider_contacts = 0;  ///< guide point–collider contacts summed over the substeps
  double seconds = 0;            ///< wall time spent stepping the guides and drawing the children
};

struct SimRigidResult {
  std::string path;  ///< the glTF: each drawn body a node keyed at every frame
  size_t bodies = 0, dynamic_bodies = 0, joints = 0;
  size_t joints_broken = 0;  ///< by the end
  size_t debris_bursts = 0;  ///< breaks that threw debris
  long steps = 0, substeps = 0;
  double worst_joint_error = 0;  ///< the largest joint separation at any step (m)
  size_t most_contacts = 0;      ///< contact points, the most at any step
  bool finite = true;            ///< every body's pose finite at every step
  double seconds = 0;            ///< wall time spent stepping the world
};

struct SimLiquidResult {
  /// sim_liquid_cache_path, its .obj (the first positions) and .kpa sidecar (every particle alive
  /// at every frame, in the liquid's colour); the surface glTF when asked (else empty): a node
  /// and mesh per frame, each shown (scale 1) only at its own frame by the clip "simulation".
  std::string cache_path, mesh_path, sidecar_path, surface_path;
  size_t particles = 0, boundary_particles = 0;
  long steps = 0, substeps = 0;
  /// At the end: the mean and largest ρ/ρ0 − 1 over the particles with a full neighbourhood (a
  /// settled liquid's compression; the free surface's particles read low and are left out).
  double mean_compression = 0, largest_compression = 0;
  bool flip = false;               ///< run by FLIP (no compression figures then)
  long steps_at_max_substeps = 0;  ///< FLIP: steps that hit its max_substeps
  double max_divergence = 0;       ///< FLIP: max |∇·u| after the last projection, 1/s
  double fastest = 0;              ///< m/s, the largest particle speed at any written frame
  size_t surface_triangles = 0;    ///< summed over the frames
  double seconds = 0;              ///< wall time spent stepping it
  double surface_seconds = 0;      ///< …and meshing its surfaces
};

struct SimSmokeResult {
  /// The VDB sequence (sim_smoke_path) and every frame's file, frame 0 first. Each holds the
  /// grids "density", "temperature" (above the ambient temperature: 0 in still air) and, with
  /// fire, "flame" (the fuel, 0…1 of the sources' largest) and "fuel"; voxel (i, j, k) is cell
  /// (i, j, k) of the grid, its centre at the domain's min + (i + ½, j + ½, k + ½)·cell_size.
  std::string pattern;
  std::vector<std::string> paths;
  int nx = 0, ny = 0, nz = 0;
  double cell_size = 0;  ///< m
  bool fire = false;
  int frames = 0;
  size_t obstacles = 0;         ///< static, from the scene's colliders
  size_t moving_obstacles = 0;  ///< the most at any step (the character's capsules, bodies)
  long steps = 0, substeps = 0;
  long steps_split = 0;            ///< steps split into substeps (the fluid outran max_cfl)
  long steps_at_max_substeps = 0;  ///< steps that hit max_substeps (the fluid outran max_cfl)
  double max_divergence = 0;       ///< 1/s, the largest after any step's projection
  double smoke_mass = 0;           ///< Σ density·dx³ at the end
  double hottest = 0;              ///< the largest temperature above ambient at any frame
  double seconds = 0;              ///< wall time spent stepping it
  double write_seconds = 0;        ///< …and writing its frames
};

struct SimResult {
  SimScene scene;  ///< without the meshes' cost: as parsed
  int frames = 0;
  long steps = 0;
  std::vector<SimClothResult> cloths;
  /// With a character: OUT's stem + "_character.glb", the character playing its clip with its
  /// spring bones baked in (one key per output frame); its collider count.
  std::string character_path;
  size_t character_colliders = 0;
  /// With particles: sim_particle_cache_path and its .obj (every particle ever drawn is one
  /// vertex, held where it was first drawn before that and where it was last drawn after; those
  /// born in the last step are never drawn, as a frame shows the state α between steps).
  std::string particle_cache_path, particle_mesh_path;
  /// With particles: the cache's sidecar (particle_sidecar_path, kinema/io/particle_sidecar.h):
  /// each point's living frames and clock, the size, colour and opacity curves over age.
  std::string particle_sidecar_path;
  size_t particles_emitted = 0, particles_most_alive = 0;
  double particle_seconds = 0;  ///< wall time spent stepping them
  std::vector<SimSoftBodyResult> soft_bodies;
  std::optional<SimHairResult> hair;
  std::optional<SimRigidResult> rigid;
  std::optional<SimLiquidResult> liquid;
  std::optional<SimSmokeResult> smoke;
  /// Things worth a look that did not stop the run (a solver at its substep limit, colliders a
  /// fluid cannot use), one sentence each.
  std::vector<std::string> warnings;
};

/// Where a scene's rigid bodies go for OUT: OUT itself when it is .glb/.gltf and nothing else in
/// the scene writes a mesh, else OUT's stem + "_rigid.glb".
std::string sim_rigid_path(const std::string& out, bool alone);

/// Where a scene's particles go for OUT: OUT itself (a .pc2) when the scene has no cloth or soft
/// body, else OUT's stem + "_particles.pc2"; the points' first positions go beside it as .obj.
std::string sim_particle_cache_path(const std::string& out, bool with_cloth);

/// Where a scene's liquid goes for OUT: OUT itself (a .pc2) when the liquid is all the scene
/// writes, else OUT's stem + "_liquid.pc2"; its surfaces (when asked) go to the cache's stem +
/// "_surface.glb".
std::string sim_liquid_cache_path(const std::string& out, bool alone);

/// Where a scene's smoke goes for OUT: a printf pattern of one integer field, for
/// vdb_frame_path. OUT itself when it is a .vdb path with such a field ("smoke_%04d.vdb"); a .vdb
/// OUT without one: OUT's stem + "_%04d.vdb"; any other OUT: OUT's stem + "_smoke_%04d.vdb".
std::string sim_smoke_path(const std::string& out);

/// The liquid's and smoke's lines of `kinema sim`'s summary (each indented and ending in '\n'),
/// then the warnings.
std::string sim_fluid_summary(const SimResult& r);

/// The liquid's and smoke's figures and the warnings as one JSON object's text ({"liquid": …,
/// "smoke": …, "warnings": […]}, each only when there is one) for `kinema sim --json`.
std::string sim_fluid_json(const SimResult& r);

/// Where a scene's hair goes for OUT: OUT itself (a .pc2) when the hair is all the scene writes,
/// else OUT's stem + "_hair.pc2"; its rest strands go beside it as .obj polylines, guides first
/// (each root to tip), then the children.
std::string sim_hair_cache_path(const std::string& out, bool alone);

/// Where a scene's character goes for OUT: OUT's stem + "_character.glb" beside it.
std::string sim_character_path(const std::string& out);

/// Reads and parses the scene, runs it and writes every cloth's cache and mesh (all of them only
/// once the whole run has succeeded: a failure leaves no output). Throws UsageError for an OUT
/// that is not .pc2, .glb, .gltf or (a scene of smoke alone) .vdb, is a folder or the scene;
/// kinema::Error for a bad scene, a simulation that blew up (a value not finite: nothing is
/// written) or a write failure. `progress` gets the stage "simulating: t = 0.52 s, 410 steps/s"
/// (the simulated time and the steps a wall-clock second, updated about 4 times a second).
SimResult run_sim_file(const SimRequest& request);

/// The output paths of cloth or soft body `name` for OUT when the scene has `cloth_count` cloths
/// and soft bodies together.
std::string sim_cache_path(const std::string& out, const std::string& name, size_t cloth_count);
std::string sim_mesh_path(const std::string& out, const std::string& name, size_t cloth_count);

}  // namespace kinema::pipeline
