// kinema/graph/graph_instance.h — one character playing an AnimGraph.
//
// A GraphInstance holds everything that changes per character: parameter values, clip times and
// sampling caches, blend-space phases, state-machine states, crossfade clocks, inertializers,
// a pose buffer per node, the last root motion and the character's world placement. The
// constructor allocates all of it; after that, setting parameters by handle, update() and
// evaluate() never allocate, never throw, and are deterministic (the same calls give
// bit-identical poses).
//
// Frame loop:
//   instance.set_float(speed, 2.5f);   // parameters by handle (find them once at setup)
//   instance.update(dt);               // time, transitions, root motion
//   instance.evaluate(pose);           // local SoA pose, graph.soa_count() elements
//
// Call evaluate() once after every update(): inertialized transitions measure the pose on
// screen from the last two evaluated poses.
//
// Semantics of update(dt), per state machine (outermost first):
//   1. Transitions are tested in priority order (higher first, ties in file order), "any state"
//      transitions among them (never to the state already current). A transition may fire when
//      every condition holds and, if it has an exit time, the current state's normalized time
//      (cycles played since it was entered: a clip's time / duration, a synchronized blend
//      space's phase, a nested machine's current state's) has reached it. At most one
//      transition fires per machine per update; the triggers it tests are consumed (cleared).
//      Triggers nobody consumes stay set (reset_trigger() clears one).
//   2. The states on screen advance by dt. A state entered by a transition restarts (time 0,
//      nested machines at their initial state). Crossfades blend the old and new states with
//      a smoothstep weight over the duration (both keep playing); inertialized transitions
//      switch at once and decay the pose offset (inertialization). A transition that interrupts
//      a running one starts from the pose on screen, so nothing pops.
//   3. Root motion: each clip's ground motion over its advance, blended with the weights the
//      pose uses, is reported by root_motion() and applied to world().
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "kinema/blend/root_motion.h"
#include "kinema/blend/transition.h"
#include "kinema/graph/graph.h"

namespace kinema {

/// A parameter's index, found once at setup; invalid (index −1) when the name is unknown.
struct ParamHandle {
  int index = -1;
  bool valid() const { return index >= 0; }
};

/// What one state machine is doing, for tools, logs and tests.
struct MachineStatus {
  int node = -1;               ///< the machine's node index in AnimGraph::nodes()
  int state = 0;               ///< current state (the destination while a transition runs)
  int previous_state = -1;     ///< the state before the last transition, or −1
  int last_transition = -1;    ///< transition fired by the last update(), or −1
  long transitions_taken = 0;  ///< since construction / reset()
  float state_time = 0;        ///< seconds since the current state was entered
  bool blending = false;       ///< a crossfade or inertialization is still running
  bool active = false;         ///< the machine contributed to the last update
};

class GraphInstance {
 public:
  /// Allocates every buffer for `graph`, which must outlive the instance. Parameters take their
  /// defaults, machines their initial states, the world placement is the origin facing +Z.
  explicit GraphInstance(const AnimGraph& graph);
  ~GraphInstance();
  GraphInstance(GraphInstance&&) noexcept;
  GraphInstance& operator=(GraphInstance&&) noexcept;
  GraphInstance(const GraphInstance&) = delete;
  GraphInstance& operator=(const GraphInstance&) = delete;

  const AnimGraph& graph() const { return *graph_; }

  // ---- parameters -------------------------------------------------------------------------

  /// The handle of a parameter (invalid when there is none of that name).
  ParamHandle find_parameter(std::string_view name) const noexcept;
  /// The handle of a parameter; throws kinema::Error(graph file, "", reason) when unknown.
  ParamHandle parameter(std::string_view name) const;

  /// Setup-time setters by name: throw kinema::Error for an unknown name, a parameter of
  /// another type, or a non-finite value.
  void set_float(std::string_view name, float value);
  void set_bool(std::string_view name, bool value);
  void fire(std::string_view name);

  /// Per-frame setters: return false (changing nothing) for an invalid handle, a parameter of
  /// another type, or a non-finite value.
  bool set_float(ParamHandle p, float value) noexcept;
  bool set_bool(ParamHandle p, bool value) noexcept;
  bool fire(ParamHandle p) noexcept;           ///< sets a trigger
  bool reset_trigger(ParamHandle p) noexcept;  ///< clears a trigger
  /// Current value (bools and triggers as 0 / 1); NaN for an invalid handle.
  float value(ParamHandle p) const noexcept;

  // ---- time and pose ----------------------------------------------------------------------

  /// Advances by dt seconds (see the file comment). Returns false, changing nothing, when dt is
  /// negative or not finite. update(0) evaluates transitions without moving time.
  bool update(float dt) noexcept;

  /// Writes the current local pose (graph().soa_count() elements). With root motion, the
  /// root-motion joint is in place (its ground motion is in world() instead). Returns false,
  /// writing nothing, on a size mismatch.
  bool evaluate(std::span<SoaTransform> out) noexcept;

  /// Back to the state right after construction (defaults, initial states, time 0, origin).
  void reset() noexcept;

  /// Seconds of update() since construction / reset().
  double time() const { return time_; }

  // ---- root motion and placement -------------------------------------------------------------

  /// Ground motion of the last update(), in the character's frame before it (zero without
  /// root motion).
  const RootDelta& root_motion() const { return root_motion_; }
  /// The character's placement: ground position and heading, moved by every update()'s root
  /// motion.
  const RootDelta& world() const { return world_; }
  void set_world(const RootDelta& placement) { world_ = placement; }
  /// world() as a transform: translation(world().translation)·R_y(world().yaw).
  Transform world_transform() const { return ground_transform(world_); }

  // ---- introspection ------------------------------------------------------------------------

  /// One entry per state machine, in AnimGraph::machines() order.
  std::span<const MachineStatus> machines() const { return status_; }
  /// Normalized time of a node's playback (cycles since it was last restarted).
  float normalized_time(int node) const noexcept;

 private:
  struct NodeState;
  struct Machine;
  friend class GraphEvaluator;

  const AnimGraph* graph_ = nullptr;
  std::vector<float> params_;
  std::vector<NodeState> nodes_;
  std::vector<Machine> machine_state_;
  std::vector<MachineStatus> status_;
  std::vector<SoaTransform> pool_;  // every pose buffer, soa_count() elements each
  double time_ = 0;
  RootDelta root_motion_;
  RootDelta world_;
};

}  // namespace kinema
