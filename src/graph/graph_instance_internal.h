// src/graph/graph_instance_internal.h — internal: the per-instance state of graph nodes and
// machines, and GraphEvaluator, the recursive restart / advance / evaluate functions shared by
// graph_instance.cpp (blend trees) and state_machine.cpp (state machines).
#pragma once

#include <span>
#include <vector>

#include "kinema/blend/pose_ops.h"
#include "kinema/blend/transition.h"
#include "kinema/graph/graph_instance.h"

namespace kinema {

struct GraphInstance::NodeState {
  int pose = -1;          // this node's output buffer (offset into pool_)
  double normalized = 0;  // cycles played since the last restart

  // Clip nodes.
  Playback playback;
  GraphClipCache cache;

  // Blend spaces: one entry per sample.
  float phase = 0;                     // synchronized phase in [0, 1)
  std::vector<float> weights;          // current weights
  std::vector<float> scratch;          // weights being computed / local normalized times
  std::vector<Playback> playbacks;     // each sample's playhead (time in seconds)
  std::vector<GraphClipCache> caches;  // each sample's decoding cache
  std::vector<int> sample_pose;        // each sample's pose buffer
  std::vector<BlendLayer> blend;       // the non-zero inputs of this frame's blend

  // Additive nodes: the delta pose. Layer nodes: one delta buffer per additive layer.
  int delta = -1;
  std::vector<int> layer_delta;
  std::vector<PoseLayer> layers;

  // State machines: index into machine_state_.
  int machine = -1;

  // Locomotion warps: the pose as double-precision local transforms, the legs' solve.
  std::vector<Transform> warp_local, warp_model;
  StrideWarpState warp_state;
};

struct GraphInstance::Machine {
  int node = -1;
  int current = 0;
  // Crossfade: the source is a live state (source >= 0) or the snapshot (source == kSnapshot).
  bool fading = false;
  int source = -1;
  CrossfadeRamp ramp;
  // Inertialization.
  Inertializer inert;
  bool inert_on = false;
  bool pending = false;  // a transition fired; set up at the next evaluate()
  float pending_dt = 0;
  float pending_duration = 0;
  bool have_history = false;
  // Pose buffers (offsets into pool_): output, old pose at a switch, last output, the new
  // state's pose before its first advance.
  int snapshot = -1, history = -1, new_previous = -1;
};

inline constexpr int kSnapshot = -2;

/// The recursive machinery; a friend of GraphInstance.
class GraphEvaluator {
 public:
  static void restart(GraphInstance& g, int node);
  static RootDelta advance(GraphInstance& g, int node, float dt);
  /// The node's pose at the current time. `record`: this is the frame's real evaluation (state
  /// machines keep it as history and set up pending inertializations); false inside update().
  static std::span<const SoaTransform> evaluate(GraphInstance& g, int node, bool record);

  // state_machine.cpp
  static void restart_machine(GraphInstance& g, int node);
  static RootDelta advance_machine(GraphInstance& g, int node, float dt);
  static std::span<const SoaTransform> evaluate_machine(GraphInstance& g, int node, bool record);
  /// Starts transition `index` of the machine at `node`, after the old configuration has played
  /// this update's `dt`.
  static void start_transition(GraphInstance& g, int node, int index, float dt);

  static std::span<SoaTransform> buffer(GraphInstance& g, int offset) {
    const size_t n = static_cast<size_t>(g.graph_->soa_count());
    return std::span<SoaTransform>(g.pool_).subspan(static_cast<size_t>(offset), n);
  }
  static GraphInstance::NodeState& state(GraphInstance& g, int node) {
    return g.nodes_[static_cast<size_t>(node)];
  }
  static std::vector<GraphInstance::Machine>& machines(GraphInstance& g) {
    return g.machine_state_;
  }
  static std::vector<MachineStatus>& status(GraphInstance& g) { return g.status_; }
  static std::vector<float>& params(GraphInstance& g) { return g.params_; }
  static const GraphNode& def(const GraphInstance& g, int node) {
    return g.graph_->nodes()[static_cast<size_t>(node)];
  }
};

/// A locomotion warp node's work on `pose` (its input's, warped in place): the orientation warp
/// by `direction_degrees` (clamped to the node's max_angle) when the node has a spine, then the
/// stride warp by `stride_scale` along the movement direction. A scale that is not positive and
/// finite, or a direction that is not finite, leaves the pose as it is. `local` and `model` hold
/// joint_count() transforms (the node's buffers); no allocation. In graph_warp.cpp.
void warp_locomotion(const LocomotionWarpNode& w, float stride_scale, float direction_degrees,
                     std::vector<Transform>& local, std::vector<Transform>& model,
                     StrideWarpState& state, std::span<SoaTransform> pose);

/// a·(1 − w) + b·w for ground motions (translation and yaw).
inline RootDelta mix(const RootDelta& a, const RootDelta& b, double w) {
  RootDelta r;
  r.translation = a.translation * (1 - w) + b.translation * w;
  r.yaw = a.yaw * (1 - w) + b.yaw * w;
  return r;
}

}  // namespace kinema
