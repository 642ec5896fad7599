// kinema/match/controller.h — a motion-matching character controller (Clavet, GDC 2016).
//
// Each frame the controller plays the next database frame. Every `search_interval` seconds (and
// at once when the playing clip runs out or the continuation's cost exceeds
// `continuation_threshold`) it builds a query — the pose features of the frame playing, and the
// trajectory the player asks for, predicted from the stick by a critically damped spring — and
// searches the database; when another frame is cheaper than continuing, it jumps there and
// inertialization (kinema/blend/transition.h) hides the pose difference over `blend_time`.
//
// Root motion and the simulation: a "simulation" root follows the stick through critically
// damped springs (velocity and facing, Holden's controller). The character's root moves by the
// played frames' own root motion (the change of Database::roots from frame to frame), so the feet
// do not slide, and is then pulled towards the simulation: by a fraction of the gap each frame
// (half-life `adjust_halflife`, at most `adjust_max_ratio` of the animation's own speed, so a
// character standing still is not dragged) and clamped to `clamp_distance` / `clamp_angle` of
// it, which bounds how far the character can stray from the path at the price of some sliding
// (0 turns clamping off: pure root motion). The query's trajectory is the simulation's
// predicted future in the simulation's frame. Poses are blended relative to each frame's root,
// then placed in the world.
//
// Two backends play behind the same interface: a Database (exact search over every frame, poses
// stored) and a LearnedModel (kinema/match/learned.h: the stepper advances the features and latent
// each frame, the projector answers the search, the decompressor rebuilds the pose; memory does
// not grow with the data). The queries, springs, root motion, inertialization, foot locking and
// warping are the same code for both. With a learned model there are no database frames:
// frame() is 0, nothing is "nearby" (a jump needs a cheaper projection than the continuation),
// tag filters are not available, and a jump's inertialization starts from the projected pose's
// own pose (the model gives no previous frame).
//
// Runs at the database's frame rate: update() advances one database frame (dt = 1/fps).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "kinema/blend/transition.h"
#include "kinema/ik/locomotion_warp.h"
#include "kinema/match/database.h"
#include "kinema/match/learned.h"
#include "kinema/math/mat4.h"
#include "kinema/math/soa_transform.h"

namespace kinema::match {

struct ControllerOptions {
  double search_interval = 0.1;  ///< seconds between searches
  /// Search at once when the current continuation's cost (normalized units) exceeds this.
  float continuation_threshold = 1e30f;
  double blend_time = 0.2;  ///< inertialization, seconds
  /// Half-lives of the springs that predict velocity and facing from the stick, seconds.
  double velocity_halflife = 0.27, facing_halflife = 0.27;
  /// Candidates this close to the playing frame (same clip, within ± frames) do not transition.
  int ignore_nearby_frames = 3;
  /// Synchronization of the character with the simulation (see above); lengths in metres,
  /// angles in radians, 0 turns a clamp off.
  double adjust_halflife = 0.1, adjust_max_ratio = 0.5;
  double clamp_distance = 0.15, clamp_angle = 0.5;
  /// Foot locking: while the database frame says a foot is in contact, its ankle stays where the
  /// contact began (hip–knee–ankle two-bone IK, kinema/ik/two_bone.h, the knee bending towards
  /// the character's front); released when the contact ends or the animated ankle is
  /// `lock_release_distance` metres away, then faded out over `lock_blend_time` seconds. Needs
  /// the database's knees (FeatureJoints::left/right_lower_leg). Contacts are detected per clip
  /// variant: ankle within `contact_height` m of its lowest point and slower than
  /// `contact_speed` m/s.
  bool foot_locking = false;
  double lock_release_distance = 0.2, lock_blend_time = 0.15;
  /// Locomotion warping (kinema/ik/locomotion_warp.h): where the character moves faster, slower
  /// or in another direction than the frame playing (the pull towards the simulation and the
  /// clamps), the stride is scaled by the ratio of the two speeds (clamped to
  /// [warp_min_scale, warp_max_scale]) along the character's movement, and the lower body turns
  /// by the angle between the two directions (clamped to warp_max_angle, radians), the spine
  /// counter-rotating; feet in contact are held where their contact began. It replaces
  /// foot_locking, which it includes. Needs the legs, like foot locking; the spine is the chain
  /// from the hips' child that is not a leg up to the first joint with several children (no
  /// orientation warp when the skeleton has none).
  bool locomotion_warping = false;
  double warp_min_scale = 0.5, warp_max_scale = 2.0, warp_max_angle = 0.7853981633974483;
  double contact_height = 0.05, contact_speed = 0.5;
  SearchFilter filter;
};

/// What the player asks for, in world space (+Y up): a horizontal velocity (m/s) and a facing
/// (horizontal unit vector; zero: face the velocity, or keep the facing when standing).
struct ControllerInput {
  Vec3 velocity{0, 0, 0};
  Vec3 facing{0, 0, 0};
};

/// A critically damped spring on a velocity (Holden's "spring-it-on"), exact for a constant goal:
/// the velocity v goes to `goal_velocity` with half-life `halflife` (seconds), and x integrates it.
/// Returns the state after `t` seconds. Used for the predicted trajectory; public for tests.
struct SpringState {
  double x = 0, v = 0, a = 0;  ///< value, velocity, acceleration
};
SpringState spring_predict(SpringState s, double goal_velocity, double halflife, double t);

class Controller {
 public:
  /// Builds the search over the database's features. Throws kinema::Error when the database has
  /// no poses or no searchable frame. The database must outlive the controller.
  explicit Controller(const Database& db, const ControllerOptions& options = {});
  /// The learned backend. Throws kinema::Error when the model has no trajectory features, or for
  /// options it cannot honour (a tag filter). The model must outlive the controller.
  explicit Controller(const LearnedModel& model, const ControllerOptions& options = {});
  ~Controller();
  Controller(Controller&&) noexcept;

  /// Starts playing `frame` with the root at `position` (y ignored) facing `facing`. The learned
  /// backend ignores `frame` and starts from the model's start state.
  void reset(uint32_t frame, const Vec3& position = {0, 0, 0}, const Vec3& facing = {0, 0, 1});

  /// Advances one database frame. Never allocates.
  void update(const ControllerInput& input);

  /// The pose on screen: local transforms with the root joint placed in the world.
  std::span<const Transformf> pose() const { return world_pose_; }
  const Vec3& root_position() const { return position_; }
  const Vec3& root_facing() const { return facing_; }
  /// The root's velocity over the last frame (m/s, world).
  const Vec3& root_velocity() const { return velocity_; }
  /// The simulation root (where the stick says the character should be) and its velocity.
  const Vec3& simulation_position() const { return sim_position_; }
  const Vec3& simulation_velocity() const { return sim_velocity_; }
  const Vec3& simulation_facing() const { return sim_facing_; }
  /// The database frame playing (0 with the learned backend).
  uint32_t frame() const { return frame_; }
  bool learned() const { return model_ != nullptr; }
  /// The skeleton the poses are on and the database's (or model's) frame rate.
  const Skeleton& skeleton() const { return *skeleton_; }
  double fps() const { return fps_; }
  size_t searches() const { return searches_; }
  size_t transitions() const { return transitions_; }
  /// Whether the database frame playing has the left (0) / right (1) foot in contact.
  bool foot_contact(int foot) const { return contact_[foot]; }
  /// Cost of the last search's answer and of continuing at that moment.
  float last_best_cost() const { return best_cost_; }
  float last_continuation_cost() const { return continuation_cost_; }
  /// The last locomotion warp: stride scale and lower-body turn (radians); 1 and 0 without.
  double stride_scale() const { return stride_scale_; }
  double warp_angle() const { return warp_angle_; }
  /// The predicted trajectory of the last query: world positions at the database's future
  /// times.
  std::span<const Vec3> predicted_positions() const { return predicted_; }

 private:
  /// Common construction once the backend's layout is set.
  void init();
  /// Builds the query from `continuation` (the pose features of what would play next) and the
  /// stick; sets continuation_cost_ and searches (the exact search or the projector).
  SearchResult search(const ControllerInput& input, std::span<const float> continuation);
  /// The exact and learned halves of update(): which pose plays next and its root motion.
  /// The root's move into the frame played, in the previous root frame (metres), and its turn.
  struct FrameMotion {
    Vec3 step{0, 0, 0};
    double turn = 0;
  };
  bool advance_database(const ControllerInput& input, FrameMotion& motion);
  bool advance_learned(const ControllerInput& input, FrameMotion& motion);
  /// The decompressor's pose at the learned player's state, root-relative; sets the contacts.
  void decompressed_pose(std::span<SoaTransform> out, RootStep& step);
  void simulate(const ControllerInput& input, double dt);
  double goal_yaw(const ControllerInput& input) const;
  void lock_feet(double dt);
  /// The locomotion warp of world_pose_: `animated` is the frame's own root motion this frame,
  /// `actual` the character's (both world, metres).
  void warp_locomotion(const Vec3& animated, const Vec3& actual, double dt);
  /// world_pose_ = shown_ with the skeleton roots placed at the character's root.
  void place_in_world();
  void root_relative_pose(uint32_t frame, std::span<SoaTransform> out) const;
  float cost(std::span<const float> query, std::span<const float> features) const;

  const Database* db_ = nullptr;         ///< the exact backend, or
  const LearnedModel* model_ = nullptr;  ///< the learned backend
  std::unique_ptr<LearnedPlayer> player_;
  // What both backends share (the feature layout and skeleton).
  double fps_ = 30;
  const Skeleton* skeleton_ = nullptr;
  FeatureJoints joints_;
  std::span<const double> trajectory_times_;
  std::span<const float> mean_;
  const FeatureGroup *trajectory_position_ = nullptr, *trajectory_direction_ = nullptr;
  ControllerOptions options_;
  bool contact_[2] = {false, false};
  BoundedTreeSearch search_;
  uint32_t frame_ = 0;
  Vec3 position_{0, 0, 0}, facing_{0, 0, 1}, velocity_{0, 0, 0};
  Vec3 sim_position_{0, 0, 0}, sim_velocity_{0, 0, 0}, sim_acceleration_{0, 0, 0};
  Vec3 sim_facing_{0, 0, 1};
  double sim_yaw_velocity_ = 0;
  double since_search_ = 1e9;
  size_t searches_ = 0, transitions_ = 0;
  float best_cost_ = 0, continuation_cost_ = 0;
  Inertializer inertializer_;
  std::vector<SoaTransform> shown_previous_, shown_, source_, source_previous_;
  std::vector<Transformf> aos_, world_pose_;
  std::vector<float> query_, raw_;
  std::vector<Vec3> predicted_;
  // Foot locking.
  struct FootLock {
    bool locked = false;
    Vec3 position{0, 0, 0};  ///< where the lock holds the ankle (world)
    double since_release = 1e9;
    Vec3 released_at{0, 0, 0};
  };
  FootLock feet_[2];
  std::vector<uint8_t> contacts_;  ///< frames × 2
  std::vector<Transform> ik_local_;
  std::vector<Mat4> ik_model_;
  // Locomotion warping.
  StrideWarpState warp_state_;
  std::vector<int> spine_;
  double stride_scale_ = 1, warp_angle_ = 0;
};

}  // namespace kinema::match
