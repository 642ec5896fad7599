// kinema/physics/rigid_world.h — a scene of rigid bodies stepped together: collision detection,
// contacts with friction, and the sequential-impulse solver.
//
// One step of h seconds (call it from kinema/sim/fixed_step_clock.h):
//   1. velocities from forces and gravity (kinema/physics/rigid_body.h);
//   2. broad phase (kinema/physics/broad_phase.h) on each body's world bounds, then the narrow
//      phase (kinema/physics/narrow_phase.h) on the candidate pairs: contact manifolds;
//   3. sequential impulses (Catto 2005, "Iterative Dynamics with Temporal Coherence"): each contact
//      point gets a normal impulse (≥ 0, with restitution above a speed threshold) and a friction
//      impulse inside Coulomb's cone |j_t| ≤ μ·j_n, solved point by point for a fixed number of
//      iterations, started from last step's impulses where the contact persists (warm starting);
//   4. positions from velocities, with continuous collision detection for fast bodies against
//      the bodies on their way (so a bullet cannot pass a wall between two steps);
//   5. penetration recovery on positions only (non-linear Gauss–Seidel, as in Box2D): overlap
//      beyond a small slop is removed directly from the positions, never through the
//      velocities, so it cannot add kinetic energy;
//   6. islands (bodies linked by contacts through non-static bodies) fall asleep together once
//      every body in them has been still for a while, and wake together when touched.
// Everything runs in a fixed order (bodies by id, pairs sorted), so the same scene gives the same
// bits on every run. Units: metres, kilograms, seconds; y is up by default.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kinema/physics/broad_phase.h"
#include "kinema/physics/rigid_body.h"
#include "kinema/physics/rigid_joint.h"
#include "kinema/physics/rigid_shape.h"

namespace kinema {

using BodyId = std::uint32_t;

/// How a body's surface behaves in contact. Two bodies combine as μ = √(μa·μb) and
/// e = max(ea, eb) (the bouncier wins, as in Bullet and Box2D).
struct RigidMaterial {
  double friction = 0.5;     ///< Coulomb coefficient μ, ≥ 0
  double restitution = 0.0;  ///< e in [0, 1]
};

struct RigidWorldSettings {
  Vec3 gravity{0, -9.81, 0};  ///< m/s²
  /// Each step is run as at least this many equal substeps, collision detection included. Small
  /// steps beat extra iterations (Macklin et al. 2019, "Small Steps in Physics Simulation").
  int substeps = 1;
  /// More substeps, up to max_substeps, while a jointed body spins so fast that one substep would
  /// turn it by more than this (rad); 0 turns it off. Joints hold exactly in velocity, but a body
  /// turns along a straight line in angle within a step, and the drift grows with the turn
  /// squared; the stabilization passes remove it, and converge in fewer passes from a smaller
  /// drift. A 50-link chain whipping at 60 Hz keeps its joints within 1.3 µm this way (1.04
  /// substeps a step on average over a 5 s swing).
  double max_joint_turn_per_substep = 0.5;
  int max_substeps = 8;
  int velocity_iterations = 10;      ///< sequential-impulse passes over the contacts a (sub)step
  int position_iterations = 4;       ///< penetration-recovery passes a step
  double penetration_slop = 0.005;   ///< overlap left alone (m): keeps resting contacts alive
  double position_correction = 0.2;  ///< fraction of the overlap removed per pass (β)
  double max_correction = 0.2;       ///< largest move of one position pass (m)
  double joint_correction = 0.5;     ///< fraction of a joint's drift removed per pass
  /// Every joint's equality rows (anchor point, hinge axis, weld, rod) are solved exactly each
  /// pass by a sparse direct solve (Baraff 1996; linear time when the joints form a tree, as in
  /// chains and ragdolls), and their drift removed on the positions after each step by Newton
  /// passes of the same solve at the current poses (Cline and Pai 2003) until no joint drifts by
  /// more than joint_stabilization_tolerance, at most this many; limits, motors, ropes and
  /// contacts use the iterations. A pass leaves part of the drift: along a chain the same
  /// centripetal error adds up link by link and the correction's own second-order error leaves
  /// ~40 % of it, so the whipping 50-link chain takes 3.8 passes a substep (7–8 at the whip; two
  /// at most let it come apart by metres).
  int joint_stabilization_passes = 16;
  /// m for anchors and rods, rad for hinge and weld axes.
  double joint_stabilization_tolerance = 1e-6;
  /// The stabilization passes correct positions as if every body's inertia were this many times
  /// its own (> 0, anything else counts as 1; masses are kept): they then turn bodies less and move
  /// them more. A pass is exact in moves and only first order in turns, so it converges in fewer
  /// passes — the whipping 50-link chain in 2.4 a step at 4 instead of 4.1 at 1, keeping its energy
  /// and its joints within the same tolerance. It only chooses which of the poses that close the
  /// joints the passes head for; velocities are untouched. Bodies touching something keep their
  /// own inertias: moved rather than turned, they were pushed into what they rest on (a pile of
  /// ragdolls 19 mm into the floor instead of 11).
  double joint_stabilization_inertia_scale = 4;
  double restitution_threshold = 0.5;  ///< approach speeds below this do not bounce (m/s)
  bool warm_starting = true;
  bool sleeping = true;
  bool continuous = true;  ///< continuous collision detection for fast bodies
  SleepSettings sleep;
  BroadPhaseOptions broad_phase;
  /// Threads for the parts of a step that run body by body or pair by pair: velocities and
  /// inertias, the narrow phase, the contact points' set-up and warm-start search (oneTBB). The
  /// iterations, the joints and the integration stay on the calling thread. 0: all cores. The
  /// results are the same bits whatever the count.
  int threads = 1;
};

/// One contact point after a step, for inspection and drawing.
struct RigidContact {
  BodyId a = 0, b = 0;
  Vec3 point{0, 0, 0};             ///< on b's surface (m)
  Vec3 normal{0, 0, 0};            ///< unit, from a toward b
  double depth = 0;                ///< overlap when found (m)
  double normal_impulse = 0;       ///< accumulated this step (N·s)
  Vec3 friction_impulse{0, 0, 0};  ///< accumulated this step (N·s)
};

class RigidWorld {
 public:
  explicit RigidWorld(const RigidWorldSettings& settings = {});
  ~RigidWorld();
  RigidWorld(RigidWorld&&) noexcept;
  RigidWorld& operator=(RigidWorld&&) noexcept;

  /// Adds a body with its collision shape (in the body's shape frame: the body's
  /// centre_of_mass_in_shape says where its centre sits in it) and surface material. Throws
  /// kinema::Error naming `name` (or "body N") for a shape that fails validate_shape, a dynamic
  /// body whose shape is a triangle mesh or height field (they have no convex support here: make
  /// them static), or a material out of range. Returns the body's id (0, 1, 2, … in order).
  BodyId add_body(const RigidBody& body, RigidShape shape, const RigidMaterial& material = {},
                  std::string name = {});

  std::size_t body_count() const;
  RigidBody& body(BodyId id);
  const RigidBody& body(BodyId id) const;
  const RigidShape& shape(BodyId id) const;
  const std::string& name(BodyId id) const;
  const RigidWorldSettings& settings() const;
  RigidWorldSettings& settings();

  /// Adds a joint between two bodies (kinema/physics/rigid_joint.h), at their current poses.
  /// Throws kinema::Error naming the joint ("joint N") for an unknown body, a = b, two static
  /// bodies, a zero axis, limits out of order or out of range, or non-finite numbers.
  JointId add_joint(const JointDesc& joint);

  /// Bodies a and b no longer collide with each other (parts of one ragdoll that overlap at
  /// rest). Unknown ids are ignored.
  void disable_collision(BodyId a, BodyId b);

  std::size_t joint_count() const;
  const JointDesc& joint(JointId id) const;
  /// Whether the joint has broken (its break_impulse was exceeded); a broken joint holds nothing.
  bool joint_broken(JointId id) const;
  /// The largest impulse the joint needed in the last step (N·s), as compared with break_impulse.
  double joint_impulse(JointId id) const;
  /// How far apart the joint's two anchors are now (m): 0 for a perfect ball, hinge, cone–twist
  /// or fixed joint; for a Distance joint, how far outside [min, max] the anchors are.
  double joint_error(JointId id) const;

  /// Advances the scene by h seconds (h > 0 and finite; otherwise nothing happens). Forces and
  /// torques added to the bodies beforehand act over the whole step, every substep.
  void step(double h);

  /// The contact points of the last step, sorted by (a, b).
  const std::vector<RigidContact>& contacts() const;

  /// How many islands of awake bodies the last step solved.
  std::size_t awake_island_count() const;

  /// How many substeps the last step took (see RigidWorldSettings::max_joint_turn_per_substep).
  int last_substeps() const;

  /// How many joint stabilization passes the last step ran, over all its substeps (see
  /// RigidWorldSettings::joint_stabilization_passes); 0 when every joint was within tolerance.
  int last_stabilization_passes() const;

  /// Total kinetic energy of the dynamic bodies (J).
  double kinetic_energy() const;

  /// The world box around a body's shape at its current pose (m).
  Aabb world_bounds(BodyId id) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kinema
